//! Time services: GET_TIME, TIMED_WAIT, PERIODIC_WAIT, REPLENISH; release points, deadlines
//! and the first-process-dispatch probe. A process sleeps on its own futex word with an absolute
//! CLOCK_MONOTONIC timeout, so the kernel wakes it exactly at its release point (and SCHED_FIFO
//! orders simultaneous releases by priority); missed deadlines are found by the monitor thread
//! at the deadline instant and by PERIODIC_WAIT, whichever is first.

use crate::kernel::process::{self, ProcessSlot, id_of};
use crate::kernel::runtime::{NO_DEADLINE, Runtime, rt};
use crate::kernel::sys::{self, Futex};
use crate::types::*;
use partita_abi::{event, mode};
use std::sync::atomic::{AtomicU32, Ordering};

/// GET_TIME: nanoseconds since the module epoch (no system call: vDSO).
pub fn get_time() -> SystemTime {
    sys::now_ns() - rt().epoch_ns
}

/// An absolute instant as SYSTEM_TIME (since the epoch); NO_DEADLINE is infinite.
pub fn since_epoch(rt: &Runtime, abs: i64) -> SystemTime {
    if abs == NO_DEADLINE { INFINITE_TIME_VALUE } else { abs - rt.epoch_ns }
}

/// Blocks the calling process until absolute instant `t`. Interruptible by STOP (the signal
/// handler jumps away) and SUSPEND (the handler parks, then the wait goes on).
pub fn sleep_until(slot: &ProcessSlot, t: i64) {
    loop {
        let w = slot.wake.load(Ordering::Acquire);
        if sys::now_ns() >= t {
            return;
        }
        sys::futex_wait(&slot.wake, w, Some(t), Futex::Private);
    }
}

fn sleep_until_unmanaged(t: i64) {
    let word = AtomicU32::new(0);
    while sys::now_ns() < t {
        sys::futex_wait(&word, 0, Some(t), Futex::Private);
    }
}

/// Reports a missed deadline once (the monitor thread and the process may both notice it).
pub fn report_miss(rt: &Runtime, index: usize, slot: &ProcessSlot, deadline: i64) {
    if slot.reported_ns.swap(deadline, Ordering::AcqRel) != deadline {
        rt.trace(event::DEADLINE_MISSED, id_of(index) as i64, deadline - rt.epoch_ns);
        crate::kernel::hm::error_detected(error_code::DEADLINE_MISSED, Some(index), b"deadline missed", 0, false);
    }
}

/// Records the first process dispatch after a window start (once per window and core).
pub fn note_dispatch(rt: &Runtime, _slot: &ProcessSlot, id: ProcessId) {
    let Some(core) = rt.current_core_index() else { return };
    let probe = &rt.cb.probes[core];
    let w = probe.wake.load(Ordering::Acquire);
    if w == 0 || rt.last_dispatch[core].swap(w, Ordering::AcqRel) == w {
        return;
    }
    probe.dispatched_ns.store(sys::now_ns(), Ordering::Release);
    rt.trace(event::PROCESS_DISPATCH, id as i64, probe.planned_ns.load(Ordering::Acquire) - rt.epoch_ns);
}

/// TIMED_WAIT. A delay of 0 yields the processor to processes of the same priority. INVALID_MODE
/// for a mutex owner (the preemption lock counts as one) and in the error handler (none may wait).
pub fn timed_wait(delay: SystemTime) -> ApexResult<()> {
    let rt = rt();
    let me = process::current(rt);
    if let Some((i, s)) = me
        && crate::services::objects::mutex::may_not_wait(i, s)
    {
        return Err(ErrorReturnCode::InvalidMode);
    }
    if delay < 0 {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if delay == 0 {
        sys::yield_now();
        return Ok(());
    }
    let t = sys::now_ns().checked_add(delay).ok_or(ErrorReturnCode::InvalidParam)?;
    match me {
        Some((i, s)) => {
            s.waiting.store(1, Ordering::Release);
            sleep_until(s, t);
            s.waiting.store(0, Ordering::Release);
            note_dispatch(rt, s, id_of(i));
        }
        None => sleep_until_unmanaged(t),
    }
    Ok(())
}

/// PERIODIC_WAIT: ends the current job and waits for the next release point
/// (previous release + PERIOD); the new deadline is that release + TIME_CAPACITY.
pub fn periodic_wait() -> ApexResult<()> {
    let rt = rt();
    let (i, s) = process::current(rt).ok_or(ErrorReturnCode::InvalidMode)?;
    if crate::services::objects::mutex::may_not_wait(i, s) {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let cfg = s.config();
    if !cfg.periodic() {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let now = sys::now_ns();
    let d = s.deadline_ns.load(Ordering::Acquire);
    if d != NO_DEADLINE && now > d {
        report_miss(rt, i, s, d);
    }
    let next = s.release_ns.load(Ordering::Acquire) + cfg.period;
    let deadline = if cfg.time_capacity < 0 { NO_DEADLINE } else { next + cfg.time_capacity };
    s.release_ns.store(next, Ordering::Release);
    s.deadline_ns.store(deadline, Ordering::Release);
    s.waiting.store(1, Ordering::Release);
    sleep_until(s, next);
    s.waiting.store(0, Ordering::Release);
    rt.trace(event::PROCESS_RELEASE, id_of(i) as i64, since_epoch(rt, deadline));
    note_dispatch(rt, s, id_of(i));
    Ok(())
}

/// REPLENISH: moves the caller's deadline to now + BUDGET_TIME.
pub fn replenish(budget: SystemTime) -> ApexResult<()> {
    let rt = rt();
    let Some((_, s)) = process::current(rt) else { return Err(ErrorReturnCode::NoAction) };
    if rt.mode() != mode::NORMAL {
        return Err(ErrorReturnCode::NoAction);
    }
    let cfg = s.config();
    let now = sys::now_ns();
    let infinite = budget == INFINITE_TIME_VALUE;
    let new_deadline = if infinite { None } else { now.checked_add(budget) };
    if cfg.periodic() {
        let next_release = s.release_ns.load(Ordering::Acquire) + cfg.period;
        if infinite || new_deadline.is_some_and(|d| d > next_release) {
            return Err(ErrorReturnCode::InvalidMode);
        }
    }
    if budget < INFINITE_TIME_VALUE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if cfg.time_capacity < 0 {
        return Ok(()); // no deadline to move
    }
    let d = if infinite { NO_DEADLINE } else { new_deadline.ok_or(ErrorReturnCode::InvalidParam)? };
    let old = s.deadline_ns.swap(d, Ordering::AcqRel);
    if d < old {
        rt.kick_timer();
    }
    Ok(())
}
