//! Critical sections of the runtime. A process may be stopped or suspended asynchronously by a
//! signal (see `signals`); while its thread is inside a critical section (holding the runtime
//! lock, the stdout lock, ...) the signal handler only notes the request, and the section's end
//! carries it out. The runtime lock is a priority-inheritance mutex, so a low-priority process
//! holding it cannot be starved by middle priorities while a high-priority one waits.

use crate::kernel::runtime::Runtime;
use std::cell::{Cell, UnsafeCell};

thread_local! {
    /// Nesting depth of critical sections of the calling thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

pub fn in_critical() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Forgets any critical sections of the calling thread (a stopped process starting over).
pub fn reset() {
    DEPTH.with(|d| d.set(0));
}

/// A critical section without the runtime lock (e.g. around stdio calls).
pub struct NoStop(());

impl NoStop {
    pub fn enter() -> NoStop {
        DEPTH.with(|d| d.set(d.get() + 1));
        NoStop(())
    }
}

impl Drop for NoStop {
    fn drop(&mut self) {
        let left = DEPTH.with(|d| {
            let v = d.get() - 1;
            d.set(v);
            v
        });
        if left == 0 {
            crate::kernel::signals::run_deferred();
        }
    }
}

/// A critical section holding the runtime lock.
pub struct Critical<'a> {
    rt: &'a Runtime,
    no_stop: Option<NoStop>,
}

impl<'a> Critical<'a> {
    pub fn enter(rt: &'a Runtime) -> Critical<'a> {
        let no_stop = NoStop::enter();
        rt.lock.lock();
        Critical { rt, no_stop: Some(no_stop) }
    }

    /// Releases the runtime lock but stays protected from STOP/SUSPEND until the returned guard
    /// is dropped (to wake a higher-priority process without it then waiting for our lock).
    pub fn unlock(mut self) -> NoStop {
        self.no_stop.take().expect("a critical section holds its guard until dropped")
    }
}

impl Drop for Critical<'_> {
    fn drop(&mut self) {
        // Unlock first; the NoStop guard, dropped after this, may then act on requests.
        self.rt.lock.unlock();
    }
}

/// A pthread mutex with the priority-inheritance protocol, at a fixed heap address.
pub struct PiMutex {
    m: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: pthread mutexes are made to be shared between threads; the box never moves.
unsafe impl Sync for PiMutex {}
// SAFETY: as above.
unsafe impl Send for PiMutex {}

impl PiMutex {
    pub fn new() -> PiMutex {
        let m = Box::new(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));
        // SAFETY: attr is initialized before use and destroyed after; the mutex is at its final
        // address (boxed) when initialized.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            libc::pthread_mutexattr_setprotocol(&mut attr, libc::PTHREAD_PRIO_INHERIT);
            libc::pthread_mutex_init(m.get(), &attr);
            libc::pthread_mutexattr_destroy(&mut attr);
        }
        PiMutex { m }
    }

    pub fn lock(&self) {
        // SAFETY: the mutex is initialized and never moved or destroyed.
        unsafe { libc::pthread_mutex_lock(self.m.get()) };
    }

    pub fn unlock(&self) {
        // SAFETY: only called by the holder (Critical::drop).
        unsafe { libc::pthread_mutex_unlock(self.m.get()) };
    }
}

impl Default for PiMutex {
    fn default() -> Self {
        PiMutex::new()
    }
}
