//! Two partitions written only against `a653rs::prelude` (hypervisor type `Partita`), joined by
//! a sampling channel ALTITUDE (16 bytes) and a queuing channel COMMANDS (32 bytes, 8 deep).
//! The first argument picks the side:
//!   sensor   a periodic process writes "alt K" on ALTITUDE, then sends "cmd K" on COMMANDS
//!            (K = 0..MESSAGES-1) each period; it also reports the return codes of bad calls.
//!   display  an aperiodic process receives the commands, reporting any out of order, and
//!            after each reads ALTITUDE, counting samples that are invalid or older than the
//!            command (written before it, so never older); it reports the ports' status and
//!            the return codes of bad calls.
//!
//! Under a module only (the ports come from the configuration): see tests/run_a653rs.rs in
//! crates/cli for the module.

use core::str::FromStr;
use core::time::Duration;
use partita_apex::Partita;
use partita_apex::a653rs::bindings::{ApexQueuingPortP4, ApexSamplingPortP4};
use partita_apex::a653rs::prelude::*;
use std::sync::OnceLock;

const MESSAGES: u32 = 40;

static ALT_OUT: OnceLock<SamplingPortSource<Partita>> = OnceLock::new();
static CMD_OUT: OnceLock<QueuingPortSender<Partita>> = OnceLock::new();
static ALT_IN: OnceLock<SamplingPortDestination<Partita>> = OnceLock::new();
static CMD_IN: OnceLock<QueuingPortReceiver<Partita>> = OnceLock::new();

fn report(line: &str) {
    Partita::report_application_message(line.as_bytes()).expect("a line within MAX_ERROR_MESSAGE_SIZE");
}

fn name(s: &str) -> Name {
    Name::from_str(s).expect("a short name")
}

extern "C" fn sensor() {
    let (alt, cmd) = (ALT_OUT.get().expect("created"), CMD_OUT.get().expect("created"));
    for k in 0..MESSAGES {
        if let Err(e) = alt.send(format!("alt {k}").as_bytes()) {
            report(&format!("write {k} failed: {e:?}"));
        }
        if let Err(e) = cmd.send(format!("cmd {k}").as_bytes(), SystemTime::Infinite) {
            report(&format!("send {k} failed: {e:?}"));
        }
        Partita::periodic_wait().expect("a periodic process");
    }
    report(&format!("sensor sent {MESSAGES}"));
    Process::<Partita>::stop_self();
}

/// The number in "alt K".
fn sample_number(msg: &[u8]) -> Option<u32> {
    std::str::from_utf8(msg).ok()?.strip_prefix("alt ")?.parse().ok()
}

extern "C" fn display() {
    let (alt, cmd) = (ALT_IN.get().expect("created"), CMD_IN.get().expect("created"));
    let mut room = vec![0u8; cmd.size()];
    let mut sample = vec![0u8; alt.size() as usize];
    let (mut disorder, mut invalid, mut backwards, mut samples, mut last) = (0, 0, 0, 0, 0);
    for k in 0..MESSAGES {
        match cmd.receive(&mut room, SystemTime::Infinite) {
            Ok((msg, _overflow)) if msg == format!("cmd {k}").as_bytes() => {}
            Ok((msg, _)) => {
                disorder += 1;
                report(&format!("expected cmd {k}, got {}", String::from_utf8_lossy(msg)));
            }
            Err(e) => report(&format!("receive {k} failed: {e:?}")),
        }
        match alt.receive(&mut sample) {
            Ok((validity, msg)) => {
                samples += 1;
                invalid += u32::from(validity != Validity::Valid);
                let n = sample_number(msg).unwrap_or(u32::MAX);
                backwards += u32::from(n < last || n < k || n == u32::MAX);
                last = n;
            }
            Err(Error::NoAction) => {} // nothing written yet
            Err(e) => report(&format!("read failed: {e:?}")),
        }
    }
    report(&format!("display received {MESSAGES}, out of order {disorder}"));
    report(&format!("samples {}, invalid {invalid}, old {backwards}, last {last}", if samples > 0 { "read" } else { "none" }));
    let s = cmd.status();
    report(&format!("queue after: {} of {} x {} bytes, {:?}", s.nb_message, s.max_nb_message, s.max_message_size, s.port_direction));
    let s = alt.status();
    report(&format!(
        "sampling after: {:?}, {} bytes, {:?}, {:?}",
        s.refresh_period, s.max_message_size, s.port_direction, s.last_msg_validity
    ));
    // SAFETY: `room` is a valid slice, shorter than the port's messages: refused before any copy.
    let short = unsafe { Partita::receive_queuing_message(cmd.id(), 0, &mut room[..4]) };
    report(&format!("receive into a short slice: {short:?}"));
    // SAFETY: `room` has room for the port's messages.
    let empty = unsafe { Partita::receive_queuing_message(cmd.id(), 0, &mut room) };
    report(&format!("receive from an empty queue: {empty:?}"));
    report(&format!("send on a destination: {:?}", Partita::send_queuing_message(cmd.id(), b"x", 0)));
    report(&format!("clear: {:?}", Partita::clear_queuing_port(cmd.id())));
    Process::<Partita>::stop_self();
}

