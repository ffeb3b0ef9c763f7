//! Running a module for an experiment: a configuration built from a [`ModuleSpec`], run by the
//! `partita run` binary (the product itself, its output kept apart from the bench's own) with a
//! trace and per-partition logs, holding the machine lock so two modules never run at once.

use crate::experiment::RunContext;
use crate::workload::{parse_samples, xml_escape};
use partita_trace::{Event, read_trace};
use std::path::PathBuf;
use std::time::Instant;

/// The lock file shared with the tests that run modules (crates/cli/tests/machine/mod.rs).
pub const MACHINE_LOCK: &str = "/tmp/partita-test-module.lock";

/// Holds the machine (no other module, test or bench) while alive.
pub fn machine_lock() -> Result<std::fs::File, String> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(MACHINE_LOCK)
        .map_err(|e| format!("cannot open {MACHINE_LOCK}: {e}"))?;
    f.lock().map_err(|e| format!("cannot lock {MACHINE_LOCK}: {e}"))?;
    Ok(f)
}

/// One window: start and duration in ns from the major frame start, module core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub start_ns: i64,
    pub duration_ns: i64,
    pub core: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PartitionSpec {
    pub name: String,
    /// Workload name and arguments (`partita bench-partition NAME ARGS`).
    pub workload: String,
    pub args: Vec<String>,
    pub windows: Vec<Window>,
}

/// A module with one schedule whose partitions' period is the major frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleSpec {
    pub name: String,
    /// Host CPUs of the module cores (`pt:Cores Cpus`), e.g. "0-1".
    pub cpus: String,
    pub major_frame_ns: i64,
    pub partitions: Vec<PartitionSpec>,
}

