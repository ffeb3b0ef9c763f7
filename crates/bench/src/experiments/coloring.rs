//! `coloring`: seed 003's Test routine (512 B, instruction- or data-bound, periods 0.2..3 ms) with
//! Internal and External interference, without and with page coloring.

use super::c_workloads::{Background, cpus, parse_lines, run_native};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::published::Published;
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, notes, param_f, param_s, section_head, stats_table, summary, table};
use crate::stats::Summary;
use std::path::{Path, PathBuf};
use std::process::Command;

const COLORING_C: &str = include_str!("../../workloads/coloring.c");

pub struct Coloring;

impl Experiment for Coloring {
    fn name(&self) -> &'static str {
        "coloring"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003 Table 1, Fig. 7"
    }
    fn description(&self) -> &'static str {
        "Test (512 B of straight-line code, or 512 B of data read and written) runs every period on CPU 0 at real-time \
         priority and is timed each run (test_ns). setup = baseline (Test alone), contention (plus Internal: 32 KiB \
         touched every 500 us by a lower-priority thread on CPU 0, and External: 2 MiB copied to 2 MiB without end on \
         CPU 1), contention+coloring (the same, with Test and Internal on pages of the lower half of the last-level \
         cache's colors and External on the upper half, chosen by frame number from /proc/self/pagemap as root). \
         Differences: natively at user level instead of Jailhouse; one External instance (2 vCPUs) instead of two; \
         code pages are not colored (user level cannot move them), so coloring covers data only; in a VM frame \
         numbers are guest-physical, so the colors need not match the host's cache sets and coloring may not \
         isolate at all. stress-ng is not used (seed 003's aggressor was its own memory copy)."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Native]
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let periods: &[f64] = if quick { &[0.2, 1.0, 3.0] } else { &[0.2, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0, 3.0] };
        let mut v = Vec::new();
        for kind in ["instr", "data"] {
            for setup in ["baseline", "contention", "contention+coloring"] {
                for ms in periods {
                    v.push(params([("kind", kind.into()), ("setup", setup.into()), ("period_ms", (*ms).into())]));
                }
            }
        }
        v
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        // Measurements take turns with modules and tests (the machine lock).
        let _machine = crate::module_run::machine_lock()?;
        let kind = p["kind"].as_str().unwrap_or("data").to_string();
        let setup = p["setup"].as_str().unwrap_or("baseline").to_string();
        let period_us = (p["period_ms"].as_f64().unwrap_or(1.0) * 1000.0).round() as u64;
        let exe = build_coloring(&ctx.scratch)?;
        let colored = setup.ends_with("coloring");
        let contention = setup != "baseline";
        let mut external_args = vec!["external".to_string()];
        if colored {
            external_args.push("--colored".into());
        }
        let _external = if contention && cpus() > 1 { Some(Background::start(&exe, &external_args, 1)?) } else { None };
        if contention && cpus() < 2 {
            ctx.note("one CPU: no External interference");
        }
        let samples = if ctx.quick { (300_000 / period_us).clamp(100, 1000) } else { (3_000_000 / period_us).clamp(1000, 10_000) };
        let mut args: Vec<String> = ["test", "--kind", &kind, "--period-us", &period_us.to_string(), "--n", &samples.to_string()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if contention {
            args.push("--internal".into());
        }
        if colored {
            args.push("--colored".into());
        }
        ctx.progress(&format!("{kind}, {setup}, {} ms", period_us as f64 / 1000.0));
        let out = run_native(&exe, &args, Some(0))?;
        let lines = parse_lines(&out);
        if colored && lines.iter().any(|l| l.kernel == "coloring" && l.num("effective") == Some(0.0)) {
            ctx.note("no frame numbers in /proc/self/pagemap (not root): pages were not colored");
        }
        ctx.samples("test_ns", Unit::Ns, lines.iter().filter(|l| l.kernel == "test").filter_map(|l| l.num("ns")));
        Ok(())
    }
}

/// Builds the coloring Test program (native, no APEX).
pub fn build_coloring(scratch: &Path) -> Result<PathBuf, String> {
    let src = scratch.join("coloring.c");
    std::fs::write(&src, COLORING_C).map_err(|e| e.to_string())?;
    let out = scratch.join("coloring");
    let status = Command::new("cc")
        .args(["-O2", "-pthread"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .map_err(|e| format!("cannot run cc: {e} (apt-get install gcc)"))?;
    if !status.success() {
        return Err("cc failed building coloring.c".into());
    }
    Ok(out)
}

/// seed 003 Fig. 7: Test execution time per period, setup and kind, beside the published figures.
fn section(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
    let mut h = section_head(e, data);
    let key = "seed003_coloring";
    let mut rows =
        vec![vec!["kind".to_string(), "setup".into(), "median (us)".into(), "max (us)".into(), "seed 003 avg / max (us)".into()]];
    for kind in ["instr", "data"] {
        for setup in ["baseline", "contention", "contention+coloring"] {
            let samples: Vec<f64> = data
                .runs
                .iter()
                .filter(|r| param_s(r, "kind") == kind && param_s(r, "setup") == setup)
                .flat_map(|r| r.point.metrics.get("test_ns").map(|m| m.samples.clone()).unwrap_or_default())
                .collect();
            let Some(s) = Summary::of(&samples) else { continue };
            let paper = match setup {
                "baseline" => p
                    .number(key, &format!("baseline_{kind}_avg_us"))
                    .zip(p.number(key, &format!("baseline_{kind}_max_us")))
                    .map(|(a, m)| format!("{a} / {m}")),
                "contention" if kind == "instr" => p
                    .number(key, "contention_instr_2ms_median_us")
                    .zip(p.number(key, "contention_instr_2ms_max_us"))
                    .map(|(a, m)| format!("{a} (median, 2 ms) / {m}")),
                "contention+coloring" => {
                    p.number(key, &format!("coloring_worst_overhead_{kind}_us")).map(|o| format!("worst overhead over baseline {o}"))
                }
                _ => None,
            };
            rows.push(vec![
                kind.into(),
                setup.into(),
                format!("{:.3}", s.median / 1e3),
                format!("{:.3}", s.max / 1e3),
                paper.unwrap_or("-".into()),
            ]);
        }
    }
    h += &table(&rows);
    for kind in ["instr", "data"] {
        let series: Vec<Series> = ["baseline", "contention", "contention+coloring"]
            .iter()
            .map(|setup| {
                let mut pts: Vec<(f64, f64)> = data
                    .runs
                    .iter()
                    .filter(|r| param_s(r, "kind") == kind && param_s(r, "setup") == *setup)
                    .filter_map(|r| Some((param_f(r, "period_ms")?, summary(r, "test_ns")?.median)))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series::new(*setup, pts).markers()
            })
            .collect();
        h += &chart(&svg::line_chart(&Axes::new(format!("Test ({kind}-bound): median per period"), "period (ms)", "ns"), &series));
    }
    h + &stats_table(data, &|_| true) + &notes(data)
}
