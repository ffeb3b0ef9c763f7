//! `overlap`: an 830 us payload in P1 (core 0) while P2 copies memory on core 1, with its window
//! overlapping P1's payload by 0/25/50/75/100 %.

use super::c_workloads::{Part, build_wl, cpus, module_xml, parse_lines, run_module};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::published::Published;
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, f1, f2, notes, param_f, section_head, stats_table, summary, table};
use crate::stats::median;
use std::time::Duration;

pub struct Overlap;

const BUFFER: u64 = 16 << 20;
const PAYLOAD_NS: f64 = 830_000.0;

/// Payload lines for 830 us in P1, found at the first point and kept for the others.
static CALIBRATED: std::sync::Mutex<Option<u64>> = std::sync::Mutex::new(None);

/// Times a probe payload in P1 alone under the module (a partition released every 50 ms runs
/// it slower than a native loop: caches and TLB are cold again) and scales it to 830 us.
fn calibrate(ctx: &RunContext, exe: &std::path::Path) -> Result<u64, String> {
    ctx.progress("calibrating the payload");
    let probe = 200_000u64;
    let args: Vec<String> =
        ["payload", "--size", &BUFFER.to_string(), "--n", &probe.to_string(), "--reps", "11", "--period-us", "50000", "--apex"]
            .iter()
            .map(|a| a.to_string())
            .collect();
    let p1 = Part { name: "P1".into(), core: 0, windows: vec![(0.0, 0.02)], exe: exe.to_path_buf(), args, period_s: None };
    let out = run_module(&ctx.programs.exe, &ctx.scratch, &module_xml("Calibrate", 0.05, 2, &[p1]), 1, Duration::from_secs(60))?;
    let ns: Vec<f64> = parse_lines(&out).iter().filter(|l| l.kernel == "payload").skip(1).filter_map(|l| l.num("ns")).collect();
    let per_line = median(&ns) / probe as f64;
    if per_line.is_nan() || per_line <= 0.0 {
        return Err("calibration produced no payload time".into());
    }
    Ok((PAYLOAD_NS / per_line) as u64)
}

/// P2's window start in us for each overlap, as in seed 001 section 4.5 (S0: after P1's window).
fn p2_start_us(overlap: u64) -> u64 {
    match overlap {
        0 => 20_000,
        25 => 600,
        50 => 400,
        75 => 200,
        _ => 0,
    }
}

