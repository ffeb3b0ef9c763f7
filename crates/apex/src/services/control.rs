//! Process state changes: START, DELAYED_START, STOP, STOP_SELF, SUSPEND, SUSPEND_SELF, RESUME,
//! SET_PRIORITY, LOCK_PREEMPTION, UNLOCK_PREEMPTION. All run under the runtime lock.

use crate::kernel::critical::Critical;
use crate::kernel::process::{self, CTL_STEP, DORMANT, ProcessSlot, SELF_SUSPENDED, STARTED, SUSPENDED, id_of, lookup};
use crate::kernel::runtime::{NO_DEADLINE, Runtime, rt};
use crate::kernel::signals;
use crate::kernel::sys::{self, Futex, Wait};
use crate::kernel::{hm, levels, threads};
use crate::types::*;
use partita_abi::{event, mode};
use std::sync::atomic::Ordering;

/// How long a STOP/SUSPEND of a process on another core waits for the target to comply.
const ACK_TIMEOUT_NS: i64 = 50_000_000;

/// START.
pub fn start(id: ProcessId) -> ApexResult<()> {
    start_after(id, 0)
}

/// DELAYED_START.
pub fn delayed_start(id: ProcessId, delay: SystemTime) -> ApexResult<()> {
    let rt = rt();
    let (_, slot) = lookup(rt, id).ok_or(ErrorReturnCode::InvalidParam)?;
    if !slot.is_dormant() {
        return Err(ErrorReturnCode::NoAction);
    }
    if delay < 0 {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let cfg = slot.config();
    if cfg.periodic() && delay >= cfg.period {
        return Err(ErrorReturnCode::InvalidParam);
    }
    start_after(id, delay)
}

fn start_after(id: ProcessId, delay: i64) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let (_, slot) = lookup(rt, id).ok_or(ErrorReturnCode::InvalidParam)?;
    if !slot.is_dormant() {
        return Err(ErrorReturnCode::NoAction);
    }
    let cfg = slot.config();
    let old_priority = slot.current_priority.swap(cfg.base_priority, Ordering::AcqRel);
    let was_locked = slot.lock_level.swap(0, Ordering::AcqRel) > 0;
    let _ = slot.ctl.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(resumed(v)));
    if old_priority != cfg.base_priority || was_locked {
        threads::set_priority(rt, slot.thread(), levels::level(&c, rt, cfg.base_priority));
    }
    if rt.mode() == mode::NORMAL {
        let release = set_first_release(rt, slot, delay);
        rt.trace(event::PROCESS_START, id as i64, release - rt.epoch_ns);
    } else {
        // Released when the partition enters NORMAL (see partition::enter_normal).
        slot.start_delay.store(delay, Ordering::Release);
        slot.deadline_ns.store(NO_DEADLINE, Ordering::Release);
        slot.waiting.store(1, Ordering::Release);
    }
    slot.state.store(STARTED, Ordering::Release);
    slot.wake.fetch_add(1, Ordering::Release);
    if slot.deadline_ns.load(Ordering::Acquire) != NO_DEADLINE {
        rt.kick_timer();
    }
    // Wake it outside the lock: a higher-priority process preempts us at once.
    let _n = c.unlock();
    sys::futex_wake(&slot.wake, 1, Futex::Private);
    Ok(())
}

/// Sets the first release point and deadline of a process started (or released by the mode
/// change to NORMAL) now: a periodic process at the next partition period start plus `delay`,
/// an aperiodic one at now plus `delay`. Returns the release point.
pub fn set_first_release(rt: &Runtime, slot: &ProcessSlot, delay: i64) -> i64 {
    let cfg = slot.config();
    let now = sys::now_ns();
    let release = if cfg.periodic() { rt.next_period_start(now) } else { now }.saturating_add(delay);
    let deadline = if cfg.time_capacity < 0 { NO_DEADLINE } else { release.saturating_add(cfg.time_capacity) };
    slot.waiting.store(u32::from(release > now), Ordering::Release);
    slot.release_ns.store(release, Ordering::Release);
    slot.deadline_ns.store(deadline, Ordering::Release);
    slot.reported_ns.store(NO_DEADLINE, Ordering::Release);
    release
}

/// `ctl` after a RESUME (or START, STOP, time-out): not suspended, one more change.
fn resumed(c: u32) -> u32 {
    (c & !(SUSPENDED | SELF_SUSPENDED)).wrapping_add(CTL_STEP)
}

/// Whether a request to `slot` must wait for the target's acknowledgement: when the target may
/// be running right now on another core.
fn needs_ack(rt: &Runtime, slot: &ProcessSlot) -> bool {
    let mine = rt.current_core_index().map(|c| c as i32);
    mine.is_none() || process::pinned_core(slot) != mine
}

