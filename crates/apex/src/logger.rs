//! A `log` backend for partitions (feature `log`): what a653rs users get from their platform.
//! `partita_apex::logger::init(LevelFilter::Info)` once in `main`, then `log::info!` and
//! friends write one line per record, `LEVEL target: message`, on the partition's stdout in
//! one locked piece (like REPORT_APPLICATION_MESSAGE, without its 128-byte limit): the module
//! shows it live as `[NAME] ...` and keeps it in the partition's log (`partita run --logs`).

pub use log;
use log::{LevelFilter, Log, Metadata, Record, SetLoggerError};

struct PartitionLogger;

static LOGGER: PartitionLogger = PartitionLogger;

impl Log for PartitionLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) {
            let line = format!("{} {}: {}", record.level(), record.target(), record.args());
            crate::kernel::hm::write_line(line.as_bytes());
        }
    }

    fn flush(&self) {}
}

/// Installs the partition logger with `level` as the most verbose level shown. Fails if a
/// logger is installed already.
pub fn init(level: LevelFilter) -> Result<(), SetLoggerError> {
    log::set_logger(&LOGGER)?;
    log::set_max_level(level);
    Ok(())
}
