//! The kvm backend's [`PartitionGate`]: one [`VcpuControl`] per vCPU, so per module core (each
//! vCPU thread is pinned to the core it serves). A multi-core partition is stopped and released
//! per core ([`PartitionGate::core`]); a single-core one through the gate itself.

use super::vcpu::VcpuControl;
use crate::backend::interface::PartitionGate;
use std::io;
use std::sync::Arc;

/// The gate of one vCPU (so of one module core of the partition).
pub struct VcpuGate {
    pub ctl: Arc<VcpuControl>,
}

impl PartitionGate for VcpuGate {
    fn request_stop(&self) -> io::Result<()> {
        self.ctl.request_stop()
    }
    fn is_stopped(&self) -> io::Result<bool> {
        Ok(self.ctl.is_stopped())
    }
    fn release(&self) -> io::Result<()> {
        self.ctl.release();
        Ok(())
    }
    fn mechanism(&self) -> &'static str {
        MECHANISM
    }
    fn kill_threads(&self) -> io::Result<usize> {
        let n = usize::from(self.ctl.tid().is_some());
        if let Some(tid) = self.ctl.tid() {
            crate::backend::rt::demote_threads([tid]);
        }
        self.ctl.quit();
        Ok(n)
    }
}

/// How the trace and the summary name this gate.
pub const MECHANISM: &str = "kvm-immediate-exit";

/// A kvm partition's gate: its vCPUs' gates, indexed by module core.
pub struct KvmGate {
    /// Per module core: the gate of the vCPU serving it (None: the partition has no window there).
    cores: Vec<Option<VcpuGate>>,
    /// Gated per core (the partition has more than one core).
    per_core: bool,
}

impl KvmGate {
    /// `vcpus`: (module core, control) of each vCPU; `cores`: the module's core count.
    pub fn new(cores: usize, vcpus: &[(usize, Arc<VcpuControl>)]) -> KvmGate {
        let mut by_core: Vec<Option<VcpuGate>> = (0..cores).map(|_| None).collect();
        for (core, ctl) in vcpus {
            if let Some(slot) = by_core.get_mut(*core) {
                *slot = Some(VcpuGate { ctl: ctl.clone() });
            }
        }
        KvmGate { cores: by_core, per_core: vcpus.len() > 1 }
    }

    fn all(&self) -> impl Iterator<Item = &VcpuGate> {
        self.cores.iter().flatten()
    }
}

impl PartitionGate for KvmGate {
    fn request_stop(&self) -> io::Result<()> {
        // Every vCPU is asked first, then the errors are looked at: one failed kick must not
        // leave the others running.
        let results: Vec<io::Result<()>> = self.all().map(|g| g.request_stop()).collect();
        results.into_iter().collect()
    }
    fn is_stopped(&self) -> io::Result<bool> {
        Ok(self.all().all(|g| g.ctl.is_stopped()))
    }
    fn release(&self) -> io::Result<()> {
        self.all().for_each(|g| g.ctl.release());
        Ok(())
    }
    fn mechanism(&self) -> &'static str {
        MECHANISM
    }
    fn kill_threads(&self) -> io::Result<usize> {
        self.all().map(|g| g.kill_threads()).sum()
    }
    fn core(&self, core: usize) -> Option<&dyn PartitionGate> {
        if !self.per_core {
            return None;
        }
        self.cores.get(core)?.as_ref().map(|g| g as &dyn PartitionGate)
    }
}
