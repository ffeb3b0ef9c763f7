//! `faults`: the fault campaign (issue 10, Deliver 8). Every error code is injected
//! (`partita run --inject`) 1,002 times (`--quick`: 9), a third into each of three partitions
//! that are NORMAL, restarting (COLD_START / WARM_START) or IDLE when it arrives, while a partition
//! switches the module schedule every 5 frames; each injected error must be decided with the
//! action its HM table configures for the partition's state and touch no other partition. The
//! other partitions' window-start lateness and their own GET_TIME samples are compared with a
//! fault-free run of the same module in the same invocation.

use super::partition_programs::{arg, run_one};
use super::soak::CODES;
use super::soak_check::{ChunkedCheck, Plan, PlannedWindow, SampleCheck};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::machine_lock;
use crate::module_run::{Launch, Watcher, run_watched};
use crate::module_xml::{ModuleXml, Scheduled};
use crate::workload::Workload;
use partita_apex::{ScheduleId, get_partition_status, get_time, periodic_wait, set_module_schedule};
use partita_trace::Event;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};

pub struct Faults;

const MAF_NS: i64 = 20_000_000;

/// (name, workload, args, core, window start ms, end ms). Both schedules have these windows
/// (a switch changes nothing the checks see, yet goes through the whole schedule change).
const PARTITIONS: [(&str, &str, &str, u32, i64, i64); 8] = [
    ("TimeA", "soak-time", "", 0, 0, 7),
    ("Switcher", "switcher", "5", 0, 7, 9),
    ("TargetN", "soak-target", "", 0, 9, 12),
    ("TimeC", "soak-time", "", 0, 12, 19),
    ("TimeB", "soak-time", "", 1, 0, 6),
    ("TargetR", "fault-restarter", "25", 1, 6, 11),
    ("TargetI", "soak-target", "", 1, 11, 14),
    ("TimeD", "soak-time", "", 1, 14, 19),
];

const TIME: [&str; 4] = ["TimeA", "TimeB", "TimeC", "TimeD"];
const TARGETS: [&str; 3] = ["TargetN", "TargetR", "TargetI"];

/// The configured (level, action) of `code` for `partition` in system state `state` (1:
/// initialization, COLD_START / WARM_START / IDLE; 2: NORMAL). The module's tables are written
/// from this and the run is checked against it. Every code is PARTITION level except
/// POWER_FAILURE (MODULE, IGNORE): injected PROCESS-level errors wait in the partition's runtime
/// until its next window, one per code, and a restart drops them, so they could not be counted
/// one by one (docs/bench.md).
pub fn configured(partition: &str, state: u32, code: &str) -> (&'static str, &'static str) {
    if code == "POWER_FAILURE" {
        return ("MODULE", "IGNORE");
    }
    let i = CODES.iter().position(|c| *c == code).unwrap_or(0);
    let action = match (partition, state) {
        ("TargetR", 2) if i % 2 == 0 => "COLD_START",
        ("TargetR", 2) => "WARM_START",
        ("TargetI", 2) => "IDLE",
        _ => "IGNORE",
    };
    ("PARTITION", action)
}

fn id(name: &str) -> usize {
    PARTITIONS.iter().position(|p| p.0 == name).map_or(0, |i| i + 1)
}

fn hm_tables() -> String {
    let states = |body: &dyn Fn(u32) -> String| -> String {
        [1, 2].iter().map(|s| format!("    <System_State_Entry SystemState=\"{s}\">\n{}    </System_State_Entry>\n", body(*s))).collect()
    };
    let levels = |_| -> String {
        CODES
            .iter()
            .enumerate()
            .map(|(i, c)| {
                format!(
                    "      <Error_ID_Level ErrorIdentifier=\"{}\" ErrorLevel=\"{}\" ErrorCode=\"{c}\"/>\n",
                    i + 1,
                    configured("", 2, c).0
                )
            })
            .collect()
    };
    let mut x = format!("  <System_HM_Table>\n{}  </System_HM_Table>\n", states(&levels));
    x += &format!(
        "  <Module_HM_Table>\n{}  </Module_HM_Table>\n",
        states(&|_| format!("      <Error_ID_Action ErrorIdentifier=\"{}\" Action=\"IGNORE\"/>\n", CODES.len()))
    );
    // Switcher misses deadlines when its windows come late; it must go on switching (the
    // default for a PARTITION-level error without an entry is IDLE).
    for t in TARGETS.iter().copied().chain(["Switcher"]) {
        let body = |s: u32| -> String {
            CODES[..CODES.len() - 1]
                .iter()
                .enumerate()
                .map(|(i, c)| format!("      <Error_ID_Action ErrorIdentifier=\"{}\" Action=\"{}\"/>\n", i + 1, configured(t, s, c).1))
                .collect()
        };
        x += &format!(
            "  <Partition_HM_Table PartitionIdentifier=\"{}\" PartitionName=\"{t}\">\n{}  </Partition_HM_Table>\n",
            id(t),
            states(&body)
        );
    }
    x
}

