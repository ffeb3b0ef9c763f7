//! Partition-local wait queues: processes blocked on a buffer, blackboard, semaphore, event,
//! mutex (or a queuing port), in FIFO or PRIORITY order.
//!
//! Membership lives in the waiting process's slot ([`WaitRecord`]): a queue is only a discipline
//! and a count, so a process is in at most one queue, enqueuing never allocates, and STOP can
//! find and leave the queue of its target. Every operation on a queue runs under the runtime
//! lock (the `&Critical` argument is the proof); queues must stay at their address while
//! processes wait in them (objects are never deleted, so they are leaked or `'static`).
//!
//! API (caller = the waiting process, waker = any other process of the partition):
//! - [`WaitQueue::enqueue`]: the caller joins the queue (state WAITING in GET_PROCESS_STATUS);
//!   it may first leave what the waker needs in its record ([`WaitRecord::set_data`]: e.g. the
//!   address of a message to send, or of the area to receive into).
//! - [`block`]: gives up the runtime lock and sleeps until woken, until the absolute deadline
//!   (then it has left the queue: [`Outcome::TimedOut`]), or, with [`WaitOn::Word`], until a
//!   futex word of the caller's choice changes ([`Outcome::Changed`], still queued; re-check
//!   under the lock, then [`WaitQueue::remove`] or [`block`] again, keeping its place). The
//!   word may live in memory shared with other partitions or the module (`Futex::Shared`): a
//!   party that cannot see this queue wakes the waiter by changing the word and FUTEX_WAKE-ing
//!   it without the private flag (how queuing ports wake blocked senders and receivers).
//! - [`WaitQueue::first`] / [`WaitQueue::wake`] / [`WaitQueue::wake_first`]: the waker picks the
//!   first process (FIFO: oldest; PRIORITY: highest *current* priority, oldest among equals, so
//!   SET_PRIORITY and mutex priority changes count), does the hand-off (copies the message,
//!   gives the mutex...) while holding the lock, and wakes it with a non-zero result code.
//! - [`cancel`]: takes a process out of whatever queue it is in (STOP of a waiting process).
//!
//! SUSPEND of a waiting process parks its thread in the signal handler; a wake-up meanwhile is
//! kept (the process gets the resource and stays suspended until RESUME); when the time-out
//! expires meanwhile, the deadline monitor takes it out of the queue ([`expire_suspended`]) and
//! it returns TIMED_OUT once resumed.

use crate::kernel::critical::Critical;
use crate::kernel::runtime::{NO_DEADLINE, Runtime};
use crate::kernel::sys::{self, Futex, Wait};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// QUEUING_DISCIPLINE_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Discipline {
    Fifo = 0,
    Priority = 1,
}

impl Discipline {
    pub fn from_u32(v: u32) -> Option<Discipline> {
        match v {
            0 => Some(Discipline::Fifo),
            1 => Some(Discipline::Priority),
            _ => None,
        }
    }
}

/// [`WaitRecord`] result while the process is still waiting.
pub const PENDING: u32 = 0;
/// The usual non-zero wake-up result: the request was satisfied.
pub const SATISFIED: u32 = 1;

/// Enqueue order across all queues (FIFO among equals).
static TICKETS: AtomicU64 = AtomicU64::new(1);

/// The wait state of one process, in its process slot.
#[derive(Default)]
pub struct WaitRecord {
    /// The queue the process waits in, or null.
    queue: AtomicPtr<WaitQueue>,
    ticket: AtomicU64,
    /// Futex word of a process blocked in its own record: PENDING until woken.
    result: AtomicU32,
    /// The extra word woken too ([`WaitOn::Word`]), or null; and whether it is shared.
    word: AtomicPtr<AtomicU32>,
    word_shared: AtomicBool,
    /// Hand-off data between the waiter and the waker (meaning set by the object).
    addr: AtomicPtr<u8>,
    len: AtomicI64,
    /// Absolute time-out of the wait, or NO_DEADLINE.
    deadline: AtomicI64,
}

impl WaitRecord {
    /// Leaves an address and a length for the waker (e.g. the message to send).
    pub fn set_data(&self, addr: *mut u8, len: i64) {
        self.addr.store(addr, Ordering::Release);
        self.len.store(len, Ordering::Release);
    }

