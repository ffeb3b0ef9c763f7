//! `footprint`: binary sizes and resident memory of the module and of a partition, per
//! configuration (seed 000 Table 3).

use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::{ModuleSpec, PartitionSpec, Window, run_module_watching};
use crate::published::Published;
use crate::report::svg::{self, Axes, Series};
use crate::report::{ExperimentData, chart, notes, params_label, run_median, section_head, table};
use crate::stats::Summary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct Footprint;

/// A field of /proc/PID/status in bytes (`VmRSS`, `VmHWM`), if the process exists.
pub fn status_bytes(pid: u32, field: &str) -> Option<u64> {
    parse_status_kb(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?, field).map(|kb| kb * 1024)
}

/// `FIELD:   1234 kB` of a /proc status text, in kB.
pub fn parse_status_kb(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|l| l.strip_prefix(field)?.strip_prefix(':')?.split_whitespace().next()?.parse().ok())
}

/// Child pids of `pid` (all its threads' children).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .filter_map(|t| t.ok())
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|s| s.split_whitespace().filter_map(|x| x.parse().ok()).collect::<Vec<u32>>())
        .collect()
}

/// The static APEX library beside the binary (`cargo build` puts it there), if any.
fn apex_library(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    [dir.join("libpartita_apex.a"), dir.parent()?.join("libpartita_apex.a")].into_iter().find(|p| p.is_file())
}

impl Experiment for Footprint {
    fn name(&self) -> &'static str {
        "footprint"
    }
    fn reproduces(&self) -> &'static str {
        "seed 000 Table 3 (application image size per number of cores)"
    }
    fn description(&self) -> &'static str {
        "Sizes on disk of the `partita` binary (module manager, and the program of the bench's partitions) and of the static \
         APEX library a C partition links (when it is beside the binary); resident memory (VmRSS, sampled every 20 ms, \
         maximum kept) of the `partita run` process and of each partition process while a module of P idle partitions on \
         C cores runs for 2 s. Differs from seed 000: its figure is the size of a bare-metal Dhrystone image with the \
         hypervisor on a LEON/GR740; here partitions are Linux processes, so memory is resident pages, shared library \
         pages included, and the partition program is the whole `partita` binary (most of it never paged in)."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let configs: &[(i64, i64)] = if quick { &[(1, 1), (2, 2), (8, 2)] } else { &[(1, 1), (2, 1), (2, 2), (4, 2), (8, 2), (16, 2)] };
        configs.iter().map(|&(p, c)| params([("partitions", p.into()), ("cores", c.into())])).collect()
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let n = p["partitions"].as_i64().unwrap_or(1).max(1) as usize;
        let cores = p["cores"].as_i64().unwrap_or(1).clamp(1, 2) as usize;
        let size = |path: &Path| std::fs::metadata(path).map(|m| m.len() as f64).ok();
        if let Some(s) = size(&ctx.programs.exe) {
            ctx.sample("partita_binary_bytes", Unit::Bytes, s);
        }
        match apex_library(&ctx.programs.exe).and_then(|p| size(&p)) {
            Some(s) => ctx.sample("apex_static_library_bytes", Unit::Bytes, s),
            None => ctx.note("libpartita_apex.a is not beside the binary (cargo build --release puts it there); its size is not measured"),
        }
        let window = 5_000_000;
        let per_core = n.div_ceil(cores) as i64;
        let maf = per_core * window;
        let spec = ModuleSpec {
            name: "Footprint".into(),
            cpus: if cores == 1 { "0".into() } else { "0-1".into() },
            major_frame_ns: maf,
            partitions: (0..n)
                .map(|i| PartitionSpec {
                    name: format!("F{}", i + 1),
                    workload: "idle".into(),
                    args: vec![],
                    windows: vec![Window { start_ns: (i / cores) as i64 * window, duration_ns: window, core: (i % cores) as u32 }],
                })
                .collect(),
        };
        ctx.progress(&format!("{n} partitions on {cores} core(s)"));
        let mut module_rss = 0u64;
        let mut partition_rss: BTreeMap<u32, u64> = BTreeMap::new();
        let mut watch = |pid: u32| {
            module_rss = module_rss.max(status_bytes(pid, "VmRSS").unwrap_or(0));
            for c in children(pid) {
                // A process that is exiting has no VmRSS line: not counted.
                if let Some(rss) = status_bytes(c, "VmRSS").filter(|&r| r > 0) {
                    let e = partition_rss.entry(c).or_insert(0);
                    *e = (*e).max(rss);
                }
            }
        };
        run_module_watching(ctx, &spec, (2_000_000_000 / maf).max(10) as u64, &mut watch)?;
        if module_rss == 0 {
            return Err("could not read the module's resident memory".into());
        }
        ctx.sample("module_rss_bytes", Unit::Bytes, module_rss as f64);
        ctx.samples("partition_rss_bytes", Unit::Bytes, partition_rss.values().map(|&v| v as f64));
        ctx.sample("total_rss_bytes", Unit::Bytes, (module_rss + partition_rss.values().sum::<u64>()) as f64);
        Ok(())
    }
    fn report(&self, data: &ExperimentData, published: &Published) -> String {
        section(self, data, published)
    }
}

