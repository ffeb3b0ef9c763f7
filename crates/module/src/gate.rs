//! What a scheduler thread needs from a backend to run a partition in its windows: a way to
//! stop it completely and to release it. The process backend freezes and thaws the
//! partition's cgroup; the kvm backend will stop and release vCPU threads.

use std::io;

pub trait PartitionGate: Send + Sync {
    /// Returns once no thread of the partition can run any more.
    fn stop(&self) -> io::Result<()>;
    /// Lets the partition run again.
    fn release(&self) -> io::Result<()>;
    /// A short name of the mechanism, for the trace header and the summary.
    fn mechanism(&self) -> &'static str;
}
