//! A vCPU thread and the gate's hold on it: the mechanism chosen by measurement
//! (docs/kvm.md), `immediate_exit` and a signal to stop, a futex to release.
//!
//! The stop: [`VcpuControl::request_stop`] sets the request and sends [`KICK_SIGNAL`] to the
//! vCPU thread. The signal forces the guest out (an IPI and a VM exit, whatever the guest does,
//! interrupts off included), KVM_RUN returns EINTR, and the thread, seeing the request, marks
//! itself not running (the acknowledgement [`VcpuControl::is_stopped`] reads) and parks on a
//! futex. The handler sets `kvm_run.immediate_exit`, so that a KVM_RUN entered between the
//! thread's check of the request and the ioctl returns at once. The release clears the request
//! and wakes the futex; the thread clears `immediate_exit` and enters KVM_RUN again.

use std::cell::Cell;
use std::io;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, AtomicU32, Ordering};

use kvm_ioctls::{VcpuExit, VcpuFd};

use crate::backend::rt;

/// The signal that kicks a vCPU thread out of KVM_RUN: installed without SA_RESTART, so that
/// KVM_RUN returns EINTR. Only ever sent to vCPU threads (tgkill).
pub const KICK_SIGNAL: libc::c_int = libc::SIGUSR2;

thread_local! {
    /// Address of this thread's `kvm_run.immediate_exit` (0: not a running vCPU thread).
    static IMMEDIATE_EXIT: Cell<usize> = const { Cell::new(0) };
}

/// The kick handler: on a vCPU thread, sets `immediate_exit` (see the module comment).
extern "C" fn kick(_: libc::c_int) {
    let addr = IMMEDIATE_EXIT.with(Cell::get);
    if addr != 0 {
        // SAFETY: `addr` is this thread's kvm_run.immediate_exit, mapped while its vCPU lives
        // ([`disarm_kick`] clears it before the thread lets go of the vCPU); a u8 written atomically.
        unsafe { AtomicU8::from_ptr(addr as *mut u8).store(1, Ordering::SeqCst) };
    }
}

/// Installs the kick handler (once per process).
pub fn install_kick_handler() -> io::Result<()> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask; no SA_RESTART.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = kick as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(KICK_SIGNAL, &sa, std::ptr::null_mut()) != 0 {
                result = Err(io::Error::last_os_error());
            }
        }
    });
    result
}

