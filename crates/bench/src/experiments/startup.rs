//! `startup`: time from `partita run` to all partitions NORMAL, 1..64 partitions (seed 002
//! Fig. 20).

use crate::conditions::{Conditions, PARTITION_MAIN_RT_PRIORITY, realtime};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::{ModuleSpec, PartitionSpec, Window, machine_lock, monotonic_ns, run_module};
use crate::published::Published;
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, notes, run_median, section_head, stats_table};
use partita_trace::Event;
use std::io::BufRead;

pub struct Startup;

/// Window of each partition; partitions alternate between the two cores.
const WINDOW_NS: i64 = 2_000_000;

/// CLOCK_MONOTONIC instants (ns) at which each partition went NORMAL (first time only).
pub fn normal_instants(events: &[Event], epoch_monotonic_ns: i64) -> Vec<i64> {
    let mut seen = std::collections::BTreeMap::new();
    for e in events {
        if let Event::ModeChange { t, partition, to, .. } = e
            && to == "NORMAL"
        {
            seen.entry(*partition).or_insert(epoch_monotonic_ns + t);
        }
    }
    seen.into_values().collect()
}

fn native(ctx: &mut RunContext, n: usize) -> Result<(), String> {
    let _machine = machine_lock()?;
    // As the partitions: the CPUs' wake-up latency request and throttling lifted, each program
    // pinned to its core with its main thread at its band's base (FIFO 10).
    let conditions = Conditions::hold(&[0, 1]);
    if let Some(note) = conditions.note() {
        ctx.note(note);
    }
    let t0 = monotonic_ns();
    let mut children = Vec::new();
    for i in 0..n {
        let cpu = (i % 2) as u32;
        let mut cmd = ctx.programs.native_command("idle", &[]);
        realtime(&mut cmd, PARTITION_MAIN_RT_PRIORITY, &[cpu]);
        let child = cmd
            .env("PARTITA_STANDALONE_CPUS", cpu.to_string())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", ctx.programs.exe.display()))?;
        children.push(child);
    }
    let mut ready = Vec::new();
    for c in &mut children {
        let out = c.stdout.take().ok_or("no stdout")?;
        let line = std::io::BufReader::new(out).lines().next();
        if matches!(line, Some(Ok(l)) if l.starts_with("ready")) {
            ready.push(monotonic_ns());
        }
        let _ = c.wait();
    }
    if ready.len() != n {
        return Err(format!("{} of {n} programs reported ready", ready.len()));
    }
    ctx.sample("startup_ns", Unit::Ns, (ready.iter().max().copied().unwrap_or(t0) - t0) as f64);
    Ok(())
}

