//! Reconstructs, from a trace, the windows of each core and the intervals during which each
//! partition may run on each core, and checks them (used by the summary and the Perfetto export).
//!
//! The trace has no "thaw" event, so a **run interval** of partition P on core C starts at
//! `partition_running` (P's first code ran after a window start) and ends at the next
//! `partition_stopped` of P on C (the stop is complete), at P's `partition_exit` (its program is
//! gone), or at the end of the trace. A `partition_running` while P already has an open interval
//! on C (consecutive windows of P without a stop between them) continues that interval.
//!
//! A **window** is a `window_start`/`window_end` pair of one core. Its stop is the first
//! `partition_stopped` of its partition on its core after the `window_end` (or the last one inside
//! the window when the partition was already stopped at the end); when the next window of the same
//! partition starts right at the planned end without a stop in between, the window simply continues.
//!
//! Checks ([`ViolationKind`]):
//! - **overlap**: run intervals of two different partitions on one core intersect (half-open
//!   intervals: a stop at t and a start at t do not overlap);
//! - **out of window**: part of a run interval of P on C lies outside every
//!   `[planned start, planned end + stop time]` of P's windows on C (a window without a recorded
//!   stop allows up to its planned end; a window still open at the end of the trace is unbounded).
//!   Cores whose policy in `module_start` is FIXED_PRIORITY have no windows and are not checked;
//! - **window sequence**: on a core, a window starting before the previous one's planned end, a
//!   window ending before it starts, a `window_end` that matches no open window, or a window start
//!   while the previous window never ended.

use crate::Event;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One planned window as it happened on a core.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    pub core: u32,
    pub partition: u32,
    pub window: u32,
    pub schedule: u32,
    pub planned_start: i64,
    /// `None` while the window had no `window_end` (the trace ended inside it).
    pub planned_end: Option<i64>,
    /// When the scheduler woke for the start (`window_start.t`).
    pub start_t: i64,
    /// When the scheduler woke for the end (`window_end.t`).
    pub end_t: Option<i64>,
    /// The first `partition_running` for this window.
    pub running_t: Option<i64>,
    /// The stop that ended this window (see the module documentation).
    pub stopped_t: Option<i64>,
}

impl Window {
    /// `stopped_t - planned_end` when both are known.
    pub fn stop_time(&self) -> Option<i64> {
        Some(self.stopped_t? - self.planned_end?)
    }

