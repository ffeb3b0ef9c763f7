//! The run summary built event by event in bounded memory ([`SummaryBuilder`]): `partita run`
//! feeds it every event as it drains the trace rings (and writes the event to the trace file),
//! so the module keeps no event and no per-window record however long it runs
//! (docs/trace.md). [`crate::summary::summarize`] is the same builder fed a whole trace at once.
//!
//! What it keeps:
//! - counters per core, partition and process (the process table is capped at
//!   [`MAX_PROCESSES`] entries; further processes count in their partition only);
//! - the window-start lateness, PCS, window-end lateness and stop time of each core as
//!   [`Sketch`]es (exact up to 4096 samples, then histograms with a documented error);
//! - the lists (mode changes, exits, restarts, HM events, schedule changes): their totals and the
//!   earliest `list_limit` entries of each;
//! - for the timeline checks ([`crate::timeline`]): the window, run and stop events of a
//!   sliding piece of the trace. Each time the newest of those is two margins past the last
//!   check, the timeline of the piece is built and everything that starts in
//!   `[checked_to, newest - margin)` is accounted (windows and runs by their start, window and
//!   run time clipped to that span, violations by their start); events before
//!   `checked_to - margin` are then dropped. Exact as long as every window is shorter than the
//!   margin and events reach the builder less than a margin out of time order (the module
//!   uses at least 1 s and two major frames); a timeline event older than the last check is
//!   counted in [`SummaryBuilder::late_events`] and left out of the checks.

use crate::sketch::Sketch;
use crate::summary::{
    Check, CoreSummary, Exit, FIRST_VIOLATIONS, HmEvent, ListTotals, ModeChange, PartitionSummary, ProcessSummary, Restart, ScheduleChange,
    TraceSummary,
};
use crate::timeline::{Timeline, Violation, ViolationKind, inside_len};
use crate::{Event, PartitionInfo};
use std::collections::BTreeMap;

/// Processes whose releases and deadline misses are counted one by one.
pub const MAX_PROCESSES: usize = 4096;

pub struct SummaryBuilder {
    s: TraceSummary,
    list_limit: usize,
    frames: Option<u64>,
    cores: BTreeMap<u32, CoreAcc>,
    parts: BTreeMap<u32, PartitionSummary>,
    procs: BTreeMap<(u32, i64), ProcessSummary>,
    first_t: Option<i64>,
    last_t: i64,
    /// Time of the latest event that is no timeline event (the end of the last piece).
    last_other: Option<i64>,
    // The timeline piece.
    margin: i64,
    module_start: Option<Event>,
    buf: Vec<Event>,
    newest: i64,
    checked_to: i64,
    late_events: u64,
    /// Per core: (window, schedule) of its previous window, for counting frames.
    frame_prev: BTreeMap<u32, (u32, u32)>,
    frames_by_core: BTreeMap<u32, u64>,
    window_ns: BTreeMap<u32, i64>,
}

#[derive(Default)]
struct CoreAcc {
    cpu: Option<u32>,
    policy: Option<String>,
    windows: usize,
    runs: usize,
    lateness: Sketch,
    pcs: Sketch,
    end_lateness: Sketch,
    stop: Sketch,
}

impl SummaryBuilder {
    /// A builder for a run in progress: the timeline is checked in pieces with `margin_ns`
    /// (at least 1 s is used) and each list keeps its `list_limit` earliest entries.
    pub fn streaming(margin_ns: i64, list_limit: usize) -> SummaryBuilder {
        SummaryBuilder::new(margin_ns.max(1_000_000_000), list_limit)
    }

    /// A builder that checks the whole trace at once and keeps whole lists (a trace file).
    pub fn whole() -> SummaryBuilder {
        SummaryBuilder::new(i64::MAX, usize::MAX)
    }

