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

use crate::diag::{Diagnostic, Rule, Severity, Span};
use crate::model::{CorePolicy, Criticality, Module, ModuleSchedule, Partition};
use crate::parse::EXT_NS;
use crate::source::LineIndex;
use crate::time::Nanos;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;

/// Partition periods in one major frame above which synthesis refuses (the table would be
/// enormous and the simulation slow); a real module has a few hundred.
const MAX_JOBS_PER_SCHEDULE: i128 = 200_000;

/// Simulation steps the criticality-inversion tests of one core may take in total; past
/// it, the rest of that core's table is plain EDF (still meeting every deadline).
const INVERSION_CHECK_STEPS: u64 = 20_000_000;

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
            out.reasons.push(format!(
                "{sname}: on core {} {} gets only {} of its {} in period {} [{}, {})",
                slot.index,
                t.label(),
                secs(miss.got),
                secs(t.budget),
                miss.period_index,
                secs(miss.period_index * t.period),
                secs((miss.period_index + 1) * t.period)
            ));
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
        let utilization: f64 = partitions.iter().map(|p| p.utilization).sum();
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
            if list.is_empty() { "" } else { " - " },
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// The core with the most remaining capacity (spreads the load).
    Worst,
    /// The core with the least remaining capacity that still fits (packs tightly).
    Best,
}

/// Why a core did not take a partition.
enum Refusal {
    Full { core: u32, load_with: i128 },
    Miss { core: u32, load_with: i128, task: usize, miss: Miss },
}

struct Placement {
    /// Position in the slots of each task's core.
    core_of: Vec<Option<usize>>,
    unplaced: Vec<(usize, Vec<Refusal>)>,
}

fn assign(tasks: &[Task], order: &[usize], slots: &[CoreSlot], fit: Fit, frame: i64) -> Placement {
    let mut load: Vec<i128> = slots.iter().map(|c| c.reserved).collect();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); slots.len()];
    let mut core_of = vec![None; tasks.len()];
    let mut unplaced = Vec::new();
    for &t in order {
        let mut candidates: Vec<usize> = (0..slots.len()).collect();
        match fit {
            Fit::Worst => candidates.sort_by_key(|&c| (load[c], slots[c].index)),
            Fit::Best => candidates.sort_by_key(|&c| (Reverse(load[c]), slots[c].index)),
        }
        let mut refusals = Vec::new();
        for c in candidates {
            let load_with = load[c] + tasks[t].demand;
            if load_with > i128::from(frame) {
                refusals.push(Refusal::Full { core: slots[c].index, load_with });
                continue;
            }
            // Without blocked time, utilization <= 1 is exact for EDF; with it, simulate.
            if !slots[c].blocked.is_empty() {
                let set: Vec<usize> = members[c].iter().copied().chain([t]).collect();
                let sim_tasks: Vec<SimTask> = set.iter().map(|&i| tasks[i].sim()).collect();
                let sim = Sim { tasks: &sim_tasks, blocked: &slots[c].blocked, frame };
                if let Some(&miss) = sim.schedule(false).misses.first() {
                    refusals.push(Refusal::Miss { core: slots[c].index, load_with, task: set[miss.task], miss });
                    continue;
                }
            }
            load[c] = load_with;
            members[c].push(t);
            core_of[t] = Some(c);
            break;
        }
        if core_of[t].is_none() {
            refusals.sort_by_key(|r| match r {
                Refusal::Full { core, .. } | Refusal::Miss { core, .. } => *core,
            });
            unplaced.push((t, refusals));
        }
    }
    Placement { core_of, unplaced }
}

fn refusal_reason(sname: &str, tasks: &[Task], t: usize, refusals: &[Refusal], frame: i64) -> String {
    let task = &tasks[t];
    let parts: Vec<String> = refusals
        .iter()
        .map(|r| match r {
            Refusal::Full { core, load_with } => format!("core {core} would be at {}", pct(share(*load_with, frame))),
            Refusal::Miss { core, load_with, task: victim, miss } => {
                let v = &tasks[*victim];
                format!(
                    "core {core} ({} with it) has room by utilization, but around its kept windows {} would get only {} of its {} in period {} [{}, {})",
                    pct(share(*load_with, frame)),
                    v.label(),
                    secs(miss.got),
                    secs(v.budget),
                    miss.period_index,
                    secs(miss.period_index * v.period),
                    secs((miss.period_index + 1) * v.period)
                )
            }
        })
        .collect();
    format!(
        "{sname}: {} ({}, utilization {}: {} every {}) fits on no CYCLIC core: {}",
        task.label(),
        task.crit_label(),
        pct(share(task.demand, frame)),
        secs(task.budget),
        secs(task.period),
        parts.join("; ")
    )
}

/// The windows of task `i` from a core's slices: contiguous runs inside one of its periods.
fn windows_of(slices: &[(i64, i64, usize)], i: usize, period: i64, core: u32) -> Vec<OutWindow> {
    let mut out: Vec<OutWindow> = Vec::new();
    let mut last_period = -1;
    for &(a, b, _) in slices.iter().filter(|s| s.2 == i) {
        let k = a / period;
        if let Some(w) = out.last_mut().filter(|w| w.start + w.duration == a && w.start / period == k) {
            w.duration += b - a;
            continue;
        }
        out.push(OutWindow { start: a, duration: b - a, period_start: k != last_period, core });
        last_period = k;
    }
    out
}

