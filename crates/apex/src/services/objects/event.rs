//! Events: CREATE_EVENT, SET_EVENT, RESET_EVENT, WAIT_EVENT, GET_EVENT_ID, GET_EVENT_STATUS.
//! SET_EVENT makes every waiting process ready at once.

use super::{Table, check_time_out, creating, wait_for};
use crate::kernel::critical::Critical;
use crate::kernel::runtime::rt;
use crate::kernel::waitq::{Discipline, SATISFIED, WaitQueue};
use crate::names::Name;
use crate::types::*;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct Event {
    name: Name,
    up: AtomicBool,
    queue: WaitQueue,
}

static EVENTS: Table<Event> = Table::new();

/// CREATE_EVENT (created DOWN).
pub fn create_event(name: Name) -> ApexResult<i32> {
    let c = creating(&EVENTS, &name, |e| &e.name)?;
    EVENTS.add(&c, Event { name, up: AtomicBool::new(false), queue: WaitQueue::new(Discipline::Fifo) })
}

fn lookup(id: i32) -> ApexResult<&'static Event> {
    EVENTS.get(id).ok_or(ErrorReturnCode::InvalidParam)
}

/// SET_EVENT.
pub fn set_event(id: i32) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let e = lookup(id)?;
    e.up.store(true, Ordering::Release);
    while e.queue.wake_first(&c, rt, SATISFIED).is_some() {}
    Ok(())
}

/// RESET_EVENT.
pub fn reset_event(id: i32) -> ApexResult<()> {
    let rt = rt();
    let _c = Critical::enter(rt);
    lookup(id)?.up.store(false, Ordering::Release);
    Ok(())
}

/// WAIT_EVENT.
pub fn wait_event(id: i32, time_out: SystemTime) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let e = lookup(id)?;
    check_time_out(time_out)?;
    if e.up.load(Ordering::Acquire) {
        return Ok(());
    }
    wait_for(c, rt, &e.queue, time_out, None).map(|_| ())
}

/// GET_EVENT_ID.
pub fn get_event_id(name: &Name) -> ApexResult<i32> {
    let _ = rt();
    EVENTS.find(name, |e| &e.name)
}

/// GET_EVENT_STATUS.
pub fn get_event_status(id: i32) -> ApexResult<EventStatus> {
    let _ = rt();
    let e = lookup(id)?;
    Ok(EventStatus { up: e.up.load(Ordering::Acquire), waiting_processes: e.queue.len() as i32 })
}
