//! The process backend's [`PartitionGate`]s (measurements in docs/scheduling.md):
//!
//! - [`CgroupGate`] (default): writing `1` to the partition's `cgroup.freeze` marks every task
//!   of the partition at once to trap into the freezer before it returns to user mode,
//!   sleeping ones included; `frozen 1` confirms the stop before the core's next boundary.
//! - [`ProcessGate`] (`PARTITA_GATE=signal`, for measurements only): SIGSTOP, then
//!   `waitid(WSTOPPED)` until every thread has stopped. A process-wide SIGSTOP is delivered to
//!   one thread (normally the main one), which starts the group stop only when it runs: a busy
//!   thread of higher priority on the same core never lets it, and the stop never completes.

use crate::backend::{PartitionCgroup, SignalGate};
use crate::gate::PartitionGate;
use std::io;
use std::sync::{Arc, RwLock};

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
}

/// Signals to the partition's current program (it changes when the partition restarts; the
/// scheduler only takes the uncontended read lock).
#[derive(Default)]
pub struct ProcessGate {
    current: RwLock<Option<SignalGate>>,
}

impl ProcessGate {
    /// Installs the handle of a newly started program (None: no program runs).
    pub fn set(&self, gate: Option<SignalGate>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = gate;
    }
}

impl PartitionGate for ProcessGate {
    fn request_stop(&self) -> io::Result<()> {
        match &*self.current.read().unwrap_or_else(|e| e.into_inner()) {
            Some(g) => g.stop().map(|_| ()),
            None => Ok(()),
        }
    }

    fn is_stopped(&self) -> io::Result<bool> {
        Ok(true)
    }

    fn release(&self) -> io::Result<()> {
        match &*self.current.read().unwrap_or_else(|e| e.into_inner()) {
            Some(g) => g.release(),
            None => Ok(()),
        }
    }

    fn mechanism(&self) -> &'static str {
        "sigstop+waitid"
    }
}
