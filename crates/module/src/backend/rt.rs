//! Real-time helpers for the module's scheduler threads: clock, sleeps, pinning, policies,
//! shared futexes. (The capability probe is in `probe.rs`.)

use super::sys;
use std::io;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// `SCHED_FIFO` priority of the per-core partition schedulers.
pub const SCHEDULER_PRIORITY: i32 = 99;

pub use partita_abi::clock::now_ns;

fn timespec(ns: i64) -> libc::timespec {
    libc::timespec { tv_sec: ns.div_euclid(1_000_000_000) as libc::time_t, tv_nsec: ns.rem_euclid(1_000_000_000) as libc::c_long }
}

/// Sleeps until the absolute `CLOCK_MONOTONIC` instant `t_ns` (`TIMER_ABSTIME`), resuming
/// after signals. Returns at once if `t_ns` is past.
pub fn sleep_until_ns(t_ns: i64) {
    let ts = timespec(t_ns);
    loop {
        // SAFETY: valid clock, flags and timespec; no remainder needed for absolute sleeps.
        let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        if r != libc::EINTR {
            return;
        }
    }
}

/// Sleeps for `ns` nanoseconds (relative).
pub fn sleep_for_ns(ns: i64) {
    sleep_until_ns(now_ns() + ns);
}

/// Busy-waits until `CLOCK_MONOTONIC` reaches `t_ns`; returns the first reading at or past it.
pub fn spin_until_ns(t_ns: i64) -> i64 {
    loop {
        let now = now_ns();
        if now >= t_ns {
            return now;
        }
        std::hint::spin_loop();
    }
}

/// Pins the calling thread to host CPU `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    pin_current_thread_to(&[cpu])
}

/// Pins the calling thread to a set of host CPUs.
pub fn pin_current_thread_to(cpus: &[usize]) -> io::Result<()> {
    let set = cpu_set(cpus)?;
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the given size.
    sys::cvt(unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } as libc::c_long)?;
    Ok(())
}

pub(crate) fn cpu_set(cpus: &[usize]) -> io::Result<libc::cpu_set_t> {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("CPU {c} out of range")));
        }
        // SAFETY: `c` was checked to be below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    Ok(set)
}

/// Makes the calling thread `SCHED_FIFO` at `priority` (1..=99), with `SCHED_RESET_ON_FORK`
/// so that processes it starts do not inherit the real-time policy.
pub fn set_current_fifo(priority: i32) -> io::Result<()> {
    let p = libc::sched_param { sched_priority: priority };
    // SAFETY: pid 0 is the calling thread; valid policy and parameter.
    sys::cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &p) } as libc::c_long)?;
    Ok(())
}

/// Moves the calling thread to SCHED_IDLE: it runs only when nothing else on its CPU wants to.
pub fn set_current_idle() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler on the calling thread (0) with a valid parameter.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Returns the calling thread to `SCHED_OTHER`.
pub fn set_current_normal() -> io::Result<()> {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; valid policy and parameter.
    sys::cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &p) } as libc::c_long)?;
    Ok(())
}

/// The calling thread at `SCHED_FIFO` for as long as the value lives; its previous policy and
/// priority come back on drop. For work that must finish promptly whatever else the host runs:
/// a run's teardown after its stop, which at the normal policy waited seconds behind a busy
/// host's other processes.
pub struct RaisedPriority {
    policy: i32,
    param: libc::sched_param,
    /// Not `Send`: the drop must run on the thread that raised itself.
    _thread: std::marker::PhantomData<*const ()>,
}

impl RaisedPriority {
    pub fn raise(priority: i32) -> io::Result<RaisedPriority> {
        // SAFETY: pid 0 is the calling thread; `param` is a writable sched_param.
        let policy = unsafe { libc::sched_getscheduler(0) };
        let mut param = libc::sched_param { sched_priority: 0 };
        // SAFETY: as above.
        sys::cvt(unsafe { libc::sched_getparam(0, &mut param) } as libc::c_long)?;
        set_current_fifo(priority)?;
        Ok(RaisedPriority { policy, param, _thread: std::marker::PhantomData })
    }
}

impl Drop for RaisedPriority {
    fn drop(&mut self) {
        // SAFETY: pid 0 is the calling thread, the one that raised itself (the value is not Send);
        // policy and parameter are the ones it had.
        unsafe { libc::sched_setscheduler(0, self.policy, &self.param) };
    }
}

/// Moves threads `tids` to `SCHED_OTHER` before they are killed. A thread that dies at a
/// real-time priority can spin in the kernel's exit path (release_task -> d_walk on Linux
/// 6.18) waiting for a lower-priority sibling on its CPU that it never lets run, which holds
/// the CPU until reboot; at the normal policy every dying thread gets the CPU in turn.
/// Threads already gone are skipped.
pub fn demote_threads(tids: impl IntoIterator<Item = i32>) {
    let p = libc::sched_param { sched_priority: 0 };
    for tid in tids {
        // SAFETY: sched_setscheduler on a thread id with a valid policy and parameter; a
        // vanished or foreign id only makes the call fail.
        unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &p) };
    }
}

/// The thread ids of process `pid` (from /proc/<pid>/task; empty once it is gone).
pub fn threads_of(pid: i32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default()
}

/// `mlockall(MCL_CURRENT | MCL_FUTURE)`: no page fault delays a scheduler thread.
pub fn lock_memory() -> io::Result<()> {
    // SAFETY: plain system call with valid flags.
    sys::cvt(unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } as libc::c_long)?;
    Ok(())
}

/// `FUTEX_WAKE` (shared, no `FUTEX_PRIVATE_FLAG`: the word lives in memory shared with a
/// partition process) of up to `n` waiters on `word`. Returns how many were woken.
pub fn futex_wake_shared(word: &AtomicU32, n: i32) -> io::Result<usize> {
    futex_wake(word, n, libc::FUTEX_WAKE)
}

/// `FUTEX_WAKE` of a word only this process uses (`FUTEX_PRIVATE_FLAG`: no shared-key lookup).
pub fn futex_wake_private(word: &AtomicU32, n: i32) -> io::Result<usize> {
    futex_wake(word, n, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG)
}

fn futex_wake(word: &AtomicU32, n: i32, op: libc::c_int) -> io::Result<usize> {
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call.
    let r = sys::cvt(unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, n, 0usize, 0usize, 0u32) })?;
    Ok(r as usize)
}

/// `FUTEX_WAIT` (shared) while `*word == expected`, at most `timeout`. Returns false on
/// timeout. Spurious returns are possible: callers re-check their condition.
pub fn futex_wait_shared(word: &AtomicU32, expected: u32, timeout: Option<Duration>) -> io::Result<bool> {
    futex_wait(word, expected, timeout, libc::FUTEX_WAIT)
}

/// [`futex_wait_shared`] on a word only this process uses (`FUTEX_PRIVATE_FLAG`).
pub fn futex_wait_private(word: &AtomicU32, expected: u32, timeout: Option<Duration>) -> io::Result<bool> {
    futex_wait(word, expected, timeout, libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG)
}

fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>, op: libc::c_int) -> io::Result<bool> {
    let ts = timeout.map(|d| timespec(d.as_nanos().min(i64::MAX as u128) as i64));
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: valid aligned word and an optional relative timespec, as FUTEX_WAIT expects.
    let r = unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, expected, tsp, 0usize, 0u32) };
    if r == 0 {
        return Ok(true);
    }
    match sys::errno() {
        libc::EAGAIN | libc::EINTR => Ok(true),
        libc::ETIMEDOUT => Ok(false),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}
