//! Mutexes (ARINC 653 Part 1 supplement 4 / Part 2): CREATE_MUTEX, ACQUIRE_MUTEX,
//! RELEASE_MUTEX, RESET_MUTEX, GET_MUTEX_ID, GET_MUTEX_STATUS, GET_PROCESS_MUTEX_STATE.
//!
//! MUTEX_PRIORITY is a priority ceiling: the owner runs at it (raised at acquisition, its own
//! priority retained and given back at release), so no process that may take the mutex can
//! preempt the owner, and no middle priority either (the protocol bounds priority inversion
//! without inheritance chains). A process owns at most one mutex (the preemption lock counts as
//! one); acquisitions by the owner nest up to MAX_LOCK_LEVEL. The mutex goes to the first
//! waiting process at release, and a process that becomes DORMANT gives back the one it owns.

use super::{Table, check_time_out, creating, wait_for};
use crate::kernel::critical::Critical;
use crate::kernel::process::{self, lookup as lookup_process};
use crate::kernel::runtime::{Runtime, rt};
use crate::kernel::waitq::{Discipline, SATISFIED, WaitQueue};
use crate::kernel::{levels, threads};
use crate::names::Name;
use crate::types::*;
use std::sync::atomic::{AtomicI32, Ordering};

/// MUTEX_ID of GET_PROCESS_MUTEX_STATE for a process that owns none / holds the preemption lock.
pub const NO_MUTEX_OWNED: i32 = -2;
pub const PREEMPTION_LOCK_MUTEX: i32 = -3;

pub struct Mutex {
    name: Name,
    priority: Priority,
    queue: WaitQueue,
    /// Process index + 1 of the owner, 0 when available. Changed under the runtime lock.
    owner: AtomicI32,
    count: AtomicI32,
    /// The owner's current priority when it acquired the mutex.
    retained: AtomicI32,
}

static MUTEXES: Table<Mutex> = Table::new();
/// The mutex id each process owns, 0 for none.
static OWNED: [AtomicI32; MAX_NUMBER_OF_PROCESSES] = [const { AtomicI32::new(0) }; MAX_NUMBER_OF_PROCESSES];

/// Whether process `index` may not block (P1-5: INVALID_MODE for TIMED_WAIT, PERIODIC_WAIT,
/// SUSPEND_SELF, and every wait with a TIME_OUT other than 0): it owns a mutex, holds the
/// preemption lock (which counts as one), or is the error handler. One home for the rule.
pub fn may_not_wait(index: usize, slot: &crate::kernel::process::ProcessSlot) -> bool {
    OWNED[index].load(Ordering::Acquire) != 0
        || slot.lock_level.load(Ordering::Acquire) > 0
        || crate::kernel::hm::handler_index() == Some(index)
}

/// CREATE_MUTEX.
pub fn create_mutex(name: Name, priority: Priority, discipline: Discipline) -> ApexResult<i32> {
    let c = creating(&MUTEXES, &name, |m| &m.name)?;
    if !(MIN_PRIORITY_VALUE..=MAX_PRIORITY_VALUE).contains(&priority) {
        return Err(ErrorReturnCode::InvalidParam);
    }
    // The ceiling is ranked among the partition's priorities for good: its owners run at it.
    levels::pin(&c, rt(), priority);
    // A process that becomes DORMANT gives back the mutex it owns (the kernel calls this).
    crate::kernel::body::on_dormant_release(release_owned_by);
    let m = Mutex {
        name,
        priority,
        queue: WaitQueue::new(discipline),
        owner: AtomicI32::new(0),
        count: AtomicI32::new(0),
        retained: AtomicI32::new(0),
    };
    MUTEXES.add(&c, m)
}

fn lookup(id: i32) -> ApexResult<&'static Mutex> {
    MUTEXES.get(id).ok_or(ErrorReturnCode::InvalidParam)
}

/// Sets a process's current priority, and its thread's unless it holds the preemption lock.
fn set_current_priority(c: &Critical<'_>, rt: &Runtime, index: usize, p: Priority) {
    let slot = &rt.procs[index];
    // Ranked first (a priority given back at release may be new again, see `levels`).
    let level = levels::level(c, rt, p);
    slot.current_priority.store(p, Ordering::Release);
    if slot.lock_level.load(Ordering::Acquire) == 0 {
        threads::set_priority(rt, slot.thread(), level);
    }
}

/// Makes process `index` the owner of mutex `id`, at the mutex priority.
fn give(c: &Critical<'_>, rt: &Runtime, m: &Mutex, id: i32, index: usize) {
    m.owner.store(index as i32 + 1, Ordering::Release);
    m.count.store(1, Ordering::Release);
    OWNED[index].store(id, Ordering::Release);
    m.retained.store(rt.procs[index].current_priority.load(Ordering::Acquire), Ordering::Release);
    set_current_priority(c, rt, index, m.priority);
}

