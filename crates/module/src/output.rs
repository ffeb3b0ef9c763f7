//! Partition output: bytes from a partition's stdout/stderr pipes become complete lines shown
//! live as `[NAME] line` and kept, unprefixed, in a log file per partition.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest line kept whole; longer ones are cut so one partition cannot exhaust the module.
const MAX_LINE: usize = 64 * 1024;

pub struct PartitionOutput {
    prefix: String,
    pending: Vec<u8>,
    log: Option<File>,
}

impl PartitionOutput {
    pub fn new(name: &str, log_path: Option<&Path>) -> io::Result<PartitionOutput> {
        let log = match log_path {
            Some(p) => Some(File::options().create(true).append(true).open(p)?),
            None => None,
        };
        Ok(PartitionOutput { prefix: format!("[{name}] "), pending: Vec::new(), log })
    }

    /// Takes a chunk read from a pipe and writes every complete line to `live` and the log.
    pub fn feed(&mut self, chunk: &[u8], live: &mut impl Write) -> io::Result<()> {
        self.pending.extend_from_slice(chunk);
        while let Some(pos) =
            self.pending.iter().position(|&b| b == b'\n').or_else(|| (self.pending.len() >= MAX_LINE).then_some(MAX_LINE - 1))
        {
            let line: Vec<u8> = self.pending.drain(..=pos).collect();
            self.emit(&line, live)?;
        }
        Ok(())
    }

    /// At end of stream: a last line without newline is still shown.
    pub fn finish(&mut self, live: &mut impl Write) -> io::Result<()> {
        if !self.pending.is_empty() {
            let mut line = std::mem::take(&mut self.pending);
            line.push(b'\n');
            self.emit(&line, live)?;
        }
        Ok(())
    }

    fn emit(&mut self, line: &[u8], live: &mut impl Write) -> io::Result<()> {
        let mut line = line.to_vec();
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        live.write_all(self.prefix.as_bytes())?;
        live.write_all(&line)?;
        if let Some(log) = &mut self.log {
            log.write_all(&line)?;
        }
        Ok(())
    }
}

/// Bytes of echo that may wait for a slow stdout before lines are dropped.
const CONSOLE_QUEUE_BYTES: usize = 1 << 20;
/// How long the end of the run waits for the echo still queued.
const CONSOLE_DRAIN_WAIT: Duration = Duration::from_secs(1);

/// The live echo on the module's stdout, written by a thread of its own: a terminal or pipe
/// that does not keep up must never hold the lifecycle thread (health-monitor actions, restarts,
/// the trace), or a chatty partition would cost the others their restarts. Beyond
/// `CONSOLE_QUEUE_BYTES` waiting, lines are dropped, counted and the count said at the end; the
/// partition logs keep every line.
pub struct Console {
    tx: Option<SyncSender<Vec<u8>>>,
    line: Vec<u8>,
    queued: Arc<AtomicUsize>,
    dropped_lines: u64,
    thread: Option<JoinHandle<()>>,
}

impl Console {
    /// An echo onto `out` (the module's stdout in a run).
    pub fn new(mut out: impl Write + Send + 'static) -> io::Result<Console> {
        let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(4096);
        let queued = Arc::new(AtomicUsize::new(0));
        let q = queued.clone();
        let thread = std::thread::Builder::new().name("partita-console".into()).spawn(move || {
            while let Ok(chunk) = rx.recv() {
                let _ = out.write_all(&chunk);
                q.fetch_sub(chunk.len(), Ordering::Relaxed);
                if q.load(Ordering::Relaxed) == 0 {
                    let _ = out.flush();
                }
            }
            let _ = out.flush();
        })?;
        Ok(Console { tx: Some(tx), line: Vec::new(), queued, dropped_lines: 0, thread: Some(thread) })
    }

    /// Lines dropped so far because the echo was not keeping up.
    pub fn dropped_lines(&self) -> u64 {
        self.dropped_lines
    }