pub fn module_xml(programs: &crate::workload::Programs) -> String {
    let mut m = ModuleXml::new("Faults", "0-1");
    m.raw(&hm_tables());
    for (i, (name, workload, args, ..)) in PARTITIONS.iter().enumerate() {
        let args: Vec<&str> = args.split_whitespace().collect();
        m.partition(i as u32 + 1, name, &programs.xml_attributes(workload, &args), "");
    }
    for schedule in [1, 2] {
        let scheduled: Vec<Scheduled> = PARTITIONS
            .iter()
            .enumerate()
            .map(|(i, (name, _, _, core, a, b))| {
                let mut s = Scheduled::one_window(i as u32 + 1, MAF_NS, a * 1_000_000, (b - a) * 1_000_000, *core);
                if *name == "Switcher" {
                    s.attributes = " SetModuleSchedule=\"true\"".into();
                }
                s
            })
            .collect();
        m.schedule(schedule, &format!("s{schedule}"), MAF_NS, schedule == 1, &scheduled);
    }
    m.finish()
}

pub fn plan() -> Plan {
    Plan {
        major_frame_ns: MAF_NS,
        windows: PARTITIONS
            .iter()
            .map(|(name, _, _, core, a, b)| PlannedWindow {
                partition: name.to_string(),
                core: *core,
                start_ns: a * 1_000_000,
                end_ns: b * 1_000_000,
            })
            .collect(),
    }
}

/// `--inject` arguments: `per_code` errors of every code into every target, one every
/// `every_ms` from 2 s on, targets and codes in turn. Returns them with (target, code) counts.
pub fn injections(per_code: u64, every_ms: u64) -> (Vec<String>, BTreeMap<(String, String), u64>) {
    let mut counts = BTreeMap::new();
    let n = per_code * (CODES.len() * TARGETS.len()) as u64;
    let list = (0..n)
        .map(|k| {
            let t = TARGETS[(k % TARGETS.len() as u64) as usize];
            let c = CODES[((k / TARGETS.len() as u64) % CODES.len() as u64) as usize];
            *counts.entry((t.to_string(), c.to_string())).or_default() += 1;
            format!("{t}:{c}@{}ms", 2000 + k * every_ms)
        })
        .collect();
    (list, counts)
}

/// What the trace and the time partitions' output showed.
#[derive(Default)]
pub struct Campaign {
    names: BTreeMap<u32, String>,
    /// Mode per partition as the trace last said (a partition's own NORMAL arrives late).
    mode: BTreeMap<String, String>,
    /// TargetR: a restart decided and not carried out yet or its initialization not ended.
    restarting: bool,
    last_schedule_change: Option<i64>,
    /// Injected errors seen, by (partition, code).
    pub seen: BTreeMap<(String, String), u64>,
    /// Injected errors seen, by (code, mode the trace gave).
    pub by_mode: BTreeMap<(String, String), u64>,
    pub wrong_action: u64,
    pub during_restart: u64,
    pub near_schedule_change: u64,
    /// Injected errors within a frame after a schedule change, counted once the next comes.
    pending_near: Vec<i64>,
    pub schedule_changes: u64,
    pub hm_others: u64,
    pub deadline_missed_others: u64,
    pub first_others: Vec<String>,
    pub mode_changes_others: u64,
    pub exits_others: u64,
    pub restarts: BTreeMap<String, u64>,
    pub lateness: BTreeMap<u32, Vec<f64>>,
    pub samples: BTreeMap<String, SampleCheck>,
    pub first_wrong: Vec<String>,
}