impl Experiment for Overlap {
    fn name(&self) -> &'static str {
        "overlap"
    }
    fn reproduces(&self) -> &'static str {
        "seed 001 Table 3"
    }
    fn description(&self) -> &'static str {
        "MAF 50 ms; P1 (core 0) has [0, 20 ms) and a periodic process that times a payload calibrated to 830 us in P1 alone \
         (one byte written per cache line over a 16 MiB buffer); P2 (core 1) copies 16 MiB buffers without \
         end in a 20 ms window starting at 20 ms, 600, 400, 200 or 0 us (S0..S100). The paper disabled the caches; \
         Linux cannot, so the buffers exceed the private caches instead (the VM's shared L3 is the host's). \
         interference_pct compares the median with that of P1 alone (the same module without P2, isolated_ns) in the same point; seed 001 compares with S0."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
    fn points(&self, _quick: bool) -> Vec<Params> {
        [0u64, 25, 50, 75, 100].iter().map(|o| params([("overlap_pct", (*o).into())])).collect()
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        // Measurements take turns with modules and tests (the machine lock).
        let _machine = crate::module_run::machine_lock()?;
        if cpus() < 2 {
            ctx.note("needs 2 CPUs: skipped");
            return Ok(());
        }
        let overlap = p["overlap_pct"].as_u64().unwrap_or(0);
        let reps = if ctx.quick { 30 } else { 100 };
        let exe = build_wl(&ctx.programs.exe, &ctx.scratch, 2)?;
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
        let lines = match *CALIBRATED.lock().map_err(|_| "poisoned")? {
            Some(lines) => lines,
            None => calibrate(ctx, &exe)?,
        };
        *CALIBRATED.lock().map_err(|_| "poisoned")? = Some(lines);
        let args = ["payload", "--size", &BUFFER.to_string(), "--n", &lines.to_string()];
        let p1 = Part {
            name: "P1".into(),
            core: 0,
            windows: vec![(0.0, 0.02)],
            exe: exe.clone(),
            args: s(&[&args[..], &["--reps", &(reps + 1).to_string(), "--period-us", "50000", "--apex"]].concat()),
            period_s: None,
        };
        let p2 = Part {
            name: "P2".into(),
            core: 1,
            windows: vec![(p2_start_us(overlap) as f64 / 1e6, 0.02)],
            exe: exe.clone(),
            args: s(&["memcopy", "--size", &BUFFER.to_string(), "--n", "0", "--apex"]),
            period_s: None,
        };
        let mut medians = Vec::new();
        for (metric, parts) in [("isolated_ns", vec![p1.clone()]), ("exec_ns", vec![p1, p2])] {
            ctx.progress(&format!("S{overlap}: {metric}"));
            let out = run_module(&ctx.programs.exe, &ctx.scratch, &module_xml("Overlap", 0.05, 2, &parts), 1, Duration::from_secs(60))?;
            // The first job also faults its stack and code in: left out.
            let exec: Vec<f64> = parse_lines(&out)
                .iter()
                .filter(|l| l.partition == "P1" && l.kernel == "payload")
                .skip(1)
                .filter_map(|l| l.num("ns"))
                .collect();
            if exec.is_empty() {
                return Err("P1 reported no payload time".into());
            }
            medians.push(median(&exec));
            ctx.samples(metric, Unit::Ns, exec);
        }
        ctx.sample("interference_pct", Unit::Percent, (medians[1] / medians[0] - 1.0) * 100.0);
        Ok(())
    }
}

/// seed 001 Table 3: payload execution time per overlap scenario, and the interference curve.
fn section(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
    let mut h = section_head(e, data);
    let key = "seed001_overlap";
    let mut rows = vec![vec![
        "scenario".to_string(),
        "avg (us)".into(),
        "max".into(),
        "min".into(),
        "stdev".into(),
        "interference %".into(),
        "seed 001 avg / max / min / stdev / interference".into(),
    ]];
    let published = |field: &str, i: usize| p.numbers(key, field).and_then(|v| v.get(i).copied());
    let mut ours = Vec::new();
    for r in &data.runs {
        let Some(o) = param_f(r, "overlap_pct") else { continue };
        let Some(s) = summary(r, "exec_ns") else { continue };
        let interference = summary(r, "interference_pct").map(|s| s.median);
        let i = [0.0, 25.0, 50.0, 75.0, 100.0].iter().position(|x| *x == o).unwrap_or(usize::MAX);
        let paper = ["avg_us", "max_us", "min_us", "stdev_us", "interference_pct"]
            .iter()
            .map(|f| published(f, i).map(|v| format!("{v}")).unwrap_or("-".into()))
            .collect::<Vec<_>>()
            .join(" / ");
        rows.push(vec![
            format!("S{o}"),
            f1(s.mean / 1e3),
            f1(s.max / 1e3),
            f1(s.min / 1e3),
            f2(s.stddev / 1e3),
            interference.map(f2).unwrap_or("-".into()),
            paper,
        ]);
        if let Some(v) = interference {
            ours.push((o, v));
        }
    }
    h += &table(&rows);
    let mut series = vec![Series::new("Partita", ours).markers()];
    if let (Some(x), Some(y)) = (p.numbers(key, "overlap_pct"), p.numbers(key, "interference_pct")) {
        series.push(Series::new("XtratuM, caches off (seed 001)", x.into_iter().zip(y).collect()).dashed().markers());
    }
    h += &chart(&svg::line_chart(&Axes::new("Interference vs window overlap", "overlap (%)", "interference (%)"), &series));
    h + &stats_table(data, &|_| true) + &notes(data)
}
