//! Partition services: GET_PARTITION_STATUS, SET_PARTITION_MODE, and requests to the module
//! (abi `Request` protocol: write kind/arg, bump seq, ring the doorbell eventfd).

use crate::control;
use crate::critical::Critical;
use crate::runtime::{Runtime, rt};
use crate::sys::{self, Futex};
use crate::types::*;
use partita_abi::{self as abi, event, mode, request};
use std::sync::atomic::{AtomicU32, Ordering};

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
        crate::sys::demote_own_threads_before_exit();
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

/// Blocks the calling thread for good (it must not return, nor end the program).
///
/// It parks above every process priority: each stop of the partition wakes sleeping threads
/// so that they trap into the cgroup freezer, and a woken thread that a busy thread of the
/// next partition on its CPU keeps from running would keep the stop from being confirmed.
/// Trapping and restarting the wait run no code of the program.
pub fn park_forever() -> ! {
    static PARK: AtomicU32 = AtomicU32::new(0);
    park_priority(rt());
    loop {
        sys::futex_wait(&PARK, 0, None, Futex::Private);
    }
}

fn park_priority(rt: &Runtime) {
    // SAFETY: pthread_self has no preconditions.
    crate::threads::set_priority(rt, unsafe { libc::pthread_self() }, crate::runtime::TIMER_RT_PRIO);
}

/// Posts a request to the module and rings its doorbell. Waits (briefly, bounded) for the
/// previous request to be acknowledged so that it is not overwritten unseen.
pub fn post_request(rt: &Runtime, kind: u32, arg: u32) {
    let _c = Critical::enter(rt);
    let r = &rt.cb.request;
    let give_up = sys::now_ns() + 50_000_000;
    while r.done.load(Ordering::Acquire) != r.seq.load(Ordering::Relaxed) && sys::now_ns() < give_up {
        let ts = libc::timespec { tv_sec: 0, tv_nsec: 200_000 };
        // SAFETY: a valid timespec; the remaining time is not needed.
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
    }
    r.kind.store(kind, Ordering::Relaxed);
    r.arg.store(arg, Ordering::Relaxed);
    r.seq.fetch_add(1, Ordering::Release);
    sys::write_all(abi::DOORBELL_FD, &1u64.to_ne_bytes());
}
