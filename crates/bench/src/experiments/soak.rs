//! `soak`: a two-core module run for a long time (default 1 h, `--quick` 120 s: the 2-minute CI version, `--duration`)
//! under host load, with a partition that faults and is restarted cold every few frames and an
//! error of every code injected on a schedule, checked while it runs and reported per segment
//! (a line on stderr) and at the end (the store and the report). Issue 10, Deliver 7.
//!
//! One `partita run` for the whole duration, read while it runs (its stdout and its trace):
//! a leak in the module only shows as a slope within one long-lived process, and restarts,
//! injections and load only accumulate there; one run per segment would reset exactly what a
//! soak is for. Segments are reporting periods of that run.

use super::soak_check::{Channels, ChunkedCheck, Plan, PlannedWindow, SampleCheck, TraceStats, rss_and_fds, slope_per_hour};
use super::soak_load::HostLoad;
use super::soak_outside::{Attribution, Class, StealStep, StealWatch, steal_near};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::{Launch, Watcher, machine_lock, run_watched, tail};
use crate::module_xml::{ModuleXml, Scheduled};
use crate::report::svg::{Axes, Series, cdf_chart, line_chart};
use crate::report::{ExperimentData, chart, notes, params_label, section_head, stats_table, table};
use crate::stats::Summary;
use std::collections::BTreeMap;
use std::time::Instant;

pub struct Soak;

/// Major frame of the soak module.
pub const MAF_NS: i64 = 20_000_000;

/// Every error code `partita run --inject` knows, injected in turn into `Target`.
pub const CODES: [&str; 8] = [
    "DEADLINE_MISSED",
    "APPLICATION_ERROR",
    "NUMERIC_ERROR",
    "ILLEGAL_REQUEST",
    "STACK_OVERFLOW",
    "MEMORY_VIOLATION",
    "HARDWARE_FAULT",
    "POWER_FAILURE",
];

/// The partitions checked from their own clock samples.
pub const TIME_PARTITIONS: [&str; 3] = ["TimeA", "TimeB", "TimeC"];

/// (name, workload, core, window start ms, window end ms). Core 0: the well-behaved time
/// partitions and the producer; core 1 (CPU 1): a time partition, the consumer and the two
/// partitions that fault and restart. The last millisecond of each frame is left to the host.
const PARTITIONS: [(&str, &str, u32, i64, i64); 7] = [
    ("TimeA", "soak-time", 0, 0, 8),
    ("Producer", "soak-producer", 0, 8, 13),
    ("TimeC", "soak-time", 0, 13, 19),
    ("TimeB", "soak-time", 1, 0, 6),
    ("Faulty", "soak-faulty", 1, 6, 10),
    ("Consumer", "soak-consumer", 1, 10, 15),
    ("Target", "soak-target", 1, 15, 19),
];

/// The one schedule, as the checks see it.
pub fn plan() -> Plan {
    Plan {
        major_frame_ns: MAF_NS,
        windows: PARTITIONS
            .iter()
            .map(|(name, _, core, a, b)| PlannedWindow {
                partition: name.to_string(),
                core: *core,
                start_ns: a * 1_000_000,
                end_ns: b * 1_000_000,
            })
            .collect(),
    }
}

