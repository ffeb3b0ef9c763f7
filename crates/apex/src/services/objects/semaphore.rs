//! Semaphores: CREATE_SEMAPHORE, WAIT_SEMAPHORE, SIGNAL_SEMAPHORE, GET_SEMAPHORE_ID,
//! GET_SEMAPHORE_STATUS. A signal with processes waiting hands the unit straight to the first
//! one (the value stays 0), so a later WAIT cannot overtake it.

use super::{Table, check_time_out, creating, wait_for};
use crate::kernel::critical::Critical;
use crate::kernel::runtime::rt;
use crate::kernel::waitq::{Discipline, SATISFIED, WaitQueue};
use crate::names::Name;
use crate::types::*;
use std::sync::atomic::{AtomicI32, Ordering};

/// MAX_SEMAPHORE_VALUE of ARINC653.h.
pub const MAX_SEMAPHORE_VALUE: i32 = 32767;

pub struct Semaphore {
    name: Name,
    /// Changed under the runtime lock only.
    value: AtomicI32,
    max: i32,
    queue: WaitQueue,
}

static SEMAPHORES: Table<Semaphore> = Table::new();

/// CREATE_SEMAPHORE.
pub fn create_semaphore(name: Name, current_value: i32, maximum_value: i32, discipline: Discipline) -> ApexResult<i32> {
    let c = creating(&SEMAPHORES, &name, |s| &s.name)?;
    if !(0..=MAX_SEMAPHORE_VALUE).contains(&current_value)
        || !(1..=MAX_SEMAPHORE_VALUE).contains(&maximum_value)
        || current_value > maximum_value
    {
        return Err(ErrorReturnCode::InvalidParam);
    }
    SEMAPHORES.add(&c, Semaphore { name, value: AtomicI32::new(current_value), max: maximum_value, queue: WaitQueue::new(discipline) })
}

fn lookup(id: i32) -> ApexResult<&'static Semaphore> {
    SEMAPHORES.get(id).ok_or(ErrorReturnCode::InvalidParam)
}

/// WAIT_SEMAPHORE.
pub fn wait_semaphore(id: i32, time_out: SystemTime) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let s = lookup(id)?;
    check_time_out(time_out)?;
    let v = s.value.load(Ordering::Acquire);
    if v > 0 {
        s.value.store(v - 1, Ordering::Release);
        return Ok(());
    }
    wait_for(c, rt, &s.queue, time_out, None).map(|_| ())
}

/// SIGNAL_SEMAPHORE.
pub fn signal_semaphore(id: i32) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let s = lookup(id)?;
    if s.queue.wake_first(&c, rt, SATISFIED).is_some() {
        return Ok(());
    }
    let v = s.value.load(Ordering::Acquire);
    if v >= s.max {
        return Err(ErrorReturnCode::NoAction);
    }
    s.value.store(v + 1, Ordering::Release);
    Ok(())
}

/// GET_SEMAPHORE_ID.
pub fn get_semaphore_id(name: &Name) -> ApexResult<i32> {
    let _ = rt();
    SEMAPHORES.find(name, |s| &s.name)
}

/// GET_SEMAPHORE_STATUS.
pub fn get_semaphore_status(id: i32) -> ApexResult<SemaphoreStatus> {
    let _ = rt();
    let s = lookup(id)?;
    Ok(SemaphoreStatus { current_value: s.value.load(Ordering::Acquire), maximum_value: s.max, waiting_processes: s.queue.len() as i32 })
}
