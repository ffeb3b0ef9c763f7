//! The `process` backend: a partition is a Linux process (and the processes it forks) in its
//! own cgroups, namespaces and CPUs. It implements the seam of `backend::interface`.
//!
//! - [`prepare`]: [`ProcessBackend`], the run's set-up (cgroups, data directories, broker, the
//!   choice of gate) and, per partition of a plan, its cgroup, confinement, gate and spawner.
//! - [`partition`]: [`ProcessPartition`], the lifecycle thread's handle (start, kill, reap).
//! - [`gate`]: the stop/release at window boundaries (cgroup freezer, per core, or signals).
//! - [`cgroup`]: detects the cgroup layout (pure v2, hybrid, v1 only), creates the per-run
//!   hierarchy `partita-<pid>/<partition>`, freezes and thaws a partition (or one core of a
//!   multi-core partition, through threaded sub-cgroups), confines it to its CPUs (cpuset),
//!   kills and removes it.
//! - [`spawn`](mod@spawn): starts a partition program in its cgroup, namespaces and CPUs, with the control
//!   block as fd 3 and the doorbell as fd 4; the program starts frozen and runs no instruction
//!   before the module thaws it ([`spawner`]: the thread restarts are cloned from).
//! - [`confine`], seccomp.rs: what a program may see, be and call; [`sched_broker`]: the
//!   scheduling calls it may make, made by the module, and its exits and signals, before which
//!   it demotes (exit_signals.rs); [`oom_guard`]: the kill at a v1 memory limit, demoted.
//! - [`probe`]: what the backend can do on this machine ([`Capabilities`]).
//!
//! Missing privileges degrade with a warning (no namespaces, no freezing, no memory budget),
//! except when `CI=true`, where they are errors ([`strict`]). See docs/scheduling.md for the
//! measurements behind the stop/release mechanism, docs/backends.md for the seam.

pub mod cgroup;
mod cgroup_cores;
#[cfg(test)]
mod cgroup_fake;
mod cgroup_freezer;
pub mod confine;
mod exit_signals;
pub mod gate;
pub mod group_stop;
pub mod oom_guard;
pub mod partition;
pub mod prepare;
pub mod probe;
pub mod sched_broker;
mod seccomp;
pub mod spawn;
mod spawn_child;
mod spawn_confine;
pub mod spawner;

// The shared helpers, under the names the process backend's files have always used.
use super::{rt, sys};

use std::fmt;
use std::io;
use std::path::PathBuf;

pub use cgroup::{
    CgroupLayout, CgroupSystem, CoreCgroup, CpusetKind, FreezeWait, FreezerKind, MemoryLimitKind, PartitionCgroup, PidsKind, RunCgroups,
};
pub use confine::{Bind, Confinement, DataDirs, partition_uid};
pub use gate::pidfd::{SignalGate, Stopped, frozen_to_stopped};
pub use partition::ProcessPartition;
pub use prepare::{ProcessBackend, ProcessOptions};
pub use probe::{Capabilities, probe_capabilities};
pub use spawn::{ExecState, ExitStatus, PartitionProcess, SpawnSpec, Spawned, StartState, spawn};
pub use spawner::Spawner;

pub use super::strict;

/// Errors of the process backend. Each names what was attempted and on which path.
#[derive(Debug)]
pub enum Error {
    /// A system call or file operation failed.
    Io { what: String, source: io::Error },
    /// The partition program does not exist.
    ProgramMissing(PathBuf),
    /// The partition program exists but cannot be executed (not a regular file, no `x` bit).
    NotExecutable(PathBuf),
    /// The child failed before or at `execve`; `stage` says where.
    Child { program: PathBuf, stage: &'static str, source: io::Error },
    /// A privilege the backend needs is missing and `CI=true` forbids degrading.
    MissingCapability { what: String, source: io::Error },
    /// Waited too long, e.g. for a cgroup to report `frozen 1`.
    Timeout { what: String },
    /// The kernel or the mount layout does not offer a needed feature.
    Unsupported(String),
}

impl Error {
    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Error {
        Error::Io { what: what.into(), source }
    }

    /// The underlying OS error number, if any.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            Error::Io { source, .. } | Error::Child { source, .. } | Error::MissingCapability { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// True for EPERM / EACCES / EROFS: the caller may degrade instead of failing.
    pub fn is_permission(&self) -> bool {
        matches!(self.raw_os_error(), Some(libc::EPERM | libc::EACCES | libc::EROFS))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::ProgramMissing(p) => write!(f, "partition program {} does not exist", p.display()),
            Error::NotExecutable(p) => write!(f, "partition program {} is not an executable file", p.display()),
            Error::Child { program, stage, source } => write!(f, "starting {} failed at {stage}: {source}", program.display()),
            Error::MissingCapability { what, source } => {
                write!(f, "{what}: {source} (CI=true: missing capabilities are errors; run as root with cgroup v2 or v1 freezer)")
            }
            Error::Timeout { what } => write!(f, "timed out: {what}"),
            Error::Unsupported(what) => write!(f, "unsupported: {what}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::Child { source, .. } | Error::MissingCapability { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        let kind = match &e {
            Error::Io { source, .. } | Error::Child { source, .. } | Error::MissingCapability { source, .. } => source.kind(),
            Error::ProgramMissing(_) => io::ErrorKind::NotFound,
            Error::NotExecutable(_) => io::ErrorKind::PermissionDenied,
            Error::Timeout { .. } => io::ErrorKind::TimedOut,
            Error::Unsupported(_) => io::ErrorKind::Unsupported,
        };
        io::Error::new(kind, e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// In strict mode (`CI=true`) a permission failure is an error; otherwise it becomes a
/// warning pushed to `warnings` and the caller degrades.
pub(crate) fn degrade(strict: bool, warnings: &mut Vec<String>, what: &str, err: Error) -> Result<()> {
    if strict {
        let source = match err {
            Error::Io { source, .. } | Error::Child { source, .. } | Error::MissingCapability { source, .. } => source,
            other => io::Error::other(other.to_string()),
        };
        return Err(Error::MissingCapability { what: what.to_string(), source });
    }
    warnings.push(format!("{what}: {err}; continuing without it"));
    Ok(())
}
