//! Report sections of the workload experiments (native-vs-partition, overlap, spinlock, release,
//! memlat, coloring): Partita's figures laid out as the papers' tables, the published figures
//! beside them, and the papers' curves.

use crate::experiment::Experiment;
use crate::published::{Published, as_f64};
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, notes, section_head, stats_table, table};
use crate::stats::Summary;
use crate::store::StoredRun;

fn summary(r: &StoredRun, metric: &str) -> Option<Summary> {
    Summary::of(&r.point.metrics.get(metric)?.samples)
}

fn param_f(r: &StoredRun, key: &str) -> Option<f64> {
    r.point.params.get(key)?.as_f64()
}

fn param_s(r: &StoredRun, key: &str) -> String {
    r.point.params.get(key).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).unwrap_or_default()
}

fn f1(v: f64) -> String {
    format!("{v:.1}")
}

fn f2(v: f64) -> String {
    format!("{v:.2}")
}

/// Published seed 000 bare-metal Dhrystone times relative to -O0, and Partita's native integer
/// mix the same way; seed 001 Table 2 beside Partita's loss.
pub fn native_vs_partition(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
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

/// seed 001 Table 3: payload execution time per overlap scenario, and the interference curve.
pub fn overlap(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
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

/// seed 000 Table 7: total time (ms) per number of partitions, per lock and cores.
pub fn spinlock(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
    let mut h = section_head(e, data);
    let mut counts: Vec<f64> = data.runs.iter().filter_map(|r| param_f(r, "partitions")).collect();
    counts.sort_by(f64::total_cmp);
    counts.dedup();
    let mut header = vec!["platform".to_string(), "cores".into(), "lock".into()];
    header.extend(counts.iter().map(|c| format!("{c} partitions (ms)")));
    let mut rows = vec![header];
    let mut series = Vec::new();
    let mut groups: Vec<(String, String, String)> =
        data.runs.iter().map(|r| (r.meta.backend.clone(), param_s(r, "cores"), param_s(r, "lock"))).collect();
    groups.dedup();
    groups.sort();
    groups.dedup();
    for (backend, cores, lock) in groups {
        let pick = |c: f64| {
            data.runs
                .iter()
                .find(|r| {
                    r.meta.backend == backend
                        && param_s(r, "cores") == cores
                        && param_s(r, "lock") == lock
                        && param_f(r, "partitions") == Some(c)
                })
                .and_then(|r| summary(r, "total_ns"))
                .map(|s| s.median / 1e6)
        };
        let mut row = vec![format!("Partita {backend}"), cores.clone(), lock.clone()];
        row.extend(counts.iter().map(|c| pick(*c).map(f2).unwrap_or("-".into())));
        rows.push(row);
        series.push(
            Series::new(format!("{backend} {lock} {cores} core(s)"), counts.iter().filter_map(|c| Some((*c, pick(*c)?))).collect())
                .markers(),
        );
    }
    let published_counts = p.numbers("seed000_spinlock", "partitions").unwrap_or_default();
    if let Some(t) = p.table("seed000_spinlock").and_then(|t| t.get("rows")).and_then(|v| v.as_array()) {
        for row in t.iter().filter_map(|v| v.as_table()) {
            let s = |k: &str| row.get(k).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).unwrap_or_default();
            let ms: Vec<f64> = row.get("ms").and_then(|v| v.as_array()).map(|a| a.iter().filter_map(as_f64).collect()).unwrap_or_default();
            let mut r = vec![format!("{} LEON3 (seed 000)", s("hpv")), s("cores"), s("technique")];
            r.extend(counts.iter().map(|c| {
                published_counts.iter().position(|x| x == c).and_then(|i| ms.get(i)).map(|v| format!("{v}")).unwrap_or("-".into())
            }));
            rows.push(r);
            series.push(
                Series::new(format!("{} {} {}c", s("hpv"), s("technique"), s("cores")), published_counts.iter().copied().zip(ms).collect())
                    .dashed(),
            );
        }
    }
    h += &table(&rows);
    h += "<p>Busy = spinning test-and-set lock (seed 000's binary semaphore); block = futex lock, waiters sleep (seed 000's HPV API lock).</p>";
    let mut axes = Axes::new("Spin-lock stress: total time", "partitions", "ms");
    axes.x_log = true;
    axes.y_log = true;
    h += &chart(&svg::line_chart(&axes, &series));
    h + &stats_table(data, &|_| true) + &notes(data)
}

/// seed 002 Table VIII: release overhead, execution and response time per task.
pub fn release(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
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

/// seed 003 Fig. 2: load latency against working-set size, a curve per number of interfering cores.
pub fn memlat(e: &dyn Experiment, data: &ExperimentData, _p: &Published) -> String {
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

/// seed 003 Fig. 7: Test execution time per period, setup and kind, beside the published figures.
pub fn coloring(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
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
