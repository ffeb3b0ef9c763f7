//! The partition programs of the `faults` and `messages` experiments (`partita bench-partition
//! NAME ARGS`), written against the `partita_apex` Rust API (no C compiler needed):
//!
//! - `fault-restarter INIT_MS`: spins INIT_MS of module time in its initialization (so that a
//!   fault injected while it restarts finds it in COLD_START or WARM_START), then a light
//!   periodic process in NORMAL.
//! - `switcher EVERY`: a periodic process that asks for the other module schedule every EVERY
//!   periods (SET_MODULE_SCHEDULE, schedules 1 and 2 in turn).
//! - `msg-producer COUNT BUDGET_US`: each period, for BUDGET_US, sends numbered, checksummed
//!   messages on queuing port `q` (a full queue keeps the number for the next try: nothing is
//!   skipped) and writes its own numbered messages on sampling port `s`, until COUNT queuing
//!   messages are sent. Prints `chan q sent N full F` and `chan s sent N` every [`FLUSH_EVERY`]
//!   periods.
//! - `msg-consumer RESTART_EVERY BUDGET_US`: each period, for BUDGET_US, drains `q` and reads
//!   `s`; every [`FLUSH_EVERY`] periods prints what it received since the last line: `got q`
//!   and the runs of consecutive numbers (`A-B`), torn and overflow counts, and `got s` with
//!   the sampling counts. Every RESTART_EVERY periods it prints its last line and restarts
//!   itself (SET_PARTITION_MODE COLD_START): the queue outlives the receiver, so the bench
//!   stitches the runs of every incarnation together (a receiver keeps no memory over a restart).

use super::soak_parts::{MAX_MESSAGE, check_message, message, run_one};
use crate::workload::Workload;
use partita_apex::{
    Name, OperatingMode, PortDirection, QueuingDiscipline, ScheduleId, Updated, create_queuing_port, create_sampling_port,
    get_partition_status, get_time, periodic_wait, read_updated_sampling_message, receive_queuing_message, send_queuing_message,
    set_module_schedule, set_partition_mode, write_sampling_message,
};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU64, Ordering};

pub static RESTARTER: Workload = Workload {
    name: "fault-restarter",
    description: "spins INIT_MS in its initialization, then a light periodic process (the restarted target of injected errors)",
    main: restarter_main,
};
pub static SWITCHER: Workload =
    Workload { name: "switcher", description: "asks for module schedule 1 and 2 in turn every EVERY periods", main: switcher_main };
pub static MSG_PRODUCER: Workload = Workload {
    name: "msg-producer",
    description: "sends COUNT numbered, checksummed queuing messages and writes sampling messages, BUDGET_US per period",
    main: producer_main,
};
pub static MSG_CONSUMER: Workload = Workload {
    name: "msg-consumer",
    description: "receives queuing and sampling messages and prints the runs of numbers it got; restarts every RESTART_EVERY periods",
    main: consumer_main,
};

/// Periods between two `chan` / `got` lines.
pub const FLUSH_EVERY: u64 = 10;
/// Queue depth of the message channels.
pub const DEPTH: i32 = 512;

static ARG_A: AtomicI64 = AtomicI64::new(0);
static ARG_B: AtomicI64 = AtomicI64::new(0);
static Q: AtomicI32 = AtomicI32::new(0);
static S: AtomicI32 = AtomicI32::new(0);

