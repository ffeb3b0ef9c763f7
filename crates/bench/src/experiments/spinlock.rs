//! `spinlock`: 10,000 lock / read / write / unlock iterations per partition over shared memory,
//! 1..64 partitions on 1..N cores, a busy (spinning) lock against a blocking (futex) lock.

use super::c_workloads::{Part, build_wl, cpus, module_xml, parse_lines, run_module, run_native};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
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
    fn report(&self, data: &crate::report::ExperimentData, published: &crate::published::Published) -> String {
        super::workload_sections::spinlock(self, data, published)
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
