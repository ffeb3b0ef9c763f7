//! Cgroups of a run: `partita-<module pid>/<partition name>` in the cgroup v2 tree (freezing,
//! `cgroup.kill`, memory and cpuset where those v2 controllers are available) and, on hybrid or
//! v1-only machines, in the v1 `memory`, `cpuset` and `freezer` hierarchies as needed. The
//! per-core cgroups of multi-core partitions are in `cgroup_cores.rs`.
//!
//! The hot path of a scheduler thread ([`PartitionCgroup::request_freeze`],
//! [`PartitionCgroup::thaw`], [`PartitionCgroup::is_frozen`]) is one `pwrite`/`pread` on a
//! descriptor opened in advance: no allocation, no path lookup.

use super::sys;
use super::{Error, Result, degrade};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub use super::cgroup_cores::{CoreCgroup, CpusetKind};
pub use super::cgroup_freezer::FreezeWait;
use super::cgroup_freezer::Freezer;

/// How cgroups are mounted on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupLayout {
    /// Only the v2 unified hierarchy (at `/sys/fs/cgroup`).
    Unified,
    /// v1 controller hierarchies plus a v2 tree without those controllers (often
    /// `/sys/fs/cgroup/unified`); freezing works there, memory limits come from v1.
    Hybrid,
    /// v1 hierarchies only.
    Legacy,
}

/// Which freezer a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreezerKind {
    /// v2 `cgroup.freeze`, with `frozen 1` in `cgroup.events` once complete.
    V2,
    /// v1 `freezer.state` (`FROZEN` once complete).
    V1,
    /// No freezer available: the caller falls back to signals.
    None,
}

/// Which memory limit a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLimitKind {
    /// v2 `memory.max` (plus `memory.swap.max = 0` where swap accounting exists).
    V2,
    /// v1 `memory.limit_in_bytes`, plus `memory.memsw.limit_in_bytes` when `memsw` is true.
    V1 { memsw: bool },
    /// No memory controller we may use: budgets are not enforced.
    None,
}

/// Where the cgroup hierarchies are, as seen by this process.
#[derive(Debug, Clone)]
pub struct CgroupSystem {
    pub layout: CgroupLayout,
    /// Mount point of the v2 hierarchy; the run hierarchy is created directly below it.
    pub v2_root: Option<PathBuf>,
    /// This process's cgroup in the v1 memory hierarchy (run hierarchies nest below it, so
    /// the limits of whoever started us still apply).
    pub v1_memory: Option<PathBuf>,
    /// Same for the v1 freezer hierarchy.
    pub v1_freezer: Option<PathBuf>,
    /// Same for the v1 cpuset hierarchy.
    pub v1_cpuset: Option<PathBuf>,
    /// Same for the v1 pids hierarchy.
    pub v1_pids: Option<PathBuf>,
}

impl CgroupSystem {
    /// Reads `/proc/self/mountinfo` and `/proc/self/cgroup`.
    pub fn detect() -> Result<CgroupSystem> {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").map_err(|e| Error::io("reading /proc/self/mountinfo", e))?;
        let own = fs::read_to_string("/proc/self/cgroup").map_err(|e| Error::io("reading /proc/self/cgroup", e))?;
        Self::from_tables(&mountinfo, &own).ok_or_else(|| Error::Unsupported("no cgroup v2 or v1 hierarchy is mounted".into()))
    }

