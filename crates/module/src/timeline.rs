//! One core's boundaries in a major frame: the instants at which the scheduler thread stops
//! the outgoing partition and releases the incoming one, precomputed from the plan so that the
//! real-time loop only walks a vector.

use crate::plan::{PlannedSchedule, Slot};

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