impl Campaign {
    fn name(&self, id: u32) -> String {
        self.names.get(&id).cloned().unwrap_or_else(|| format!("partition {id}"))
    }

    pub fn line(&mut self, plan: &Plan, line: &str) {
        if let Some((name, rest)) = line.strip_prefix('[').and_then(|l| l.split_once("] "))
            && let Some(r) = rest.strip_prefix("ran ")
        {
            self.samples.entry(name.to_string()).or_default().ran(plan, name, r);
        }
    }

    pub fn feed(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::ModuleStart { partitions, .. } => self.names.extend(partitions.iter().map(|p| (p.id, p.name.clone()))),
                Event::WindowStart { t, core, partition, planned, .. } if !TARGETS.contains(&self.name(*partition).as_str()) => {
                    self.lateness.entry(*core).or_default().push((t - planned) as f64);
                }
                Event::ScheduleChange { t, .. } => {
                    self.schedule_changes += 1;
                    self.near_schedule_change += self.pending_near.drain(..).filter(|i| t - i <= MAF_NS).count() as u64;
                    self.last_schedule_change = Some(*t);
                }
                Event::ModeChange { partition, to, .. } => {
                    let name = self.name(*partition);
                    if name == "TargetR" && to == "NORMAL" {
                        self.restarting = false;
                    }
                    if !TARGETS.contains(&name.as_str()) && to != "NORMAL" {
                        self.mode_changes_others += 1;
                    }
                    self.mode.insert(name, to.clone());
                }
                Event::PartitionRestart { partition, .. } => *self.restarts.entry(self.name(*partition)).or_default() += 1,
                Event::PartitionExit { partition, .. } if !TARGETS.contains(&self.name(*partition).as_str()) => self.exits_others += 1,
                Event::HmEvent { t, partition, code, level, action, source, .. } => {
                    let name = self.name(*partition);
                    if !TARGETS.contains(&name.as_str()) {
                        // A deadline miss is time lost (a late window), reported with the
                        // lateness; any other error of a partition nobody injected is a leak.
                        if code == "DEADLINE_MISSED" {
                            self.deadline_missed_others += 1;
                        } else {
                            self.hm_others += 1;
                        }
                        if self.first_others.len() < 5 {
                            self.first_others.push(format!("{name} {code} {level} {action} ({source}) at {t} ns"));
                        }
                        continue;
                    }
                    if source != "injected" {
                        continue;
                    }
                    *self.seen.entry((name.clone(), code.clone())).or_default() += 1;
                    let mode = self.mode.get(&name).cloned().unwrap_or_else(|| "COLD_START".into());
                    let mode_key =
                        if name == "TargetR" && self.restarting && mode == "NORMAL" { "NORMAL, restart pending" } else { mode.as_str() };
                    *self.by_mode.entry((code.clone(), mode_key.to_string())).or_default() += 1;
                    // The trace's NORMAL is certain (the module itself traces every later
                    // change); its COLD_START / WARM_START may already be NORMAL in the partition.
                    let states: &[u32] = match mode.as_str() {
                        "NORMAL" => &[2],
                        "IDLE" => &[1],
                        _ => &[1, 2],
                    };
                    if !states.iter().any(|&s| configured(&name, s, code) == (level.as_str(), action.as_str())) {
                        self.wrong_action += 1;
                        if self.first_wrong.len() < 5 {
                            self.first_wrong.push(format!("{name} {code} in {mode}: {level} {action}"));
                        }
                    }
                    if name == "TargetR" {
                        self.during_restart += self.restarting as u64;
                        if matches!(action.as_str(), "COLD_START" | "WARM_START") {
                            self.restarting = true;
                        }
                    }
                    if self.last_schedule_change.is_some_and(|c| t - c <= MAF_NS) {
                        self.near_schedule_change += 1;
                    } else {
                        self.pending_near.push(*t);
                    }
                }
                _ => {}
            }
        }
    }
}

struct FaultWatch {
    plan: Plan,
    c: Campaign,
    chunks: ChunkedCheck,
}

impl Watcher for FaultWatch {
    fn line(&mut self, line: &str) {
        self.c.line(&self.plan, line);
    }
    fn events(&mut self, events: &[Event]) {
        self.c.feed(events);
        self.chunks.feed(events);
        self.chunks.check(false);
    }
}

