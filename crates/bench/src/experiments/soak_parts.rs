//! The partition programs of the `soak` experiment (`partita bench-partition soak-*`), written
//! against the `partita_apex` Rust API so that the soak needs no C compiler:
//!
//! - `soak-time`: one process spins on GET_TIME and prints every interval during which it ran
//!   (consecutive samples less than [`GAP_NS`] apart) as `ran START END` (module time, ns): the
//!   experiment checks each against the partition's planned windows (timecheck, from inside).
//! - `soak-producer` / `soak-consumer`: each period the producer writes its sequence number on
//!   sampling port `s` and sends [`PER_PERIOD`] numbered, checksummed messages of varying length
//!   on queuing port `q`; the consumer drains `q` and reads `s`, counting what was lost,
//!   duplicated, reordered or torn. Both print cumulative `chan ...` lines every
//!   [`REPORT_EVERY`] periods (the run is ended from outside, so the last line is the total).
//! - `soak-faulty`: a periodic process that writes through a null pointer in its
//!   [`FAULT_PERIOD`]th period (MEMORY_VIOLATION, restarted COLD_START by its HM table).
//! - `soak-target`: a light periodic process; the experiment injects every error code into it.

use super::partition_programs::{MAX_MESSAGE, check_message, message, run_one};
use crate::workload::Workload;
use partita_apex::{
    INFINITE_TIME_VALUE, Name, PortDirection, QueuingDiscipline, Updated, create_queuing_port, create_sampling_port, get_partition_status,
    get_time, periodic_wait, read_updated_sampling_message, receive_queuing_message, send_queuing_message, write_sampling_message,
};
use std::sync::atomic::{AtomicI32, Ordering};

pub static TIME: Workload =
    Workload { name: "soak-time", description: "spins on GET_TIME and prints each interval it ran as `ran START END`", main: time_main };
pub static PRODUCER: Workload = Workload {
    name: "soak-producer",
    description: "each period: its sequence number on sampling port s and numbered, checksummed messages on queuing port q",
    main: producer_main,
};
pub static CONSUMER: Workload = Workload {
    name: "soak-consumer",
    description: "drains queuing port q and reads sampling port s, counting lost, duplicated, reordered and torn messages",
    main: consumer_main,
};
pub static FAULTY: Workload =
    Workload { name: "soak-faulty", description: "writes through a null pointer in its 6th period (MEMORY_VIOLATION)", main: faulty_main };
pub static TARGET: Workload =
    Workload { name: "soak-target", description: "a light periodic process (the target of injected errors)", main: target_main };

/// Two GET_TIME samples further apart than this are two run intervals (a switch or a host stall).
pub const GAP_NS: i64 = 50_000;
/// Queuing messages the producer sends per period.
pub const PER_PERIOD: u32 = 8;
/// Periods between two `chan` lines.
pub const REPORT_EVERY: u64 = 25;
/// The faulty partition's period of its fault (counted from its start).
pub const FAULT_PERIOD: u64 = 6;

extern "C" fn time_process() {
    let mut start = get_time();
    let mut last = start;
    loop {
        let now = get_time();
        if now - last > GAP_NS {
            println!("ran {start} {last}");
            start = now;
        }
        last = now;
    }
}

fn time_main(_args: &[String]) -> i32 {
    run_one("SPIN", time_process, INFINITE_TIME_VALUE)
}

static Q: AtomicI32 = AtomicI32::new(0);
static S: AtomicI32 = AtomicI32::new(0);

extern "C" fn producer_process() {
    let (q, s) = (Q.load(Ordering::Relaxed), S.load(Ordering::Relaxed));
    let mut buf = [0u8; MAX_MESSAGE];
    let (mut sent, mut full, mut written, mut periods) = (0u32, 0u64, 0u32, 0u64);
    loop {
        let len = message(written, &mut buf);
        if write_sampling_message(s, &buf[..len]).is_ok() {
            written += 1;
        }
        for _ in 0..PER_PERIOD {
            let len = message(sent, &mut buf);
            // A full queue (the consumer was late) keeps the number for the next period: no gap.
            match send_queuing_message(q, &buf[..len], 0) {
                Ok(()) => sent += 1,
                Err(_) => {
                    full += 1;
                    break;
                }
            }
        }
        periods += 1;
        if periods.is_multiple_of(REPORT_EVERY) {
            println!("chan q sent {sent} full {full}");
            println!("chan s sent {written}");
        }
        let _ = periodic_wait();
    }
}

