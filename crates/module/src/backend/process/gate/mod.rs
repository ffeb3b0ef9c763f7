//! The process backend's gates: how its partitions are stopped and released at window
//! boundaries ([`PartitionGate`]; measurements in docs/scheduling.md). The one home of them:
//!
//! - [`CgroupGate`] (the default): writing `1` to the partition's `cgroup.freeze` marks every
//!   task of the partition at once to trap into the freezer before it returns to user mode,
//!   sleeping ones included; `frozen 1` confirms the stop before the core's next boundary.
//! - [`CoreGates`]: the same per core for a multi-core partition, through its threaded
//!   per-core cgroups (cgroup_cores.rs); its threads are placed by core.
//! - [`signal::SignalGroupGate`] (`PARTITA_GATE=signal`): a whole partition stopped and
//!   released with signals, without any cgroup write.
//! - [`pidfd::SignalGate`]: SIGSTOP through a pidfd and `waitid` for one process, the
//!   primitive the mechanisms were first measured with (examples/switch_mechanisms.rs); no
//!   run uses it as its gate.

use crate::backend::interface::PartitionGate;
use crate::backend::process::{CoreCgroup, PartitionCgroup};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;

pub mod pidfd;
pub mod signal;

pub struct CgroupGate {
    pub cgroup: Arc<PartitionCgroup>,
}

impl PartitionGate for CgroupGate {
    fn request_stop(&self) -> io::Result<()> {
        self.cgroup.request_freeze()
    }

    fn is_stopped(&self) -> io::Result<bool> {
        self.cgroup.is_frozen()
    }

    fn release(&self) -> io::Result<()> {
        self.cgroup.thaw()
    }

    fn mechanism(&self) -> &'static str {
        "cgroup-freeze"
    }

    fn hold(&self) -> io::Result<usize> {
        self.cgroup.signal_threads(libc::SIGSTOP)
    }

    fn unhold(&self) -> io::Result<()> {
        self.cgroup.signal_threads(libc::SIGCONT).map(drop)
    }

    fn kill_threads(&self) -> io::Result<usize> {
        self.cgroup.kill_threads()
    }
}

/// One core of a multi-core partition: its threaded cgroup.
pub struct CoreGate(CoreCgroup);

impl PartitionGate for CoreGate {
    fn request_stop(&self) -> io::Result<()> {
        self.0.request_freeze()
    }

    fn is_stopped(&self) -> io::Result<bool> {
        self.0.is_frozen()
    }

    fn release(&self) -> io::Result<()> {
        self.0.thaw()
    }

    fn mechanism(&self) -> &'static str {
        "cgroup-freeze"
    }

    fn hold(&self) -> io::Result<usize> {
        self.0.signal_threads(libc::SIGSTOP)
    }

    fn unhold(&self) -> io::Result<()> {
        self.0.signal_threads(libc::SIGCONT).map(drop)
    }
}

/// A multi-core partition gated per core: one [`CoreGate`] per module core it runs on, the
/// frozen staging cgroup, and the descriptors its runtime places its threads with.
pub struct CoreGates {
    /// Indexed by module core.
    cores: Vec<Option<CoreGate>>,
    /// Partition cores in the order of the control block (`module_cores`).
    order: Vec<usize>,
    staging: CoreCgroup,
    /// Per partition core: `cgroup.threads` and the v1 cpuset's `tasks` (if any).
    files: Vec<(File, Option<File>)>,
    staging_file: File,
}

impl CoreGates {
    /// Creates the per-core cgroups of `cgroup` for `cores` (module core, host CPU), all
    /// frozen: each opens with that core's first window.
    pub fn new(cgroup: &PartitionCgroup, module_cores: usize, cores: &[(usize, u32)]) -> crate::backend::process::Result<CoreGates> {
        let staging = cgroup.staging()?;
        let staging_file = staging.placement_files()?.0;
        let mut gates: Vec<Option<CoreGate>> = (0..module_cores).map(|_| None).collect();
        let mut files = Vec::new();
        for &(core, cpu) in cores {
            let cg = cgroup.core(core, Some(cpu))?;
            cg.request_freeze().map_err(|e| crate::backend::process::Error::io(format!("freezing core {core} of {}", cgroup.name), e))?;
            files.push(cg.placement_files()?);
            gates[core] = Some(CoreGate(cg));
        }
        Ok(CoreGates { cores: gates, order: cores.iter().map(|c| c.0).collect(), staging, files, staging_file })
    }

    /// The cgroup of the partition's first core, where its main thread starts.
    pub fn first(&self) -> Option<&CoreCgroup> {
        self.order.first().and_then(|&c| self.cores[c].as_ref()).map(|g| &g.0)
    }

    /// The descriptors the runtime places its threads with, in the order of
    /// `partita_abi::ENV_THREAD_PLACEMENT`: staging, then per partition core its
    /// `cgroup.threads` and its cpuset `tasks` (None without v1 cpusets).
    pub fn placement_fds(&self) -> Vec<Option<BorrowedFd<'_>>> {
        let mut out = vec![Some(self.staging_file.as_fd())];
        for (threads, tasks) in &self.files {
            out.push(Some(threads.as_fd()));
            out.push(tasks.as_ref().map(|t| t.as_fd()));
        }
        out
    }

    fn each(&self, f: impl Fn(&CoreGate) -> io::Result<()>) -> io::Result<()> {
        self.cores.iter().flatten().try_for_each(f)
    }
}

impl PartitionGate for CoreGates {
    fn request_stop(&self) -> io::Result<()> {
        self.each(|g| g.request_stop())
    }

    fn is_stopped(&self) -> io::Result<bool> {
        for g in self.cores.iter().flatten() {
            if !g.is_stopped()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn release(&self) -> io::Result<()> {
        self.each(|g| g.release())
    }

    fn mechanism(&self) -> &'static str {
        "cgroup-freeze"
    }

    fn core(&self, core: usize) -> Option<&dyn PartitionGate> {
        self.cores.get(core)?.as_ref().map(|g| g as &dyn PartitionGate)
    }

    fn kill_threads(&self) -> io::Result<usize> {
        let mut n = 0;
        for g in self.cores.iter().flatten().map(|g| &g.0).chain(Some(&self.staging)) {
            n += g.kill_threads()?;
        }
        Ok(n)
    }
}

impl Drop for CoreGates {
    fn drop(&mut self) {
        // The staging cgroup is removed with the partition's; nothing may stay frozen there.
        let _ = self.staging.thaw();
    }
}
