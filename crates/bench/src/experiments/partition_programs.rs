//! What the Rust partition programs of several experiments share, written against the
//! `partita_apex` API: arguments, process attributes, starting processes, going NORMAL, exiting
//! (demoted first when standalone), and the `idle` program that `startup` and `footprint` both
//! start. Each program's `main` is the partition's initialization process; parameters reach the
//! ARINC processes (entry points without arguments) through statics set before
//! SET_PARTITION_MODE. The programs specific to one experiment are in that experiment's file.

use crate::workload::Workload;
use partita_apex::{
    Deadline, INFINITE_TIME_VALUE, Name, OperatingMode, ProcessAttribute, ProcessId, create_process, get_time, set_partition_mode, start,
    timed_wait,
};

pub static IDLE: Workload =
    Workload { name: "idle", description: "one sleeping process; prints `ready` when it first runs (startup, footprint)", main: idle_main };

/// Argument `i` as a number, `default` when missing or not a number.
pub fn arg(args: &[String], i: usize, default: i64) -> i64 {
    args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

/// A process of `priority` running `entry`; periodic when `period` > 0 (time capacity = period).
pub fn attribute(name: &str, entry: extern "C" fn(), period: i64, priority: i32) -> ProcessAttribute {
    ProcessAttribute {
        period,
        time_capacity: if period > 0 { period } else { INFINITE_TIME_VALUE },
        entry_point: entry,
        stack_size: 0,
        base_priority: priority,
        deadline: Deadline::Soft,
        name: Name::from(name),
    }
}

/// Creates and starts the process `attr` describes.
pub fn create_and_start(attr: &ProcessAttribute) -> Result<ProcessId, String> {
    let id = create_process(attr).map_err(|e| format!("CREATE_PROCESS {:?}: {e:?}", attr.name))?;
    start(id).map_err(|e| format!("START: {e:?}"))?;
    Ok(id)
}

/// Goes NORMAL (does not return on success).
pub fn go_normal() -> i32 {
    let r = set_partition_mode(OperatingMode::Normal as u32);
    eprintln!("SET_PARTITION_MODE(NORMAL) returned {r:?}");
    1
}

/// Reports `e` on stderr; the status of a failed initialization.
pub fn fail(e: String) -> i32 {
    eprintln!("{e}");
    1
}

/// Exits the program. Standalone (a native baseline), its threads run at several SCHED_FIFO
/// priorities on one CPU and are first moved to SCHED_OTHER: a process dying real-time there can
/// hold the CPU for good (`backend::rt::demote_threads`). In a partition the module does that.
pub fn exit_process(code: i32) -> ! {
    if std::env::var_os("PARTITA_PARTITION").is_none() {
        use partita_module::backend::rt::{demote_threads, threads_of};
        demote_threads(threads_of(std::process::id() as i32));
    }
    std::process::exit(code)
}

/// Creates and starts one process, then goes NORMAL (which does not return on success).
pub fn run_one(name: &str, entry: extern "C" fn(), period: i64) -> i32 {
    let attr = attribute(name, entry, period, 10);
    match create_process(&attr).and_then(|id| start(id).map(|_| id)) {
        Ok(_) => {
            let r = set_partition_mode(OperatingMode::Normal as u32);
            eprintln!("SET_PARTITION_MODE(NORMAL) returned {r:?}");
            1
        }
        Err(e) => {
            eprintln!("{name}: CREATE_PROCESS/START: {e:?}");
            1
        }
    }
}

/// An ARINC process that sleeps for ever.
pub extern "C" fn sleeper() {
    loop {
        let _ = timed_wait(1_000_000_000);
    }
}

extern "C" fn idle_process() {
    println!("ready {}", get_time());
    if std::env::var_os("PARTITA_PARTITION").is_none() {
        exit_process(0);
    }
    sleeper();
}

/// `idle`: one process that reports when it first runs, then sleeps (standalone: exits).
fn idle_main(_args: &[String]) -> i32 {
    if let Err(e) = create_and_start(&attribute("IDLE", idle_process, INFINITE_TIME_VALUE, 10)) {
        return fail(e);
    }
    go_normal()
}

// The numbered, checksummed messages `soak` and `messages` send through their ports.

/// Largest message on either port (the configuration's MaxMessageSize).
pub const MAX_MESSAGE: usize = 64;

/// FNV-1a of `bytes`: the checksum each message carries.
pub fn checksum(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// Message `seq`: its number, the checksum of the rest, then a payload derived from the number;
/// 9 to [`MAX_MESSAGE`] bytes long.
pub fn message(seq: u32, out: &mut [u8; MAX_MESSAGE]) -> usize {
    let len = 9 + (seq as usize * 7) % (MAX_MESSAGE - 8);
    out[..4].copy_from_slice(&seq.to_le_bytes());
    for (i, b) in out[8..len].iter_mut().enumerate() {
        *b = (seq.wrapping_mul(31) as usize + i * 13) as u8;
    }
    let sum = checksum(&out[8..len]);
    out[4..8].copy_from_slice(&sum.to_le_bytes());
    len
}

/// The number of a message if it is whole (its length and checksum match the number), else None.
pub fn check_message(m: &[u8]) -> Option<u32> {
    if m.len() < 9 {
        return None;
    }
    let seq = u32::from_le_bytes(m[..4].try_into().ok()?);
    let mut want = [0u8; MAX_MESSAGE];
    let len = message(seq, &mut want);
    (len == m.len() && want[..len] == *m).then_some(seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_check_whole_and_refuse_torn_ones() {
        let mut m = [0u8; MAX_MESSAGE];
        for seq in [0u32, 1, 55, 56, 1_000_000] {
            let len = message(seq, &mut m);
            assert!((9..=MAX_MESSAGE).contains(&len));
            assert_eq!(check_message(&m[..len]), Some(seq));
            let mut torn = m;
            torn[len - 1] ^= 1;
            assert_eq!(check_message(&torn[..len]), None, "payload changed");
            assert_eq!(check_message(&m[..len - 1]), None, "shortened");
        }
        let (mut a, mut b) = ([0u8; MAX_MESSAGE], [0u8; MAX_MESSAGE]);
        let la = message(3, &mut a);
        message(4, &mut b);
        a[..4].copy_from_slice(&b[..4]);
        assert_eq!(check_message(&a[..la]), None, "the number of another message");
    }
}
