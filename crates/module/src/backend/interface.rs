//! The seam between the module and its backends: what the scheduler threads, the lifecycle
//! thread, the health monitor, the ports and the trace see of a partition, whatever runs it.
//! A [`Backend`] prepares the partitions of a plan; each partition then has a
//! [`PartitionGate`] (the scheduler's stop and release at window boundaries, per core for a
//! multi-core partition) and a [`Partition`] (the lifecycle thread's start, kill, reap and
//! fault reporting). The shared control block and the port memory are the module's own
//! (`control.rs`, `ports.rs`): every backend maps them into its partitions.
//!
//! The process backend (backend/process/) stops and releases a partition by freezing and
//! thawing its cgroups (the default) or with signals (`PARTITA_GATE=signal`); the kvm backend
//! (backend/kvm/) stops and releases vCPU threads (docs/backends.md, docs/kvm.md).
//!
//! A stop has two steps because completing it takes tens of microseconds here (the kernel must
//! run each thread into its stop): `request_stop` returns once no thread of the partition
//! can execute another instruction of its program; `is_stopped` says whether the kernel has
//! confirmed the stop, which the scheduler checks before the partition's next window.

use crate::control::SharedControl;
use crate::plan::Plan;
use std::fs::File;
use std::io;
use std::os::fd::{BorrowedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

pub trait PartitionGate: Send + Sync {
    /// Marks every thread of the partition to stop before it executes another user
    /// instruction. Called by the scheduler while it holds the partition's CPU.
    fn request_stop(&self) -> io::Result<()>;
    /// Whether the stop is complete (every thread frozen).
    fn is_stopped(&self) -> io::Result<bool>;
    /// [`PartitionGate::is_stopped`], called while the partition should be stopped (no
    /// window of it is open): a gate whose stop a partition can undo (signals: a SIGCONT
    /// from a sibling) stops what is not stopped yet again.
    fn enforce_stop(&self) -> io::Result<bool> {
        self.is_stopped()
    }
    /// Whether the scheduler confirms (and enforces) this gate's stops shortly after the
    /// boundary rather than at the core's next one.
    fn chased(&self) -> bool {
        false
    }
    /// Lets the partition run again.
    fn release(&self) -> io::Result<()>;
    /// A short name of the mechanism, for the trace header and the summary.
    fn mechanism(&self) -> &'static str;
    /// Holds the partition while a `request_stop` is blocked in the kernel (the core guard,
    /// guard.rs): SIGSTOP to every thread of this gate, which needs no cgroup lock. A
    /// SIGSTOP stops the whole process, so holding one core of a multi-core partition also
    /// holds its threads on the others until [`PartitionGate::unhold`]. Returns how many
    /// threads were signalled (0: this gate has nothing to hold).
    fn hold(&self) -> io::Result<usize> {
        Ok(0)
    }
    /// Undoes [`PartitionGate::hold`] once the stop is in force (SIGCONT: the threads stay
    /// stopped by the gate's own mechanism).
    fn unhold(&self) -> io::Result<()> {
        Ok(())
    }
    /// Kills every thread of the partition without writing to any cgroup (normal policy
    /// first): the way out of a run whose stop writes are stuck in the kernel. Returns how
    /// many threads were signalled.
    fn kill_threads(&self) -> io::Result<usize> {
        Ok(0)
    }
    /// The gate of the partition's threads on module core `core`, when the partition is
    /// stopped and released per core (a multi-core partition whose cores have different
    /// windows); None: the partition stops and starts as a whole.
    fn core(&self, core: usize) -> Option<&dyn PartitionGate> {
        let _ = core;
        None
    }
}

/// A way of running partitions (the `pt:Backend` of a partition in the configuration).
pub trait Backend {
    /// Prepares partition `index` of `plan` (`plan.partitions[index]`): the gate its schedulers
    /// stop and release, and the handle the lifecycle thread starts it with. No partition
    /// program runs yet; the first [`Partition::start`] leaves it held until its first window.
    /// One partition at a time, so that partitions of different backends can share a module.
    fn prepare(&mut self, plan: &Plan, index: usize) -> Result<Prepared, String>;
}

/// One prepared partition (see [`Backend::prepare`]).
pub struct Prepared {
    pub gate: Arc<dyn PartitionGate>,
    pub partition: Box<dyn Partition>,
}

/// The module's side of a partition, handed to each start: what its program is given.
pub struct StartContext<'a> {
    /// The partition's control block (and through it, its port memory).
    pub control: &'a SharedControl,
    /// The partition's doorbell: its program rings it to post a request.
    pub doorbell: BorrowedFd<'a>,
    /// Readable once the run is ending: a start that waits gives up then.
    pub cancel: BorrowedFd<'a>,
}

/// A started program, as the lifecycle thread waits on it (epoll). The raw descriptors belong
/// to the [`Partition`] and stay open until it is reaped or killed.
pub struct Started {
    pub stdout: File,
    pub stderr: File,
    /// Readable when the program has ended: [`Partition::reap`].
    pub ended: RawFd,
    /// Readable when the start has succeeded or failed: [`Partition::check_start`].
    pub start_status: RawFd,
}

/// What [`Partition::check_start`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartCheck {
    /// Not decided yet (the partition has not had a window since its start).
    Pending,
    /// The program runs.
    Started,
    /// The program could not start (the reason, for the trace); the backend has killed it,
    /// and its end is still reported through [`Started::ended`].
    Failed(String),
}

/// How a program ended: a partition-level fault for the health monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// For the console and the trace ("exited with status 1", "killed by signal 11 (SIGSEGV)").
    pub reason: String,
    /// The ARINC 653 error code the health monitor acts on (`partita_abi::error_code`).
    pub code: u32,
}

/// The lifecycle thread's handle of one partition: starts, kills and reaps its program. Every
/// call comes from the lifecycle thread; a start or kill happens inside the partition's own
/// window (or while it has none), never in another partition's.
pub trait Partition: Send {
    /// Starts the program, held (frozen or stopped) until the scheduler releases its gate.
    fn start(&mut self, ctx: StartContext<'_>) -> Result<Started, String>;
    /// Whether a program has been started and not yet reaped or killed.
    fn is_running(&self) -> bool;
    /// Whether the started program got going (non-blocking).
    fn check_start(&mut self) -> StartCheck;
    /// Collects the program that has ended ([`Started::ended`] became readable); None when
    /// none was running.
    fn reap(&mut self) -> Option<Ended>;
    /// Kills the program, if any, and waits until it is gone.
    fn kill(&mut self);
    /// At the end of the run: makes every thread of the partition leave real time and die,
    /// without waiting (every partition is killed so before any is waited for).
    fn kill_now(&self);
    /// At the end of the run: kills what is left of the partition and waits at most `timeout`
    /// until nothing is.
    fn kill_all(&self, timeout: Duration);
}
