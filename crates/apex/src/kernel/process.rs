//! The process table: one slot per ARINC process, its states, and which process the calling
//! thread is. A process is a pthread created by CREATE_PROCESS (`services::process`), scheduled
//! SCHED_FIFO at the Linux level its priority ranks to (`levels`) and pinned to one partition
//! core; it waits DORMANT until START (see `body`). State changes are in `services::control`.

use crate::kernel::critical::Critical;
use crate::kernel::runtime::{NO_DEADLINE, Runtime};
use crate::kernel::sys;
use crate::kernel::{body, levels, threads};
use crate::names::Name;
use crate::types::*;
use partita_abi::event;
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

/// Values of [`ProcessSlot::state`].
pub const DORMANT: u32 = 0;
pub const STARTED: u32 = 1;
/// The process faulted (SIGFPE, SIGSEGV, ...) and the error went to the error handler, which
/// decides: the thread waits in the fault handler until STOP (START is NO_ACTION meanwhile).
pub const FAULTED: u32 = 2;

/// Bit 0 of [`ProcessSlot::ctl`]: suspended; bit 1: by SUSPEND_SELF (the process waits in the
/// service itself, not in the signal handler). The upper bits count changes, so that a futex
/// waiter on `ctl` sees every STOP/RESUME.
pub const SUSPENDED: u32 = 1;
pub const SELF_SUSPENDED: u32 = 2;
pub const CTL_STEP: u32 = 4;

/// Smallest stack given to a process thread (signal handling and the runtime need some room).
const MIN_STACK: usize = 256 << 10;

