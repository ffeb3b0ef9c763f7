//! Groundwork for the kvm backend (issue 12): a minimal VMM built on the rust-vmm crates, and the
//! measurements the backend's partition gate is chosen from.
//!
//! The VMM sets up 64-bit long mode itself (identity-mapped 2 MiB pages, a flat GDT, CR0/CR4/EFER)
//! and runs a few bytes of hand-assembled guest code on one pinned vCPU ([`vm`]). The probe then
//! measures start-up and port-I/O exits ([`startup`]), and stops and releases a vCPU that spins
//! with interrupts off by three mechanisms ([`stop`]): the cgroup v2 freezer on a threaded cgroup
//! holding only the vCPU thread, `immediate_exit` with a signal, and SIGSTOP/SIGCONT. The guest
//! increments a counter in guest RAM, which the controller watches to see the guest run and to
//! prove that it executed nothing after a confirmed stop.
//!
//! The VMM itself (guest RAM, long mode, the vCPU run loop and its stop by `immediate_exit` and a
//! signal) is the kvm backend's, `partita_module::backend::kvm`; the probe measures it. docs/kvm.md
//! has the figures and the choice.

pub mod cgroup;
pub mod startup;
pub mod stats;
pub mod stop;
pub mod sys;
pub mod vm;