    pub fn addr(&self) -> *mut u8 {
        self.addr.load(Ordering::Acquire)
    }

    pub fn len(&self) -> i64 {
        self.len.load(Ordering::Acquire)
    }

    /// Sets the length (e.g. of the message the waker copied in).
    pub fn set_len(&self, len: i64) {
        self.len.store(len, Ordering::Release);
    }

    pub fn is_queued(&self) -> bool {
        !self.queue.load(Ordering::Acquire).is_null()
    }

    /// The result of the last wake-up (PENDING while waiting).
    pub fn result(&self) -> u32 {
        self.result.load(Ordering::Acquire)
    }
}

/// A queue of waiting processes of this partition.
pub struct WaitQueue {
    discipline: Discipline,
    len: AtomicU32,
}

impl WaitQueue {
    pub const fn new(discipline: Discipline) -> WaitQueue {
        WaitQueue { discipline, len: AtomicU32::new(0) }
    }

    /// WAITING_PROCESSES.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Puts process `index` at the end of the queue (its place by priority is found at wake-up).
    pub fn enqueue(&self, _c: &Critical<'_>, rt: &Runtime, index: usize) {
        let slot = &rt.procs[index];
        let rec = &slot.wait;
        debug_assert!(!rec.is_queued(), "a process waits in one queue at a time");
        rec.result.store(PENDING, Ordering::Release);
        rec.word.store(ptr::null_mut(), Ordering::Release);
        rec.ticket.store(TICKETS.fetch_add(1, Ordering::Relaxed), Ordering::Release);
        rec.queue.store(self as *const WaitQueue as *mut WaitQueue, Ordering::Release);
        self.len.fetch_add(1, Ordering::AcqRel);
        slot.waiting.store(1, Ordering::Release);
    }

    fn holds(&self, rt: &Runtime, index: usize) -> bool {
        ptr::eq(rt.procs[index].wait.queue.load(Ordering::Acquire), self)
    }

    /// The process the next [`WaitQueue::wake_first`] would wake.
    pub fn first(&self, _c: &Critical<'_>, rt: &Runtime) -> Option<usize> {
        if self.is_empty() {
            return None;
        }
        let key = |i: usize| {
            let s = &rt.procs[i];
            let prio = match self.discipline {
                Discipline::Fifo => 0,
                Discipline::Priority => s.current_priority.load(Ordering::Acquire),
            };
            (std::cmp::Reverse(prio), s.wait.ticket.load(Ordering::Acquire))
        };
        (0..rt.processes().len()).filter(|&i| self.holds(rt, i)).min_by_key(|&i| key(i))
    }

    /// Takes process `index` out of the queue without waking it; false if it was not in it.
    pub fn remove(&self, _c: &Critical<'_>, rt: &Runtime, index: usize) -> bool {
        let slot = &rt.procs[index];
        if slot.wait.queue.compare_exchange(self as *const _ as *mut _, ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire).is_err() {
            return false;
        }
        self.len.fetch_sub(1, Ordering::AcqRel);
        slot.waiting.store(0, Ordering::Release);
        true
    }

    /// Takes process `index` out of the queue and wakes it with `result` (non-zero).
    pub fn wake(&self, c: &Critical<'_>, rt: &Runtime, index: usize, result: u32) -> bool {
        debug_assert_ne!(result, PENDING);
        if !self.remove(c, rt, index) {
            return false;
        }
        let rec = &rt.procs[index].wait;
        rec.result.store(result, Ordering::Release);
        sys::futex_wake(&rec.result, 1, Futex::Private);
        let w = rec.word.load(Ordering::Acquire);
        if !w.is_null() {
            let kind = if rec.word_shared.load(Ordering::Acquire) { Futex::Shared } else { Futex::Private };
            // SAFETY: a word given to `block` outlives the wait (the waiter's contract).
            sys::futex_wake(unsafe { &*w }, i32::MAX, kind);
        }
        true
    }

    /// Wakes the first process (see [`WaitQueue::first`]); returns it.
    pub fn wake_first(&self, c: &Critical<'_>, rt: &Runtime, result: u32) -> Option<usize> {
        let i = self.first(c, rt)?;
        self.wake(c, rt, i, result);
        Some(i)
    }
}

