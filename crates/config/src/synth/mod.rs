//! Window synthesis (`partita schedule --synthesize REQ.xml -o OUT.xml`).
//!
//! A request is a module configuration in which some `<Partition_Schedule>` elements give a
//! period and a duration but no `<Window_Schedule>`. For every Module_Schedule, synthesis
//!
//! 1. keeps the windows already written and treats them as reserved time on their cores;
//! 2. assigns the partitions to place to the CYCLIC cores of the module: most critical
//!    first, then the larger utilization first, each onto the core with the most remaining
//!    capacity where the utilization stays at or under 100 % and (when the core has reserved
//!    windows) plain EDF still meets every deadline; if that leaves a partition without a
//!    core, a best-fit-decreasing placement by utilization alone is tried before giving up;
//! 3. builds each core's table over one major frame by an event-driven simulation in integer
//!    nanoseconds: job `k` of a partition is released at `k*P`, is due at `(k+1)*P` and needs
//!    PeriodDurationSeconds. The base policy is EDF (ties: higher criticality, then lower
//!    partition identifier). Criticality-inversion avoidance (seed 002 §3.1.3): when EDF
//!    would run a partition while a *more critical* partition has started but not finished
//!    its budget of the current period (EDF preempting it, or not resuming it), the more
//!    critical partition is kept running to the end of that budget if plain EDF from the
//!    resulting state still meets every deadline of the frame. EDF is optimal on one
//!    processor with blocked intervals, so that test is exact and the table meets every
//!    deadline exactly when plain EDF does;
//! 4. turns the table into `<Window_Schedule>` elements (one window per contiguous run of a
//!    partition inside one of its periods, `PartitionPeriodStart="true"` on the first window
//!    of each period, `pt:Core`) and splices them into the original text, so that comments
//!    and layout of the request survive.
//!
//! The verdict says whether every partition got its duration in every period, and if not,
//! why (major frame not a multiple of a period, utilization, reserved windows in the way).

mod assign;
mod splice;
mod table;
#[cfg(test)]
mod tests;

use self::assign::{Fit, assign, refusal_reason};
use self::splice::splice;
use self::table::{Sim, SimTask, count_inversions, windows_of};
use crate::diag::{Diagnostic, Rule, Severity, Span};
use crate::model::{CorePolicy, Criticality, Module, ModuleSchedule, Partition};
use crate::time::Nanos;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;

/// Partition periods in one major frame above which synthesis refuses (the table would be
/// enormous and the simulation slow); a real module has a few hundred.
const MAX_JOBS_PER_SCHEDULE: i128 = 200_000;

/// The result of a synthesis that could read the request.
#[derive(Debug, Clone, Serialize)]
pub struct Synthesis {
    /// The request with the synthesized windows spliced in (best effort when not schedulable).
    pub xml: String,
    /// Every partition to place got its duration in every period of every schedule.
    pub schedulable: bool,
    /// Human-readable lines: per schedule and core the assignment, utilization and table,
    /// then the verdict and its reasons.
    pub report: Vec<String>,
    /// Per schedule and CYCLIC core, the partitions on it.
    pub cores: Vec<CoreAssignment>,
    /// Why the set is not schedulable (empty when it is); also in `report`.
    pub reasons: Vec<String>,
}

/// The partitions one CYCLIC core serves in one Module_Schedule.
#[derive(Debug, Clone, Serialize)]
pub struct CoreAssignment {
    pub schedule_id: u32,
    pub schedule: String,
    pub core: u32,
    pub partitions: Vec<AssignedPartition>,
    /// Sum of the partitions' utilizations on this core (1.0 = fully loaded).
    pub utilization: f64,
    /// Windows synthesized on this core.
    pub windows: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct AssignedPartition {
    pub id: u32,
    pub name: String,
    pub criticality: Option<Criticality>,
    /// Share of this core the partition uses (duration / period, or window time / frame
    /// for kept windows).
    pub utilization: f64,
    /// The partition's windows were in the request and were kept as they are.
    pub kept: bool,
}

#[derive(Debug, Clone)]
pub enum SynthError {
    /// The request cannot be used: it does not parse, or it has errors other than the
    /// missing windows synthesis is about. The diagnostics say which.
    NotAModule(Vec<Diagnostic>),
}

impl fmt::Display for SynthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SynthError::NotAModule(d) => {
                let errors = d.iter().filter(|d| d.severity == Severity::Error).count();
                write!(f, "the request is not a usable module configuration ({errors} error(s))")
            }
        }
    }
}