    fn new(margin: i64, list_limit: usize) -> SummaryBuilder {
        SummaryBuilder {
            s: TraceSummary {
                module: None,
                config: None,
                mechanism: None,
                events: 0,
                first_t: 0,
                last_t: 0,
                frames: 0,
                frames_counted: 0,
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
                totals: ListTotals::default(),
                events_dropped: 0,
                shm_garbage: 0,
                check: Check { ok: true, run_intervals: 0, overlaps: 0, out_of_window: 0, window_sequence: 0, first: Vec::new() },
            },
            list_limit,
            frames: None,
            cores: BTreeMap::new(),
            parts: BTreeMap::new(),
            procs: BTreeMap::new(),
            first_t: None,
            last_t: 0,
            last_other: None,
            margin,
            module_start: None,
            buf: Vec::new(),
            newest: i64::MIN,
            checked_to: i64::MIN,
            late_events: 0,
            frame_prev: BTreeMap::new(),
            frames_by_core: BTreeMap::new(),
            window_ns: BTreeMap::new(),
        }
    }

    /// Timeline events that arrived older than the last check (left out of the checks).
    pub fn late_events(&self) -> u64 {
        self.late_events
    }

    /// Timeline events held for the next check (bounded by the event rate times three margins).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    pub fn push(&mut self, e: &Event) {
        let t = e.t();
        self.s.events += 1;
        self.first_t = Some(self.first_t.map_or(t, |f| f.min(t)));
        self.last_t = if self.s.events == 1 { t } else { self.last_t.max(t) };
        self.count(e);
        match e {
            Event::ModuleStart { .. } => self.module_start = Some(e.clone()),
            Event::WindowStart { .. }
            | Event::WindowEnd { .. }
            | Event::PartitionRunning { .. }
            | Event::PartitionStopped { .. }
            | Event::PartitionExit { .. } => {
                if t < self.checked_to {
                    self.late_events += 1;
                    return;
                }
                self.buf.push(e.clone());
                // Only these (written by the module itself, never by a partition) move the piece.
                self.newest = self.newest.max(t);
                if self.margin < i64::MAX && self.newest.saturating_sub(self.margin) >= self.checked_to.saturating_add(self.margin) {
                    let to = self.newest - self.margin;
                    self.check(to);
                }
            }
            _ => self.last_other = Some(self.last_other.map_or(t, |o| o.max(t))),
        }
    }

    /// The per-event figures (everything but the timeline).
    fn count(&mut self, e: &Event) {
        let s = &mut self.s;
        match e {
            Event::ModuleStart { module, config, mechanism, cores: infos, partitions, .. } => {
                s.module = Some(module.clone());
                s.config = Some(config.clone());
                s.mechanism = Some(mechanism.clone());
                for c in infos {
                    let acc = self.cores.entry(c.core).or_default();
                    acc.cpu = Some(c.cpu);
                    acc.policy = Some(c.policy.clone());
                }
                for PartitionInfo { id, name } in partitions {
                    partition(&mut self.parts, *id).name = Some(name.clone());
                }
            }
            Event::WindowStart { t, core, planned, .. } => self.cores.entry(*core).or_default().lateness.push(t - planned),
            Event::WindowEnd { t, core, planned, .. } => self.cores.entry(*core).or_default().end_lateness.push(t - planned),
            Event::PartitionRunning { t, core, planned, .. } => self.cores.entry(*core).or_default().pcs.push(t - planned),
            Event::ModeChange { t, partition: p, from, to } => {
                s.totals.mode_changes += 1;
                keep(&mut s.mode_changes, self.list_limit, ModeChange { t: *t, partition: *p, from: from.clone(), to: to.clone() }, |m| {
                    m.t
                });
            }
            Event::ProcessRelease { partition: p, process, .. } => {
                if let Some(pr) = process_entry(&mut self.procs, *p, *process) {
                    pr.releases += 1;
                }
                partition(&mut self.parts, *p).releases += 1;
            }
            Event::DeadlineMissed { partition: p, process, .. } => {
                if let Some(pr) = process_entry(&mut self.procs, *p, *process) {
                    pr.deadline_misses += 1;
                }
                partition(&mut self.parts, *p).deadline_misses += 1;
                s.deadline_misses += 1;
            }
            Event::ScheduleChange { t, from, to } => {
                s.totals.schedule_changes += 1;
                keep(&mut s.schedule_changes, self.list_limit, ScheduleChange { t: *t, from: *from, to: *to }, |c| c.t);
            }
            Event::PartitionExit { t, partition: p, reason } => {
                partition(&mut self.parts, *p).exits += 1;
                s.totals.exits += 1;
                keep(&mut s.exits, self.list_limit, Exit { t: *t, partition: *p, reason: reason.clone() }, |x| x.t);
            }
            Event::HmEvent { t, partition: p, process, code, level, action, source } => {
                partition(&mut self.parts, *p).hm_events += 1;
                s.totals.hm_events += 1;
                let h = HmEvent {
                    t: *t,
                    partition: *p,
                    process: *process,
                    code: code.clone(),
                    level: level.clone(),
                    action: action.clone(),
                    source: source.clone(),
                };
                keep(&mut s.hm_events, self.list_limit, h, |h| h.t);
            }
            Event::PartitionRestart { t, partition: p, mode, start_condition } => {
                partition(&mut self.parts, *p).restarts += 1;
                s.totals.restarts += 1;
                let r = Restart { t: *t, partition: *p, mode: mode.clone(), start_condition: start_condition.clone() };
                keep(&mut s.restarts, self.list_limit, r, |r| r.t);
            }
            Event::EventsDropped { partition: p, count, .. } => {
                // Saturating: a trace file is input too.
                let acc = partition(&mut self.parts, *p);
                acc.events_dropped = acc.events_dropped.saturating_add(*count);
                s.events_dropped = s.events_dropped.saturating_add(*count);
            }
            Event::ShmGarbage { partition: p, repeats, .. } => {
                let n = repeats.saturating_add(1);
                let acc = partition(&mut self.parts, *p);
                acc.shm_garbage = acc.shm_garbage.saturating_add(n);
                s.shm_garbage = s.shm_garbage.saturating_add(n);
            }
            Event::ModuleStop { frames: f, reason, .. } => {
                self.frames = Some(*f);
                s.stop_reason = Some(reason.clone());
            }
            _ => {}
        }
    }

    /// Builds the timeline of the piece and accounts what starts in `[checked_to, to)`.
    fn check(&mut self, to: i64) {
        let from = self.checked_to;
        let mut events: Vec<Event> = Vec::with_capacity(self.buf.len() + 2);
        events.extend(self.module_start.iter().cloned());
        events.append(&mut self.buf);
        let last = to == i64::MAX;
        // The end of the trace: open windows and runs end there, as in a whole-trace timeline.
        if last && let Some(t) = self.last_other {
            // Any event the timeline ignores, for its time.
            events.push(Event::ScheduleChange { t, from: 0, to: 0 });
        }
        let mut tl = Timeline::build(&events);
        if last {
            tl.last_t = self.last_t;
            for r in &mut tl.runs {
                if r.end_kind == crate::timeline::RunEnd::TraceEnd {
                    r.end = r.end.max(self.last_t);
                }
            }
        }
        let in_range = |t: i64| t >= from && t < to;
        for w in tl.windows.iter().filter(|w| in_range(w.start_t)) {
            let acc = self.cores.entry(w.core).or_default();
            acc.windows += 1;
            if let Some(st) = w.stop_time() {
                acc.stop.push(st);
            }
            let p = partition(&mut self.parts, w.partition);
            p.windows += 1;
            p.windows_running += w.running_t.is_some() as usize;
            let prev = self.frame_prev.insert(w.core, (w.window, w.schedule));
            if prev.is_none_or(|(window, schedule)| w.window <= window || w.schedule != schedule) {
                *self.frames_by_core.entry(w.core).or_default() += 1;
            }
        }
        let clip = |a: i64, b: i64| (b.min(to) - a.max(from)).max(0);
        let tl_last = tl.last_t;
        let mut spans = BTreeMap::new();
        for w in &tl.windows {
            spans
                .entry((w.core, w.partition))
                .or_insert_with(|| tl.window_spans(w.core, w.partition, |w| w.planned_end.unwrap_or(tl_last)));
        }
        for (&(_, p), sp) in &spans {
            *self.window_ns.entry(p).or_default() += sp.iter().map(|&(a, b)| clip(a, b)).sum::<i64>();
        }
        for r in &tl.runs {
            if in_range(r.start) {
                self.cores.entry(r.core).or_default().runs += 1;
                self.s.check.run_intervals += 1;
                partition(&mut self.parts, r.partition);
            }
            let (a, b) = (r.start.max(from), r.end.min(to));
            if b > a {
                let inside = spans.get(&(r.core, r.partition)).map_or(0, |sp| inside_len(sp, a, b));
                let p = partition(&mut self.parts, r.partition);
                p.run_ns += b - a;
                p.run_in_window_ns += inside;
            }
        }
        let c = &mut self.s.check;
        let mut found: Vec<Violation> = tl.violations.into_iter().filter(|v| in_range(v.start)).collect();
        for v in &found {
            match v.kind {
                ViolationKind::Overlap => c.overlaps += 1,
                ViolationKind::OutOfWindow => c.out_of_window += 1,
                ViolationKind::WindowSequence => c.window_sequence += 1,
            }
        }
        c.ok &= found.is_empty();
        c.first.append(&mut found);
        c.first.sort_by_key(|v| (v.start, v.core));
        c.first.truncate(FIRST_VIOLATIONS);
        self.checked_to = to;
        let keep_from = to.saturating_sub(self.margin);
        self.buf = events.into_iter().filter(|e| is_timeline(e) && e.t() >= keep_from).collect();
    }

    /// The summary of everything pushed so far (checks the rest of the timeline).
    pub fn finish(mut self) -> TraceSummary {
        self.check(i64::MAX);
        let mut s = self.s;
        s.first_t = self.first_t.unwrap_or(0);
        s.last_t = if s.events == 0 { 0 } else { self.last_t };
        s.frames_counted = self.frames_by_core.iter().find(|(_, n)| **n > 0).map_or(0, |(_, n)| *n);
        s.frames = self.frames.unwrap_or(s.frames_counted);
        finish_list(&mut s.mode_changes, self.list_limit, |m| m.t);
        finish_list(&mut s.exits, self.list_limit, |x| x.t);
        finish_list(&mut s.restarts, self.list_limit, |r| r.t);
        finish_list(&mut s.hm_events, self.list_limit, |h| h.t);
        finish_list(&mut s.schedule_changes, self.list_limit, |c| c.t);
        for (p, ns) in self.window_ns {
            partition(&mut self.parts, p).window_ns = ns;
        }
        for p in self.parts.values_mut() {
            p.received = (p.window_ns > 0).then(|| p.run_in_window_ns as f64 / p.window_ns as f64);
        }
        s.cores = self.cores.into_iter().map(|(core, a)| a.finish(core)).collect();
        s.partitions = self.parts.into_values().collect();
        s.processes = self.procs.into_values().collect();
        s
    }
}

