//! ARINC processes: the process table, CREATE_PROCESS, the query services (which make no
//! system call) and core affinity. A process is a pthread created by CREATE_PROCESS, scheduled
//! SCHED_FIFO at `10 + priority` and pinned to one partition core; it waits DORMANT until START
//! (see `body`). State changes are in `control`.

use crate::kernel::critical::Critical;
use crate::kernel::runtime::{NO_DEADLINE, Runtime, rt};
use crate::kernel::{body, sys, threads};
use crate::names::Name;
use crate::types::*;
use partita_abi::{event, mode};
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

/// CREATE_PROCESS.
pub fn create_process(attr: &ProcessAttribute) -> ApexResult<ProcessId> {
    let rt = rt();
    // Checked first, so that a process calling CREATE_PROCESS gets INVALID_MODE whatever the
    // attributes (the standard lists it last; it is the one a running partition can hit).
    if rt.mode() == mode::NORMAL {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let _c = Critical::enter(rt);
    let index = rt.count.load(Ordering::Relaxed) as usize;
    if index >= MAX_NUMBER_OF_PROCESSES {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    if rt.processes().iter().any(|s| s.config().name == attr.name) {
        return Err(ErrorReturnCode::NoAction);
    }
    if attr.stack_size > MAX_STACK_SIZE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if !(MIN_PRIORITY_VALUE..=MAX_PRIORITY_VALUE).contains(&attr.base_priority) {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if attr.period != INFINITE_TIME_VALUE && attr.period <= 0 {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let partition_period = rt.schedule().period_ns;
    if attr.period > 0 && partition_period > 0 && attr.period % partition_period != 0 {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    if attr.time_capacity != INFINITE_TIME_VALUE && attr.time_capacity <= 0 {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if attr.period > 0 && attr.time_capacity > attr.period {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let slot = &rt.procs[index];
    // SAFETY: slot `index` is not published yet (count == index) and we hold the runtime lock,
    // so no other thread reads or writes its configuration.
    unsafe {
        *slot.config.get() = ProcessConfig {
            name: attr.name,
            period: attr.period,
            time_capacity: attr.time_capacity,
            entry: attr.entry_point,
            stack_size: attr.stack_size,
            base_priority: attr.base_priority,
            deadline: attr.deadline,
        };
    }
    slot.state.store(DORMANT, Ordering::Relaxed);
    slot.ctl.store(0, Ordering::Relaxed);
    slot.current_priority.store(attr.base_priority, Ordering::Relaxed);
    slot.core.store(0, Ordering::Relaxed);
    slot.deadline_ns.store(NO_DEADLINE, Ordering::Relaxed);
    slot.reported_ns.store(NO_DEADLINE, Ordering::Relaxed);
    let stack = (attr.stack_size as usize).max(MIN_STACK);
    let prio = rt.process_rt_priority(attr.base_priority);
    let cpus = [rt.host_cpus[0]];
    let t = threads::spawn(rt, body::process_thread_start(), index as *mut libc::c_void, prio, &cpus, stack)
        .map_err(|_| ErrorReturnCode::InvalidConfig)?;
    slot.thread.store(t as u64, Ordering::Release);
    rt.count.store(index as u32 + 1, Ordering::Release);
    rt.trace(event::PROCESS_CREATE, id_of(index) as i64, attr.base_priority as i64);
    Ok(id_of(index))
}

/// GET_PROCESS_ID: no system call.
pub fn get_process_id(name: &Name) -> ApexResult<ProcessId> {
    let rt = rt();
    rt.processes().iter().position(|s| s.config().name == *name).map(id_of).ok_or(ErrorReturnCode::InvalidConfig)
}

/// GET_MY_ID: no system call. The initialization process (main) has no id: INVALID_MODE.
pub fn get_my_id() -> ApexResult<ProcessId> {
    let _ = rt();
    current_index().map(id_of).ok_or(ErrorReturnCode::InvalidMode)
}

/// GET_MY_INDEX: the process index (creation order, from 1, equal to the process id here).
pub fn get_my_index() -> ApexResult<ProcessId> {
    get_my_id()
}

/// GET_PROCESS_STATUS: no system call.
pub fn get_process_status(id: ProcessId) -> ApexResult<ProcessStatus> {
    let rt = rt();
    let (i, slot) = lookup(rt, id).ok_or(ErrorReturnCode::InvalidParam)?;
    let cfg = slot.config();
    let dormant = slot.is_dormant();
    let state = if dormant {
        ProcessState::Dormant
    } else if slot.state.load(Ordering::Acquire) == FAULTED {
        ProcessState::Faulted
    } else if slot.is_suspended() || slot.waiting.load(Ordering::Acquire) != 0 {
        ProcessState::Waiting
    } else if current_index() == Some(i) {
        ProcessState::Running
    } else {
        ProcessState::Ready
    };
    let d = slot.deadline_ns.load(Ordering::Acquire);
    let deadline_time = if dormant || d == NO_DEADLINE { INFINITE_TIME_VALUE } else { d - rt.epoch_ns };
    Ok(ProcessStatus {
        deadline_time,
        current_priority: slot.current_priority.load(Ordering::Acquire),
        process_state: state,
        attributes: ProcessAttribute {
            period: cfg.period,
            time_capacity: cfg.time_capacity,
            entry_point: cfg.entry,
            stack_size: cfg.stack_size,
            base_priority: cfg.base_priority,
            deadline: cfg.deadline,
            name: cfg.name,
        },
    })
}

/// GET_MY_PROCESSOR_CORE_ID: the partition core the caller runs on (no system call).
pub fn get_my_processor_core_id() -> ProcessorCoreId {
    let rt = rt();
    if let Some(i) = rt.current_core_index() {
        return i as ProcessorCoreId;
    }
    match current(rt) {
        Some((_, s)) => s.core.load(Ordering::Relaxed).max(0),
        None => 0,
    }
}

/// INITIALIZE_PROCESS_CORE_AFFINITY (COLD_START / WARM_START only).
pub fn initialize_process_core_affinity(id: ProcessId, core: ProcessorCoreId) -> ApexResult<()> {
    let rt = rt();
    let _c = Critical::enter(rt);
    let (_, slot) = lookup(rt, id).ok_or(ErrorReturnCode::InvalidParam)?;
    let cpus: Vec<u32> = match core {
        CORE_AFFINITY_NO_PREFERENCE => rt.host_cpus.clone(),
        c if c >= 0 && (c as usize) < rt.core_count() => vec![rt.host_cpus[c as usize]],
        _ => return Err(ErrorReturnCode::InvalidConfig),
    };
    if rt.mode() == mode::NORMAL {
        return Err(ErrorReturnCode::InvalidMode);
    }
    // Gated per core, a process runs on one core: without a preference, the first.
    let placed = rt.placement.as_ref().map(|p| {
        let target = usize::try_from(core).unwrap_or(0);
        p.tid_of(slot.thread()).ok_or(libc::ESRCH).and_then(|tid| p.move_to(tid, target, rt.host_cpus[target]))
    });
    if let Err(e) = placed.unwrap_or_else(|| sys::set_affinity(slot.thread(), &cpus)) {
        eprintln!("partita-apex: warning: cannot pin process {id} to CPUs {cpus:?}: {}", std::io::Error::from_raw_os_error(e));
    }
    slot.core.store(core, Ordering::Release);
    Ok(())
}

/// The partition core a process is pinned to (for cross-core STOP/SUSPEND acknowledgement).
pub fn pinned_core(slot: &ProcessSlot) -> Option<i32> {
    let c = slot.core.load(Ordering::Acquire);
    (c >= 0).then_some(c)
}
