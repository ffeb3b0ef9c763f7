//! The kvm backend (`pt:Backend="kvm"`): a partition is a KVM virtual machine created by
//! `partita run` itself with the rust-vmm crates (docs/kvm.md).
//!
//! - [`vm`]: the VM, its RAM (a memfd, one memory slot for the run) and 64-bit long mode.
//! - [`elf`]: the guest image loader (untrusted input, every header value checked).
//! - [`vcpu`]: a vCPU thread's run loop and the stop mechanism (`immediate_exit` + a signal,
//!   the thread's own acknowledgement, a futex release).
//! - [`gate`]: the [`crate::backend::interface::PartitionGate`] over a partition's vCPUs.
//! - [`partition`]: the [`crate::backend::interface::Backend`] and
//!   [`crate::backend::interface::Partition`].
//!
//! The guest's side of the ports below is `guest/` (start-up code and a console helper).

pub mod elf;
pub mod gate;
pub mod partition;
pub mod vcpu;
pub mod vm;

pub use partition::{KvmBackend, KvmPartition};

/// The guest's console: each byte written here goes to the partition's output, as a process
/// partition's stdout (the Bochs/QEMU debug-console port).
pub const CONSOLE_PORT: u16 = 0xe9;
/// The guest's end: a write here (1, 2 or 4 bytes: the status) ends the partition.
pub const EXIT_PORT: u16 = 0xf4;
/// A CPU exception in the guest (its start-up code's stubs, guest/traps.S): the vector is
/// written here after a record at [`vm::FAULT_RECORD_ADDR`]; the partition ends with the
/// exception's health-monitor error ([`partition::exception_error`]).
pub const FAULT_PORT: u16 = 0xf6;
/// Guest RAM when the configuration gives the partition no memory.
pub const DEFAULT_RAM: usize = 16 << 20;
/// Room kept for the guest's stack between its image and the top of RAM.
pub const STACK_MIN: u64 = 64 << 10;
/// Opens /dev/kvm and checks what the backend relies on; the error says why it is unusable.
pub fn open_kvm() -> Result<kvm_ioctls::Kvm, String> {
    let kvm = kvm_ioctls::Kvm::new().map_err(|e| format!("/dev/kvm is unusable: {e}"))?;
    // Anything else opened at that path (a device that is not KVM) fails here.
    let version = kvm.get_api_version();
    if version != kvm_bindings::KVM_API_VERSION as i32 {
        return Err(format!("/dev/kvm is unusable: it answered KVM_GET_API_VERSION with {version}, not {}", kvm_bindings::KVM_API_VERSION));
    }
    if !kvm.check_extension(kvm_ioctls::Cap::ImmediateExit) {
        return Err("/dev/kvm lacks KVM_CAP_IMMEDIATE_EXIT, which the kvm gate needs".into());
    }
    Ok(kvm)
}
