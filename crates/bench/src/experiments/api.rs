//! `api`: the cost of each non-blocking APEX service and of CREATE_PROCESS, START, SUSPEND and
//! RESUME, called from a process of a running partition (seed 002 Table VI).

use super::partition_programs::{arg, attribute, create_and_start, exit_process, fail, go_normal, sleeper};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::monotonic_ns as now_ns;
use crate::module_run::{ModuleSpec, PartitionSpec, Window, machine_lock, run_module};
use crate::published::Published;
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, notes, section_head, stats_table, table};
use crate::stats::Summary;
use crate::workload::{Workload, report_sample};
use partita_apex::{
    INFINITE_TIME_VALUE, Name, ProcessId, create_process, get_my_id, get_partition_status, get_process_id, get_process_status, get_time,
    resume, start, suspend,
};
use std::hint::black_box;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Api;

/// Services in seed 002 Table VI order, then Partita's extra rows; the sample names of the
/// `api` workload.
pub const SERVICES: [&str; 10] = [
    "GET_MY_ID",
    "GET_PROCESS_ID",
    "GET_PROCESS_STATUS",
    "CREATE_PROCESS",
    "START",
    "SUSPEND",
    "RESUME",
    "GET_PARTITION_STATUS",
    "GET_TIME",
    "clock_read",
];

/// The metric name of a service's samples.
pub fn metric(service: &str) -> String {
    format!("{}_ns", service.to_lowercase())
}

impl Experiment for Api {
    fn name(&self) -> &'static str {
        "api"
    }
    fn reproduces(&self) -> &'static str {
        "seed 002 Table VI (APEX service overheads)"
    }
    fn description(&self) -> &'static str {
        "A process of a partition that owns CPU 1 calls each service N times and times every call with two \
         CLOCK_MONOTONIC reads (clock_read_ns is the cost of the empty measurement, included in every figure): GET_MY_ID, \
         GET_PROCESS_ID, GET_PROCESS_STATUS, GET_PARTITION_STATUS, GET_TIME, SUSPEND and RESUME of a waiting process of \
         lower priority, START of processes that the initialization process created DORMANT (CREATE_PROCESS is timed \
         there, up to 100 of them, the process table's room). --backend native runs the same program without a module \
         (the APEX runtime standalone). Differs from seed 002: SET_PARTITION_MODE is not timed (NORMAL does not return to \
         its caller); an x86 VM instead of a 2.9 GHz Pentium with Linux 2.6.32; per-call samples instead of averages."
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        vec![params([("calls", (if quick { 1000 } else { 10_000 }).into())])]
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let calls = p["calls"].as_i64().unwrap_or(1000).to_string();
        let samples = if ctx.backend == Backend::Native {
            ctx.progress("the services natively (APEX runtime standalone)");
            let _machine = machine_lock()?;
            let out = ctx
                .programs
                .native_command("api", &[&calls])
                .env("PARTITA_STANDALONE_CPUS", "1")
                .output()
                .map_err(|e| format!("{}: {e}", ctx.programs.exe.display()))?;
            crate::workload::parse_samples(&String::from_utf8_lossy(&out.stdout))
        } else {
            ctx.progress("the services in a partition");
            let maf = 100_000_000;
            let spec = ModuleSpec {
                name: "Api".into(),
                cpus: "1".into(),
                major_frame_ns: maf,
                partitions: vec![PartitionSpec {
                    name: "Api".into(),
                    workload: "api".into(),
                    args: vec![calls],
                    windows: vec![Window { start_ns: 0, duration_ns: maf, core: 0 }],
                }],
            };
            run_module(ctx, &spec, 30)?.samples("Api")
        };
        if samples.is_empty() {
            return Err("the api program printed no samples".into());
        }
        for s in SERVICES {
            ctx.samples(&metric(s), Unit::Ns, samples.iter().filter(|(m, _)| m == s).map(|(_, v)| *v));
        }
        Ok(())
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
}