/// HM tables: the levels of every code in both system states; Faulty restarts COLD_START on
/// MEMORY_VIOLATION; Target (injected) WARM_STARTs on NUMERIC_ERROR, COLD_STARTs on
/// MEMORY_VIOLATION and ignores the other partition-level codes; the module ignores
/// POWER_FAILURE (by default a shutdown). PROCESS-level codes go to Target's runtime, which has
/// no error handler: IGNORE, traced.
fn hm_tables(faulty_id: usize, target_id: usize) -> String {
    let levels = ["PROCESS", "PROCESS", "PARTITION", "PARTITION", "PARTITION", "PARTITION", "PARTITION", "MODULE"];
    let level_entries: String = CODES
        .iter()
        .zip(levels)
        .enumerate()
        .map(|(i, (code, level))| {
            format!("      <Error_ID_Level ErrorIdentifier=\"{}\" ErrorLevel=\"{level}\" ErrorCode=\"{code}\"/>\n", i + 1)
        })
        .collect();
    let states = |body: &dyn Fn(u32) -> String| -> String {
        [1, 2].iter().map(|s| format!("    <System_State_Entry SystemState=\"{s}\">\n{}    </System_State_Entry>\n", body(*s))).collect()
    };
    let action = |id: usize, a: &str| format!("      <Error_ID_Action ErrorIdentifier=\"{id}\" Action=\"{a}\"/>\n");
    let target = |state: u32| -> String {
        [(3, "WARM_START"), (4, "IGNORE"), (5, "IGNORE"), (6, "COLD_START"), (7, "IGNORE")]
            .iter()
            .map(|(id, a)| action(*id, if state == 1 { "IGNORE" } else { a }))
            .collect()
    };
    format!(
        "  <System_HM_Table>\n{}  </System_HM_Table>\n  <Module_HM_Table>\n{}  </Module_HM_Table>\n  \
         <Partition_HM_Table PartitionIdentifier=\"{faulty_id}\" PartitionName=\"Faulty\">\n{}  </Partition_HM_Table>\n  \
         <Partition_HM_Table PartitionIdentifier=\"{target_id}\" PartitionName=\"Target\">\n{}  </Partition_HM_Table>\n",
        states(&|_| level_entries.clone()),
        states(&|_| action(8, "IGNORE")),
        states(&|_| action(6, "COLD_START")),
        states(&target),
    )
}

/// The module configuration.
pub fn module_xml(programs: &crate::workload::Programs) -> String {
    let id = |name: &str| PARTITIONS.iter().position(|p| p.0 == name).map_or(0, |i| i as u32 + 1);
    let mut m = ModuleXml::new("Soak", "0-1");
    m.raw(&hm_tables(id("Faulty") as usize, id("Target") as usize));
    for (i, (name, workload, ..)) in PARTITIONS.iter().enumerate() {
        let ports = match *name {
            "Producer" => {
                "    <Sampling_Port Name=\"s\" MaxMessageSize=\"64\" Direction=\"SOURCE\"/>\n    \
                           <Queuing_Port Name=\"q\" MaxMessageSize=\"64\" Direction=\"SOURCE\" MaxNbMessages=\"32\"/>\n"
            }
            "Consumer" => {
                "    <Sampling_Port Name=\"s\" MaxMessageSize=\"64\" Direction=\"DESTINATION\" RefreshRateSeconds=\"0.1\"/>\n    \
                           <Queuing_Port Name=\"q\" MaxMessageSize=\"64\" Direction=\"DESTINATION\" MaxNbMessages=\"32\"/>\n"
            }
            _ => "",
        };
        m.partition(i as u32 + 1, name, &programs.xml_attributes(workload, &[]), ports);
    }
    let scheduled: Vec<Scheduled> = PARTITIONS
        .iter()
        .enumerate()
        .map(|(i, (_, _, core, a, b))| Scheduled::one_window(i as u32 + 1, MAF_NS, a * 1_000_000, (b - a) * 1_000_000, *core))
        .collect();
    m.schedule(1, "soak", MAF_NS, false, &scheduled);
    let (p, c) = (id("Producer"), id("Consumer"));
    m.channels(&[(1, (p, "q"), (c, "q")), (2, (p, "s"), (c, "s"))]).finish()
}

/// `--inject` arguments: from 2 s on, one error every `every_ms`, the codes in turn, into
/// Target, until a second before the end.
pub fn injections(total_s: u64, every_ms: u64) -> Vec<String> {
    let end_ms = total_s.saturating_sub(1) * 1000;
    (0..)
        .map(|i| (i, 2000 + i * every_ms.max(100)))
        .take_while(|&(_, t)| t < end_ms)
        .map(|(i, t)| format!("Target:{}@{t}ms", CODES[i as usize % CODES.len()]))
        .collect()
}

/// A module message with its numbers taken out (`partita: warning: ... N ms ...`), to count
/// messages of one kind.
pub fn message_kind(line: &str) -> String {
    let mut kind: String = line.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect();
    while kind.contains("##") {
        kind = kind.replace("##", "#");
    }
    kind.chars().take(120).collect()
}

/// p50 / p99 / max of `v` in us, for a report line.
fn pct_us(v: &[f64]) -> String {
    Summary::of(v).map_or("-".into(), |s| format!("{:.0}/{:.0}/{:.0}", s.median / 1e3, s.p99 / 1e3, s.max / 1e3))
}

