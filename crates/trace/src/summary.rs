//! The summary of a run: `partita run` prints it at the end, `partita trace --summary` prints it
//! (or its JSON form) from a trace file.
//!
//! Per core: window-start lateness (`window_start.t - planned`), partition switch cost (PCS,
//! `partition_running.t - planned`), window-end lateness (`window_end.t - planned`) and stop time
//! (`partition_stopped.t -` the matching `window_end.planned`, see [`crate::timeline`]). Per
//! partition: windows, the time it could run inside them, releases and deadline misses. Then the
//! lists of mode changes, exits, restarts and schedule changes, and the checks of
//! [`crate::timeline`] (overlap on a core, running outside its windows, window sequence).

use crate::Event;
use crate::stats::{Stats, us};
use crate::stream::SummaryBuilder;
use crate::timeline::{Timeline, Violation, ViolationKind};
use serde::Serialize;
use std::fmt;

/// How many violations [`Check::first`] keeps.
pub const FIRST_VIOLATIONS: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceSummary {
    pub module: Option<String>,
    pub config: Option<String>,
    pub mechanism: Option<String>,
    pub events: usize,
    pub first_t: i64,
    pub last_t: i64,
    /// Major frames: `module_stop.frames` when the trace has it, else [`Self::frames_counted`].
    pub frames: u64,
    /// Major frames counted from the window starts of the lowest core that has windows (a frame
    /// begins where the window index stops increasing or the schedule changes).
    pub frames_counted: u64,
    pub stop_reason: Option<String>,
    pub cores: Vec<CoreSummary>,
    pub partitions: Vec<PartitionSummary>,
    pub processes: Vec<ProcessSummary>,
    pub mode_changes: Vec<ModeChange>,
    pub deadline_misses: u64,
    pub exits: Vec<Exit>,
    pub restarts: Vec<Restart>,
    pub hm_events: Vec<HmEvent>,
    pub schedule_changes: Vec<ScheduleChange>,
    /// How many of each list there were: the lists above keep the earliest ones only in the
    /// summary of a run in progress (see [`crate::stream`]).
    pub totals: ListTotals,
    pub events_dropped: u64,
    /// Reads of partition-writable memory the module refused (`shm_garbage` events and their
    /// repeats).
    pub shm_garbage: u64,
    pub check: Check,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ListTotals {
    pub mode_changes: usize,
    pub exits: usize,
    pub restarts: usize,
    pub hm_events: usize,
    pub schedule_changes: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoreSummary {
    pub core: u32,
    pub cpu: Option<u32>,
    pub policy: Option<String>,
    /// Window starts on this core.
    pub windows: usize,
    pub run_intervals: usize,
    pub lateness: Option<Stats>,
    pub pcs: Option<Stats>,
    pub end_lateness: Option<Stats>,
    pub stop: Option<Stats>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionSummary {
    pub id: u32,
    pub name: Option<String>,
    /// Windows started for it (all cores).
    pub windows: usize,
    /// Of those, windows in which it reported running.
    pub windows_running: usize,
    /// Planned window time (a window still open at the end of the trace counts up to it).
    pub window_ns: i64,
    /// Length of its run intervals.
    pub run_ns: i64,
    /// Part of the run intervals inside its planned windows.
    pub run_in_window_ns: i64,
    /// `run_in_window_ns / window_ns`.
    pub received: Option<f64>,
    pub releases: u64,
    pub deadline_misses: u64,
    pub exits: usize,
    pub restarts: usize,
    pub hm_events: usize,
    pub events_dropped: u64,
    pub shm_garbage: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessSummary {
    pub partition: u32,
    pub process: i64,
    pub releases: u64,
    pub deadline_misses: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeChange {
    pub t: i64,
    pub partition: u32,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exit {
    pub t: i64,
    pub partition: u32,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Restart {
    pub t: i64,
    pub partition: u32,
    pub mode: String,
    pub start_condition: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HmEvent {
    pub t: i64,
    pub partition: u32,
    pub process: i64,
    pub code: String,
    pub level: String,
    pub action: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScheduleChange {
    pub t: i64,
    pub from: u32,
    pub to: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// No violation of any kind.
    pub ok: bool,
    pub run_intervals: usize,
    pub overlaps: usize,
    pub out_of_window: usize,
    pub window_sequence: usize,
    /// The earliest violations (at most [`FIRST_VIOLATIONS`]), by time.
    pub first: Vec<Violation>,
}

impl Check {
    pub fn from_timeline(tl: &Timeline) -> Check {
        let mut first = tl.violations.clone();
        first.sort_by_key(|v| (v.start, v.core));
        first.truncate(FIRST_VIOLATIONS);
        Check {
            ok: tl.violations.is_empty(),
            run_intervals: tl.runs.len(),
            overlaps: tl.count(ViolationKind::Overlap),
            out_of_window: tl.count(ViolationKind::OutOfWindow),
            window_sequence: tl.count(ViolationKind::WindowSequence),
            first,
        }
    }
}

/// Summarizes a trace (events in any order): [`SummaryBuilder::whole`] fed every event.
pub fn summarize(events: &[Event]) -> TraceSummary {
    let mut b = SummaryBuilder::whole();
    events.iter().for_each(|e| b.push(e));
    b.finish()
}

/// Time in milliseconds with microsecond precision, e.g. `+12.345 ms`.
fn ms(t: i64) -> String {
    format!("{:+.3} ms", t as f64 / 1e6)
}

impl TraceSummary {
    fn name(&self, id: u32) -> String {
        match self.partitions.iter().find(|p| p.id == id).and_then(|p| p.name.as_deref()) {
            Some(name) => format!("{id} ({name})"),
            None => id.to_string(),
        }
    }
}

/// Writes at most `MAX` items, then how many were left out.
fn list<T>(f: &mut fmt::Formatter<'_>, title: &str, total: usize, items: &[T], line: impl Fn(&T) -> String) -> fmt::Result {
    const MAX: usize = 20;
    let total = total.max(items.len());
    if total == 0 {
        return Ok(());
    }
    writeln!(f, "{title}: {total}")?;
    let shown = items.len().min(MAX);
    for item in items.iter().take(shown) {
        writeln!(f, "  {}", line(item))?;
    }
    if total > shown {
        writeln!(f, "  ... and {} more", total - shown)?;
    }
    Ok(())
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let span = format!("[{}, {}) ({} us)", ms(self.start), ms(self.end), us((self.end - self.start) as f64));
        match (self.kind, self.other) {
            (ViolationKind::Overlap, Some(o)) => {
                write!(f, "overlap on core {}: partitions {} and {o} both may run during {span}", self.core, self.partition)
            }
            (ViolationKind::OutOfWindow, _) => {
                write!(f, "partition {} may run on core {} outside its windows during {span}", self.partition, self.core)
            }
            _ => write!(f, "window sequence broken on core {} (partition {}) at {span}", self.core, self.partition),
        }
    }
}

impl fmt::Display for TraceSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(module) = &self.module {
            write!(f, "module {module}")?;
            if let Some(config) = &self.config {
                write!(f, " ({config})")?;
            }
            writeln!(f, ", mechanism {}", self.mechanism.as_deref().unwrap_or("?"))?;
        }
        write!(f, "{} events from {} to {}, {} major frames", self.events, ms(self.first_t), ms(self.last_t), self.frames)?;
        if self.frames != self.frames_counted {
            write!(f, " ({} counted from window starts)", self.frames_counted)?;
        }
        match &self.stop_reason {
            Some(reason) => writeln!(f, ", stopped: {reason}")?,
            None => writeln!(f, ", no module_stop (trace cut short?)")?,
        }
        for c in &self.cores {
            write!(f, "core {}", c.core)?;
            if let (Some(cpu), Some(policy)) = (c.cpu, &c.policy) {
                write!(f, " (cpu {cpu}, {policy})")?;
            }
            writeln!(f, ": {} windows, {} run intervals", c.windows, c.run_intervals)?;
            for (label, stats) in
                [("window-start lateness", &c.lateness), ("PCS", &c.pcs), ("window-end lateness", &c.end_lateness), ("stop time", &c.stop)]
            {
                if let Some(stats) = stats {
                    writeln!(f, "  {label:<22}{stats}")?;
                }
            }
        }
        for p in &self.partitions {
            write!(f, "partition {}: {} windows ({} running)", self.name(p.id), p.windows, p.windows_running)?;
            write!(
                f,
                ", ran {} of {} in windows",
                ms(p.run_in_window_ns).trim_start_matches('+'),
                ms(p.window_ns).trim_start_matches('+')
            )?;
            if let Some(r) = p.received {
                write!(f, " ({r:.3})")?;
            }
            writeln!(f, ", {} releases, {} deadline misses", p.releases, p.deadline_misses)?;
        }
        list(f, "processes", self.processes.len(), &self.processes, |p| {
            format!(
                "partition {} process {}: {} releases, {} deadline misses",
                self.name(p.partition),
                p.process,
                p.releases,
                p.deadline_misses
            )
        })?;
        list(f, "mode changes", self.totals.mode_changes, &self.mode_changes, |m| {
            format!("{} partition {}: {} -> {}", ms(m.t), self.name(m.partition), m.from, m.to)
        })?;
        if self.deadline_misses > 0 {
            writeln!(f, "deadline misses: {}", self.deadline_misses)?;
        }
        list(f, "partition exits", self.totals.exits, &self.exits, |x| {
            format!("{} partition {}: {}", ms(x.t), self.name(x.partition), x.reason)
        })?;
        list(f, "partition restarts", self.totals.restarts, &self.restarts, |r| {
            format!("{} partition {}: {} ({})", ms(r.t), self.name(r.partition), r.mode, r.start_condition)
        })?;
        list(f, "health monitor events", self.totals.hm_events, &self.hm_events, |h| {
            let process = if h.process > 0 { format!(" process {}", h.process) } else { String::new() };
            format!("{} partition {}{process}: {} ({}, {}) -> {}", ms(h.t), self.name(h.partition), h.code, h.level, h.source, h.action)
        })?;
        list(f, "schedule changes", self.totals.schedule_changes, &self.schedule_changes, |c| {
            format!("{} schedule {} -> {}", ms(c.t), c.from, c.to)
        })?;
        if self.events_dropped > 0 {
            writeln!(f, "events dropped: {}", self.events_dropped)?;
        }
        if self.shm_garbage > 0 {
            let by: Vec<String> =
                self.partitions.iter().filter(|p| p.shm_garbage > 0).map(|p| format!("{} {}", self.name(p.id), p.shm_garbage)).collect();
            writeln!(f, "shared memory garbage refused: {} ({})", self.shm_garbage, by.join(", "))?;
        }
        let c = &self.check;
        if c.ok {
            writeln!(f, "check: OK ({} run intervals: no overlap on any core, none outside its windows)", c.run_intervals)
        } else {
            writeln!(
                f,
                "check: FAILED ({} run intervals): {} overlaps, {} outside windows, {} window sequence errors",
                c.run_intervals, c.overlaps, c.out_of_window, c.window_sequence
            )?;
            c.first.iter().try_for_each(|v| writeln!(f, "  {v}"))
        }
    }
}
