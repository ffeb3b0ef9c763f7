//! Before a run creates anything: its CPUs are its own, and free of a stuck real-time task.
//!
//! Two modules on the same CPU take each other's windows (both schedulers run at the top
//! priority), so a run holds an exclusive `flock` on `/run/partita/cpuN.lock` for each CPU
//! it uses, with its pid inside for the message of the run it refuses. A lock dies with its
//! process: a killed run never blocks the next one.
//!
//! A CPU can also be taken by a task that is not a partita run: a busy real-time thread at or
//! above the partitions' ceiling would hold the CPU as soon as the module's schedulers leave
//! it (and the partitions would never run). A probe thread per CPU sets SCHED_FIFO
//! [`PROBE_PRIORITY`], pins itself there and records that it ran: if it does not within
//! [`PROBE_TIMEOUT`], the run is refused (and the probe is demoted to the normal policy,
//! where it ends whenever it gets the CPU).

use super::process::sched_broker::PARTITION_RT_CEILING;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Where the per-CPU locks live.
pub const LOCK_DIR: &str = "/run/partita";
/// The probe runs at the partitions' ceiling: a task it cannot preempt there would also hold
/// off every partition thread.
pub const PROBE_PRIORITY: i32 = PARTITION_RT_CEILING;
/// How long a probe may take to run on its CPU.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(200);

/// The locks of a run's CPUs (released when dropped or when the process dies).
#[derive(Debug)]
pub struct CpuLocks {
    _files: Vec<File>,
}

/// Why [`lock_cpus`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// Another run holds a CPU (the message names it and the holder's pid).
    Held(String),
    /// The locks cannot be used here (e.g. no write access to the lock directory).
    Unavailable(String),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Held(m) | LockError::Unavailable(m) => f.write_str(m),
        }
    }
}

/// Takes the lock of every CPU in `cpus` (in `dir`, normally [`LOCK_DIR`]), or says which CPU
/// another run holds and its pid.
pub fn lock_cpus(dir: &Path, cpus: &[u32]) -> Result<CpuLocks, LockError> {
    use LockError::Unavailable;
    std::fs::create_dir_all(dir).map_err(|e| Unavailable(format!("cannot create {}: {e}", dir.display())))?;
    let mut files = Vec::new();
    for &cpu in cpus {
        let path = lock_path(dir, cpu);
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| Unavailable(format!("cannot open {}: {e}", path.display())))?;
        match f.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = f.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() { "another process".to_string() } else { format!("process {holder}") };
                return Err(LockError::Held(format!(
                    "CPU {cpu} is in use by another partita run ({who} holds {}); two modules on one CPU would take each other's windows",
                    path.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Unavailable(format!("cannot lock {}: {e}", path.display()))),
        }
        let write = |f: &mut File| -> io::Result<()> {
            f.set_len(0)?;
            f.rewind()?;
            f.write_all(format!("{}\n", std::process::id()).as_bytes())
        };
        write(&mut f).map_err(|e| Unavailable(format!("cannot write {}: {e}", path.display())))?;
        files.push(f);
    }
    Ok(CpuLocks { _files: files })
}

pub fn lock_path(dir: &Path, cpu: u32) -> PathBuf {
    dir.join(format!("cpu{cpu}.lock"))
}

/// Checks that a SCHED_FIFO [`PROBE_PRIORITY`] thread runs on each of `cpus` within
/// [`PROBE_TIMEOUT`]; names the CPUs where it did not. Needs the right to SCHED_FIFO (the
/// caller skips it otherwise).
pub fn probe_cpus(cpus: &[u32]) -> Result<(), String> {
    let probes: Vec<(u32, Arc<AtomicBool>, Arc<AtomicI32>)> = cpus
        .iter()
        .map(|&cpu| {
            let (ran, tid) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicI32::new(0)));
            let (r, t) = (ran.clone(), tid.clone());
            // Detached: a probe that never ran ends once demoted and given the CPU.
            let _ = std::thread::Builder::new().name(format!("partita-probe{cpu}")).spawn(move || {
                // SAFETY: gettid has no preconditions.
                t.store(unsafe { libc::gettid() }, Ordering::Release);
                // Real-time first, then onto the CPU: there it queues behind any task at or
                // above PROBE_PRIORITY.
                if super::rt::set_current_fifo(PROBE_PRIORITY).is_ok() && super::rt::pin_current_thread(cpu as usize).is_ok() {
                    r.store(true, Ordering::Release);
                }
                let _ = super::rt::set_current_normal();
            });
            (cpu, ran, tid)
        })
        .collect();
    let deadline = Instant::now() + PROBE_TIMEOUT;
    while Instant::now() < deadline && !probes.iter().all(|(_, ran, _)| ran.load(Ordering::Acquire)) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut stuck = Vec::new();
    for (cpu, ran, tid) in &probes {
        if !ran.load(Ordering::Acquire) {
            let t = tid.load(Ordering::Acquire);
            if t > 0 {
                super::rt::demote_threads([t]);
            }
            stuck.push(cpu.to_string());
        }
    }
    if stuck.is_empty() {
        return Ok(());
    }
    Err(format!(
        "CPU {} is held by another real-time task: a SCHED_FIFO {PROBE_PRIORITY} probe thread did not run there within {} ms (look for it with `ps -eLo pid,tid,cls,rtprio,psr,comm`); no module runs on a CPU it cannot have",
        stuck.join(", CPU "),
        PROBE_TIMEOUT.as_millis()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// Partitions must not inherit a lock (std opens files close-on-exec).
    fn is_close_on_exec(f: &File) -> bool {
        // SAFETY: F_GETFD on an open descriptor.
        unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFD) & libc::FD_CLOEXEC != 0 }
    }

    #[test]
    fn a_held_cpu_is_refused_naming_it_and_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock_cpus(dir.path(), &[0, 3]).unwrap();
        assert!(first._files.iter().all(is_close_on_exec));
        let content = std::fs::read_to_string(lock_path(dir.path(), 3)).unwrap();
        assert_eq!(content.trim(), std::process::id().to_string());
        let LockError::Held(e) = lock_cpus(dir.path(), &[5, 3]).unwrap_err() else { panic!("not refused as held") };
        assert!(e.contains("CPU 3 ") && e.contains(&format!("process {}", std::process::id())), "{e}");
        drop(first);
        lock_cpus(dir.path(), &[3]).expect("free again once the first run let go");
    }
}
