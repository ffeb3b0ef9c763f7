//! `pcs`: timer lateness (TmrO), partition switch (PCS, seed 002's PtswO) and first-process
//! dispatch (CtswO) against the number of processes per partition, from the trace of a real
//! module run.

use super::partition_programs::{arg, attribute, create_and_start, fail, go_normal};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::monotonic_ns as now_ns;
use crate::module_run::{ModuleSpec, PartitionSpec, Window, machine_lock, run_module};
use crate::published::Published;
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, notes, run_median, section_head, stats_table, table, us};
use crate::stats::Summary;
use crate::workload::Workload;
use partita_apex::{get_partition_status, periodic_wait};
use partita_trace::Event;
use std::collections::HashMap;

pub struct Pcs;

/// Two partitions alternating on core 0: major frame and window length.
const MAF_NS: i64 = 10_000_000;

/// Figures of one trace: per window start, TmrO, PCS, dispatch after the boundary and CtswO.
#[derive(Debug, Default, PartialEq)]
pub struct SwitchFigures {
    pub tmro: Vec<f64>,
    pub pcs: Vec<f64>,
    pub dispatch: Vec<f64>,
    pub ctsw: Vec<f64>,
}

/// TmrO = window_start.t - planned (the scheduler's boundary lateness), PCS =
/// partition_running.t - planned, dispatch = process_dispatch.t - planned and CtswO =
/// process_dispatch.t - partition_running.t of the same window start; frames before
/// `skip_before_ns` (start-up) are left out.
pub fn switch_figures(events: &[Event], skip_before_ns: i64) -> SwitchFigures {
    let mut f = SwitchFigures::default();
    let mut running: HashMap<(u32, u32, i64), i64> = HashMap::new();
    for e in events {
        match e {
            Event::WindowStart { t, planned, .. } if *planned >= skip_before_ns => f.tmro.push((t - planned) as f64),
            Event::PartitionRunning { t, core, partition, planned } if *planned >= skip_before_ns => {
                f.pcs.push((t - planned) as f64);
                running.insert((*core, *partition, *planned), *t);
            }
            _ => {}
        }
    }
    for e in events {
        if let Event::ProcessDispatch { t, core, partition, planned, .. } = e
            && *planned >= skip_before_ns
        {
            f.dispatch.push((t - planned) as f64);
            if let Some(r) = running.get(&(*core, *partition, *planned)) {
                f.ctsw.push((t - r) as f64);
            }
        }
    }
    f
}

impl Experiment for Pcs {
    fn name(&self) -> &'static str {
        "pcs"
    }
    fn reproduces(&self) -> &'static str {
        "seed 001 section 4.3 (PCS 11 us); seed 002 Table V, Figs. 6-7 and 11-12 (TmrO, PtswO, CtswO)"
    }
    fn description(&self) -> &'static str {
        "Two partitions alternate in 5 ms windows on core 0 (major frame 10 ms); each has N periodic processes \
         (period = major frame, ~20 us of work per release). From the trace of `partita run`: tmro_ns = window_start - planned \
         boundary, pcs_ns = partition_running - planned (first code of the incoming partition), dispatch_ns = first process \
         dispatched - planned, ctsw_ns = dispatch - partition_running. The first 100 ms (start-up) are left out. \
         Differs from the papers: a 2-core VM instead of an Atom (seed 001) or a Pentium (seed 002); the switch is the cgroup \
         freezer (docs/scheduling.md), the scheduler wakes early and spins to the boundary, so TmrO measures the spin's end, not \
         a timer interrupt; seed 002's partitions had its OFP/VSP task set, here N identical processes. No native baseline \
         (there is no partition switch without partitions); \
         instead, before each point, the host's same-core process-switch floor on CPU 0 (switch_floor_ns: two processes at \
         SCHED_FIFO 73, the level of a pcs partition's highest process, hand a byte back and forth through pipes; half a round trip) and \
         pcs_floor_ratio = PCS median / floor median, the figure that compares across hosts."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let (ns, secs): (&[i64], i64) = if quick { (&[1, 4, 16], 4) } else { (&[1, 2, 4, 8, 16, 32, 64], 20) };
        ns.iter().map(|&n| params([("processes", n.into()), ("seconds", secs.into())])).collect()
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let n = p["processes"].as_i64().unwrap_or(1);
        let secs = p["seconds"].as_i64().unwrap_or(4);
        let half = MAF_NS / 2;
        let partition = |name: &str, start: i64| PartitionSpec {
            name: name.into(),
            workload: "pcs".into(),
            args: vec![n.to_string()],
            windows: vec![Window { start_ns: start, duration_ns: half, core: 0 }],
        };
        let spec = ModuleSpec {
            name: "Pcs".into(),
            cpus: "0-1".into(),
            major_frame_ns: MAF_NS,
            partitions: vec![partition("P1", 0), partition("P2", half)],
        };
        ctx.progress("the host's process-switch floor on CPU 0");
        let floor = {
            let _machine = machine_lock()?;
            super::switch_floor::measure(ctx, 0, if ctx.quick { 5000 } else { 20_000 })?
        };
        ctx.progress(&format!("{n} processes per partition, {secs} s"));
        let run = run_module(ctx, &spec, (secs * 1_000_000_000 / MAF_NS) as u64)?;
        let f = switch_figures(&run.events, 100_000_000);
        if f.pcs.is_empty() {
            return Err(format!("the trace has no partition_running event\n{}", crate::module_run::tail(&run.stderr, 5)));
        }
        ctx.samples("tmro_ns", Unit::Ns, f.tmro);
        ctx.sample("pcs_floor_ratio", Unit::Ratio, super::switch_floor::ratio_of_medians(&f.pcs, &floor));
        ctx.samples("switch_floor_ns", Unit::Ns, floor);
        ctx.samples("pcs_ns", Unit::Ns, f.pcs);
        ctx.samples("dispatch_ns", Unit::Ns, f.dispatch);
        ctx.samples("ctsw_ns", Unit::Ns, f.ctsw);
        Ok(())
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
}