    /// The detection proper, on the text of mountinfo and /proc/self/cgroup (testable).
    pub fn from_tables(mountinfo: &str, own_cgroups: &str) -> Option<CgroupSystem> {
        let mut v2_root = None;
        let mut v1_controllers = false;
        let (mut v1_memory, mut v1_freezer, mut v1_cpuset, mut v1_pids) = (None, None, None, None);
        for line in mountinfo.lines() {
            let Some((left, right)) = line.split_once(" - ") else { continue };
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            if l.len() < 5 || r.len() < 3 {
                continue;
            }
            let (root, mount_point, fstype, opts) = (l[3], unescape(l[4]), r[0], r[2]);
            if fstype == "cgroup2" && v2_root.is_none() {
                v2_root = Some(PathBuf::from(mount_point));
            } else if fstype == "cgroup" {
                let opts: Vec<&str> = opts.split(',').collect();
                for (ctl, slot) in
                    [("memory", &mut v1_memory), ("freezer", &mut v1_freezer), ("cpuset", &mut v1_cpuset), ("pids", &mut v1_pids)]
                {
                    if opts.contains(&ctl) {
                        *slot = Some(own_dir(own_cgroups, ctl, root, &mount_point));
                    }
                }
                v1_controllers |=
                    opts.iter().any(|o| !o.starts_with("name=") && !["rw", "ro", "relatime", "noexec", "nosuid", "nodev"].contains(o));
            }
        }
        let layout = match (v2_root.is_some(), v1_controllers) {
            (true, false) => CgroupLayout::Unified,
            (true, true) => CgroupLayout::Hybrid,
            (false, true) => CgroupLayout::Legacy,
            (false, false) => return None,
        };
        Some(CgroupSystem { layout, v2_root, v1_memory, v1_freezer, v1_cpuset, v1_pids })
    }

    /// Every hierarchy a run creates directories in (the one list the clean-ups walk).
    pub fn bases(&self) -> impl Iterator<Item = &PathBuf> {
        [&self.v2_root, &self.v1_memory, &self.v1_freezer, &self.v1_cpuset, &self.v1_pids].into_iter().flatten()
    }
}

/// mountinfo escapes spaces and a few other bytes as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's directory in the v1 hierarchy of `controller` mounted at `mount_point`.
fn own_dir(own_cgroups: &str, controller: &str, mount_root: &str, mount_point: &str) -> PathBuf {
    let path = own_cgroups
        .lines()
        .filter_map(|l| l.split(':').nth(1).zip(l.splitn(3, ':').nth(2)))
        .find(|(ctls, _)| ctls.split(',').any(|c| c == controller))
        .map(|(_, p)| p)
        .unwrap_or("/");
    let rel = path.strip_prefix(mount_root).unwrap_or(path).trim_start_matches('/');
    Path::new(mount_point).join(rel)
}

/// The cgroups of one run of the module: `partita-<pid>` in each hierarchy used.
#[derive(Debug)]
pub struct RunCgroups {
    pub freezer: FreezerKind,
    pub memory: MemoryLimitKind,
    /// How partitions are kept on their CPUs.
    pub cpuset: CpusetKind,
    /// `cgroup.kill` is available (v2, kernel >= 5.14).
    pub cgroup_kill: bool,
    /// How partitions' task counts are limited (`pt:MaxTasks`).
    pub pids: PidsKind,
    /// Why something degraded (empty when everything is available).
    pub warnings: Vec<String>,
    v2: Option<PathBuf>,
    v1_memory: Option<PathBuf>,
    v1_freezer: Option<PathBuf>,
    v1_cpuset: Option<PathBuf>,
    v1_pids: Option<PathBuf>,
}

/// Which task limit a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidsKind {
    /// v2 `pids.max`.
    V2,
    /// v1 `pids.max` in the pids hierarchy.
    V1,
    /// No pids controller: a partition may fork until memory runs out.
    None,
}

impl RunCgroups {
    /// Removes stale `partita-*` hierarchies of dead runs, then creates this run's. Permission
    /// problems degrade (see [`RunCgroups::warnings`]) unless `CI=true`.
    pub fn create(sys: &CgroupSystem) -> Result<RunCgroups> {
        Self::create_with(sys, super::strict())
    }

