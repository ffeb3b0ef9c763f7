//! Time services: GET_TIME, TIMED_WAIT, PERIODIC_WAIT, REPLENISH. Release points, deadlines
//! and the first-process-dispatch probe are the kernel's (`kernel::dispatch`).

use crate::kernel::dispatch::{note_dispatch, report_miss, since_epoch, sleep_until};
use crate::kernel::process::{self, id_of};
use crate::kernel::runtime::{NO_DEADLINE, rt};
use crate::kernel::sys::{self, Futex};
use crate::types::*;
use partita_abi::{event, mode};
use std::sync::atomic::{AtomicU32, Ordering};

/// GET_TIME: nanoseconds since the module epoch (no system call: vDSO).
pub fn get_time() -> SystemTime {
    sys::now_ns() - rt().epoch_ns
}

fn sleep_until_unmanaged(t: i64) {
    let word = AtomicU32::new(0);
    while sys::now_ns() < t {
        sys::futex_wait(&word, 0, Some(t), Futex::Private);
    }
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