impl Experiment for Startup {
    fn name(&self) -> &'static str {
        "startup"
    }
    fn reproduces(&self) -> &'static str {
        "seed 002 Fig. 20 (start-up time against the number of partitions)"
    }
    fn description(&self) -> &'static str {
        "N partitions (each one program creating one process, then SET_PARTITION_MODE(NORMAL)) with 2 ms windows \
         alternating over the 2 cores. startup_ns = from just before `partita run` is started to the last partition's \
         mode change to NORMAL in the trace (epoch + t); epoch_ns = from that start to the module epoch, split into \
         launch_ns (to `partita run`'s module start: exec, configuration), setup_ns (capabilities, CPU locks, \
         throttling, the run's cgroups), prepare_ns (each partition's cgroups, control block and program started, held; \
         also per partition) and epoch_margin_ns (the module's threads start); normal_ns = each partition's NORMAL after \
         the epoch. --backend native starts N plain \
         processes of the same program (APEX runtime standalone) under the partitions' conditions (pinned to the \
         same core, main thread at SCHED_FIFO 10, zero wake-up latency requested on both CPUs, real-time throttling lifted) and \
         takes the time until each one's process ran. \
         Differs from seed 002: its figure times system initialization of its three designs on a Pentium (the VMM-level one \
         dominated by guest OS boot); here only the module starts on a running machine, 1..64 partitions on 2 cores."
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let (ns, reps): (&[i64], i64) = if quick { (&[1, 4, 16], 3) } else { (&[1, 2, 4, 8, 16, 32, 64], 10) };
        ns.iter().map(|&n| params([("partitions", n.into()), ("repetitions", reps.into())])).collect()
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let n = p["partitions"].as_i64().unwrap_or(1).clamp(1, 64) as usize;
        let reps = p["repetitions"].as_i64().unwrap_or(1).max(1);
        for r in 0..reps {
            ctx.progress(&format!("{n} partitions, repetition {}/{reps}", r + 1));
            if ctx.backend == Backend::Native {
                native(ctx, n)?;
                continue;
            }
            let per_core = n.div_ceil(2) as i64;
            let maf = per_core * WINDOW_NS;
            let spec = ModuleSpec {
                name: "Startup".into(),
                cpus: "0-1".into(),
                major_frame_ns: maf,
                partitions: (0..n)
                    .map(|i| PartitionSpec {
                        name: format!("S{}", i + 1),
                        workload: "idle".into(),
                        args: vec![],
                        windows: vec![Window { start_ns: (i / 2) as i64 * WINDOW_NS, duration_ns: WINDOW_NS, core: (i % 2) as u32 }],
                    })
                    .collect(),
            };
            let frames = (1_000_000_000 / maf).max(5) as u64;
            let run = run_module(ctx, &spec, frames)?;
            let normal = normal_instants(&run.events, run.epoch_monotonic_ns);
            if normal.len() != n {
                return Err(format!(
                    "{} of {n} partitions went NORMAL within {frames} frames\n{}",
                    normal.len(),
                    crate::module_run::tail(&run.stderr, 5)
                ));
            }
            let last = normal.iter().max().copied().unwrap_or(run.epoch_monotonic_ns);
            ctx.sample("startup_ns", Unit::Ns, (last - run.spawned_monotonic_ns) as f64);
            ctx.sample("epoch_ns", Unit::Ns, (run.epoch_monotonic_ns - run.spawned_monotonic_ns) as f64);
            // Where the time before the epoch goes (the module's own instants, in the trace).
            let (epoch, st) = (run.epoch_monotonic_ns, run.startup);
            ctx.sample("launch_ns", Unit::Ns, (epoch + st.run_t - run.spawned_monotonic_ns) as f64);
            ctx.sample("setup_ns", Unit::Ns, (st.prepare_t - st.run_t) as f64);
            ctx.sample("prepare_ns", Unit::Ns, (st.started_t - st.prepare_t) as f64);
            ctx.sample("prepare_per_partition_ns", Unit::Ns, (st.started_t - st.prepare_t) as f64 / n as f64);
            ctx.sample("epoch_margin_ns", Unit::Ns, (-st.started_t) as f64);
            ctx.samples("normal_ns", Unit::Ns, normal.iter().map(|t| (t - run.epoch_monotonic_ns) as f64));
        }
        Ok(())
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
}

/// The report section: time from run to all partitions NORMAL against the number of partitions.
fn section(e: &dyn Experiment, data: &ExperimentData, _published: &Published) -> String {
    let mut h = section_head(e, data);
    let series: Vec<Series> = data
        .backends()
        .iter()
        .map(|b| {
            let pts = data
                .on(b)
                .filter_map(|r| Some((r.point.params.get("partitions")?.as_f64()?, run_median(r, "startup_ns")? / 1e6)))
                .collect();
            Series::new(format!("{b}: median start-up"), pts).markers()
        })
        .collect();
    let mut axes = Axes::new("Time from run to all partitions NORMAL", "partitions", "ms");
    axes.x_log = true;
    h += &chart(&svg::line_chart(&axes, &series));
    h += "<p>seed 002 Fig. 20 gives its platforms' boot times as a figure only (no table in data/published.toml).</p>";
    h += &stats_table(data, &|_| true);
    h += &notes(data);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_normal_of_each_partition_counts() {
        let mc = |t, partition, to: &str| Event::ModeChange { t, partition, from: "COLD_START".into(), to: to.into() };
        let ev = vec![mc(5, 1, "NORMAL"), mc(7, 2, "WARM_START"), mc(9, 2, "NORMAL"), mc(20, 1, "NORMAL")];
        assert_eq!(normal_instants(&ev, 100), vec![105, 109]);
    }
}
