//! `partita bench EXP...`: runs each experiment's points with a progress bar, stores every run
//! and prints one JSON object per point when asked.

use crate::experiment::{Backend, Experiment, PointResult};
use crate::machine::{MachineInfo, utc_now};
use crate::stats::Summary;
use crate::store::{RunMeta, Store};
use crate::workload::Programs;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

pub struct BenchOptions {
    pub experiments: Vec<&'static dyn Experiment>,
    /// None: each experiment's default backend.
    pub backend: Option<Backend>,
    pub quick: bool,
    pub json: bool,
    pub db: PathBuf,
    pub programs: Programs,
    /// The command line, stored with each run.
    pub command: String,
    /// `--duration`: replaces the `seconds` parameter of the points that have one.
    pub seconds: Option<u64>,
}

/// The `--json` line of one point (design: metric statistics, times in ns).
pub fn json_line(experiment: &str, backend: Backend, point: &PointResult) -> serde_json::Value {
    let metrics: serde_json::Map<String, serde_json::Value> = point
        .metrics
        .iter()
        .filter_map(|(name, m)| {
            let s = Summary::of(&m.samples)?;
            Some((
                name.clone(),
                serde_json::json!({"n": s.n, "min": s.min, "median": s.median, "mean": s.mean, "p99": s.p99, "max": s.max, "stddev": s.stddev}),
            ))
        })
        .collect();
    serde_json::json!({"experiment": experiment, "backend": backend.name(), "params": point.params, "metrics": metrics})
}

/// Runs everything; returns the points that produced results. An experiment that fails is
/// reported and the others still run; the error list comes back too.
pub fn run(opts: &BenchOptions) -> Result<(Vec<PointResult>, Vec<String>), String> {
    let mut store = Store::open(&opts.db)?;
    let machine = MachineInfo::current();
    let invocation = format!("{}-{}", utc_now(), std::process::id());
    let plan: Vec<(&dyn Experiment, Backend, Vec<crate::experiment::Params>)> = opts
        .experiments
        .iter()
        .map(|e| {
            let backend = opts.backend.unwrap_or(e.backends()[0]);
            let mut points = e.points(opts.quick);
            if let Some(secs) = opts.seconds {
                for p in points.iter_mut().filter(|p| p.contains_key("seconds")) {
                    p.insert("seconds".into(), secs.into());
                }
            }
            (*e, backend, points)
        })
        .collect();
    for (e, backend, _) in &plan {
        if !e.backends().contains(backend) {
            return Err(format!(
                "experiment {} does not run on the {} backend (it runs on: {})",
                e.name(),
                backend.name(),
                e.backends().iter().map(|b| b.name()).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let total: usize = plan.iter().map(|p| p.2.len()).sum();
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {prefix} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut results = Vec::new();
    let mut errors = Vec::new();
    for (e, backend, points) in plan {
        bar.set_prefix(format!("{} ({})", e.name(), backend.name()));
        for params in points {
            let scratch = tempfile::Builder::new().prefix("partita-bench-").tempdir().map_err(|e| format!("scratch directory: {e}"))?;
            let show = |m: &str| bar.set_message(m.to_string());
            let mut ctx = crate::experiment::RunContext::new(backend, opts.quick, &opts.programs, scratch.path().to_path_buf(), &show);
            bar.set_message(serde_json::Value::Object(params.clone()).to_string());
            let outcome = e.run_point(&mut ctx, &params);
            let point = ctx.into_result(&params);
            bar.inc(1);
            if let Err(err) = outcome {
                let msg = format!("{} {}: {err}", e.name(), serde_json::Value::Object(params.clone()));
                bar.suspend(|| eprintln!("partita: bench {msg}"));
                errors.push(msg);
                if point.metrics.is_empty() {
                    continue;
                }
            }
            for n in &point.notes {
                bar.suspend(|| eprintln!("partita: bench {}: {n}", e.name()));
            }
            let meta = RunMeta {
                invocation: invocation.clone(),
                experiment: e.name().to_string(),
                backend: backend.name().to_string(),
                quick: opts.quick,
                timestamp: utc_now(),
                machine: machine.clone(),
                configuration: serde_json::json!({"command": opts.command, "reproduces": e.reproduces(), "description": e.description()}),
            };
            store.insert(&meta, &point)?;
            if opts.json {
                bar.suspend(|| println!("{}", json_line(e.name(), backend, &point)));
            }
            results.push(point);
        }
    }
    bar.finish_and_clear();
    Ok((results, errors))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Metric, Unit, params};

    #[test]
    fn json_line_has_the_documented_schema() {
        let mut p = PointResult { params: params([("processes", 2.into())]), ..Default::default() };
        p.metrics.insert("pcs_ns".into(), Metric { unit: Unit::Ns, samples: vec![1000.0, 3000.0, 2000.0] });
        p.metrics.insert("empty".into(), Metric { unit: Unit::Ns, samples: vec![] });
        let v = json_line("pcs", Backend::Process, &p);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["backend", "experiment", "metrics", "params"]);
        assert_eq!(v["experiment"], "pcs");
        assert_eq!(v["backend"], "process");
        assert_eq!(v["params"]["processes"], 2);
        let m = v["metrics"].as_object().unwrap();
        assert_eq!(m.len(), 1, "a metric without samples has no statistics");
        let pcs = m["pcs_ns"].as_object().unwrap();
        let mut names: Vec<&str> = pcs.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["max", "mean", "median", "min", "n", "p99", "stddev"]);
        assert_eq!(pcs["n"], 3);
        assert_eq!(pcs["median"], 2000.0);
        assert_eq!(pcs["min"], 1000.0);
    }
}
