//! `native-vs-partition`: workload score natively and as partitions, 1 and 2 cores, -O0..-O3.

use super::c_workloads::{Part, build_wl, cpus, module_xml, parse_lines, run_module, run_native_at};
use crate::conditions::{
    Conditions, CpuTimes, PARTITION_MAIN_RT_PRIORITY, baseline_problem, loss_within_noise, noise_pct, partition_rt_priority,
};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::published::{Published, as_f64};
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, f2, notes, param_f, param_s, section_head, stats_table, summary, table};
use crate::stats::median;
use std::time::Duration;

pub struct NativeVsPartition;

/// Linux priority of the workload's ARINC process in a partition: priority 10 in wl.c, the only
/// one its partition uses, so the highest rank (the top of the band).
fn work_rt_priority() -> i32 {
    partition_rt_priority(1)
}

/// Iterations per repetition, so that one repetition takes about 0.1-0.3 s at -O0.
fn iterations(kernel: &str) -> u64 {
    if kernel == "intmix" { 2_000_000 } else { 60_000 }
}

impl Experiment for NativeVsPartition {
    fn name(&self) -> &'static str {
        "native-vs-partition"
    }
    fn reproduces(&self) -> &'static str {
        "seed 001 Table 2; seed 000 Figs. 6-10"
    }
    fn description(&self) -> &'static str {
        "The data-structure kernel (CoreMark-class: list, matrix, state machine, CRC) and the integer mix \
         (Dhrystone-class), built with cc at -O0..-O3, run natively pinned to CPU 0 (and a second copy on CPU 1 \
         for 2 cores) under the partition's conditions (SCHED_FIFO 73 as the workload's ARINC process at priority 10, its partition's only priority, at the top of the band, \
         zero wake-up latency requested on the CPUs and real-time throttling lifted, as `partita run` does), then as one partition per core with a window covering the whole 1 s major frame (the paper \
         used slots over 30 s to keep partition switches out; here one switch per second remains). Score = \
         iterations per second; loss_pct compares the partitioned median with the native median of the same point \
         and run. The native runs come before and after the partitioned one; noise_pct = (max - min) / median of all their \
         repetitions is the baseline's run-to-run noise. A native median below the partitioned one by more than that noise is \
         a measurement problem, not a result: the point then carries rejected_loss_pct instead of loss_pct and a note with the \
         reason (native_steal_pct / partition_steal_pct: the hypervisor's steal time on the CPUs during each, from /proc/stat). The papers measured CoreMark/MHz on an Atom (seed 001) and Dhrystone on LEON3/LEON4 (seed 000); \
         this is a 2-vCPU VM sharing its host. With --workload-cmd CMD (for example a licensed CoreMark build) the -O0 data-structure points also time CMD natively and as partitions (cmd_native_ns, cmd_partition_ns, cmd_loss_pct); the partition program is /bin/sh running CMD, which makes no APEX call and so stays in COLD_START, scheduled in its windows all the same."
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let kernels: &[&str] = if quick { &["dskernel"] } else { &["dskernel", "intmix"] };
        let flags: &[&str] = if quick { &["O0", "O2"] } else { &["O0", "O1", "O2", "O3"] };
        let mut v = Vec::new();
        for k in kernels {
            for f in flags {
                for cores in 1..=cpus().min(2) {
                    v.push(params([("kernel", (*k).into()), ("flags", (*f).into()), ("cores", cores.into())]));
                }
            }
        }
        v
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        // Measurements take turns with modules and tests (the machine lock).
        let _machine = crate::module_run::machine_lock()?;
        let kernel = p["kernel"].as_str().unwrap_or("dskernel").to_string();
        let level: u8 = p["flags"].as_str().unwrap_or("O2")[1..].parse().map_err(|_| "bad flags")?;
        let cores = p["cores"].as_u64().unwrap_or(1) as usize;
        let reps = if ctx.quick { 3 } else { 10 };
        let n = iterations(&kernel);
        let exe = build_wl(&ctx.programs.exe, &ctx.scratch, level)?;
        let args = |apex: bool| {
            let mut a: Vec<String> = vec![kernel.clone(), "--n".into(), n.to_string(), "--reps".into(), reps.to_string()];
            if apex {
                a.push("--apex".into());
            }
            a
        };
        let score = |ns: f64| n as f64 / (ns / 1e9);
        let module_cpus: Vec<u32> = (0..cpus() as u32).collect();
        let cores_used: Vec<u32> = (0..cores as u32).collect();
        // Native: one copy per core, at the same time, under the partition's conditions (its
        // process's FIFO priority, the CPUs' wake-up latency request, throttling lifted). Run
        // before and after the partitioned run: the two give the baseline's run-to-run noise.
        let native_run = |ctx: &mut RunContext, round: &str| -> Result<(Vec<f64>, f64), String> {
            ctx.progress(&format!("{kernel} -O{level} native ({round}), {cores} core(s)"));
            let conditions = Conditions::hold(&module_cpus);
            if let Some(note) = conditions.note() {
                ctx.note(note);
            }
            let before = CpuTimes::read(&cores_used);
            let outs: Vec<Result<String, String>> = std::thread::scope(|s| {
                let handles: Vec<_> = cores_used
                    .iter()
                    .map(|&c| {
                        let (exe, a) = (&exe, args(false));
                        s.spawn(move || run_native_at(exe, &a, c, work_rt_priority()))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("panicked".into()))).collect()
            });
            let steal = CpuTimes::read(&cores_used).steal_pct_since(&before);
            drop(conditions);
            let mut v = Vec::new();
            for o in outs {
                v.extend(parse_lines(&o?).iter().filter_map(|l| l.num("ns")).map(score));
            }
            Ok((v, steal))
        };
        let (mut native, steal_before) = native_run(ctx, "before")?;
        if let Some(cmd) = ctx.programs.workload_cmd.clone().filter(|_| kernel == "dskernel" && level == 0) {
            user_command(ctx, &cmd, cores, reps)?;
        }
        if ctx.backend == Backend::Native {
            ctx.samples("native_score", Unit::Count, native);
            return Ok(());
        }
        ctx.progress(&format!("{kernel} -O{level} partitioned, {cores} core(s)"));
        let parts: Vec<Part> = (0..cores)
            .map(|c| Part {
                name: format!("W{c}"),
                core: c as u32,
                windows: vec![(0.0, 1.0)],
                exe: exe.clone(),
                args: args(true),
                period_s: None,
            })
            .collect();
        let before = CpuTimes::read(&cores_used);
        let out = run_module(
            &ctx.programs.exe,
            &ctx.scratch,
            &module_xml("NativeVsPartition", 1.0, cpus(), &parts),
            cores,
            Duration::from_secs(120),
        )?;
        let steal_partition = CpuTimes::read(&cores_used).steal_pct_since(&before);
        let lines: Vec<_> = parse_lines(&out).into_iter().filter(|l| l.kernel == kernel).collect();
        let part: Vec<f64> = lines.iter().filter_map(|l| l.num("ns")).map(score).collect();
        if cores > 1 {
            // seed 001 Table 2 tells the cores apart when both are busy.
            for c in 0..cores {
                let on_core = lines.iter().filter(|l| l.partition == format!("W{c}")).filter_map(|l| l.num("ns")).map(score);
                ctx.samples(&format!("partition_score.core{c}"), Unit::Count, on_core);
            }
        }
        if part.is_empty() {
            return Err("the partitions reported no score".into());
        }
        ctx.samples("partition_score", Unit::Count, part.clone());
        let (after, steal_after) = native_run(ctx, "after")?;
        native.extend(after);
        let steal_native = (steal_before + steal_after) / 2.0;
        ctx.samples("native_score", Unit::Count, native.clone());
        ctx.sample("native_steal_pct", Unit::Percent, steal_native);
        ctx.sample("partition_steal_pct", Unit::Percent, steal_partition);
        let noise = noise_pct(&native);
        ctx.sample("noise_pct", Unit::Percent, noise);
        let (mn, mp) = (median(&native), median(&part));
        let loss = (mn - mp) / mn * 100.0;
        match baseline_problem(loss, noise, (steal_native, steal_partition)) {
            Some(problem) => {
                ctx.note(format!("{kernel} -O{level}, {cores} core(s): {problem}; loss_pct is not given (rejected_loss_pct)"));
                ctx.sample("rejected_loss_pct", Unit::Percent, loss);
            }
            None => {
                if let Some(flag) = loss_within_noise(loss, noise) {
                    ctx.note(format!("{kernel} -O{level}, {cores} core(s): {flag}"));
                }
                ctx.sample("loss_pct", Unit::Percent, loss)
            }
        }
        Ok(())
    }
}