/// The owner gives the mutex up whatever its lock count: it gets its retained priority back and
/// the first waiting process becomes the owner.
fn hand_over(c: &Critical<'_>, rt: &Runtime, m: &Mutex, id: i32) {
    let owner = m.owner.load(Ordering::Acquire);
    if owner > 0 {
        let prev = owner as usize - 1;
        OWNED[prev].store(0, Ordering::Release);
        set_current_priority(c, rt, prev, m.retained.load(Ordering::Acquire));
    }
    m.owner.store(0, Ordering::Release);
    m.count.store(0, Ordering::Release);
    if let Some(w) = m.queue.first(c, rt) {
        give(c, rt, m, id, w);
        m.queue.wake(c, rt, w, SATISFIED);
    }
}

/// ACQUIRE_MUTEX.
pub fn acquire_mutex(id: i32, time_out: SystemTime) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let m = lookup(id)?;
    check_time_out(time_out)?;
    let (index, slot) = process::current(rt).ok_or(ErrorReturnCode::InvalidMode)?;
    if m.owner.load(Ordering::Acquire) == index as i32 + 1 {
        let n = m.count.load(Ordering::Acquire);
        if n >= MAX_LOCK_LEVEL {
            return Err(ErrorReturnCode::InvalidConfig);
        }
        m.count.store(n + 1, Ordering::Release);
        return Ok(());
    }
    if OWNED[index].load(Ordering::Acquire) != 0 || slot.lock_level.load(Ordering::Acquire) > 0 {
        return Err(ErrorReturnCode::InvalidMode);
    }
    if slot.current_priority.load(Ordering::Acquire) > m.priority {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    if m.owner.load(Ordering::Acquire) == 0 {
        give(&c, rt, m, id, index);
        return Ok(());
    }
    wait_for(c, rt, &m.queue, time_out, None).map(|_| ())
}

/// RELEASE_MUTEX.
pub fn release_mutex(id: i32) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let m = lookup(id)?;
    let index = process::current_index().ok_or(ErrorReturnCode::InvalidMode)?;
    if m.owner.load(Ordering::Acquire) != index as i32 + 1 {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let n = m.count.load(Ordering::Acquire) - 1;
    m.count.store(n, Ordering::Release);
    if n == 0 {
        hand_over(&c, rt, m, id);
    }
    Ok(())
}

/// RESET_MUTEX: takes the mutex from process `process_id` (e.g. a faulty one), whatever its
/// lock count. INVALID_MODE when that process does not own it.
pub fn reset_mutex(id: i32, process_id: ProcessId) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let m = lookup(id)?;
    let (index, _) = lookup_process(rt, process_id).ok_or(ErrorReturnCode::InvalidParam)?;
    if m.owner.load(Ordering::Acquire) != index as i32 + 1 {
        return Err(ErrorReturnCode::InvalidMode);
    }
    hand_over(&c, rt, m, id);
    Ok(())
}

/// Gives back the mutex process `index` owns (it became DORMANT).
pub fn release_owned_by(c: &Critical<'_>, rt: &Runtime, index: usize) {
    let id = OWNED[index].load(Ordering::Acquire);
    if let Some(m) = MUTEXES.get(id) {
        hand_over(c, rt, m, id);
    }
}

/// SET_PRIORITY of a mutex owner: the new priority is retained until the release (the owner
/// keeps the mutex priority meanwhile). False when process `index` owns no mutex.
pub fn retain_priority(_c: &Critical<'_>, index: usize, p: Priority) -> bool {
    match MUTEXES.get(OWNED[index].load(Ordering::Acquire)) {
        Some(m) => {
            m.retained.store(p, Ordering::Release);
            true
        }
        None => false,
    }
}

/// GET_MUTEX_ID.
pub fn get_mutex_id(name: &Name) -> ApexResult<i32> {
    let _ = rt();
    MUTEXES.find(name, |m| &m.name)
}

/// GET_MUTEX_STATUS.
pub fn get_mutex_status(id: i32) -> ApexResult<MutexStatus> {
    let rt = rt();
    let _c = Critical::enter(rt);
    let m = lookup(id)?;
    let owner = m.owner.load(Ordering::Acquire);
    Ok(MutexStatus {
        owner: if owner > 0 { process::id_of(owner as usize - 1) } else { NO_MUTEX_OWNED },
        owned: owner > 0,
        priority: m.priority,
        lock_count: m.count.load(Ordering::Acquire),
        waiting_processes: m.queue.len() as i32,
    })
}

/// GET_PROCESS_MUTEX_STATE: the mutex the process owns, PREEMPTION_LOCK_MUTEX while it holds
/// the preemption lock, or NO_MUTEX_OWNED.
pub fn get_process_mutex_state(process_id: ProcessId) -> ApexResult<i32> {
    let rt = rt();
    let (index, slot) = lookup_process(rt, process_id).ok_or(ErrorReturnCode::InvalidParam)?;
    if slot.lock_level.load(Ordering::Acquire) > 0 {
        return Ok(PREEMPTION_LOCK_MUTEX);
    }
    match OWNED[index].load(Ordering::Acquire) {
        0 => Ok(NO_MUTEX_OWNED),
        id => Ok(id),
    }
}
