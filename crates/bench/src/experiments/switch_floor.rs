//! The host's same-core process-switch floor, measured beside PCS in the same invocation (issue
//! 13, item 3): what any switch from one process to another costs on this CPU, so that a PCS
//! figure from one host can be compared with one from another as a ratio to it.
//!
//! Two processes pinned to one CPU at the same SCHED_FIFO priority hand a byte back and forth
//! through two pipes. Neither preempts the other (same priority), so each hand-off is a write,
//! a blocking read and a switch to the other process: a round trip is two hand-offs, and
//! `switch_floor_ns` = round trip / 2. The priority is that of the highest process of a `pcs`
//! partition (the top of the default band, Linux FIFO 73; with one process, its only one).

use crate::conditions::{Conditions, partition_rt_priority};
use crate::experiment::RunContext;
use crate::workload::{Workload, parse_samples};
use std::io::Write;

pub static SWITCH_FLOOR: Workload = Workload {
    name: "switch-floor",
    description: "two processes on one CPU at the same FIFO priority hand a byte back and forth through pipes; prints each hand-off",
    main: floor_main,
};

/// Round trips left out at the start (caches, page faults of the first ones).
const WARM_UP: u32 = 200;

/// Measures the floor on `cpu` with `rounds` round trips (natively, under the partition's
/// conditions); the caller holds the machine lock. Returns one sample per round trip.
pub fn measure(ctx: &RunContext, cpu: u32, rounds: u32) -> Result<Vec<f64>, String> {
    let conditions = Conditions::hold(&[cpu]);
    let args = [cpu.to_string(), partition_rt_priority(1).to_string(), rounds.to_string()];
    let out = ctx
        .programs
        .native_command("switch-floor", &[&args[0], &args[1], &args[2]])
        .output()
        .map_err(|e| format!("{}: {e}", ctx.programs.exe.display()))?;
    drop(conditions);
    if !out.status.success() {
        return Err(format!("the switch floor failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    let v: Vec<f64> =
        parse_samples(&String::from_utf8_lossy(&out.stdout)).into_iter().filter(|(m, _)| m == "switch_floor_ns").map(|(_, v)| v).collect();
    if v.is_empty() {
        return Err("the switch floor printed no samples".into());
    }
    Ok(v)
}

/// The ratio of two medians (NaN when either is missing or the floor is not positive).
pub fn ratio_of_medians(value: &[f64], floor: &[f64]) -> f64 {
    match (crate::stats::Summary::of(value), crate::stats::Summary::of(floor)) {
        (Some(v), Some(f)) if f.median > 0.0 => v.median / f.median,
        _ => f64::NAN,
    }
}

/// Pins the calling thread (a single-threaded process: the process) to `cpu` at SCHED_FIFO `priority`.
pub(super) fn realtime_here(cpu: u32, priority: i32) -> std::io::Result<()> {
    // SAFETY: plain system calls on this process with a zeroed, then filled, CPU set and a
    // valid parameter.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let p = libc::sched_param { sched_priority: priority };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Back to SCHED_OTHER before exiting (see `backend::rt::demote_threads`: a process must not
/// die real-time on a CPU shared with another real-time one).
pub(super) fn demote_here() {
    partita_module::backend::rt::demote_threads([0]);
}

fn pipe() -> std::io::Result<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fds)
}

fn write_byte(fd: libc::c_int) -> bool {
    // SAFETY: writes one byte from a valid buffer to a descriptor this process owns.
    unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) == 1 }
}

fn read_byte(fd: libc::c_int) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: reads at most one byte into a valid buffer from a descriptor this process owns.
    unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) == 1 }
}

/// `switch-floor CPU PRIORITY ROUNDS`: prints `sample switch_floor_ns V` per round trip.
fn floor_main(args: &[String]) -> i32 {
    let num = |i: usize, d: i64| args.get(i).and_then(|a| a.parse::<i64>().ok()).unwrap_or(d);
    let (cpu, priority, rounds) = (num(0, 0) as u32, num(1, 20) as i32, num(2, 5000).clamp(1, 10_000_000) as u32);
    // A write to a vanished reader is an error to report, not a death by SIGPIPE.
    // SAFETY: ignoring a signal has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let (to_child, to_parent) = match (pipe(), pipe()) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("switch-floor: pipe: {e}");
            return 1;
        }
    };
    // SAFETY: this program is single-threaded here (a workload's main, started by the CLI
    // before any thread); the child only makes system calls and exits with _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        eprintln!("switch-floor: fork: {}", std::io::Error::last_os_error());
        return 1;
    }
    if pid == 0 {
        // SAFETY: closing the ends this process does not use, then exiting without running
        // the parent's destructors or flushing its buffers.
        unsafe {
            libc::close(to_child[1]);
            libc::close(to_parent[0]);
        }
        if realtime_here(cpu, priority).is_ok() {
            while read_byte(to_child[0]) && write_byte(to_parent[1]) {}
        }
        demote_here();
        // SAFETY: see above.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the ends the parent does not use.
    unsafe {
        libc::close(to_child[0]);
        libc::close(to_parent[1]);
    }
    let mut samples = Vec::with_capacity(rounds as usize);
    let outcome =
        realtime_here(cpu, priority).map_err(|e| format!("cannot run at SCHED_FIFO {priority} on CPU {cpu}: {e}")).and_then(|()| {
            for i in 0..WARM_UP + rounds {
                let t0 = crate::module_run::monotonic_ns();
                if !(write_byte(to_child[1]) && read_byte(to_parent[0])) {
                    return Err("the other process is gone".to_string());
                }
                if i >= WARM_UP {
                    samples.push((crate::module_run::monotonic_ns() - t0) as f64 / 2.0);
                }
            }
            Ok(())
        });
    demote_here();
    // SAFETY: closing the parent's write end ends the child's loop; waitpid on our own child.
    unsafe {
        libc::close(to_child[1]);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
    if let Err(e) = outcome {
        eprintln!("switch-floor: {e}");
        return 1;
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for v in samples {
        let _ = writeln!(w, "sample switch_floor_ns {v}");
    }
    let _ = w.flush();
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_is_of_the_medians() {
        assert_eq!(ratio_of_medians(&[30.0, 10.0, 20.0], &[4.0, 5.0, 6.0]), 4.0);
        assert!(ratio_of_medians(&[1.0], &[]).is_nan());
        assert!(ratio_of_medians(&[], &[1.0]).is_nan());
        assert!(ratio_of_medians(&[1.0], &[0.0]).is_nan());
    }
}