/// Runs the module once (with or without injections) and gathers its campaign figures.
fn one_run(ctx: &RunContext, secs: u64, inject: &[String], tag: &str) -> Result<(Campaign, ChunkedCheck, bool), String> {
    let config = ctx.scratch.join(format!("{tag}.xml"));
    std::fs::write(&config, module_xml(ctx.programs)).map_err(|e| format!("{}: {e}", config.display()))?;
    let trace = ctx.scratch.join(format!("{tag}.trace"));
    let extra: Vec<String> = inject.iter().flat_map(|j| ["--inject".to_string(), j.clone()]).collect();
    let mut w = FaultWatch { plan: plan(), c: Campaign::default(), chunks: ChunkedCheck::new(3 * MAF_NS) };
    let ended = run_watched(&Launch::for_duration(&ctx.programs.exe, &config, secs, &trace, &extra), &mut w)?;
    let FaultWatch { c, mut chunks, .. } = w;
    chunks.check(true);
    if ended.overran || !ended.success {
        return Err(format!("partita run ({tag}) did not end cleanly at --duration {secs}s:\n{}", ended.stderr_tail));
    }
    Ok((c, chunks, true))
}

impl Experiment for Faults {
    fn name(&self) -> &'static str {
        "faults"
    }
    fn reproduces(&self) -> &'static str {
        "issue 10 Deliver 8 (no paper: a fault-injection campaign)"
    }
    fn description(&self) -> &'static str {
        "Two runs of one 2-core module (20 ms frame): fault-free, then with every error code injected per_code times into each \
         of TargetN (stays NORMAL: IGNORE), TargetR (restarted COLD_START or WARM_START from NORMAL, IGNORE during its 25 ms \
         initialization) and TargetI (IDLE at its first error, then IDLE), one every inject_every_ms, while Switcher asks for the \
         other schedule every 5 frames. From the trace: every injected error seen once with the configured level and action for \
         the partition's state (wrong_action, unseen), by the mode it found (by_mode_*), during a restart and within a frame of a \
         schedule change; no HM event, mode change or exit of any other partition. The four time partitions' own GET_TIME \
         intervals against their windows and the window-start lateness of the non-target partitions per core, in both runs."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    /// Minutes in full (like `soak`): only by name.
    fn in_all(&self) -> bool {
        false
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        // per_code is per target: 334 x 3 targets = 1,002 errors of each code in the full run.
        let (per_code, every) = if quick { (3, 40) } else { (334, 8) };
        vec![params([("per_code", per_code.into()), ("inject_every_ms", every.into())])]
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let per_code = p["per_code"].as_u64().unwrap_or(3).max(1);
        let every = p["inject_every_ms"].as_u64().unwrap_or(40).max(1);
        if !crate::machine::privileged() {
            return Err("running a module needs root (cgroups, real-time priorities)".into());
        }
        if super::c_workloads::cpus() < 2 {
            ctx.note("needs 2 CPUs: skipped");
            return Ok(());
        }
        let (inject, injected) = injections(per_code, every);
        // The injections end at 2 s + n * every; the run goes on 2 s longer.
        let secs = (2000 + inject.len() as u64 * every).div_ceil(1000) + 2;
        let _machine = machine_lock()?;
        ctx.progress("fault-free run");
        let (base, base_chunks, _) = one_run(ctx, secs, &[], "baseline")?;
        ctx.progress("injected run");
        let (run, chunks, _) = one_run(ctx, secs, &inject, "faults")?;
        record(ctx, &injected, &base, &base_chunks, "baseline_");
        record(ctx, &injected, &run, &chunks, "");
        compare_lateness(ctx, &base, &run, secs);
        for w in &run.first_wrong {
            ctx.note(format!("wrong action: {w}"));
        }
        Ok(())
    }
}

