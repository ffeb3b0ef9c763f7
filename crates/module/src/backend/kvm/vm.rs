//! One VM and its guest RAM: the RAM is a memfd mapped with vm-memory and given to KVM as
//! memory slot 0 at guest-physical 0, once (a slot change waits for an SRCU grace period,
//! milliseconds here: docs/kvm.md). A restart empties the RAM in place (the memfd's pages are
//! punched out; the slot and the mapping stay) and the image is loaded again.
//!
//! Guest-physical memory map (identity-mapped with 2 MiB pages over all of RAM):
//!
//! | address | what |
//! |---|---|
//! | 0x0500 | GDT: null, 64-bit code (0x08), data (0x10) |
//! | 0x1000, 0x2000, 0x3000 | PML4, PDPT, PD |
//! | 0x4000 | the page table of the 2 MiB region holding the stack's guard page |
//! | 0x5000 | the guest's progress word ([`PROGRESS_ADDR`]) |
//! | 0x5100 | the guest's exception record ([`FAULT_RECORD_ADDR`]) |
//! | 0x6000 | the 64-bit TSS (IST1 = the exception stack) |
//! | 0x7000 .. 0x8000 | the exception stack ([`EXCEPTION_STACK_TOP`]) |
//! | image end (4 KiB-aligned) | the stack's guard page: not mapped |
//! | 0x10_0000 ([`IMAGE_BASE`]) .. top | the guest image's PT_LOAD segments, then its stack (top of RAM down) |

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use kvm_bindings::{kvm_segment, kvm_userspace_memory_region};
use kvm_ioctls::{Kvm, VcpuFd, VmFd};
use vm_memory::{Bytes, FileOffset, GuestAddress, GuestMemoryMmap, GuestRegionMmap, MmapRegion};

const GDT_ADDR: u64 = 0x500;
const PML4_ADDR: u64 = 0x1000;
const PDPT_ADDR: u64 = 0x2000;
const PD_ADDR: u64 = 0x3000;
/// The 4 KiB page table of the 2 MiB region holding the stack's guard page.
const GUARD_PT_ADDR: u64 = 0x4000;
/// The 64-bit TSS: its IST1 is the exception stack, so that a fault with a broken stack (a
/// stack overflow into the guard page) still reaches the guest's exception stub.
const TSS_ADDR: u64 = 0x6000;
/// Top of the 4 KiB exception stack (IST1), below it down to 0x7000.
pub const EXCEPTION_STACK_TOP: u64 = 0x8000;
/// Guest-physical address of a `u64` the guest may bump as it makes progress; the VMM reads it
/// for its park/resume records only (`PARTITA_KVM_RECORD`, vcpu.rs).
pub const PROGRESS_ADDR: u64 = 0x5000;
/// Guest-physical address of the record a guest's exception stub writes before it reports the
/// exception (`u64`s: vector, error code, rip, cr2; guest/traps.S). Written by the guest, so
/// only read for the message.
pub const FAULT_RECORD_ADDR: u64 = 0x5100;
/// Lowest guest-physical address an image segment may use: below it is the VMM's.
pub const IMAGE_BASE: u64 = 0x10_0000;
/// Largest guest RAM: one page directory of 2 MiB pages maps 1 GiB.
pub const MAX_RAM: usize = 1 << 30;

/// How long each part of creating a VM took (the probe reports them).
#[derive(Clone, Copy, Debug, Default)]
pub struct SetupTimes {
    /// The KVM_CREATE_VM ioctl.
    pub create_vm: Duration,
    /// Mapping guest RAM and the memory slot.
    pub memory: Duration,
    /// The KVM_SET_USER_MEMORY_REGION ioctl alone (part of `memory`).
    pub slot: Duration,
}

pub(crate) fn kvm_err(what: &str, e: kvm_ioctls::Error) -> io::Error {
    io::Error::new(io::Error::from_raw_os_error(e.errno()).kind(), format!("{what}: {e}"))
}