fn wait_ack(slot: &ProcessSlot, req: u32) {
    let deadline = sys::now_ns() + ACK_TIMEOUT_NS;
    loop {
        let a = slot.ack_gen.load(Ordering::Acquire);
        if a.wrapping_sub(req) as i32 >= 0 {
            return;
        }
        if sys::futex_wait(&slot.ack_gen, a, Some(deadline), Futex::Private) == Wait::TimedOut {
            return;
        }
    }
}

/// Validates the target of SUSPEND/RESUME/STOP: an existing process other than the caller.
fn other_process(rt: &Runtime, id: ProcessId) -> ApexResult<(usize, &ProcessSlot)> {
    let (i, slot) = lookup(rt, id).ok_or(ErrorReturnCode::InvalidParam)?;
    if process::current_index() == Some(i) {
        return Err(ErrorReturnCode::InvalidParam);
    }
    Ok((i, slot))
}

/// STOP of another process: it becomes DORMANT at once and its thread abandons whatever it was
/// doing (see `signals`).
pub fn stop(id: ProcessId) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let (i, slot) = other_process(rt, id)?;
    if slot.is_dormant() {
        return Err(ErrorReturnCode::NoAction);
    }
    crate::kernel::body::mark_dormant(slot);
    crate::kernel::body::on_dormant(&c, rt, i);
    slot.stop_gen.fetch_add(1, Ordering::AcqRel);
    interrupt(rt, c, slot, event::PROCESS_STOP, id, true);
    Ok(())
}

/// Makes another process act on a STOP or SUSPEND request already recorded in its slot: a new
/// request generation, a futex wake-up if it may be waiting on its control word, the signal
/// that interrupts it wherever it runs, the trace event; then, outside the critical section,
/// waits until it has complied when it runs on another core.
fn interrupt(rt: &Runtime, c: Critical<'_>, slot: &ProcessSlot, kind: u32, id: ProcessId, wake_ctl: bool) {
    let req = slot.req_gen.fetch_add(1, Ordering::AcqRel).wrapping_add(1);
    if wake_ctl {
        sys::futex_wake(&slot.ctl, i32::MAX, Futex::Private);
    }
    sys::signal_thread(slot.thread(), signals::stop_signal());
    rt.trace(kind, id as i64, 0);
    let ack = needs_ack(rt, slot);
    drop(c);
    if ack {
        wait_ack(slot, req);
    }
}

/// STOP_SELF: never returns.
pub fn stop_self() -> ! {
    crate::kernel::body::stop_self()
}

/// SUSPEND of another (aperiodic) process.
pub fn suspend(id: ProcessId) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let (_, slot) = other_process(rt, id)?;
    if slot.is_dormant() || slot.config().periodic() {
        return Err(ErrorReturnCode::InvalidMode);
    }
    if slot.is_suspended() {
        return Err(ErrorReturnCode::NoAction);
    }
    let _ = slot.ctl.fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| Some((c | SUSPENDED).wrapping_add(CTL_STEP)));
    if slot.wait.is_queued() {
        rt.kick_timer(); // its wait time-out now runs out in the deadline monitor (waitq)
    }
    interrupt(rt, c, slot, event::PROCESS_SUSPEND, id, false);
    Ok(())
}

/// RESUME of a suspended process (a pending timed wait of it goes on).
pub fn resume(id: ProcessId) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let (_, slot) = other_process(rt, id)?;
    if slot.is_dormant() || slot.config().periodic() {
        return Err(ErrorReturnCode::InvalidMode);
    }
    if !slot.is_suspended() {
        return Err(ErrorReturnCode::NoAction);
    }
    let _ = slot.ctl.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(resumed(v)));
    rt.trace(event::PROCESS_RESUME, id as i64, 0);
    let _n = c.unlock();
    sys::futex_wake(&slot.ctl, i32::MAX, Futex::Private);
    Ok(())
}

/// SUSPEND_SELF: suspends the calling (aperiodic) process until RESUME or TIME_OUT.
pub fn suspend_self(time_out: SystemTime) -> ApexResult<()> {
    let rt = rt();
    let (i, slot) = process::current(rt).ok_or(ErrorReturnCode::InvalidMode)?;
    if crate::services::objects::mutex::may_not_wait(i, slot) {
        return Err(ErrorReturnCode::InvalidMode);
    }
    if time_out < INFINITE_TIME_VALUE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if slot.config().periodic() {
        return Err(ErrorReturnCode::InvalidMode);
    }
    if time_out == 0 {
        return Ok(());
    }
    let deadline = if time_out == INFINITE_TIME_VALUE {
        None
    } else {
        Some(sys::now_ns().checked_add(time_out).ok_or(ErrorReturnCode::InvalidParam)?)
    };
    let _ = slot.ctl.fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| Some((c | SUSPENDED | SELF_SUSPENDED).wrapping_add(CTL_STEP)));
    rt.trace(event::PROCESS_SUSPEND, id_of(i) as i64, 0);
    loop {
        let c = slot.ctl.load(Ordering::Acquire);
        if c & SUSPENDED == 0 {
            return Ok(());
        }
        if sys::futex_wait(&slot.ctl, c, deadline, Futex::Private) == Wait::TimedOut {
            let prev = slot.ctl.fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| Some(resumed(c)));
            let was_suspended = prev.map_or(0, |p| p & SUSPENDED) != 0;
            return if was_suspended { Err(ErrorReturnCode::TimedOut) } else { Ok(()) };
        }
    }
}

