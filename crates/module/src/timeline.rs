//! One core's boundaries in a major frame: the instants at which the scheduler thread stops
//! the outgoing partition and releases the incoming one, precomputed from the plan so that the
//! real-time loop only walks a vector.

use crate::plan::{PlannedSchedule, Slot};

/// What happens at one instant of the frame on one core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boundary {
    /// Offset from the frame start (0 ..= major frame).
    pub offset_ns: i64,
    /// Window that ends here: (partition index, window id, planned start offset).
    pub end: Option<(usize, u32, i64)>,
    /// Window that starts here: (partition index, window id).
    pub start: Option<(usize, u32)>,
}

/// Boundaries of `core` in time order; a window ending where the next begins shares one
/// boundary (stop, then release).
pub fn boundaries(schedule: &PlannedSchedule, core: usize) -> Vec<Boundary> {
    let slots: &[Slot] = schedule.slots.get(core).map_or(&[], Vec::as_slice);
    let mut out: Vec<Boundary> = Vec::new();
    for s in slots {
        match out.last_mut() {
            Some(last) if last.offset_ns == s.start_ns && last.start.is_none() => last.start = Some((s.partition, s.window)),
            _ => out.push(Boundary { offset_ns: s.start_ns, end: None, start: Some((s.partition, s.window)) }),
        }
        out.push(Boundary { offset_ns: s.end_ns, end: Some((s.partition, s.window, s.start_ns)), start: None });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(slots: Vec<Slot>) -> PlannedSchedule {
        PlannedSchedule { id: 1, name: "s".into(), major_frame_ns: 100, slots: vec![slots], periods: vec![], may_set_schedule: vec![] }
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
                Boundary { offset_ns: 0, end: None, start: Some((0, 1)) },
                Boundary { offset_ns: 10, end: Some((0, 1, 0)), start: Some((1, 1)) },
                Boundary { offset_ns: 30, end: Some((1, 1, 10)), start: None },
                Boundary { offset_ns: 50, end: None, start: Some((0, 2)) },
                Boundary { offset_ns: 100, end: Some((0, 2, 50)), start: None },
            ]
        );
        assert!(boundaries(&s, 5).is_empty());
    }
}