/// Everything gathered while the module runs.
struct Soaking {
    plan: Plan,
    trace: TraceStats,
    chunks: ChunkedCheck,
    samples: BTreeMap<String, SampleCheck>,
    /// The same intervals matched with what the module did at their windows (soak_outside.rs).
    attribution: Attribution,
    channels: Channels,
    /// Whole-run lateness and PCS per core.
    lateness: BTreeMap<u32, Vec<f64>>,
    pcs: BTreeMap<u32, Vec<f64>>,
    /// Per segment: the p99 of lateness over both cores.
    segment_p99: Vec<f64>,
    /// (seconds since start, RSS bytes, descriptors).
    memory: Vec<(f64, f64, f64)>,
    module_lines: Vec<String>,
}

impl Soaking {
    fn line(&mut self, line: &str) {
        let Some((name, rest)) = line.strip_prefix('[').and_then(|l| l.split_once("] ")) else {
            if self.module_lines.len() < 200 {
                self.module_lines.push(line.to_string());
            }
            return;
        };
        if let Some(r) = rest.strip_prefix("ran ") {
            self.samples.entry(name.to_string()).or_default().ran(&self.plan, name, r);
            let mut it = r.split_whitespace().filter_map(|v| v.parse::<i64>().ok());
            if let (Some(a), Some(b)) = (it.next(), it.next())
                && TIME_PARTITIONS.contains(&name)
            {
                self.attribution.interval(name, a, b);
            }
        } else if let Some(r) = rest.strip_prefix("chan ") {
            self.channels.line(name == "Producer", r);
        }
    }

    /// Accounts trace events just read.
    fn feed_trace(&mut self, events: &[partita_trace::Event], last: bool) {
        self.trace.feed(events);
        self.chunks.feed(events);
        self.chunks.check(last);
        self.attribution.feed(events, &TIME_PARTITIONS);
        self.attribution.settle(&self.plan, last);
    }

    /// The stderr line of a segment ending `at` seconds after the start.
    fn segment(&mut self, at: f64) -> String {
        let (lat, pcs) = self.trace.take_segment();
        let mut all: Vec<f64> = Vec::new();
        let mut per_core = String::new();
        for (core, v) in &lat {
            per_core += &format!(" c{core} {}", pct_us(v));
            all.extend(v);
        }
        let pcs_line: String = pcs.iter().map(|(core, v)| format!(" c{core} {}", pct_us(v))).collect();
        if let Some(s) = Summary::of(&all) {
            self.segment_p99.push(s.p99);
        }
        for (core, v) in lat {
            self.lateness.entry(core).or_default().extend(v);
        }
        for (core, v) in pcs {
            self.pcs.entry(core).or_default().extend(v);
        }
        let (checked, outside) = self.samples.values().fold((0, 0), |(c, o), s| (c + s.intervals, o + s.outside));
        let ch = &self.channels;
        let q = |k: &str| ch.get(false, "q", k);
        let mem = self.memory.last().map_or("-".into(), |m| format!("{:.1} MiB {} fds", m.1 / 1048576.0, m.2));
        format!(
            "soak {at:>6.0} s: windows {}/{} started ({} after the planned end), overlaps {}, samples outside {outside}/{checked} ({}; outside the enforced window {} of {}), \
             lateness p50/p99/max us{per_core}, pcs{pcs_line}, hm {}, restarts {}, q sent {} received {} lost {} dup {} reord {} torn {}, s received {} torn {}, module {mem}",
            self.trace.windows_started,
            self.plan.planned_before(self.trace.last_t.min(self.trace.end_ns)),
            self.trace.windows_after_end,
            self.chunks.overlaps,
            self.attribution.classes_line(),
            self.attribution.outside_enforced,
            self.attribution.checked,
            self.trace.hm.values().sum::<u64>(),
            self.trace.restarts.values().sum::<u64>(),
            ch.get(true, "q", "sent"),
            q("received"),
            q("skipped"),
            q("duplicated"),
            q("reordered"),
            q("torn"),
            ch.get(false, "s", "received"),
            ch.get(false, "s", "torn"),
        )
    }
}

