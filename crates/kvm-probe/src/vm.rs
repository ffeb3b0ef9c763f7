//! A minimal long-mode VMM: guest RAM from a memfd (vm-memory), one vCPU (kvm-ioctls) started
//! directly in 64-bit mode, and a few bytes of guest code.
//!
//! Guest physical memory map (identity-mapped with 2 MiB pages over all of RAM):
//!
//! | address | what |
//! |---|---|
//! | 0x0500 | GDT: null, 64-bit code (0x08), data (0x10) |
//! | 0x1000, 0x2000, 0x3000 | PML4, PDPT, PD |
//! | 0x1_0000 | guest code ([`GUEST_CODE`]) |
//! | 0x2_0000 | the counter the spinning guest increments ([`COUNTER_ADDR`]) |

use std::fs::File;
use std::io;
use std::time::{Duration, Instant};

use kvm_bindings::{kvm_segment, kvm_userspace_memory_region};
use kvm_ioctls::{Kvm, VcpuExit, VcpuFd, VmFd};
use vm_memory::{Bytes, FileOffset, GuestAddress, GuestMemoryMmap, GuestRegionMmap, MmapRegion};

const GDT_ADDR: u64 = 0x500;
const PML4_ADDR: u64 = 0x1000;
const PDPT_ADDR: u64 = 0x2000;
const PD_ADDR: u64 = 0x3000;
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
    /// Kept so that the VM outlives its vCPU.
    pub vm: VmFd,
    /// The only vCPU.
    pub vcpu: VcpuFd,
    /// Guest RAM as the VMM sees it.
    pub mem: GuestMemoryMmap,
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

fn mem_err(what: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{what}: {e}"))
}

impl Guest {
    /// Creates a VM whose `ram` (a memfd of at least `mem_mib` MiB) is its RAM from address 0,
    /// loads the guest code, and sets up one vCPU in long mode at `entry`.
    pub fn create(kvm: &Kvm, ram: &File, mem_mib: usize, entry: Entry) -> io::Result<(Guest, SetupTimes)> {
        let t0 = Instant::now();
        let vm = kvm.create_vm().map_err(|e| kvm_err("KVM_CREATE_VM", e))?;
        let t1 = Instant::now();
        let size = mem_mib << 20;
        let region = MmapRegion::from_file(FileOffset::new(ram.try_clone()?, 0), size).map_err(|e| mem_err("mapping guest RAM", e))?;
        let host = region.as_ptr() as u64;
        let region = GuestRegionMmap::new(region, GuestAddress(0)).ok_or_else(|| mem_err("guest RAM", "overflow"))?;
        let mem = GuestMemoryMmap::from_regions(vec![region]).map_err(|e| mem_err("guest RAM", e))?;
        let slot = kvm_userspace_memory_region { slot: 0, flags: 0, guest_phys_addr: 0, memory_size: size as u64, userspace_addr: host };
        let ts = Instant::now();
        // SAFETY: `host` is a live mapping of `size` bytes owned by `mem`, which the returned Guest
        // keeps alive as long as the VM; the slot is the VM's only one.
        unsafe { vm.set_user_memory_region(slot) }.map_err(|e| kvm_err("KVM_SET_USER_MEMORY_REGION", e))?;
        let slot_time = ts.elapsed();
        write_image(&mem, size)?;
        let tm = Instant::now();
        let vcpu = vm.create_vcpu(0).map_err(|e| kvm_err("KVM_CREATE_VCPU", e))?;
        set_long_mode(&vcpu, entry)?;
        let t2 = Instant::now();
        Ok((Guest { vm, vcpu, mem }, SetupTimes { create_vm: t1 - t0, memory: tm - t1, vcpu: t2 - tm, slot: slot_time }))
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

/// Writes the GDT, the identity-mapping page tables (2 MiB pages over all of RAM) and the code.
fn write_image(mem: &GuestMemoryMmap, size: usize) -> io::Result<()> {
    let w = |what: &str, bytes: &[u8], addr: u64| mem.write_slice(bytes, GuestAddress(addr)).map_err(|e| mem_err(what, e));
    let gdt: [u64; 3] = [0, 0x00af_9b00_0000_ffff, 0x00cf_9300_0000_ffff];
    w("GDT", &u64s(&gdt), GDT_ADDR)?;
    const PRESENT_WRITABLE: u64 = 0b11;
    const HUGE: u64 = 1 << 7;
    w("PML4", &(PDPT_ADDR | PRESENT_WRITABLE).to_le_bytes(), PML4_ADDR)?;
    w("PDPT", &(PD_ADDR | PRESENT_WRITABLE).to_le_bytes(), PDPT_ADDR)?;
    let pages = size.div_ceil(2 << 20).min(512);
    let pd: Vec<u64> = (0..pages as u64).map(|i| (i << 21) | PRESENT_WRITABLE | HUGE).collect();
    w("PD", &u64s(&pd), PD_ADDR)?;
    w("guest code", &GUEST_CODE, CODE_ADDR)?;
    w("counter", &0u64.to_le_bytes(), COUNTER_ADDR)
}

fn u64s(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Special and general registers of a vCPU entering 64-bit code directly: paging with PAE and
/// long mode on, flat segments matching the GDT.
fn set_long_mode(vcpu: &VcpuFd, entry: Entry) -> io::Result<()> {
    let mut sregs = vcpu.get_sregs().map_err(|e| kvm_err("KVM_GET_SREGS", e))?;
    let code = kvm_segment {
        base: 0,
        limit: 0xffff_ffff,
        selector: 0x08,
        type_: 0xb,
        present: 1,
        dpl: 0,
        db: 0,
        s: 1,
        l: 1,
        g: 1,
        ..Default::default()
    };
    let data = kvm_segment { selector: 0x10, type_: 0x3, db: 1, l: 0, ..code };
    sregs.cs = code;
    (sregs.ds, sregs.es, sregs.fs, sregs.gs, sregs.ss) = (data, data, data, data, data);
    sregs.gdt.base = GDT_ADDR;
    sregs.gdt.limit = 3 * 8 - 1;
    const CR0_PE: u64 = 1;
    const CR0_MP: u64 = 1 << 1;
    const CR0_ET: u64 = 1 << 4;
    const CR0_NE: u64 = 1 << 5;
    const CR0_WP: u64 = 1 << 16;
    const CR0_PG: u64 = 1 << 31;
    const CR4_PAE: u64 = 1 << 5;
    const EFER_LME: u64 = 1 << 8;
    const EFER_LMA: u64 = 1 << 10;
    sregs.cr3 = PML4_ADDR;
    sregs.cr4 = CR4_PAE;
    sregs.cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_PG;
    sregs.efer = EFER_LME | EFER_LMA;
    vcpu.set_sregs(&sregs).map_err(|e| kvm_err("KVM_SET_SREGS", e))?;
    let regs = kvm_bindings::kvm_regs { rip: entry.rip(), rflags: 0x2, rsp: CODE_ADDR, ..Default::default() };
    vcpu.set_regs(&regs).map_err(|e| kvm_err("KVM_SET_REGS", e))
}
