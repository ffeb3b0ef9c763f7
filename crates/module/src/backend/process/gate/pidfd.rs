//! A stop/release of one partition process with signals: `SIGSTOP` through the pidfd, then
//! `waitid(WSTOPPED)` until the whole thread group has stopped (the kernel wakes the waiter
//! directly, about 2.4 us), and `SIGCONT` to release. Measured against the freezer in
//! docs/scheduling.md (examples/switch_mechanisms.rs) and kept for those measurements and the
//! tests; the gates `partita run` uses are the freezer's (the default) and the process-group
//! signal gate (signal.rs), which also reaches the processes a partition forks.

use crate::backend::process::cgroup::PartitionCgroup;
use crate::backend::process::spawn::PartitionProcess;
use crate::backend::process::{Error, Result, sys};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

/// What [`SignalGate::stop`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Every thread of the partition is stopped.
    Stopped,
    /// The partition has exited (not reaped: its owner reaps it through its own handle).
    Exited,
}

/// Stops and releases one partition process with signals. Owns a duplicate of the pidfd, so
/// a scheduler thread can hold it while the lifecycle thread keeps the [`PartitionProcess`].
#[derive(Debug)]
pub struct SignalGate {
    pidfd: OwnedFd,
}

impl SignalGate {
    pub fn new(process: &PartitionProcess) -> io::Result<SignalGate> {
        Ok(SignalGate { pidfd: process.pidfd().try_clone_to_owned()? })
    }

    /// Sends SIGSTOP and returns once the partition is completely stopped (or has exited).
    /// Must be called from the module process (the partition's parent). Blocks while a
    /// thread of the partition is in an uninterruptible sleep: it runs no user code then.
    pub fn stop(&self) -> io::Result<Stopped> {
        self.request_stop()?;
        self.wait_stopped()
    }

    /// Sends SIGSTOP without waiting. From then on the partition executes no user
    /// instruction on a CPU where it is not running at this moment.
    pub fn request_stop(&self) -> io::Result<()> {
        send(&self.pidfd, libc::SIGSTOP)
    }

    /// Waits for a requested stop (`waitid(WSTOPPED | WEXITED | WNOWAIT)`: an exit is
    /// reported too, and left for the owner to reap).
    pub fn wait_stopped(&self) -> io::Result<Stopped> {
        let info = sys::waitid_pidfd(self.pidfd.as_fd(), libc::WSTOPPED | libc::WEXITED | libc::WNOWAIT)?;
        Ok(match info {
            Some(i) if i.si_code == libc::CLD_STOPPED => Stopped::Stopped,
            _ => Stopped::Exited,
        })
    }

    /// Whether the partition is stopped right now (non-blocking).
    pub fn is_stopped(&self) -> io::Result<bool> {
        let info = sys::waitid_pidfd(self.pidfd.as_fd(), libc::WSTOPPED | libc::WNOHANG | libc::WNOWAIT)?;
        Ok(info.is_some_and(|i| i.si_code == libc::CLD_STOPPED))
    }

    /// Sends SIGCONT: the partition runs again (unless its cgroup is frozen).
    pub fn release(&self) -> io::Result<()> {
        send(&self.pidfd, libc::SIGCONT)
    }

    /// A short name of the mechanism, for the trace header and the summary.
    pub fn mechanism(&self) -> &'static str {
        "sigstop+waitid/sigcont"
    }
}

fn send(pidfd: &OwnedFd, sig: i32) -> io::Result<()> {
    match sys::pidfd_send_signal(pidfd.as_fd(), sig) {
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        r => r,
    }
}

/// Turns a [`crate::backend::process::StartState::Frozen`] start into a stopped one for signal gating: the
/// program is stopped (SIGSTOP, delivered as it leaves the freezer) before its `execve`, and
/// the cgroup is thawed. A later [`SignalGate::release`] starts the program.
pub fn frozen_to_stopped(gate: &SignalGate, cgroup: &PartitionCgroup) -> Result<()> {
    gate.request_stop().map_err(|e| Error::io("stopping a frozen partition", e))?;
    cgroup.thaw().map_err(|e| Error::io(format!("thawing partition {}", cgroup.name), e))?;
    match gate.wait_stopped().map_err(|e| Error::io("waiting for the partition to stop", e))? {
        Stopped::Stopped => Ok(()),
        Stopped::Exited => Err(Error::Timeout { what: format!("partition {} exited before its first window", cgroup.name) }),
    }
}

/// [`SignalGate::stop`] with an upper bound: polls every 10 us after the signal (a waiter
/// on the partition's own CPU must sleep so the partition can reach its stop point).
pub fn stop_with_timeout(gate: &SignalGate, timeout: Duration) -> io::Result<Stopped> {
    gate.request_stop()?;
    let deadline = crate::backend::rt::now_ns() + timeout.as_nanos().min(i64::MAX as u128) as i64;
    loop {
        let info = sys::waitid_pidfd(gate.pidfd.as_fd(), libc::WSTOPPED | libc::WEXITED | libc::WNOHANG | libc::WNOWAIT)?;
        match info {
            Some(i) if i.si_code == libc::CLD_STOPPED => return Ok(Stopped::Stopped),
            Some(_) => return Ok(Stopped::Exited),
            None if crate::backend::rt::now_ns() >= deadline => {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "partition did not stop"));
            }
            None => crate::backend::rt::sleep_for_ns(10_000),
        }
    }
}