impl Experiment for Soak {
    fn name(&self) -> &'static str {
        "soak"
    }
    fn reproduces(&self) -> &'static str {
        "issue 10 Deliver 7 (no paper: a soak of the whole module)"
    }
    fn description(&self) -> &'static str {
        "One `partita run` of a 2-core module (20 ms major frame) for the duration (1 h; --quick 120 s; --duration D): three \
         time partitions (TimeA, TimeC on core 0, TimeB on core 1) spin on GET_TIME and print each interval they ran, checked \
         against their planned windows (samples_outside); Producer (core 0) sends 8 numbered, checksummed messages per period on \
         a queuing channel and its sequence number on a sampling channel to Consumer (core 1), which counts lost, duplicated, \
         reordered and torn ones (chan_*); Faulty (core 1) writes through a null pointer in its 6th period and is restarted \
         COLD_START by its HM table; every error code is injected into Target (core 1) in turn (--inject, 1 s apart with \
         --quick, else 5 s; hm_injected_*); host load all along: stress-ng cpu, vm and io at nice 19 and a thread moving a \
         sleeping process between two cgroups and creating and removing a third, about 500 times a second each. From the trace, \
         read while it grows: windows planned and started, overlaps and runs outside windows (the timeline checks), window-start \
         lateness and PCS per core, HM events by code, action and source, restarts. The module's RSS and descriptor count from \
         /proc every second, with least-squares slopes per hour over the run after its first 10 % (a leak shows as a slope). \
         A line per segment (60 s; 15 s with --quick) on stderr. Not part of `bench all` (an hour)."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    fn in_all(&self) -> bool {
        false
    }
    fn report(&self, data: &ExperimentData, _published: &crate::published::Published) -> String {
        section(self, data)
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let (secs, segment, every) = if quick { (120, 15, 1000) } else { (3600, 60, 5000) };
        // PARTITA_SOAK_LOAD=none|stress|churn|full (default): to tell which load costs what.
        let load = std::env::var("PARTITA_SOAK_LOAD").ok().filter(|l| ["none", "stress", "churn"].contains(&l.as_str()));
        vec![params([
            ("seconds", secs.into()),
            ("segment_s", segment.into()),
            ("inject_every_ms", every.into()),
            ("load", load.unwrap_or_else(|| "full".into()).into()),
        ])]
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let secs = p["seconds"].as_u64().unwrap_or(120).max(10);
        let segment = p["segment_s"].as_u64().unwrap_or(60).clamp(1, secs);
        let every = p["inject_every_ms"].as_u64().unwrap_or(5000);
        if !crate::machine::privileged() {
            return Err("running a module needs root (cgroups, real-time priorities)".into());
        }
        if super::c_workloads::cpus() < 2 {
            ctx.note("needs 2 CPUs: skipped");
            return Ok(());
        }
        let config = ctx.scratch.join("soak.xml");
        std::fs::write(&config, module_xml(ctx.programs)).map_err(|e| format!("{}: {e}", config.display()))?;
        let trace_path = ctx.scratch.join("soak.trace");
        let inject = injections(secs, every);
        let mut injected: BTreeMap<&str, u64> = BTreeMap::new();
        for j in &inject {
            let code = CODES.iter().find(|c| j.contains(&format!(":{c}@"))).copied().unwrap_or("?");
            *injected.entry(code).or_default() += 1;
        }
        let _machine = machine_lock()?;
        let load_kind = p.get("load").and_then(|v| v.as_str()).unwrap_or("full");
        let mut load = HostLoad::start(matches!(load_kind, "full" | "stress"), matches!(load_kind, "full" | "churn"));
        for m in &load.missing {
            ctx.note(m.clone());
        }
        let mut s = Soaking {
            plan: plan(),
            // `--duration` stops at the first frame boundary after it.
            trace: TraceStats::ending_at((secs * 1_000_000_000).div_ceil(MAF_NS as u64) as i64 * MAF_NS),
            chunks: ChunkedCheck::new(3 * MAF_NS),
            samples: BTreeMap::new(),
            attribution: Attribution::default(),
            channels: Channels::default(),
            lateness: BTreeMap::new(),
            pcs: BTreeMap::new(),
            segment_p99: Vec::new(),
            memory: Vec::new(),
            module_lines: Vec::new(),
        };
        let steal_watch = StealWatch::start();
        let extra: Vec<String> = inject.iter().flat_map(|j| ["--inject".to_string(), j.clone()]).collect();
        let launch = Launch::for_duration(&ctx.programs.exe, &config, secs, &trace_path, &extra);
        let mut w = SoakWatch {
            s: &mut s,
            ctx,
            secs,
            segment,
            started: Instant::now(),
            next_sample: 0.0,
            next_segment: segment as f64,
            stderr_kinds: BTreeMap::new(),
        };
        let ended = run_watched(&launch, &mut w)?;
        let SoakWatch { stderr_kinds, ctx, .. } = w;
        // From starting `partita run` to its exit: the duration, start-up and the stop.
        ctx.sample("module_exit_ns", Unit::Ns, ended.seconds * 1e9);
        if matches!(load_kind, "full" | "stress") && !load.stress_running() && load.missing.is_empty() {
            ctx.note("stress-ng ended before the module did: part of the run had no stress-ng load");
        }
        load.stop_now();
        s.feed_trace(&[], true);
        let steal = steal_watch.finish();
        let line = s.segment(ended.seconds);
        eprintln!("partita: bench {line} (end)");
        record(ctx, &s, &injected, ended.trace_unparsed, &stderr_kinds);
        record_outside(ctx, &s.attribution, &steal);
        ctx.sample("host_load_cgroup_ops", Unit::Count, load.churn_ops.load(std::sync::atomic::Ordering::Relaxed) as f64);
        drop(load);
        if ended.overran {
            return Err(format!("partita run did not end at --duration {secs}s; it was signalled:\n{}", tail(&ended.stderr_tail, 10)));
        }
        if !ended.success {
            return Err(format!("partita run failed ({}):\n{}", ended.status, tail(&ended.stderr_tail, 10)));
        }
        Ok(())
    }
}