fn arg(args: &[String], i: usize, default: i64) -> i64 {
    args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

extern "C" fn idle_process() {
    loop {
        let _ = periodic_wait();
    }
}

fn restarter_main(args: &[String]) -> i32 {
    let until = get_time() + arg(args, 0, 25) * 1_000_000;
    while get_time() < until {
        std::hint::spin_loop();
    }
    run_one("TARGET", idle_process, get_partition_status().period)
}

extern "C" fn switcher_process() {
    let every = ARG_A.load(Ordering::Relaxed).max(1) as u64;
    let (mut periods, mut next): (u64, ScheduleId) = (0, 2);
    loop {
        periods += 1;
        if periods.is_multiple_of(every) {
            if let Err(e) = set_module_schedule(next) {
                println!("SET_MODULE_SCHEDULE({next}) failed: {e:?}");
            }
            next = 3 - next;
        }
        let _ = periodic_wait();
    }
}

fn switcher_main(args: &[String]) -> i32 {
    ARG_A.store(arg(args, 0, 5), Ordering::Relaxed);
    run_one("SWITCH", switcher_process, get_partition_status().period)
}

fn ports(direction: PortDirection) -> Result<(), String> {
    let q = create_queuing_port(&Name::from("q"), MAX_MESSAGE as i32, DEPTH, direction, QueuingDiscipline::Fifo);
    let s = create_sampling_port(&Name::from("s"), MAX_MESSAGE as i32, direction, 1_000_000_000);
    match (q, s) {
        (Ok(q), Ok(s)) => {
            Q.store(q, Ordering::Relaxed);
            S.store(s, Ordering::Relaxed);
            Ok(())
        }
        (q, s) => Err(format!("ports: {q:?} {s:?}")),
    }
}

extern "C" fn producer_process() {
    let (q, s) = (Q.load(Ordering::Relaxed), S.load(Ordering::Relaxed));
    let (count, budget) = (ARG_A.load(Ordering::Relaxed) as u64, ARG_B.load(Ordering::Relaxed));
    let mut buf = [0u8; MAX_MESSAGE];
    let (mut sent, mut full, mut written, mut periods) = (0u64, 0u64, 0u64, 0u64);
    loop {
        let start = get_time();
        while sent < count && get_time() - start < budget {
            let len = message(sent as u32, &mut buf);
            match send_queuing_message(q, &buf[..len], 0) {
                Ok(()) => sent += 1,
                Err(_) => full += 1,
            }
            let len = message(written as u32, &mut buf);
            if write_sampling_message(s, &buf[..len]).is_ok() {
                written += 1;
            }
        }
        periods += 1;
        if periods.is_multiple_of(FLUSH_EVERY) {
            println!("chan q sent {sent} full {full}");
            println!("chan s sent {written}");
        }
        let _ = periodic_wait();
    }
}

fn producer_main(args: &[String]) -> i32 {
    ARG_A.store(arg(args, 0, 1000), Ordering::Relaxed);
    ARG_B.store(arg(args, 1, 3000) * 1000, Ordering::Relaxed);
    match ports(PortDirection::Source) {
        Ok(()) => run_one("PRODUCE", producer_process, get_partition_status().period),
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

/// What a receiver got since its last line: runs of consecutive queuing numbers and counts.
#[derive(Debug, Default)]
struct Got {
    runs: Vec<(u32, u32)>,
    q_torn: u64,
    q_overflowed: u64,
    s_received: u64,
    s_duplicated: u64,
    s_reordered: u64,
    s_torn: u64,
    s_last: Option<u32>,
}

impl Got {
    fn queued(&mut self, seq: Option<u32>, overflowed: bool) {
        self.q_overflowed += overflowed as u64;
        let Some(seq) = seq else {
            self.q_torn += 1;
            return;
        };
        match self.runs.last_mut() {
            Some(r) if r.1.wrapping_add(1) == seq => r.1 = seq,
            _ => self.runs.push((seq, seq)),
        }
    }

    /// A new sampling message (per incarnation: a restarted receiver reads the latest again).
    fn sampled(&mut self, seq: Option<u32>) {
        let Some(seq) = seq else {
            self.s_torn += 1;
            return;
        };
        self.s_received += 1;
        match self.s_last {
            Some(l) if seq == l => self.s_duplicated += 1,
            Some(l) if seq < l => self.s_reordered += 1,
            _ => self.s_last = Some(seq),
        }
    }

    /// The `got` lines; the counts start again (the last sampling number is kept).
    fn flush(&mut self) {
        let mut line = String::from("got q");
        for (a, b) in self.runs.drain(..) {
            let _ = write!(line, " {a}-{b}");
        }
        let _ = write!(line, " torn {} overflowed {}", self.q_torn, self.q_overflowed);
        println!("{line}");
        println!("got s received {} duplicated {} reordered {} torn {}", self.s_received, self.s_duplicated, self.s_reordered, self.s_torn);
        *self = Got { s_last: self.s_last, ..Got::default() };
    }
}

static PERIODS_LEFT: AtomicU64 = AtomicU64::new(0);

extern "C" fn consumer_process() {
    let (q, s) = (Q.load(Ordering::Relaxed), S.load(Ordering::Relaxed));
    let budget = ARG_B.load(Ordering::Relaxed);
    let mut buf = [0u8; MAX_MESSAGE];
    let mut got = Got::default();
    let mut periods = 0u64;
    loop {
        let start = get_time();
        while get_time() - start < budget {
            while let Ok(m) = receive_queuing_message(q, 0, &mut buf) {
                got.queued(check_message(&buf[..m.length.min(MAX_MESSAGE)]), m.overflowed);
            }
            if let (Ok(len), Updated::NewMessage) = read_updated_sampling_message(s, &mut buf) {
                got.sampled(check_message(&buf[..len.min(MAX_MESSAGE)]));
            }
        }
        periods += 1;
        let restart = PERIODS_LEFT.load(Ordering::Relaxed) == periods;
        if restart || periods.is_multiple_of(FLUSH_EVERY) {
            got.flush();
        }
        if restart {
            // Nothing received is left unprinted: the restart loses no message of the count.
            let _ = set_partition_mode(OperatingMode::ColdStart as u32);
        }
        let _ = periodic_wait();
    }
}

fn consumer_main(args: &[String]) -> i32 {
    PERIODS_LEFT.store(arg(args, 0, 0).max(0) as u64, Ordering::Relaxed);
    ARG_B.store(arg(args, 1, 3000) * 1000, Ordering::Relaxed);
    match ports(PortDirection::Destination) {
        Ok(()) => run_one("CONSUME", consumer_process, get_partition_status().period),
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receiver_records_runs_of_consecutive_numbers() {
        let mut g = Got::default();
        for s in [Some(4), Some(5), Some(6), Some(9), None, Some(10), Some(2)] {
            g.queued(s, false);
        }
        assert_eq!(g.runs, [(4, 6), (9, 10), (2, 2)]);
        assert_eq!(g.q_torn, 1);
        for s in [Some(1), Some(3), Some(3), Some(2), None] {
            g.sampled(s);
        }
        assert_eq!((g.s_received, g.s_duplicated, g.s_reordered, g.s_torn), (4, 1, 1, 1));
    }
}
