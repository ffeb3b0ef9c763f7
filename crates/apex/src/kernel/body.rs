//! The life of a process thread: DORMANT until START, waiting for NORMAL mode and the release
//! point, running the entry point, and back to DORMANT (entry point returned, STOP_SELF, or STOP
//! by another process). Also the target side of asynchronous STOP/SUSPEND requests, and the
//! end of a thread that stops for good (`park_forever`).

use crate::kernel::critical::{self, Critical};
use crate::kernel::process::{self, DORMANT, ProcessSlot, SELF_SUSPENDED, SUSPENDED, id_of};
use crate::kernel::runtime::{NO_DEADLINE, Runtime, TIMER_RT_PRIO, rt};
use crate::kernel::sys::{self, Futex};
use crate::kernel::threads::{self, StartRoutine};
use crate::kernel::{dispatch, hm, signals, waitq};
use partita_abi::{event, mode};
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

unsafe extern "C" {
    safe fn partita_process_trampoline(arg: *mut c_void) -> *mut c_void;
    fn partita_process_jump(env: *mut c_void) -> !;
}

thread_local! {
    /// The sigjmp_buf of this thread's trampoline.
    static JMP_ENV: Cell<*mut c_void> = const { Cell::new(std::ptr::null_mut()) };
    /// The `stop_gen` of this thread's slot already acted upon.
    static STOP_SEEN: Cell<u32> = const { Cell::new(0) };
}

pub fn process_thread_start() -> StartRoutine {
    partita_process_trampoline
}

/// Called once by the trampoline before it marks its restart point.
#[unsafe(no_mangle)]
pub extern "C" fn partita_process_prepare(arg: *mut c_void) {
    // The thread is a process before the stop signal can reach it: a SUSPEND made before the
    // thread first ran (its signal pending until now) is then seen, not lost.
    process::set_current(Some(arg as usize));
    // SAFETY: gettid has no preconditions.
    rt().procs[arg as usize].tid.store(unsafe { libc::gettid() }, Ordering::Release);
    signals::prepare_thread();
    crate::kernel::faults::prepare_thread();
    signals::unblock();
}

/// Called by the trampoline at first and after every jump back; never returns.
#[unsafe(no_mangle)]
pub extern "C" fn partita_process_main(arg: *mut c_void, env: *mut c_void) -> ! {
    let index = arg as usize;
    let rt = rt();
    JMP_ENV.with(|e| e.set(env));
    critical::reset();
    sys::reset_runtime_wait();
    let slot = &rt.procs[index];
    loop {
        run_once(rt, index, slot);
    }
}

fn run_once(rt: &Runtime, index: usize, slot: &ProcessSlot) {
    // Back at the top: the STOP requests made so far are done with (a START that raced with
    // them is seen below, because STOP marks DORMANT before counting the request).
    STOP_SEEN.with(|s| s.set(slot.stop_gen.load(Ordering::Acquire)));
    ack(slot);
    // The error handler is released by errors, not by START: one that came while it was
    // finishing releases it again.
    let handler = hm::handler_index() == Some(index);
    if handler {
        hm::end_pause(rt);
        if hm::pending() {
            slot.state.store(process::STARTED, Ordering::Release);
        }
    }
    loop {
        let w = slot.wake.load(Ordering::Acquire);
        if slot.state.load(Ordering::Acquire) != DORMANT {
            break;
        }
        sys::futex_wait(&slot.wake, w, None, Futex::Private);
    }
    // Asked again: the handler's thread may have come here before CREATE_ERROR_HANDLER made it
    // the handler.
    if hm::handler_index() == Some(index) {
        hm::begin_pause(rt, index);
    }
    slot.waiting.store(1, Ordering::Release);
    loop {
        let g = rt.mode_gen.load(Ordering::Acquire);
        if rt.mode() == mode::NORMAL {
            break;
        }
        sys::futex_wait(&rt.mode_gen, g, None, Futex::Private);
    }
    dispatch::sleep_until(slot, slot.release_ns.load(Ordering::Acquire));
    slot.waiting.store(0, Ordering::Release);
    let cfg = slot.config();
    let id = id_of(index);
    if cfg.periodic() {
        rt.trace(event::PROCESS_RELEASE, id as i64, dispatch::since_epoch(rt, slot.deadline_ns.load(Ordering::Acquire)));
    }
    dispatch::note_dispatch(rt, slot, id);
    // A SUSPEND (or STOP) whose signal was deferred on the way here takes effect before the
    // entry point runs.
    act_on_requests();
    (cfg.entry)();
    finish(rt, index, slot);
}

/// The process is done (entry point returned, or STOP_SELF): DORMANT, unless a STOP by another
/// process already took care of it (and maybe a START followed).
fn finish(rt: &Runtime, index: usize, slot: &ProcessSlot) {
    let c = Critical::enter(rt);
    if slot.stop_gen.load(Ordering::Acquire) == STOP_SEEN.with(|s| s.get()) {
        mark_dormant(slot);
        on_dormant(&c, rt, index);
        rt.trace(event::PROCESS_STOP, id_of(index) as i64, 0);
    }
}

