//! The core guard: a core whose stop write is blocked in the kernel is still held.
//!
//! A scheduler thread stops the outgoing partition with one write (`cgroup.freeze`,
//! `freezer.state`). That write takes the kernel's global `cgroup_mutex`, which any cgroup work
//! on the host can hold for milliseconds (measured here up to 21 ms while a process was moved
//! into a v1 cgroup: docs/isolation.md). While the scheduler thread sleeps on the mutex, its CPU
//! is free, and the partition it was stopping runs on past its window. Worse, the mutex holder
//! may be an ordinary task that this very partition (real-time) keeps from running: the write
//! then waits until Linux's fair server runs it, up to ~1 s.
//!
//! So before each stop write the scheduler arms the guard ([`CoreGuard::arm_by`]): it records
//! when the partition must be held at the latest and wakes the guard thread, pinned to the same
//! CPU at the scheduler's priority. Being of equal priority, the guard cannot run while the
//! scheduler does; it runs only when the scheduler sleeps in a blocked write, or yields the CPU
//! to it after the write ([`CoreGuard::disarm`]). Woken while the write is blocked, it keeps the
//! core itself (yielding in a loop, so that the scheduler goes on the moment its write returns)
//! until the hold is due, then sends SIGSTOP to every thread of the partition
//! ([`PartitionGate::hold`]): a stop signal needs no cgroup lock, every thread stops before it
//! executes another user instruction, and the CPU is left to whoever holds the mutex. When the
//! write returns, the freeze is in force and the scheduler sends SIGCONT; the partition stays
//! frozen until its next window. Woken after the write, the guard finds nothing armed and waits
//! again.
//!
//! Chosen over a spinner at the top priority, which would hold the core too but also keep the
//! mutex holder from running on it for as long as the write is blocked. It used to wait on a
//! one-shot timer armed before each write and cancelled after it: two `timerfd_settime` calls,
//! each of which reprograms the CPU's timer, ~1 us on one host and 8 us on this nested VM (16 us
//! of every boundary's preparation, docs/scheduling.md). A futex wake and a yield cost ~3 us
//! together, and the partition no longer runs at all while a write is blocked and the hold is
//! not due yet (the guard holds the core meanwhile).

use crate::backend::interface::PartitionGate;
use std::io;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

/// How long a stop write may take before the guard holds the partition. Normal writes take
/// 15-80 us here (p99 with restarts going on); a longer one is blocked.
pub const GUARD_NS: i64 = 200_000;
/// The least time a stop write is given before the guard holds its partition (a stop issued
/// less than [`GUARD_LEAD_NS`] + this before its window end, or after it): a hold costs a
/// signal per thread, and most blocked writes return within a few microseconds. The partition
/// does not run meanwhile (the guard keeps the core).
pub const GUARD_MIN_NS: i64 = 10_000;
/// How long before a stop's due time the guard holds the partition when the write is still
/// blocked (the hold's signals take a few microseconds per thread).
pub const GUARD_LEAD_NS: i64 = 20_000;

const IDLE: u64 = 0;
/// Tags in the top bits of the state word; the low bits hold the partition index.
const ARMED: u64 = 1 << 62;
const FIRING: u64 = 2 << 62;
const HELD: u64 = 3 << 62;
const TAG: u64 = 3 << 62;

/// What the guard did while a stop write was blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// Index of the partition it held.
    pub partition: usize,
    /// When every thread had been sent SIGSTOP (monotonic ns): the stop took effect then.
    pub at_ns: i64,
    /// Threads signalled.
    pub threads: usize,
}

/// The guard of one core (see the module documentation).
pub struct CoreGuard {
    state: AtomicU64,
    /// When an armed guard holds the partition (monotonic ns).
    hold_at: AtomicI64,
    /// Futex word the guard thread waits on; bumped by every arm and wake.
    wake_word: AtomicU32,
    held_at: AtomicI64,
    held_threads: AtomicU64,
    /// Writes that took longer than their bound (the guard held their partition).
    pub holds: AtomicU64,
}

