//! The host's timer-switch floor, measured beside `slot-loss` in the same invocation (issue 13:
//! every timing goal judged against the host's own floor): what the cheapest timer-driven
//! switch away from a running thread and back costs on this CPU, so that the time a partition
//! loses per switch can be read as a multiple of what any timer-driven switch loses here.
//!
//! One process, two threads pinned to the CPU: a counting thread at the partitions' real-time
//! priority notes every pause in its counting, and a waker thread at the module scheduler's
//! priority sleeps on a periodic timerfd (one expiry per slot) and goes back to sleep at once.
//! Each expiry costs the counter the timer interrupt and two thread switches, which is the part
//! of a partition switch no user-level mechanism avoids; a partition switch adds its own work
//! (stop, release, the other process's address space). `timer_switch_ns` is one sample per
//! expiry: the gap in the counting that holds the waker's wake-up (the waker notes when it
//! woke). The host's own pauses (interrupts, the hypervisor: here ~500 a second of ~20 us) are
//! left out unless one falls into such a gap.

use super::switch_floor::{demote_here, realtime_here};
use crate::conditions::{Conditions, partition_rt_priority};
use crate::experiment::RunContext;
use crate::workload::{Workload, parse_samples};
use std::io::Write;

pub static SLOT_FLOOR: Workload = Workload {
    name: "slot-floor",
    description: "a counting thread and a waker thread woken by a periodic timer on one CPU; prints the gap each wake-up made in the counting",
    main: floor_main,
};

/// The waker's priority: the module's scheduler threads'.
const WAKER_PRIORITY: i32 = 99;

/// Measures the floor on `cpu` with a timer expiry every `slot_ns` for `seconds` (natively,
/// under the partitions' conditions); the caller holds the machine lock. One sample per expiry.
pub fn measure(ctx: &RunContext, cpu: u32, slot_ns: i64, seconds: f64) -> Result<Vec<f64>, String> {
    let conditions = Conditions::hold(&[cpu]);
    let args = [cpu.to_string(), partition_rt_priority(1).to_string(), slot_ns.to_string(), ((seconds * 1e9) as i64).to_string()];
    let out = ctx
        .programs
        .native_command("slot-floor", &[&args[0], &args[1], &args[2], &args[3]])
        .output()
        .map_err(|e| format!("{}: {e}", ctx.programs.exe.display()))?;
    drop(conditions);
    if !out.status.success() {
        return Err(format!("the timer-switch floor failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    let v: Vec<f64> =
        parse_samples(&String::from_utf8_lossy(&out.stdout)).into_iter().filter(|(m, _)| m == "timer_switch_ns").map(|(_, v)| v).collect();
    if v.is_empty() {
        return Err("the timer-switch floor printed no samples".into());
    }
    Ok(v)
}

fn periodic_timer(period_ns: i64) -> std::io::Result<libc::c_int> {
    // SAFETY: timerfd_create with valid flags; the descriptor is this process's until it exits.
    let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let ts = |ns: i64| libc::timespec { tv_sec: ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000 };
    let spec = libc::itimerspec { it_interval: ts(period_ns), it_value: ts(period_ns) };
    // SAFETY: arming our own timerfd with a valid relative spec.
    if unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// `slot-floor CPU PRIORITY SLOT_NS DURATION_NS`: prints `sample timer_switch_ns V` per expiry.
fn floor_main(args: &[String]) -> i32 {
    let num = |i: usize, d: i64| args.get(i).and_then(|a| a.parse::<i64>().ok()).unwrap_or(d);
    let (cpu, priority) = (num(0, 0) as u32, num(1, 20) as i32);
    let (slot, duration) = (num(2, 1_000_000).max(50_000), num(3, 1_000_000_000).clamp(10_000_000, 60_000_000_000));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let ready = std::sync::atomic::AtomicBool::new(false);
    let woke = std::sync::atomic::AtomicI64::new(0);
    let mut pauses: Vec<i64> = Vec::with_capacity((duration / slot * 2 + 1024) as usize);
    let outcome = std::thread::scope(|s| {
        // Started before this thread goes real-time: a new thread at this thread's FIFO
        // priority on this CPU would never run while it counts.
        let waker = s.spawn(|| -> Result<(), String> {
            let armed = realtime_here(cpu, WAKER_PRIORITY)
                .map_err(|e| format!("waker at SCHED_FIFO {WAKER_PRIORITY}: {e}"))
                .and_then(|()| periodic_timer(slot).map_err(|e| format!("timerfd: {e}")));
            ready.store(true, std::sync::atomic::Ordering::Release);
            let fd = armed?;
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                let mut expirations = 0u64;
                // SAFETY: reading the 8-byte expiration count of our timerfd into a valid buffer.
                unsafe { libc::read(fd, (&mut expirations as *mut u64).cast(), 8) };
                woke.store(crate::module_run::monotonic_ns(), std::sync::atomic::Ordering::Release);
            }
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(fd) };
            demote_here();
            Ok(())
        });
        while !ready.load(std::sync::atomic::Ordering::Acquire) {
            std::thread::yield_now();
        }
        if let Err(e) = realtime_here(cpu, priority) {
            stop.store(true, std::sync::atomic::Ordering::Release);
            let _ = waker.join();
            return Err(format!("cannot run at SCHED_FIFO {priority} on CPU {cpu}: {e}"));
        }
        let start = crate::module_run::monotonic_ns();
        let mut last = start;
        let mut count = 0u64;
        while last - start < duration {
            for _ in 0..256 {
                count = std::hint::black_box(count + 1);
            }
            let now = crate::module_run::monotonic_ns();
            let w = woke.load(std::sync::atomic::Ordering::Acquire);
            if w > last && w <= now {
                pauses.push(now - last);
            }
            last = now;
        }
        // The waker sees the flag at its next expiry (at most a slot later).
        stop.store(true, std::sync::atomic::Ordering::Release);
        demote_here();
        waker.join().unwrap_or_else(|_| Err("the waker panicked".into()))
    });
    if let Err(e) = outcome {
        eprintln!("slot-floor: {e}");
        return 1;
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for v in pauses {
        let _ = writeln!(w, "sample timer_switch_ns {v}");
    }
    let _ = w.flush();
    0
}
