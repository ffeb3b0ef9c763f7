//! The process backend's [`PartitionGate`]: freezing and thawing the partition's cgroup. The
//! stop returns only when the kernel reports the cgroup frozen (docs/scheduling.md).

use crate::backend::{FreezeWait, PartitionCgroup};
use crate::gate::PartitionGate;
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// Longest a freeze may take before the stop is reported as failed.
const FREEZE_TIMEOUT: Duration = Duration::from_millis(200);

pub struct CgroupGate {
    pub cgroup: Arc<PartitionCgroup>,
    pub wait: FreezeWait,
}

impl PartitionGate for CgroupGate {
    fn stop(&self) -> io::Result<()> {
        self.cgroup.freeze_with(self.wait, FREEZE_TIMEOUT).map_err(|e| io::Error::other(e.to_string()))
    }

    fn release(&self) -> io::Result<()> {
        self.cgroup.thaw()
    }

    fn mechanism(&self) -> &'static str {
        match self.cgroup.freezer_kind() {
            crate::backend::FreezerKind::V2 => "cgroup-v2-freeze",
            crate::backend::FreezerKind::V1 => "cgroup-v1-freezer",
            _ => "none",
        }
    }
}