/// Whether the faults changed the other partitions' window-start lateness, judged against the
/// fault-free run's own variation (this VM's host stalls move a run's p99 by tens of
/// microseconds from one 10-s stretch to the next, so one p99 against another says nothing):
/// per core, `lateness_p99_excess_coreN_ns` is the faulted run's p99 minus the fault-free run's,
/// and `lateness_changed_coreN` is 1 when the faulted run's p99 is above the worst p99 of the
/// fault-free run's 10-s segments (noted, with both figures).
fn compare_lateness(ctx: &mut RunContext, base: &Campaign, run: &Campaign, secs: u64) {
    for (core, with) in &run.lateness {
        let Some(without) = base.lateness.get(core) else { continue };
        let (Some(p_with), Some(p_without)) = (p99(with), p99(without)) else { continue };
        let noise = segment_p99s(without, secs, 10).into_iter().fold(p_without, f64::max);
        ctx.sample(&format!("lateness_p99_excess_core{core}_ns"), Unit::Ns, p_with - p_without);
        ctx.sample(&format!("lateness_p99_noise_core{core}_ns"), Unit::Ns, noise);
        let changed = p_with > noise;
        ctx.sample(&format!("lateness_changed_core{core}"), Unit::Count, f64::from(u8::from(changed)));
        if changed {
            ctx.note(format!(
                "core {core}: window-start lateness p99 with faults {:.1} us, beyond the fault-free run's worst 10-s p99 {:.1} us",
                p_with / 1e3,
                noise / 1e3
            ));
        }
    }
}

fn p99(v: &[f64]) -> Option<f64> {
    let mut sorted = v.to_vec();
    sorted.sort_by(f64::total_cmp);
    crate::stats::percentile(&sorted, 99.0)
}

/// The p99 of each `every`-second stretch of `v`, samples in time order over `secs` seconds.
fn segment_p99s(v: &[f64], secs: u64, every: u64) -> Vec<f64> {
    let per = (v.len() as u64 * every).div_ceil(secs.max(1)).max(1) as usize;
    v.chunks(per).filter_map(p99).collect()
}

fn record(ctx: &mut RunContext, injected: &BTreeMap<(String, String), u64>, c: &Campaign, chunks: &ChunkedCheck, prefix: &str) {
    let m = |name: &str| format!("{prefix}{name}");
    for (core, v) in &c.lateness {
        ctx.samples(&m(&format!("lateness_core{core}_ns")), Unit::Ns, v.iter().copied());
    }
    let (checked, outside) = TIME.iter().filter_map(|t| c.samples.get(*t)).fold((0, 0), |(a, b), s| (a + s.intervals, b + s.outside));
    ctx.sample(&m("samples_checked"), Unit::Count, checked as f64);
    ctx.sample(&m("samples_outside"), Unit::Count, outside as f64);
    ctx.sample(&m("overlaps"), Unit::Count, chunks.overlaps as f64);
    ctx.sample(&m("hm_others"), Unit::Count, c.hm_others as f64);
    ctx.sample(&m("deadline_missed_others"), Unit::Count, c.deadline_missed_others as f64);
    for o in &c.first_others {
        ctx.note(format!("{prefix}HM event of a partition not injected: {o}"));
    }
    ctx.sample(&m("mode_changes_others"), Unit::Count, c.mode_changes_others as f64);
    ctx.sample(&m("exits_others"), Unit::Count, c.exits_others as f64);
    ctx.sample(&m("schedule_changes"), Unit::Count, c.schedule_changes as f64);
    let restarts_others: u64 = c.restarts.iter().filter(|(n, _)| n.as_str() != "TargetR").map(|(_, v)| v).sum();
    ctx.sample(&m("restarts_others"), Unit::Count, restarts_others as f64);
    if !prefix.is_empty() {
        return;
    }
    let total: u64 = injected.values().sum();
    let (mut unseen, mut extra) = (0u64, 0u64);
    for (k, n) in injected {
        let s = c.seen.get(k).copied().unwrap_or(0);
        unseen += n.saturating_sub(s);
        extra += s.saturating_sub(*n);
    }
    extra += c.seen.iter().filter(|(k, _)| !injected.contains_key(*k)).map(|(_, n)| n).sum::<u64>();
    ctx.sample("injected", Unit::Count, total as f64);
    ctx.sample("injected_seen", Unit::Count, c.seen.values().sum::<u64>() as f64);
    ctx.sample("injected_unseen", Unit::Count, unseen as f64);
    ctx.sample("hm_unexpected", Unit::Count, extra as f64);
    ctx.sample("wrong_action", Unit::Count, c.wrong_action as f64);
    ctx.sample("injected_during_restart", Unit::Count, c.during_restart as f64);
    ctx.sample("injected_near_schedule_change", Unit::Count, c.near_schedule_change as f64);
    ctx.sample("restarts_TargetR", Unit::Count, c.restarts.get("TargetR").copied().unwrap_or(0) as f64);
    for code in CODES {
        let n: u64 = c.seen.iter().filter(|(k, _)| k.1 == code).map(|(_, n)| n).sum();
        ctx.sample(&format!("seen_{code}"), Unit::Count, n as f64);
    }
    for ((code, mode), n) in &c.by_mode {
        ctx.sample(&format!("by_mode_{}_{code}", mode.replace(", ", "_").replace(' ', "_")), Unit::Count, *n as f64);
    }
}