/// Takes process `index` out of the queue it waits in, if any (STOP). True if it was waiting.
pub fn cancel(c: &Critical<'_>, rt: &Runtime, index: usize) -> bool {
    let q = rt.procs[index].wait.queue.load(Ordering::Acquire);
    if q.is_null() {
        return false;
    }
    // SAFETY: queues stay at their address while processes wait in them (module doc).
    unsafe { &*q }.remove(c, rt, index)
}

/// What a blocked process sleeps on besides its own record.
#[derive(Clone, Copy)]
pub enum WaitOn<'a> {
    /// Only its record: woken by [`WaitQueue::wake`].
    Own,
    /// Also `word` while it still holds `seen` (it must outlive the wait).
    Word { word: &'a AtomicU32, seen: u32, kind: Futex },
}

/// How a [`block`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Woken with this result; out of the queue.
    Woken(u32),
    /// The deadline passed; out of the queue.
    TimedOut,
    /// The [`WaitOn::Word`] changed; still in the queue, lock not held.
    Changed,
}

/// Blocks the calling process `index`, which `c` has just enqueued, until an [`Outcome`].
/// `deadline` is absolute CLOCK_MONOTONIC ns (None: no time-out). A STOP meanwhile takes the
/// process out of the queue (see [`cancel`]) and never returns here.
pub fn block(c: Critical<'_>, rt: &Runtime, index: usize, deadline: Option<i64>, on: WaitOn<'_>) -> Outcome {
    let slot = &rt.procs[index];
    let rec = &slot.wait;
    rec.deadline.store(deadline.unwrap_or(NO_DEADLINE), Ordering::Release);
    if let WaitOn::Word { word, kind, .. } = on {
        rec.word.store(word as *const AtomicU32 as *mut AtomicU32, Ordering::Release);
        rec.word_shared.store(kind == Futex::Shared, Ordering::Release);
    }
    if crate::kernel::body::stop_pending(slot) {
        // A STOP came before we joined the queue (and was deferred): leave it, and let the end
        // of the critical section carry the STOP out.
        cancel(&c, rt, index);
        drop(c);
        return Outcome::TimedOut;
    }
    drop(c);
    loop {
        let r = rec.result.load(Ordering::Acquire);
        if r != PENDING {
            return Outcome::Woken(r);
        }
        let (changed, timed_out) = match on {
            WaitOn::Own => (false, sys::futex_wait(&rec.result, PENDING, deadline, Futex::Private) == Wait::TimedOut),
            WaitOn::Word { word, seen, kind } => {
                if word.load(Ordering::Acquire) != seen {
                    (true, false)
                } else {
                    (false, sys::futex_wait(word, seen, deadline, kind) == Wait::TimedOut)
                }
            }
        };
        let expired = timed_out || deadline.is_some_and(|d| sys::now_ns() >= d);
        if !changed && !expired {
            continue;
        }
        let c = Critical::enter(rt);
        let r = rec.result.load(Ordering::Acquire);
        if r != PENDING {
            return Outcome::Woken(r);
        }
        if expired {
            cancel(&c, rt, index);
            return Outcome::TimedOut;
        }
        return Outcome::Changed;
    }
}

/// The time-outs of suspended waiters (their threads are parked and cannot act): takes each one
/// whose deadline passed out of its queue. Returns the earliest deadline still to come. Called
/// by the deadline monitor, which SUSPEND wakes.
pub fn expire_suspended(rt: &Runtime) -> Option<i64> {
    let now = sys::now_ns();
    let suspended_deadline = |s: &crate::kernel::process::ProcessSlot| {
        let d = s.wait.deadline.load(Ordering::Acquire);
        (s.wait.is_queued() && s.is_suspended() && d != NO_DEADLINE).then_some(d)
    };
    let mut earliest: Option<i64> = None;
    let mut due = false;
    for d in rt.processes().iter().filter_map(suspended_deadline) {
        if d <= now {
            due = true;
        } else {
            earliest = Some(earliest.map_or(d, |e| e.min(d)));
        }
    }
    if due {
        let c = Critical::enter(rt);
        for (i, s) in rt.processes().iter().enumerate() {
            if suspended_deadline(s).is_some_and(|d| d <= now) {
                cancel(&c, rt, i);
            }
        }
    }
    earliest
}
