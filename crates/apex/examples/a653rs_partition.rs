//! A partition written only against `a653rs::prelude`: the one line that names Partita is the
//! hypervisor type `Partita`. The start function creates a buffer, an event, a periodic producer
//! and an aperiodic consumer; the producer sends one message per period, the consumer reports
//! each as a line (REPORT_APPLICATION_MESSAGE). After three messages both processes stop. The
//! producer also logs through the `log` crate (`partita_apex::logger`, as a653rs platforms offer).
//!
//! Under a module: `partita run module.xml` with this program's path as `pt:Executable` (see
//! docs/rust.md). Standalone: `cargo run -p partita-apex --example a653rs_partition` (it keeps
//! running after the three messages; Ctrl-C ends it).

use core::str::FromStr;
use core::time::Duration;
use partita_apex::Partita;
use partita_apex::a653rs::prelude::*;
use partita_apex::logger::log;
use std::sync::OnceLock;

const MESSAGES: usize = 3;

static TICKS: OnceLock<Buffer<Partita>> = OnceLock::new();
static DONE: OnceLock<Event<Partita>> = OnceLock::new();

fn report(line: &str) {
    Partita::report_application_message(line.as_bytes()).expect("a line within MAX_ERROR_MESSAGE_SIZE");
}

fn name(s: &str) -> Name {
    Name::from_str(s).expect("a short name")
}

extern "C" fn producer() {
    let ticks = TICKS.get().expect("created at start");
    for k in 0..MESSAGES {
        let mut msg = format!("tick {k}").into_bytes();
        if let Err(e) = ticks.send(&mut msg, SystemTime::Normal(Duration::ZERO)) {
            report(&format!("send failed: {e:?}"));
        }
        Partita::periodic_wait().expect("a periodic process");
    }
    DONE.get().expect("created at start").wait(SystemTime::Infinite).expect("the consumer sets it");
    report("producer done");
    log::info!("producer sent {MESSAGES} messages");
    Process::<Partita>::stop_self();
}

extern "C" fn consumer() {
    let ticks = TICKS.get().expect("created at start");
    let mut room = vec![0u8; ticks.size() as usize];
    for _ in 0..MESSAGES {
        match ticks.receive(&mut room, SystemTime::Infinite) {
            Ok(msg) => {
                let at = Partita::get_time().unwrap_duration().as_nanos();
                report(&format!("received {} at {at} ns", String::from_utf8_lossy(msg)));
            }
            Err(e) => report(&format!("receive failed: {e:?}")),
        }
    }
    DONE.get().expect("created at start").set();
    Process::<Partita>::stop_self();
}

struct Ticker;

impl Partition<Partita> for Ticker {
    fn cold_start(&self, ctx: &mut StartContext<Partita>) {
        let status = Self::get_status();
        report(&format!("a653rs partition {} in {:?}, period {:?}", status.identifier, status.operating_mode, status.period));
        let ticks = ctx.create_buffer(name("TICKS"), 32, 4, QueuingDiscipline::Fifo).expect("create the buffer");
        let again = ctx.create_buffer(name("TICKS"), 32, 4, QueuingDiscipline::Fifo).map(|b| b.id());
        report(&format!("second TICKS buffer: {again:?}"));
        TICKS.set(ticks).expect("started once");
        DONE.set(ctx.create_event(name("DONE")).expect("create the event")).expect("started once");
        let process = |name_: &str, entry: extern "C" fn(), period: SystemTime, priority| ProcessAttribute {
            period: period.clone(),
            time_capacity: period,
            entry_point: entry,
            stack_size: 256 * 1024,
            base_priority: priority,
            deadline: Deadline::Soft,
            name: name(name_),
        };
        let p = ctx.create_process(process("PRODUCER", producer, status.period.clone(), 20)).expect("create the producer");
        let c = ctx.create_process(process("CONSUMER", consumer, SystemTime::Infinite, 10)).expect("create the consumer");
        p.start().expect("start the producer");
        c.start().expect("start the consumer");
    }

    fn warm_start(&self, ctx: &mut StartContext<Partita>) {
        self.cold_start(ctx)
    }
}

fn main() {
    partita_apex::logger::init(log::LevelFilter::Info).expect("the only logger");
    log::debug!("not shown: below the level");
    Ticker.run()
}