/// The report section: binary sizes and resident memory, beside seed 000's image sizes.
fn section(e: &dyn Experiment, data: &ExperimentData, published: &Published) -> String {
    let mut h = section_head(e, data);
    let kib = |v: f64| format!("{:.0}", v / 1024.0);
    let mut rows = vec![vec![
        "configuration".to_string(),
        "partita binary (KiB)".into(),
        "APEX static library (KiB)".into(),
        "module RSS (KiB)".into(),
        "partition RSS median (KiB)".into(),
        "total RSS (KiB)".into(),
    ]];
    for r in &data.runs {
        let m = |k: &str| r.point.metrics.get(k).and_then(|m| Summary::of(&m.samples)).map(|s| kib(s.median)).unwrap_or("-".into());
        rows.push(vec![
            params_label(r),
            m("partita_binary_bytes"),
            m("apex_static_library_bytes"),
            m("module_rss_bytes"),
            m("partition_rss_bytes"),
            m("total_rss_bytes"),
        ]);
    }
    h += &table(&rows);
    if let Some(cores) = published.numbers("seed000_footprint", "cores") {
        let mut rows = vec![vec!["cores".to_string(), "PikeOS GR740 (KiB)".into(), "XtratuM GR740 (KiB)".into()]];
        let (p, x) = (
            published.numbers("seed000_footprint", "pikeos_gr740").unwrap_or_default(),
            published.numbers("seed000_footprint", "xtratum_gr740").unwrap_or_default(),
        );
        for (i, c) in cores.iter().enumerate() {
            rows.push(vec![
                c.to_string(),
                p.get(i).map(|v| kib(*v)).unwrap_or("-".into()),
                x.get(i).map(|v| kib(*v)).unwrap_or("-".into()),
            ]);
        }
        h += &format!("<p>Published ({}): image sizes.</p>", crate::report::esc(&published.source("seed000_footprint")));
        h += &table(&rows);
    }
    let cats: Vec<String> = data.runs.iter().map(params_label).collect();
    let bar = |k: &str, label: &str| {
        Series::new(
            label,
            data.runs.iter().enumerate().map(|(i, r)| (i as f64, run_median(r, k).map(|v| v / 1024.0).unwrap_or(f64::NAN))).collect(),
        )
    };
    h += &chart(&svg::bar_chart(
        &Axes::new("Resident memory per configuration", "", "KiB"),
        &cats,
        &[bar("module_rss_bytes", "module"), bar("partition_rss_bytes", "partition (median)"), bar("total_rss_bytes", "total")],
    ));
    h += &notes(data);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_in_kb() {
        let s = "Name:\tpartita\nVmHWM:\t   5120 kB\nVmRSS:\t   4096 kB\n";
        assert_eq!(parse_status_kb(s, "VmRSS"), Some(4096));
        assert_eq!(parse_status_kb(s, "VmHWM"), Some(5120));
        assert_eq!(parse_status_kb(s, "VmSwap"), None);
        assert!(status_bytes(std::process::id(), "VmRSS").unwrap() > 0);
    }
}
