//! Asynchronous STOP and SUSPEND of another process. The requester records the request in the
//! target's process slot and sends the target thread one real-time signal; the handler, running
//! on the target thread, carries the request out: SUSPEND parks the thread on a futex until
//! RESUME, STOP jumps back (siglongjmp, see `c/trampoline.c`) to the start of the thread's loop,
//! where it waits DORMANT for the next START. Inside a runtime critical section the handler only
//! returns, and the end of the section acts.
//!
//! Inside the C library the handler does not act either: a thread interrupted there may hold one
//! of its locks (malloc's, a stream's). `c/stop_guard.c` decides (the interrupted instruction is
//! in the C runtime's code), marks the request pending, and the request takes effect when the
//! call returns into the program (wrapped malloc/stdio entry points, `c/stop_wrap_*.c`) or at a
//! re-sent signal that finds the thread outside the C runtime. The runtime's own waits are not
//! C library calls (`sys::in_runtime_wait`).
//!
//! Limits (documented in ARINC653.h and docs/porting.md): a C library lock held across calls
//! (flockfile), or held while the C library calls back into the program (dl_iterate_phdr,
//! fopencookie, qsort holds none), is not seen; Rust process bodies stopped from outside do not
//! run their destructors; a process that blocks the signal cannot be stopped or suspended.

use crate::kernel::{body, critical, sys};

unsafe extern "C" {
    fn partita_stop_guard_init();
    fn partita_stop_defer_at(ucontext: *mut libc::c_void, requested: i32) -> i32;
    safe fn partita_stop_guard_thread(signo: i32);
}

/// The signal used for STOP/SUSPEND requests (chosen high to stay out of applications' way).
pub fn stop_signal() -> i32 {
    libc::SIGRTMAX() - 2
}

extern "C" fn handler(_sig: i32, _info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if critical::in_critical() {
        return; // the end of the critical section acts on the request
    }
    // Inside the C library the handler never acts, whether or not a request is pending when it
    // looks: one recorded just after the look (its signal held back until the handler returns)
    // must not be carried out here, where a C library lock may be held; its own signal, delivered
    // when the handler returns, defers it properly.
    // SAFETY: `ctx` is the interrupted context the kernel passes to an SA_SIGINFO handler;
    // partita_stop_defer_at only reads it, sets a thread-local mark and arms a timer (syscall).
    if !sys::in_runtime_wait() && unsafe { partita_stop_defer_at(ctx, i32::from(body::has_request())) } != 0 {
        return; // inside the C library: the call's return (or a re-sent signal) acts
    }
    // SAFETY: called on the signalled thread, outside any critical section: no runtime lock or
    // value with a destructor is live in the interrupted runtime frames.
    let errno = unsafe { *libc::__errno_location() };
    body::act_on_requests();
    // SAFETY: restore errno for the interrupted code (SUSPEND returns here).
    unsafe { *libc::__errno_location() = errno };
}

/// Called when the outermost critical section of a thread ends.
pub fn run_deferred() {
    body::act_on_requests();
}

/// Called by a C library wrapper (`c/stop_guard.c`) when a request deferred inside the C library
/// can take effect: the call has returned into the program. Inside a critical section of the
/// runtime (the runtime's own Rust code allocates) the end of the section acts instead.
#[unsafe(no_mangle)]
pub extern "C" fn partita_stop_act() {
    if !critical::in_critical() {
        body::act_on_requests();
    }
}

/// Gives the calling process thread its re-send timer (see `c/stop_guard.c`).
pub fn prepare_thread() {
    partita_stop_guard_thread(stop_signal());
}

pub fn install() {
    // SAFETY: walks the loaded objects once, before any process thread exists.
    unsafe { partita_stop_guard_init() };
    // SAFETY: installing a handler with a zeroed then filled sigaction; the handler is
    // async-signal-safe (atomics, futex, siglongjmp).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(stop_signal(), &sa, std::ptr::null_mut());
    }
}

/// Makes sure the calling thread can receive the stop signal.
pub fn unblock() {
    // SAFETY: manipulating the calling thread's signal mask with a valid set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, stop_signal());
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}
