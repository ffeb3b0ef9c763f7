//! [`ProcessBackend`]: the run-level set-up of the process backend (the run's cgroups, the
//! partitions' data directories, the scheduling broker, the choice of gate) and, per partition
//! of a plan, its cgroup, confinement, gate and spawner.

use super::gate::signal::SignalGroupGate;
use super::gate::{CgroupGate, CoreGates};
use super::oom_guard::OomGuard;
use super::partition::ProcessPartition;
use super::sched_broker::{BROKER_PRIORITY, SchedBroker};
use super::{Bind, Capabilities, CgroupSystem, Confinement, DataDirs, FreezerKind, RunCgroups, Spawner, partition_uid};
use crate::backend::interface::{Backend, PartitionGate, Prepared};
use crate::plan::{Plan, PlannedPartition};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a run of the process backend holds until its end. Dropping it removes the run's
/// cgroups (first), stops the scheduling broker and removes the partitions' data directories.
pub struct ProcessBackend {
    cgroups: RunCgroups,
    broker: Option<Arc<SchedBroker>>,
    /// Kills a partition at its v1 memory limit, demoted, instead of the kernel's OOM killer
    /// (None: the thread could not start; the OOM killer stays).
    oom_guard: Option<OomGuard>,
    data_dirs: DataDirs,
    /// Gate whole partitions by freezing (true) or with signals (`PARTITA_GATE=signal`).
    freeze: bool,
    /// Multi-core partitions are stopped and released per core (cgroup v2 only).
    per_core_gating: bool,
    death_signal: i32,
    caps: Capabilities,
    /// The module's base directory: the working directory of every program.
    workdir: PathBuf,
    /// The configuration file, for messages naming its lines.
    config_path: PathBuf,
    /// Real-time priority of the spawner threads (the lifecycle thread's).
    spawner_priority: i32,
}

/// How `partita run` wants the process backend set up.
pub struct ProcessOptions<'a> {
    pub caps: &'a Capabilities,
    /// A guardian process cleans up if the module is killed: partitions then get SIGSTOP,
    /// not SIGKILL, when the module dies.
    pub guardian: bool,
    pub workdir: PathBuf,
    pub config_path: &'a Path,
    /// The lifecycle thread's real-time priority (restarts clone from a thread at it).
    pub spawner_priority: i32,
}

impl ProcessBackend {
    /// Sets up the run: refuses a machine without a cgroup freezer or a plan this machine
    /// cannot gate, creates the run's cgroups, the data directories and the broker.
    pub fn new(plan: &Plan, opts: ProcessOptions<'_>) -> Result<ProcessBackend, String> {
        let caps = opts.caps;
        if caps.freezer == FreezerKind::None {
            return Err("partita run needs a cgroup freezer (v2 cgroup.freeze or the v1 freezer) to keep partitions inside their windows; none is usable here (run as root on a machine with cgroups)".into());
        }
        let system = CgroupSystem::detect().map_err(|e| e.to_string())?;
        let cgroups = RunCgroups::create(&system).map_err(|e| e.to_string())?;
        for w in &cgroups.warnings {
            eprintln!("partita: warning: {w}");
        }
        // The stop/release mechanism at window boundaries (docs/scheduling.md): the cgroup freezer,
        // or signals for whole partitions with PARTITA_GATE=signal; the freezer for the per-core
        // gates of multi-core partitions (cgroup v2 only).
        // The freezer stays the default until the signal gate's late run end under restart churn
        // (crates/cli/tests/run_restart.rs ends 1-2 s late with it) is understood.
        let freeze = match std::env::var("PARTITA_GATE").as_deref() {
            Ok("freeze") | Err(_) => true,
            Ok("signal") => false,
            Ok(other) => return Err(format!("PARTITA_GATE={other:?}: the gate is \"freeze\" (the default) or \"signal\"")),
        };
        let per_core_gating = cgroups.freezer == FreezerKind::V2;
        let unsupported = plan.unsupported(per_core_gating);
        if !unsupported.is_empty() {
            return Err(unsupported.join("\n"));
        }
        // Each partition's private writable directory, removed (with the run's) when this is dropped.
        let data_dirs = DataDirs::create().map_err(|e| format!("partition data directories: {e}"))?;
        // One broker per module CPU, beside the partitions it serves (sched_broker.rs).
        let module_cpus: Vec<u32> = plan.cores.iter().map(|c| c.cpu).collect();
        let broker = match SchedBroker::start(&module_cpus) {
            Ok(b) => Some(Arc::new(b)),
            Err(e) => return Err(format!("cannot start the scheduling broker thread: {e}")),
        };
        // A partition at its memory limit is demoted, then killed, by the module (not the OOM killer).
        let oom_guard = OomGuard::start(caps.sched_fifo.then_some(BROKER_PRIORITY))
            .map_err(|e| eprintln!("partita: warning: no memory limit guard ({e}): the kernel's OOM killer ends partitions at their limit"))
            .ok();
        Ok(ProcessBackend {
            cgroups,
            broker,
            oom_guard,
            data_dirs,
            freeze,
            per_core_gating,
            death_signal: if opts.guardian { libc::SIGSTOP } else { libc::SIGKILL },
            caps: caps.clone(),
            workdir: opts.workdir,
            config_path: opts.config_path.to_path_buf(),
            spawner_priority: opts.spawner_priority,
        })
    }
}

