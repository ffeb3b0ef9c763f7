//! `release`: release overhead (RelO = start - release), execution time and response time of the
//! OFP and VSP task sets of seed 002 Table III on one core.

use super::c_workloads::{Part, build_wl, cpus, module_xml, parse_lines, run_module};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::published::Published;
use crate::report::svg;
use crate::report::{ExperimentData, chart, f1, notes, section_head, stats_table, summary, table};
use crate::stats::Summary;
use std::time::Duration;

pub struct Release;

const FRAME_NS: i64 = 80_000_000;

impl Experiment for Release {
    fn name(&self) -> &'static str {
        "release"
    }
    fn reproduces(&self) -> &'static str {
        "seed 002 Tables III, VIII"
    }
    fn description(&self) -> &'static str {
        "OFP (GnC 20/2 ms, NavReader 20/6, SwmReader 80/3, AdtReader 80/10; rate-monotonic priorities) and VSP \
         (VdoStrming 80/35) on core 0, with the windows of examples/flight-control.xml (OFP 11.25 ms of every 20 ms, \
         VSP the rest of each 20 ms). Each job reads its release point r (its deadline minus its time capacity, \
         GET_PROCESS_STATUS), its start s and finish f (GET_TIME): relo_ns = s - r, e_ns = f - s, r_ns = f - r, with r moved to the start of the partition's first window at or after it (Partita's partition periods start with the major frame, so VSP's period starts 11.25 ms before its first window). \
         Jobs busy themselves for 0.5 % of the table's execution time (seed 002 measured actual execution times of \
         tens of us). relo_first_ns is RelO of the first process of each partition (GnC, VdoStrming), which includes \
         the partition switch: seed 002's RelO_I; the split into TmrO/PtswO/CtswO is the pcs experiment's."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
    fn points(&self, _quick: bool) -> Vec<Params> {
        vec![params([("task_set", "OFP+VSP".into())])]
    }
    fn run_point(&self, ctx: &mut RunContext, _p: &Params) -> Result<(), String> {
        // Measurements take turns with modules and tests (the machine lock).
        let _machine = crate::module_run::machine_lock()?;
        let jobs = if ctx.quick { 25 } else { 100 };
        let exe = build_wl(&ctx.programs.exe, &ctx.scratch, 2)?;
        let args = |k: &str| -> Vec<String> {
            [k, "--apex", "--reps", &jobs.to_string(), "--scale", "0.005"].iter().map(|s| s.to_string()).collect()
        };
        let mut ofp = Vec::new();
        let mut vsp = Vec::new();
        for i in 0..4 {
            let t = i as f64 * 0.02;
            ofp.push((t, 0.01125));
            vsp.push((t + 0.01125, 0.00875));
        }
        let window_starts = |w: &[(f64, f64)]| w.iter().map(|x| (x.0 * 1e9).round() as i64).collect::<Vec<i64>>();
        let (ofp_starts, vsp_starts) = (window_starts(&ofp), window_starts(&vsp));
        let parts = [
            Part { name: "OFP".into(), core: 0, windows: ofp, exe: exe.clone(), args: args("ofp"), period_s: Some(0.02) },
            Part { name: "VSP".into(), core: 0, windows: vsp, exe: exe.clone(), args: args("vsp"), period_s: None },
        ];
        ctx.progress("OFP and VSP task sets");
        let xml = module_xml("Release", 0.08, cpus(), &parts);
        let out = run_module(&ctx.programs.exe, &ctx.scratch, &xml, 5, Duration::from_secs(30 + jobs as u64 / 5))?;
        let lines: Vec<_> = parse_lines(&out).into_iter().filter(|l| l.kernel == "release").collect();
        if lines.is_empty() {
            return Err("no job reported".into());
        }
        for l in &lines {
            let (Some(r), Some(s), Some(f)) = (l.num("r"), l.num("s"), l.num("f")) else { continue };
            let starts = if l.partition == "VSP" { &vsp_starts } else { &ofp_starts };
            let r = effective_release(r as i64, starts) as f64;
            let task = l.fields.get("task").cloned().unwrap_or_default();
            ctx.sample(&format!("relo_ns.{task}"), Unit::Ns, s - r);
            ctx.sample(&format!("e_ns.{task}"), Unit::Ns, f - s);
            ctx.sample(&format!("r_ns.{task}"), Unit::Ns, f - r);
            if task == "GnC" || task == "VdoStrming" {
                ctx.sample("relo_first_ns", Unit::Ns, s - r);
                ctx.sample("r_first_ns", Unit::Ns, f - r);
            }
        }
        Ok(())
    }
}