/// The report section: the cost of each APEX service per backend beside seed 002's.
fn section(e: &dyn Experiment, data: &ExperimentData, published: &Published) -> String {
    let mut h = section_head(e, data);
    let services = published
        .table("seed002_api")
        .and_then(|t| t.get("services"))
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect::<Vec<_>>())
        .unwrap_or_default();
    let column = |k: &str| published.numbers("seed002_api", k).unwrap_or_default();
    let (ua, ud, ka, kd, va, vd) = (
        column("user_level_avg"),
        column("user_level_dev"),
        column("kernel_level_avg"),
        column("kernel_level_dev"),
        column("vmm_level_avg"),
        column("vmm_level_dev"),
    );
    let backends = data.backends();
    let mut header = vec!["service".to_string()];
    header.extend(backends.iter().map(|b| format!("Partita {b} avg / dev (us)")));
    header.extend(["seed 002 user-level".into(), "kernel-level".into(), "VMM-level".into()]);
    let mut rows = vec![header];
    let mut bars: Vec<Series> = backends.iter().map(|b| Series::new(format!("Partita {b} (mean)"), vec![])).collect();
    let mut cats = Vec::new();
    for s in crate::experiments::api::SERVICES {
        let mut row = vec![s.to_string()];
        for (bi, b) in backends.iter().enumerate() {
            let v = data.samples(b, &crate::experiments::api::metric(s));
            let sm = Summary::of(&v);
            row.push(sm.as_ref().map(|s| format!("{:.3} / {:.3}", s.mean / 1000.0, s.stddev / 1000.0)).unwrap_or("-".into()));
            bars[bi].points.push((cats.len() as f64, sm.map(|s| s.mean / 1000.0).unwrap_or(f64::NAN)));
        }
        let i = services.iter().position(|x| x == s);
        let p = |a: &[f64], d: &[f64]| i.and_then(|i| Some(format!("{} / {}", a.get(i)?, d.get(i)?))).unwrap_or("-".into());
        row.extend([p(&ua, &ud), p(&ka, &kd), p(&va, &vd)]);
        rows.push(row);
        cats.push(s.trim_start_matches("GET_").to_string());
    }
    let pub_rows = ["SET_PARTITION_MODE"];
    for s in pub_rows {
        let i = services.iter().position(|x| x == s);
        let p = |a: &[f64], d: &[f64]| i.and_then(|i| Some(format!("{} / {}", a.get(i)?, d.get(i)?))).unwrap_or("-".into());
        let mut row = vec![format!("{s} (not timed here)")];
        row.extend(backends.iter().map(|_| "-".to_string()));
        row.extend([p(&ua, &ud), p(&ka, &kd), p(&va, &vd)]);
        rows.push(row);
    }
    h += &table(&rows);
    let mut axes = Axes::new("APEX service cost (mean, clock reads included)", "", "us");
    axes.y_log = true;
    h += &chart(&svg::bar_chart(&axes, &cats, &bars));
    h += &stats_table(data, &|_| true);
    h += &notes(data);
    h
}

pub static API: Workload =
    Workload { name: "api", description: "times each non-blocking APEX service and CREATE_PROCESS/START/SUSPEND/RESUME", main: api_main };

static CALLS: AtomicUsize = AtomicUsize::new(0);

/// Processes created (and timed) by the initialization process, left DORMANT for START.
static DORMANT: std::sync::Mutex<Vec<ProcessId>> = std::sync::Mutex::new(Vec::new());

/// Times `f` `n` times, one sample per call (the clock reads included; see `clock_read`).
fn time_each(samples: &mut Vec<(&'static str, i64)>, name: &'static str, n: usize, mut f: impl FnMut()) {
    for _ in 0..n {
        let t0 = now_ns();
        f();
        samples.push((name, now_ns() - t0));
    }
}

extern "C" fn api_process() {
    let n = CALLS.load(Ordering::Relaxed);
    let mut s: Vec<(&'static str, i64)> = Vec::with_capacity(n * 10);
    let target = get_process_id(&Name::from("TARGET")).expect("TARGET exists");
    let target_name = Name::from("TARGET");
    time_each(&mut s, "clock_read", n, || {});
    time_each(&mut s, "GET_TIME", n, || {
        black_box(get_time());
    });
    time_each(&mut s, "GET_MY_ID", n, || {
        black_box(get_my_id().ok());
    });
    time_each(&mut s, "GET_PROCESS_ID", n, || {
        black_box(get_process_id(&target_name).ok());
    });
    time_each(&mut s, "GET_PROCESS_STATUS", n, || {
        black_box(get_process_status(target).ok());
    });
    time_each(&mut s, "GET_PARTITION_STATUS", n, || {
        black_box(get_partition_status());
    });
    for _ in 0..n {
        let t0 = now_ns();
        let r = suspend(target);
        let t1 = now_ns();
        let q = resume(target);
        let t2 = now_ns();
        if r.is_ok() && q.is_ok() {
            s.push(("SUSPEND", t1 - t0));
            s.push(("RESUME", t2 - t1));
        }
    }
    let dormant = std::mem::take(&mut *DORMANT.lock().unwrap_or_else(|p| p.into_inner()));
    for id in dormant {
        let t0 = now_ns();
        if start(id).is_ok() {
            s.push(("START", now_ns() - t0));
        }
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for (name, v) in s {
        let _ = writeln!(w, "sample {name} {v}");
    }
    let _ = w.flush();
    exit_process(0);
}

/// `api N`: N calls of each service; CREATE_PROCESS and START as often as the process table
/// allows (up to 100).
fn api_main(args: &[String]) -> i32 {
    CALLS.store(arg(args, 0, 1000).clamp(1, 1_000_000) as usize, Ordering::Relaxed);
    if let Err(e) = create_and_start(&attribute("MEAS", api_process, INFINITE_TIME_VALUE, 50)) {
        return fail(e);
    }
    if let Err(e) = create_and_start(&attribute("TARGET", sleeper, INFINITE_TIME_VALUE, 10)) {
        return fail(e);
    }
    let mut created = Vec::new();
    for i in 0..100 {
        let attr = attribute(&format!("D{i}"), sleeper, INFINITE_TIME_VALUE, 5);
        let t0 = now_ns();
        match create_process(&attr) {
            Ok(id) => {
                report_sample("CREATE_PROCESS", (now_ns() - t0) as f64);
                created.push(id);
            }
            Err(_) => break,
        }
    }
    *DORMANT.lock().unwrap_or_else(|p| p.into_inner()) = created;
    go_normal()
}
