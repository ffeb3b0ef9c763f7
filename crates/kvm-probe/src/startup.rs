//! Measurement 1: creating a VM up to the guest's first port-I/O exit, and the round trip of a
//! port-I/O exit to the VMM and back.

use std::io;
use std::time::{Duration, Instant};

use kvm_ioctls::{Kvm, VcpuExit};

use crate::stats::Stats;
use crate::sys;
use crate::vm::{Entry, Guest, PORT_PING};

/// Start-up figures.
#[derive(Debug)]
pub struct StartupReport {
    /// KVM_CREATE_VM.
    pub create_vm: Stats,
    /// Guest RAM (memfd, mapping, memory slot), image and page tables.
    pub memory: Stats,
    /// KVM_SET_USER_MEMORY_REGION alone (part of `memory`).
    pub slot: Stats,
    /// KVM_CREATE_VCPU and the long-mode registers.
    pub vcpu: Stats,
    /// The first KVM_RUN up to the guest's first `out`.
    pub first_run: Stats,
    /// KVM_CREATE_VM up to the guest's first `out`, all included (RAM allocation too).
    pub total: Stats,
    /// Guests that reached their first `out` (equals `total.n`).
    pub guests_started: usize,
}

/// Creates `trials` VMs of `mem_mib` MiB one after another on the calling thread (pinned to
/// `cpu`), each run to its first port-I/O exit and dropped.
pub fn measure_startup(kvm: &Kvm, mem_mib: usize, trials: usize, cpu: usize) -> io::Result<StartupReport> {
    sys::pin_to_cpu(cpu)?;
    let (mut create, mut memory, mut slot, mut vcpu, mut first, mut total) = (vec![], vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..trials {
        let t0 = Instant::now();
        let ram = sys::memfd("partita-kvm-probe", mem_mib << 20)?;
        let (mut guest, times) = Guest::create(kvm, &ram, mem_mib, Entry::IoPing)?;
        let t1 = Instant::now();
        guest.run_to_start()?;
        let t2 = Instant::now();
        create.push(times.create_vm);
        memory.push(t1 - t0 - times.create_vm - times.vcpu);
        vcpu.push(times.vcpu);
        slot.push(times.slot);
        first.push(t2 - t1);
        total.push(t2 - t0);
    }
    Ok(StartupReport {
        create_vm: Stats::of(&create),
        memory: Stats::of(&memory),
        slot: Stats::of(&slot),
        vcpu: Stats::of(&vcpu),
        first_run: Stats::of(&first),
        total: Stats::of(&total),
        guests_started: total.len(),
    })
}

/// Round trips of a port-I/O exit: KVM_RUN returning on the guest's `out`, re-entered at once,
/// `exits` times on one VM (the calling thread pinned to `cpu`).
pub fn measure_io_exit(kvm: &Kvm, mem_mib: usize, exits: usize, cpu: usize) -> io::Result<Stats> {
    sys::pin_to_cpu(cpu)?;
    let ram = sys::memfd("partita-kvm-probe", mem_mib << 20)?;
    let (mut guest, _) = Guest::create(kvm, &ram, mem_mib, Entry::IoPing)?;
    guest.run_to_start()?;
    let mut samples: Vec<Duration> = Vec::with_capacity(exits);
    while samples.len() < exits {
        let t = Instant::now();
        match guest.vcpu.run() {
            Ok(VcpuExit::IoOut(PORT_PING, _)) => samples.push(t.elapsed()),
            Ok(exit) => return Err(io::Error::other(format!("unexpected exit: {exit:?}"))),
            Err(e) if e.errno() == libc::EINTR => {}
            Err(e) => return Err(io::Error::other(format!("KVM_RUN: {e}"))),
        }
    }
    Ok(Stats::of(&samples))
}
