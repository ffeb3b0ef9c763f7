//! Thin wrappers over the Linux primitives the runtime is built on: the monotonic clock (vDSO),
//! futexes, thread priorities and affinities, signals. Everything here is async-signal-safe.

use core::sync::atomic::AtomicU32;
use std::cell::Cell;
use std::ptr;

pub use partita_abi::clock::now_ns;

fn timespec(ns: i64) -> libc::timespec {
    let ns = ns.max(0);
    libc::timespec { tv_sec: ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000 }
}

/// Whether a futex lives in memory private to this process (faster) or in memory shared with
/// the module (the control block), where the module's FUTEX_WAKE must find our waiters.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Futex {
    Private,
    Shared,
}

/// Outcome of a futex wait.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wait {
    /// Woken, interrupted by a signal, or the value had already changed: re-check the condition.
    Retry,
    /// The absolute deadline passed.
    TimedOut,
}

thread_local! {
    /// Whether the calling thread is blocked in one of the runtime's own waits (see
    /// `in_runtime_wait`).
    static IN_WAIT: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is inside `futex_wait`: the stop signal handler may act there at
/// once, although the interrupted instruction is inside the C library's `syscall()` (the runtime
/// holds no C library lock while it waits).
pub fn in_runtime_wait() -> bool {
    IN_WAIT.with(|w| w.get())
}

/// Forgets a wait abandoned by a jump back to the top of a process thread.
pub fn reset_runtime_wait() {
    IN_WAIT.with(|w| w.set(false));
}

/// Blocks while `*word == expected`, until `deadline_ns` (absolute CLOCK_MONOTONIC) if given.
pub fn futex_wait(word: &AtomicU32, expected: u32, deadline_ns: Option<i64>, kind: Futex) -> Wait {
    let op = libc::FUTEX_WAIT_BITSET | if kind == Futex::Private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    let ts = deadline_ns.map(timespec);
    let tsp = ts.as_ref().map_or(ptr::null(), |t| t as *const libc::timespec);
    // (Nested waits: a SUSPEND parks inside the signal handler that interrupted a wait.)
    let outer = IN_WAIT.with(|w| w.replace(true));
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call; `tsp` is null or
    // points to a live timespec; FUTEX_WAIT_BITSET with an all-ones mask waits on CLOCK_MONOTONIC.
    let r = unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, expected, tsp, ptr::null::<u32>(), u32::MAX) };
    IN_WAIT.with(|w| w.set(outer));
    if r == -1 && errno() == libc::ETIMEDOUT { Wait::TimedOut } else { Wait::Retry }
}

/// Wakes up to `n` waiters of `word`.
pub fn futex_wake(word: &AtomicU32, n: i32, kind: Futex) {
    let op = libc::FUTEX_WAKE | if kind == Futex::Private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    // SAFETY: FUTEX_WAKE only uses the address as a key; `word` is valid.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, n) };
}

pub fn errno() -> i32 {
    // SAFETY: __errno_location always returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// The CPU the calling thread runs on (glibc reads it from rseq or the vDSO: no system call).
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    u32::try_from(c).ok()
}

pub fn cpu_set(cpus: &[u32]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { core::mem::zeroed() };
    for &c in cpus {
        // SAFETY: CPU_SET ignores CPU numbers beyond the set's capacity.
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    set
}

/// Pins thread `t` to `cpus`; returns the error number on failure.
pub fn set_affinity(t: libc::pthread_t, cpus: &[u32]) -> Result<(), i32> {
    let set = cpu_set(cpus);
    // SAFETY: `t` is a live thread handle of this process (process threads never exit) and
    // `set` is a valid cpu_set_t of the size given.
    let r = unsafe { libc::pthread_setaffinity_np(t, size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 { Ok(()) } else { Err(r) }
}

/// Sets thread `t` to SCHED_FIFO at `prio`; returns the error number on failure.
pub fn set_fifo_priority(t: libc::pthread_t, prio: i32) -> Result<(), i32> {
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: `t` is a live thread handle of this process; `param` is valid.
    let r = unsafe { libc::pthread_setschedparam(t, libc::SCHED_FIFO, &param) };
    if r == 0 { Ok(()) } else { Err(r) }
}

pub fn yield_now() {
    // SAFETY: no preconditions.
    unsafe { libc::sched_yield() };
}

/// Writes all of `bytes` to `fd` (retrying short writes and EINTR); async-signal-safe.
pub fn write_all(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a valid readable slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// Sends signal `sig` to thread `t` of this process.
pub fn signal_thread(t: libc::pthread_t, sig: i32) {
    // SAFETY: `t` is a live thread of this process (process threads never exit).
    unsafe { libc::pthread_kill(t, sig) };
}

/// A tiny fixed-capacity text buffer, for messages built without allocating (signal handlers,
/// the no-system-call paths).
pub struct Line {
    buf: [u8; 256],
    len: usize,
}

impl Line {
    pub fn new() -> Line {
        Line { buf: [0; 256], len: 0 }
    }

    pub fn bytes(&mut self, b: &[u8]) -> &mut Line {
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
        self
    }

    pub fn str(&mut self, s: &str) -> &mut Line {
        self.bytes(s.as_bytes())
    }

    pub fn int(&mut self, v: i64) -> &mut Line {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut u = v.unsigned_abs();
        loop {
            i -= 1;
            digits[i] = b'0' + (u % 10) as u8;
            u /= 10;
            if u == 0 {
                break;
            }
        }
        if v < 0 {
            self.bytes(b"-");
        }
        self.bytes(&digits[i..])
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Default for Line {
    fn default() -> Self {
        Line::new()
    }
}

/// Moves every thread of this process to SCHED_OTHER before the process ends on its own: a
/// process whose threads exit at different real-time priorities on one CPU can hold that CPU
/// for ever in the kernel's exit path (the module's `backend::rt::demote_threads`). Under the
/// module's system call filter (`Seccomp: 2` in /proc/self/status) nothing is done: the
/// module's broker demotes the threads itself when the exit_group arrives, and these calls
/// would only queue behind it. Standalone (no module, no filter) the calls are made directly.
pub fn demote_own_threads_before_exit() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if status.lines().any(|l| l.strip_prefix("Seccomp:").is_some_and(|v| v.trim() == "2")) {
        return;
    }
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return };
    let param = libc::sched_param { sched_priority: 0 };
    for tid in tasks.flatten().filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok()) {
        // SAFETY: sched_setscheduler on a thread id of this process with a valid parameter; a
        // thread gone meanwhile only makes the call fail.
        unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &param) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_formats_integers() {
        let mut l = Line::new();
        l.str("a=").int(0).str(" b=").int(-42).str(" c=").int(i64::MIN);
        assert_eq!(l.as_bytes(), b"a=0 b=-42 c=-9223372036854775808");
    }

    #[test]
    fn futex_wait_times_out_and_sees_changed_values() {
        let w = AtomicU32::new(1);
        assert_eq!(futex_wait(&w, 0, None, Futex::Private), Wait::Retry);
        assert_eq!(futex_wait(&w, 1, Some(now_ns() + 1_000_000), Futex::Private), Wait::TimedOut);
    }
}
