//! `spinlock`: 10,000 lock / read / write / unlock iterations per partition over shared memory,
//! 1..64 partitions on 1..N cores, a busy (spinning) lock against a blocking (futex) lock.

use super::c_workloads::{Part, build_wl, cpus, module_xml, parse_lines, run_module, run_native};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::published::{Published, as_f64};
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, f2, notes, param_f, param_s, section_head, stats_table, summary, table};
use std::time::Duration;

pub struct Spinlock;

const ITERATIONS: u32 = 10_000;
/// Window of each partition; 10,000 uncontended iterations take well under 1 ms here.
const SLOT_S: f64 = 0.002;
/// Size of `struct wl_spin_shared` rounded up to pages.
const SHARED_BYTES: usize = 8192;

impl Experiment for Spinlock {
    fn name(&self) -> &'static str {
        "spinlock"
    }
    fn reproduces(&self) -> &'static str {
        "seed 000 Table 7"
    }
    fn description(&self) -> &'static str {
        "Each partition maps one shared file and runs 10,000 iterations of lock, read, write, unlock on it, with a \
         busy lock (test-and-set spinning, the paper's binary semaphore) or a blocking lock (a futex: waiters sleep \
         in the kernel, the paper's hypervisor-API lock; Partita has no inter-partition lock service). Partitions \
         are spread round-robin over the cores, each with a 2 ms window per frame (cores run their windows at the \
         same time). total_ns is from the first partition's start to the last one's end; the shared counter is \
         checked afterwards. The shared memory is a file mapping, outside Partita's spatial isolation (Partita has \
         no shared-memory region yet). The paper ran LEON3 at 1..4 cores and 2..64 partitions; this VM has 2 vCPUs."
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let counts: &[u64] = if quick { &[2, 8, 32] } else { &[1, 2, 4, 8, 16, 32, 64] };
        let mut v = Vec::new();
        for lock in ["busy", "block"] {
            for cores in 1..=cpus().min(4) as u64 {
                for n in counts {
                    v.push(params([("lock", lock.into()), ("cores", cores.into()), ("partitions", (*n).into())]));
                }
            }
        }
        v
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        // Measurements take turns with modules and tests (the machine lock).
        let _machine = crate::module_run::machine_lock()?;
        let lock = p["lock"].as_str().unwrap_or("busy").to_string();
        let cores = p["cores"].as_u64().unwrap_or(1) as usize;
        let n = p["partitions"].as_u64().unwrap_or(1) as usize;
        let exe = build_wl(&ctx.programs.exe, &ctx.scratch, 2)?;
        let shm = ctx.scratch.join("spin.shared");
        std::fs::write(&shm, vec![0u8; SHARED_BYTES]).map_err(|e| e.to_string())?;
        // Partitions run as their own uids (docs/isolation.md): the counter is theirs to write.
        std::fs::set_permissions(&shm, std::os::unix::fs::PermissionsExt::from_mode(0o666)).map_err(|e| e.to_string())?;
        let args = |who: usize, apex: bool| {
            let mut a: Vec<String> =
                ["spin", "--shm", &shm.display().to_string(), "--lock", &lock, "--n", &ITERATIONS.to_string(), "--who", &who.to_string()]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
            if apex {
                a.push("--apex".into());
            }
            a
        };
        ctx.progress(&format!("{lock} lock, {n} partitions on {cores} core(s)"));
        let out = if ctx.backend == Backend::Native {
            let outs: Vec<Result<String, String>> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..n)
                    .map(|i| {
                        let a = args(i, false);
                        let exe = &exe;
                        s.spawn(move || run_native(exe, &a, Some(i % cores)))
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("panicked".into()))).collect()
            });
            outs.into_iter().collect::<Result<Vec<_>, _>>()?.join("")
        } else {
            let per_core = n.div_ceil(cores);
            let parts: Vec<Part> = (0..n)
                .map(|i| Part {
                    name: format!("S{i}"),
                    core: (i % cores) as u32,
                    windows: vec![((i / cores) as f64 * SLOT_S, SLOT_S)],
                    exe: exe.clone(),
                    args: args(i, true),
                    period_s: None,
                })
                .collect();
            let xml = module_xml("Spinlock", per_core as f64 * SLOT_S, cpus(), &parts);
            run_module(&ctx.programs.exe, &ctx.scratch, &xml, n, Duration::from_secs(60 + 2 * n as u64))?
        };
        let lines: Vec<_> = parse_lines(&out).into_iter().filter(|l| l.kernel == "spin").collect();
        if lines.len() != n {
            return Err(format!("{} of {n} partitions reported", lines.len()));
        }
        let start = lines.iter().filter_map(|l| l.num("start")).fold(f64::INFINITY, f64::min);
        let end = lines.iter().filter_map(|l| l.num("end")).fold(f64::NEG_INFINITY, f64::max);
        ctx.sample("total_ns", Unit::Ns, end - start);
        ctx.samples("partition_ns", Unit::Ns, lines.iter().filter_map(|l| l.num("ns")));
        let shared = std::fs::read(&shm).map_err(|e| e.to_string())?;
        let counter = u64::from_le_bytes(shared[64..72].try_into().map_err(|_| "short shared file")?);
        if counter != n as u64 * ITERATIONS as u64 {
            return Err(format!("the lock let updates through unprotected: counter {counter}, expected {}", n as u64 * ITERATIONS as u64));
        }
        ctx.sample("counter", Unit::Count, counter as f64);
        Ok(())
    }
}

/// seed 000 Table 7: total time (ms) per number of partitions, per lock and cores.
fn section(e: &dyn Experiment, data: &ExperimentData, p: &Published) -> String {
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
