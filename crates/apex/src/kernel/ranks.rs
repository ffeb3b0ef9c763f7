//! The rank mapping of ARINC priorities onto a band of Linux SCHED_FIFO levels, pure (no
//! runtime, no system call) so that it is tested on its own; `kernel::levels` keeps the
//! partition's mapping and moves threads when it changes.
//!
//! Why ranks: ARINC 653 P1-5 has priorities 1..=239, a partition gets a band of at most 63
//! Linux levels (much fewer per partition on a FIXED_PRIORITY core), and what must hold is the
//! order among the priorities a partition actually uses, not their values. The distinct
//! priorities in use, sorted, take the band's levels from the top down: the highest gets the
//! top level (offset `levels`), the next one the level below, ... so the order among all of
//! them is exact while their number fits the band. Beyond that the top `levels - 1` priorities
//! keep a level each and every lower one shares offset 1 (the least urgent work loses its order
//! first; `shared` names them).
//!
//! Why from the top: a partition's most urgent process runs at the top of its band whatever its
//! ARINC value (as priority 63 did before P1-5 priorities), above the Linux real-time threads
//! that are not the module's (threaded interrupt handlers run at 50), and a priority new below
//! all the others (the common case of a partition creating its background work last) moves no
//! thread.

use crate::types::{MAX_PRIORITY_VALUE, MIN_PRIORITY_VALUE, Priority};

/// A set of ARINC priorities (one bit per value 0..=255).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct PrioritySet(pub [u64; 4]);

impl PrioritySet {
    /// Whether `p` is a priority the set can hold (MIN_PRIORITY_VALUE..=MAX_PRIORITY_VALUE).
    pub fn valid(p: Priority) -> bool {
        (MIN_PRIORITY_VALUE..=MAX_PRIORITY_VALUE).contains(&p)
    }

    /// Adds `p`; out-of-range values are ignored (the services refuse them before).
    pub fn insert(&mut self, p: Priority) {
        if Self::valid(p) {
            self.0[p as usize / 64] |= 1 << (p as usize % 64);
        }
    }

    pub fn contains(&self, p: Priority) -> bool {
        Self::valid(p) && self.0[p as usize / 64] & (1 << (p as usize % 64)) != 0
    }

    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The priorities in the set, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = Priority> + '_ {
        (MIN_PRIORITY_VALUE..=MAX_PRIORITY_VALUE).filter(|&p| self.contains(p))
    }

    pub fn union(&self, other: &PrioritySet) -> PrioritySet {
        PrioritySet(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }
}

/// The offsets (1..=levels above the band's base) of the priorities of a set.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RankMap {
    set: PrioritySet,
    levels: u32,
    /// Offset of each priority value; 0 for values not in the set.
    offset: [u8; 256],
}

impl RankMap {
    /// Ranks `set` onto `levels` levels (at least 1; a band has at most 255).
    pub fn new(set: PrioritySet, levels: u32) -> RankMap {
        let levels = levels.clamp(1, 255);
        let n = set.len() as u32;
        let mut offset = [0u8; 256];
        for (rank, p) in set.iter().enumerate() {
            // `above`: how many priorities of the set are higher than p.
            let above = n - 1 - rank as u32;
            offset[p as usize] = levels.saturating_sub(above).max(1) as u8;
        }
        RankMap { set, levels, offset }
    }

    pub fn set(&self) -> &PrioritySet {
        &self.set
    }

    pub fn levels(&self) -> u32 {
        self.levels
    }

    /// The offset of `p` (1..=levels), if `p` is in the set.
    pub fn offset(&self, p: Priority) -> Option<u32> {
        self.set.contains(p).then(|| u32::from(self.offset[p as usize]))
    }

    /// The priorities that share the lowest level, lowest first: empty when every priority of
    /// the set has a level of its own.
    pub fn shared(&self) -> Vec<Priority> {
        if self.set.is_empty() || self.set.len() as u32 <= self.levels {
            return Vec::new();
        }
        self.set.iter().take_while(|&p| self.offset[p as usize] == 1).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ps: &[Priority]) -> PrioritySet {
        let mut s = PrioritySet::default();
        for &p in ps {
            s.insert(p);
        }
        s
    }

    #[test]
    fn the_set_holds_1_to_239_only() {
        let s = set(&[0, 1, 63, 64, 239, 240, -1]);
        assert_eq!(s.iter().collect::<Vec<_>>(), [1, 63, 64, 239]);
        assert_eq!(s.len(), 4);
        assert!(!s.contains(0) && !s.contains(240));
    }

