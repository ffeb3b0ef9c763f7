//! Partition backends and the helpers they share.
//!
//! - [`interface`]: the seam. What the scheduler, the lifecycle thread, the health monitor,
//!   the ports and the trace see of a partition, whatever backend runs it.
//! - [`process`]: the `process` backend (a partition is a Linux process in its own cgroups
//!   and namespaces).
//! - [`kvm`]: the `kvm` backend (a partition is a KVM virtual machine inside the run).
//! - Shared by every backend and by the module's own threads: [`rt`] (pinning, `SCHED_FIFO`,
//!   clocks, futexes), [`rt_throttle`], [`pm_qos`], [`cpu_guard`],
//!   [`guardian`] (cleans up after a killed run, the process backend's cgroups included) and
//!   `sys`.

pub mod cpu_guard;
pub mod guardian;
pub mod interface;
pub mod kvm;
pub mod pm_qos;
pub mod process;
pub mod rt;
pub mod rt_throttle;
pub(crate) mod sys;

/// True when missing capabilities must be errors rather than degrades (`CI=true`).
pub fn strict() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}