impl CoreGuard {
    pub fn new() -> io::Result<CoreGuard> {
        Ok(CoreGuard {
            state: AtomicU64::new(IDLE),
            hold_at: AtomicI64::new(0),
            wake_word: AtomicU32::new(0),
            held_at: AtomicI64::new(0),
            held_threads: AtomicU64::new(0),
            holds: AtomicU64::new(0),
        })
    }

    fn arm_until(&self, p: usize, hold_at: i64) {
        self.hold_at.store(hold_at, Ordering::Release);
        self.state.store(ARMED | p as u64, Ordering::Release);
        self.kick();
    }

    fn kick(&self) {
        self.wake_word.fetch_add(1, Ordering::AcqRel);
        let _ = crate::backend::rt::futex_wake_private(&self.wake_word, 1);
    }

    /// Called by the scheduler right before the stop write of partition `p`: held after
    /// [`GUARD_NS`] if the write has not returned.
    pub fn arm(&self, p: usize) {
        self.arm_until(p, crate::backend::rt::now_ns() + GUARD_NS);
    }

    /// [`CoreGuard::arm`] for a stop due at `due` (monotonic ns, the window's planned end),
    /// issued at `now`: the guard holds [`GUARD_NS`] after the write began or
    /// [`GUARD_LEAD_NS`] before `due`, whichever comes first, but never sooner than
    /// [`GUARD_MIN_NS`] after the write began. The scheduler issues a stop its margin before
    /// the window end, so with the bound counted from the write alone a blocked write let the
    /// partition run ~100-600 us past its window (issue 10, the soak's `slow_stop` class,
    /// docs/isolation.md).
    pub fn arm_by(&self, p: usize, now: i64, due: i64) {
        self.arm_until(p, now + (due - GUARD_LEAD_NS - now).clamp(GUARD_MIN_NS, GUARD_NS));
    }

    /// Called by the scheduler once the stop write returned: lets the guard thread (woken by
    /// the arm) run and wait again, and, if it held the partition meanwhile, releases that
    /// hold (the freeze is in force now).
    pub fn disarm(&self, gate: &dyn PartitionGate) -> Option<Held> {
        loop {
            let s = self.state.load(Ordering::Acquire);
            match s & TAG {
                ARMED => {
                    if self.state.compare_exchange(s, IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                        // The guard is runnable (armed) at this thread's priority on this CPU:
                        // let it see IDLE and wait now, not when this thread next sleeps
                        // (that would be at the boundary, at the incoming partition's cost).
                        std::thread::yield_now();
                        return None;
                    }
                }
                // The guard is signalling (it was preempted on its way): let it finish.
                FIRING => std::thread::yield_now(),
                HELD => {
                    self.state.store(IDLE, Ordering::Release);
                    let _ = gate.unhold();
                    return Some(Held {
                        partition: (s & !TAG) as usize,
                        at_ns: self.held_at.load(Ordering::Acquire),
                        threads: self.held_threads.load(Ordering::Acquire) as usize,
                    });
                }
                _ => return None,
            }
        }
    }

    /// Wakes the guard thread (with nothing armed) so that it sees the end of the run.
    pub fn wake(&self) {
        self.kick();
    }