impl std::error::Error for SynthError {}

/// Synthesizes the missing windows of the request `text`. `base_dir` is where relative
/// `pt:Executable` paths are looked up (as for `check_text`).
pub fn synthesize(text: &str, base_dir: &Path) -> Result<Synthesis, SynthError> {
    let checked = crate::check_text(text, base_dir);
    let Some(module) = checked.module else { return Err(SynthError::NotAModule(checked.diagnostics)) };
    let to_place: HashSet<Span> =
        module.schedules.iter().flat_map(|s| &s.partitions).filter(|ps| ps.windows.is_empty()).map(|ps| ps.span).collect();
    // A request lacks windows by definition: the period-not-covered errors of the partitions to
    // place are expected. A major frame that is not a multiple of a period is a verdict, and a
    // missing pt:Executable (a plain ARINC 653 request) does not stop synthesis.
    let expected = |d: &Diagnostic| d.rule == Rule::PeriodNotCovered && to_place.contains(&d.span());
    let tolerated =
        |d: &Diagnostic| d.severity != Severity::Error || expected(d) || matches!(d.rule, Rule::FrameNotMultiple | Rule::MissingExecutable);
    if !checked.diagnostics.iter().all(tolerated) {
        return Err(SynthError::NotAModule(checked.diagnostics.into_iter().filter(|d| !expected(d)).collect()));
    }
    let doc = match roxmltree::Document::parse(text) {
        Ok(doc) => doc,
        Err(_) => return Err(SynthError::NotAModule(checked.diagnostics)),
    };

    let mut out = Outcome::default();
    for s in &module.schedules {
        plan_schedule(&module, s, &mut out);
    }
    let missing_exe: Vec<String> = module.partitions.iter().filter(|p| p.executable.is_none()).map(describe).collect();
    if !missing_exe.is_empty() {
        out.report.push(format!(
            "note: {} {} no pt:Executable; add one before `partita check` or `partita run`",
            missing_exe.join(", "),
            if missing_exe.len() == 1 { "has" } else { "have" }
        ));
    }
    if module.schedules.is_empty() {
        out.report.push("the request has no <Module_Schedule>; nothing to synthesize".to_string());
    }
    let schedulable = out.reasons.is_empty();
    if schedulable {
        out.report.push("verdict: schedulable".to_string());
    } else {
        out.report.push("verdict: NOT schedulable".to_string());
        out.report.extend(out.reasons.iter().map(|r| format!("  reason: {r}")));
    }
    let xml = splice(text, &doc, &out.windows);
    Ok(Synthesis { xml, schedulable, report: out.report, cores: out.cores, reasons: out.reasons })
}

/// What the schedules contribute to the answer.
#[derive(Default)]
struct Outcome {
    /// New windows per Partition_Schedule element (by its position).
    windows: HashMap<Span, Vec<OutWindow>>,
    report: Vec<String>,
    reasons: Vec<String>,
    cores: Vec<CoreAssignment>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OutWindow {
    start: i64,
    duration: i64,
    period_start: bool,
    core: u32,
}

/// A partition to place.
struct Task {
    ps_span: Span,
    id: u32,
    name: String,
    criticality: Option<Criticality>,
    period: i64,
    budget: i64,
    /// Execution time per major frame.
    demand: i128,
}

impl Task {
    fn crit(&self) -> i8 {
        self.criticality.map_or(-1, |c| c.rank() as i8)
    }

    fn label(&self) -> String {
        format!("partition {} \"{}\"", self.id, self.name)
    }