/// SET_PRIORITY: the new current priority; the process becomes the newest of that priority
/// (P1-5), also when it is another ready process whose priority is lowered or unchanged, which
/// Linux would queue first among its new priority: its thread goes through the Linux level just
/// below, and a raise queues it last.
pub fn set_priority(id: ProcessId, priority: Priority) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let (i, slot) = lookup(rt, id).ok_or(ErrorReturnCode::InvalidParam)?;
    if !(MIN_PRIORITY_VALUE..=MAX_PRIORITY_VALUE).contains(&priority) {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if slot.is_dormant() {
        return Err(ErrorReturnCode::InvalidMode);
    }
    // A priority new to the partition is ranked in first: the other threads move (in an order
    // that keeps theirs) while this one still has its old priority.
    let level = levels::level(&c, rt, priority);
    if crate::services::objects::mutex::retain_priority(&c, i, priority) {
        return Ok(()); // a mutex owner keeps the mutex priority until the release
    }
    slot.current_priority.store(priority, Ordering::Release);
    // The error handler and a process holding the preemption lock stay above the band.
    let locked = slot.lock_level.load(Ordering::Acquire) > 0 || hm::handler_index() == Some(i);
    if !locked {
        if process::current_index() != Some(i) && level > 1 {
            threads::set_priority(rt, slot.thread(), level - 1);
        }
        threads::set_priority(rt, slot.thread(), level);
    }
    drop(c);
    if process::current_index() == Some(i) && !locked {
        sys::yield_now();
    }
    Ok(())
}

/// LOCK_PREEMPTION: no other process of the partition runs on the caller's core until the
/// matching UNLOCK_PREEMPTION. Returns the new lock level.
pub fn lock_preemption() -> ApexResult<LockLevel> {
    let rt = rt();
    let Some((_, slot)) = process::current(rt) else { return Err(ErrorReturnCode::NoAction) };
    if rt.mode() != mode::NORMAL {
        return Err(ErrorReturnCode::NoAction);
    }
    let _c = Critical::enter(rt);
    let level = slot.lock_level.load(Ordering::Acquire);
    if level >= MAX_LOCK_LEVEL {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    if level == 0 {
        threads::set_priority(rt, slot.thread(), rt.lock_rt_priority());
    }
    slot.lock_level.store(level + 1, Ordering::Release);
    Ok(level + 1)
}

/// UNLOCK_PREEMPTION: returns the new lock level; at 0 the caller is back at its current
/// priority (and preempted at once if a higher-priority process is ready).
pub fn unlock_preemption() -> ApexResult<LockLevel> {
    let rt = rt();
    let Some((_, slot)) = process::current(rt) else { return Err(ErrorReturnCode::NoAction) };
    if rt.mode() != mode::NORMAL {
        return Err(ErrorReturnCode::NoAction);
    }
    let c = Critical::enter(rt);
    let level = slot.lock_level.load(Ordering::Acquire);
    if level == 0 {
        return Err(ErrorReturnCode::NoAction);
    }
    slot.lock_level.store(level - 1, Ordering::Release);
    if level == 1 {
        threads::set_priority(rt, slot.thread(), levels::level(&c, rt, slot.current_priority.load(Ordering::Acquire)));
    }
    Ok(level - 1)
}

/// The partition's lock level as GET_PARTITION_STATUS reports it: the caller's.
pub fn lock_level() -> LockLevel {
    let rt = rt();
    process::current(rt).map_or(0, |(_, s)| s.lock_level.load(Ordering::Acquire))
}

/// Marks every started process released by the mode change to NORMAL (runtime lock held).
pub fn release_started(rt: &Runtime) {
    for (i, slot) in rt.processes().iter().enumerate() {
        if slot.state.load(Ordering::Acquire) == DORMANT {
            continue;
        }
        let release = set_first_release(rt, slot, slot.start_delay.load(Ordering::Acquire));
        rt.trace(event::PROCESS_START, id_of(i) as i64, release - rt.epoch_ns);
    }
}