impl Backend for ProcessBackend {
    fn prepare(&mut self, plan: &Plan, index: usize) -> Result<Prepared, String> {
        let p = &plan.partitions[index];
        let (cgroups, caps) = (&self.cgroups, &self.caps);
        let limit = (p.memory_bytes > 0).then_some(p.memory_bytes);
        let cpus: Vec<usize> = p.cores.iter().map(|&c| plan.cores[c as usize].cpu as usize).collect();
        let host_cpus: Vec<u32> = cpus.iter().map(|&c| c as u32).collect();
        let mut cgroup = cgroups.partition_on(&p.name, limit, &host_cpus).map_err(|e| format!("partition {}: {e}", p.name))?;
        cgroups.limit_tasks(&mut cgroup, p.max_tasks).map_err(|e| format!("partition {}: pt:MaxTasks=\"{}\": {e}", p.name, p.max_tasks))?;
        let cgroup = Arc::new(cgroup);
        if let Some(Err(e)) = self.oom_guard.as_ref().map(|g| g.watch(&cgroup)) {
            eprintln!("partita: warning: partition {}: the kernel's OOM killer stays on ({e})", p.name);
        }
        let confine = confinement(p, &self.data_dirs, &self.config_path)?;
        // A multi-core partition is stopped and released per core.
        let per_core = if self.per_core_gating && p.cores.len() > 1 {
            let cores: Vec<(usize, u32)> = p.cores.iter().map(|&c| (c as usize, plan.cores[c as usize].cpu)).collect();
            Some(Arc::new(
                CoreGates::new(
                    &cgroup,
                    plan.cores.len(),
                    &cores,
                    plan.windows_in_step(index),
                    self.broker.as_ref().map(|b| b.doors(&host_cpus)),
                )
                .map_err(|e| format!("partition {}: {e}", p.name))?,
            ))
        } else {
            None
        };
        let signals = (per_core.is_none() && !self.freeze).then(|| Arc::new(SignalGroupGate::new(cgroup.clone())));
        let gate: Arc<dyn PartitionGate> = match (&per_core, &signals) {
            (Some(gates), _) => gates.clone(),
            (None, Some(s)) => s.clone(),
            (None, None) => Arc::new(CgroupGate { cgroup: cgroup.clone() }),
        };
        // Restarts clone from a thread already in the partition's v1 cgroups (spawner.rs).
        let spawner = match Spawner::new(&cgroup, &cpus, caps.sched_fifo.then_some(self.spawner_priority)) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!(
                    "partita: warning: partition {}: {e}; each of its starts moves it into its v1 cgroups, which delays every core's window boundaries",
                    p.name
                );
                None
            }
        };
        let mut partition = ProcessPartition::new(p.name.clone(), p.id, p.executable.clone(), self.workdir.clone());
        partition.args = p.arguments.iter().map(Into::into).collect();
        // Gated per core, the main thread starts on the first core only.
        partition.cpus = if per_core.is_some() { cpus[..1].to_vec() } else { cpus };
        partition.spawner = spawner;
        partition.cgroup = Some(cgroup);
        partition.per_core = per_core;
        partition.signals = signals;
        partition.namespaces = caps.namespaces;
        partition.rt_priority = caps.sched_fifo.then_some(p.rt_band.0 as i32);
        partition.confine = Some(confine);
        partition.broker = self.broker.clone();
        partition.death_signal = self.death_signal;
        Ok(Prepared { gate, partition: Box::new(partition) })
    }
}

/// Partition `p`'s identity, data directory and limits; a `<pt:Mount>` whose source is missing
/// or whose target cannot be made is an error naming the element's line.
fn confinement(p: &PlannedPartition, dirs: &DataDirs, config: &Path) -> Result<Confinement, String> {
    let uid = partition_uid(p.id).map_err(|e| format!("partition {}: {e}", p.name))?;
    let data_dir = dirs.partition(&p.name, uid, uid).map_err(|e| e.to_string())?;
    let mut mounts = Vec::new();
    for m in &p.mounts {
        let bind = Bind { source: m.source.clone(), target: m.target.clone(), writable: m.writable };
        super::confine::check_bind(&bind)
            .map_err(|e| format!("{}:{}: <pt:Mount> of partition {}: {e}", config.display(), m.line, p.name))?;
        mounts.push(bind);
    }
    Ok(Confinement { uid, gid: uid, data_dir, mounts, max_open_files: p.max_open_files })
}