    fn crit_label(&self) -> &'static str {
        self.criticality.map_or("no criticality", Criticality::as_str)
    }

    fn sim(&self) -> SimTask {
        SimTask { period: self.period, budget: self.budget, crit: self.crit(), id: self.id }
    }
}

/// A CYCLIC core of one schedule.
struct CoreSlot {
    index: u32,
    /// Kept windows: time the synthesized partitions cannot use, sorted and merged.
    blocked: Vec<(i64, i64)>,
    reserved: i128,
    kept: Vec<AssignedPartition>,
}

fn describe(p: &Partition) -> String {
    format!("partition {} \"{}\"", p.id.value, p.name.value)
}

fn secs(ns: i64) -> String {
    format!("{} s", Nanos(ns).to_seconds_string())
}

/// "partition 3 \"B\" gets only 0.01 s of its 0.02 s in period 2 [0.08 s, 0.12 s)", with `gets`
/// as the verb.
fn miss_text(t: &Task, miss: &table::Miss, gets: &str) -> String {
    format!(
        "{} {gets} only {} of its {} in period {} [{}, {})",
        t.label(),
        secs(miss.got),
        secs(t.budget),
        miss.period_index,
        secs(miss.period_index * t.period),
        secs((miss.period_index + 1) * t.period)
    )
}

fn pct(share: f64) -> String {
    format!("{:.2} %", share * 100.0)
}

fn share(part: i128, frame: i64) -> f64 {
    if frame <= 0 { 0.0 } else { part as f64 / frame as f64 }
}

