//! The probe's guests: the module's VMM (`partita_module::backend::kvm::vm`: RAM from a memfd
//! as one memory slot, long mode set up by the VMM) with one vCPU and a few bytes of guest code
//! instead of an ELF image.
//!
//! Guest physical memory map (the module's, vm.rs there, plus):
//!
//! | address | what |
//! |---|---|
//! | 0x1_0000 | guest code ([`GUEST_CODE`]) |
//! | 0x2_0000 | the counter the spinning guest increments ([`COUNTER_ADDR`]) |

use std::fs::File;
use std::io;
use std::time::{Duration, Instant};

use kvm_ioctls::{Kvm, VcpuExit, VcpuFd};
use partita_module::backend::kvm::vm::{Vm, set_long_mode};

const CODE_ADDR: u64 = 0x1_0000;
/// Guest-physical address of the `u64` the spinning guest increments.
pub const COUNTER_ADDR: u64 = 0x2_0000;

/// Port of the guest's first `out` (it has started).
pub const PORT_STARTED: u16 = 0x10;
/// Port of the I/O-ping guest's endless `out`s.
pub const PORT_PING: u16 = 0x11;

/// Hand-assembled guest code, loaded at 0x1_0000. Two entry points:
///
/// ```text
/// 0x00  e6 10                    out 0x10, al          ; I/O ping: started
/// 0x02  e6 11                    out 0x11, al          ; one exit per round trip
/// 0x04  eb fc                    jmp 0x02
/// 0x10  e6 10                    out 0x10, al          ; spinner: started
/// 0x12  fa                       cli                   ; interrupts off for good
/// 0x13  48 ff 04 25 00 00 02 00  inc qword [0x20000]   ; the counter the host watches
/// 0x1b  eb f6                    jmp 0x13
/// ```
pub const GUEST_CODE: [u8; 0x1d] = [
    0xe6, 0x10, 0xe6, 0x11, 0xeb, 0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // I/O ping
    0xe6, 0x10, 0xfa, 0x48, 0xff, 0x04, 0x25, 0x00, 0x00, 0x02, 0x00, 0xeb, 0xf6, // spinner
];

/// Which guest program the vCPU starts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// Exits to the VMM on port 0x11 forever.
    IoPing,
    /// Spins with interrupts off, incrementing the counter.
    Spinner,
}

impl Entry {
    fn rip(self) -> u64 {
        match self {
            Entry::IoPing => CODE_ADDR,
            Entry::Spinner => CODE_ADDR + 0x10,
        }
    }
}

/// One VM with one vCPU, its RAM shared through a memfd.
pub struct Guest {
    /// The VM and its RAM; kept so that the VM outlives its vCPU.
    pub vm: Vm,
    /// The only vCPU.
    pub vcpu: VcpuFd,
}

/// How long each part of creating a guest took.
#[derive(Clone, Copy, Debug)]
pub struct SetupTimes {
    /// The KVM_CREATE_VM ioctl.
    pub create_vm: Duration,
    /// Mapping guest RAM, the memory slot, the image and page tables.
    pub memory: Duration,
    /// KVM_CREATE_VCPU and the long-mode registers.
    pub vcpu: Duration,
    /// The KVM_SET_USER_MEMORY_REGION ioctl alone (part of `memory`).
    pub slot: Duration,
}

fn kvm_err(what: &str, e: kvm_ioctls::Error) -> io::Error {
    io::Error::new(io::Error::from_raw_os_error(e.errno()).kind(), format!("{what}: {e}"))
}

impl Guest {
    /// Creates a VM whose `ram` (a memfd of at least `mem_mib` MiB) is its RAM from address 0,
    /// loads the guest code, and sets up one vCPU in long mode at `entry`.
    pub fn create(kvm: &Kvm, ram: &File, mem_mib: usize, entry: Entry) -> io::Result<(Guest, SetupTimes)> {
        let t0 = Instant::now();
        let (vm, times) = Vm::create(kvm, ram.try_clone()?, mem_mib << 20)?;
        vm.write_boot_tables(None)?;
        vm.write("guest code", &GUEST_CODE, CODE_ADDR)?;
        vm.write("counter", &0u64.to_le_bytes(), COUNTER_ADDR)?;
        let tm = Instant::now();
        let vcpu = vm.fd.create_vcpu(0).map_err(|e| kvm_err("KVM_CREATE_VCPU", e))?;
        set_long_mode(&vcpu, entry.rip(), CODE_ADDR, 0)?;
        let t2 = Instant::now();
        let memory = (tm - t0).saturating_sub(times.create_vm);
        Ok((Guest { vm, vcpu }, SetupTimes { create_vm: times.create_vm, memory, vcpu: t2 - tm, slot: times.slot }))
    }

    /// Runs the vCPU until the guest's first `out` to [`PORT_STARTED`].
    pub fn run_to_start(&mut self) -> io::Result<()> {
        loop {
            match self.vcpu.run() {
                Ok(VcpuExit::IoOut(PORT_STARTED, _)) => return Ok(()),
                Ok(exit) => return Err(io::Error::other(format!("unexpected exit before start: {exit:?}"))),
                Err(e) if e.errno() == libc::EINTR => continue,
                Err(e) => return Err(kvm_err("KVM_RUN", e)),
            }
        }
    }
}