    /// [`RunCgroups::create`] with an explicit strictness (the capability probe never fails).
    pub fn create_with(sys: &CgroupSystem, strict: bool) -> Result<RunCgroups> {
        // One process may hold several runs (tests): the first is `partita-<pid>`, later
        // ones `partita-<pid>-<n>`. A directory of that name that exists already is a
        // leftover of an earlier process with the same pid.
        static RUNS: AtomicU32 = AtomicU32::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let name = if n == 0 { format!("partita-{}", std::process::id()) } else { format!("partita-{}-{n}", std::process::id()) };
        let mut warnings = Vec::new();
        for base in sys.bases() {
            clean_stale(base, &mut warnings);
            remove_tree(&base.join(&name));
        }
        let mut run = RunCgroups::disabled(String::new());
        run.warnings = warnings;
        let mut v2_memory_error = None;
        let mut v2_cpuset_error = None;
        let mut v2_pids_error = None;
        if let Some(root) = &sys.v2_root {
            let dir = root.join(&name);
            match mkdir(&dir) {
                Ok(()) => {
                    run.freezer = FreezerKind::V2;
                    run.cgroup_kill = dir.join("cgroup.kill").exists();
                    match enable_controller(root, "memory").and_then(|()| enable_controller(&dir, "memory")) {
                        Ok(()) => run.memory = MemoryLimitKind::V2,
                        Err(e) => v2_memory_error = Some(e.to_string()),
                    }
                    match enable_controller(root, "cpuset").and_then(|()| enable_controller(&dir, "cpuset")) {
                        Ok(()) => run.cpuset = CpusetKind::V2,
                        Err(e) => v2_cpuset_error = Some(e.to_string()),
                    }
                    match enable_controller(root, "pids").and_then(|()| enable_controller(&dir, "pids")) {
                        Ok(()) => run.pids = PidsKind::V2,
                        Err(e) => v2_pids_error = Some(e.to_string()),
                    }
                    run.v2 = Some(dir);
                }
                Err(e) => degrade(strict, &mut run.warnings, "creating the run's cgroup v2 directory", e)?,
            }
        }
        if run.memory == MemoryLimitKind::None
            && let Some(base) = &sys.v1_memory
        {
            let dir = base.join(&name);
            match mkdir(&dir) {
                Ok(()) => {
                    run.memory = MemoryLimitKind::V1 { memsw: dir.join("memory.memsw.limit_in_bytes").exists() };
                    run.v1_memory = Some(dir);
                }
                Err(e) => degrade(strict, &mut run.warnings, "creating the run's v1 memory cgroup", e)?,
            }
        }
        if run.cpuset == CpusetKind::None
            && let Some(base) = &sys.v1_cpuset
        {
            let dir = base.join(&name);
            match mkdir(&dir).and_then(|()| super::cgroup_cores::inherit_v1_cpuset(&dir, base)) {
                Ok(()) => {
                    run.cpuset = CpusetKind::V1;
                    run.v1_cpuset = Some(dir);
                }
                Err(e) => degrade(strict, &mut run.warnings, "creating the run's v1 cpuset cgroup", e)?,
            }
        }
        if run.cpuset == CpusetKind::None {
            let why = v2_cpuset_error.unwrap_or_else(|| "no cgroup v2 tree".into());
            let e = Error::Unsupported(format!("no usable cpuset controller (v2: {why}; no v1 cpuset hierarchy)"));
            degrade(strict, &mut run.warnings, "keeping partitions on their CPUs", e)?;
        }
        if run.pids == PidsKind::None
            && let Some(base) = &sys.v1_pids
        {
            let dir = base.join(&name);
            match mkdir(&dir) {
                Ok(()) => {
                    run.pids = PidsKind::V1;
                    run.v1_pids = Some(dir);
                }
                Err(e) => degrade(strict, &mut run.warnings, "creating the run's v1 pids cgroup", e)?,
            }
        }
        if run.pids == PidsKind::None {
            let why = v2_pids_error.unwrap_or_else(|| "no cgroup v2 tree".into());
            let e = Error::Unsupported(format!("no usable pids controller (v2: {why}; no v1 pids hierarchy)"));
            degrade(strict, &mut run.warnings, "partition task limits (pt:MaxTasks)", e)?;
        }
        if run.freezer == FreezerKind::None
            && let Some(base) = &sys.v1_freezer
        {
            let dir = base.join(&name);
            match mkdir(&dir) {
                Ok(()) => {
                    run.freezer = FreezerKind::V1;
                    run.v1_freezer = Some(dir);
                }
                Err(e) => degrade(strict, &mut run.warnings, "creating the run's v1 freezer cgroup", e)?,
            }
        }
        if run.memory == MemoryLimitKind::None {
            let why = v2_memory_error.unwrap_or_else(|| "no cgroup v2 tree".into());
            let e = Error::Unsupported(format!("no usable memory controller (v2: {why}; no v1 memory hierarchy)"));
            degrade(strict, &mut run.warnings, "partition memory budgets", e)?;
        }
        if run.freezer == FreezerKind::None {
            degrade(strict, &mut run.warnings, "partition freezing", Error::Unsupported("no cgroup v2 tree and no v1 freezer".into()))?;
        }
        Ok(run)
    }