/// `--workload-cmd`: the user's command run `reps` times one after the other by a shell script,
/// natively (one copy per core) and as one partition per core; `cmd_native_ns` and
/// `cmd_partition_ns` are the wall times of each run (from `date +%s%N` around it).
fn user_command(ctx: &mut RunContext, cmd: &str, cores: usize, reps: u32) -> Result<(), String> {
    let script = ctx.scratch.join("workload-cmd.sh");
    let body = format!(
        "for i in $(seq {reps}); do s=$(date +%s%N); {{ {cmd}\n}} >/dev/null </dev/null; e=$(date +%s%N); echo \"wl cmd ns=$((e - s))\"; done\n\
         echo \"wl done\"\n[ \"$1\" = partition ] && exec sleep 3600\nexit 0\n"
    );
    std::fs::write(&script, body).map_err(|e| e.to_string())?;
    let sh = std::path::PathBuf::from("/bin/sh");
    ctx.progress(&format!("--workload-cmd natively, {cores} core(s)"));
    let conditions = Conditions::hold(&(0..cpus() as u32).collect::<Vec<_>>());
    let outs: Vec<Result<String, String>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..cores)
            .map(|c| {
                let (sh, a) = (&sh, vec![script.display().to_string(), "native".to_string()]);
                s.spawn(move || run_native_at(sh, &a, c as u32, PARTITION_MAIN_RT_PRIORITY))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("panicked".into()))).collect()
    });
    drop(conditions);
    let mut native = Vec::new();
    for o in outs {
        native.extend(parse_lines(&o?).iter().filter(|l| l.kernel == "cmd").filter_map(|l| l.num("ns")));
    }
    ctx.samples("cmd_native_ns", Unit::Ns, native.clone());
    if ctx.backend == Backend::Native {
        return Ok(());
    }
    ctx.progress(&format!("--workload-cmd as partitions, {cores} core(s)"));
    let parts: Vec<Part> = (0..cores)
        .map(|c| Part {
            name: format!("C{c}"),
            core: c as u32,
            windows: vec![(0.0, 1.0)],
            exe: sh.clone(),
            args: vec![script.display().to_string(), "partition".into()],
            period_s: None,
        })
        .collect();
    let out =
        run_module(&ctx.programs.exe, &ctx.scratch, &module_xml("WorkloadCmd", 1.0, cpus(), &parts), cores, Duration::from_secs(600))?;
    let part: Vec<f64> = parse_lines(&out).iter().filter(|l| l.kernel == "cmd").filter_map(|l| l.num("ns")).collect();
    ctx.samples("cmd_partition_ns", Unit::Ns, part.clone());
    if !native.is_empty() && !part.is_empty() {
        ctx.sample("cmd_loss_pct", Unit::Percent, (median(&part) / median(&native) - 1.0) * 100.0);
    }
    Ok(())
}