/// The soak's watcher: output lines and the trace to the checks, the module's memory and
/// descriptors once a second, a segment report every `segment` seconds, stderr by kind.
struct SoakWatch<'s, 'a, 'c> {
    s: &'s mut Soaking,
    ctx: &'a mut RunContext<'c>,
    secs: u64,
    segment: u64,
    started: Instant,
    next_sample: f64,
    next_segment: f64,
    stderr_kinds: BTreeMap<String, u64>,
}

impl Watcher for SoakWatch<'_, '_, '_> {
    fn line(&mut self, line: &str) {
        self.s.line(line);
    }

    fn stderr_line(&mut self, line: &str) {
        *self.stderr_kinds.entry(message_kind(line)).or_default() += 1;
    }

    fn events(&mut self, events: &[partita_trace::Event]) {
        self.s.feed_trace(events, false);
    }

    fn tick(&mut self, pid: u32) {
        let at = self.started.elapsed().as_secs_f64();
        // Up to the duration: later the module is stopping (its descriptors closing).
        if at >= self.next_sample && at < self.secs as f64 {
            if let Some((rss, fds)) = rss_and_fds(pid) {
                self.s.memory.push((at, rss, fds));
            }
            self.next_sample = at.floor() + 1.0;
        }
        if at >= self.next_segment {
            let line = self.s.segment(at);
            self.ctx.progress(&format!("{at:.0} of {} s", self.secs));
            eprintln!("partita: bench {line}");
            self.next_segment += self.segment as f64;
        }
    }
}

