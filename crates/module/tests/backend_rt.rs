//! Real-time helpers and the capability probe.

use partita_module::backend::{self, process, rt};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

fn root() -> bool {
    partita_testkit::is_root()
}

/// Polls until thread `tid` of this process sleeps (state S in /proc), at most 10 s.
fn wait_until_sleeping(tid: i32) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
        // The state follows the command name in parentheses.
        if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('S')) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "thread {tid} never went to sleep: {stat}");
        std::thread::yield_now();
    }
}

#[test]
fn absolute_sleep_never_returns_early() {
    let mut prev = rt::now_ns();
    for i in 1..=20 {
        let target = prev + i * 50_000;
        rt::sleep_until_ns(target);
        let now = rt::now_ns();
        assert!(now >= target, "woke before the target");
        prev = now;
    }
    let t = rt::now_ns() + 30_000;
    assert!(rt::spin_until_ns(t) >= t);
}

#[test]
fn shared_futex_wake_releases_a_waiter() {
    let word = Arc::new(AtomicU32::new(0));
    let w = word.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        tx.send(unsafe { libc::gettid() }).unwrap();
        let mut timed_out = 0;
        while w.load(Ordering::Acquire) == 0 {
            // A timeout long past the test's own deadline: only the wake can end it in time.
            if !rt::futex_wait_shared(&w, 0, Some(Duration::from_secs(60))).unwrap() {
                timed_out += 1;
            }
        }
        timed_out
    });
    wait_until_sleeping(rx.recv().unwrap());
    word.store(1, Ordering::Release);
    assert_eq!(rt::futex_wake_shared(&word, 1).unwrap(), 1, "the sleeping waiter is woken");
    assert_eq!(waiter.join().unwrap(), 0, "the waiter was released by the wake, not by its timeout");
    // Nobody waits on a word whose value differs: FUTEX_WAIT returns at once.
    assert!(rt::futex_wait_shared(&word, 0, Some(Duration::from_secs(10))).unwrap());
    assert!(!rt::futex_wait_shared(&word, 1, Some(Duration::from_millis(5))).unwrap(), "times out");
}

#[test]
fn pinning_restricts_the_thread_to_one_cpu() {
    std::thread::spawn(|| {
        rt::pin_current_thread(0).unwrap();
        // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: pid 0 = this thread; valid set and size.
        assert_eq!(unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) }, 0);
        // SAFETY: CPU_COUNT/CPU_ISSET read a valid set.
        assert_eq!(unsafe { libc::CPU_COUNT(&set) }, 1);
        // SAFETY: as above.
        assert!(unsafe { libc::CPU_ISSET(0, &set) });
        assert!(rt::pin_current_thread(libc::CPU_SETSIZE as usize).is_err());
    })
    .join()
    .unwrap();
}

#[test]
fn fifo_priority_applies_to_the_calling_thread_only() {
    if !partita_testkit::require("root (SCHED_FIFO)", root()) {
        return;
    }
    std::thread::spawn(|| {
        rt::set_current_fifo(rt::SCHEDULER_PRIORITY).unwrap();
        // SAFETY: pid 0 = this thread.
        let policy = unsafe { libc::sched_getscheduler(0) };
        assert_eq!(policy & !libc::SCHED_RESET_ON_FORK, libc::SCHED_FIFO);
        assert_ne!(policy & libc::SCHED_RESET_ON_FORK, 0, "children must not inherit the RT policy");
        rt::set_current_normal().unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
    })
    .join()
    .unwrap();
    // SAFETY: pid 0 = this thread.
    assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
}

#[test]
fn capability_probe_reports_what_is_missing() {
    let caps = process::probe_capabilities();
    let text = caps.to_string();
    assert!(text.contains("namespaces"), "{text}");
    assert_eq!(caps.complete(), caps.missing.is_empty());
    if root() {
        assert!(caps.namespaces && caps.sched_fifo && caps.mlock, "root has every privilege: {text}");
        if backend::strict() {
            caps.require_if_strict().unwrap_or_else(|e| panic!("CI machine lacks capabilities: {e}"));
        }
    } else {
        assert!(!caps.missing.is_empty(), "an unprivileged user misses something: {text}");
        assert!(caps.missing.iter().all(|m| m.contains(':')), "each message names what is missing: {text}");
    }
}