/// Times a partition starts running while a more critical partition of the same core has
/// begun its current period's budget and not finished it.
fn count_inversions(tasks: &[SimTask], slices: &[(i64, i64, usize)]) -> usize {
    let mut job = vec![-1i64; tasks.len()];
    let mut done = vec![0i64; tasks.len()];
    let mut count = 0;
    let mut previous: Option<(i64, usize)> = None;
    for &(a, b, i) in slices {
        let continues = previous == Some((a, i));
        if !continues {
            let inverted = tasks
                .iter()
                .enumerate()
                .any(|(h, th)| th.crit > tasks[i].crit && job[h] == a / th.period && done[h] > 0 && done[h] < th.budget);
            count += usize::from(inverted);
        }
        let k = a / tasks[i].period;
        if job[i] != k {
            job[i] = k;
            done[i] = 0;
        }
        done[i] += b - a;
        previous = Some((b, i));
    }
    count
}

/// A partition as the per-core simulation sees it.
#[derive(Debug, Clone, Copy)]
struct SimTask {
    period: i64,
    budget: i64,
    crit: i8,
    id: u32,
}

/// A job that did not get its budget by its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Miss {
    task: usize,
    period_index: i64,
    got: i64,
}

#[derive(Debug, Clone)]
struct State {
    t: i64,
    /// Index of the next job of each task to release; the current job is `next_k - 1`,
    /// due at `next_k * period`.
    next_k: Vec<i64>,
    /// Remaining budget of each task's current job.
    rem: Vec<i64>,
    /// First blocked interval that ends after `t`.
    bi: usize,
}

#[derive(Debug, Clone, Default)]
struct Timeline {
    /// (start, end, task) in time order; consecutive slices may belong to one run.
    slices: Vec<(i64, i64, usize)>,
    misses: Vec<Miss>,
    /// Inversion avoidance ran out of its step budget at this time.
    gave_up_at: Option<i64>,
}

/// Event-driven simulation of one core over one major frame.
struct Sim<'a> {
    tasks: &'a [SimTask],
    blocked: &'a [(i64, i64)],
    frame: i64,
}