/// The report section: TmrO, PCS and CtswO beside seed 001's PCS and seed 002 Table V, their
/// CDFs, and the overheads and jitter against the processes per partition (seed 002 Figs. 6, 7, 11, 12).
fn section(e: &dyn Experiment, data: &ExperimentData, published: &Published) -> String {
    let mut h = section_head(e, data);
    let mut rows = vec![vec![
        "source".to_string(),
        "processes".into(),
        "TmrO avg / jitter / dev (us)".into(),
        "PCS (PtswO) avg / jitter / dev (us)".into(),
        "PCS median / p99 (us)".into(),
        "CtswO avg / jitter / dev (us)".into(),
        "switch floor median / p99 (us)".into(),
        "PCS median / floor median".into(),
    ]];
    let f = |s: Option<Summary>| s.map(|s| format!("{} / {} / {}", us(s.mean), us(s.abs_jitter()), us(s.stddev))).unwrap_or("-".into());
    for r in &data.runs {
        let m = |k: &str| r.point.metrics.get(k).and_then(|m| Summary::of(&m.samples));
        rows.push(vec![
            format!("Partita {}", r.meta.backend),
            r.point.params.get("processes").map(|v| v.to_string()).unwrap_or_default(),
            f(m("tmro_ns")),
            f(m("pcs_ns")),
            m("pcs_ns").map(|s| format!("{} / {}", us(s.median), us(s.p99))).unwrap_or("-".into()),
            f(m("ctsw_ns")),
            m("switch_floor_ns").map(|s| format!("{} / {}", us(s.median), us(s.p99))).unwrap_or("-".into()),
            m("pcs_floor_ratio").map(|s| format!("{:.2}", s.median)).unwrap_or("-".into()),
        ]);
    }
    if let Some(pcs) = published.number("seed001_pcs", "partition_context_switch_us") {
        rows.push(vec![
            "XtratuM (seed 001 §4.3)".into(),
            "-".into(),
            "-".into(),
            format!("{pcs} / - / -"),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
        ]);
    }
    for (level, label) in [("user_level", "user-level"), ("kernel_level", "kernel-level"), ("vmm_level", "VMM-level")] {
        if let Some(t) = published.table("seed002_overhead_jitter").and_then(|t| t.get(level)).and_then(|v| v.as_table()) {
            let g = |k: &str| t.get(k).and_then(crate::published::as_f64).map(|v| v.to_string()).unwrap_or("-".into());
            rows.push(vec![
                format!("seed 002 {label} (Table V)"),
                "-".into(),
                format!("- / {} / {}", g("TmrO_jitter"), g("TmrO_dev")),
                format!("- / {} / {}", g("PtswO_jitter"), g("PtswO_dev")),
                "-".into(),
                format!("- / {} / {}", g("CtswO_jitter"), g("CtswO_dev")),
                "-".into(),
                "-".into(),
            ]);
        }
    }
    h += &table(&rows);
    h += "<p>Jitter is AbsJitter = max - min, dev the standard deviation, as in seed 002 Table V. The switch floor is the host's \
          same-core process switch measured in the same invocation (two processes at the same FIFO priority handing off through \
          pipes); PCS / floor is the figure to compare across hosts.</p>";
    for metric in ["pcs_ns", "ctsw_ns", "tmro_ns"] {
        let sets: Vec<(String, Vec<f64>)> = data
            .runs
            .iter()
            .filter_map(|r| {
                let n = r.point.params.get("processes")?;
                Some((format!("{}, {n} processes", r.meta.backend), r.point.metrics.get(metric)?.samples.clone()))
            })
            .collect();
        h += &chart(&svg::cdf_chart(&format!("CDF of {metric}"), "us", &sets, 1000.0));
    }
    for b in data.backends() {
        let pts = |k: &str| -> Vec<(f64, f64)> {
            data.on(&b).filter_map(|r| Some((r.point.params.get("processes")?.as_f64()?, run_median(r, k)? / 1000.0))).collect()
        };
        let series = vec![
            Series::new("PCS median", pts("pcs_ns")).markers(),
            Series::new("dispatch median", pts("dispatch_ns")).markers(),
            Series::new("CtswO median", pts("ctsw_ns")).markers(),
        ];
        let mut axes = Axes::new(format!("Average overheads vs processes (Figs. 6, 11; {b})"), "processes per partition", "median, us");
        axes.x_log = true;
        h += &chart(&svg::line_chart(&axes, &series));
        let jitter = |k: &str| -> Vec<(f64, f64)> {
            data.on(&b)
                .filter_map(|r| {
                    let s = Summary::of(&r.point.metrics.get(k)?.samples)?;
                    Some((r.point.params.get("processes")?.as_f64()?, s.abs_jitter() / 1000.0))
                })
                .collect()
        };
        let series = vec![
            Series::new("PCS jitter", jitter("pcs_ns")).markers(),
            Series::new("CtswO jitter", jitter("ctsw_ns")).markers(),
            Series::new("TmrO jitter", jitter("tmro_ns")).markers(),
        ];
        let mut axes = Axes::new(format!("Jitter vs processes (Figs. 7, 12; {b})"), "processes per partition", "max - min, us");
        axes.x_log = true;
        axes.y_log = true;
        h += &chart(&svg::line_chart(&axes, &series));
    }
    h += &stats_table(data, &|_| true);
    h += &notes(data);
    h
}

