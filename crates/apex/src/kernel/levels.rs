//! The partition's mapping of ARINC priorities onto its band of Linux SCHED_FIFO levels (the
//! rank mapping of `ranks`), and the one place that moves threads when it changes.
//!
//! Every service that gives a thread an ARINC priority asks `level` for its Linux level, under
//! the runtime lock. A priority already in use costs a table look-up; a new one (CREATE_PROCESS,
//! SET_PRIORITY, a mutex ceiling at CREATE_MUTEX, a priority given back at a mutex release)
//! re-ranks the partition's priorities and re-applies the Linux level of every thread whose
//! level moved, before the caller applies its own change. Mutex ceilings are pinned (they stay
//! ranked for good); other priorities leave the set only when a new one would not fit the band,
//! which re-ranks from what the processes use then (so that a SET_PRIORITY back and forth does
//! not fill the band with priorities nobody has any more).

use crate::kernel::critical::Critical;
use crate::kernel::hm;
use crate::kernel::ranks::{PrioritySet, RankMap};
use crate::kernel::runtime::Runtime;
use crate::kernel::threads;
use crate::types::Priority;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// The ranked set and the offset of each priority; written under the runtime lock only, read
/// anywhere (a reader outside the lock sees an offset of the current or the previous mapping).
static SET: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static PINNED: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static OFFSET: [AtomicU8; 256] = [const { AtomicU8::new(0) }; 256];
/// The priorities sharing the lowest level when that was last said (to say it once per change).
static SAID_SHARED: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

fn load(words: &[AtomicU64; 4]) -> PrioritySet {
    PrioritySet(std::array::from_fn(|i| words[i].load(Ordering::Acquire)))
}

fn store(words: &[AtomicU64; 4], s: &PrioritySet) {
    for (w, v) in words.iter().zip(s.0) {
        w.store(v, Ordering::Release);
    }
}

/// The Linux level of ARINC priority `p` in this partition's band; ranks `p` in first when no
/// thread or mutex used it (which may move other threads, see `rerank`).
pub fn level(c: &Critical<'_>, rt: &Runtime, p: Priority) -> i32 {
    if !load(&SET).contains(p) {
        rerank(c, rt, p);
    }
    let (base, _) = rt.band();
    base + i32::from(OFFSET[p as usize].load(Ordering::Acquire)).max(1)
}

/// Keeps `p` ranked for the life of the partition (a mutex ceiling: its owner runs at it).
pub fn pin(c: &Critical<'_>, rt: &Runtime, p: Priority) {
    let mut pinned = load(&PINNED);
    pinned.insert(p);
    store(&PINNED, &pinned);
    let _ = level(c, rt, p);
}

/// The priorities the partition's processes use now: the base and current priority of each,
/// the error handler's aside (it runs above the band).
fn in_use(rt: &Runtime) -> PrioritySet {
    let mut s = load(&PINNED);
    let handler = hm::handler_index();
    for (i, slot) in rt.processes().iter().enumerate() {
        if Some(i) != handler {
            s.insert(slot.config().base_priority);
            s.insert(slot.current_priority.load(Ordering::Acquire));
        }
    }
    s
}

/// Adds `p` to the ranked set, re-ranks, and moves the threads whose level changed.
///
/// The order of the moves keeps, at every step, each thread strictly above every thread of a
/// lower ARINC priority (as both the old and the new mapping do), so that no process runs ahead
/// of one it must not, on any core, even for the instant between two moves: first the threads
/// that rise, highest priority first (each rises into room that the ones above it already left),
/// then the threads that sink, lowest priority first (each sinks into room that the ones below
/// it already left). A thread that has not moved yet sits at its old level, which is between
/// the new levels of its neighbours' that moved in the same direction before it. A thread moved
/// while it is ready keeps its place among ready threads of its own priority only if they all
/// move together in one call; re-ranking happens only when a priority new to the partition
/// appears, normally in its initialization.
fn rerank(_c: &Critical<'_>, rt: &Runtime, p: Priority) {
    let (_, levels) = rt.band();
    let levels = levels as u32;
    let old = RankMap::new(load(&SET), levels);
    let mut set = old.set().union(&load(&PINNED));
    set.insert(p);
    if set.len() as u32 > levels {
        set = in_use(rt);
        set.insert(p);
    }
    let new = RankMap::new(set, levels);
    for (q, offset) in OFFSET.iter().enumerate() {
        offset.store(new.offset(q as Priority).unwrap_or(0) as u8, Ordering::Release);
    }
    store(&SET, new.set());
    say_shared(rt, &new);

    let (base, _) = rt.band();
    let handler = hm::handler_index();
    let mut moves: Vec<(Priority, i32, i32, usize)> = Vec::new();
    for (i, slot) in rt.processes().iter().enumerate() {
        if Some(i) == handler || slot.lock_level.load(Ordering::Acquire) > 0 {
            continue; // above the band, untouched by the mapping
        }
        let cur = slot.current_priority.load(Ordering::Acquire);
        let (from, to) = (old.offset(cur).unwrap_or(0) as i32, new.offset(cur).unwrap_or(1) as i32);
        if from != to {
            moves.push((cur, from, to, i));
        }
    }
    // Rises, highest priority first; then sinks, lowest priority first.
    moves.sort_by_key(|&(cur, from, to, _)| if to > from { (0, -cur) } else { (1, cur) });
    for (_, _, to, i) in moves {
        threads::set_priority(rt, rt.procs[i].thread(), base + to);
    }
}

/// Says in the partition's log and the trace which priorities share the band's lowest level,
/// once for each new list.
fn say_shared(rt: &Runtime, map: &RankMap) {
    let shared = map.shared();
    let mut s = PrioritySet::default();
    for &p in &shared {
        s.insert(p);
    }
    if shared.is_empty() || load(&SAID_SHARED) == s {
        return;
    }
    store(&SAID_SHARED, &s);
    let list: Vec<String> = shared.iter().map(|p| p.to_string()).collect();
    eprintln!(
        "partita-apex: warning: the partition uses {} distinct priorities and its band has {} Linux levels: priorities {} share the \
         lowest level (no preemption among them); the higher ones keep their order",
        map.set().len(),
        map.levels(),
        list.join(", ")
    );
    let (lowest, highest) = (shared[0], shared[shared.len() - 1]);
    rt.trace(partita_abi::event::PRIORITIES_SHARED, i64::from(lowest), i64::from(highest));
}