    /// The latest time P may still run on this core for this window: the later of the planned end
    /// and the stop; `i64::MAX` for a window that never ended.
    pub fn allowed_end(&self) -> i64 {
        match (self.planned_end, self.stopped_t) {
            (None, _) => i64::MAX,
            (Some(e), Some(s)) => e.max(s),
            (Some(e), None) => e,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEnd {
    Stopped,
    Exited,
    TraceEnd,
}

/// An interval `[start, end)` during which a partition may run on a core.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    pub core: u32,
    pub partition: u32,
    /// `planned` of the `partition_running` that opened it.
    pub planned: i64,
    pub start: i64,
    pub end: i64,
    pub end_kind: RunEnd,
    /// Index in [`Timeline::windows`] of the window (same core, partition and planned start) whose
    /// `partition_running` opened it.
    pub window: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    Overlap,
    OutOfWindow,
    WindowSequence,
}

/// A failed check; `[start, end)` is the offending time span (overlap: the common part; out of
/// window: one part outside the allowed windows; window sequence: the window concerned).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub kind: ViolationKind,
    pub core: u32,
    pub partition: u32,
    /// The other partition of an overlap.
    pub other: Option<u32>,
    pub start: i64,
    pub end: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timeline {
    /// In start order per core (cores interleaved by time).
    pub windows: Vec<Window>,
    /// Sorted by core, then start.
    pub runs: Vec<Run>,
    pub violations: Vec<Violation>,
    /// Earliest and latest event time of the trace (0, 0 when empty).
    pub first_t: i64,
    pub last_t: i64,
}

#[derive(Default)]
struct CoreState {
    /// Indices of this core's windows, in order.
    windows: Vec<usize>,
    open: Option<usize>,
    /// Windows that ended and wait for their partition's stop, by partition.
    awaiting_stop: BTreeMap<u32, usize>,
    /// Open run intervals by partition (index in `runs`).
    running: BTreeMap<u32, usize>,
    last_planned_end: Option<i64>,
}

/// True for a core policy string meaning FIXED_PRIORITY, however it is spelled.
pub fn is_fixed_priority(policy: &str) -> bool {
    policy.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().eq_ignore_ascii_case("fixedpriority")
}

impl Timeline {
    /// Builds the timeline of a trace (events in any order; equal times keep the file order).
    pub fn build(events: &[Event]) -> Timeline {
        let mut order: Vec<&Event> = events.iter().collect();
        order.sort_by_key(|e| e.t());
        let mut tl =
            Timeline { first_t: order.first().map_or(0, |e| e.t()), last_t: order.last().map_or(0, |e| e.t()), ..Timeline::default() };
        let mut cores: BTreeMap<u32, CoreState> = BTreeMap::new();
        let mut fixed = BTreeSet::new();
        for e in order {
            match *e {
                Event::ModuleStart { ref cores, .. } => {
                    fixed.extend(cores.iter().filter(|c| is_fixed_priority(&c.policy)).map(|c| c.core));
                }
                Event::WindowStart { t, core, partition, window, planned, schedule } => {
                    let st = cores.entry(core).or_default();
                    if let Some(prev) = st.open.take() {
                        tl.sequence_violation(prev);
                        tl.end_window(st, prev, planned, None);
                    }
                    if st.last_planned_end.is_some_and(|end| planned < end) {
                        tl.violations.push(Violation {
                            kind: ViolationKind::WindowSequence,
                            core,
                            partition,
                            other: None,
                            start: planned,
                            end: st.last_planned_end.unwrap_or(planned),
                        });
                    }
                    // The same partition's window continuing right at the previous planned end.
                    if let Some(&w) = st.awaiting_stop.get(&partition)
                        && tl.windows[w].planned_end == Some(planned)
                    {
                        st.awaiting_stop.remove(&partition);
                    }
                    let idx = tl.windows.len();
                    tl.windows.push(Window {
                        core,
                        partition,
                        window,
                        schedule,
                        planned_start: planned,
                        planned_end: None,
                        start_t: t,
                        end_t: None,
                        running_t: None,
                        stopped_t: None,
                    });
                    st.windows.push(idx);
                    st.open = Some(idx);
                    // Reported running before its window started (a fault the check reports).
                    if let Some(&r) = st.running.get(&partition)
                        && tl.runs[r].window.is_none()
                        && tl.runs[r].planned == planned
                    {
                        tl.runs[r].window = Some(idx);
                        tl.windows[idx].running_t = Some(tl.runs[r].start);
                    }
                }
                Event::WindowEnd { t, core, partition, planned, .. } => {
                    let st = cores.entry(core).or_default();
                    match st.open.take() {
                        Some(w) if tl.windows[w].partition == partition => {
                            if planned < tl.windows[w].planned_start {
                                tl.sequence_violation(w);
                            }
                            tl.end_window(st, w, planned, Some(t));
                        }
                        other => {
                            st.open = other;
                            tl.violations.push(Violation {
                                kind: ViolationKind::WindowSequence,
                                core,
                                partition,
                                other: None,
                                start: planned,
                                end: planned,
                            });
                        }
                    }
                }
                Event::PartitionRunning { t, core, partition, planned } => {
                    let st = cores.entry(core).or_default();
                    let mut candidates = st.windows.iter().rev().take(256).copied();
                    let window = candidates.find(|&w| tl.windows[w].partition == partition && tl.windows[w].planned_start == planned);
                    if let Some(w) = window {
                        tl.windows[w].running_t.get_or_insert(t);
                    }
                    if let std::collections::btree_map::Entry::Vacant(slot) = st.running.entry(partition) {
                        slot.insert(tl.runs.len());
                        tl.runs.push(Run { core, partition, planned, start: t, end: t, end_kind: RunEnd::TraceEnd, window });
                    }
                }
                Event::PartitionStopped { t, core, partition } => {
                    let st = cores.entry(core).or_default();
                    if let Some(w) = st.awaiting_stop.remove(&partition) {
                        tl.windows[w].stopped_t = Some(t);
                    } else if let Some(w) = st.open.filter(|&w| tl.windows[w].partition == partition) {
                        tl.windows[w].stopped_t = Some(t);
                    }
                    if let Some(r) = st.running.remove(&partition) {
                        tl.runs[r].end = t;
                        tl.runs[r].end_kind = RunEnd::Stopped;
                    }
                }
                Event::PartitionExit { t, partition, .. } => {
                    for st in cores.values_mut() {
                        if let Some(r) = st.running.remove(&partition) {
                            tl.runs[r].end = t;
                            tl.runs[r].end_kind = RunEnd::Exited;
                        }
                    }
                }
                _ => {}
            }
        }
        for st in cores.values() {
            for &r in st.running.values() {
                tl.runs[r].end = tl.last_t;
            }
        }
        tl.runs.sort_by_key(|r| (r.core, r.start, r.partition));
        tl.check_overlaps();
        tl.check_windows(&fixed);
        tl
    }

    fn sequence_violation(&mut self, w: usize) {
        let win = &self.windows[w];
        self.violations.push(Violation {
            kind: ViolationKind::WindowSequence,
            core: win.core,
            partition: win.partition,
            other: None,
            start: win.planned_start,
            end: win.planned_end.unwrap_or(win.planned_start),
        });
    }

    fn end_window(&mut self, st: &mut CoreState, w: usize, planned: i64, t: Option<i64>) {
        let win = &mut self.windows[w];
        win.planned_end = Some(planned);
        win.end_t = t;
        st.last_planned_end = Some(planned);
        // Already stopped inside the window (and not running again): that stop ends it.
        if win.stopped_t.is_none() || st.running.contains_key(&win.partition) {
            win.stopped_t = None;
            st.awaiting_stop.insert(win.partition, w);
        }
    }

    fn check_overlaps(&mut self) {
        let mut found = Vec::new();
        let mut active: Vec<&Run> = Vec::new();
        for (i, run) in self.runs.iter().enumerate() {
            if i > 0 && self.runs[i - 1].core != run.core {
                active.clear();
            }
            active.retain(|a| a.end > run.start);
            for a in active.iter().filter(|a| a.partition != run.partition && run.end > run.start) {
                found.push(Violation {
                    kind: ViolationKind::Overlap,
                    core: run.core,
                    partition: a.partition,
                    other: Some(run.partition),
                    start: run.start,
                    end: a.end.min(run.end),
                });
            }
            active.push(run);
        }
        self.violations.extend(found);
    }

    fn check_windows(&mut self, fixed: &BTreeSet<u32>) {
        let mut spans: BTreeMap<(u32, u32), Vec<(i64, i64)>> = BTreeMap::new();
        let mut found = Vec::new();
        for run in self.runs.iter().filter(|r| r.end > r.start && !fixed.contains(&r.core)) {
            let allowed =
                spans.entry((run.core, run.partition)).or_insert_with(|| self.window_spans(run.core, run.partition, Window::allowed_end));
            for (start, end) in outside(allowed, run.start, run.end) {
                found.push(Violation {
                    kind: ViolationKind::OutOfWindow,
                    core: run.core,
                    partition: run.partition,
                    other: None,
                    start,
                    end,
                });
            }
        }
        self.violations.extend(found);
    }

    /// The merged spans `[planned_start, end_of(window))` of `partition`'s windows on `core`.
    pub fn window_spans(&self, core: u32, partition: u32, end_of: impl Fn(&Window) -> i64) -> Vec<(i64, i64)> {
        let mut spans: Vec<(i64, i64)> = self
            .windows
            .iter()
            .filter(|w| w.core == core && w.partition == partition)
            .map(|w| (w.planned_start, end_of(w).max(w.planned_start)))
            .collect();
        spans.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(spans.len());
        for (s, e) in spans {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        merged
    }

    /// Count of violations of one kind.
    pub fn count(&self, kind: ViolationKind) -> usize {
        self.violations.iter().filter(|v| v.kind == kind).count()
    }
}

/// Length of the intersection of `[start, end)` with sorted, disjoint `spans`.
pub fn inside_len(spans: &[(i64, i64)], start: i64, end: i64) -> i64 {
    let first = spans.partition_point(|&(_, e)| e <= start);
    spans[first..].iter().take_while(|&&(s, _)| s < end).map(|&(s, e)| (e.min(end) - s.max(start)).max(0)).sum()
}

/// The parts of `[start, end)` not covered by sorted, disjoint `spans`.
pub fn outside(spans: &[(i64, i64)], start: i64, end: i64) -> Vec<(i64, i64)> {
    let mut parts = Vec::new();
    let mut cursor = start;
    let first = spans.partition_point(|&(_, e)| e <= start);
    for &(s, e) in &spans[first..] {
        if e <= cursor {
            continue;
        }
        if s >= end {
            break;
        }
        if s > cursor {
            parts.push((cursor, s));
        }
        cursor = cursor.max(e);
        if cursor >= end {
            return parts;
        }
    }
    if cursor < end {
        parts.push((cursor, end));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_and_inside() {
        let spans = [(0, 10), (20, 30)];
        assert_eq!(outside(&spans, 2, 8), vec![]);
        assert_eq!(outside(&spans, 5, 25), vec![(10, 20)]);
        assert_eq!(outside(&spans, -5, 40), vec![(-5, 0), (10, 20), (30, 40)]);
        assert_eq!(outside(&[], 1, 2), vec![(1, 2)]);
        assert_eq!(inside_len(&spans, 5, 25), 10);
        assert_eq!(inside_len(&spans, 30, 40), 0);
    }

    #[test]
    fn fixed_priority_spellings() {
        assert!(is_fixed_priority("FIXED_PRIORITY"));
        assert!(is_fixed_priority("fixed-priority"));
        assert!(is_fixed_priority("FixedPriority"));
        assert!(!is_fixed_priority("CYCLIC"));
    }
}
