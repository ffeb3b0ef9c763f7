//! Synchronous faults as health-monitor errors: SIGFPE is NUMERIC_ERROR, SIGSEGV and SIGBUS are
//! MEMORY_VIOLATION, or STACK_OVERFLOW when the address is in the guard area below the faulting
//! process's stack, and SIGSYS (a system call the module's seccomp filter forbids) is
//! ILLEGAL_REQUEST. The handlers run on an alternate signal stack (a process that overflowed
//! its stack has none left). A process that faulted cannot go on: it becomes DORMANT (like
//! STOP_SELF) once the error is routed; the initialization process stops for good. A forbidden
//! system call only fails (ENOSYS) and the caller goes on; the HM action decides what follows.

use crate::kernel::{body, critical, hm, process};
use partita_abi::error_code;
use std::cell::Cell;
use std::sync::atomic::{AtomicI32, Ordering};

/// Size of each thread's alternate signal stack.
const ALT_STACK: usize = 64 << 10;

thread_local! {
    /// The guard area below this thread's stack: [start, end).
    static GUARD: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// The partition's own process: a child it forks inherits the handlers and the shared control
/// block, but its faults are not the partition's (they take the default action instead).
static PARTITION_PID: AtomicI32 = AtomicI32::new(0);

/// Installs the fault handlers (once, at runtime start).
pub fn install() {
    // SAFETY: getpid has no preconditions.
    PARTITION_PID.store(unsafe { libc::getpid() }, Ordering::Relaxed);
    for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGSYS] {
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
    // SAFETY: getpid and signal are async-signal-safe; the faulting instruction runs again on
    // return and then takes the default action (a trapped system call: the kernel's default).
    unsafe {
        if libc::getpid() != PARTITION_PID.load(Ordering::Relaxed) {
            libc::signal(sig, libc::SIG_DFL);
            if sig == libc::SIGSYS {
                libc::raise(sig);
            }
            return;
        }
    }
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let info = unsafe { &*info };
    // SAFETY: si_addr is valid for the fault signals handled here.
    let addr = unsafe { info.si_addr() } as usize;
    let (start, end) = GUARD.with(|g| g.get());
    let (code, message): (u32, &[u8]) = match sig {
        libc::SIGFPE => (error_code::NUMERIC_ERROR, b"arithmetic fault (SIGFPE)"),
        libc::SIGSYS => (error_code::ILLEGAL_REQUEST, b"forbidden system call (SIGSYS)"),
        _ if addr >= start && addr < end => (error_code::STACK_OVERFLOW, b"stack overflow (guard page)"),
        _ => (error_code::MEMORY_VIOLATION, b"memory violation (SIGSEGV/SIGBUS)"),
    };
    let me = process::current_index();
    let address = if sig == libc::SIGSYS { 0 } else { addr };
    if sig == libc::SIGSYS {
        hm::error_detected(code, me, message, address, false);
        fail_with_enosys(ctx);
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
            body::stop_after_fault(i)
        }
        _ => {
            hm::error_detected(code, me, message, address, false);
            body::park_forever()
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
