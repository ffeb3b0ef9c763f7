//! SIGTERM and SIGINT end a run promptly, however busy its partitions are.
//!
//! A handler runs in whichever thread the signal interrupts, and the thread that would act on
//! it (the run's main thread, at the normal policy) may not get a CPU while partitions keep
//! every CPU busy at their real-time ceiling. So the run blocks both signals in every thread
//! (the mask is set before the run's first thread starts, and threads inherit it) and one
//! thread at SIGNAL_GUARD_PRIORITY (run.rs: above the partitions, the lifecycle and the
//! broker, below the per-core schedulers) takes them from a signalfd and requests the stop
//! that the per-core schedulers carry out at their next frame boundary.

use crate::run_state::RunState;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

pub struct SignalGuard {
    signals: OwnedFd,
    done: OwnedFd,
    old_mask: libc::sigset_t,
}

fn owned(fd: i32) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl SignalGuard {
    /// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread it starts from
    /// now on) and opens a signalfd for them. Call before the run starts any thread.
    pub fn new() -> io::Result<SignalGuard> {
        // SAFETY: sigset_t values are plain data filled by sigemptyset/sigaddset/pthread_sigmask;
        // signalfd and eventfd get valid arguments and their results are checked.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old_mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGINT);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old_mask);
            let signals = owned(libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK));
            let done = owned(libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK));
            match (signals, done) {
                (Ok(signals), Ok(done)) => Ok(SignalGuard { signals, done, old_mask }),
                (Err(e), _) | (_, Err(e)) => {
                    libc::pthread_sigmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut());
                    Err(e)
                }
            }
        }
    }

    /// The guard thread: until [`SignalGuard::finish`], each SIGINT/SIGTERM marks the run
    /// interrupted and requests its stop.
    pub fn serve(&self, state: &RunState, interrupted: &AtomicBool) {
        loop {
            let mut fds = [
                libc::pollfd { fd: self.signals.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: self.done.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: two valid pollfd entries.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
                continue;
            }
            if self.take_pending() {
                interrupted.store(true, Ordering::Release);
                state.stop.store(true, Ordering::Release);
            }
            if fds[1].revents != 0 {
                return;
            }
        }
    }

    /// Reads every pending signal from the signalfd; true if there was one.
    fn take_pending(&self) -> bool {
        let mut any = false;
        loop {
            // SAFETY: an all-zero signalfd_siginfo is valid; read fills it.
            let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            // SAFETY: reading one record into a valid buffer of its size.
            let n = unsafe { libc::read(self.signals.as_raw_fd(), (&mut info as *mut libc::signalfd_siginfo).cast(), size) };
            if n != size as isize {
                return any;
            }
            any = true;
        }
    }

    /// Ends the guard thread.
    pub fn finish(&self) {
        let one: u64 = 1;
        // SAFETY: writing the 8-byte counter to our eventfd.
        unsafe { libc::write(self.done.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }
}

impl Drop for SignalGuard {
    /// Restores the caller's mask; a signal that came after the guard thread ended is
    /// dropped (the run is ending anyway) rather than delivered with its default action.
    fn drop(&mut self) {
        self.take_pending();
        // SAFETY: restores the mask saved by `new`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut()) };
    }
}