pub static PCS: Workload = Workload {
    name: "pcs",
    description: "N periodic processes (period = partition period) that each spin ~20 us per release",
    main: pcs_main,
};

fn spin_ns(ns: i64) {
    let end = now_ns() + ns;
    while now_ns() < end {
        std::hint::spin_loop();
    }
}

extern "C" fn pcs_process() {
    loop {
        spin_ns(20_000);
        let _ = periodic_wait();
    }
}

/// `pcs N`: N periodic processes at distinct priorities.
fn pcs_main(args: &[String]) -> i32 {
    let n = arg(args, 0, 1).clamp(1, 100);
    let period = get_partition_status().period;
    for i in 0..n {
        if let Err(e) = create_and_start(&attribute(&format!("P{i}"), pcs_process, period, 10 + (i % 50) as i32)) {
            return fail(e);
        }
    }
    go_normal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_pair_dispatch_with_the_same_window_start() {
        let ev = vec![
            Event::WindowStart { t: 5, core: 0, partition: 1, window: 1, planned: 0, schedule: 1 },
            Event::WindowStart { t: 1_000_002, core: 0, partition: 1, window: 1, planned: 1_000_000, schedule: 1 },
            Event::PartitionRunning { t: 1_010_000, core: 0, partition: 1, planned: 1_000_000 },
            Event::ProcessDispatch { t: 1_013_000, core: 0, partition: 1, process: 1, planned: 1_000_000 },
            Event::ProcessDispatch { t: 2_013_000, core: 0, partition: 2, process: 1, planned: 2_000_000 },
        ];
        let f = switch_figures(&ev, 1_000_000);
        assert_eq!(f, SwitchFigures { tmro: vec![2.0], pcs: vec![10_000.0], dispatch: vec![13_000.0, 13_000.0], ctsw: vec![3_000.0] });
    }
}