/// Decimal seconds, exact for whole nanoseconds.
pub fn seconds(ns: i64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

impl ModuleSpec {
    pub fn xml(&self, programs: &crate::workload::Programs) -> String {
        let mut x = format!(
            "<ARINC_653_Module ModuleName=\"{}\" xmlns:pt=\"urn:partita:1\">\n  <pt:Cores Cpus=\"{}\"/>\n",
            xml_escape(&self.name),
            self.cpus
        );
        for (i, p) in self.partitions.iter().enumerate() {
            let args: Vec<&str> = p.args.iter().map(String::as_str).collect();
            x += &format!(
                "  <Partition PartitionIdentifier=\"{}\" PartitionName=\"{}\" {}/>\n",
                i + 1,
                xml_escape(&p.name),
                programs.xml_attributes(&p.workload, &args)
            );
        }
        x += &format!(
            "  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"bench\" MajorFrameSeconds=\"{}\">\n",
            seconds(self.major_frame_ns)
        );
        for (i, p) in self.partitions.iter().enumerate() {
            let total: i64 = p.windows.iter().map(|w| w.duration_ns).sum();
            x += &format!(
                "    <Partition_Schedule PartitionIdentifier=\"{}\" PeriodSeconds=\"{}\" PeriodDurationSeconds=\"{}\">\n",
                i + 1,
                seconds(self.major_frame_ns),
                seconds(total)
            );
            for (w, win) in p.windows.iter().enumerate() {
                x += &format!(
                    "      <Window_Schedule WindowIdentifier=\"{}\" WindowStartSeconds=\"{}\" WindowDurationSeconds=\"{}\" pt:Core=\"{}\"/>\n",
                    w + 1,
                    seconds(win.start_ns),
                    seconds(win.duration_ns),
                    win.core
                );
            }
            x += "    </Partition_Schedule>\n";
        }
        x += "  </Module_Schedule>\n</ARINC_653_Module>\n";
        x
    }
}

/// What a module run left behind.
pub struct ModuleRun {
    pub events: Vec<Event>,
    pub log_dir: PathBuf,
    /// CLOCK_MONOTONIC ns just before `partita run` was started.
    pub spawned_monotonic_ns: i64,
    /// CLOCK_MONOTONIC ns of the module epoch (trace time 0).
    pub epoch_monotonic_ns: i64,
    pub stdout: String,
    pub stderr: String,
}

impl ModuleRun {
    pub fn log(&self, partition: &str) -> String {
        std::fs::read_to_string(self.log_dir.join(format!("{partition}.log"))).unwrap_or_default()
    }

    /// The `sample METRIC VALUE` lines a partition printed.
    pub fn samples(&self, partition: &str) -> Vec<(String, f64)> {
        parse_samples(&self.log(partition))
    }
}

/// The module's clock (CLOCK_MONOTONIC ns, the time base of traces and GET_TIME).
pub use partita_module::backend::rt::now_ns as monotonic_ns;

/// Runs `spec` for `frames` major frames with `partita run`.
pub fn run_module(ctx: &RunContext, spec: &ModuleSpec, frames: u64) -> Result<ModuleRun, String> {
    run_module_watching(ctx, spec, frames, &mut |_| {})
}

/// [`run_module`], calling `watch` with the pid of `partita run` every 20 ms while it runs.
pub fn run_module_watching(ctx: &RunContext, spec: &ModuleSpec, frames: u64, watch: &mut dyn FnMut(u32)) -> Result<ModuleRun, String> {
    if !crate::machine::privileged() {
        return Err("running a module needs root (cgroups, real-time priorities)".into());
    }
    let dir = ctx.scratch.join(format!("{}-{}", spec.name, monotonic_ns()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let config = dir.join("module.xml");
    std::fs::write(&config, spec.xml(ctx.programs)).map_err(|e| format!("{}: {e}", config.display()))?;
    let trace = dir.join("run.trace");
    let log_dir = dir.join("logs");
    let _machine = machine_lock()?;
    let timeout = std::time::Duration::from_nanos((spec.major_frame_ns as u64).saturating_mul(frames)) + std::time::Duration::from_secs(60);
    let spawned_monotonic_ns = monotonic_ns();
    let started = Instant::now();
    let mut module = ModuleChild(
        std::process::Command::new(&ctx.programs.exe)
            .arg("run")
            .arg(&config)
            .args(["--frames", &frames.to_string(), "--trace"])
            .arg(&trace)
            .arg("--logs")
            .arg(&log_dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", ctx.programs.exe.display()))?,
    );
    let child = &mut module.0;
    // Drain both pipes in threads so a chatty module cannot block on a full pipe.
    let out = child.stdout.take().map(|mut s| std::thread::spawn(move || read_all(&mut s)));
    let err = child.stderr.take().map(|mut s| std::thread::spawn(move || read_all(&mut s)));
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if started.elapsed() > timeout {
            drop(module);
            return Err(format!("partita run {} did not end within {timeout:?}", config.display()));
        }
        watch(child.id());
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    if !status.success() {
        return Err(format!("partita run {} failed ({status}):\n{}", config.display(), tail(&stderr, 10)));
    }
    let file = std::fs::File::open(&trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let events = read_trace(std::io::BufReader::new(file)).map_err(|e| format!("{}: {e}", trace.display()))?;
    let epoch_monotonic_ns = events
        .iter()
        .find_map(|e| if let Event::ModuleStart { epoch_monotonic_ns, .. } = e { Some(*epoch_monotonic_ns) } else { None })
        .ok_or("the trace has no module_start")?;
    Ok(ModuleRun { events, log_dir, spawned_monotonic_ns, epoch_monotonic_ns, stdout, stderr })
}

/// `partita run` as the bench's child, stopped when the bench leaves it early (an error, a
/// panic, a run past its time): SIGTERM, whose path demotes real-time partitions before killing
/// them, then SIGKILL after 30 s.
pub struct ModuleChild(pub std::process::Child);

impl Drop for ModuleChild {
    fn drop(&mut self) {
        if !matches!(self.0.try_wait(), Ok(None)) {
            return;
        }
        // SAFETY: kill(2) of our own child, not reaped yet (try_wait saw it running).
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        while matches!(self.0.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The last `n` lines of `text` (error messages quote a module's stderr).
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn read_all(r: &mut impl std::io::Read) -> String {
    let mut v = Vec::new();
    let _ = r.read_to_end(&mut v);
    String::from_utf8_lossy(&v).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Programs;

    #[test]
    fn a_generated_configuration_is_valid() {
        let spec = ModuleSpec {
            name: "T".into(),
            cpus: "0-1".into(),
            major_frame_ns: 20_000_000,
            partitions: vec![
                PartitionSpec {
                    name: "A".into(),
                    workload: "idle".into(),
                    args: vec![],
                    windows: vec![Window { start_ns: 0, duration_ns: 10_000_000, core: 0 }],
                },
                PartitionSpec {
                    name: "B".into(),
                    workload: "idle".into(),
                    args: vec!["1".into()],
                    windows: vec![
                        Window { start_ns: 10_000_000, duration_ns: 10_000_000, core: 0 },
                        Window { start_ns: 0, duration_ns: 5_000_000, core: 1 },
                    ],
                },
            ],
        };
        Programs::checked_module_xml(|p| spec.xml(p));
        assert_eq!(seconds(1_500_000), "0.001500000");
    }
}
