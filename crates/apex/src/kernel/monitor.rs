//! The runtime's own threads:
//! - the timer (deadline monitor) thread, SCHED_FIFO 80 on the partition's cores: sleeps until
//!   the earliest deadline of the started processes and records each missed one in the trace;
//! - one window-start probe thread per partition core, SCHED_FIFO 90, pinned: the module wakes
//!   it at each window start (before thawing the partition) and it stores when it ran, from
//!   which the module computes the partition switch cost. Under the module only.

use crate::kernel::dispatch;
use crate::kernel::runtime::{NO_DEADLINE, PROBE_RT_PRIO, Runtime, TIMER_RT_PRIO};
use crate::kernel::sys::{self, Futex};
use crate::kernel::threads;
use partita_abi::mode;
use std::ffi::c_void;
use std::sync::atomic::Ordering;

/// Runtime threads need little stack.
const STACK: usize = 64 << 10;

struct ProbeArg {
    rt: &'static Runtime,
    core: usize,
}

pub fn start(rt: &'static Runtime) {
    let arg = rt as *const Runtime as *mut c_void;
    if let Err(e) = threads::spawn(rt, timer_main, arg, TIMER_RT_PRIO, &rt.host_cpus, STACK) {
        eprintln!("partita-apex: warning: no deadline monitor thread: {}", std::io::Error::from_raw_os_error(e));
    }
    if rt.standalone {
        return;
    }
    for (core, &cpu) in rt.host_cpus.iter().enumerate() {
        let arg = Box::into_raw(Box::new(ProbeArg { rt, core })) as *mut c_void;
        if let Err(e) = threads::spawn(rt, probe_main, arg, PROBE_RT_PRIO, &[cpu], STACK) {
            eprintln!("partita-apex: warning: no probe thread on CPU {cpu}: {}", std::io::Error::from_raw_os_error(e));
        }
    }
}

extern "C" fn timer_main(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` is the &'static Runtime given by `start`.
    let rt: &'static Runtime = unsafe { &*(arg as *const Runtime) };
    loop {
        let w = rt.timer_word.load(Ordering::Acquire);
        let now = sys::now_ns();
        let mut earliest = NO_DEADLINE;
        if rt.mode() == mode::NORMAL {
            for (i, s) in rt.processes().iter().enumerate() {
                let d = s.deadline_ns.load(Ordering::Acquire);
                if d == NO_DEADLINE || s.is_dormant() {
                    continue;
                }
                if d <= now {
                    dispatch::report_miss(rt, i, s, d);
                } else {
                    earliest = earliest.min(d);
                }
            }
            if let Some(d) = crate::kernel::waitq::expire_suspended(rt) {
                earliest = earliest.min(d);
            }
        }
        // A deadline where the partition is stopped is looked at when its next window starts
        // (the probe wakes this thread), without a timer (see `dispatch::sleep_until`).
        let untimed = earliest == NO_DEADLINE || dispatch::stopped_at(rt, earliest);
        rt.monitor_untimed.store(u32::from(earliest != NO_DEADLINE && untimed), Ordering::Release);
        sys::futex_wait(&rt.timer_word, w, (!untimed).then_some(earliest), Futex::Private);
        rt.monitor_untimed.store(0, Ordering::Release);
    }
}

extern "C" fn probe_main(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` is the boxed ProbeArg made by `start` for this thread alone.
    let ProbeArg { rt, core } = *unsafe { Box::from_raw(arg as *mut ProbeArg) };
    let probe = &rt.cb.probes[core];
    let mut seen = probe.wake.load(Ordering::Acquire);
    loop {
        sys::futex_wait(&probe.wake, seen, None, Futex::Shared);
        let w = probe.wake.load(Ordering::Acquire);
        if w != seen {
            probe.running_ns.store(sys::now_ns(), Ordering::Release);
            seen = w;
            dispatch::wake_due_sleepers(rt, core);
            crate::kernel::hm::take_injected(rt);
        }
        if rt.cb.status.module_running.load(Ordering::Acquire) == 0 {
            // The module shut down: so does the partition. Its exit_group goes through the
            // module's broker, which demotes every thread first (no demotion here: under the
            // module's filter it would only be more brokered calls, and it delayed the exit).
            // SAFETY: _exit ends the whole program at once, which is what is wanted.
            unsafe { libc::_exit(0) };
        }
    }
}
