//! The C workloads of `crates/bench/workloads` (one program, `wl KERNEL ...`): built at run time
//! with `cc` at the optimization level an experiment asks for, run natively (pinned with
//! `taskset`) or as partitions of a generated module under `partita run`, and their
//! `wl KERNEL key=value ...` result lines parsed back.
//! Shared by the experiments that run `wl` (native-vs-partition, overlap, spinlock, release,
//! memlat) and coloring; what one experiment alone runs (the coloring program's build, each
//! experiment's module and arguments) is in that experiment's file.

use crate::module_run::{Launch, Watcher, run_watched};
use crate::module_xml::{ModuleXml, Scheduled, XmlWindow};
use crate::workload::xml_escape;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const KERNELS_H: &str = include_str!("../../workloads/kernels.h");
const KERNELS_C: &str = include_str!("../../workloads/kernels.c");
const WL_C: &str = include_str!("../../workloads/wl.c");
const ARINC653_H: &str = include_str!("../../../../include/ARINC653.h");

/// The directory holding `libpartita_apex.a`: next to the `partita` binary (cargo build), or
/// the newest `deps/libpartita_apex-HASH.a` under it (cargo test).
fn apex_library(partita: &Path, scratch: &Path) -> Result<PathBuf, String> {
    let dir = partita.parent().ok_or("partita binary has no directory")?;
    if dir.join("libpartita_apex.a").is_file() {
        return Ok(dir.to_path_buf());
    }
    let deps = if dir.ends_with("deps") { dir.to_path_buf() } else { dir.join("deps") };
    let newest = std::fs::read_dir(&deps)
        .map_err(|e| format!("no libpartita_apex.a next to {} ({e}); run `cargo build --release`", partita.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.starts_with("libpartita_apex-") && n.ends_with(".a")
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .ok_or_else(|| format!("no libpartita_apex.a next to {}; run `cargo build --release`", partita.display()))?;
    let lib = scratch.join("lib");
    std::fs::create_dir_all(&lib).map_err(|e| e.to_string())?;
    std::fs::copy(newest.path(), lib.join("libpartita_apex.a")).map_err(|e| e.to_string())?;
    Ok(lib)
}

/// Builds `wl` at `-O{level}` (0..=3) into `scratch`; the APEX library is linked so the same
/// binary runs natively and, with `--apex`, as a partition.
pub fn build_wl(partita: &Path, scratch: &Path, level: u8) -> Result<PathBuf, String> {
    let src = scratch.join("wl-src");
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    for (name, text) in [("kernels.h", KERNELS_H), ("kernels.c", KERNELS_C), ("wl.c", WL_C), ("ARINC653.h", ARINC653_H)] {
        std::fs::write(src.join(name), text).map_err(|e| e.to_string())?;
    }
    let lib = apex_library(partita, scratch)?;
    let out = scratch.join(format!("wl-O{level}"));
    let status = Command::new("cc")
        .arg(format!("-O{level}"))
        .arg("-I")
        .arg(&src)
        .args([src.join("wl.c"), src.join("kernels.c")])
        .arg("-L")
        .arg(&lib)
        .args(["-lpartita_apex", "-lpthread", "-o"])
        .arg(&out)
        .status()
        .map_err(|e| format!("cannot run cc: {e} (apt-get install gcc)"))?;
    if !status.success() {
        return Err(format!("cc failed building the workloads at -O{level}"));
    }
    Ok(out)
}

/// One `wl KERNEL key=value ...` line; `partition` is the `[NAME]` prefix of module output.
#[derive(Debug, Clone, PartialEq)]
pub struct WlLine {
    pub partition: String,
    pub kernel: String,
    pub fields: BTreeMap<String, String>,
}

impl WlLine {
    pub fn num(&self, key: &str) -> Option<f64> {
        self.fields.get(key)?.parse().ok()
    }
}

/// The result lines of a workload's output (native or `partita run` with `[NAME] ` prefixes).
pub fn parse_lines(output: &str) -> Vec<WlLine> {
    output
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let (partition, rest) = match l.strip_prefix('[') {
                Some(r) => {
                    let (p, rest) = r.split_once("] ")?;
                    (p.to_string(), rest)
                }
                None => (String::new(), l),
            };
            let mut words = rest.strip_prefix("wl ")?.split_whitespace();
            let kernel = words.next()?.to_string();
            let fields = words.filter_map(|w| w.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect();
            Some(WlLine { partition, kernel, fields })
        })
        .collect()
}

/// Runs a program natively, pinned to `cpu` when given; returns its stdout.
pub fn run_native(exe: &Path, args: &[String], cpu: Option<usize>) -> Result<String, String> {
    native(exe, args, cpu, false)
}

/// [`run_native`] at real-time priority (SCHED_FIFO 50, as root), as partitions' processes run:
/// a baseline that ordinary load on the machine does not preempt either. Not for programs that
/// spin on each other on one CPU (FIFO spinners never yield).
pub fn run_native_rt(exe: &Path, args: &[String], cpu: Option<usize>) -> Result<String, String> {
    native(exe, args, cpu, crate::machine::privileged())
}

/// [`run_native`] as a partition's thread runs: pinned to `cpu` at SCHED_FIFO `priority` (as
/// root), set before exec. The caller holds the partition's other conditions
/// (`crate::conditions::Conditions`).
pub fn run_native_at(exe: &Path, args: &[String], cpu: u32, priority: i32) -> Result<String, String> {
    let mut c = Command::new(exe);
    crate::conditions::realtime(&mut c, priority, &[cpu]);
    let out = c.args(args).stderr(Stdio::inherit()).output().map_err(|e| format!("{}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("{} {} failed: {}", exe.display(), args.join(" "), out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn native(exe: &Path, args: &[String], cpu: Option<usize>, realtime: bool) -> Result<String, String> {
    let mut prefix: Vec<String> = Vec::new();
    if realtime {
        prefix.extend(["chrt", "-f", "50"].map(String::from));
    }
    if let Some(cpu) = cpu {
        prefix.extend(["taskset".to_string(), "-c".to_string(), cpu.to_string()]);
    }
    let mut c = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    let out = c.args(args).stderr(Stdio::inherit()).output().map_err(|e| format!("{}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("{} {} failed: {}", exe.display(), args.join(" "), out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A program started in the background (an aggressor), ended when dropped.
pub struct Background(std::process::Child);

impl Background {
    pub fn start(exe: &Path, args: &[String], cpu: usize) -> Result<Background, String> {
        Command::new("taskset")
            .args(["-c", &cpu.to_string()])
            .arg(exe)
            .args(args)
            .stdout(Stdio::null())
            .spawn()
            .map(Background)
            .map_err(|e| format!("taskset {}: {e}", exe.display()))
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A partition of a generated module: its program and its windows (start, duration) in seconds.
#[derive(Clone)]
pub struct Part {
    pub name: String,
    pub core: u32,
    pub windows: Vec<(f64, f64)>,
    pub exe: PathBuf,
    pub args: Vec<String>,
    /// The partition's period (None: the major frame).
    pub period_s: Option<f64>,
}

/// A one-schedule module in which every partition's period is the major frame.
pub fn module_xml(name: &str, frame_s: f64, cores: usize, parts: &[Part]) -> String {
    let ns = |s: f64| (s * 1e9).round() as i64;
    let frame_ns = ns(frame_s);
    let mut m = ModuleXml::new(name, &format!("0-{}", cores - 1));
    for (i, p) in parts.iter().enumerate() {
        let attributes =
            format!("pt:Executable=\"{}\" pt:Arguments=\"{}\"", xml_escape(&p.exe.display().to_string()), xml_escape(&p.args.join(" ")));
        m.partition(i as u32 + 1, &p.name, &attributes, "");
    }
    let scheduled: Vec<Scheduled> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let period = p.period_s.unwrap_or(frame_s);
            let windows = p
                .windows
                .iter()
                .enumerate()
                .map(|(w, &(start, dur))| XmlWindow {
                    start_ns: ns(start),
                    duration_ns: ns(dur),
                    core: p.core,
                    // The first window of each partition period.
                    period_start: Some(((start / period) - (start / period).round()).abs() < 1e-9 || w == 0),
                })
                .collect();
            Scheduled { partition: i as u32 + 1, period_ns: ns(period), attributes: String::new(), windows }
        })
        .collect();
    m.schedule(1, "bench", frame_ns, false, &scheduled).finish()
}

/// `xml` with `scratch` bound writable, at its own path, into every partition: partitions see
/// the host's files read-only and their own `/tmp` (docs/isolation.md), so the files an
/// experiment shares with them (a spin-lock counter, a workload script) go through this bind.
pub fn sharing(xml: &str, scratch: &Path) -> String {
    let esc = |s: &str| s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    let d = esc(&scratch.display().to_string());
    let bind = format!("<pt:Mount Source=\"{d}\" Target=\"{d}\" Writable=\"true\"/>");
    xml.lines()
        .map(|l| match l.strip_suffix("/>") {
            Some(open) if l.trim_start().starts_with("<Partition ") => format!("{open}>{bind}</Partition>\n"),
            _ => format!("{l}\n"),
        })
        .collect()
}

/// Runs a module under `partita run` until `done` lines saying `wl done` arrived (then Ctrl-C,
/// a clean stop) or `limit` passed; returns the module's stdout (partition lines `[NAME] ...`).
/// The caller holds the machine lock.
pub fn run_module(partita: &Path, scratch: &Path, xml: &str, done: usize, limit: Duration) -> Result<String, String> {
    if !crate::machine::privileged() {
        return Err("running a module needs root (cgroups, real-time priorities)".into());
    }
    let config = scratch.join("module.xml");
    std::fs::write(&config, sharing(xml, scratch)).map_err(|e| e.to_string())?;
    // Partitions run as their own uids: they enter the shared scratch directory by its mode.
    std::fs::set_permissions(scratch, std::os::unix::fs::PermissionsExt::from_mode(0o711)).map_err(|e| e.to_string())?;
    /// Collects stdout and counts the workloads done; done when all are, or one failed.
    struct WlDone {
        text: String,
        seen: usize,
        failed: bool,
        done: usize,
    }
    impl Watcher for WlDone {
        fn line(&mut self, line: &str) {
            self.seen += usize::from(line.contains("] wl done"));
            self.failed |= line.contains("] wl error");
            self.text.push_str(line);
            self.text.push('\n');
        }
        fn done(&mut self) -> bool {
            self.seen >= self.done || self.failed
        }
    }
    let mut w = WlDone { text: String::new(), seen: 0, failed: false, done };
    let secs = limit.as_secs().max(1);
    let launch = Launch {
        exe: partita,
        config: &config,
        args: vec!["--duration".into(), format!("{secs}s").into()],
        expected: Duration::from_secs(secs),
        follow_trace: None,
        poll: Duration::from_millis(20),
    };
    let ended = run_watched(&launch, &mut w)?;
    if w.seen < done {
        return Err(format!(
            "module stopped after {:.1} s with {} of {done} workloads done ({}): {}{}",
            ended.seconds,
            w.seen,
            ended.status,
            w.text.lines().rev().take(5).collect::<Vec<_>>().join(" | "),
            ended.stderr_tail.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
        ));
    }
    Ok(w.text)
}

/// Online CPUs.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_are_parsed_with_and_without_a_partition_prefix() {
        let got = parse_lines("hello\nwl intmix rep=0 ns=12\n[P1] wl spin who=3 ns=5\n[P1] other\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].partition, "");
        assert_eq!(got[0].num("ns"), Some(12.0));
        assert_eq!(got[1].partition, "P1");
        assert_eq!(got[1].kernel, "spin");
        assert_eq!(got[1].num("who"), Some(3.0));
    }

    #[test]
    fn generated_modules_pass_the_configuration_check() {
        let parts = [
            Part { name: "A".into(), core: 0, windows: vec![(0.0, 0.02)], exe: "/bin/true".into(), args: vec!["x".into()], period_s: None },
            Part { name: "B".into(), core: 1, windows: vec![(0.0006, 0.02)], exe: "/bin/true".into(), args: vec![], period_s: None },
        ];
        let xml = module_xml("T", 0.05, 2, &parts);
        let checked = partita_config::check_text(&xml, Path::new("/"));
        assert!(checked.is_valid(), "{xml}\n{:?}", checked.diagnostics);
        // With the scratch directory shared: one writable bind per partition, still valid.
        let shared = sharing(&xml, Path::new("/var/tmp"));
        let checked = partita_config::check_text(&shared, Path::new("/"));
        assert!(checked.is_valid(), "{shared}\n{:?}", checked.diagnostics);
        let module = checked.module.unwrap();
        for p in &module.partitions {
            assert_eq!(p.mounts.len(), 1, "{shared}");
            assert!(p.mounts[0].writable && p.mounts[0].source.value == "/var/tmp" && p.mounts[0].target.value == "/var/tmp");
        }
    }
}