/// The outside intervals by cause, the enforced-window check, stop and wake-up lateness, and
/// the first outside intervals explained (docs/isolation-measured.md "Samples outside windows").
fn record_outside(ctx: &mut RunContext, a: &Attribution, steal: &[StealStep]) {
    ctx.sample("samples_outside_planned", Unit::Count, a.outside_planned() as f64);
    for c in Class::ALL {
        ctx.sample(&format!("samples_outside_{}", c.key()), Unit::Count, a.classes.get(&c).copied().unwrap_or(0) as f64);
    }
    ctx.sample("samples_outside_enforced", Unit::Count, a.outside_enforced as f64);
    ctx.sample("samples_unchecked_enforced", Unit::Count, a.unchecked_enforced as f64);
    for (core, v) in &a.stop_lateness {
        ctx.samples(&format!("stop_lateness_core{core}_ns"), Unit::Ns, v.iter().copied());
    }
    for (core, v) in &a.wake_lateness {
        ctx.samples(&format!("stop_wake_lateness_core{core}_ns"), Unit::Ns, v.iter().copied());
    }
    ctx.sample("host_steal_ticks", Unit::Count, steal.iter().map(|s| s.ticks).sum::<u64>() as f64);
    // Steal within 50 ms of the window end (ticks of 10 ms, read every 10 ms): the host.
    let near = |o: &super::soak_outside::Outside| {
        let (pe, epoch) = (o.planned.1, a.epoch_monotonic_ns);
        let until = o.stop.map_or(o.end, |r| r.effective.max(o.end));
        steal_near(steal, epoch + pe, epoch + until, 50_000_000)
    };
    let mut by_partition: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut past_end: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for o in &a.outside {
        *by_partition.entry((o.partition.as_str(), o.class.key())).or_default() += 1;
        past_end.entry(o.class.key()).or_default().push((o.end - o.planned.1).max(0) as f64);
    }
    // How far past the planned end each class ran (its partitions' own last samples).
    for (class, v) in past_end {
        ctx.samples(&format!("samples_outside_past_end_{class}_ns"), Unit::Ns, v);
    }
    for ((partition, class), n) in by_partition {
        ctx.sample(&format!("samples_outside_{class}_{partition}"), Unit::Count, n as f64);
    }
    // A late wake-up right after the partition itself lost its CPU: the virtual CPU stalled.
    let stalled = a.outside.iter().filter(|o| o.class == Class::LateWake && o.gap_before.is_some()).count();
    ctx.sample("samples_outside_late_wake_after_stall", Unit::Count, stalled as f64);
    for c in Class::ALL {
        let n = a.outside.iter().filter(|o| o.class == c && o.restart_before.is_some()).count();
        ctx.sample(&format!("samples_outside_{}_after_restart", c.key()), Unit::Count, n as f64);
    }
    ctx.sample("samples_outside_with_steal", Unit::Count, a.outside.iter().filter(|o| near(o) > 0).count() as f64);
    for u in &a.enforced_first {
        ctx.note(format!("outside the enforced window: {}", u.describe()));
    }
    for o in a.outside.iter().take(30) {
        ctx.note(format!("outside: {}; host steal nearby {} ticks", o.describe(), near(o)));
    }
}

