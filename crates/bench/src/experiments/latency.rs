//! `latency`: cyclictest-style periodic wake-up latency of a process inside a partition, beside
//! rt-tests' `cyclictest` run natively on the same CPU in the same invocation (seed 004 Table 1).

use super::partition_programs::{arg, attribute, create_and_start, exit_process, fail, go_normal};
use crate::conditions::{Conditions, PARTITION_MAIN_RT_PRIORITY, realtime};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::{ModuleSpec, PartitionSpec, Window, machine_lock, run_module};
use crate::published::Published;
use crate::report::svg;
use crate::report::{ExperimentData, chart, notes, params_label, section_head, stats_table, table, us};
use crate::stats::Summary;
use crate::workload::Workload;
use partita_apex::{INFINITE_TIME_VALUE, get_time, timed_wait};
use std::io::Write;
use std::sync::atomic::{AtomicI64, Ordering};

pub struct Latency;

/// The host CPU both measurements run on (the module's only core: `pt:Cores Cpus="1"`).
const CPU: u32 = 1;
/// Linux priority of the partition's one ARINC process (priority 63, the only one in use, so
/// ranked at the top of the default band, crates/apex/src/kernel/ranks.rs); cyclictest runs at
/// the same one.
const RT_PRIORITY: u32 = 73;
/// The partition's window and major frame: the whole of core 1, long so that the frame
/// boundary (where the partition is stopped and released again) touches few wake-ups.
const MAF_NS: i64 = 1_000_000_000;

/// Samples (ns) from cyclictest's `-h` histogram output: lines `USEC COUNT` per bucket. The
/// bucket of `USEC` holds latencies in [USEC, USEC + 1) us (cyclictest divides by 1000), so a
/// sample is taken at the bucket's middle.
pub fn parse_cyclictest_histogram(out: &str) -> Vec<f64> {
    let mut v = Vec::new();
    for line in out.lines().filter(|l| !l.starts_with('#')) {
        let mut it = line.split_whitespace();
        let (Some(us), Some(count), None) = (it.next(), it.next(), it.next()) else { continue };
        let (Ok(us), Ok(count)) = (us.parse::<u64>(), count.parse::<u64>()) else { continue };
        v.extend(std::iter::repeat_n(us as f64 * 1000.0 + 500.0, count as usize));
    }
    v
}

/// "# Histogram Overflows: 00001" -> 1.
pub fn cyclictest_overflows(out: &str) -> u64 {
    out.lines()
        .find_map(|l| l.strip_prefix("# Histogram Overflows:"))
        .map(|s| s.split_whitespace().filter_map(|x| x.parse::<u64>().ok()).sum())
        .unwrap_or(0)
}

