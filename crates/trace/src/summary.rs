//! The summary of a run: `partita run` prints it at the end, `partita trace --summary` prints it
//! (or its JSON form) from a trace file.
//!
//! Per core: window-start lateness (`window_start.t - planned`), partition switch cost (PCS,
//! `partition_running.t - planned`), window-end lateness (`window_end.t - planned`) and stop time
//! (`partition_stopped.t -` the matching `window_end.planned`, see [`crate::timeline`]). Per
//! partition: windows, the time it could run inside them, releases and deadline misses. Then the
//! lists of mode changes, exits, restarts and schedule changes, and the checks of
//! [`crate::timeline`] (overlap on a core, running outside its windows, window sequence).

use crate::stats::{Stats, us};
use crate::timeline::{Timeline, Violation, ViolationKind, inside_len};
use crate::{Event, PartitionInfo};
use serde::Serialize;
use std::collections::BTreeMap;
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
    pub events_dropped: u64,
    /// Reads of partition-writable memory the module refused (`shm_garbage` events and their
    /// repeats).
    pub shm_garbage: u64,
    pub check: Check,
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

/// Summarizes a trace (events in any order).
pub fn summarize(events: &[Event]) -> TraceSummary {
    let tl = Timeline::build(events);
    let mut s = TraceSummary {
        module: None,
        config: None,
        mechanism: None,
        events: events.len(),
        first_t: tl.first_t,
        last_t: tl.last_t,
        frames: 0,
        frames_counted: count_frames(&tl),
        stop_reason: None,
        cores: Vec::new(),
        partitions: Vec::new(),
        processes: Vec::new(),
        mode_changes: Vec::new(),
        deadline_misses: 0,
        exits: Vec::new(),
        restarts: Vec::new(),
        hm_events: Vec::new(),
        schedule_changes: Vec::new(),
        events_dropped: 0,
        shm_garbage: 0,
        check: Check::from_timeline(&tl),
    };
    let mut frames = None;
    let mut cores: BTreeMap<u32, CoreAcc> = BTreeMap::new();
    let mut parts: BTreeMap<u32, PartitionSummary> = BTreeMap::new();
    let mut procs: BTreeMap<(u32, i64), ProcessSummary> = BTreeMap::new();
    for e in events {
        match e {
            Event::ModuleStart { module, config, mechanism, cores: infos, partitions, .. } => {
                s.module = Some(module.clone());
                s.config = Some(config.clone());
                s.mechanism = Some(mechanism.clone());
                for c in infos {
                    let acc = cores.entry(c.core).or_default();
                    acc.cpu = Some(c.cpu);
                    acc.policy = Some(c.policy.clone());
                }
                for PartitionInfo { id, name } in partitions {
                    partition(&mut parts, *id).name = Some(name.clone());
                }
            }
            Event::WindowStart { t, core, planned, .. } => cores.entry(*core).or_default().lateness.push(t - planned),
            Event::WindowEnd { t, core, planned, .. } => cores.entry(*core).or_default().end_lateness.push(t - planned),
            Event::PartitionRunning { t, core, planned, .. } => cores.entry(*core).or_default().pcs.push(t - planned),
            Event::ModeChange { t, partition: p, from, to } => {
                s.mode_changes.push(ModeChange { t: *t, partition: *p, from: from.clone(), to: to.clone() });
            }
            Event::ProcessRelease { partition: p, process, .. } => {
                process_entry(&mut procs, *p, *process).releases += 1;
                partition(&mut parts, *p).releases += 1;
            }
            Event::DeadlineMissed { partition: p, process, .. } => {
                process_entry(&mut procs, *p, *process).deadline_misses += 1;
                partition(&mut parts, *p).deadline_misses += 1;
                s.deadline_misses += 1;
            }
            Event::ScheduleChange { t, from, to } => s.schedule_changes.push(ScheduleChange { t: *t, from: *from, to: *to }),
            Event::PartitionExit { t, partition: p, reason } => {
                partition(&mut parts, *p).exits += 1;
                s.exits.push(Exit { t: *t, partition: *p, reason: reason.clone() });
            }
            Event::HmEvent { t, partition: p, process, code, level, action, source } => {
                partition(&mut parts, *p).hm_events += 1;
                s.hm_events.push(HmEvent {
                    t: *t,
                    partition: *p,
                    process: *process,
                    code: code.clone(),
                    level: level.clone(),
                    action: action.clone(),
                    source: source.clone(),
                });
            }
            Event::PartitionRestart { t, partition: p, mode, start_condition } => {
                partition(&mut parts, *p).restarts += 1;
                s.restarts.push(Restart { t: *t, partition: *p, mode: mode.clone(), start_condition: start_condition.clone() });
            }
            Event::EventsDropped { partition: p, count, .. } => {
                // Saturating: a trace file is input too.
                let acc = partition(&mut parts, *p);
                acc.events_dropped = acc.events_dropped.saturating_add(*count);
                s.events_dropped = s.events_dropped.saturating_add(*count);
            }
            Event::ShmGarbage { partition: p, repeats, .. } => {
                let n = repeats.saturating_add(1);
                let acc = partition(&mut parts, *p);
                acc.shm_garbage = acc.shm_garbage.saturating_add(n);
                s.shm_garbage = s.shm_garbage.saturating_add(n);
            }
            Event::ModuleStop { frames: f, reason, .. } => {
                frames = Some(*f);
                s.stop_reason = Some(reason.clone());
            }
            _ => {}
        }
    }
    s.frames = frames.unwrap_or(s.frames_counted);
    s.mode_changes.sort_by_key(|m| m.t);
    s.exits.sort_by_key(|x| x.t);
    s.restarts.sort_by_key(|r| r.t);
    s.hm_events.sort_by_key(|h| h.t);
    s.schedule_changes.sort_by_key(|c| c.t);
    for w in &tl.windows {
        let acc = cores.entry(w.core).or_default();
        acc.windows += 1;
        acc.stop.extend(w.stop_time());
        let p = partition(&mut parts, w.partition);
        p.windows += 1;
        p.windows_running += w.running_t.is_some() as usize;
    }
    for r in &tl.runs {
        cores.entry(r.core).or_default().runs += 1;
        partition(&mut parts, r.partition).run_ns += r.end - r.start;
    }
    let last_t = tl.last_t;
    let mut spans = BTreeMap::new();
    for w in &tl.windows {
        spans.entry((w.core, w.partition)).or_insert_with(|| tl.window_spans(w.core, w.partition, |w| w.planned_end.unwrap_or(last_t)));
    }
    for (&(_, p), sp) in &spans {
        partition(&mut parts, p).window_ns += sp.iter().map(|(a, b)| b - a).sum::<i64>();
    }
    for r in &tl.runs {
        let inside = spans.get(&(r.core, r.partition)).map_or(0, |sp| inside_len(sp, r.start, r.end));
        partition(&mut parts, r.partition).run_in_window_ns += inside;
    }
    for p in parts.values_mut() {
        p.received = (p.window_ns > 0).then(|| p.run_in_window_ns as f64 / p.window_ns as f64);
    }
    s.cores = cores.into_iter().map(|(core, a)| a.finish(core)).collect();
    s.partitions = parts.into_values().collect();
    s.processes = procs.into_values().collect();
    s
}