fn is_timeline(e: &Event) -> bool {
    matches!(
        e,
        Event::WindowStart { .. }
            | Event::WindowEnd { .. }
            | Event::PartitionRunning { .. }
            | Event::PartitionStopped { .. }
            | Event::PartitionExit { .. }
    )
}

/// Adds to a list that keeps its `limit` earliest entries (by `t`; equal times in arrival
/// order), sorting and cutting it when it reaches twice that.
fn keep<T>(list: &mut Vec<T>, limit: usize, item: T, t: impl Fn(&T) -> i64) {
    list.push(item);
    if list.len() >= limit.saturating_mul(2) {
        finish_list(list, limit, t);
    }
}

fn finish_list<T>(list: &mut Vec<T>, limit: usize, t: impl Fn(&T) -> i64) {
    list.sort_by_key(|x| t(x));
    list.truncate(limit);
}

impl CoreAcc {
    fn finish(self, core: u32) -> CoreSummary {
        CoreSummary {
            core,
            cpu: self.cpu,
            policy: self.policy,
            windows: self.windows,
            run_intervals: self.runs,
            lateness: self.lateness.stats(),
            pcs: self.pcs.stats(),
            end_lateness: self.end_lateness.stats(),
            stop: self.stop.stats(),
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

fn process_entry(procs: &mut BTreeMap<(u32, i64), ProcessSummary>, partition: u32, process: i64) -> Option<&mut ProcessSummary> {
    let full = procs.len() >= MAX_PROCESSES;
    match procs.entry((partition, process)) {
        std::collections::btree_map::Entry::Occupied(o) => Some(o.into_mut()),
        std::collections::btree_map::Entry::Vacant(_) if full => None,
        std::collections::btree_map::Entry::Vacant(v) => {
            Some(v.insert(ProcessSummary { partition, process, releases: 0, deadline_misses: 0 }))
        }
    }
}