/// Hands the run's figures to the store.
fn record(ctx: &mut RunContext, s: &Soaking, injected: &BTreeMap<&str, u64>, trace_unparsed: u64, stderr: &BTreeMap<String, u64>) {
    let last = s.trace.stop.as_ref().map_or(s.trace.last_t, |(frames, _)| *frames as i64 * MAF_NS);
    let planned = s.plan.planned_before(last);
    ctx.sample("windows_planned", Unit::Count, planned as f64);
    ctx.sample("windows_started", Unit::Count, s.trace.windows_started as f64);
    ctx.sample("windows_missing", Unit::Count, planned.saturating_sub(s.trace.windows_started) as f64);
    ctx.sample("windows_after_end", Unit::Count, s.trace.windows_after_end as f64);
    ctx.sample("overlaps", Unit::Count, s.chunks.overlaps as f64);
    ctx.sample("trace_out_of_window", Unit::Count, s.chunks.out_of_window as f64);
    ctx.sample("window_sequence_errors", Unit::Count, s.chunks.window_sequence as f64);
    for v in &s.chunks.first {
        ctx.note(format!("violation: {v}"));
    }
    let (mut checked, mut outside, mut worst) = (0, 0, 0);
    for name in TIME_PARTITIONS {
        let c = s.samples.get(name).cloned().unwrap_or_default();
        ctx.sample(&format!("samples_{name}"), Unit::Count, c.intervals as f64);
        ctx.sample(&format!("samples_outside_{name}"), Unit::Count, c.outside as f64);
        checked += c.intervals;
        outside += c.outside;
        worst = worst.max(c.max_outside_ns);
    }
    ctx.sample("samples_checked", Unit::Count, checked as f64);
    ctx.sample("samples_outside", Unit::Count, outside as f64);
    ctx.sample("samples_outside_pct", Unit::Percent, if checked > 0 { outside as f64 / checked as f64 * 100.0 } else { f64::NAN });
    ctx.sample("samples_outside_max_ns", Unit::Ns, worst as f64);
    for (core, v) in &s.lateness {
        ctx.samples(&format!("lateness_core{core}_ns"), Unit::Ns, v.iter().copied());
    }
    for (core, v) in &s.pcs {
        ctx.samples(&format!("pcs_core{core}_ns"), Unit::Ns, v.iter().copied());
    }
    ctx.samples("lateness_p99_per_segment_ns", Unit::Ns, s.segment_p99.iter().copied());
    for ((partition, code, action, source), n) in &s.trace.hm {
        ctx.sample(&format!("hm_{partition}_{code}_{action}_{source}"), Unit::Count, *n as f64);
    }
    for code in CODES {
        ctx.sample(&format!("injected_{code}"), Unit::Count, injected.get(code).copied().unwrap_or(0) as f64);
        let seen: u64 = s.trace.hm.iter().filter(|(k, _)| k.1 == code && k.3 == "injected").map(|(_, n)| n).sum();
        ctx.sample(&format!("hm_injected_{code}"), Unit::Count, seen as f64);
    }
    ctx.sample("restarts", Unit::Count, s.trace.restarts.values().sum::<u64>() as f64);
    for (name, n) in &s.trace.restarts {
        ctx.sample(&format!("restarts_{name}"), Unit::Count, *n as f64);
    }
    let ch = &s.channels;
    for chan in ["q", "s"] {
        ctx.sample(&format!("chan_{chan}_sent"), Unit::Count, ch.get(true, chan, "sent") as f64);
        for (key, metric) in [
            ("received", "received"),
            ("skipped", if chan == "q" { "lost" } else { "overwritten" }),
            ("duplicated", "duplicated"),
            ("reordered", "reordered"),
            ("torn", "torn"),
        ] {
            ctx.sample(&format!("chan_{chan}_{metric}"), Unit::Count, ch.get(false, chan, key) as f64);
        }
    }
    ctx.sample("chan_q_full", Unit::Count, ch.get(true, "q", "full") as f64);
    ctx.sample("chan_q_overflowed", Unit::Count, ch.get(false, "q", "overflowed") as f64);
    ctx.samples("module_rss_bytes", Unit::Bytes, s.memory.iter().map(|m| m.1));
    ctx.samples("module_fds", Unit::Count, s.memory.iter().map(|m| m.2));
    // The first 10 % is start-up (partitions starting, pages touched the first time).
    let from = s.memory.last().map_or(0.0, |m| m.0 * 0.1);
    let steady: Vec<&(f64, f64, f64)> = s.memory.iter().filter(|m| m.0 >= from).collect();
    if let Some(v) = slope_per_hour(&steady.iter().map(|m| (m.0, m.1)).collect::<Vec<_>>()) {
        ctx.sample("module_rss_slope_bytes_per_h", Unit::Bytes, v);
    }
    if let Some(v) = slope_per_hour(&steady.iter().map(|m| (m.0, m.2)).collect::<Vec<_>>()) {
        ctx.sample("module_fds_slope_per_h", Unit::Count, v);
    }
    ctx.sample("events_dropped", Unit::Count, s.trace.events_dropped as f64);
    ctx.sample("trace_unparsed_lines", Unit::Count, trace_unparsed as f64);
    ctx.sample("module_stderr_lines", Unit::Count, stderr.values().sum::<u64>() as f64);
    let mut kinds: Vec<(&String, &u64)> = stderr.iter().collect();
    kinds.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
    for (kind, n) in kinds.into_iter().take(5) {
        ctx.note(format!("module stderr, {n} x: {kind}"));
    }
    if let Some((frames, reason)) = &s.trace.stop {
        ctx.sample("frames", Unit::Count, *frames as f64);
        ctx.note(format!("module stopped: {reason} after {frames} frames"));
    }
    for l in s.module_lines.iter().filter(|l| l.contains("warning")).take(5) {
        ctx.note(format!("module: {l}"));
    }
}

// The report section: the verdict figures first (what the acceptance of issue 10 asks), then
// the module's memory and descriptors over time (a leak is a rising line), the lateness and PCS
// distributions per core, every metric's statistics and the notes.