/// Published seed 000 bare-metal Dhrystone times relative to -O0, and Partita's native integer
/// mix the same way; seed 001 Table 2 beside Partita's loss.
fn section(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
    let mut h = section_head(e, data);
    let mut rows = vec![vec![
        "kernel".to_string(),
        "flags".into(),
        "cores".into(),
        "native score (it/s)".into(),
        "partitioned score (it/s)".into(),
        "loss %".into(),
        "native noise %".into(),
    ]];
    let mut bars: Vec<(String, f64)> = Vec::new();
    for r in &data.runs {
        let (n, q) = (summary(r, "native_score"), summary(r, "partition_score"));
        let loss = summary(r, "loss_pct").map(|s| s.median);
        rows.push(vec![
            param_s(r, "kernel"),
            param_s(r, "flags"),
            param_s(r, "cores"),
            n.map(|s| format!("{:.0}", s.median)).unwrap_or("-".into()),
            q.map(|s| {
                let per_core: Vec<String> = (0..2)
                    .filter_map(|c| summary(r, &format!("partition_score.core{c}")).map(|s| format!("core {c}: {:.0}", s.median)))
                    .collect();
                if per_core.is_empty() { format!("{:.0}", s.median) } else { format!("{:.0} ({})", s.median, per_core.join(", ")) }
            })
            .unwrap_or("-".into()),
            match (loss, summary(r, "rejected_loss_pct")) {
                (Some(l), _) => f2(l),
                (None, Some(x)) => format!("measurement problem (baseline {:.2} % slower; see notes)", -x.median),
                (None, None) => "-".into(),
            },
            summary(r, "noise_pct").map(|s| f2(s.median)).unwrap_or("-".into()),
        ]);
        if let Some(l) = loss {
            bars.push((format!("{} {} {}c", param_s(r, "kernel"), param_s(r, "flags"), param_s(r, "cores")), l));
        }
    }
    if let Some(t) = p.table("seed001_native_vs_partition").and_then(|t| t.get("rows")).and_then(|v| v.as_array()) {
        for row in t.iter().filter_map(|v| v.as_table()) {
            let g = |k: &str| row.get(k).and_then(as_f64).map(|v| format!("{v}")).unwrap_or("-".into());
            let config = row.get("config").and_then(|v| v.as_str()).unwrap_or("");
            rows.push(vec![
                format!("CoreMark/MHz, seed 001 Table 2: {config}"),
                "-".into(),
                "-".into(),
                g("coremark_per_mhz"),
                "-".into(),
                g("loss_pct"),
                "-".into(),
            ]);
        }
    }
    h += &table(&rows);
    // Time per flag relative to -O0: seed 000's bare-metal Dhrystone and the native integer mix.
    if let (Some(flags), Some(secs)) = (
        p.table("seed000_dhrystone_baremetal").and_then(|t| t.get("flags")).and_then(|v| v.as_array()),
        p.numbers("seed000_dhrystone_baremetal", "seconds"),
    ) {
        let mut rows = vec![vec![
            "flags".to_string(),
            "seed 000 Dhrystone, LEON3 bare metal (time / time at O0)".into(),
            "Partita native integer mix, 1 core".into(),
        ]];
        let score = |flag: &str| {
            data.runs
                .iter()
                .find(|r| param_s(r, "kernel") == "intmix" && param_s(r, "flags") == flag && param_f(r, "cores") == Some(1.0))
                .and_then(|r| summary(r, "native_score"))
                .map(|s| s.median)
        };
        for (f, s) in flags.iter().filter_map(|v| v.as_str()).zip(&secs) {
            let ours = match (score("O0"), score(f)) {
                (Some(o0), Some(x)) => f2(o0 / x),
                _ => "-".into(),
            };
            rows.push(vec![f.to_string(), f2(s / secs[0]), ours]);
        }
        h += &table(&rows);
    }
    if !bars.is_empty() {
        let cats: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
        let series = [Series::new("loss %", bars.iter().enumerate().map(|(i, b)| (i as f64, b.1)).collect())];
        h += &chart(&svg::bar_chart(&Axes::new("Partitioned vs native: loss", "point", "%"), &cats, &series));
    }
    h + &stats_table(data, &|_| true) + &notes(data)
}