    fn send(&mut self) {
        if self.line.is_empty() {
            return;
        }
        let chunk = std::mem::take(&mut self.line);
        let len = chunk.len();
        let lines = chunk.iter().filter(|&&b| b == b'\n').count().max(1) as u64;
        if self.queued.load(Ordering::Relaxed) + len > CONSOLE_QUEUE_BYTES {
            self.dropped_lines += lines;
            return;
        }
        self.queued.fetch_add(len, Ordering::Relaxed);
        let Some(tx) = &self.tx else { return };
        if tx.try_send(chunk).is_err() {
            self.queued.fetch_sub(len, Ordering::Relaxed);
            self.dropped_lines += lines;
        }
    }
}

impl Write for Console {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.line.extend_from_slice(buf);
        if self.line.last() == Some(&b'\n') || self.line.len() >= MAX_LINE {
            self.send();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send();
        Ok(())
    }
}

impl Drop for Console {
    /// Waits at most `CONSOLE_DRAIN_WAIT` for the queued echo (a stdout nobody reads must not
    /// keep the run from ending), then says what was not shown.
    fn drop(&mut self) {
        self.send();
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            let deadline = Instant::now() + CONSOLE_DRAIN_WAIT;
            while !thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            if thread.is_finished() {
                let _ = thread.join();
            } else {
                eprintln!(
                    "partita: the module's stdout did not take the last {} bytes of partition output within {:?}; the partition logs have them",
                    self.queued.load(Ordering::Relaxed),
                    CONSOLE_DRAIN_WAIT
                );
            }
        }
        if self.dropped_lines > 0 {
            eprintln!(
                "partita: {} lines of partition output were not shown because the module's stdout did not keep up; the partition logs have them",
                self.dropped_lines
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_prefixed_and_split_across_chunks() {
        let dir = std::env::temp_dir().join(format!("partita-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("ofp.log");
        let mut out = PartitionOutput::new("OFP", Some(&log)).unwrap();
        let mut live = Vec::new();
        out.feed(b"hel", &mut live).unwrap();
        assert!(live.is_empty());
        out.feed(b"lo\nworld\npart", &mut live).unwrap();
        out.finish(&mut live).unwrap();
        assert_eq!(String::from_utf8(live).unwrap(), "[OFP] hello\n[OFP] world\n[OFP] part\n");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "hello\nworld\npart\n");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A writer that never returns until released: a terminal nobody scrolls, a full pipe.
    struct Stuck(Arc<std::sync::Mutex<()>>);
    impl Write for Stuck {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            drop(self.0.lock().unwrap());
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stuck_stdout_never_holds_the_writer_and_drops_are_counted() {
        let gate = Arc::new(std::sync::Mutex::new(()));
        let held = gate.lock().unwrap();
        let mut console = Console::new(Stuck(gate.clone())).unwrap();
        let mut out = PartitionOutput::new("Chatty", None).unwrap();
        // 4 MiB of lines into a 1 MiB queue whose reader is stuck: every call returns, and
        // about three quarters of the lines are counted as dropped.
        let line = [b'x'; 1023];
        for _ in 0..4096 {
            out.feed(&line, &mut console).unwrap();
            out.feed(b"\n", &mut console).unwrap();
        }
        console.flush().unwrap();
        let dropped = console.dropped_lines();
        assert!((2900..=3100).contains(&dropped), "{dropped} of 4096 lines dropped");
        drop(held);
        drop(console);
    }

    #[test]
    fn the_echo_arrives_whole_and_in_order() {
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        struct Collect(mpsc::Sender<Vec<u8>>);
        impl Write for Collect {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                let _ = self.0.send(buf.to_vec());
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut console = Console::new(Collect(tx)).unwrap();
        let mut out = PartitionOutput::new("P", None).unwrap();
        for i in 0..1000 {
            out.feed(format!("line {i}\n").as_bytes(), &mut console).unwrap();
        }
        drop(console);
        let text: Vec<u8> = rx.iter().flatten().collect();
        let expected: String = (0..1000).map(|i| format!("[P] line {i}\n")).collect();
        assert_eq!(String::from_utf8(text).unwrap(), expected);
    }

    #[test]
    fn endless_lines_are_cut() {
        let mut out = PartitionOutput::new("X", None).unwrap();
        let mut live = Vec::new();
        out.feed(&vec![b'a'; MAX_LINE * 2 + 10], &mut live).unwrap();
        assert_eq!(live.iter().filter(|&&b| b == b'\n').count(), 2);
    }
}