    #[test]
    fn distinct_priorities_take_consecutive_levels_in_order() {
        let m = RankMap::new(set(&[1, 63, 64, 100, 150, 200, 239]), 63);
        let offsets: Vec<u32> = [1, 63, 64, 100, 150, 200, 239].iter().map(|&p| m.offset(p).unwrap()).collect();
        assert_eq!(offsets, [57, 58, 59, 60, 61, 62, 63]);
        assert_eq!(m.offset(2), None);
        assert!(m.shared().is_empty());
    }

    #[test]
    fn a_set_that_fills_the_band_exactly_is_still_exact() {
        let ps: Vec<Priority> = (1..=5).map(|k| k * 40).collect();
        let m = RankMap::new(set(&ps), 5);
        assert_eq!(ps.iter().map(|&p| m.offset(p).unwrap()).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        assert!(m.shared().is_empty());
    }

    #[test]
    fn overflow_keeps_the_top_exact_and_shares_the_lowest_level() {
        // 7 priorities, 4 levels: 150, 200, 239 keep levels 2..4; 1, 63, 64, 100 share level 1.
        let m = RankMap::new(set(&[1, 63, 64, 100, 150, 200, 239]), 4);
        let offsets: Vec<u32> = [1, 63, 64, 100, 150, 200, 239].iter().map(|&p| m.offset(p).unwrap()).collect();
        assert_eq!(offsets, [1, 1, 1, 1, 2, 3, 4]);
        assert_eq!(m.shared(), [1, 63, 64, 100]);
    }

    #[test]
    fn a_band_of_one_level_shares_everything() {
        let m = RankMap::new(set(&[5, 9]), 1);
        assert_eq!((m.offset(5), m.offset(9)), (Some(1), Some(1)));
        assert_eq!(m.shared(), [5, 9]);
        assert_eq!(RankMap::new(set(&[5, 9]), 0).levels(), 1);
    }

    #[test]
    fn all_239_priorities_on_the_default_band() {
        let m = RankMap::new(set(&(1..=239).collect::<Vec<_>>()), 63);
        assert_eq!((m.offset(239), m.offset(178), m.offset(177), m.offset(1)), (Some(63), Some(2), Some(1), Some(1)));
        assert_eq!(m.shared(), (1..=177).collect::<Vec<_>>());
    }

    #[test]
    fn re_ranking_with_a_new_priority_keeps_the_order_of_the_others() {
        let before = RankMap::new(set(&[10, 20, 30]), 63);
        assert_eq!([10, 20, 30].map(|p| before.offset(p).unwrap()), [61, 62, 63]);
        let after = RankMap::new(before.set().union(&set(&[15])), 63);
        assert_eq!([10, 15, 20, 30].map(|p| after.offset(p).unwrap()), [60, 61, 62, 63]);
        // Order preserved: whatever moved, higher priorities stay strictly above lower ones.
        for (a, b) in [(10, 20), (20, 30), (10, 30)] {
            assert!(before.offset(a) < before.offset(b) && after.offset(a) < after.offset(b));
        }
        // A new lowest priority moves nobody; a new highest one moves everybody down.
        let bottom = RankMap::new(before.set().union(&set(&[1])), 63);
        assert_eq!([1, 10, 20, 30].map(|p| bottom.offset(p).unwrap()), [60, 61, 62, 63]);
        let top = RankMap::new(before.set().union(&set(&[239])), 63);
        assert_eq!([10, 20, 30, 239].map(|p| top.offset(p).unwrap()), [60, 61, 62, 63]);
    }

    #[test]
    fn one_priority_runs_at_the_top_of_the_band() {
        for p in [1, 10, 63, 239] {
            assert_eq!(RankMap::new(set(&[p]), 63).offset(p), Some(63));
            assert_eq!(RankMap::new(set(&[p]), 11).offset(p), Some(11));
        }
    }

    #[test]
    fn every_map_is_monotonic() {
        // Pseudo-random sets and band widths: p < q implies offset(p) <= offset(q), equality only
        // at the shared lowest level, and offsets stay within 1..=levels.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..500 {
            let mut s = PrioritySet::default();
            for _ in 0..(x % 80) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.insert((x % 239) as Priority + 1);
            }
            let levels = (x % 70) as u32 + 1;
            let m = RankMap::new(s, levels);
            let ps: Vec<Priority> = s.iter().collect();
            for w in ps.windows(2) {
                let (a, b) = (m.offset(w[0]).unwrap(), m.offset(w[1]).unwrap());
                assert!(a < b || (a == 1 && b == 1), "{ps:?} on {levels}: {} -> {a}, {} -> {b}", w[0], w[1]);
            }
            assert!(ps.iter().all(|&p| (1..=levels).contains(&m.offset(p).unwrap())));
            assert_eq!(m.shared().len(), if ps.len() as u32 > levels { ps.len() - levels as usize + 1 } else { 0 });
        }
    }
}