    /// The guard thread's loop (pinned to the core's CPU, at the scheduler's priority) until
    /// `done()`; `gate_of(p)` is the gate the scheduler is stopping for partition `p`.
    pub fn run<'a>(&self, done: impl Fn() -> bool, gate_of: impl Fn(usize) -> &'a dyn PartitionGate) {
        loop {
            let seen = self.wake_word.load(Ordering::Acquire);
            if done() {
                return;
            }
            let s = self.state.load(Ordering::Acquire);
            if s & TAG != ARMED {
                // Nothing armed (or the write returned in time): wait for the next arm.
                let _ = crate::backend::rt::futex_wait_private(&self.wake_word, seen, None);
                continue;
            }
            // Running while armed: the scheduler sleeps in its write. Keep the core (the
            // partition cannot run) until the hold is due, yielding so that the scheduler goes
            // on as soon as the write returns.
            let hold_at = self.hold_at.load(Ordering::Acquire);
            while self.state.load(Ordering::Acquire) == s && crate::backend::rt::now_ns() < hold_at {
                std::thread::yield_now();
            }
            if self.state.compare_exchange(s, FIRING | (s & !TAG), Ordering::AcqRel, Ordering::Acquire).is_err() {
                continue; // the write returned in time
            }
            let p = (s & !TAG) as usize;
            let threads = gate_of(p).hold().unwrap_or(0);
            self.held_at.store(crate::backend::rt::now_ns(), Ordering::Release);
            self.held_threads.store(threads as u64, Ordering::Release);
            self.holds.fetch_add(1, Ordering::AcqRel);
            self.state.store(HELD | p as u64, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    /// A gate whose stop write blocks until the partition is held (or 10 s pass).
    #[derive(Default)]
    struct BlockingGate {
        held: AtomicBool,
        unheld: AtomicBool,
    }

    impl PartitionGate for BlockingGate {
        fn request_stop(&self) -> io::Result<()> {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !self.held.load(Ordering::Acquire) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }
        fn is_stopped(&self) -> io::Result<bool> {
            Ok(true)
        }
        fn release(&self) -> io::Result<()> {
            Ok(())
        }
        fn mechanism(&self) -> &'static str {
            "test"
        }
        fn hold(&self) -> io::Result<usize> {
            self.held.store(true, Ordering::Release);
            Ok(3)
        }
        fn unhold(&self) -> io::Result<()> {
            assert!(self.held.load(Ordering::Acquire), "released without a hold");
            self.unheld.store(true, Ordering::Release);
            Ok(())
        }
    }

    #[test]
    fn a_blocked_stop_write_gets_its_partition_held_and_released_after_the_write() {
        let guard = CoreGuard::new().unwrap();
        let gate = BlockingGate::default();
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| guard.run(|| done.load(Ordering::Acquire), |_| &gate as &dyn PartitionGate));
            let before = crate::backend::rt::now_ns();
            guard.arm(7);
            gate.request_stop().unwrap();
            let held = guard.disarm(&gate);
            done.store(true, Ordering::Release);
            guard.wake();
            assert!(gate.held.load(Ordering::Acquire), "the guard never held the partition");
            let held = held.expect("disarm reports the hold");
            assert_eq!((held.partition, held.threads), (7, 3));
            assert!(held.at_ns >= before + GUARD_NS, "held before the bound");
            assert!(gate.unheld.load(Ordering::Acquire), "the hold was not undone after the write");
            assert_eq!(guard.holds.load(Ordering::Acquire), 1);
        });
    }

    #[test]
    fn a_stop_due_soon_is_held_by_its_due_time_but_never_before_the_floor() {
        let guard = CoreGuard::new().unwrap();
        let done = AtomicBool::new(false);
        // (due, relative to the write's start) -> the earliest the hold may come.
        for (due, floor) in [(0, GUARD_MIN_NS), (-1_000_000, GUARD_MIN_NS), (10_000_000, GUARD_NS), (GUARD_NS, GUARD_NS - GUARD_LEAD_NS)] {
            let gate = BlockingGate::default();
            std::thread::scope(|s| {
                s.spawn(|| guard.run(|| done.load(Ordering::Acquire), |_| &gate as &dyn PartitionGate));
                let now = crate::backend::rt::now_ns();
                guard.arm_by(1, now, now + due);
                gate.request_stop().unwrap();
                let held = guard.disarm(&gate).expect("the blocked write was held");
                assert!(held.at_ns >= now + floor, "due {due}: held {} ns after the write began", held.at_ns - now);
                done.store(true, Ordering::Release);
                guard.wake();
            });
            done.store(false, Ordering::Release);
        }
    }

    #[test]
    fn a_disarmed_guard_never_holds() {
        let guard = CoreGuard::new().unwrap();
        let gate = BlockingGate::default();
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| guard.run(|| done.load(Ordering::Acquire), |_| &gate as &dyn PartitionGate));
            for p in 0..20 {
                guard.arm(p);
                // Whatever the guard did meanwhile (this thread may be preempted for longer
                // than the bound), a hold is always undone by the disarm.
                let held = guard.disarm(&gate);
                assert_eq!(held.is_some(), gate.unheld.swap(false, Ordering::AcqRel));
                gate.held.store(false, Ordering::Release);
            }
            done.store(true, Ordering::Release);
            guard.wake();
        });
    }
}