// The partition programs of `faults` (`partita bench-partition NAME ARGS`), written against the
// `partita_apex` Rust API (no C compiler needed); the time partitions and the targets run the
// soak's programs (soak_parts.rs).

/// `fault-restarter INIT_MS`: spins INIT_MS of module time in its initialization (so that a
/// fault injected while it restarts finds it in COLD_START or WARM_START), then a light
/// periodic process in NORMAL.
pub static RESTARTER: Workload = Workload {
    name: "fault-restarter",
    description: "spins INIT_MS in its initialization, then a light periodic process (the restarted target of injected errors)",
    main: restarter_main,
};
/// `switcher EVERY`: a periodic process that asks for the other module schedule every EVERY
/// periods (SET_MODULE_SCHEDULE, schedules 1 and 2 in turn).
pub static SWITCHER: Workload =
    Workload { name: "switcher", description: "asks for module schedule 1 and 2 in turn every EVERY periods", main: switcher_main };

static EVERY: AtomicI64 = AtomicI64::new(0);

extern "C" fn idle_process() {
    loop {
        let _ = periodic_wait();
    }
}

fn restarter_main(args: &[String]) -> i32 {
    let until = get_time() + arg(args, 0, 25) * 1_000_000;
    while get_time() < until {
        std::hint::spin_loop();
    }
    run_one("TARGET", idle_process, get_partition_status().period)
}

extern "C" fn switcher_process() {
    let every = EVERY.load(Ordering::Relaxed).max(1) as u64;
    let (mut periods, mut next): (u64, ScheduleId) = (0, 2);
    loop {
        periods += 1;
        if periods.is_multiple_of(every) {
            if let Err(e) = set_module_schedule(next) {
                println!("SET_MODULE_SCHEDULE({next}) failed: {e:?}");
            }
            next = 3 - next;
        }
        let _ = periodic_wait();
    }
}

fn switcher_main(args: &[String]) -> i32 {
    EVERY.store(arg(args, 0, 5), Ordering::Relaxed);
    run_one("SWITCH", switcher_process, get_partition_status().period)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Programs;

    #[test]
    fn the_campaign_module_is_valid_and_decides_as_configured() {
        Programs::checked_module_xml(module_xml);
        assert_eq!(configured("TargetR", 2, "DEADLINE_MISSED"), ("PARTITION", "COLD_START"));
        assert_eq!(configured("TargetR", 1, "NUMERIC_ERROR"), ("PARTITION", "IGNORE"));
        assert_eq!(configured("TargetI", 2, "HARDWARE_FAULT"), ("PARTITION", "IDLE"));
        assert_eq!(configured("TargetN", 2, "POWER_FAILURE"), ("MODULE", "IGNORE"));
    }

    #[test]
    fn segments_split_a_run_in_time_order() {
        let v: Vec<f64> = (0..100).map(f64::from).collect();
        let s = segment_p99s(&v, 10, 5);
        assert_eq!(s.len(), 2);
        assert!(s[0] < 50.0 && s[1] >= 98.0, "{s:?}");
        assert_eq!(p99(&[]), None);
    }

    #[test]
    fn every_code_goes_to_every_target() {
        let (list, counts) = injections(2, 10);
        assert_eq!(list.len(), 2 * 8 * 3);
        assert_eq!(counts.len(), 24);
        assert!(counts.values().all(|&n| n == 2));
        assert_eq!(list[0], "TargetN:DEADLINE_MISSED@2000ms");
        assert_eq!(list[1], "TargetR:DEADLINE_MISSED@2010ms");
    }
}
