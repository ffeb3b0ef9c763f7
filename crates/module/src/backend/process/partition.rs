//! The process backend's [`Partition`]: a partition program started in the partition's
//! cgroups, namespaces and CPUs (`spawn`), watched through its pidfd and exec-status pipe, and
//! killed with its cgroup.

use super::gate::CoreGates;
use super::gate::signal::SignalGroupGate;
use super::sched_broker::SchedBroker;
use super::spawn::ExitStatus;
use super::{Confinement, ExecState, PartitionCgroup, PartitionProcess, SpawnSpec, Spawner, spawn};
use crate::backend::interface::{Ended, Partition, StartCheck, StartContext, Started};
use crate::hm::code_of_exit;
use std::ffi::OsString;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What the process backend needs to (re)start one partition, and its program while it runs.
pub struct ProcessPartition {
    /// The running program. Declared first: dropped before the spawner it was cloned from
    /// (its parent death signal is tied to that thread).
    process: Option<PartitionProcess>,
    pub name: String,
    pub id: u32,
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub workdir: PathBuf,
    pub cpus: Vec<usize>,
    /// The thread its programs are cloned from (spawner.rs); dropped before the cgroup.
    pub spawner: Option<Spawner>,
    pub cgroup: Option<Arc<PartitionCgroup>>,
    /// Gated per core: the per-core cgroups its threads are placed in.
    pub per_core: Option<Arc<CoreGates>>,
    /// Gated by signals: the gate, told each program's process group.
    pub signals: Option<Arc<SignalGroupGate>>,
    pub namespaces: bool,
    /// Real-time priority the program starts at (the base of its band).
    pub rt_priority: Option<i32>,
    /// Identity, file view and limits of the program (None: the module's own).
    pub confine: Option<Confinement>,
    /// Performs the program's scheduling calls (None: they fail with ENOSYS).
    pub broker: Option<Arc<SchedBroker>>,
    /// `SpawnSpec::death_signal`: SIGSTOP with a guardian process, SIGKILL without.
    pub death_signal: i32,
}

impl ProcessPartition {
    /// A partition with no program running yet; the fields are set by the caller.
    pub fn new(name: String, id: u32, program: PathBuf, workdir: PathBuf) -> ProcessPartition {
        ProcessPartition {
            process: None,
            name,
            id,
            program,
            args: Vec::new(),
            workdir,
            cpus: Vec::new(),
            spawner: None,
            cgroup: None,
            per_core: None,
            signals: None,
            namespaces: false,
            rt_priority: None,
            confine: None,
            broker: None,
            death_signal: libc::SIGKILL,
        }
    }
}

impl Partition for ProcessPartition {
    /// Starts the program, stopped (signal gate) or in its frozen cgroup: it runs from its
    /// next window.
    fn start(&mut self, ctx: StartContext<'_>) -> Result<Started, String> {
        let mut spec = SpawnSpec::new(&self.name, self.id, self.program.clone(), self.workdir.clone(), ctx.control.fd(), ctx.doorbell);
        spec.args = self.args.clone();
        spec.extra_fds = ctx.control.port_fds();
        spec.cpus = self.cpus.clone();
        spec.cgroup = self.cgroup.as_deref();
        spec.spawner = self.spawner.as_ref();
        spec.namespaces = self.namespaces;
        spec.rt_priority = self.rt_priority;
        spec.cancel = Some(ctx.cancel);
        spec.confine = self.confine.as_ref();
        spec.death_signal = self.death_signal;
        spec.start_stopped = self.signals.is_some();
        if let Some(gates) = &self.per_core {
            spec.inherited = Some((partita_abi::ENV_THREAD_PLACEMENT, gates.placement_fds()));
            spec.main_core = gates.first();
        }
        spec.broker = self.broker.as_deref();
        spec.broker_doors = self.per_core.as_ref().and_then(|g| g.broker_doors());
        let spawned = spawn(&spec).map_err(|e| e.to_string())?;
        for w in &spawned.warnings {
            eprintln!("partita: partition {}: {w}", self.name);
        }
        // Its group (its pid: it called setsid) is stopped and released with it from now on.
        if let Some(signals) = &self.signals {
            signals.set_group(spawned.process.pid());
        }
        let started = Started {
            stdout: spawned.stdout,
            stderr: spawned.stderr,
            ended: spawned.process.pidfd().as_raw_fd(),
            start_status: spawned.process.exec_status_fd().as_raw_fd(),
        };
        self.process = Some(spawned.process);
        Ok(started)
    }

    fn is_running(&self) -> bool {
        self.process.is_some()
    }

    fn check_start(&mut self) -> StartCheck {
        let Some(p) = self.process.as_mut() else { return StartCheck::Pending };
        match p.exec_state(Duration::ZERO) {
            Ok(ExecState::Started) => StartCheck::Started,
            Ok(ExecState::Failed(errno)) => {
                let _ = p.kill();
                StartCheck::Failed(format!("cannot execute {}: {}", self.program.display(), io::Error::from_raw_os_error(errno)))
            }
            _ => StartCheck::Pending,
        }
    }

    fn reap(&mut self) -> Option<Ended> {
        let mut p = self.process.take()?;
        if let Some(s) = &self.signals {
            s.set_group(0);
        }
        let (reason, signal) = match p.wait() {
            Ok(s @ ExitStatus::Signaled(sig)) => (s.to_string(), Some(sig)),
            // The runtime's last resort: exit_group(128 + the fault signal) (hm::fault_of_exit_status).
            Ok(s @ ExitStatus::Exited(code)) => (s.to_string(), crate::hm::fault_of_exit_status(code)),
            Err(e) => (format!("unknown ({e})"), None),
        };
        Some(Ended { reason, code: code_of_exit(signal) })
    }

    fn kill(&mut self) {
        if let Some(s) = &self.signals {
            s.set_group(0);
        }
        let Some(mut p) = self.process.take() else { return };
        let _ = p.kill();
        let _ = p.wait();
    }

    fn kill_now(&self) {
        if let Some(cg) = &self.cgroup {
            cg.kill_now();
        }
    }

    fn kill_all(&self, timeout: Duration) {
        if let Some(cg) = &self.cgroup {
            let _ = cg.kill_all(timeout);
        }
    }
}
