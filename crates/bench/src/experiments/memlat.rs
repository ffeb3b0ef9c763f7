//! `memlat`: dependent-load latency against working-set size, with 0..N-1 cores copying memory.

use super::c_workloads::{Background, build_wl, cpus, parse_lines, run_native_rt};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::published::Published;
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, notes, param_f, section_head, stats_table, summary};

pub struct Memlat;

impl Experiment for Memlat {
    fn name(&self) -> &'static str {
        "memlat"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003 Fig. 2"
    }
    fn description(&self) -> &'static str {
        "Pointer chasing (one pointer per 64-byte line, one random cycle: random-stride reads as LMBench's) on CPU 0 (SCHED_FIFO 50) \
         over working sets of 16 KiB..64 MiB, with 0..N-1 other CPUs each copying 32 MiB buffers without end (the \
         project's memory-copy workload). Natively, as the paper's bare-metal LMBench. The paper's A53 has 32 KiB \
         L1 and 1 MiB shared L2; this VM reports 48 KiB L1d, 4 MiB L2 per vCPU and the host's L3, shared with other \
         guests, so the plateaus differ and the tail is noisy."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Native]
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let sizes: &[u64] = if quick {
            &[16 << 10, 256 << 10, 4 << 20, 64 << 20]
        } else {
            &[16 << 10, 32 << 10, 64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 64 << 20]
        };
        let mut v = Vec::new();
        for k in 0..cpus() as u64 {
            for s in sizes {
                v.push(params([("interfering_cores", k.into()), ("wss_bytes", (*s).into())]));
            }
        }
        v
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        // Measurements take turns with modules and tests (the machine lock).
        let _machine = crate::module_run::machine_lock()?;
        let k = p["interfering_cores"].as_u64().unwrap_or(0) as usize;
        let size = p["wss_bytes"].as_u64().unwrap_or(1 << 20);
        let exe = build_wl(&ctx.programs.exe, &ctx.scratch, 2)?;
        let hammer: Vec<String> = ["memcopy", "--size", "33554432", "--n", "0"].iter().map(|s| s.to_string()).collect();
        let _aggressors = (1..=k).map(|cpu| Background::start(&exe, &hammer, cpu)).collect::<Result<Vec<_>, _>>()?;
        std::thread::sleep(std::time::Duration::from_millis(100));
        ctx.progress(&format!("{} KiB, {k} interfering core(s)", size >> 10));
        let reps = if ctx.quick { 3 } else { 7 };
        let loads = if ctx.quick { 1_000_000 } else { 4_000_000 };
        let args: Vec<String> = ["chase", "--size", &size.to_string(), "--n", &loads.to_string(), "--reps", &reps.to_string()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let out = run_native_rt(&exe, &args, Some(0))?;
        ctx.samples("load_ns", Unit::Ns, parse_lines(&out).iter().filter_map(|l| l.num("ns_per_load")));
        Ok(())
    }
}

/// seed 003 Fig. 2: load latency against working-set size, a curve per number of interfering cores.
fn section(e: &dyn Experiment, data: &ExperimentData, _p: &Published) -> String {
    let mut h = section_head(e, data);
    let mut ks: Vec<f64> = data.runs.iter().filter_map(|r| param_f(r, "interfering_cores")).collect();
    ks.sort_by(f64::total_cmp);
    ks.dedup();
    let series: Vec<Series> = ks
        .iter()
        .map(|k| {
            let mut pts: Vec<(f64, f64)> = data
                .runs
                .iter()
                .filter(|r| param_f(r, "interfering_cores") == Some(*k))
                .filter_map(|r| Some((param_f(r, "wss_bytes")? / 1024.0, summary(r, "load_ns")?.median)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series::new(format!("{k} interfering core(s)"), pts).markers()
        })
        .collect();
    let mut axes = Axes::new("Load latency vs working set", "working set (KiB)", "ns per load");
    axes.x_log = true;
    axes.y_log = true;
    h += &chart(&svg::line_chart(&axes, &series));
    h += "<p>Seed 003 Fig. 2 (LMBench on a Zynq US+ A53): flat while the set fits L1 (32 KiB), up to 2x with interference inside L2 (1 MiB), 7x (sequential) and 16x (random) around the L2 size, converging to a delay proportional to the interfering cores beyond it.</p>";
    h + &stats_table(data, &|_| true) + &notes(data)
}