    /// A run without cgroups (the caller degrades to signals and no memory budgets).
    pub fn disabled(reason: String) -> RunCgroups {
        RunCgroups {
            freezer: FreezerKind::None,
            memory: MemoryLimitKind::None,
            cpuset: CpusetKind::None,
            cgroup_kill: false,
            pids: PidsKind::None,
            warnings: vec![reason],
            v2: None,
            v1_memory: None,
            v1_freezer: None,
            v1_cpuset: None,
            v1_pids: None,
        }
    }

    /// The run's v2 directory, if any.
    pub fn v2_dir(&self) -> Option<&Path> {
        self.v2.as_deref()
    }

    /// Creates the cgroup of one partition, with its memory limit (bytes) if given.
    pub fn partition(&self, name: &str, memory_limit: Option<u64>) -> Result<PartitionCgroup> {
        self.partition_on(name, memory_limit, &[])
    }

    /// [`RunCgroups::partition`] confined to host CPUs `cpus` by the run's cpuset (none:
    /// not confined), so that no thread of the partition can move itself to another CPU.
    pub fn partition_on(&self, name: &str, memory_limit: Option<u64>, cpus: &[u32]) -> Result<PartitionCgroup> {
        let leaf = sanitize(name);
        let mut pc = PartitionCgroup {
            name: name.to_string(),
            v2: None,
            v1_memory: None,
            v1_freezer: None,
            v1_cpuset: None,
            v1_pids: None,
            freezer: Freezer::None,
            dir: None,
            memory: MemoryLimitKind::None,
            memory_limit: None,
            cpuset: CpusetKind::None,
        };
        if let Some(run) = &self.v2 {
            let dir = run.join(&leaf);
            mkdir(&dir)?;
            pc.freezer = Freezer::open_v2(&dir)?;
            pc.dir = Some(File::open(&dir).map_err(|e| Error::io(format!("opening {}", dir.display()), e))?);
            pc.v2 = Some(dir);
        }
        if let Some(run) = &self.v1_freezer {
            let dir = run.join(&leaf);
            mkdir(&dir)?;
            pc.freezer = Freezer::open_v1(&dir)?;
            pc.v1_freezer = Some(dir);
        }
        if let Some(run) = &self.v1_memory {
            let dir = run.join(&leaf);
            mkdir(&dir)?;
            pc.v1_memory = Some(dir);
        }
        if let Some(limit) = memory_limit {
            pc.set_memory_limit(self.memory, limit)?;
        }
        if !cpus.is_empty() {
            match (self.cpuset, &pc.v2, &self.v1_cpuset) {
                (CpusetKind::V2, Some(dir), _) => write_file(&dir.join("cpuset.cpus"), &cpu_list(cpus))?,
                (CpusetKind::V1, _, Some(run)) => {
                    let dir = run.join(&leaf);
                    mkdir(&dir)?;
                    super::cgroup_cores::set_v1_cpuset(&dir, run, cpus)?;
                    pc.v1_cpuset = Some(dir);
                }
                _ => {}
            }
            pc.cpuset = if pc.v1_cpuset.is_some() || self.cpuset == CpusetKind::V2 { self.cpuset } else { CpusetKind::None };
        }
        Ok(pc)
    }