impl Sim<'_> {
    fn start(&self) -> State {
        State { t: 0, next_k: vec![0; self.tasks.len()], rem: vec![0; self.tasks.len()], bi: 0 }
    }

    fn deadline(&self, s: &State, i: usize) -> i64 {
        s.next_k[i] * self.tasks[i].period
    }

    /// Releases every job due by `s.t`; a job still unfinished at its deadline is a miss.
    fn release(&self, s: &mut State, misses: &mut Vec<Miss>) {
        for (i, task) in self.tasks.iter().enumerate() {
            loop {
                let at = s.next_k[i] * task.period;
                if at > s.t || at >= self.frame {
                    break;
                }
                if s.next_k[i] > 0 && s.rem[i] > 0 {
                    misses.push(Miss { task: i, period_index: s.next_k[i] - 1, got: task.budget - s.rem[i] });
                }
                s.rem[i] = task.budget;
                s.next_k[i] += 1;
            }
        }
    }

    /// Releases due jobs and says until when the situation holds and whether the core is
    /// free (not inside a kept window); `None` at the end of the frame.
    fn prepare(&self, s: &mut State, misses: &mut Vec<Miss>) -> Option<(i64, bool)> {
        self.release(s, misses);
        if s.t >= self.frame {
            for (i, task) in self.tasks.iter().enumerate() {
                if s.rem[i] > 0 {
                    misses.push(Miss { task: i, period_index: s.next_k[i] - 1, got: task.budget - s.rem[i] });
                }
            }
            return None;
        }
        let next = (0..self.tasks.len()).map(|i| self.deadline(s, i)).filter(|&r| r < self.frame).min().unwrap_or(self.frame);
        while s.bi < self.blocked.len() && self.blocked[s.bi].1 <= s.t {
            s.bi += 1;
        }
        Some(match self.blocked.get(s.bi) {
            Some(&(a, b)) if a <= s.t => (b.min(next), false),
            Some(&(a, _)) => (a.min(next), true),
            None => (next, true),
        })
    }

    /// Runs `pick` (or idles) from `s.t` until `horizon` or the end of its budget.
    fn run_for(&self, s: &mut State, pick: Option<usize>, horizon: i64) -> Option<(i64, i64, usize)> {
        let Some(i) = pick else {
            s.t = horizon;
            return None;
        };
        let end = s.t.saturating_add(s.rem[i]).min(horizon);
        let slice = (s.t, end, i);
        s.rem[i] -= end - s.t;
        s.t = end;
        Some(slice)
    }

    /// Earliest deadline first; ties: higher criticality, then lower partition identifier.
    fn edf(&self, s: &State) -> Option<usize> {
        (0..self.tasks.len())
            .filter(|&i| s.rem[i] > 0)
            .min_by_key(|&i| (self.deadline(s, i), Reverse(self.tasks[i].crit), self.tasks[i].id))
    }

    /// The core's table over one frame: plain EDF, or with criticality-inversion avoidance.
    fn schedule(&self, avoid: bool) -> Timeline {
        self.schedule_within(avoid, INVERSION_CHECK_STEPS)
    }

    /// As [`Sim::schedule`], the inversion tests taking at most `budget` steps in total.
    fn schedule_within(&self, mut avoid: bool, mut budget: u64) -> Timeline {
        let mut s = self.start();
        let mut tl = Timeline::default();
        while let Some((horizon, free)) = self.prepare(&mut s, &mut tl.misses) {
            if !free {
                s.t = horizon;
                continue;
            }
            let mut pick = self.edf(&s);
            if let (true, Some(e)) = (avoid, pick) {
                match self.avoid_inversion(&s, e, &mut budget) {
                    Some(p) => pick = Some(p),
                    None => {
                        avoid = false;
                        tl.gave_up_at = Some(s.t);
                    }
                }
            }
            if let Some(slice) = self.run_for(&mut s, pick, horizon) {
                tl.slices.push(slice);
            }
        }
        tl
    }

    /// EDF picked `e`. If a more critical task has begun its current job and not finished
    /// it, keep it running when finishing that job first still lets EDF meet every deadline.
    /// `None` when the step budget ran out.
    fn avoid_inversion(&self, s: &State, e: usize, budget: &mut u64) -> Option<usize> {
        let mut candidates: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| s.rem[i] > 0 && s.rem[i] < self.tasks[i].budget && self.tasks[i].crit > self.tasks[e].crit)
            .collect();
        candidates.sort_by_key(|&i| (Reverse(self.tasks[i].crit), self.deadline(s, i), self.tasks[i].id));
        for r in candidates {
            if self.finishes_feasibly(s.clone(), r, budget)? {
                return Some(r);
            }
        }
        Some(e)
    }

    /// Whether running `pin` to the end of its current budget and then plain EDF meets every
    /// deadline. Called only from states from which some schedule meets every deadline, so
    /// reaching an instant where every released job is done settles it: nothing released
    /// later can then fare worse than in that schedule. `None` when the step budget ran out.
    fn finishes_feasibly(&self, mut s: State, pin: usize, budget: &mut u64) -> Option<bool> {
        let mut misses = Vec::new();
        let mut first = true;
        loop {
            if !first && s.rem.iter().all(|&r| r == 0) {
                return Some(true);
            }
            first = false;
            let Some((horizon, free)) = self.prepare(&mut s, &mut misses) else { return Some(misses.is_empty()) };
            if !misses.is_empty() {
                return Some(false);
            }
            *budget = budget.checked_sub(1)?;
            if !free {
                s.t = horizon;
                continue;
            }
            let pick = if s.rem[pin] > 0 { Some(pin) } else { self.edf(&s) };
            self.run_for(&mut s, pick, horizon);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Splicing the windows into the original text.

/// The qualified name of the element whose start tag begins at `at` (just after `<`).
fn qname_at(text: &str, at: usize) -> &str {
    let rest = &text[at + 1..];
    let end = rest.find(|c: char| c.is_whitespace() || c == '/' || c == '>').unwrap_or(rest.len());
    &rest[..end]
}

/// The whitespace from the start of the line to `at`, if only whitespace precedes `at` there.
fn indent_before(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..at];
    before.chars().all(|c| c == ' ' || c == '\t').then_some(before)
}

/// A prefix bound nowhere in the document, for `urn:partita:1`.
fn fresh_prefix(doc: &roxmltree::Document) -> String {
    let used: HashSet<&str> =
        doc.descendants().filter(|n| n.is_element()).flat_map(|n| n.namespaces().filter_map(|ns| ns.name())).collect();
    std::iter::once("pt".to_string()).chain((1..).map(|i| format!("pt{i}"))).find(|p| !used.contains(p.as_str())).unwrap_or_default()
}

fn splice(text: &str, doc: &roxmltree::Document, windows: &HashMap<Span, Vec<OutWindow>>) -> String {
    let lines = LineIndex::new(text);
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut added_prefix: Option<String> = None;
    for node in doc.descendants().filter(|n| n.is_element() && n.tag_name().name() == "Partition_Schedule") {
        let range = node.range();
        let Some(ws) = windows.get(&lines.span(range.start)) else { continue };
        if ws.is_empty() {
            continue;
        }
        let bound = node.namespaces().find(|ns| ns.uri() == EXT_NS && ns.name().is_some_and(|n| !n.is_empty())).and_then(|ns| ns.name());
        let ext = match bound {
            Some(p) => p.to_string(),
            None => added_prefix.get_or_insert_with(|| fresh_prefix(doc)).clone(),
        };
        let qname = qname_at(text, range.start);
        let window_name = match qname.split_once(':') {
            Some((prefix, _)) => format!("{prefix}:Window_Schedule"),
            None => "Window_Schedule".to_string(),
        };
        let indent = indent_before(text, range.start);
        let parent_indent = node.parent_element().and_then(|p| indent_before(text, p.range().start));
        let step = match (parent_indent, indent) {
            (Some(p), Some(c)) if c.len() > p.len() && c.starts_with(p) => c[p.len()..].to_string(),
            (_, Some(c)) if c.contains('\t') => "\t".to_string(),
            _ => "  ".to_string(),
        };
        let indent = indent.unwrap_or("");
        let inner = format!("{indent}{step}");
        let elements: Vec<String> = ws
            .iter()
            .enumerate()
            .map(|(i, w)| {
                format!(
                    "<{window_name} WindowIdentifier=\"{}\" WindowStartSeconds=\"{}\" WindowDurationSeconds=\"{}\" PartitionPeriodStart=\"{}\" {ext}:Core=\"{}\"/>",
                    i + 1,
                    Nanos(w.start).to_seconds_string(),
                    Nanos(w.duration).to_seconds_string(),
                    w.period_start,
                    w.core
                )
            })
            .collect();
        let element_text = &text[range.clone()];
        if element_text.ends_with("/>") {
            // <Partition_Schedule .../>  ->  <Partition_Schedule ...> windows </Partition_Schedule>
            let close = range.end - 2;
            let from = text[..close].trim_end().len().max(range.start + 1);
            let mut s = String::from(">");
            for e in &elements {
                s.push_str(&format!("{nl}{inner}{e}"));
            }
            s.push_str(&format!("{nl}{indent}</{qname}>"));
            edits.push((from, range.end, s));
        } else {
            let Some(rel) = element_text.rfind("</") else { continue };
            let close = range.start + rel;
            let line_start = text[..close].rfind('\n').map_or(0, |i| i + 1);
            let own_line = line_start > range.start && text[line_start..close].chars().all(|c| c == ' ' || c == '\t');
            let mut s = String::new();
            if own_line {
                for e in &elements {
                    s.push_str(&format!("{inner}{e}{nl}"));
                }
                edits.push((line_start, line_start, s));
            } else {
                for e in &elements {
                    s.push_str(&format!("{nl}{inner}{e}"));
                }
                s.push_str(&format!("{nl}{indent}"));
                edits.push((close, close, s));
            }
        }
    }
    if let Some(prefix) = added_prefix {
        let root = doc.root_element().range().start;
        let at = root + 1 + qname_at(text, root).len();
        edits.push((at, at, format!(" xmlns:{prefix}=\"{EXT_NS}\"")));
    }
    edits.sort_by_key(|e| Reverse(e.0));
    let mut out = text.to_string();
    for (from, to, with) in edits {
        out.replace_range(from..to, &with);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Window;

    const DIR: &str = ".";

    /// A module with `pt:Cores Cpus="0-{cores-1}"`, the given partitions (id, name, level)
    /// and the given Module_Schedule text.
    fn request(cores: u32, partitions: &[(u32, &str, &str)], schedules: &str) -> String {
        let mut s = String::from("<?xml version=\"1.0\"?>\n<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">\n");
        s.push_str(&format!("  <pt:Cores Cpus=\"0-{}\"/>\n", cores - 1));
        for (id, name, level) in partitions {
            s.push_str(&format!(
                "  <Partition PartitionIdentifier=\"{id}\" PartitionName=\"{name}\" Criticality=\"{level}\" pt:Executable=\"bin/{name}\"/>\n"
            ));
        }
        s.push_str(schedules);
        s.push_str("</ARINC_653_Module>\n");
        s
    }

    fn ps(id: u32, name: &str, period: &str, duration: &str) -> String {
        format!(
            "    <Partition_Schedule PartitionIdentifier=\"{id}\" PartitionName=\"{name}\" PeriodSeconds=\"{period}\" PeriodDurationSeconds=\"{duration}\"/>\n"
        )
    }

    fn schedule(frame: &str, body: &str) -> String {
        format!(
            "  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"{frame}\">\n{body}  </Module_Schedule>\n"
        )
    }

    fn synth(text: &str) -> Synthesis {
        match synthesize(text, Path::new(DIR)) {
            Ok(s) => s,
            Err(SynthError::NotAModule(d)) => panic!("not a module: {d:#?}"),
        }
    }

    fn errors(text: &str) -> Vec<Diagnostic> {
        crate::check_text(text, Path::new(DIR)).errors().cloned().collect()
    }

    fn assert_valid(text: &str) -> Module {
        let checked = crate::check_text(text, Path::new(DIR));
        let errors: Vec<_> = checked.errors().collect();
        assert!(errors.is_empty(), "{errors:#?}\n{text}");
        checked.module.unwrap()
    }

    /// Windows of partition `id` in the first schedule, as (start, end, core) in ns.
    fn windows(m: &Module, id: u32) -> Vec<(i64, i64, u32)> {
        let ps = m.schedules[0].partitions.iter().find(|ps| ps.partition.id.as_ref().unwrap().value == id).unwrap();
        ps.windows.iter().map(|w: &Window| (w.start.value.0, w.end().0, w.core.value)).collect()
    }

    const MS: i64 = 1_000_000;

    #[test]
    fn ofp_and_vsp_on_one_core() {
        let body = ps(1, "OFP", "0.02", "0.01125") + &ps(2, "VSP", "0.08", "0.035");
        let text = request(1, &[(1, "OFP", "LEVEL_A"), (2, "VSP", "LEVEL_D")], &schedule("0.08", &body));
        assert!(!errors(&text).is_empty(), "the request itself lacks windows");
        let out = synth(&text);
        assert!(out.schedulable, "{:#?}", out.report);
        let m = assert_valid(&out.xml);
        // 100 % load: OFP first in each of its periods, VSP in the rest.
        let ofp = windows(&m, 1);
        assert_eq!(ofp.len(), 4);
        for (k, w) in ofp.iter().enumerate() {
            let k = k as i64;
            assert_eq!(*w, (k * 20 * MS, k * 20 * MS + 11_250_000, 0));
        }
        assert_eq!(windows(&m, 2).iter().map(|w| w.1 - w.0).sum::<i64>(), 35 * MS);
        let starts: Vec<bool> = m.schedules[0].partitions[1].windows.iter().map(|w| w.period_start).collect();
        assert_eq!(starts, [true, false, false, false]);
        assert_eq!(out.cores.len(), 1);
        assert!((out.cores[0].utilization - 1.0).abs() < 1e-9);
        assert_eq!(out.cores[0].partitions.iter().map(|p| p.id).collect::<Vec<_>>(), [1, 2]);
        assert!(out.report.iter().any(|l| l.contains("verdict: schedulable")));
    }

    #[test]
    fn overloaded_set_is_not_schedulable() {
        // The seed's OFP/VSP budgets with a 12 ms OFP slot: 60 % + 43.75 % on one core.
        let body = ps(1, "OFP", "0.02", "0.012") + &ps(2, "VSP", "0.08", "0.035");
        let text = request(1, &[(1, "OFP", "LEVEL_A"), (2, "VSP", "LEVEL_D")], &schedule("0.08", &body));
        let out = synth(&text);
        assert!(!out.schedulable);
        let all = out.reasons.join("\n");
        assert!(all.contains("partition 2 \"VSP\""), "{all}");
        assert!(all.contains("103.75 %"), "{all}");
        assert!(all.contains("total utilization 103.75 %"), "{all}");
        assert!(out.report.iter().any(|l| l.contains("NOT schedulable")));
        // The more critical partition kept its core and its windows.
        let m = crate::check_text(&out.xml, Path::new(DIR)).module.unwrap();
        assert_eq!(windows(&m, 1).iter().map(|w| w.1 - w.0).sum::<i64>(), 48 * MS);
        assert!(windows(&m, 2).is_empty());
    }

    #[test]
    fn criticality_inversion_is_avoided() {
        // H (LEVEL_A) 12 ms every 40 ms; L (LEVEL_D) 2 ms every 10 ms. Plain EDF runs L at 0,
        // H from 2 ms, and at 10 ms L's earlier deadline preempts H.
        let body = ps(1, "H", "0.04", "0.012") + &ps(2, "L", "0.01", "0.002");
        let text = request(1, &[(1, "H", "LEVEL_A"), (2, "L", "LEVEL_D")], &schedule("0.04", &body));
        let tasks =
            [SimTask { period: 40 * MS, budget: 12 * MS, crit: 4, id: 1 }, SimTask { period: 10 * MS, budget: 2 * MS, crit: 0, id: 2 }];
        let sim = Sim { tasks: &tasks, blocked: &[], frame: 40 * MS };
        let plain = sim.schedule(false);
        assert!(plain.misses.is_empty());
        assert!(count_inversions(&tasks, &plain.slices) > 0, "plain EDF preempts H: {:?}", plain.slices);

        let out = synth(&text);
        assert!(out.schedulable, "{:#?}", out.report);
        let m = assert_valid(&out.xml);
        let h = windows(&m, 1);
        let l = windows(&m, 2);
        assert_eq!(h, [(2 * MS, 14 * MS, 0)]);
        assert_eq!(l.iter().map(|w| w.0).collect::<Vec<_>>(), [0, 14 * MS, 20 * MS, 30 * MS]);
        // No L window starts while H has begun and not finished its budget of its period.
        for &(start, _, _) in &l {
            let period_start = start / (40 * MS) * 40 * MS;
            let done: i64 = h.iter().map(|&(a, b, _)| (b.min(start) - a.max(period_start)).max(0)).sum();
            assert!(done == 0 || done >= 12 * MS, "L starts at {start} with H at {done}");
        }
        assert!(out.report.iter().any(|l| l.contains("preempting a more critical one: 0 time(s) (plain EDF: 1)")), "{:#?}", out.report);
    }

    #[test]
    fn inversion_is_kept_when_avoiding_it_would_miss() {
        // H needs 20 of 40 ms; letting it finish at 10 ms would make L miss its 20 ms deadline.
        let tasks =
            [SimTask { period: 40 * MS, budget: 20 * MS, crit: 4, id: 1 }, SimTask { period: 10 * MS, budget: 3 * MS, crit: 0, id: 2 }];
        let sim = Sim { tasks: &tasks, blocked: &[], frame: 40 * MS };
        let table = sim.schedule(true);
        assert!(table.misses.is_empty());
        assert!(table.slices.contains(&(10 * MS, 13 * MS, 1)), "{:?}", table.slices);
    }

    #[test]
    fn avoidance_gives_up_to_plain_edf_past_its_budget() {
        let tasks =
            [SimTask { period: 40 * MS, budget: 12 * MS, crit: 4, id: 1 }, SimTask { period: 10 * MS, budget: 2 * MS, crit: 0, id: 2 }];
        let sim = Sim { tasks: &tasks, blocked: &[], frame: 40 * MS };
        let starved = sim.schedule_within(true, 0);
        assert_eq!(starved.gave_up_at, Some(10 * MS));
        assert_eq!(starved.slices, sim.schedule(false).slices);
        assert!(sim.schedule(true).gave_up_at.is_none());
    }

    #[test]
    fn avoidance_never_causes_a_miss_at_full_load() {
        // 100 % utilization with several criticalities and blocked time.
        let tasks = [
            SimTask { period: 40 * MS, budget: 14 * MS, crit: 4, id: 1 },
            SimTask { period: 10 * MS, budget: 2 * MS, crit: 0, id: 2 },
            SimTask { period: 20 * MS, budget: 3 * MS, crit: 2, id: 3 },
        ];
        let blocked = [(5 * MS, 7 * MS), (31 * MS, 33 * MS)];
        let sim = Sim { tasks: &tasks, blocked: &blocked, frame: 40 * MS };
        let plain = sim.schedule(false);
        let table = sim.schedule(true);
        assert!(plain.misses.is_empty() && table.misses.is_empty());
        assert!(count_inversions(&tasks, &table.slices) <= count_inversions(&tasks, &plain.slices));
        for &(a, b, _) in &table.slices {
            assert!(blocked.iter().all(|&(x, y)| b <= x || a >= y), "slice [{a}, {b}) in blocked time");
        }
    }

    #[test]
    fn self_closing_elements_comments_and_layout_survive() {
        let text = "<?xml version=\"1.0\"?>\n<!-- head comment -->\n<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">\n\
            \t<Partition PartitionIdentifier=\"1\" PartitionName=\"A\" Criticality=\"LEVEL_B\" pt:Executable=\"a\"/>\n\
            \t<Partition PartitionIdentifier=\"2\" PartitionName=\"B\" Criticality=\"LEVEL_C\" pt:Executable=\"b\"/>\n\
            \t<Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"0.02\">\n\
            \t\t<!-- keep me -->\n\
            \t\t<Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.004\" />\n\
            \t\t<Partition_Schedule PartitionIdentifier=\"2\" PeriodSeconds=\"0.02\" PeriodDurationSeconds=\"0.005\">\n\
            \t\t\t<!-- B's comment -->\n\
            \t\t</Partition_Schedule>\n\
            \t</Module_Schedule>\n</ARINC_653_Module>\n";
        let out = synth(text);
        assert!(out.schedulable, "{:#?}", out.report);
        let m = assert_valid(&out.xml);
        for kept in [
            "<!-- head comment -->",
            "\t\t<!-- keep me -->\n",
            "\t\t\t<!-- B's comment -->\n",
            "\t</Module_Schedule>\n</ARINC_653_Module>\n",
        ] {
            assert!(out.xml.contains(kept), "{kept:?} lost:\n{}", out.xml);
        }
        assert!(out.xml.contains(
            "\t\t<Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.004\">\n\t\t\t<Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0\" WindowDurationSeconds=\"0.004\" PartitionPeriodStart=\"true\" pt:Core=\"0\"/>\n"
        ), "{}", out.xml);
        assert!(out.xml.contains("PartitionPeriodStart=\"true\" pt:Core=\"0\"/>\n\t\t</Partition_Schedule>\n\t\t<Partition_Schedule PartitionIdentifier=\"2\""), "{}", out.xml);
        assert!(out.xml.contains("\t\t\t<!-- B's comment -->\n\t\t\t<Window_Schedule WindowIdentifier=\"1\""), "{}", out.xml);
        assert_eq!(windows(&m, 1).len(), 2);
        assert_eq!(windows(&m, 2), [(4 * MS, 9 * MS, 0)]);
        // Everything but the inserted windows and closing tags is the request, byte for byte.
        let stripped: String = out
            .xml
            .lines()
            .filter(|l| !l.contains("<Window_Schedule") && l.trim() != "</Partition_Schedule>")
            .map(|l| l.replace("PeriodDurationSeconds=\"0.004\">", "PeriodDurationSeconds=\"0.004\" />") + "\n")
            .collect();
        let original: String = text.lines().filter(|l| l.trim() != "</Partition_Schedule>").map(|l| format!("{l}\n")).collect();
        assert_eq!(stripped, original);
    }

    #[test]
    fn crlf_and_inline_elements() {
        let text = "<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">\r\n  <Partition PartitionIdentifier=\"1\" PartitionName=\"A\" pt:Executable=\"a\"/>\r\n  <Module_Schedule MajorFrameSeconds=\"0.01\"><Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.001\"></Partition_Schedule></Module_Schedule>\r\n</ARINC_653_Module>\r\n";
        let out = synth(text);
        assert!(out.schedulable, "{:#?}", out.report);
        assert_valid(&out.xml);
        assert!(!out.xml.replace("\r\n", "").contains('\n'), "only CRLF line ends: {:?}", out.xml);
    }

    #[test]
    fn a_document_without_the_extension_prefix_gets_one() {
        let text = "<ARINC_653_Module ModuleName=\"M\">\n  <Partition PartitionIdentifier=\"1\" PartitionName=\"A\"/>\n  <Module_Schedule MajorFrameSeconds=\"0.01\">\n    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.002\"/>\n  </Module_Schedule>\n</ARINC_653_Module>\n";
        let out = synth(text);
        assert!(out.schedulable, "{:#?}", out.report);
        assert!(out.xml.starts_with("<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">"), "{}", out.xml);
        assert!(out.xml.contains("pt:Core=\"0\"/>"));
        assert!(out.report.iter().any(|l| l.contains("no pt:Executable")), "{:#?}", out.report);
        // Only the missing executable is left to fix.
        let errs = errors(&out.xml);
        assert!(!errs.is_empty() && errs.iter().all(|d| d.rule == Rule::MissingExecutable), "{errs:#?}");
        let m = crate::check_text(&out.xml, Path::new(DIR)).module.unwrap();
        assert_eq!(windows(&m, 1), [(0, 2 * MS, 0)]);
    }

    #[test]
    fn a_taken_pt_prefix_is_not_reused() {
        let text = "<ARINC_653_Module xmlns:pt=\"urn:other\" ModuleName=\"M\">\n  <Partition PartitionIdentifier=\"1\" PartitionName=\"A\"/>\n  <Module_Schedule MajorFrameSeconds=\"0.01\">\n    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.002\"/>\n  </Module_Schedule>\n</ARINC_653_Module>\n";
        let out = synth(text);
        assert!(out.xml.starts_with("<ARINC_653_Module xmlns:pt1=\"urn:partita:1\" xmlns:pt=\"urn:other\""), "{}", out.xml);
        assert!(out.xml.contains("pt1:Core=\"0\"/>"));
        assert!(errors(&out.xml).iter().all(|d| d.rule == Rule::MissingExecutable));
    }

    #[test]
    fn the_bound_prefix_and_element_prefix_are_used() {
        let text = "<a:ARINC_653_Module xmlns:a=\"urn:arinc\" xmlns:partita=\"urn:partita:1\" ModuleName=\"M\">\n  <partita:Cores Cpus=\"0-1\"/>\n  <a:Partition PartitionIdentifier=\"1\" PartitionName=\"A\" partita:Executable=\"a\"/>\n  <a:Module_Schedule MajorFrameSeconds=\"0.01\">\n    <a:Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.002\"/>\n  </a:Module_Schedule>\n</a:ARINC_653_Module>\n";
        let out = synth(text);
        assert!(out.schedulable, "{:#?}", out.report);
        assert!(out.xml.contains("<a:Window_Schedule WindowIdentifier=\"1\""), "{}", out.xml);
        assert!(out.xml.contains("partita:Core=\"0\"/>\n    </a:Partition_Schedule>"), "{}", out.xml);
        assert!(!out.xml.contains("xmlns:pt"));
        assert_valid(&out.xml);
    }

    #[test]
    fn two_cores_share_the_load() {
        let body = ps(1, "A", "0.01", "0.004") + &ps(2, "B", "0.02", "0.008") + &ps(3, "C", "0.01", "0.004") + &ps(4, "D", "0.02", "0.008");
        let text =
            request(2, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B"), (3, "C", "LEVEL_C"), (4, "D", "LEVEL_D")], &schedule("0.02", &body));
        let out = synth(&text);
        assert!(out.schedulable, "{:#?}", out.report);
        let m = assert_valid(&out.xml);
        assert_eq!(out.cores.len(), 2);
        for core in &out.cores {
            assert_eq!(core.partitions.len(), 2, "{:#?}", out.cores);
            assert!((core.utilization - 0.8).abs() < 1e-9);
        }
        // The two most critical partitions are on different cores.
        let core_of = |id| windows(&m, id)[0].2;
        assert_ne!(core_of(1), core_of(2));
        let mut used: Vec<u32> = (1..=4).map(core_of).collect();
        used.sort_unstable();
        assert_eq!(used, [0, 0, 1, 1]);
        let json = serde_json::to_string(&out.cores).unwrap();
        assert!(json.contains("\"criticality\":\"LEVEL_A\""), "{json}");
    }

    #[test]
    fn best_fit_is_tried_when_criticality_order_leaves_a_partition_out() {
        // Worst fit by criticality puts A and B (50 % each) on different cores; C (100 %) then
        // fits nowhere. Packing by utilization puts C alone and A with B.
        let body = ps(1, "A", "0.01", "0.005") + &ps(2, "B", "0.01", "0.005") + &ps(3, "C", "0.01", "0.01");
        let text = request(2, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B"), (3, "C", "LEVEL_C")], &schedule("0.01", &body));
        let out = synth(&text);
        assert!(out.schedulable, "{:#?}", out.report);
        assert_valid(&out.xml);
        assert!(out.report.iter().any(|l| l.contains("best fit")), "{:#?}", out.report);
    }

    #[test]
    fn kept_windows_are_reserved() {
        let body = "    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.003\">\n      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0.002\" WindowDurationSeconds=\"0.003\" PartitionPeriodStart=\"true\"/>\n    </Partition_Schedule>\n".to_string()
            + &ps(2, "B", "0.005", "0.002")
            + &ps(3, "C", "0.01", "0.001");
        let text = request(1, &[(1, "A", "LEVEL_C"), (2, "B", "LEVEL_A"), (3, "C", "LEVEL_B")], &schedule("0.01", &body));
        let out = synth(&text);
        assert!(out.schedulable, "{:#?}", out.report);
        let m = assert_valid(&out.xml);
        assert_eq!(windows(&m, 1), [(2 * MS, 5 * MS, 0)]);
        for id in [2, 3] {
            for (a, b, _) in windows(&m, id) {
                assert!(b <= 2 * MS || a >= 5 * MS, "partition {id} window [{a}, {b}) in kept time");
            }
        }
        assert!(out.cores[0].partitions.iter().any(|p| p.kept && p.id == 1));
        assert!((out.cores[0].utilization - 0.8).abs() < 1e-9, "{:#?}", out.cores);
    }

    #[test]
    fn kept_windows_in_the_way_are_a_reason() {
        // 60 % fits by utilization, but the kept window [0, 4) ms leaves B 1 ms before its 5 ms deadline.
        let body = "    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.004\">\n      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0\" WindowDurationSeconds=\"0.004\" PartitionPeriodStart=\"true\"/>\n    </Partition_Schedule>\n".to_string()
            + &ps(2, "B", "0.005", "0.002");
        let text = request(1, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B")], &schedule("0.01", &body));
        let out = synth(&text);
        assert!(!out.schedulable);
        let all = out.reasons.join("\n");
        assert!(all.contains("kept windows") && all.contains("period 0 [0 s, 0.005 s)") && all.contains("only 0.001 s"), "{all}");
    }

    #[test]
    fn a_frame_that_is_not_a_multiple_is_a_verdict() {
        let body = ps(1, "A", "0.03", "0.001") + &ps(2, "B", "0.02", "0.001");
        let text = request(1, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B")], &schedule("0.04", &body));
        let out = synth(&text);
        assert!(!out.schedulable);
        assert!(out.reasons[0].contains("not a multiple of PeriodSeconds 0.03 of partition 1 \"A\""), "{:#?}", out.reasons);
        assert_eq!(out.xml, text);
    }

    #[test]
    fn unusable_requests_are_errors() {
        let SynthError::NotAModule(d) = synthesize("<ARINC_653_Module><oops></ARINC_653_Module>", Path::new(DIR)).unwrap_err();
        assert_eq!(d[0].rule, Rule::XmlMalformed);
        let body = ps(9, "Z", "0.01", "0.001");
        let text = request(1, &[(1, "A", "LEVEL_A")], &schedule("0.01", &body));
        let SynthError::NotAModule(d) = synthesize(&text, Path::new(DIR)).unwrap_err();
        assert!(d.iter().any(|d| d.rule == Rule::UnknownReference), "{d:#?}");
        assert!(d.iter().all(|d| d.rule != Rule::PeriodNotCovered));
    }

    #[test]
    fn fixed_priority_cores_and_empty_budgets_get_no_windows() {
        let text = "<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">\n  <pt:Cores Cpus=\"0-1\">\n    <pt:Core Id=\"0\" Policy=\"FIXED_PRIORITY\"><pt:Partition_Priority PartitionIdentifier=\"3\" Priority=\"1\"/></pt:Core>\n  </pt:Cores>\n  <Partition PartitionIdentifier=\"1\" PartitionName=\"A\" pt:Executable=\"a\"/>\n  <Partition PartitionIdentifier=\"2\" PartitionName=\"B\" pt:Executable=\"b\"/>\n  <Partition PartitionIdentifier=\"3\" PartitionName=\"C\" pt:Executable=\"c\"/>\n  <Module_Schedule MajorFrameSeconds=\"0.01\">\n    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.006\"/>\n    <Partition_Schedule PartitionIdentifier=\"2\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0\"/>\n    <Partition_Schedule PartitionIdentifier=\"3\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.005\"/>\n  </Module_Schedule>\n</ARINC_653_Module>\n";
        let out = synth(text);
        assert!(out.schedulable, "{:#?}", out.report);
        let m = assert_valid(&out.xml);
        assert_eq!(windows(&m, 1), [(0, 6 * MS, 1)]);
        assert!(windows(&m, 2).is_empty());
        assert!(windows(&m, 3).is_empty());
        assert_eq!(out.cores.iter().map(|c| c.core).collect::<Vec<_>>(), [1]);
        assert!(out.xml.contains("PeriodDurationSeconds=\"0\"/>"), "untouched");
    }

    #[test]
    fn every_schedule_is_synthesized() {
        let one = ps(1, "A", "0.01", "0.002") + &ps(2, "B", "0.02", "0.01");
        let two = ps(1, "A", "0.05", "0.01") + &ps(2, "B", "0.05", "0.04");
        let schedules = schedule("0.02", &one)
            + &schedule("0.05", &two).replace("ScheduleIdentifier=\"1\" ScheduleName=\"s\"", "ScheduleIdentifier=\"2\" ScheduleName=\"t\"");
        let text = request(1, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B")], &schedules);
        let out = synth(&text);
        assert!(out.schedulable, "{:#?}", out.report);
        let m = assert_valid(&out.xml);
        assert_eq!(m.schedules[1].partitions[1].windows.len(), 1);
        assert_eq!(out.cores.iter().map(|c| c.schedule_id).collect::<Vec<_>>(), [1, 2]);
        // Synthesizing the result again changes nothing.
        let again = synth(&out.xml);
        assert!(again.schedulable);
        assert_eq!(again.xml, out.xml);
    }

    #[test]
    fn windows_split_at_period_boundaries() {
        let slices = [(0, 5, 0), (5, 10, 0), (10, 12, 0), (15, 20, 0)];
        let ws = windows_of(&slices, 0, 10, 2);
        assert_eq!(
            ws,
            [
                OutWindow { start: 0, duration: 10, period_start: true, core: 2 },
                OutWindow { start: 10, duration: 2, period_start: true, core: 2 },
                OutWindow { start: 15, duration: 5, period_start: false, core: 2 },
            ]
        );
    }
}