fn cyclictest(ctx: &mut RunContext, interval_ns: i64, loops: i64) -> Result<(), String> {
    let which = std::process::Command::new("cyclictest").arg("--help").output();
    if which.is_err() {
        ctx.note("cyclictest is missing, its part is skipped: install rt-tests (apt-get install rt-tests)");
        return Ok(());
    }
    ctx.progress("cyclictest (native)");
    let _machine = machine_lock()?;
    let out = std::process::Command::new("cyclictest")
        .args(["-m", "-q", "-t", "1", "-h", "20000"])
        .arg(format!("-p{RT_PRIORITY}"))
        .arg(format!("-a{CPU}"))
        .arg(format!("-i{}", interval_ns / 1000))
        .arg(format!("-l{loops}"))
        .output()
        .map_err(|e| format!("cyclictest: {e}"))?;
    if !out.status.success() {
        return Err(format!("cyclictest failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let overflows = cyclictest_overflows(&text);
    if overflows > 0 {
        ctx.note(format!("cyclictest: {overflows} wake-ups above 20 ms are not in its histogram"));
    }
    ctx.samples("cyclictest_ns", Unit::Ns, parse_cyclictest_histogram(&text));
    Ok(())
}

impl Experiment for Latency {
    fn name(&self) -> &'static str {
        "latency"
    }
    fn reproduces(&self) -> &'static str {
        "seed 004 Table 1 (cyclictest natively and in a Xen guest)"
    }
    fn description(&self) -> &'static str {
        "One ARINC process at priority 63 in a partition that owns core 1 (one window of the whole 1 s major frame) wakes \
         every interval with TIMED_WAIT to the next planned instant and records GET_TIME - planned (partition_wakeup_ns). \
         In the same invocation rt-tests' cyclictest runs natively on the same CPU at the same Linux priority (73) with \
         the same interval and loop count (cyclictest_ns, from its 1 us histogram, each sample at its bucket's middle). --backend native runs the same \
         program without a module (the APEX runtime standalone) instead of in a partition, under the partition's conditions: \
         pinned to CPU 1, main thread at SCHED_FIFO 10 and the process at 73 as in a partition, zero wake-up latency requested \
         on the CPU and real-time throttling lifted, as `partita run` does. wakeup_ratio = partition_wakeup_ns median / \
         cyclictest_ns median of the same invocation, the figure that compares across hosts. Differs from seed 004: an x86 \
         VM instead of an Arndale Cortex-A15, a partition under Partita instead of a Xen guest; --quick uses a 1 ms \
         interval and 5,000 loops instead of 10 ms and 10,000; the frame boundary once a second stops and releases the \
         partition, which a wake-up there pays for."
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let (interval_us, loops) = if quick { (1000, 5000) } else { (10_000, 10_000) };
        vec![params([("interval_us", interval_us.into()), ("loops", loops.into())])]
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let interval_ns = p["interval_us"].as_i64().unwrap_or(1000) * 1000;
        let loops = p["loops"].as_i64().unwrap_or(1000);
        cyclictest(ctx, interval_ns, loops)?;
        let args = [interval_ns.to_string(), loops.to_string()];
        let samples = if ctx.backend == Backend::Native {
            ctx.progress("the same loop natively (APEX runtime standalone)");
            let _machine = machine_lock()?;
            // As in a partition: the CPU's wake-up latency request, throttling lifted, the
            // main thread at its band's base on the CPU (the runtime sets the process's own
            // priority, 73, and pins it to PARTITA_STANDALONE_CPUS).
            let conditions = Conditions::hold(&[CPU]);
            if let Some(n) = conditions.note() {
                ctx.note(n);
            }
            let mut cmd = ctx.programs.native_command("latency", &[&args[0], &args[1]]);
            cmd.env("PARTITA_STANDALONE_CPUS", CPU.to_string());
            realtime(&mut cmd, PARTITION_MAIN_RT_PRIORITY, &[CPU]);
            let out = cmd.output().map_err(|e| format!("{}: {e}", ctx.programs.exe.display()))?;
            drop(conditions);
            crate::workload::parse_samples(&String::from_utf8_lossy(&out.stdout))
        } else {
            ctx.progress("the loop inside a partition");
            let spec = ModuleSpec {
                name: "Latency".into(),
                cpus: CPU.to_string(),
                major_frame_ns: MAF_NS,
                partitions: vec![PartitionSpec {
                    name: "Cyclic".into(),
                    workload: "latency".into(),
                    args: args.to_vec(),
                    windows: vec![Window { start_ns: 0, duration_ns: MAF_NS, core: 0 }],
                }],
            };
            let frames = (interval_ns * loops / MAF_NS + 2) as u64;
            run_module(ctx, &spec, frames)?.samples("Cyclic")
        };
        let v: Vec<f64> = samples.into_iter().filter(|(m, _)| m == "partition_wakeup_ns").map(|(_, v)| v).collect();
        if v.is_empty() {
            return Err("the latency program printed no samples".into());
        }
        if let Some(ct) = ctx.metric_samples("cyclictest_ns") {
            ctx.sample("wakeup_ratio", Unit::Ratio, super::switch_floor::ratio_of_medians(&v, &ct));
        }
        ctx.samples("partition_wakeup_ns", Unit::Ns, v);
        Ok(())
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
}

/// The report section: wake-up latency beside cyclictest's in the same invocation and seed 004's,
/// with histograms up to the 99th percentile.
fn section(e: &dyn Experiment, data: &ExperimentData, published: &Published) -> String {
    let mut h = section_head(e, data);
    let mut rows = vec![vec![
        "source".to_string(),
        "min (us)".into(),
        "avg (us)".into(),
        "median (us)".into(),
        "max (us)".into(),
        "median / cyclictest median".into(),
    ]];
    for r in &data.runs {
        let m = |k: &str| r.point.metrics.get(k).and_then(|m| Summary::of(&m.samples));
        let ct = m("cyclictest_ns");
        for (k, label) in [("cyclictest_ns", "cyclictest, native"), ("partition_wakeup_ns", "Partita process")] {
            if let Some(s) = m(k) {
                let ratio = ct.as_ref().filter(|c| c.median > 0.0).map(|c| format!("{:.2}", s.median / c.median)).unwrap_or("-".into());
                rows.push(vec![
                    format!("{label} ({}, {})", r.meta.backend, params_label(r)),
                    us(s.min),
                    us(s.mean),
                    us(s.median),
                    us(s.max),
                    ratio,
                ]);
            }
        }
    }
    for (key, label) in [("native_linux", "seed 004: Linux native"), ("xen_arm_hvm_dom0", "seed 004: Xen ARM HVM dom0")] {
        if let Some(t) = published.table("seed004_cyclictest").and_then(|t| t.get(key)).and_then(|v| v.as_table()) {
            let g = |k: &str| t.get(k).and_then(crate::published::as_f64).map(|v| v.to_string()).unwrap_or("-".into());
            rows.push(vec![label.into(), g("min_us"), g("avg_us"), "-".into(), g("max_us"), "-".into()]);
        }
    }
    h += &table(&rows);
    for r in &data.runs {
        for (k, label) in [("partition_wakeup_ns", "Partita process"), ("cyclictest_ns", "cyclictest")] {
            if let Some(m) = r.point.metrics.get(k) {
                // The histogram of the body: up to the 99th percentile, the tail is in the table.
                let mut s = m.samples.clone();
                s.sort_by(f64::total_cmp);
                let cut = crate::stats::percentile(&s, 99.0).unwrap_or(0.0);
                let body: Vec<f64> = s.into_iter().filter(|v| *v <= cut).collect();
                h += &chart(&svg::histogram_chart(
                    &format!("{label} wake-up latency ({}; to p99)", r.meta.backend),
                    "us",
                    &body,
                    40,
                    1000.0,
                ));
            }
        }
    }
    h += &stats_table(data, &|_| true);
    h += &notes(data);
    h
}

pub static LATENCY: Workload = Workload {
    name: "latency",
    description: "cyclictest-like loop in one process at the top priority: TIMED_WAIT to the next interval, print the lateness",
    main: latency_main,
};

static INTERVAL_NS: AtomicI64 = AtomicI64::new(0);
static LOOPS: AtomicI64 = AtomicI64::new(0);

extern "C" fn latency_process() {
    let (interval, loops) = (INTERVAL_NS.load(Ordering::Relaxed), LOOPS.load(Ordering::Relaxed));
    let mut out = Vec::with_capacity(loops as usize);
    let mut next = get_time() + interval;
    for _ in 0..loops {
        let _ = timed_wait((next - get_time()).max(0));
        out.push(get_time() - next);
        next += interval;
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for v in out {
        let _ = writeln!(w, "sample partition_wakeup_ns {v}");
    }
    let _ = w.flush();
    exit_process(0);
}

/// `latency INTERVAL_NS LOOPS`.
fn latency_main(args: &[String]) -> i32 {
    INTERVAL_NS.store(arg(args, 0, 1_000_000).max(10_000), Ordering::Relaxed);
    LOOPS.store(arg(args, 1, 1000).max(1), Ordering::Relaxed);
    if let Err(e) = create_and_start(&attribute("CYCLIC", latency_process, INFINITE_TIME_VALUE, 63)) {
        return fail(e);
    }
    go_normal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_becomes_samples() {
        let out = "# /dev/cpu_dma_latency set to 0us\n000000 000000\n000003 000002\n000010 000001\n# Total: 000000003\n# Histogram Overflows: 00004\n";
        assert_eq!(parse_cyclictest_histogram(out), vec![3500.0, 3500.0, 10_500.0]);
        assert_eq!(cyclictest_overflows(out), 4);
    }
}