#[derive(Default)]
struct CoreAcc {
    cpu: Option<u32>,
    policy: Option<String>,
    windows: usize,
    runs: usize,
    lateness: Vec<i64>,
    pcs: Vec<i64>,
    end_lateness: Vec<i64>,
    stop: Vec<i64>,
}

impl CoreAcc {
    fn finish(self, core: u32) -> CoreSummary {
        CoreSummary {
            core,
            cpu: self.cpu,
            policy: self.policy,
            windows: self.windows,
            run_intervals: self.runs,
            lateness: Stats::from_samples(&self.lateness),
            pcs: Stats::from_samples(&self.pcs),
            end_lateness: Stats::from_samples(&self.end_lateness),
            stop: Stats::from_samples(&self.stop),
        }
    }
}

fn partition(parts: &mut BTreeMap<u32, PartitionSummary>, id: u32) -> &mut PartitionSummary {
    parts.entry(id).or_insert_with(|| PartitionSummary {
        id,
        name: None,
        windows: 0,
        windows_running: 0,
        window_ns: 0,
        run_ns: 0,
        run_in_window_ns: 0,
        received: None,
        releases: 0,
        deadline_misses: 0,
        exits: 0,
        restarts: 0,
        hm_events: 0,
        events_dropped: 0,
        shm_garbage: 0,
    })
}

fn process_entry(procs: &mut BTreeMap<(u32, i64), ProcessSummary>, partition: u32, process: i64) -> &mut ProcessSummary {
    procs.entry((partition, process)).or_insert(ProcessSummary { partition, process, releases: 0, deadline_misses: 0 })
}

fn count_frames(tl: &Timeline) -> u64 {
    let Some(core) = tl.windows.iter().map(|w| w.core).min() else { return 0 };
    let mut frames = 0;
    let mut prev: Option<(u32, u32)> = None;
    for w in tl.windows.iter().filter(|w| w.core == core) {
        if prev.is_none_or(|(window, schedule)| w.window <= window || w.schedule != schedule) {
            frames += 1;
        }
        prev = Some((w.window, w.schedule));
    }
    frames
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
fn list<T>(f: &mut fmt::Formatter<'_>, title: &str, items: &[T], line: impl Fn(&T) -> String) -> fmt::Result {
    const MAX: usize = 20;
    if items.is_empty() {
        return Ok(());
    }
    writeln!(f, "{title}: {}", items.len())?;
    for item in items.iter().take(MAX) {
        writeln!(f, "  {}", line(item))?;
    }
    if items.len() > MAX {
        writeln!(f, "  ... and {} more", items.len() - MAX)?;
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
        list(f, "processes", &self.processes, |p| {
            format!(
                "partition {} process {}: {} releases, {} deadline misses",
                self.name(p.partition),
                p.process,
                p.releases,
                p.deadline_misses
            )
        })?;
        list(f, "mode changes", &self.mode_changes, |m| {
            format!("{} partition {}: {} -> {}", ms(m.t), self.name(m.partition), m.from, m.to)
        })?;
        if self.deadline_misses > 0 {
            writeln!(f, "deadline misses: {}", self.deadline_misses)?;
        }
        list(f, "partition exits", &self.exits, |x| format!("{} partition {}: {}", ms(x.t), self.name(x.partition), x.reason))?;
        list(f, "partition restarts", &self.restarts, |r| {
            format!("{} partition {}: {} ({})", ms(r.t), self.name(r.partition), r.mode, r.start_condition)
        })?;
        list(f, "health monitor events", &self.hm_events, |h| {
            let process = if h.process > 0 { format!(" process {}", h.process) } else { String::new() };
            format!("{} partition {}{process}: {} ({}, {}) -> {}", ms(h.t), self.name(h.partition), h.code, h.level, h.source, h.action)
        })?;
        list(f, "schedule changes", &self.schedule_changes, |c| format!("{} schedule {} -> {}", ms(c.t), c.from, c.to))?;
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
