//! The module's side of a partition's control block: a memfd holding one
//! [`partita_abi::ControlBlock`], mapped shared, initialized before the partition starts and
//! passed to it as fd 3.

use crate::plan::{Plan, PlannedPartition};
use crate::ports::PartitionPorts;
use partita_abi::{
    ABI_MAGIC, ABI_VERSION, ControlBlock, MAX_CORES, MAX_SCHEDULES, ScheduleEntry, ScheduleSnapshot, mode, name_bytes, schedule_flags,
};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

pub struct SharedControl {
    block: NonNull<ControlBlock>,
    fd: OwnedFd,
    /// The partition's port descriptors, passed beside the control block (fds 5, 6, ...).
    ports: PartitionPorts,
}

// SAFETY: the mapping is only accessed through `&ControlBlock`, whose mutable state is atomics
// (the plain fields are written once in `create`, before the value is shared; `epoch_ns` again
// in `set_epoch`, before any reader exists).
unsafe impl Send for SharedControl {}
// SAFETY: as above.
unsafe impl Sync for SharedControl {}

const SIZE: usize = std::mem::size_of::<ControlBlock>();

impl SharedControl {
    /// A fresh control block for partition `p` (index `index` in the plan) in a new memfd.
    pub fn create(plan: &Plan, index: usize, epoch_ns: i64) -> io::Result<SharedControl> {
        let p = &plan.partitions[index];
        let name = std::ffi::CString::new(format!("partita-{}", p.name)).unwrap_or_default();
        // SAFETY: memfd_create with a valid NUL-terminated name; the result is checked.
        let raw = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: ftruncate on our own memfd; the new pages read as zeros.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), SIZE as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: mapping SIZE bytes of the memfd shared and read-write; checked below.
        let ptr =
            unsafe { libc::mmap(std::ptr::null_mut(), SIZE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let block = NonNull::new(ptr.cast::<ControlBlock>()).ok_or_else(io::Error::last_os_error)?;
        // SAFETY: the mapping is fresh, zeroed (valid for every field: integers and atomics),
        // page-aligned and not yet shared with anyone, so a unique reference is sound here.
        let cb = unsafe { &mut *block.as_ptr() };
        init(cb, plan, p, epoch_ns);
        Ok(SharedControl { block, fd, ports: PartitionPorts::default() })
    }

    /// Writes the module's epoch, decided once the partition programs are started
    /// (`RunState::set_epoch`). Only before the partition's first window: its program has not
    /// executed an instruction yet (it waits before `execve`), and no thread of the module reads
    /// the field.
    pub fn set_epoch(&self, plan: &Plan, epoch_ns: i64) {
        // SAFETY: a plain aligned i64 field of the live mapping; nobody reads it concurrently
        // (see above), and the partition reads it only after its first window opens, which the
        // scheduler threads started after this call open.
        unsafe { std::ptr::addr_of_mut!((*self.block.as_ptr()).epoch_ns).write_volatile(epoch_ns) };
        let me = plan.partitions.iter().position(|q| q.id == self.block().partition_id).unwrap_or(0);
        publish_initial_schedule(self.block(), plan, me, epoch_ns);
    }

    pub fn block(&self) -> &ControlBlock {
        // SAFETY: the mapping lives as long as self; see the Sync impl.
        unsafe { self.block.as_ref() }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    pub fn attach_ports(&mut self, ports: PartitionPorts) {
        self.ports = ports;
    }

    /// The descriptors the partition program gets from fd 5 up.
    pub fn port_fds(&self) -> Vec<BorrowedFd<'_>> {
        self.ports.borrowed()
    }
}

impl Drop for SharedControl {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping created in `create`; no reference outlives self.
        unsafe { libc::munmap(self.block.as_ptr().cast(), SIZE) };
    }
}

fn init(cb: &mut ControlBlock, plan: &Plan, p: &PlannedPartition, epoch_ns: i64) {
    cb.magic = ABI_MAGIC;
    cb.version = ABI_VERSION;
    cb.size = SIZE as u32;
    cb.partition_id = p.id;
    cb.criticality = p.criticality;
    cb.system_partition = u32::from(p.system_partition);
    cb.name = name_bytes(&p.name);
    let cores: Vec<u32> = p.cores.iter().copied().take(MAX_CORES).collect();
    cb.core_count = cores.len() as u32;
    for (i, &core) in cores.iter().enumerate() {
        cb.module_cores[i] = core;
        cb.host_cpus[i] = plan.cores[core as usize].cpu;
    }
    cb.epoch_ns = epoch_ns;
    (cb.rt_base, cb.rt_levels) = p.rt_band;
    let me = plan.partitions.iter().position(|q| q.id == p.id).unwrap_or(0);
    cb.schedule_count = plan.schedules.len().min(MAX_SCHEDULES) as u32;
    for (i, s) in plan.schedules.iter().take(MAX_SCHEDULES).enumerate() {
        let (period_ns, duration_ns) = s.periods[me];
        let flags = if s.may_set_schedule[me] { schedule_flags::MAY_SET_SCHEDULE } else { 0 };
        cb.schedules[i] =
            ScheduleEntry { id: s.id, flags, name: name_bytes(&s.name), major_frame_ns: s.major_frame_ns, period_ns, duration_ns };
    }
    cb.status.operating_mode.store(mode::COLD_START, Ordering::Relaxed);
    cb.status.module_running.store(1, Ordering::Relaxed);
    cb.trace.init();
    cb.hm.reports.init();
    publish_initial_schedule(cb, plan, me, epoch_ns);
}

/// The initial schedule, as begun at the epoch, in partition `me`'s view.
fn publish_initial_schedule(cb: &ControlBlock, plan: &Plan, me: usize, epoch_ns: i64) {
    let initial = &plan.schedules[plan.initial_schedule];
    let (period_ns, duration_ns) = initial.periods[me];
    cb.schedule.publish(&ScheduleSnapshot {
        current_id: initial.id,
        next_id: initial.id,
        started_ns: epoch_ns,
        time_of_last_switch_ns: 0,
        period_ns,
        duration_ns,
    });
}
