//! One core's boundaries in a major frame: the instants at which the scheduler thread stops
//! the outgoing partition and releases the incoming one, precomputed from the plan so that the
//! real-time loop only walks a vector.

use crate::plan::{PlannedSchedule, Slot};

/// One core's boundaries in every schedule of the plan, and the frame seams worked out once:
/// where a frame's last boundary only ends a window at the frame's end and the next frame (of
/// the same schedule or, after a change, another) starts with a window at its start, the two
/// are one boundary (one preparation, one spin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreTimeline {
    per_schedule: Vec<Vec<Boundary>>,
    /// `seams[from][to]`: the merged boundary ending a frame of schedule `from` and starting
    /// one of schedule `to`, when they merge.
    seams: Vec<Vec<Option<Boundary>>>,
}

impl CoreTimeline {
    pub fn new(schedules: &[PlannedSchedule], core: usize) -> CoreTimeline {
        let per_schedule: Vec<Vec<Boundary>> = schedules.iter().map(|s| boundaries(s, core)).collect();
        let seams = schedules
            .iter()
            .zip(&per_schedule)
            .map(|(from, list)| per_schedule.iter().map(|next| seam(list, from.major_frame_ns, next)).collect())
            .collect();
        CoreTimeline { per_schedule, seams }
    }

    /// The boundaries of schedule `sched` in time order.
    pub fn boundaries(&self, sched: usize) -> &[Boundary] {
        &self.per_schedule[sched]
    }

    /// The boundary ending a frame of schedule `from` and starting the next frame, of schedule
    /// `to`, when the two fall at one instant and merge (the next frame then goes on from its
    /// second boundary).
    pub fn seam(&self, from: usize, to: usize) -> Option<Boundary> {
        self.seams[from][to]
    }

    /// The instant of the boundary the scheduler visits after boundary `j` of schedule `sched`
    /// in the frame starting at `frame_start` (the next frame's first, or its second when the
    /// frame seam merges them), if the schedule stays the same: a prediction, for arming a
    /// timer ahead.
    pub fn after(&self, sched: usize, major_frame_ns: i64, frame_start: i64, j: usize) -> Option<i64> {
        let list = &self.per_schedule[sched];
        if let Some(b) = list.get(j + 1) {
            return Some(frame_start + b.offset_ns);
        }
        let k = usize::from(self.seam(sched, sched).is_some());
        list.get(k).map(|b| frame_start + major_frame_ns + b.offset_ns)
    }

    /// The offset, from a frame's start, of the boundary of schedule `sched` that follows a
    /// merged seam: its second boundary (the frame's end when it has only the first).
    pub fn after_seam(&self, sched: usize, major_frame_ns: i64) -> i64 {
        self.per_schedule[sched].get(1).map_or(major_frame_ns, |n| n.offset_ns)
    }
}

/// `list`'s last boundary merged with `next`'s first, when the last only ends a window at the
/// frame's end (`major_frame_ns`) and the first only starts one at offset 0.
fn seam(list: &[Boundary], major_frame_ns: i64, next: &[Boundary]) -> Option<Boundary> {
    let (last, first) = (list.last()?, next.first()?);
    let merges = last.start.is_none() && last.offset_ns == major_frame_ns && first.offset_ns == 0 && first.end.is_none();
    merges.then_some(Boundary { start: first.start, ..*last })
}

/// What happens at one instant of the frame on one core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boundary {
    /// Offset from the frame start (0 ..= major frame).
    pub offset_ns: i64,
    /// Window that ends here.
    pub end: Option<Ending>,
    /// Window that starts here.
    pub start: Option<Opening>,
}

/// The window a boundary ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    /// Index into `Plan::partitions`.
    pub partition: usize,
    pub window: u32,
    /// The window's planned start, as an offset from the frame start.
    pub start_offset_ns: i64,
}

/// The window a boundary starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opening {
    /// Index into `Plan::partitions`.
    pub partition: usize,
    pub window: u32,
    /// The window's length (its planned end is its start plus this).
    pub duration_ns: i64,
}

