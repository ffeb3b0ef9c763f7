//! The process backend's [`PartitionGate`]: freezing and thawing the partition's cgroup
//! (docs/scheduling.md). Writing `1` to `cgroup.freeze` marks every task of the cgroup to trap
//! into the freezer before it returns to user mode; `frozen 1` in `cgroup.events` confirms it.

use crate::backend::PartitionCgroup;
use crate::gate::PartitionGate;
use std::io;
use std::sync::Arc;

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
        match self.cgroup.freezer_kind() {
            crate::backend::FreezerKind::V2 => "cgroup-v2-freeze",
            crate::backend::FreezerKind::V1 => "cgroup-v1-freezer",
            _ => "none",
        }
    }
}