thread_local! {
    /// Slot index + 1 of the process running on this thread; 0 for other threads.
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

pub fn set_current(index: Option<usize>) {
    CURRENT.with(|c| c.set(index.map_or(0, |i| i + 1)));
}

/// The calling thread's process slot index, if it is a process.
pub fn current_index() -> Option<usize> {
    CURRENT.with(|c| c.get().checked_sub(1))
}

/// The immutable attributes of a created process.
#[derive(Clone)]
pub struct ProcessConfig {
    pub name: Name,
    pub period: i64,
    pub time_capacity: i64,
    pub entry: EntryPoint,
    pub stack_size: u32,
    pub base_priority: i32,
    pub deadline: Deadline,
}

extern "C" fn no_entry() {}

impl Default for ProcessConfig {
    fn default() -> Self {
        ProcessConfig {
            name: Name::EMPTY,
            period: INFINITE_TIME_VALUE,
            time_capacity: INFINITE_TIME_VALUE,
            entry: no_entry,
            stack_size: 0,
            base_priority: MIN_PRIORITY_VALUE,
            deadline: Deadline::Soft,
        }
    }
}

impl ProcessConfig {
    pub fn periodic(&self) -> bool {
        self.period >= 0
    }
}

#[derive(Default)]
pub struct ProcessSlot {
    /// Written once under the runtime lock before `Runtime::count` publishes the slot.
    config: UnsafeCell<ProcessConfig>,
    pub thread: AtomicU64,
    /// Kernel thread id of its thread (0 until the thread first runs).
    pub tid: AtomicI32,
    pub state: AtomicU32,
    /// 1 while the process is blocked in a runtime wait (start, release, TIMED_WAIT, ...).
    pub waiting: AtomicU32,
    /// Suspension bit and change counter; futex word of a suspended thread.
    pub ctl: AtomicU32,
    /// Incremented by each STOP of this process by another one.
    pub stop_gen: AtomicU32,
    /// Requests (STOP/SUSPEND) made, and acknowledged by the target thread.
    pub req_gen: AtomicU32,
    pub ack_gen: AtomicU32,
    /// Futex word of the thread's waits for START, release points and TIMED_WAIT.
    pub wake: AtomicU32,
    /// The instant of its current timed sleep, and 1 while it waits for it without a timer
    /// (the partition is stopped on its core then; see `dispatch::sleep_until`).
    pub sleep_ns: AtomicI64,
    pub untimed: AtomicU32,
    pub current_priority: AtomicI32,
    /// PROCESSOR_CORE_ID the process is pinned to, or CORE_AFFINITY_NO_PREFERENCE.
    pub core: AtomicI32,
    /// Absolute release point of the current (or next) job.
    pub release_ns: AtomicI64,
    /// Absolute deadline, or NO_DEADLINE.
    pub deadline_ns: AtomicI64,
    /// The last deadline reported missed (each is reported once).
    pub reported_ns: AtomicI64,
    /// DELAYED_START delay given before the partition entered NORMAL.
    pub start_delay: AtomicI64,
    /// Preemption lock level held by this process.
    pub lock_level: AtomicI32,
    /// Its place in a wait queue of an object, if it waits in one (see `waitq`).
    pub wait: crate::kernel::waitq::WaitRecord,
}

// SAFETY: `config` is written only under the runtime lock for the slot at index `count`, which
// no reader looks at until `count` is raised past it with Release ordering; afterwards it is
// immutable. Everything else is atomic.
unsafe impl Sync for ProcessSlot {}

impl ProcessSlot {
    pub fn config(&self) -> &ProcessConfig {
        // SAFETY: see the Sync impl: published slots are immutable.
        unsafe { &*self.config.get() }
    }

    pub fn thread(&self) -> libc::pthread_t {
        self.thread.load(Ordering::Acquire) as libc::pthread_t
    }

    pub fn is_dormant(&self) -> bool {
        self.state.load(Ordering::Acquire) == DORMANT
    }

    pub fn is_suspended(&self) -> bool {
        self.ctl.load(Ordering::Acquire) & SUSPENDED != 0
    }

    /// Started, not faulted, and neither suspended nor waiting: READY or RUNNING.
    pub fn is_ready(&self) -> bool {
        self.state.load(Ordering::Acquire) == STARTED && !self.is_suspended() && self.waiting.load(Ordering::Acquire) == 0
    }
}

/// Whether process `index`, not the caller, is on a CPU right now, on another core than the
/// caller's: its thread is runnable there (`/proc`) and no ready process of the partition of
/// a higher current priority is runnable on the same CPU. Only a multi-core partition can have
/// one (a process of a single-core partition that is not the caller is not running).
pub fn runs_elsewhere(rt: &Runtime, index: usize) -> bool {
    let procs = rt.processes();
    if rt.core_count() < 2 || !procs[index].is_ready() {
        return false;
    }
    let Some(cpu) = runnable_on(&procs[index]) else { return false };
    if Some(cpu) == sys::current_cpu() {
        return false;
    }
    let mine = procs[index].current_priority.load(Ordering::Acquire);
    !procs.iter().enumerate().any(|(j, other)| {
        j != index && other.is_ready() && other.current_priority.load(Ordering::Acquire) > mine && runnable_on(other) == Some(cpu)
    })
}

/// The CPU of a process's thread if the kernel has it runnable (state R in
/// `/proc/self/task/TID/stat`, field 39 the CPU it is on or queued for).
fn runnable_on(slot: &ProcessSlot) -> Option<u32> {
    let tid = slot.tid.load(Ordering::Acquire);
    if tid <= 0 {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
    (fields.first() == Some(&"R")).then(|| fields.get(36)?.parse().ok()).flatten()
}

/// Process id of slot `index`.
pub fn id_of(index: usize) -> ProcessId {
    index as ProcessId + 1
}

/// The slot of process `id`, if it exists.
pub fn lookup(rt: &Runtime, id: ProcessId) -> Option<(usize, &ProcessSlot)> {
    let i = usize::try_from(id).ok()?.checked_sub(1)?;
    rt.processes().get(i).map(|s| (i, s))
}

/// The calling process, if the caller is one.
pub fn current(rt: &Runtime) -> Option<(usize, &ProcessSlot)> {
    let i = current_index()?;
    Some((i, &rt.procs[i]))
}

/// The partition core a process is pinned to (for cross-core STOP/SUSPEND acknowledgement).
pub fn pinned_core(slot: &ProcessSlot) -> Option<i32> {
    let c = slot.core.load(Ordering::Acquire);
    (c >= 0).then_some(c)
}

/// Fills the next free slot with `config`, starts its thread (DORMANT until START, see `body`)
/// and publishes the slot; returns its index, or the error number of the thread creation. The
/// caller (CREATE_PROCESS) checked the attributes and that a slot is free.
pub fn create(c: &Critical<'_>, rt: &Runtime, config: ProcessConfig) -> Result<usize, i32> {
    let index = rt.count.load(Ordering::Relaxed) as usize;
    if index >= MAX_NUMBER_OF_PROCESSES {
        return Err(libc::EAGAIN);
    }
    let slot = &rt.procs[index];
    let base_priority = config.base_priority;
    let stack = (config.stack_size as usize).max(MIN_STACK);
    // SAFETY: slot `index` is not published yet (count == index) and the runtime lock is held
    // (the `Critical`), so no other thread reads or writes its configuration.
    unsafe { *slot.config.get() = config };
    slot.state.store(DORMANT, Ordering::Relaxed);
    slot.ctl.store(0, Ordering::Relaxed);
    slot.current_priority.store(base_priority, Ordering::Relaxed);
    // Without a preference (CORE_AFFINITY_NO_PREFERENCE, the default) a process runs on any of
    // the partition's cores where that keeps it in its windows, else on the first.
    let anywhere = rt.no_preference_runs_anywhere();
    slot.core.store(if anywhere { CORE_AFFINITY_NO_PREFERENCE } else { 0 }, Ordering::Relaxed);
    slot.deadline_ns.store(NO_DEADLINE, Ordering::Relaxed);
    slot.reported_ns.store(NO_DEADLINE, Ordering::Relaxed);
    // Ranked before the slot is published: a new priority moves the other threads first.
    let prio = levels::level(c, rt, base_priority);
    let cpus = if anywhere { rt.host_cpus.clone() } else { vec![rt.host_cpus[0]] };
    let t = threads::spawn(rt, body::process_thread_start(), index as *mut libc::c_void, prio, &cpus, stack)?;
    slot.thread.store(t as u64, Ordering::Release);
    rt.count.store(index as u32 + 1, Ordering::Release);
    rt.trace(event::PROCESS_CREATE, id_of(index) as i64, base_priority as i64);
    Ok(index)
}
