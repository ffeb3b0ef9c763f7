//! Release points, deadlines and dispatch, the kernel side of the time services: a process
//! sleeps on its own futex word with an absolute CLOCK_MONOTONIC timeout, so the kernel wakes it
//! exactly at its release point (and SCHED_FIFO orders simultaneous releases by priority);
//! missed deadlines are found by the monitor thread at the deadline instant and by PERIODIC_WAIT,
//! whichever is first; the first process dispatch after a window start is recorded for the
//! module's switch-cost measurement.

use crate::kernel::hm;
use crate::kernel::process::{ProcessSlot, id_of};
use crate::kernel::runtime::{NO_DEADLINE, Runtime};
use crate::kernel::sys::{self, Futex};
use crate::types::*;
use partita_abi::event;
use std::sync::atomic::Ordering;

/// An absolute instant as SYSTEM_TIME (since the epoch); NO_DEADLINE is infinite.
pub fn since_epoch(rt: &Runtime, abs: i64) -> SystemTime {
    if abs == NO_DEADLINE { INFINITE_TIME_VALUE } else { abs - rt.epoch_ns }
}

/// Blocks the calling process until absolute instant `t`. Interruptible by STOP (the signal
/// handler jumps away) and SUSPEND (the handler parks, then the wait goes on).
///
/// Under the module, an instant at or after the end of the current window on the caller's core
/// gets no timer: the partition is stopped then, and its next window start wakes the thread
/// (the probe thread, [`wake_due_sleepers`]) with `t` passed. Why: release points usually fall
/// on a period start, which is often a window start, and a timer interrupt there stalls the core
/// just where the module's scheduler hands it over (12-20 us a timer interrupt on a nested VM;
/// docs/scheduling.md, "Where the `pcs` experiment's switch time goes").
pub fn sleep_until(slot: &ProcessSlot, t: i64) {
    let rt = crate::kernel::runtime::rt();
    slot.sleep_ns.store(t, Ordering::Release);
    loop {
        let w = slot.wake.load(Ordering::Acquire);
        if sys::now_ns() >= t {
            return;
        }
        let untimed = stopped_at(rt, t);
        slot.untimed.store(u32::from(untimed), Ordering::Release);
        sys::futex_wait(&slot.wake, w, (!untimed).then_some(t), Futex::Private);
        slot.untimed.store(0, Ordering::Release);
    }
}

/// Whether the partition is stopped at instant `t` on the caller's core: `t` is at or after the
/// planned end of its current window there (never standalone, never before the module armed a
/// window, never on a core where it is not stopped).
pub fn stopped_at(rt: &Runtime, t: i64) -> bool {
    if rt.standalone {
        return false;
    }
    let Some(core) = rt.current_core_index() else { return false };
    after_window(rt.cb.probes[core].window_end_ns.load(Ordering::Acquire), t)
}

/// Whether `t` is at or after a window's planned end `end` (0: no window armed yet, so no).
fn after_window(end: i64, t: i64) -> bool {
    end > 0 && t >= end
}

/// Whether a thread waiting without a timer for `t` must be woken at a window start seen at
/// `now` that ends at `end`: its instant has come, or falls in this window (it arms a timer).
fn wake_at_window_start(t: i64, now: i64, end: i64) -> bool {
    t <= now || t < end
}

/// At a window start on `core` (the probe thread): wakes the processes waiting without a timer
/// whose instant has come or falls in this window (they arm a timer for it then), and the
/// deadline monitor if it waits without one.
pub fn wake_due_sleepers(rt: &Runtime, core: usize) {
    let now = sys::now_ns();
    let end = rt.cb.probes[core].window_end_ns.load(Ordering::Acquire);
    for slot in rt.processes() {
        if slot.untimed.load(Ordering::Acquire) != 0 && wake_at_window_start(slot.sleep_ns.load(Ordering::Acquire), now, end) {
            slot.wake.fetch_add(1, Ordering::Release);
            sys::futex_wake(&slot.wake, 1, Futex::Private);
        }
    }
    if rt.monitor_untimed.load(Ordering::Acquire) != 0 {
        rt.kick_timer();
    }
}

/// Reports a missed deadline once (the monitor thread and the process may both notice it).
pub fn report_miss(rt: &Runtime, index: usize, slot: &ProcessSlot, deadline: i64) {
    if slot.reported_ns.swap(deadline, Ordering::AcqRel) != deadline {
        rt.trace(event::DEADLINE_MISSED, id_of(index) as i64, deadline - rt.epoch_ns);
        hm::error_detected(error_code::DEADLINE_MISSED, Some(index), b"deadline missed", 0, false);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_at_or_after_the_window_end_waits_for_the_next_window_start() {
        // Window ends at 1000: instants before it get a timer, from it on they do not.
        assert!(!after_window(1000, 999));
        assert!(after_window(1000, 1000));
        assert!(after_window(1000, 5000));
        // No window armed yet (a fresh control block): always a timer.
        assert!(!after_window(0, 5000));
        // Served by priority (never stopped): always a timer.
        assert!(!after_window(i64::MAX, i64::MAX - 1));
    }

    #[test]
    fn a_window_start_wakes_the_due_and_those_due_within_the_window() {
        // Window start seen at 2000, window until 3000.
        assert!(wake_at_window_start(1000, 2000, 3000), "passed: released now");
        assert!(wake_at_window_start(2000, 2000, 3000), "due now");
        assert!(wake_at_window_start(2500, 2000, 3000), "in this window: it arms a timer for it");
        assert!(!wake_at_window_start(3000, 2000, 3000), "at this window's end: the next window start wakes it");
        assert!(!wake_at_window_start(9000, 2000, 3000));
    }
}
