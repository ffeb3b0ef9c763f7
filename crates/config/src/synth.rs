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
    let tolerated = |d: &Diagnostic| {
        d.severity != Severity::Error || expected(d) || matches!(d.rule, Rule::FrameNotMultiple | Rule::MissingExecutable)
    };
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
    let served: HashSet<u32> =
        m.cores.iter().filter(|c| c.policy == CorePolicy::FixedPriority).flat_map(|c| c.priorities.iter().map(|p| p.partition.value)).collect();
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
        if period > 0 && frame > 0 && frame % period != 0 {
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
    for (pos, slot) in slots.iter().enumerate() {
        let members: Vec<usize> = (0..tasks.len()).filter(|&t| placement.core_of[t] == Some(pos)).collect();
        if members.is_empty() {
            continue;
        }
        let sim_tasks: Vec<SimTask> = members.iter().map(|&t| tasks[t].sim()).collect();
        let sim = Sim { tasks: &sim_tasks, blocked: &slot.blocked, frame };
        let plain = sim.schedule(false);
        let table = if plain.misses.is_empty() { sim.schedule(true) } else { plain.clone() };
        let table = if table.misses.is_empty() || !plain.misses.is_empty() { table } else { plain.clone() };
        for miss in table.misses.iter().take(1) {
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
            "  core {}: {count} window(s); criticality inversions (a partition starting while a more critical one has begun but not finished its period's budget): {table_inv}, plain EDF would have {plain_inv}",
            slot.index
        );
        if let Some(at) = table.gave_up_at {
            line.push_str(&format!("; inversion avoidance stopped at {} (too many periods), plain EDF after that", secs(at)));
        }
        out.report.push(line);
    }
    push_core_assignments(s, &slots, &placement.core_of, &tasks, &windows_per_core, frame, out);
}

/// Adds the per-core lines (before the table lines of this schedule) and the JSON records.
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
    // The assignment reads best before the tables: insert after this schedule's header/notes.
    let at = out.report.iter().rposition(|l| !l.starts_with("  core ")).map_or(0, |i| i + 1);
    let tail = out.report.split_off(at);
    out.report.extend(lines);
    out.report.extend(tail);
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
        if let Some(w) = out.last_mut() {
            if w.start + w.duration == a && w.start / period == k {
                w.duration += b - a;
                continue;
            }
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
            let inverted = tasks.iter().enumerate().any(|(h, th)| {
                th.crit > tasks[i].crit && job[h] == a / th.period && done[h] > 0 && done[h] < th.budget
            });
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
    fn schedule(&self, mut avoid: bool) -> Timeline {
        let mut s = self.start();
        let mut tl = Timeline::default();
        let mut budget = INVERSION_CHECK_STEPS;
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
    let used: HashSet<&str> = doc.descendants().filter(|n| n.is_element()).flat_map(|n| n.namespaces().filter_map(|ns| ns.name())).collect();
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
