//! Partition services: GET_PARTITION_STATUS, SET_PARTITION_MODE.

use crate::kernel::body::{park_forever, park_priority};
use crate::kernel::critical::Critical;
use crate::kernel::runtime::{Runtime, post_request, rt};
use crate::kernel::sys::{self, Futex};
use crate::services::control;
use crate::types::*;
use partita_abi::{event, mode, request};
use std::sync::atomic::Ordering;

/// GET_PARTITION_STATUS: no system call.
pub fn get_partition_status() -> PartitionStatus {
    let rt = rt();
    let s = rt.schedule();
    let m = rt.mode();
    PartitionStatus {
        period: s.period_ns,
        duration: s.duration_ns,
        identifier: rt.cb.partition_id as PartitionId,
        lock_level: control::lock_level(),
        operating_mode: OperatingMode::from_u32(m).unwrap_or(OperatingMode::Idle),
        start_condition: StartCondition::from_u32(rt.cb.status.start_condition.load(Ordering::Acquire)),
        num_assigned_cores: rt.core_count() as u32,
    }
}

/// SET_PARTITION_MODE. NORMAL (from COLD_START or WARM_START) releases the started processes
/// and never returns to the caller (the initialization process ends there). IDLE, COLD_START
/// and WARM_START ask the module to idle or restart the partition, and never return either;
/// standalone, they end the program.
pub fn set_partition_mode(m: u32) -> ApexResult<()> {
    let rt = rt();
    let target = OperatingMode::from_u32(m).ok_or(ErrorReturnCode::InvalidParam)?;
    let current = rt.mode();
    match target {
        OperatingMode::Normal if current == mode::NORMAL => return Err(ErrorReturnCode::NoAction),
        OperatingMode::WarmStart if current == mode::COLD_START => return Err(ErrorReturnCode::InvalidMode),
        _ => {}
    }
    if target == OperatingMode::Normal {
        // Above the processes it releases, so that it reaches its park (see park_forever)
        // before they run; they then start in priority order.
        park_priority(rt);
        enter_normal(rt);
        park_forever();
    }
    if rt.standalone {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        // SAFETY: flushing every C stdio stream before the program ends.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        eprintln!("partita-apex (standalone): SET_PARTITION_MODE({}): no module to idle or restart the partition; exiting", target.name());
        crate::kernel::sys::demote_own_threads_before_exit();
        std::process::exit(0);
    }
    post_request(rt, request::SET_MODE, m);
    park_forever()
}

fn enter_normal(rt: &Runtime) {
    let _c = Critical::enter(rt);
    let previous = rt.mode();
    control::release_started(rt);
    rt.cb.status.operating_mode.store(mode::NORMAL, Ordering::Release);
    rt.trace(event::MODE_CHANGE, previous as i64, mode::NORMAL as i64);
    rt.mode_gen.fetch_add(1, Ordering::Release);
    sys::futex_wake(&rt.mode_gen, i32::MAX, Futex::Private);
    rt.kick_timer();
}