fn process(name_: &str, entry: extern "C" fn(), period: SystemTime, priority: i32) -> ProcessAttribute {
    ProcessAttribute {
        period,
        time_capacity: SystemTime::Infinite,
        entry_point: entry,
        stack_size: 256 * 1024,
        base_priority: priority,
        deadline: Deadline::Soft,
        name: name(name_),
    }
}

struct Sensor;

impl Partition<Partita> for Sensor {
    fn cold_start(&self, ctx: &mut StartContext<Partita>) {
        // Checked before creating: once created, any second CREATE is NO_ACTION.
        let wrong = ctx.create_sampling_port_source(name("ALTITUDE"), 8).map(|p| p.id());
        report(&format!("ALTITUDE of the wrong size: {wrong:?}"));
        let wrong = ctx.create_queuing_port_sender(name("COMMANDS"), 32, 4, QueuingDiscipline::Fifo).map(|p| p.id());
        report(&format!("COMMANDS of the wrong depth: {wrong:?}"));
        let alt = ctx.create_sampling_port_source(name("ALTITUDE"), 16).expect("create ALTITUDE");
        let cmd = ctx.create_queuing_port_sender(name("COMMANDS"), 32, 8, QueuingDiscipline::Fifo).expect("create COMMANDS");
        let twice = ctx.create_queuing_port_sender(name("COMMANDS"), 32, 4, QueuingDiscipline::Fifo).map(|p| p.id());
        report(&format!("second COMMANDS: {twice:?}"));
        let unknown = ctx.create_sampling_port_source(name("NOWHERE"), 16).map(|p| p.id());
        report(&format!("unconfigured port: {unknown:?}"));
        // The raw trait calls, below a653rs' own length checks.
        report(&format!("write too long: {:?}", Partita::write_sampling_message(alt.id(), &[0; 17])));
        report(&format!("send too long: {:?}", Partita::send_queuing_message(cmd.id(), &[0; 33], 0)));
        report(&format!("send empty: {:?}", Partita::send_queuing_message(cmd.id(), &[], 0)));
        report(&format!("send to an unknown id: {:?}", Partita::send_queuing_message(99, b"x", 0)));
        let mut buf = [0u8; 16];
        // SAFETY: `buf` holds the port's 16 bytes.
        let read_source = unsafe { Partita::read_sampling_message(alt.id(), &mut buf) };
        report(&format!("read a source: {read_source:?}"));
        ALT_OUT.set(alt).expect("started once");
        CMD_OUT.set(cmd).expect("started once");
        let period = Self::get_status().period;
        let p = ctx.create_process(process("SENSOR", sensor, period, 10)).expect("create the sensor process");
        p.start().expect("start the sensor process");
    }

    fn warm_start(&self, ctx: &mut StartContext<Partita>) {
        self.cold_start(ctx)
    }
}

struct Display;

impl Partition<Partita> for Display {
    fn cold_start(&self, ctx: &mut StartContext<Partita>) {
        let wrong = ctx.create_sampling_port_destination(name("ALTITUDE"), 16, Duration::from_millis(50)).map(|p| p.id());
        report(&format!("ALTITUDE with the wrong refresh: {wrong:?}"));
        let alt = ctx.create_sampling_port_destination(name("ALTITUDE"), 16, Duration::from_millis(200)).expect("create ALTITUDE");
        let cmd = ctx.create_queuing_port_receiver(name("COMMANDS"), 32, 8, QueuingDiscipline::Fifo).expect("create COMMANDS");
        let mut buf = [0u8; 16];
        // SAFETY: `buf` holds the port's 16 bytes.
        let read_early = unsafe { Partita::read_sampling_message(alt.id(), &mut buf) };
        report(&format!("read before any write: {read_early:?}"));
        report(&format!(
            "found by name: {:?}",
            SamplingPortDestination::<Partita>::from_name(name("ALTITUDE")).map(|p| p.id() == alt.id())
        ));
        report(&format!("found as a source: {:?}", SamplingPortSource::<Partita>::from_name(name("ALTITUDE")).map(|p| p.id())));
        ALT_IN.set(alt).expect("started once");
        CMD_IN.set(cmd).expect("started once");
        let p = ctx.create_process(process("DISPLAY", display, SystemTime::Infinite, 10)).expect("create the display process");
        p.start().expect("start the display process");
    }

    fn warm_start(&self, ctx: &mut StartContext<Partita>) {
        self.cold_start(ctx)
    }
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("sensor") => Sensor.run(),
        Some("display") => Display.run(),
        other => {
            eprintln!("usage: a653rs_ports sensor|display (got {other:?})");
            std::process::exit(2)
        }
    }
}