    /// Limits partition `pc` to `max` tasks (processes plus threads: a fork or thread creation
    /// beyond it fails with EAGAIN inside the partition). Without a pids controller nothing is
    /// enforced (the run warned, or refused under `CI=true`).
    pub fn limit_tasks(&self, pc: &mut PartitionCgroup, max: u32) -> Result<()> {
        match (self.pids, &pc.v2, &self.v1_pids) {
            (PidsKind::V2, Some(dir), _) => write_file(&dir.join("pids.max"), &max.to_string()),
            (PidsKind::V1, _, Some(run)) => {
                let dir = run.join(sanitize(&pc.name));
                mkdir(&dir)?;
                pc.v1_pids = Some(dir.clone());
                write_file(&dir.join("pids.max"), &max.to_string())
            }
            _ => Ok(()),
        }
    }
}

impl Drop for RunCgroups {
    fn drop(&mut self) {
        for dir in [&self.v2, &self.v1_memory, &self.v1_freezer, &self.v1_cpuset, &self.v1_pids].into_iter().flatten() {
            remove_tree(dir);
        }
    }
}

/// The cgroup(s) of one partition.
#[derive(Debug)]
pub struct PartitionCgroup {
    pub name: String,
    v2: Option<PathBuf>,
    v1_memory: Option<PathBuf>,
    v1_freezer: Option<PathBuf>,
    v1_cpuset: Option<PathBuf>,
    v1_pids: Option<PathBuf>,
    freezer: Freezer,
    /// The v2 directory, open, for `CLONE_INTO_CGROUP`.
    dir: Option<File>,
    memory: MemoryLimitKind,
    memory_limit: Option<u64>,
    cpuset: CpusetKind,
}

impl PartitionCgroup {
    fn set_memory_limit(&mut self, kind: MemoryLimitKind, limit: u64) -> Result<()> {
        match (kind, &self.v2, &self.v1_memory) {
            (MemoryLimitKind::V2, Some(dir), _) => {
                write_file(&dir.join("memory.max"), &limit.to_string())?;
                let swap = dir.join("memory.swap.max");
                if swap.exists() {
                    write_file(&swap, "0")?;
                }
            }
            (MemoryLimitKind::V1 { memsw }, _, Some(dir)) => {
                write_file(&dir.join("memory.limit_in_bytes"), &limit.to_string())?;
                if memsw {
                    write_file(&dir.join("memory.memsw.limit_in_bytes"), &limit.to_string())?;
                }
            }
            _ => return Ok(()),
        }
        self.memory = kind;
        self.memory_limit = Some(limit);
        Ok(())
    }

    /// The memory limit in force and how it is enforced (`None`: not enforced).
    pub fn memory_limit(&self) -> (MemoryLimitKind, Option<u64>) {
        (self.memory, self.memory_limit)
    }

    pub fn freezer_kind(&self) -> FreezerKind {
        self.freezer.kind()
    }

