//! Module schedule services (ARINC 653 Part 2): SET_MODULE_SCHEDULE, GET_MODULE_SCHEDULE_STATUS,
//! GET_MODULE_SCHEDULE_ID. The module publishes the schedule in force with a sequence lock; a
//! change requested here takes effect at the end of the major frame (the module does it).

use crate::kernel::runtime::{Runtime, post_request, rt};
use crate::names::Name;
use crate::types::*;
use partita_abi::{ScheduleSnapshot, name_str, request};
use std::sync::atomic::Ordering;

fn configured(rt: &Runtime) -> &[partita_abi::ScheduleEntry] {
    let n = (rt.cb.schedule_count as usize).min(rt.cb.schedules.len());
    &rt.cb.schedules[..n]
}

/// GET_MODULE_SCHEDULE_ID: no system call.
pub fn get_module_schedule_id(name: &Name) -> ApexResult<ScheduleId> {
    let rt = rt();
    configured(rt)
        .iter()
        .find(|e| name_str(&e.name).as_bytes() == name.as_bytes())
        .map(|e| e.id as ScheduleId)
        .ok_or(ErrorReturnCode::InvalidConfig)
}

/// GET_MODULE_SCHEDULE_STATUS: no system call.
pub fn get_module_schedule_status() -> ScheduleStatus {
    let rt = rt();
    let s = rt.schedule();
    let last = if s.time_of_last_switch_ns == 0 { 0 } else { (s.time_of_last_switch_ns - rt.epoch_ns).max(0) };
    let mut next = if s.next_id == 0 && s.current_id != 0 { s.current_id } else { s.next_id };
    // A request made here that the module has not published yet (no switch since).
    let requested = rt.requested_schedule.load(Ordering::Acquire);
    if requested != 0 && rt.requested_at_switch.load(Ordering::Acquire) == s.time_of_last_switch_ns && s.current_id != requested - 1 {
        next = requested - 1;
    }
    ScheduleStatus { time_of_last_schedule_switch: last, current_schedule: s.current_id as ScheduleId, next_schedule: next as ScheduleId }
}

/// SET_MODULE_SCHEDULE: the module switches at the end of the current major frame. Only a
/// partition whose Partition_Schedule in the schedule in force says `SetModuleSchedule="true"`
/// may ask (INVALID_CONFIG otherwise, ARINC 653 Part 2); the module checks again.
pub fn set_module_schedule(id: ScheduleId) -> ApexResult<()> {
    let rt = rt();
    let known = u32::try_from(id).ok().filter(|&id| configured(rt).iter().any(|e| e.id == id));
    let Some(id) = known else { return Err(ErrorReturnCode::InvalidParam) };
    let s = rt.schedule();
    let authorized =
        configured(rt).iter().find(|e| e.id == s.current_id).is_some_and(|e| e.flags & partita_abi::schedule_flags::MAY_SET_SCHEDULE != 0);
    if !authorized {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    rt.requested_at_switch.store(s.time_of_last_switch_ns, Ordering::Release);
    rt.requested_schedule.store(id + 1, Ordering::Release);
    if rt.standalone {
        // No module: the request is only recorded (there is one schedule anyway). The lock
        // keeps this the only writer of the sequence lock.
        let _c = crate::kernel::critical::Critical::enter(rt);
        rt.cb.schedule.publish(&ScheduleSnapshot { next_id: id, ..s });
    } else {
        post_request(rt, request::SET_MODULE_SCHEDULE, id);
    }
    Ok(())
}
