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
pub fn sleep_until(slot: &ProcessSlot, t: i64) {
    loop {
        let w = slot.wake.load(Ordering::Acquire);
        if sys::now_ns() >= t {
            return;
        }
        sys::futex_wait(&slot.wake, w, Some(t), Futex::Private);
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
