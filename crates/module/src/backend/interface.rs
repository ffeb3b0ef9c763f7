//! What a scheduler thread needs from a backend to run a partition in its windows. The process
//! backend stops and releases a partition with signals (signal_gate.rs, the default) or freezes
//! and thaws its cgroups (process_gate.rs); the kvm backend will stop and release vCPU threads.
//!
//! A stop has two steps because completing it takes tens of microseconds here (the kernel must
//! run each thread into its stop): `request_stop` returns once no thread of the partition
//! can execute another instruction of its program; `is_stopped` says whether the kernel has
//! confirmed the stop, which the scheduler checks before the partition's next window.

use std::io;

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
