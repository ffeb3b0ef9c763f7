//! What the process backend can do on this machine: the capability probe `partita run`,
//! `partita check` and the tests consult before relying on a privilege.

use super::cgroup::{CgroupLayout, CgroupSystem, FreezerKind, MemoryLimitKind, RunCgroups};
use super::rt::{SCHEDULER_PRIORITY, set_current_fifo};
use super::{Error, Result};
use std::fmt;
use std::io;

/// What the process backend can do on this machine, with one message per missing piece.
#[derive(Debug, Clone)]
pub struct Capabilities {
    pub cgroup_layout: Option<CgroupLayout>,
    pub freezer: FreezerKind,
    pub memory_limit: MemoryLimitKind,
    pub cgroup_kill: bool,
    /// New PID, IPC and mount namespaces can be created.
    pub namespaces: bool,
    /// `SCHED_FIFO` at priority 99 is allowed.
    pub sched_fifo: bool,
    /// `mlockall` is allowed without limit (CAP_IPC_LOCK or unlimited RLIMIT_MEMLOCK).
    pub mlock: bool,
    /// One line per missing capability: what, why, and what degrades.
    pub missing: Vec<String>,
}

impl Capabilities {
    pub fn complete(&self) -> bool {
        self.missing.is_empty()
    }

    /// With `CI=true`, an error naming everything missing; otherwise `Ok`.
    pub fn require_if_strict(&self) -> Result<()> {
        if super::strict() && !self.complete() {
            return Err(Error::MissingCapability { what: self.missing.join("; "), source: io::Error::from_raw_os_error(libc::EPERM) });
        }
        Ok(())
    }
}

impl fmt::Display for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "cgroups: {:?}, freezer {:?}, memory limit {:?}, cgroup.kill {}",
            self.cgroup_layout, self.freezer, self.memory_limit, self.cgroup_kill
        )?;
        writeln!(f, "namespaces {}, SCHED_FIFO {}, mlockall {}", self.namespaces, self.sched_fifo, self.mlock)?;
        for m in &self.missing {
            writeln!(f, "missing: {m}")?;
        }
        Ok(())
    }
}

/// Probes everything the backend needs, without side effects that outlive the call (a
/// probe run cgroup is created and removed; a namespaced child is started and reaped).
pub fn probe_capabilities() -> Capabilities {
    let mut caps = Capabilities {
        cgroup_layout: None,
        freezer: FreezerKind::None,
        memory_limit: MemoryLimitKind::None,
        cgroup_kill: false,
        namespaces: false,
        sched_fifo: false,
        mlock: false,
        missing: Vec::new(),
    };
    match CgroupSystem::detect().and_then(|s| Ok((s.layout, RunCgroups::create_with(&s, false)?))) {
        Ok((layout, run)) => {
            caps.cgroup_layout = Some(layout);
            caps.freezer = run.freezer;
            caps.memory_limit = run.memory;
            caps.cgroup_kill = run.cgroup_kill;
            caps.missing.extend(run.warnings.iter().cloned());
        }
        Err(e) => caps.missing.push(format!("cgroups: {e}; partitions cannot be frozen or memory-limited")),
    }
    match super::spawn::probe_namespaces() {
        Ok(()) => caps.namespaces = true,
        Err(e) => caps.missing.push(format!(
            "namespaces: clone(CLONE_NEWPID|CLONE_NEWNS|CLONE_NEWIPC) refused: {e} (needs CAP_SYS_ADMIN); partitions would see other processes"
        )),
    }
    let fifo = std::thread::spawn(|| set_current_fifo(SCHEDULER_PRIORITY))
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("probe thread panicked")));
    match fifo {
        Ok(()) => caps.sched_fifo = true,
        Err(e) => caps.missing.push(format!(
            "SCHED_FIFO {SCHEDULER_PRIORITY}: {e} (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= {SCHEDULER_PRIORITY}); window boundaries will be late under load"
        )),
    }
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: valid resource and a valid rlimit to fill.
    unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) };
    caps.mlock = has_capability(14) || lim.rlim_cur == libc::RLIM_INFINITY;
    if !caps.mlock {
        caps.missing
            .push(format!("mlockall: no CAP_IPC_LOCK and RLIMIT_MEMLOCK is {} bytes; page faults may delay the schedulers", lim.rlim_cur));
    }
    caps
}

/// Whether the effective capability set has capability number `bit` (e.g. 14 = CAP_IPC_LOCK).
fn has_capability(bit: u32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << bit) != 0)
}