fn producer_main(_args: &[String]) -> i32 {
    let period = get_partition_status().period;
    let q = create_queuing_port(&Name::from("q"), MAX_MESSAGE as i32, 32, PortDirection::Source, QueuingDiscipline::Fifo);
    let s = create_sampling_port(&Name::from("s"), MAX_MESSAGE as i32, PortDirection::Source, 100_000_000);
    match (q, s) {
        (Ok(q), Ok(s)) => {
            Q.store(q, Ordering::Relaxed);
            S.store(s, Ordering::Relaxed);
            run_one("PRODUCE", producer_process, period)
        }
        (q, s) => {
            eprintln!("producer ports: {q:?} {s:?}");
            1
        }
    }
}

/// What a receiver saw on one channel (the `chan` line of the consumer).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Seen {
    pub received: u64,
    /// Numbers skipped (queuing: lost; sampling: overwritten before a read, which is by design).
    pub skipped: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub torn: u64,
    /// Queuing: receives that reported an overflow before them.
    pub overflowed: u64,
    last: Option<u32>,
}

impl Seen {
    /// Accounts one received message (`None`: torn).
    pub fn take(&mut self, seq: Option<u32>) {
        let Some(seq) = seq else {
            self.torn += 1;
            return;
        };
        self.received += 1;
        let expected = self.last.map_or(0, |l| l.wrapping_add(1));
        match self.last {
            Some(l) if seq == l => self.duplicated += 1,
            Some(l) if seq < l => self.reordered += 1,
            _ => {
                self.skipped += (seq - expected) as u64;
                self.last = Some(seq);
            }
        }
    }
}

extern "C" fn consumer_process() {
    let (q, s) = (Q.load(Ordering::Relaxed), S.load(Ordering::Relaxed));
    let mut buf = [0u8; MAX_MESSAGE];
    let (mut qs, mut ss) = (Seen::default(), Seen::default());
    let mut periods = 0u64;
    loop {
        while let Ok(m) = receive_queuing_message(q, 0, &mut buf) {
            qs.overflowed += m.overflowed as u64;
            qs.take(check_message(&buf[..m.length.min(MAX_MESSAGE)]));
        }
        if let (Ok(len), Updated::NewMessage) = read_updated_sampling_message(s, &mut buf) {
            ss.take(check_message(&buf[..len.min(MAX_MESSAGE)]));
        }
        periods += 1;
        if periods.is_multiple_of(REPORT_EVERY) {
            for (name, c) in [("q", &qs), ("s", &ss)] {
                println!(
                    "chan {name} received {} skipped {} duplicated {} reordered {} torn {} overflowed {}",
                    c.received, c.skipped, c.duplicated, c.reordered, c.torn, c.overflowed
                );
            }
        }
        let _ = periodic_wait();
    }
}

fn consumer_main(_args: &[String]) -> i32 {
    let period = get_partition_status().period;
    let q = create_queuing_port(&Name::from("q"), MAX_MESSAGE as i32, 32, PortDirection::Destination, QueuingDiscipline::Fifo);
    let s = create_sampling_port(&Name::from("s"), MAX_MESSAGE as i32, PortDirection::Destination, 100_000_000);
    match (q, s) {
        (Ok(q), Ok(s)) => {
            Q.store(q, Ordering::Relaxed);
            S.store(s, Ordering::Relaxed);
            run_one("CONSUME", consumer_process, period)
        }
        (q, s) => {
            eprintln!("consumer ports: {q:?} {s:?}");
            1
        }
    }
}

extern "C" fn faulty_process() {
    for _ in 1..FAULT_PERIOD {
        let _ = periodic_wait();
    }
    // SAFETY: not safe, on purpose: the write faults (SIGSEGV), which the runtime reports as
    // MEMORY_VIOLATION; this process never runs on after it.
    unsafe { std::ptr::write_volatile(std::ptr::null_mut::<u64>(), 1) };
}

fn faulty_main(_args: &[String]) -> i32 {
    run_one("FAULT", faulty_process, get_partition_status().period)
}

extern "C" fn target_process() {
    loop {
        let _ = periodic_wait();
    }
}

fn target_main(_args: &[String]) -> i32 {
    run_one("TARGET", target_process, get_partition_status().period)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receiver_counts_gaps_duplicates_reorders_and_torn_messages() {
        let mut s = Seen::default();
        for seq in [Some(0), Some(1), Some(3), Some(3), Some(2), None, Some(4)] {
            s.take(seq);
        }
        assert_eq!((s.received, s.skipped, s.duplicated, s.reordered, s.torn), (6, 1, 1, 1, 1));
        let mut late = Seen::default();
        late.take(Some(5));
        assert_eq!(late.skipped, 5, "numbers before the first received one count as skipped");
    }
}