/// Makes the calling thread a kickable vCPU thread of `vcpu`: the kick signal unblocked and
/// its handler pointed at this vCPU's `immediate_exit`.
pub fn arm_kick(vcpu: &mut VcpuFd) {
    let run = vcpu.get_kvm_run();
    IMMEDIATE_EXIT.with(|p| p.set(std::ptr::addr_of_mut!(run.immediate_exit) as usize));
    // SAFETY: sigset_t filled by sigemptyset/sigaddset; unblocking one signal in this thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, KICK_SIGNAL);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Undoes [`arm_kick`] before the thread lets go of its vCPU.
pub fn disarm_kick() {
    IMMEDIATE_EXIT.with(|p| p.set(0));
}

fn gettid() -> libc::pid_t {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

fn tgkill(tid: libc::pid_t, sig: libc::c_int) -> io::Result<()> {
    // SAFETY: tgkill within our own process; the result is checked.
    let r = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, sig) };
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// What the gate and the vCPU thread share about one vCPU.
pub struct VcpuControl {
    stop_req: AtomicBool,
    quit: AtomicBool,
    /// False once the thread has acknowledged a stop (KVM_RUN returned, the guest's state is
    /// in KVM) or has ended; true from a release (or the thread's start) until then.
    running: AtomicBool,
    /// Times the thread parked.
    pub parks: AtomicU32,
    /// Bumped at each release; the parked thread futex-waits on it.
    gate: AtomicU32,
    /// The vCPU thread's kernel id (0: none).
    tid: AtomicI32,
    /// `SCHED_FIFO` priority the vCPU runs the guest at (0: the thread's policy is left as is).
    base_priority: AtomicI32,
    /// `SCHED_FIFO` priority a stop raises the vCPU thread to (0: none), so that it leaves the
    /// guest and acknowledges at once, ahead of the next partition's threads on its CPU
    /// whatever their priorities; the thread goes back to `base_priority` when released.
    stop_priority: AtomicI32,
}

impl Default for VcpuControl {
    /// Stopped: a vCPU does not run before its first release.
    fn default() -> Self {
        VcpuControl {
            stop_req: AtomicBool::new(true),
            quit: AtomicBool::new(false),
            running: AtomicBool::new(false),
            parks: AtomicU32::new(0),
            gate: AtomicU32::new(0),
            tid: AtomicI32::new(0),
            base_priority: AtomicI32::new(0),
            stop_priority: AtomicI32::new(0),
        }
    }
}

impl VcpuControl {
    /// Sets the priorities of [`VcpuControl::stop_priority`] and `base_priority` (0: none).
    pub fn set_priorities(&self, base: i32, stop: i32) {
        self.base_priority.store(base, Ordering::SeqCst);
        self.stop_priority.store(stop, Ordering::SeqCst);
    }

    /// Asks the vCPU to stop and kicks it out of the guest (raised first, see `stop_priority`).
    pub fn request_stop(&self) -> io::Result<()> {
        self.stop_req.store(true, Ordering::SeqCst);
        let stop = self.stop_priority.load(Ordering::SeqCst);
        if let (Some(tid), true) = (self.tid(), stop > 0) {
            let p = libc::sched_param { sched_priority: stop };
            // SAFETY: sched_setscheduler on a thread id with a valid policy and parameter; a
            // vanished id only makes the call fail.
            unsafe { libc::sched_setscheduler(tid, libc::SCHED_FIFO, &p) };
        }
        self.kick()
    }

    /// Whether the vCPU thread has acknowledged the stop (or has no guest to run).
    pub fn is_stopped(&self) -> bool {
        !self.running.load(Ordering::SeqCst)
    }

    /// Lets the vCPU run again.
    pub fn release(&self) {
        self.stop_req.store(false, Ordering::SeqCst);
        self.gate.fetch_add(1, Ordering::SeqCst);
        let _ = rt::futex_wake_shared(&self.gate, i32::MAX);
    }

    /// Sends the kick signal to the vCPU thread, if there is one.
    pub fn kick(&self) -> io::Result<()> {
        match self.tid.load(Ordering::SeqCst) {
            0 => Ok(()),
            tid => tgkill(tid, KICK_SIGNAL).or_else(|e| if e.raw_os_error() == Some(libc::ESRCH) { Ok(()) } else { Err(e) }),
        }
    }

    /// Tells the vCPU thread to end (it leaves KVM_RUN or its park at once).
    pub fn quit(&self) {
        self.quit.store(true, Ordering::SeqCst);
        self.gate.fetch_add(1, Ordering::SeqCst);
        let _ = rt::futex_wake_shared(&self.gate, i32::MAX);
        let _ = self.kick();
    }

    /// The vCPU thread's id, while it runs.
    pub fn tid(&self) -> Option<i32> {
        Some(self.tid.load(Ordering::SeqCst)).filter(|&t| t != 0)
    }

    /// Before a (new) vCPU thread is started for this control: not quitting, and not running
    /// until it is about to enter the guest ([`run_loop`] marks it running, then looks at the
    /// stop request once more). A thread that a stop finds not yet there (a restart whose new
    /// thread waits for its CPU behind the next partition) has run no guest instruction, so the
    /// stop is confirmed at once instead of "not confirmed before its next window".
    pub fn prepare_thread(&self) {
        self.quit.store(false, Ordering::SeqCst);
        self.running.store(false, Ordering::SeqCst);
    }

    /// On the vCPU thread, first: records its id.
    pub fn thread_started(&self) {
        self.tid.store(gettid(), Ordering::SeqCst);
    }

    /// On the vCPU thread, last: it no longer runs the guest and can no longer be kicked.
    pub fn thread_ended(&self) {
        self.tid.store(0, Ordering::SeqCst);
        self.running.store(false, Ordering::SeqCst);
    }

    /// On the vCPU thread: waits while the vCPU must not run. False when the thread must end.
    fn park(&self, on_park: &mut dyn FnMut(Park)) -> bool {
        self.running.store(false, Ordering::SeqCst);
        self.parks.fetch_add(1, Ordering::SeqCst);
        on_park(Park::Parked);
        loop {
            let g = self.gate.load(Ordering::SeqCst);
            if self.quit.load(Ordering::SeqCst) {
                return false;
            }
            if !self.stop_req.load(Ordering::SeqCst) {
                break;
            }
            let _ = rt::futex_wait_shared(&self.gate, g, None);
        }
        // Back at the guest's priority (a stop raised it).
        let base = self.base_priority.load(Ordering::SeqCst);
        if base > 0 {
            let _ = rt::set_current_fifo(base);
        }
        // Still not running: [`run_loop`] marks it running just before KVM_RUN, after looking at
        // the request once more. So whatever happens here (the caller's park record is a file
        // write, which a loaded disk can hold for milliseconds) counts as stopped, and a stop
        // requested meanwhile is confirmed at once instead of at the next window.
        on_park(Park::Resumed);
        true
    }

    /// On a vCPU thread that has nothing to run (a secondary vCPU not started by its guest):
    /// waits until told to end; always stopped.
    pub fn idle(&self) {
        self.running.store(false, Ordering::SeqCst);
        loop {
            let g = self.gate.load(Ordering::SeqCst);
            if self.quit.load(Ordering::SeqCst) {
                return;
            }
            let _ = rt::futex_wait_shared(&self.gate, g, None);
        }
    }
}

/// A park record for the caller of [`run_loop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Park {
    /// The vCPU acknowledged a stop (KVM_RUN has returned).
    Parked,
    /// The vCPU was released and is about to enter KVM_RUN.
    Resumed,
}

