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
use crate::backend::process::sched_broker::BrokerDoors;
use crate::backend::process::{CoreCgroup, PartitionCgroup};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::{Arc, Mutex};

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

/// One core of a multi-core partition: its threaded cgroup, and the share of the partition's
/// [`SharedGate`] that this core's windows decide.
pub struct CoreGate {
    cgroup: CoreCgroup,
    shared: Option<(Arc<SharedGate>, u64)>,
    /// The partition's door at the scheduling broker of this core's CPU, and its index.
    door: Option<(Arc<BrokerDoors>, usize)>,
}

impl PartitionGate for CoreGate {
    fn request_stop(&self) -> io::Result<()> {
        if let Some((doors, k)) = &self.door {
            doors.close(*k);
        }
        if let Some((shared, bit)) = &self.shared {
            shared.close(*bit)?;
        }
        self.cgroup.request_freeze()
    }

    fn is_stopped(&self) -> io::Result<bool> {
        Ok(self.cgroup.is_frozen()? && self.shared.as_ref().map_or(Ok(true), |(s, _)| s.is_stopped())?)
    }

    fn release(&self) -> io::Result<()> {
        self.cgroup.thaw()?;
        if let Some((shared, bit)) = &self.shared {
            shared.open(*bit)?;
        }
        if let Some((doors, k)) = &self.door {
            doors.open(*k);
        }
        Ok(())
    }

    fn mechanism(&self) -> &'static str {
        "cgroup-freeze"
    }

    fn hold(&self) -> io::Result<usize> {
        let shared = match &self.shared {
            Some((s, _)) => s.cgroup.signal_threads(libc::SIGSTOP)?,
            None => 0,
        };
        Ok(self.cgroup.signal_threads(libc::SIGSTOP)? + shared)
    }

    fn unhold(&self) -> io::Result<()> {
        if let Some((s, _)) = &self.shared {
            s.cgroup.signal_threads(libc::SIGCONT)?;
        }
        self.cgroup.signal_threads(libc::SIGCONT).map(drop)
    }
}

/// The cgroup of the processes without a core preference of a multi-core partition whose
/// windows are the same on all its cores: its threads may run on any of the partition's CPUs,
/// so it is open only while every one of the partition's cores is (the first core to close
/// freezes it, the last to open thaws it). One lock orders the cores' opens and closes.
pub struct SharedGate {
    cgroup: CoreCgroup,
    /// Bits of the partition's cores that are open, and whether the cgroup is thawed.
    state: Mutex<(u64, bool)>,
    all: u64,
}

impl SharedGate {
    fn open(&self, bit: u64) -> io::Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.0 |= bit;
        if st.0 == self.all && !st.1 {
            self.cgroup.thaw()?;
            st.1 = true;
        }
        Ok(())
    }

    fn close(&self, bit: u64) -> io::Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.0 &= !bit;
        if st.1 {
            st.1 = false;
            self.cgroup.request_freeze()?;
        }
        Ok(())
    }

    fn is_stopped(&self) -> io::Result<bool> {
        self.cgroup.is_frozen()
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
    /// The cgroup of processes without a core preference (windows the same on every core).
    shared: Option<Arc<SharedGate>>,
    /// Per partition core, then for the shared cgroup: `cgroup.threads` and the v1 cpuset's
    /// `tasks` (if any).
    files: Vec<(File, Option<File>)>,
    staging_file: File,
    doors: Option<Arc<BrokerDoors>>,
}

impl CoreGates {
    /// Creates the per-core cgroups of `cgroup` for `cores` (module core, host CPU), all
    /// frozen: each opens with that core's first window. `in_step`: the partition's windows are
    /// the same on all its cores, so its processes without a core preference get a cgroup of
    /// their own on all its CPUs ([`SharedGate`]). `doors`: the partition's doors at the
    /// scheduling brokers of its CPUs (in the order of `cores`), opened and closed with them.
    pub fn new(
        cgroup: &PartitionCgroup,
        module_cores: usize,
        cores: &[(usize, u32)],
        in_step: bool,
        doors: Option<Arc<BrokerDoors>>,
    ) -> crate::backend::process::Result<CoreGates> {
        let staging = cgroup.staging()?;
        let staging_file = staging.placement_files()?.0;
        let shared = if in_step && cores.len() > 1 && cores.len() <= 64 {
            let cpus: Vec<u32> = cores.iter().map(|c| c.1).collect();
            let all = if cores.len() == 64 { u64::MAX } else { (1u64 << cores.len()) - 1 };
            Some(Arc::new(SharedGate { cgroup: cgroup.shared(&cpus)?, state: Mutex::new((0, false)), all }))
        } else {
            None
        };
        let mut gates: Vec<Option<CoreGate>> = (0..module_cores).map(|_| None).collect();
        let mut files = Vec::new();
        for (k, &(core, cpu)) in cores.iter().enumerate() {
            let cg = cgroup.core(core, Some(cpu))?;
            cg.request_freeze().map_err(|e| crate::backend::process::Error::io(format!("freezing core {core} of {}", cgroup.name), e))?;
            files.push(cg.placement_files()?);
            gates[core] = Some(CoreGate {
                cgroup: cg,
                shared: shared.as_ref().map(|s| (s.clone(), 1u64 << k)),
                door: doors.as_ref().map(|d| (d.clone(), k)),
            });
        }
        if let Some(s) = &shared {
            files.push(s.cgroup.placement_files()?);
        }
        Ok(CoreGates { cores: gates, order: cores.iter().map(|c| c.0).collect(), staging, shared, files, staging_file, doors })
    }

    /// The partition's doors at the scheduling brokers (each program's listener goes behind them).
    pub fn broker_doors(&self) -> Option<&Arc<BrokerDoors>> {
        self.doors.as_ref()
    }

    /// The cgroup of the partition's first core, where its main thread starts.
    pub fn first(&self) -> Option<&CoreCgroup> {
        self.order.first().and_then(|&c| self.cores[c].as_ref()).map(|g| &g.cgroup)
    }

    /// The descriptors the runtime places its threads with, in the order of
    /// `partita_abi::ENV_THREAD_PLACEMENT`: staging, then per partition core its
    /// `cgroup.threads` and its cpuset `tasks` (None without v1 cpusets), then the same pair
    /// of the shared cgroup when there is one.
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
        let shared = self.shared.as_ref().map(|s| &s.cgroup);
        for g in self.cores.iter().flatten().map(|g| &g.cgroup).chain(Some(&self.staging)).chain(shared) {
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
