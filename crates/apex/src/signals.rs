//! Asynchronous STOP and SUSPEND of another process. The requester records the request in the
//! target's process slot and sends the target thread one real-time signal; the handler, running
//! on the target thread, carries the request out: SUSPEND parks the thread on a futex until
//! RESUME, STOP jumps back (siglongjmp, see `c/trampoline.c`) to the start of the thread's loop,
//! where it waits DORMANT for the next START. Inside a runtime critical section the handler only
//! returns, and the end of the section acts.
//!
//! Limits (documented in ARINC653.h): a process stopped while inside the C library (malloc,
//! stdio) may leave that library's lock held; Rust process bodies stopped from outside do not
//! run their destructors; a process that blocks the signal cannot be stopped or suspended.

use crate::{body, critical};

/// The signal used for STOP/SUSPEND requests (chosen high to stay out of applications' way).
pub fn stop_signal() -> i32 {
    libc::SIGRTMAX() - 2
}

extern "C" fn handler(_sig: i32, _info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    if critical::in_critical() {
        return; // the end of the critical section acts on the request
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

pub fn install() {
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