fn mem_err(what: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{what}: {e}"))
}

/// A VM whose RAM is `ram` (a memfd) from guest-physical 0.
pub struct Vm {
    /// Kept so that the VM outlives its vCPUs.
    pub fd: VmFd,
    /// Guest RAM as the VMM sees it.
    pub mem: GuestMemoryMmap,
    /// RAM size in bytes (a multiple of 2 MiB).
    pub size: usize,
    ram: File,
}

impl Vm {
    /// Creates a VM with `size` bytes of RAM (rounded up to 2 MiB, at most [`MAX_RAM`]) backed by
    /// `ram`, which is grown to that size; the memory slot is made here, once.
    pub fn create(kvm: &Kvm, ram: File, size: usize) -> io::Result<(Vm, SetupTimes)> {
        let size = size.max(2 << 20).next_multiple_of(2 << 20);
        if size > MAX_RAM {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{size} bytes of guest RAM: at most {MAX_RAM}")));
        }
        ram.set_len(size as u64)?;
        let t0 = Instant::now();
        let fd = kvm.create_vm().map_err(|e| kvm_err("KVM_CREATE_VM", e))?;
        let t1 = Instant::now();
        let region = MmapRegion::from_file(FileOffset::new(ram.try_clone()?, 0), size).map_err(|e| mem_err("mapping guest RAM", e))?;
        let host = region.as_ptr() as u64;
        let region = GuestRegionMmap::new(region, GuestAddress(0)).ok_or_else(|| mem_err("guest RAM", "overflow"))?;
        let mem = GuestMemoryMmap::from_regions(vec![region]).map_err(|e| mem_err("guest RAM", e))?;
        let slot = kvm_userspace_memory_region { slot: 0, flags: 0, guest_phys_addr: 0, memory_size: size as u64, userspace_addr: host };
        let ts = Instant::now();
        // SAFETY: `host` is a live mapping of `size` bytes owned by `mem`, which the returned Vm
        // keeps alive as long as the VM; the slot is the VM's only one.
        unsafe { fd.set_user_memory_region(slot) }.map_err(|e| kvm_err("KVM_SET_USER_MEMORY_REGION", e))?;
        let t2 = Instant::now();
        Ok((Vm { fd, mem, size, ram }, SetupTimes { create_vm: t1 - t0, memory: t2 - t1, slot: t2 - ts }))
    }

