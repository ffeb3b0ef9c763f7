//! Keeping partitions on their CPUs (cpuset) and stopping a multi-core partition on one core
//! while it runs on another (threaded per-core cgroups).
//!
//! A multi-core partition's v2 cgroup gets one threaded child `core-<i>` per partition core,
//! holding the threads pinned to that core, and a `staging` child that stays frozen. The
//! scheduler of core `i` freezes and thaws only `core-<i>`. A thread changes core in three
//! steps, none of which lets it run where it must not: into `staging` (frozen: it executes no
//! further instruction), then onto the new core's CPU (v1 cpuset `tasks` or affinity), then
//! into `core-<j>`. The partition does this itself through descriptors the module opened
//! before confining it (cgroupfs is hidden from it; since Linux 5.16 a migration is checked
//! against the credentials of the descriptor's opener).

use super::cgroup::{PartitionCgroup, cpu_list, enable_controller, mkdir, read_pids, write_file};
use super::cgroup_freezer::{FreezeWait, Freezer};
use super::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a run keeps partitions on their CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpusetKind {
    /// v2 `cpuset.cpus` (threaded, so per-core children can have their own CPU).
    V2,
    /// The v1 cpuset hierarchy (hybrid machines): `cpuset.cpus`, per-thread `tasks`.
    V1,
    /// No cpuset: a partition could move its threads to other CPUs.
    None,
}

/// A v1 cpuset must have CPUs and memory nodes before it takes tasks: start from the parent's.
pub(crate) fn inherit_v1_cpuset(dir: &Path, parent: &Path) -> Result<()> {
    no_domain_rebuild(dir);
    for file in ["cpuset.cpus", "cpuset.mems"] {
        let value = fs::read_to_string(parent.join(file)).map_err(|e| Error::io(format!("reading {}", parent.join(file).display()), e))?;
        write_file(&dir.join(file), value.trim())?;
    }
    Ok(())
}

/// A v1 cpuset that balances load makes the kernel rebuild the scheduling domains, under the
/// global cgroup mutex, whenever it changes or goes away; a scheduler's freeze write then waits
/// behind it. The parent (ultimately the root) balances across these CPUs anyway.
fn no_domain_rebuild(dir: &Path) {
    let _ = write_file(&dir.join("cpuset.sched_load_balance"), "0");
}

/// Confines v1 cpuset `dir` (child of `parent`) to `cpus`, with the parent's memory nodes.
pub(crate) fn set_v1_cpuset(dir: &Path, parent: &Path, cpus: &[u32]) -> Result<()> {
    no_domain_rebuild(dir);
    let mems =
        fs::read_to_string(parent.join("cpuset.mems")).map_err(|e| Error::io(format!("reading {}/cpuset.mems", parent.display()), e))?;
    write_file(&dir.join("cpuset.cpus"), &cpu_list(cpus))?;
    write_file(&dir.join("cpuset.mems"), mems.trim())
}

/// A threaded child of a partition cgroup holding the partition's threads of one core (or,
/// for `staging`, threads on their way between cores).
#[derive(Debug)]
pub struct CoreCgroup {
    path: PathBuf,
    /// The v1 cpuset of this core, when the run confines with v1 cpusets.
    v1_cpuset: Option<PathBuf>,
    freezer: Freezer,
}

impl PartitionCgroup {
    /// The threaded child `core-<index>` (v2 only), on host CPU `cpu` if given (and the
    /// partition is confined by a cpuset): freezing it stops only the threads moved in with
    /// [`CoreCgroup::add_thread`].
    pub fn core(&self, index: usize, cpu: Option<u32>) -> Result<CoreCgroup> {
        let mut core = self.threaded_child(&format!("core-{index}"))?;
        let Some(cpu) = cpu else { return Ok(core) };
        match (self.cpuset_kind(), self.v1_cpuset_path()) {
            (CpusetKind::V2, _) => {
                let dir = self.v2_path().expect("a v2 child exists");
                enable_controller(dir, "cpuset")?;
                write_file(&core.path.join("cpuset.cpus"), &cpu.to_string())?;
                Ok(core)
            }
            (CpusetKind::V1, Some(parent)) => {
                let dir = parent.join(format!("core-{index}"));
                mkdir(&dir)?;
                set_v1_cpuset(&dir, parent, &[cpu])?;
                core.v1_cpuset = Some(dir);
                Ok(core)
            }
            _ => Ok(core),
        }
    }

