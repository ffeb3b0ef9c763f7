//! Intra-partition communication objects (ARINC 653 Part 1 §3.7: buffers, blackboards,
//! semaphores, events, and mutexes): what they share. Objects are created in COLD_START or
//! WARM_START, never deleted (the storage is leaked), found by id without a lock, and changed
//! only under the runtime lock, which also serializes them with STOP (a stopped process leaves
//! its wait queue and gives back its mutex atomically with respect to every service).

pub mod blackboard;
pub mod buffer;
pub mod event;
pub mod mutex;
pub mod semaphore;

use crate::kernel::critical::Critical;
use crate::kernel::process;
use crate::kernel::runtime::{Runtime, rt};
use crate::kernel::sys;
use crate::kernel::waitq::{self, Outcome, WaitOn, WaitQueue};
use crate::names::Name;
use crate::types::*;
use partita_abi::mode;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};

/// Objects of one kind per partition (SYSTEM_LIMIT_NUMBER_OF_BUFFERS, ... in ARINC653.h).
pub const MAX_OBJECTS: usize = 256;
/// Bytes of message storage all buffers and blackboards of a partition may take together;
/// beyond it CREATE_* is INVALID_CONFIG ("not enough storage").
pub const STORAGE_LIMIT: usize = 64 << 20;
static STORAGE_USED: AtomicUsize = AtomicUsize::new(0);

/// Reserves `bytes` of message storage, or INVALID_CONFIG.
fn reserve_storage(bytes: usize) -> ApexResult<()> {
    STORAGE_USED
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| u.checked_add(bytes).filter(|&t| t <= STORAGE_LIMIT))
        .map(|_| ())
        .map_err(|_| ErrorReturnCode::InvalidConfig)
}

/// State changed only under the runtime lock: a RefCell that is `Sync` because every access
/// holds that lock (the `&Critical` argument).
pub struct Guarded<T> {
    cell: UnsafeCell<T>,
    busy: AtomicBool,
}

// SAFETY: the contents are only reached through `with`, which requires the runtime lock (so one
// thread at a time) and refuses re-entrance (so one reference at a time).
unsafe impl<T: Send> Sync for Guarded<T> {}

impl<T> Guarded<T> {
    pub fn new(v: T) -> Guarded<T> {
        Guarded { cell: UnsafeCell::new(v), busy: AtomicBool::new(false) }
    }

    pub fn with<R>(&self, _c: &Critical<'_>, f: impl FnOnce(&mut T) -> R) -> R {
        assert!(!self.busy.swap(true, Ordering::Acquire), "re-entrant access to an APEX object");
        // SAFETY: the runtime lock is held (the Critical) and `busy` guarantees this is the only
        // reference to the contents until it is cleared below.
        let r = f(unsafe { &mut *self.cell.get() });
        self.busy.store(false, Ordering::Release);
        r
    }
}

/// The objects of one kind: ids 1..=count, looked up without a lock.
pub struct Table<T: 'static> {
    items: [AtomicPtr<T>; MAX_OBJECTS],
    count: AtomicU32,
}

impl<T: 'static> Table<T> {
    pub const fn new() -> Table<T> {
        Table { items: [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_OBJECTS], count: AtomicU32::new(0) }
    }

    /// Publishes a new object (runtime lock held); INVALID_CONFIG beyond the limit.
    pub fn add(&self, _c: &Critical<'_>, obj: T) -> ApexResult<i32> {
        let n = self.count.load(Ordering::Acquire) as usize;
        if n >= MAX_OBJECTS {
            return Err(ErrorReturnCode::InvalidConfig);
        }
        self.items[n].store(Box::into_raw(Box::new(obj)), Ordering::Release);
        self.count.store(n as u32 + 1, Ordering::Release);
        Ok(n as i32 + 1)
    }

    pub fn is_full(&self) -> bool {
        self.count.load(Ordering::Acquire) as usize >= MAX_OBJECTS
    }

    pub fn get(&self, id: i32) -> Option<&'static T> {
        let i = usize::try_from(id).ok()?.checked_sub(1)?;
        if i >= self.count.load(Ordering::Acquire) as usize {
            return None;
        }
        let p = self.items[i].load(Ordering::Acquire);
        // SAFETY: published objects are leaked boxes, never freed or moved.
        Some(unsafe { &*p })
    }

    pub fn iter(&self) -> impl Iterator<Item = (i32, &'static T)> + '_ {
        (1..=self.count.load(Ordering::Acquire) as i32).filter_map(|id| self.get(id).map(|o| (id, o)))
    }

    /// The id of the object named `name` (GET_*_ID: INVALID_CONFIG when there is none).
    pub fn find(&self, name: &Name, name_of: impl Fn(&T) -> &Name) -> ApexResult<i32> {
        self.iter().find(|(_, o)| name_of(o) == name).map(|(id, _)| id).ok_or(ErrorReturnCode::InvalidConfig)
    }
}

/// CREATE_* checks common to every kind: INVALID_MODE in NORMAL, INVALID_CONFIG when the table
/// is full, NO_ACTION for a name in use. Returns the locked runtime.
fn creating<T>(table: &Table<T>, name: &Name, name_of: impl Fn(&T) -> &Name) -> ApexResult<Critical<'static>> {
    let rt = rt();
    if rt.mode() == mode::NORMAL {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let c = Critical::enter(rt);
    if table.is_full() {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    if table.find(name, name_of).is_ok() {
        return Err(ErrorReturnCode::NoAction);
    }
    Ok(c)
}

/// INVALID_PARAM for a TIME_OUT below INFINITE_TIME_VALUE.
fn check_time_out(time_out: SystemTime) -> ApexResult<()> {
    if time_out < INFINITE_TIME_VALUE { Err(ErrorReturnCode::InvalidParam) } else { Ok(()) }
}

/// Blocks the caller in `q` for a resource that is not available, per the standard: TIME_OUT 0
/// is NOT_AVAILABLE; a caller that may not wait (preemption locked, the error handler, or not a
/// process) gets
/// INVALID_MODE; a finite TIME_OUT ends in TIMED_OUT. `offer` leaves the hand-off data in the
/// caller's wait record first. Ok(()) once a waker satisfied the request.
fn wait_for(c: Critical<'_>, rt: &Runtime, q: &WaitQueue, time_out: SystemTime, offer: Option<(*mut u8, i64)>) -> ApexResult<usize> {
    if time_out == 0 {
        return Err(ErrorReturnCode::NotAvailable);
    }
    let (index, slot) = process::current(rt).ok_or(ErrorReturnCode::InvalidMode)?;
    if mutex::may_not_wait(index, slot) {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let deadline = match time_out {
        INFINITE_TIME_VALUE => None,
        t => Some(sys::now_ns().checked_add(t).ok_or(ErrorReturnCode::InvalidParam)?),
    };
    if let Some((addr, len)) = offer {
        slot.wait.set_data(addr, len);
    }
    q.enqueue(&c, rt, index);
    match waitq::block(c, rt, index, deadline, WaitOn::Own) {
        Outcome::Woken(_) => Ok(index),
        Outcome::TimedOut | Outcome::Changed => Err(ErrorReturnCode::TimedOut),
    }
}

/// Copies `len` bytes; the hand-off of messages between a process and an object.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes, not overlapping.
unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    if len > 0 {
        // SAFETY: forwarded contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
    }
}
