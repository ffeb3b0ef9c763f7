//! The partition-local queue of processes waiting on one queuing port, in FIFO or PRIORITY
//! order. Only the first waiter sleeps on the channel's shared futex word (the other
//! partition wakes it); the others sleep on a private word that is bumped whenever the queue
//! changes, so each waiter is woken by an event, never by polling.
//!
//! (Partition-local wait queues for buffers, semaphores and events are being written on
//! another branch; this one is minimal and private to the ports.)

use super::QueuingDiscipline;
use crate::critical::NoStop;
use crate::process::{self, id_of};
use crate::runtime::{Runtime, rt};
use crate::sys::{self, Futex, Wait};
use crate::time::note_dispatch;
use crate::types::*;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

struct Waiter {
    ticket: u64,
    process: usize,
    /// The process's STOP count when it queued: a stopped waiter no longer counts.
    stop_gen: u32,
}

pub struct WaitQueue {
    discipline: QueuingDiscipline,
    waiters: Mutex<(u64, Vec<Waiter>)>,
    /// Bumped (and woken) whenever the queue changes.
    changed: AtomicU32,
}

/// A STOP can take a waiting process away without it leaving the queue: non-first waiters
/// look again this often (only then; the normal hand-over is an explicit wake).
const STOPPED_WAITER_CHECK_NS: i64 = 50_000_000;

impl WaitQueue {
    pub fn new(discipline: QueuingDiscipline) -> WaitQueue {
        WaitQueue { discipline, waiters: Mutex::new((0, Vec::new())), changed: AtomicU32::new(0) }
    }

    fn live(rt: &Runtime, w: &Waiter) -> bool {
        rt.procs[w.process].stop_gen.load(Ordering::Acquire) == w.stop_gen
    }

    /// Number of processes waiting (WAITING_PROCESSES).
    pub fn len(&self) -> usize {
        let rt = rt();
        let _n = NoStop::enter();
        let q = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
        q.1.iter().filter(|w| Self::live(rt, w)).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn first(&self, rt: &Runtime, q: &[Waiter]) -> Option<u64> {
        let live = q.iter().filter(|w| Self::live(rt, w));
        let best = match self.discipline {
            QueuingDiscipline::Fifo => live.min_by_key(|w| w.ticket),
            QueuingDiscipline::Priority => live.min_by_key(|w| (-rt.procs[w.process].current_priority.load(Ordering::Acquire), w.ticket)),
        };
        best.map(|w| w.ticket)
    }

    /// Leaves the queue; the last one out clears `flag` (under the queue lock, so that a
    /// process queuing meanwhile sets it again after).
    fn leave(&self, ticket: u64, flag: &AtomicU32) {
        let _n = NoStop::enter();
        let mut q = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
        q.1.retain(|w| w.ticket != ticket);
        if q.1.is_empty() {
            flag.store(0, Ordering::SeqCst);
        }
        drop(q);
        self.changed.fetch_add(1, Ordering::Release);
        sys::futex_wake(&self.changed, i32::MAX, Futex::Private);
    }

    /// Waits until `attempt` succeeds (it is tried only by the first waiter), or until
    /// `deadline` (absolute CLOCK_MONOTONIC; None: forever). `shared` is the channel word the
    /// other partition bumps and wakes; `flag` tells it that someone here waits.
    pub fn wait<T>(
        &self,
        shared: &AtomicU32,
        flag: &AtomicU32,
        deadline: Option<i64>,
        mut attempt: impl FnMut() -> Option<T>,
    ) -> ApexResult<T> {
        let rt = rt();
        let (index, slot) = process::current(rt).ok_or(ErrorReturnCode::InvalidMode)?;
        let ticket = {
            let _n = NoStop::enter();
            let mut q = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
            let t = q.0;
            q.0 += 1;
            q.1.push(Waiter { ticket: t, process: index, stop_gen: slot.stop_gen.load(Ordering::Acquire) });
            t
        };
        slot.waiting.store(1, Ordering::Release);
        let result = loop {
            let changed = self.changed.load(Ordering::Acquire);
            let first = {
                let _n = NoStop::enter();
                let q = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
                self.first(rt, &q.1) == Some(ticket)
            };
            let outcome = if first {
                flag.store(1, Ordering::SeqCst);
                let seen = shared.load(Ordering::SeqCst);
                if let Some(r) = attempt() {
                    break Ok(r);
                }
                sys::futex_wait(shared, seen, deadline, Futex::Shared)
            } else {
                let check = sys::now_ns().saturating_add(STOPPED_WAITER_CHECK_NS);
                let until = deadline.map_or(check, |d| d.min(check));
                match sys::futex_wait(&self.changed, changed, Some(until), Futex::Private) {
                    Wait::TimedOut if deadline.is_some_and(|d| sys::now_ns() >= d) => Wait::TimedOut,
                    _ => Wait::Retry,
                }
            };
            if outcome == Wait::TimedOut || deadline.is_some_and(|d| sys::now_ns() >= d) {
                // One last look: the message may have come just as the time ran out.
                if first && let Some(r) = attempt() {
                    break Ok(r);
                }
                break Err(ErrorReturnCode::TimedOut);
            }
        };
        self.leave(ticket, flag);
        slot.waiting.store(0, Ordering::Release);
        note_dispatch(rt, slot, id_of(index));
        result
    }
}