    /// The threaded child `cores-all` on host CPUs `cpus` (with a cpuset), frozen: the threads of
    /// processes without a core preference, free to run on any of the partition's CPUs, in a
    /// partition whose windows are the same on all its cores (`gate::SharedGate` opens it only
    /// while every one of them is open).
    pub fn shared(&self, cpus: &[u32]) -> Result<CoreCgroup> {
        let mut shared = self.threaded_child("cores-all")?;
        shared.freezer.request(true).map_err(|e| Error::io(format!("freezing {}", shared.path.display()), e))?;
        match (self.cpuset_kind(), self.v1_cpuset_path()) {
            (CpusetKind::V2, _) => {
                let dir = self.v2_path().expect("a v2 child exists");
                enable_controller(dir, "cpuset")?;
                write_file(&shared.path.join("cpuset.cpus"), &cpu_list(cpus))?;
            }
            (CpusetKind::V1, Some(parent)) => {
                let dir = parent.join("cores-all");
                mkdir(&dir)?;
                set_v1_cpuset(&dir, parent, cpus)?;
                shared.v1_cpuset = Some(dir);
            }
            _ => {}
        }
        Ok(shared)
    }

    /// The threaded child `staging`, frozen for good: a thread moved in executes no further
    /// instruction until it is moved to a core's cgroup.
    pub fn staging(&self) -> Result<CoreCgroup> {
        let staging = self.threaded_child("staging")?;
        staging.freezer.request(true).map_err(|e| Error::io(format!("freezing {}", staging.path.display()), e))?;
        Ok(staging)
    }

    fn threaded_child(&self, name: &str) -> Result<CoreCgroup> {
        let Some(dir) = self.v2_path() else { return Err(Error::Unsupported("per-core freezing needs the cgroup v2 tree".into())) };
        let path = dir.join(name);
        mkdir(&path)?;
        write_file(&path.join("cgroup.type"), "threaded")?;
        Ok(CoreCgroup { freezer: Freezer::open_v2(&path)?, path, v1_cpuset: None })
    }
}

impl CoreCgroup {
    /// Moves thread `tid` (a thread of the partition's process, as the module sees it) into
    /// this core's group, v1 cpuset first.
    pub fn add_thread(&self, tid: i32) -> Result<()> {
        if let Some(dir) = &self.v1_cpuset {
            write_file(&dir.join("tasks"), &tid.to_string())?;
        }
        write_file(&self.path.join("cgroup.threads"), &tid.to_string())
    }

    pub fn threads(&self) -> Result<Vec<i32>> {
        read_pids(&self.path.join("cgroup.threads"))
    }

    /// Write-only descriptors of `cgroup.threads` and, with v1 cpusets, of the cpuset's
    /// `tasks`, for the partition to place its own threads (see the module comment).
    pub fn placement_files(&self) -> Result<(File, Option<File>)> {
        let open = |p: PathBuf| OpenOptions::new().write(true).open(&p).map_err(|e| Error::io(format!("opening {}", p.display()), e));
        Ok((open(self.path.join("cgroup.threads"))?, self.v1_cpuset.as_ref().map(|d| open(d.join("tasks"))).transpose()?))
    }

    pub fn request_freeze(&self) -> io::Result<()> {
        self.freezer.request(true)
    }

    pub fn thaw(&self) -> io::Result<()> {
        self.freezer.request(false)
    }

    /// Sends `sig` to every thread of this core's group; returns how many.
    pub fn signal_threads(&self, sig: i32) -> io::Result<usize> {
        self.freezer.signal_threads(sig)
    }

    /// [`super::PartitionCgroup::kill_threads`] for this core's group.
    pub fn kill_threads(&self) -> io::Result<usize> {
        super::rt::demote_threads(self.freezer.threads()?);
        self.freezer.signal_threads(libc::SIGKILL)
    }

    pub fn is_frozen(&self) -> io::Result<bool> {
        self.freezer.is_frozen()
    }

    pub fn wait_frozen(&self, wait: FreezeWait, timeout: Duration) -> io::Result<()> {
        self.freezer.wait_frozen(wait, timeout)
    }
}

impl Drop for CoreCgroup {
    fn drop(&mut self) {
        let _ = self.freezer.request(false);
        #[cfg(test)]
        super::cgroup_fake::unpopulate(&self.path);
        let _ = fs::remove_dir(&self.path);
        if let Some(dir) = &self.v1_cpuset {
            let _ = fs::remove_dir(dir);
        }
    }
}