/// What the caller of [`run_loop`] makes of an exit.
pub enum Flow<E> {
    Continue,
    End(E),
}

/// Runs `vcpu` on the calling thread (armed with [`arm_kick`]) under `ctl`: parks while a
/// stop is requested, hands every exit to `on_exit`. Returns None when told to quit, or what
/// `on_exit` ended with; a KVM_RUN error other than EINTR goes to `on_error`.
pub fn run_loop<E>(
    ctl: &VcpuControl,
    vcpu: &mut VcpuFd,
    mut on_exit: impl FnMut(VcpuExit<'_>) -> Flow<E>,
    on_error: impl Fn(kvm_ioctls::Error) -> E,
    mut on_park: impl FnMut(Park),
) -> Option<E> {
    loop {
        if ctl.quit.load(Ordering::SeqCst) {
            return None;
        }
        if ctl.stop_req.load(Ordering::SeqCst) {
            if !ctl.park(&mut on_park) {
                return None;
            }
            // Cleared before the request is looked at again: a kick after this point either
            // finds the request at the loop's top or sets the flag again.
            vcpu.set_kvm_immediate_exit(0);
            continue;
        }
        // Running from here on, then the request looked at once more: a stop requested before
        // this store is seen at the loop's top, one after it kicks KVM_RUN (the thread id is
        // known since `thread_started`). Both sides use SeqCst.
        if !ctl.running.load(Ordering::SeqCst) {
            ctl.running.store(true, Ordering::SeqCst);
            continue;
        }
        match vcpu.run() {
            Ok(exit) => {
                if let Flow::End(e) = on_exit(exit) {
                    return Some(e);
                }
            }
            // Kicked: cleared before the request is looked at (the loop's top), so that a
            // kick without a stop (a release that came first) does not keep KVM_RUN returning.
            Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => vcpu.set_kvm_immediate_exit(0),
            Err(e) => return Some(on_error(e)),
        }
    }
}