fn plan_schedule(m: &Module, s: &ModuleSchedule, out: &mut Outcome) {
    let frame = s.major_frame.value.0;
    let sname = format!("schedule {} \"{}\"", s.id.value, s.name.value);
    let served: HashSet<u32> = m
        .cores
        .iter()
        .filter(|c| c.policy == CorePolicy::FixedPriority)
        .flat_map(|c| c.priorities.iter().map(|p| p.partition.value))
        .collect();
    let mut slots: Vec<CoreSlot> = m
        .cores
        .iter()
        .filter(|c| c.policy == CorePolicy::Cyclic)
        .map(|c| CoreSlot { index: c.index, blocked: Vec::new(), reserved: 0, kept: Vec::new() })
        .collect();

    let mut tasks: Vec<Task> = Vec::new();
    let mut kept_count = 0;
    let mut notes = Vec::new();
    let mut reasons = Vec::new();
    for ps in &s.partitions {
        let Some(p) = m.resolve(&ps.partition) else { continue };
        let (period, budget) = (ps.period.value.0, ps.duration.value.0);
        if period <= 0 || frame <= 0 {
            continue; // reported by validation, which makes the request unusable
        }
        if frame % period != 0 {
            reasons.push(format!(
                "{sname}: MajorFrameSeconds {} (line {}) is not a multiple of PeriodSeconds {} of {} (line {}); a cyclic table needs a frame that holds whole periods",
                Nanos(frame).to_seconds_string(),
                s.major_frame.span.line,
                Nanos(period).to_seconds_string(),
                describe(p),
                ps.span.line
            ));
            continue;
        }
        if !ps.windows.is_empty() {
            kept_count += 1;
            for w in &ps.windows {
                let Some(slot) = slots.iter_mut().find(|c| c.index == w.core.value) else { continue };
                let (a, b) = (w.start.value.0.clamp(0, frame), w.end().0.clamp(0, frame));
                if b <= a {
                    continue;
                }
                slot.blocked.push((a, b));
                slot.reserved += i128::from(b - a);
                match slot.kept.iter_mut().find(|k| k.id == p.id.value) {
                    Some(k) => k.utilization += share(i128::from(b - a), frame),
                    None => slot.kept.push(AssignedPartition {
                        id: p.id.value,
                        name: p.name.value.clone(),
                        criticality: p.criticality.as_ref().map(|c| c.value),
                        utilization: share(i128::from(b - a), frame),
                        kept: true,
                    }),
                }
            }
            continue;
        }
        if served.contains(&p.id.value) {
            notes.push(format!("  {} is served by priority on a FIXED_PRIORITY core; it gets no windows", describe(p)));
            continue;
        }
        if budget == 0 {
            notes.push(format!("  {} has PeriodDurationSeconds 0; it gets no windows", describe(p)));
            continue;
        }
        tasks.push(Task {
            ps_span: ps.span,
            id: p.id.value,
            name: p.name.value.clone(),
            criticality: p.criticality.as_ref().map(|c| c.value),
            period,
            budget,
            demand: i128::from(budget) * i128::from(frame / period),
        });
    }
    for slot in &mut slots {
        slot.blocked = merge(std::mem::take(&mut slot.blocked));
    }
    let cyclic: Vec<String> = slots.iter().map(|c| c.index.to_string()).collect();
    out.report.push(format!(
        "{sname} (major frame {}): {} partition(s) to place on CYCLIC core(s) {}; {} partition(s) keep their windows",
        secs(frame),
        tasks.len(),
        if cyclic.is_empty() { "none".to_string() } else { cyclic.join(", ") },
        kept_count
    ));
    out.report.append(&mut notes);

    let jobs: i128 = tasks.iter().map(|t| i128::from(frame / t.period)).sum();
    if jobs > MAX_JOBS_PER_SCHEDULE {
        reasons.push(format!(
            "{sname}: the partitions to place have {jobs} periods in one major frame; synthesis handles at most {MAX_JOBS_PER_SCHEDULE}"
        ));
    }
    if !tasks.is_empty() && slots.is_empty() {
        reasons.push(format!("{sname}: the module has no CYCLIC core to put windows on"));
    }
    if !reasons.is_empty() {
        out.reasons.append(&mut reasons);
        push_core_assignments(s, &slots, &[], &tasks, &HashMap::new(), frame, out);
        return;
    }

    // Assignment: criticality first, then utilization, worst fit; then best fit decreasing.
    let mut by_criticality: Vec<usize> = (0..tasks.len()).collect();
    by_criticality.sort_by_key(|&t| (Reverse(tasks[t].crit()), Reverse(tasks[t].demand), tasks[t].id));
    let mut by_utilization: Vec<usize> = (0..tasks.len()).collect();
    by_utilization.sort_by_key(|&t| (Reverse(tasks[t].demand), Reverse(tasks[t].crit()), tasks[t].id));
    let mut placement = assign(&tasks, &by_criticality, &slots, Fit::Worst, frame);
    if !placement.unplaced.is_empty() {
        let second = assign(&tasks, &by_utilization, &slots, Fit::Best, frame);
        if second.unplaced.is_empty() {
            out.report.push(format!(
                "  placing by criticality left {} without a core; placed by decreasing utilization (best fit) instead",
                placement.unplaced.iter().map(|(t, _)| tasks[*t].label()).collect::<Vec<_>>().join(", ")
            ));
            placement = second;
        }
    }
    let total: i128 = tasks.iter().map(|t| t.demand).sum::<i128>() + slots.iter().map(|c| c.reserved).sum::<i128>();
    if !placement.unplaced.is_empty() && total > i128::from(frame) * slots.len() as i128 {
        out.reasons.push(format!(
            "{sname}: total utilization {} is more than the {} CYCLIC core(s) can give ({})",
            pct(share(total, frame)),
            slots.len(),
            pct(slots.len() as f64)
        ));
    }
    for (t, refusals) in &placement.unplaced {
        out.reasons.push(refusal_reason(&sname, &tasks, *t, refusals, frame));
    }

    // Tables per core.
    let mut windows_per_core: HashMap<u32, usize> = HashMap::new();
    let mut table_lines = Vec::new();
    for (pos, slot) in slots.iter().enumerate() {
        let members: Vec<usize> = (0..tasks.len()).filter(|&t| placement.core_of[t] == Some(pos)).collect();
        if members.is_empty() {
            continue;
        }
        let sim_tasks: Vec<SimTask> = members.iter().map(|&t| tasks[t].sim()).collect();
        let sim = Sim { tasks: &sim_tasks, blocked: &slot.blocked, frame };
        let plain = sim.schedule(false);
        // Avoidance keeps "EDF from here meets every deadline" true at every step, so it
        // cannot miss when plain EDF does not; the fallback only guards that reasoning.
        let table = if plain.misses.is_empty() {
            Some(sim.schedule(true)).filter(|t| t.misses.is_empty()).unwrap_or_else(|| plain.clone())
        } else {
            plain.clone()
        };
        if let Some(miss) = table.misses.first() {
            let t = &tasks[members[miss.task]];
            out.reasons.push(format!("{sname}: on core {} {}", slot.index, miss_text(t, miss, "gets")));
        }
        let mut count = 0;
        for (i, &t) in members.iter().enumerate() {
            let ws = windows_of(&table.slices, i, tasks[t].period, slot.index);
            count += ws.len();
            out.windows.insert(tasks[t].ps_span, ws);
        }
        windows_per_core.insert(slot.index, count);
        let plain_inv = count_inversions(&sim_tasks, &plain.slices);
        let table_inv = count_inversions(&sim_tasks, &table.slices);
        let mut line = format!(
            "  core {} table: {count} window(s); a partition preempting a more critical one: {table_inv} time(s) (plain EDF: {plain_inv})",
            slot.index
        );
        if let Some(at) = table.gave_up_at {
            line.push_str(&format!("; inversion avoidance stopped at {} (too many periods), plain EDF after that", secs(at)));
        }
        table_lines.push(line);
    }
    push_core_assignments(s, &slots, &placement.core_of, &tasks, &windows_per_core, frame, out);
    out.report.append(&mut table_lines);
}