/// What a process gives back when it becomes DORMANT besides its place in a wait queue: the
/// mutex it owns. Mutexes are a service (`services::objects::mutex`) and the kernel imports no
/// service, so the mutex service registers its release here, once, when it creates the first
/// mutex (no process can own one before). A plain function, read with one atomic load.
type ReleaseOwned = fn(&Critical<'_>, &Runtime, usize);
static RELEASE_OWNED: OnceLock<ReleaseOwned> = OnceLock::new();

/// Registers what a process becoming DORMANT gives back (see `RELEASE_OWNED`); later calls keep
/// the first registration.
pub fn on_dormant_release(f: ReleaseOwned) {
    let _ = RELEASE_OWNED.set(f);
}

/// A process became DORMANT (STOP, STOP_SELF, end of its entry point; runtime lock held): it
/// leaves the queue it waits in and gives back the mutex it owns.
pub fn on_dormant(c: &Critical<'_>, rt: &Runtime, index: usize) {
    waitq::cancel(c, rt, index);
    if let Some(release) = RELEASE_OWNED.get() {
        release(c, rt, index);
    }
}

/// Common bookkeeping of a process becoming DORMANT (caller holds the runtime lock).
pub fn mark_dormant(slot: &ProcessSlot) {
    slot.state.store(DORMANT, Ordering::Release);
    slot.deadline_ns.store(NO_DEADLINE, Ordering::Release);
    // The lock level (and the raised thread priority that goes with it) is reset by the next
    // START; a DORMANT thread is blocked anyway.
    slot.waiting.store(0, Ordering::Release);
    let _ = slot
        .ctl
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| Some((c & !(SUSPENDED | SELF_SUSPENDED)).wrapping_add(process::CTL_STEP)));
}

/// STOP_SELF: never returns to the caller.
pub fn stop_self() -> ! {
    let rt = rt();
    match process::current(rt) {
        Some((i, slot)) => {
            finish(rt, i, slot);
            jump()
        }
        // The initialization process has nothing to go back to: it stops for good.
        None => park_forever(),
    }
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

/// Raises the calling thread above every process priority (see `park_forever`).
pub fn park_priority(rt: &Runtime) {
    // SAFETY: pthread_self has no preconditions.
    threads::set_priority(rt, unsafe { libc::pthread_self() }, TIMER_RT_PRIO);
}

/// A process that faulted (signal handler): DORMANT, back to the top of its thread.
pub fn stop_after_fault(index: usize) -> ! {
    let rt = rt();
    finish(rt, index, &rt.procs[index]);
    jump()
}

/// A process whose fault went to the error handler: FAULTED (not DORMANT) until the handler
/// decides. The thread waits here, in the fault handler, for a STOP (of the handler or any other
/// process), which sends it back to the top of its thread like any STOP; a SET_PARTITION_MODE
/// ends it with the partition. Called before the error is routed, so that the handler, which
/// preempts the faulting process at once, already sees FAULTED.
pub fn mark_faulted(slot: &ProcessSlot) {
    slot.state.store(process::FAULTED, Ordering::Release);
    slot.deadline_ns.store(NO_DEADLINE, Ordering::Release);
}

/// Waits FAULTED until a STOP (see `mark_faulted`); never returns.
pub fn wait_while_faulted(slot: &ProcessSlot) -> ! {
    loop {
        // STOP changes `ctl` (mark_dormant) before it wakes waiters on it: no wake-up is lost.
        let c = slot.ctl.load(Ordering::Acquire);
        if stop_pending(slot) {
            act_on_requests();
        }
        sys::futex_wait(&slot.ctl, c, None, Futex::Private);
    }
}

fn jump() -> ! {
    let env = JMP_ENV.with(|e| e.get());
    // SAFETY: `env` is the sigjmp_buf of this thread's trampoline frame, which never returns;
    // the frames jumped over hold no lock and no value with a destructor (requests are deferred
    // inside critical sections, see `critical`).
    unsafe { partita_process_jump(env) }
}

/// Whether a STOP of the calling process (whose slot is `slot`) is pending: requested while it
/// was inside a critical section, not yet acted upon.
pub fn stop_pending(slot: &ProcessSlot) -> bool {
    slot.stop_gen.load(Ordering::Acquire) != STOP_SEEN.with(|s| s.get())
}

/// Whether a STOP or SUSPEND request of the calling process waits to be carried out.
pub fn has_request() -> bool {
    let Some(i) = process::current_index() else { return false };
    let slot = &rt().procs[i];
    let c = slot.ctl.load(Ordering::Acquire);
    stop_pending(slot) || (c & SUSPENDED != 0 && c & SELF_SUSPENDED == 0) || hm::pause_holds(i)
}

/// Acknowledges the requests seen so far (a requester on another core may wait for it).
fn ack(slot: &ProcessSlot) {
    let r = slot.req_gen.load(Ordering::Acquire);
    if slot.ack_gen.load(Ordering::Relaxed) != r {
        slot.ack_gen.store(r, Ordering::Release);
        sys::futex_wake(&slot.ack_gen, i32::MAX, Futex::Private);
    }
}

/// Carries out pending STOP/SUSPEND requests for the calling thread, if it is a process: STOP
/// jumps back to the trampoline, SUSPEND parks until RESUME (or STOP).
pub fn act_on_requests() {
    let Some(i) = process::current_index() else { return };
    let rt = rt();
    let slot = &rt.procs[i];
    loop {
        let g = slot.stop_gen.load(Ordering::Acquire);
        if g != STOP_SEEN.with(|s| s.get()) {
            STOP_SEEN.with(|s| s.set(g));
            ack(slot);
            jump();
        }
        let c = slot.ctl.load(Ordering::Acquire);
        ack(slot);
        // Parked by a SUSPEND, or while the error handler runs with PROCESSES_PAUSE (its end
        // changes the control word before waking, see `hm::end_pause`).
        let suspended = c & SUSPENDED != 0 && c & SELF_SUSPENDED == 0;
        if !suspended && !hm::pause_holds(i) {
            return;
        }
        sys::futex_wait(&slot.ctl, c, None, Futex::Private);
    }
}
