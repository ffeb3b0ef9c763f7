//! Synchronous faults as health-monitor errors: SIGFPE is NUMERIC_ERROR, SIGSEGV and SIGBUS are
//! MEMORY_VIOLATION, or STACK_OVERFLOW when the address is in the guard area below the faulting
//! process's stack, and SIGSYS (a system call the module's seccomp filter forbids) is
//! ILLEGAL_REQUEST. The handlers run on an alternate signal stack (a process that overflowed
//! its stack has none left). A process that faulted cannot go on: it becomes DORMANT (like
//! STOP_SELF) once the error is routed; the initialization process stops for good. A forbidden
//! system call only fails (ENOSYS) and the caller goes on; the HM action decides what follows.
//! SIGILL is ILLEGAL_REQUEST and SIGABRT (abort, a panic) APPLICATION_ERROR, the same way.
//!
//! The last resort ([`last_resort`]): a fault the runtime cannot turn into an error of a process
//! or of the initialization process (a second fault while the handler runs, a fault on a thread
//! that is neither, or in a process the partition forked) ends the process with `exit_group`,
//! status 128 + the signal, never by the signal's default action: the module's seccomp filter
//! hands `exit_group` to its broker, which moves every thread to SCHED_OTHER first (a process
//! killed by a signal at several real-time priorities can hold its CPU for ever in the kernel;
//! docs/isolation.md, "Exits"). The module reads the status as that signal's error.

use crate::kernel::{body, critical, hm, process, sys};
use partita_abi::error_code;
use std::cell::Cell;
use std::sync::atomic::{AtomicI32, Ordering};

/// Size of each thread's alternate signal stack.
const ALT_STACK: usize = 64 << 10;

thread_local! {
    /// The guard area below this thread's stack: [start, end).
    static GUARD: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    /// Set while this thread runs the fault handler (SA_NODEFER: a fault in the handler enters
    /// it again, and is the last resort's).
    static IN_FAULT: Cell<bool> = const { Cell::new(false) };
}

/// The fault signals the runtime handles.
const FAULTS: [i32; 6] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGSYS, libc::SIGILL, libc::SIGABRT];

/// The partition's own process: a child it forks inherits the handlers and the shared control
/// block, but its faults are not the partition's (they take the default action instead).
static PARTITION_PID: AtomicI32 = AtomicI32::new(0);

