//! The guardian of a run: a small process that outlives a killed module and cleans up after it.
//!
//! A module killed by SIGKILL cannot stop its partitions. Its partition programs get SIGSTOP
//! when it dies (`PR_SET_PDEATHSIG`), not SIGKILL: a thread killed at a real-time priority can
//! hold its CPU for ever in the kernel's exit path ([`super::rt::demote_threads`]). The
//! guardian, started by `partita run` before any partition (`partita __partita-guardian PID`,
//! at the normal policy), waits for the module's death on a pidfd, then removes the run's
//! cgroups (`partita-PID` and `partita-PID-N`, with the module's own clean-up: every thread
//! demoted to SCHED_OTHER, then killed) and restores real-time throttling if the run had
//! lifted it and no other run holds it. When the module ends normally there is nothing left
//! to remove and the guardian just exits.

use super::process::cgroup::{CgroupSystem, remove_run};
use std::io;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};

/// Waits for process `module` (the guardian's parent) to end, then cleans up after it.
/// Returns what it removed, for its message.
pub fn guard(module: i32) -> io::Result<Vec<String>> {
    // SAFETY: setting dispositions to SIG_IGN; a terminal's Ctrl-C or a SIGTERM meant for the
    // module must not end its guardian (setsid also leaves the terminal's process group).
    unsafe {
        libc::setsid();
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
    // SAFETY: pidfd_open with a pid and no flags; the result is checked and owned.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, module, 0) };
    if fd >= 0 {
        // SAFETY: a fresh descriptor we own.
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        // The pid is still our parent's: the pidfd is the module's (not a reused pid).
        // SAFETY: getppid has no preconditions.
        if unsafe { libc::getppid() } == module {
            while !super::sys::poll_one(pidfd.as_fd(), libc::POLLIN, -1)? {}
        }
    }
    let mut done = Vec::new();
    if let Ok(system) = CgroupSystem::detect() {
        done.extend(remove_run(&system, module));
    }
    done.extend(super::process::confine::remove_data_of(module));
    done.extend(super::pm_qos::restore_left_by(module));
    if let Ok(Some(runtime)) = super::rt_throttle::restore_after_killed_run() {
        done.push(format!("kernel.sched_rt_runtime_us restored to {runtime}"));
    }
    Ok(done)
}