    /// Empties the RAM in place: every page of the memfd is released (it reads as zeros again),
    /// while the mapping and the memory slot stay. Used before an image is loaded again.
    pub fn clear(&self) -> io::Result<()> {
        // SAFETY: fallocate on our own memfd; KEEP_SIZE leaves its length (and so the mapping) as is.
        let r =
            unsafe { libc::fallocate(self.ram.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 0, self.size as i64) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Writes `bytes` at guest-physical `addr`.
    pub fn write(&self, what: &str, bytes: &[u8], addr: u64) -> io::Result<()> {
        self.mem.write_slice(bytes, GuestAddress(addr)).map_err(|e| mem_err(what, e))
    }

    /// Reads the `u64` at guest-physical `addr` (0 when outside RAM).
    pub fn read_u64(&self, addr: u64) -> u64 {
        self.mem.read_obj::<u64>(GuestAddress(addr)).unwrap_or(0)
    }

    /// Writes the GDT (with a 64-bit TSS whose IST1 is the exception stack) and the identity-
    /// mapping page tables (2 MiB pages over all of RAM), leaving the 4 KiB page at `guard` (if
    /// any, 4 KiB-aligned, inside RAM) unmapped: the stack's guard page.
    pub fn write_boot_tables(&self, guard: Option<u64>) -> io::Result<()> {
        // null, 64-bit code (0x08), data (0x10), TSS (0x18, 16 bytes).
        let (base, limit) = (TSS_ADDR, 0x67u64);
        let tss_low = (limit & 0xffff) | ((base & 0xff_ffff) << 16) | (0x89 << 40) | (((base >> 24) & 0xff) << 56);
        let gdt: [u64; 5] = [0, 0x00af_9b00_0000_ffff, 0x00cf_9300_0000_ffff, tss_low, base >> 32];
        self.write("GDT", &u64s(&gdt), GDT_ADDR)?;
        // TSS: IST1 at offset 0x24.
        let mut tss = [0u8; 0x68];
        tss[0x24..0x2c].copy_from_slice(&EXCEPTION_STACK_TOP.to_le_bytes());
        tss[0x66..0x68].copy_from_slice(&0x68u16.to_le_bytes()); // no I/O permission bitmap
        self.write("TSS", &tss, TSS_ADDR)?;
        const PRESENT_WRITABLE: u64 = 0b11;
        const HUGE: u64 = 1 << 7;
        self.write("PML4", &(PDPT_ADDR | PRESENT_WRITABLE).to_le_bytes(), PML4_ADDR)?;
        self.write("PDPT", &(PD_ADDR | PRESENT_WRITABLE).to_le_bytes(), PDPT_ADDR)?;
        let pages = self.size.div_ceil(2 << 20).min(512);
        let mut pd: Vec<u64> = (0..pages as u64).map(|i| (i << 21) | PRESENT_WRITABLE | HUGE).collect();
        if let Some(g) = guard.filter(|&g| g % 4096 == 0 && g < self.size as u64) {
            let region = g >> 21;
            let pt: Vec<u64> =
                (0..512u64).map(|j| (region << 21) | (j << 12)).map(|a| if a == g { 0 } else { a | PRESENT_WRITABLE }).collect();
            self.write("guard page table", &u64s(&pt), GUARD_PT_ADDR)?;
            pd[region as usize] = GUARD_PT_ADDR | PRESENT_WRITABLE;
        }
        self.write("PD", &u64s(&pd), PD_ADDR)
    }
}

fn u64s(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Puts `vcpu` at the state of a reset straight into 64-bit code: paging with PAE and long
/// mode on, flat segments matching the GDT of [`Vm::write_boot_tables`], interrupts off,
/// `rip`, `rsp`, and `rdi` = `arg` (the start-up code's first argument). Also how a restart
/// resets a vCPU's registers.
pub fn set_long_mode(vcpu: &VcpuFd, rip: u64, rsp: u64, arg: u64) -> io::Result<()> {
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
    sregs.gdt.limit = 5 * 8 - 1;
    // The TSS of `write_boot_tables` (busy 64-bit TSS), for the exception stack (IST1).
    sregs.tr = kvm_segment { base: TSS_ADDR, limit: 0x67, selector: 0x18, type_: 0xb, present: 1, s: 0, ..Default::default() };
    sregs.idt.base = 0;
    sregs.idt.limit = 0;
    const CR0_PE: u64 = 1;
    const CR0_MP: u64 = 1 << 1;
    const CR0_ET: u64 = 1 << 4;
    const CR0_NE: u64 = 1 << 5;
    const CR0_WP: u64 = 1 << 16;
    const CR0_PG: u64 = 1 << 31;
    const CR4_PAE: u64 = 1 << 5;
    const CR4_OSFXSR: u64 = 1 << 9;
    const CR4_OSXMMEXCPT: u64 = 1 << 10;
    const EFER_LME: u64 = 1 << 8;
    const EFER_LMA: u64 = 1 << 10;
    sregs.cr3 = PML4_ADDR;
    sregs.cr4 = CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT;
    sregs.cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_PG;
    sregs.efer = EFER_LME | EFER_LMA;
    vcpu.set_sregs(&sregs).map_err(|e| kvm_err("KVM_SET_SREGS", e))?;
    let regs = kvm_bindings::kvm_regs { rip, rflags: 0x2, rsp, rdi: arg, ..Default::default() };
    vcpu.set_regs(&regs).map_err(|e| kvm_err("KVM_SET_REGS", e))
}