/// Installs the fault handlers (once, at runtime start).
pub fn install() {
    // SAFETY: getpid has no preconditions.
    PARTITION_PID.store(unsafe { libc::getpid() }, Ordering::Relaxed);
    for sig in FAULTS {
        // SAFETY: a zeroed then filled sigaction; the handler only uses async-signal-safe
        // operations (atomics, futex, write, siglongjmp).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fault as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Gives the calling thread an alternate signal stack and records its stack guard area.
pub fn prepare_thread() {
    // SAFETY: mapping fresh anonymous memory for the alternate stack (kept for the thread's
    // life: process threads never end); pthread_getattr_np fills an attribute object that is
    // destroyed afterwards.
    unsafe {
        let p =
            libc::mmap(std::ptr::null_mut(), ALT_STACK, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if p != libc::MAP_FAILED {
            let ss = libc::stack_t { ss_sp: p, ss_flags: 0, ss_size: ALT_STACK };
            libc::sigaltstack(&ss, std::ptr::null_mut());
        }
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) == 0 {
            let mut addr: *mut libc::c_void = std::ptr::null_mut();
            let mut size = 0usize;
            let mut guard = 0usize;
            libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
            libc::pthread_attr_getguardsize(&attr, &mut guard);
            let lo = addr as usize;
            GUARD.with(|g| g.set((lo.saturating_sub(guard.max(4096)), lo)));
            libc::pthread_attr_destroy(&mut attr);
        }
    }
}

extern "C" fn on_fault(sig: i32, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if IN_FAULT.with(|f| f.replace(true)) {
        last_resort(sig, b"a fault while handling a fault");
    }
    // SAFETY: getpid is async-signal-safe.
    let pid = unsafe { libc::getpid() };
    if pid != PARTITION_PID.load(Ordering::Relaxed) {
        last_resort(sig, b"a fault in a process the partition forked");
    }
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let info = unsafe { &*info };
    // SIGABRT from another process (kill, sigqueue: si_code <= 0, a sender's pid) is no fault of
    // this one: dropped, as the kernel drops a signal this process (the init of its namespace)
    // does not catch. abort() sends it to itself.
    // SAFETY: si_pid is valid for a signal with si_code <= 0 (SI_USER, SI_QUEUE, SI_TKILL).
    if sig == libc::SIGABRT && info.si_code <= 0 && unsafe { info.si_pid() } != pid {
        IN_FAULT.with(|f| f.set(false));
        return;
    }
    // SAFETY: si_addr is valid for the fault signals handled here (0 for SIGABRT).
    let addr = if sig == libc::SIGABRT { 0 } else { (unsafe { info.si_addr() }) as usize };
    let (start, end) = GUARD.with(|g| g.get());
    let (code, message): (u32, &[u8]) = match sig {
        libc::SIGFPE => (error_code::NUMERIC_ERROR, b"arithmetic fault (SIGFPE)"),
        libc::SIGSYS => (error_code::ILLEGAL_REQUEST, b"forbidden system call (SIGSYS)"),
        libc::SIGILL => (error_code::ILLEGAL_REQUEST, b"illegal instruction (SIGILL)"),
        libc::SIGABRT => (error_code::APPLICATION_ERROR, b"abort (SIGABRT)"),
        _ if addr >= start && addr < end => (error_code::STACK_OVERFLOW, b"stack overflow (guard page)"),
        _ => (error_code::MEMORY_VIOLATION, b"memory violation (SIGSEGV/SIGBUS)"),
    };
    let me = process::current_index();
    let address = if sig == libc::SIGSYS { 0 } else { addr };
    if sig == libc::SIGSYS {
        hm::error_detected(code, me, message, address, false);
        fail_with_enosys(ctx);
        IN_FAULT.with(|f| f.set(false));
        return; // the caller goes on
    }
    let rt = crate::kernel::runtime::rt();
    match me {
        // SAFETY of the jump (inside stop_after_fault): outside the runtime's critical sections
        // the faulting frames hold no runtime lock.
        Some(i) if !critical::in_critical() => {
            // FAULTED before the error is routed: an error handler preempts this process as soon
            // as it is woken, and must see FAULTED (P1-5: it decides what becomes of it).
            let slot = &rt.procs[i];
            let before = slot.state.load(Ordering::Acquire);
            body::mark_faulted(slot);
            if hm::error_detected(code, me, message, address, false) == hm::Routed::ErrorHandler {
                body::wait_while_faulted(slot)
            }
            // Not the handler's: the module's action decides; the process is done with.
            let _ = slot.state.compare_exchange(process::FAULTED, before, Ordering::AcqRel, Ordering::Acquire);
            IN_FAULT.with(|f| f.set(false));
            body::stop_after_fault(i)
        }
        // SAFETY: gettid is async-signal-safe. The initialization process is the main thread.
        None if unsafe { libc::gettid() } != pid => last_resort(sig, b"a fault on a thread that is not a process"),
        _ => {
            hm::error_detected(code, me, message, address, false);
            body::park_forever()
        }
    }
}

/// Ends this process with `exit_group(128 + sig)` (through the module's broker, which demotes
/// every thread first), after a line on standard error. Never the signal's default action. If
/// the broker has stopped (the run is ending: `exit_group` fails with ENOSYS), only this thread
/// ends, and the module kills the rest, demoted.
fn last_resort(sig: i32, why: &[u8]) -> ! {
    let mut l = sys::Line::new();
    l.str("partita-apex: fatal signal ").int(i64::from(sig)).str(" (").bytes(why).str("): the process ends\n");
    sys::write_all(2, l.as_bytes());
    // SAFETY: exit_group and exit take an int and do not return when they succeed.
    unsafe {
        libc::syscall(libc::SYS_exit_group, 128 + sig);
        loop {
            libc::syscall(libc::SYS_exit, 128 + sig);
        }
    }
}

/// Makes the trapped system call return -ENOSYS (the kernel leaves the return register as it
/// was: the call number).
fn fail_with_enosys(ctx: *mut libc::c_void) {
    let uc = ctx as *mut libc::ucontext_t;
    // SAFETY: for an SA_SIGINFO handler, `ctx` is the interrupted thread's ucontext, which the
    // kernel restores on return; only the return-value register is changed.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        {
            (*uc).uc_mcontext.gregs[libc::REG_RAX as usize] = -(libc::ENOSYS as i64);
        }
        #[cfg(target_arch = "aarch64")]
        {
            (*uc).uc_mcontext.regs[0] = (-(libc::ENOSYS as i64)) as u64;
        }
    }
}