/// Boundaries of `core` in time order; a window ending where the next begins shares one
/// boundary (stop, then release).
pub fn boundaries(schedule: &PlannedSchedule, core: usize) -> Vec<Boundary> {
    let slots: &[Slot] = schedule.slots.get(core).map_or(&[], Vec::as_slice);
    let mut out: Vec<Boundary> = Vec::new();
    for s in slots {
        match out.last_mut() {
            Some(last) if last.offset_ns == s.start_ns && last.start.is_none() => {
                last.start = Some(Opening { partition: s.partition, window: s.window, duration_ns: s.end_ns - s.start_ns })
            }
            _ => out.push(Boundary {
                offset_ns: s.start_ns,
                end: None,
                start: Some(Opening { partition: s.partition, window: s.window, duration_ns: s.end_ns - s.start_ns }),
            }),
        }
        let end = Ending { partition: s.partition, window: s.window, start_offset_ns: s.start_ns };
        out.push(Boundary { offset_ns: s.end_ns, end: Some(end), start: None });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(slots: Vec<Slot>) -> PlannedSchedule {
        PlannedSchedule { id: 1, name: "s".into(), major_frame_ns: 100, slots: vec![slots], periods: vec![], may_set_schedule: vec![] }
    }

    fn open(partition: usize, window: u32, duration_ns: i64) -> Opening {
        Opening { partition, window, duration_ns }
    }

    fn end(partition: usize, window: u32, start_offset_ns: i64) -> Ending {
        Ending { partition, window, start_offset_ns }
    }

    #[test]
    fn a_frame_ending_with_a_window_merges_with_a_next_frame_starting_with_one() {
        let whole = schedule(vec![Slot { start_ns: 0, end_ns: 100, partition: 0, window: 1 }]);
        let gap_first = schedule(vec![Slot { start_ns: 20, end_ns: 100, partition: 1, window: 1 }]);
        let gap_last = schedule(vec![Slot { start_ns: 0, end_ns: 60, partition: 1, window: 1 }]);
        let list = |s: &PlannedSchedule| boundaries(s, 0);
        assert_eq!(
            seam(&list(&whole), 100, &list(&whole)),
            Some(Boundary { offset_ns: 100, end: Some(end(0, 1, 0)), start: Some(open(0, 1, 100)) })
        );
        assert_eq!(
            seam(&list(&gap_first), 100, &list(&gap_last)),
            Some(Boundary { offset_ns: 100, end: Some(end(1, 1, 20)), start: Some(open(1, 1, 60)) })
        );
        // The next frame starts with a gap, or this one ends with one: two instants, no seam.
        assert_eq!(seam(&list(&whole), 100, &list(&gap_first)), None);
        assert_eq!(seam(&list(&gap_last), 100, &list(&whole)), None);
        assert_eq!(seam(&[], 100, &list(&whole)), None);
    }

    #[test]
    fn the_boundary_after_another_is_found_across_the_frame_seam() {
        let plan = |slots: Vec<Slot>| vec![schedule(slots)];
        // Windows 0-40 and 40-100: boundaries at 0, 40, 100; the last merges with the next
        // frame's first, so after 40 comes 100 and after 100 comes the next frame's 40.
        let merged = CoreTimeline::new(
            &plan(vec![
                Slot { start_ns: 0, end_ns: 40, partition: 0, window: 1 },
                Slot { start_ns: 40, end_ns: 100, partition: 1, window: 1 },
            ]),
            0,
        );
        assert_eq!(merged.after(0, 100, 1000, 1), Some(1100));
        assert_eq!(merged.after(0, 100, 1000, 2), Some(1140));
        // A gap at the frame's start: after the last boundary (90) comes the next frame's first (10).
        let gap = CoreTimeline::new(&plan(vec![Slot { start_ns: 10, end_ns: 90, partition: 0, window: 1 }]), 0);
        assert_eq!(gap.after(0, 100, 1000, 0), Some(1090));
        assert_eq!(gap.after(0, 100, 1000, 1), Some(1110));
    }

    #[test]
    fn adjacent_windows_share_a_boundary_and_gaps_do_not() {
        let s = schedule(vec![
            Slot { start_ns: 0, end_ns: 10, partition: 0, window: 1 },
            Slot { start_ns: 10, end_ns: 30, partition: 1, window: 1 },
            Slot { start_ns: 50, end_ns: 100, partition: 0, window: 2 },
        ]);
        let b = boundaries(&s, 0);
        assert_eq!(
            b,
            vec![
                Boundary { offset_ns: 0, end: None, start: Some(open(0, 1, 10)) },
                Boundary { offset_ns: 10, end: Some(end(0, 1, 0)), start: Some(open(1, 1, 20)) },
                Boundary { offset_ns: 30, end: Some(end(1, 1, 10)), start: None },
                Boundary { offset_ns: 50, end: None, start: Some(open(0, 2, 50)) },
                Boundary { offset_ns: 100, end: Some(end(0, 2, 50)), start: None },
            ]
        );
        assert!(boundaries(&s, 5).is_empty());
    }
}
