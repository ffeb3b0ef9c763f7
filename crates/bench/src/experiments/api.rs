//! `api`: the cost of each non-blocking APEX service and of CREATE_PROCESS, START, SUSPEND and
//! RESUME, called from a process of a running partition (seed 002 Table VI).

use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::{ModuleSpec, PartitionSpec, Window, machine_lock, run_module};

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
    fn report(&self, data: &crate::report::ExperimentData, published: &crate::published::Published) -> String {
        crate::experiments::sections::api(self, data, published)
    }
}
