//! Linux real-time throttling during a run.
//!
//! With `kernel.sched_rt_runtime_us` below its period (Debian's default: 950000 of 1000000),
//! once real-time threads have used that much of a CPU in a second, the kernel stops every
//! real-time thread on it for the rest of the second: partitions that keep a module CPU busy
//! lose 50 ms each second, and the module's own scheduler thread with them, so windows start
//! up to 50 ms late. Measured here: with throttling, three busy partitions in 1 ms windows saw
//! 96 of 3600 windows start more than 1 ms late (worst 48.9 ms); without it, none (worst
//! 0.1 ms). Linux ≥ 6.12 keeps ordinary tasks alive on a busy CPU with its fair deadline
//! server instead, so lifting the throttle for a run does not starve them.
//!
//! [`RtThrottle::lift`] sets the runtime to -1 (unlimited) and restores the value it found
//! when the last concurrent `partita run` ends: the original value is kept in [`STATE_FILE`]
//! by the first run, and each run holds a shared lock on it while it runs.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

const SYSCTL: &str = "/proc/sys/kernel/sched_rt_runtime_us";
const PERIOD: &str = "/proc/sys/kernel/sched_rt_period_us";
/// Holds the runtime found before the first concurrent run lifted it.
pub const STATE_FILE: &str = "/run/partita-rt-runtime";

/// The throttling settings as found: runtime (-1 = unlimited) and period, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttling {
    pub runtime_us: i64,
    pub period_us: i64,
}

impl Throttling {
    pub fn read() -> io::Result<Throttling> {
        Ok(Throttling { runtime_us: read_number(Path::new(SYSCTL))?, period_us: read_number(Path::new(PERIOD))? })
    }

    /// True when real-time threads can be stopped for part of each period.
    pub fn active(&self) -> bool {
        self.runtime_us >= 0 && self.runtime_us < self.period_us
    }

    /// How long a busy CPU's real-time threads are stopped each period (ms).
    pub fn stalled_ms(&self) -> i64 {
        (self.period_us - self.runtime_us) / 1000
    }

    /// What a busy CPU loses, for messages: "50 ms of every 1000 ms".
    pub fn describe(&self) -> String {
        format!("{} ms of every {} ms", self.stalled_ms(), self.period_us / 1000)
    }
}

fn read_number(path: &Path) -> io::Result<i64> {
    let text = std::fs::read_to_string(path)?;
    text.trim().parse().map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("{}: not a number: {text:?}", path.display())))
}

/// Throttling lifted for the lifetime of this value.
#[derive(Debug)]
pub struct RtThrottle {
    state: File,
    /// The value found before the first concurrent run lifted it.
    pub found: Throttling,
}

fn flock(file: &File, op: libc::c_int) -> io::Result<()> {
    // SAFETY: flock on a file descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), op) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl RtThrottle {
    /// Lifts throttling (runtime -1). Ok(None) when it is not active.
    pub fn lift() -> io::Result<Option<RtThrottle>> {
        Self::lift_at(Path::new(STATE_FILE))
    }

    fn lift_at(state_path: &Path) -> io::Result<Option<RtThrottle>> {
        let mut state = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(state_path)?;
        flock(&state, libc::LOCK_EX)?;
        let mut saved = String::new();
        state.read_to_string(&mut saved)?;
        let now = Throttling::read()?;
        let found = match saved.trim().parse::<i64>() {
            // Another run lifted it and still runs (or one ended without restoring it).
            Ok(runtime_us) if now.runtime_us == -1 => Throttling { runtime_us, ..now },
            _ if !now.active() => return Ok(None),
            _ => {
                state.set_len(0)?;
                state.rewind()?;
                write!(state, "{}", now.runtime_us)?;
                state.sync_data()?;
                std::fs::write(SYSCTL, "-1")?;
                now
            }
        };
        flock(&state, libc::LOCK_SH)?;
        Ok(Some(RtThrottle { state, found }))
    }
}

impl Drop for RtThrottle {
    /// Restores the value found, unless another run still holds its shared lock.
    fn drop(&mut self) {
        // Two runs ending together would each see the other's lock: let go, look once more.
        if flock(&self.state, libc::LOCK_EX | libc::LOCK_NB).is_err() {
            let _ = flock(&self.state, libc::LOCK_UN);
            std::thread::sleep(std::time::Duration::from_millis(20));
            if flock(&self.state, libc::LOCK_EX | libc::LOCK_NB).is_err() {
                return;
            }
        }
        if let Err(e) = std::fs::write(SYSCTL, self.found.runtime_us.to_string()) {
            eprintln!("partita: warning: cannot restore {SYSCTL} to {}: {e}", self.found.runtime_us);
            return;
        }
        let _ = self.state.set_len(0);
    }
}

/// After a run was killed (its guardian calls this): restores the value found by the first
/// run if no other run holds the state file and throttling is still lifted. Returns the
/// restored runtime.
pub fn restore_after_killed_run() -> io::Result<Option<i64>> {
    let mut state = match std::fs::OpenOptions::new().read(true).write(true).open(STATE_FILE) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if flock(&state, libc::LOCK_EX | libc::LOCK_NB).is_err() {
        return Ok(None); // another run is still running
    }
    let mut saved = String::new();
    state.read_to_string(&mut saved)?;
    let Ok(runtime_us) = saved.trim().parse::<i64>() else { return Ok(None) };
    if Throttling::read()?.runtime_us != -1 {
        return Ok(None);
    }
    std::fs::write(SYSCTL, runtime_us.to_string())?;
    state.set_len(0)?;
    Ok(Some(runtime_us))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_is_active_only_below_its_period() {
        let t = |runtime_us| Throttling { runtime_us, period_us: 1_000_000 };
        assert!(t(950_000).active());
        assert!(!t(-1).active());
        assert!(!t(1_000_000).active());
        assert_eq!(t(950_000).describe(), "50 ms of every 1000 ms");
    }
}