/// A release point moved to the start of the partition's first window at or after it: the
/// process cannot run before its partition does (VSP's period starts with the major frame, its
/// first window 11.25 ms later), and seed 002's RelO starts at the partition's switch-in.
fn effective_release(r: i64, window_starts: &[i64]) -> i64 {
    let offset = r.rem_euclid(FRAME_NS);
    let next = window_starts.iter().copied().filter(|w| *w + 1_000 >= offset).min().unwrap_or(FRAME_NS + window_starts[0]);
    r - offset + next.max(offset)
}

/// seed 002 Table VIII: release overhead, execution and response time per task.
fn section(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
    let mut h = section_head(e, data);
    let mut rows = vec![vec![
        "source".to_string(),
        "task".into(),
        "RelO avg / jitter (us)".into(),
        "e avg / jitter (us)".into(),
        "R avg / jitter (us)".into(),
    ]];
    let f = |s: Option<Summary>| s.map(|s| format!("{} / {}", f1(s.mean / 1e3), f1(s.abs_jitter() / 1e3))).unwrap_or("-".into());
    let mut sets = Vec::new();
    for r in &data.runs {
        for task in ["GnC", "NavReader", "SwmReader", "AdtReader", "VdoStrming"] {
            rows.push(vec![
                format!("Partita {}", r.meta.backend),
                task.into(),
                f(summary(r, &format!("relo_ns.{task}"))),
                f(summary(r, &format!("e_ns.{task}"))),
                f(summary(r, &format!("r_ns.{task}"))),
            ]);
            if let Some(m) = r.point.metrics.get(&format!("relo_ns.{task}")) {
                sets.push((task.to_string(), m.samples.clone()));
            }
        }
        rows.push(vec![
            format!("Partita {}", r.meta.backend),
            "first of partition (RelO_I)".into(),
            f(summary(r, "relo_first_ns")),
            "-".into(),
            f(summary(r, "r_first_ns")),
        ]);
    }
    if let Some(cols) = p.table("seed002_response").and_then(|t| t.get("columns")).and_then(|v| v.as_array()) {
        let idx = |name: &str| cols.iter().position(|c| c.as_str() == Some(name));
        for (level, label) in [("user_level", "user-level"), ("kernel_level", "kernel-level"), ("vmm_level", "VMM-level")] {
            let (Some(avg), Some(jit)) =
                (p.numbers("seed002_response", &format!("{level}_avg")), p.numbers("seed002_response", &format!("{level}_jit")))
            else {
                continue;
            };
            let cell = |name: &str| idx(name).map(|i| format!("{} / {}", avg[i], jit[i])).unwrap_or("-".into());
            rows.push(vec![
                format!("seed 002 {label} (Table VIII)"),
                "first of partition".into(),
                cell("RelO_first"),
                cell("e"),
                cell("R"),
            ]);
        }
    }
    h += &table(&rows);
    h += &chart(&svg::cdf_chart("CDF of the release overhead per task", "RelO (us)", &sets, 1000.0));
    h + &stats_table(data, &|_| true) + &notes(data)
}

#[cfg(test)]
mod tests {
    #[test]
    fn releases_move_to_the_next_window_start() {
        let starts = [11_250_000, 31_250_000];
        assert_eq!(super::effective_release(160_000_000, &starts), 171_250_000);
        assert_eq!(super::effective_release(171_250_000, &starts), 171_250_000);
        assert_eq!(super::effective_release(180_000_000, &starts), 191_250_000);
        assert_eq!(super::effective_release(100_000_000, &[0, 20_000_000]), 100_000_000);
    }
}