/// Adds the per-core assignment lines and records of one schedule.
fn push_core_assignments(
    s: &ModuleSchedule,
    slots: &[CoreSlot],
    core_of: &[Option<usize>],
    tasks: &[Task],
    windows: &HashMap<u32, usize>,
    frame: i64,
    out: &mut Outcome,
) {
    let mut lines = Vec::new();
    for (pos, slot) in slots.iter().enumerate() {
        let mut partitions: Vec<AssignedPartition> = (0..tasks.len())
            .filter(|&t| core_of.get(t).copied().flatten() == Some(pos))
            .map(|t| AssignedPartition {
                id: tasks[t].id,
                name: tasks[t].name.clone(),
                criticality: tasks[t].criticality,
                utilization: share(tasks[t].demand, frame),
                kept: false,
            })
            .collect();
        partitions.sort_by_key(|p| (Reverse(p.criticality.map_or(-1, |c| c.rank() as i8)), p.id));
        partitions.extend(slot.kept.iter().cloned());
        // Starting from +0.0: an empty f64 sum is -0.0, which prints as "-0.00 %".
        let utilization: f64 = partitions.iter().map(|p| p.utilization).fold(0.0, |a, b| a + b);
        let list: Vec<String> = partitions
            .iter()
            .map(|p| {
                format!(
                    "{} ({}, {}) {}{}",
                    p.name,
                    p.id,
                    p.criticality.map_or("no criticality", Criticality::as_str),
                    pct(p.utilization),
                    if p.kept { " [kept windows]" } else { "" }
                )
            })
            .collect();
        lines.push(format!(
            "  core {}: utilization {}{}{}",
            slot.index,
            pct(utilization),
            if list.is_empty() { ", " } else { " - " },
            if list.is_empty() { "idle".to_string() } else { list.join(", ") }
        ));
        out.cores.push(CoreAssignment {
            schedule_id: s.id.value,
            schedule: s.name.value.clone(),
            core: slot.index,
            partitions,
            utilization,
            windows: windows.get(&slot.index).copied().unwrap_or(0),
        });
    }
    out.report.extend(lines);
}

/// Sorted, merged intervals.
fn merge(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}