/// The figures of the verdict table, in order: (metric, what it is).
const VERDICT: [(&str, &str); 17] = [
    ("windows_planned", "windows planned"),
    ("windows_started", "windows started"),
    ("overlaps", "overlaps (trace)"),
    ("trace_out_of_window", "runs outside windows (trace)"),
    ("samples_checked", "own-clock run intervals checked"),
    ("samples_outside", "of them outside their planned windows"),
    ("samples_outside_enforced", "of them outside the windows as enforced (isolation)"),
    ("restarts", "partition restarts"),
    ("chan_q_sent", "queuing: sent"),
    ("chan_q_received", "queuing: received"),
    ("chan_q_lost", "queuing: lost"),
    ("chan_q_duplicated", "queuing: duplicated"),
    ("chan_q_reordered", "queuing: reordered"),
    ("chan_q_torn", "queuing: torn"),
    ("chan_s_torn", "sampling: torn"),
    ("module_rss_slope_bytes_per_h", "module RSS slope (bytes/h)"),
    ("module_fds_slope_per_h", "module descriptors slope (/h)"),
];

fn section<E: Experiment + ?Sized>(e: &E, data: &ExperimentData) -> String {
    let mut h = section_head(e, data);
    let mut rows = vec![std::iter::once("figure".to_string()).chain(data.runs.iter().map(params_label)).collect::<Vec<_>>()];
    for (metric, label) in VERDICT {
        let cells = data
            .runs
            .iter()
            .map(|r| r.point.metrics.get(metric).and_then(|m| m.samples.last()).map_or("-".to_string(), |v| format!("{v:.0}")));
        rows.push(std::iter::once(label.to_string()).chain(cells).collect());
    }
    h += &table(&rows);
    for (metric, title, y, scale) in [
        ("module_rss_bytes", "module RSS over the run", "MiB", 1048576.0),
        ("module_fds", "module descriptors over the run", "descriptors", 1.0),
    ] {
        let series: Vec<Series> = data
            .runs
            .iter()
            .filter_map(|r| {
                let m = r.point.metrics.get(metric)?;
                // One sample a second.
                Some(Series::new(params_label(r), m.samples.iter().enumerate().map(|(i, v)| (i as f64, v / scale)).collect()))
            })
            .collect();
        if !series.is_empty() {
            h += &chart(&line_chart(&Axes::new(title, "s since the start", y), &series));
        }
    }
    for prefix in ["lateness_core", "pcs_core"] {
        let sets: Vec<(String, Vec<f64>)> = data
            .runs
            .iter()
            .flat_map(|r| {
                r.point
                    .metrics
                    .iter()
                    .filter(|(n, _)| n.starts_with(prefix))
                    .map(move |(n, m)| (format!("{n} {}", params_label(r)), m.samples.clone()))
            })
            .collect();
        if !sets.is_empty() {
            h += &chart(&cdf_chart(&format!("{prefix}N_ns (soak)"), "us", &sets, 1000.0));
        }
    }
    h += &stats_table(data, &|_| true);
    h += &notes(data);
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Programs;

    #[test]
    fn the_soak_module_is_valid_and_its_plan_matches_it() {
        let xml = Programs::checked_module_xml(module_xml);
        let p = plan();
        assert_eq!(p.windows.len(), PARTITIONS.len());
        assert_eq!(p.planned_before(MAF_NS), PARTITIONS.len() as u64);
        for name in TIME_PARTITIONS {
            assert!(xml.contains(&format!("PartitionName=\"{name}\"")));
        }
    }

    #[test]
    fn every_code_is_injected_in_turn() {
        let j = injections(12, 1000);
        assert_eq!(j.len(), 9, "2 s .. 10 s: {j:?}");
        assert_eq!(j[0], "Target:DEADLINE_MISSED@2000ms");
        assert_eq!(j[7], "Target:POWER_FAILURE@9000ms");
        assert_eq!(j[8], "Target:DEADLINE_MISSED@10000ms");
        for code in CODES {
            assert!(j.iter().any(|x| x.contains(code)), "{code}");
        }
        assert!(injections(2, 1000).is_empty());
    }

    #[test]
    fn messages_of_one_kind_differ_only_in_numbers() {
        assert_eq!(
            message_kind("partita: core 1: stop 2 not confirmed after 120 us"),
            message_kind("partita: core 0: stop 17 not confirmed after 9 us")
        );
        assert_eq!(message_kind("a 12.5 b"), "a #.# b");
    }
}