    /// The partition's v2 directory (for `CLONE_INTO_CGROUP`), if the run has a v2 tree.
    pub fn v2_dir_fd(&self) -> Option<BorrowedFd<'_>> {
        self.dir.as_ref().map(|f| f.as_fd())
    }

    pub fn v2_path(&self) -> Option<&Path> {
        self.v2.as_deref()
    }

    /// Every directory of this partition (v2, v1 memory, v1 freezer, v1 cpuset).
    pub fn paths(&self) -> Vec<&Path> {
        [&self.v2, &self.v1_memory, &self.v1_freezer, &self.v1_cpuset, &self.v1_pids].into_iter().flatten().map(|p| p.as_path()).collect()
    }

    /// How the partition is kept on its CPUs (`None`: it is not).
    pub fn cpuset_kind(&self) -> CpusetKind {
        self.cpuset
    }

    pub(crate) fn v1_memory_path(&self) -> Option<&Path> {
        self.v1_memory.as_deref()
    }

    pub(crate) fn v1_cpuset_path(&self) -> Option<&Path> {
        self.v1_cpuset.as_deref()
    }

    /// Moves process `pid` into every hierarchy of the partition; with `skip_v2`, only the
    /// v1 ones (the process was cloned into the v2 cgroup already).
    pub fn add_pid(&self, pid: i32, skip_v2: bool) -> Result<()> {
        self.add_pid_except(pid, skip_v2, false)
    }

    /// [`PartitionCgroup::add_pid`]; with `inherited_v1`, not into the v1 memory and cpuset
    /// cgroups either (the process was cloned from a thread placed there: backend/spawner.rs).
    pub fn add_pid_except(&self, pid: i32, skip_v2: bool, inherited_v1: bool) -> Result<()> {
        let v2 = if skip_v2 { None } else { self.v2.as_ref() };
        let (memory, cpuset, pids) =
            if inherited_v1 { (None, None, None) } else { (self.v1_memory.as_ref(), self.v1_cpuset.as_ref(), self.v1_pids.as_ref()) };
        for dir in [v2, memory, self.v1_freezer.as_ref(), cpuset, pids].into_iter().flatten() {
            write_file(&dir.join("cgroup.procs"), &pid.to_string())?;
        }
        Ok(())
    }

    /// The v1 directories a child inherits from the thread that clones it, and a thread may
    /// join on its own (`tasks`): memory, cpuset and pids (so `pt:MaxTasks` counts the module's
    /// spawner thread as one of the partition's tasks). Not the freezer: a thread there would be
    /// frozen with the partition.
    pub fn v1_inherited_dirs(&self) -> Vec<&Path> {
        [&self.v1_memory, &self.v1_cpuset, &self.v1_pids].into_iter().flatten().map(|p| p.as_path()).collect()
    }

    /// Processes in the partition (pids as seen from the module).
    /// Not the module itself, whose spawner thread may be in the v1 memory cgroup.
    pub fn pids(&self) -> Result<Vec<i32>> {
        let module = std::process::id() as i32;
        match [&self.v2, &self.v1_freezer, &self.v1_memory].into_iter().flatten().next() {
            Some(dir) => Ok(read_pids(&dir.join("cgroup.procs"))?.into_iter().filter(|p| *p != module).collect()),
            None => Ok(Vec::new()),
        }
    }

    /// Starts freezing and returns at once (one write). Every task of the partition stops at
    /// its next return to user space: a task that is not running then (e.g. preempted by the
    /// scheduler thread on its core) executes no further user instruction.
    pub fn request_freeze(&self) -> io::Result<()> {
        self.freezer.request(true)
    }

    /// Thaws (one write).
    pub fn thaw(&self) -> io::Result<()> {
        self.freezer.request(false)
    }

    /// Sends `sig` to every thread of the partition; returns how many (the core guard's hold).
    pub fn signal_threads(&self, sig: i32) -> io::Result<usize> {
        self.freezer.signal_threads(sig)
    }

    /// The partition's thread ids into `out` (no allocation per id; for the signal gate).
    pub fn threads_into(&self, out: &mut Vec<i32>) -> io::Result<()> {
        self.freezer.ids_into(true, out)
    }

    /// The partition's process ids into `out` (see [`PartitionCgroup::threads_into`]).
    pub fn procs_into(&self, out: &mut Vec<i32>) -> io::Result<()> {
        self.freezer.ids_into(false, out)
    }

    /// Kills every thread of the partition without any cgroup write (for a run whose cgroup
    /// writes are stuck in the kernel): normal policy first ([`super::rt::demote_threads`]),
    /// then SIGKILL. Returns how many threads were signalled.
    pub fn kill_threads(&self) -> io::Result<usize> {
        super::rt::demote_threads(self.freezer.threads()?);
        self.freezer.signal_threads(libc::SIGKILL)
    }

    /// Whether the freeze is complete (`frozen 1`, or v1 `FROZEN`).
    pub fn is_frozen(&self) -> io::Result<bool> {
        self.freezer.is_frozen()
    }

    /// Freezes and returns only once the partition is completely frozen.
    pub fn freeze(&self, timeout: Duration) -> Result<()> {
        self.freeze_with(FreezeWait::default(), timeout)
    }

    /// [`PartitionCgroup::freeze`] with a chosen way of waiting (see docs/scheduling.md).
    pub fn freeze_with(&self, wait: FreezeWait, timeout: Duration) -> Result<()> {
        self.request_freeze().map_err(|e| Error::io(format!("freezing partition {}", self.name), e))?;
        self.freezer.wait_frozen(wait, timeout).map_err(|e| match e.kind() {
            io::ErrorKind::TimedOut => Error::Timeout { what: format!("partition {} did not report frozen within {timeout:?}", self.name) },
            _ => Error::io(format!("waiting for partition {} to freeze", self.name), e),
        })
    }

    /// Waits for a freeze requested earlier.
    pub fn wait_frozen(&self, wait: FreezeWait, timeout: Duration) -> io::Result<()> {
        self.freezer.wait_frozen(wait, timeout)
    }

    /// OOM kills counted for the partition (v2 `memory.events`, v1 `memory.oom_control`).
    pub fn oom_kills(&self) -> Option<u64> {
        let (file, key) = match (self.memory, &self.v2, &self.v1_memory) {
            (MemoryLimitKind::V2, Some(d), _) => (d.join("memory.events"), "oom_kill "),
            (MemoryLimitKind::V1 { .. }, _, Some(d)) => (d.join("memory.oom_control"), "oom_kill "),
            _ => return None,
        };
        let text = fs::read_to_string(file).ok()?;
        text.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse().ok())
    }

    /// Demotes every thread of the partition to the normal policy and sends every process
    /// SIGKILL, without waiting for them to die ([`PartitionCgroup::kill_all`] waits).
    pub fn kill_now(&self) {
        for dir in self.paths() {
            kill_dir(dir);
        }
    }

    /// Kills every process of the partition and waits until none is left.
    pub fn kill_all(&self, timeout: Duration) -> Result<()> {
        self.kill_now();
        let deadline = Instant::now() + timeout;
        loop {
            let left = self.pids()?;
            if left.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout { what: format!("processes {left:?} of partition {} still alive after SIGKILL", self.name) });
            }
            for dir in self.paths() {
                kill_dir(dir);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for PartitionCgroup {
    fn drop(&mut self) {
        for dir in [&self.v2, &self.v1_memory, &self.v1_freezer, &self.v1_cpuset, &self.v1_pids].into_iter().flatten() {
            remove_tree(dir);
        }
    }
}

fn sanitize(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with('.') || s.starts_with("cgroup") { format!("p_{s}") } else { s }
}

pub(crate) fn mkdir(dir: &Path) -> Result<()> {
    match fs::create_dir(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(Error::io(format!("creating cgroup {}", dir.display()), e)),
        _ => {
            #[cfg(test)]
            super::cgroup_fake::populate(dir);
            Ok(())
        }
    }
}

pub(crate) fn write_file(path: &Path, value: &str) -> Result<()> {
    #[cfg(test)]
    if let Some(r) = super::cgroup_fake::write(path, value) {
        return r;
    }
    let f = OpenOptions::new().write(true).open(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
    f.write_at(value.as_bytes(), 0).map_err(|e| Error::io(format!("writing {value:?} to {}", path.display()), e))?;
    Ok(())
}

pub(crate) fn read_pids(path: &Path) -> Result<Vec<i32>> {
    let text = fs::read_to_string(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    Ok(text.lines().filter_map(|l| l.trim().parse().ok()).collect())
}

/// Enables v2 controller `ctl` for the children of `dir`: a no-op if it is on already, an
/// `Unsupported` error if `dir` does not offer it (`cgroup.controllers`).
pub(crate) fn enable_controller(dir: &Path, ctl: &str) -> Result<()> {
    let current = fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
    if current.split_whitespace().any(|c| c == ctl) {
        return Ok(());
    }
    let offered = fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
    if !offered.split_whitespace().any(|c| c == ctl) {
        return Err(Error::Unsupported(format!("{} does not offer the {ctl} controller", dir.display())));
    }
    write_file(&dir.join("cgroup.subtree_control"), &format!("+{ctl}"))
}

/// A CPU list in the kernel's format ("0,2,3").
pub(crate) fn cpu_list(cpus: &[u32]) -> String {
    cpus.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// Demotes every thread to the normal policy ([`super::rt::demote_threads`]), SIGKILLs everything in one cgroup directory (v2 `cgroup.kill` when present, which covers
/// descendants), then thaws it: v1-frozen tasks only die once thawed.
/// The module's own threads are spared: a partition's spawner thread (backend/spawner.rs) lives
/// in its v1 memory and cpuset cgroups, which therefore list the module's pid.
fn kill_dir(dir: &Path) {
    let module = std::process::id() as i32;
    let ours = |tid: &i32| *tid == module || Path::new(&format!("/proc/self/task/{tid}")).exists();
    for threads in ["cgroup.threads", "tasks"] {
        if let Ok(tids) = read_pids(&dir.join(threads)) {
            super::rt::demote_threads(tids.into_iter().filter(|t| !ours(t)));
        }
    }
    if write_file(&dir.join("cgroup.kill"), "1").is_err() {
        for pid in read_pids(&dir.join("cgroup.procs")).unwrap_or_default().into_iter().filter(|p| *p != module) {
            // SAFETY: kill(2) with a pid read from the cgroup and SIGKILL.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    let _ = write_file(&dir.join("cgroup.freeze"), "0");
    let _ = write_file(&dir.join("freezer.state"), "THAWED");
}

/// Kills everything below `dir`, waits (bounded) for it to empty, removes the directories
/// bottom-up. Missing directories are fine.
fn remove_tree(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            remove_tree(&e.path());
        }
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        kill_dir(dir);
        #[cfg(test)]
        super::cgroup_fake::unpopulate(dir);
        match fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => {
                eprintln!("partita: cannot remove cgroup {}: {e}", dir.display());
                return;
            }
        }
    }
}

/// Removes the cgroups of every run of module process `pid` (`partita-<pid>[-<n>]` in each
/// hierarchy), killing what is left in them (threads demoted first). For the guardian of a
/// module that died; returns the directories removed.
pub fn remove_run(sys: &CgroupSystem, pid: i32) -> Vec<String> {
    let mut removed = Vec::new();
    for base in sys.bases() {
        let Ok(entries) = fs::read_dir(base) else { continue };
        for e in entries.flatten() {
            let name = e.file_name();
            let of_pid = name
                .to_str()
                .and_then(|n| n.strip_prefix("partita-"))
                .and_then(|p| p.split('-').next())
                .is_some_and(|p| p.parse::<i32>().ok() == Some(pid));
            if of_pid {
                remove_tree(&e.path());
                removed.push(e.path().display().to_string());
            }
        }
    }
    removed
}

/// Removes `partita-<pid>[-<n>]` directories in `base` whose module process is gone.
fn clean_stale(base: &Path, warnings: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(base) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let pid =
            name.to_str().and_then(|n| n.strip_prefix("partita-")).and_then(|p| p.split('-').next()).and_then(|p| p.parse::<i32>().ok());
        let Some(pid) = pid else { continue };
        if pid != std::process::id() as i32 && !sys::pid_alive(pid) {
            remove_tree(&e.path());
            if e.path().exists() {
                warnings.push(format!("stale cgroup {} could not be removed", e.path().display()));
            }
        }
    }
}
