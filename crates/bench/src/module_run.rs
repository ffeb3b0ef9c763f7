//! Running a module for an experiment: a configuration built from a [`ModuleSpec`], run by the
//! `partita run` binary (the product itself, its output kept apart from the bench's own) with a
//! trace and per-partition logs, holding the machine lock so two modules never run at once.

use crate::experiment::RunContext;
use crate::module_xml::{ModuleXml, Scheduled, XmlWindow};
use crate::workload::parse_samples;
use partita_trace::{Event, read_trace};
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

pub use crate::module_xml::seconds;

impl ModuleSpec {
    pub fn xml(&self, programs: &crate::workload::Programs) -> String {
        let mut m = ModuleXml::new(&self.name, &self.cpus);
        for (i, p) in self.partitions.iter().enumerate() {
            let args: Vec<&str> = p.args.iter().map(String::as_str).collect();
            m.partition(i as u32 + 1, &p.name, &programs.xml_attributes(&p.workload, &args), "");
        }
        let scheduled: Vec<Scheduled> = self
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| Scheduled {
                partition: i as u32 + 1,
                period_ns: self.major_frame_ns,
                attributes: String::new(),
                windows: p
                    .windows
                    .iter()
                    .map(|w| XmlWindow { start_ns: w.start_ns, duration_ns: w.duration_ns, core: w.core, period_start: None })
                    .collect(),
            })
            .collect();
        m.schedule(1, "bench", self.major_frame_ns, false, &scheduled).finish()
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
    /// The module's start-up steps (trace times, before the epoch).
    pub startup: partita_trace::StartupTimes,
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
    struct Collect<'w> {
        stdout: String,
        watch: &'w mut dyn FnMut(u32),
    }
    impl Watcher for Collect<'_> {
        fn line(&mut self, line: &str) {
            self.stdout.push_str(line);
            self.stdout.push('\n');
        }
        fn tick(&mut self, pid: u32) {
            (self.watch)(pid)
        }
    }
    let mut collect = Collect { stdout: String::new(), watch };
    let spawned_monotonic_ns = monotonic_ns();
    let launch = Launch {
        exe: &ctx.programs.exe,
        config: &config,
        args: [
            OsStr::new("--frames"),
            OsStr::new(&frames.to_string()),
            OsStr::new("--trace"),
            trace.as_os_str(),
            OsStr::new("--logs"),
            log_dir.as_os_str(),
        ]
        .map(OsString::from)
        .to_vec(),
        expected: Duration::from_nanos((spec.major_frame_ns as u64).saturating_mul(frames)),
        follow_trace: None,
        poll: Duration::from_millis(20),
    };
    let ended = run_watched(&launch, &mut collect)?;
    if ended.overran {
        return Err(format!("partita run {} did not end within {:?} (+{OVERRUN_GRACE:?})", config.display(), launch.expected));
    }
    if !ended.success {
        return Err(format!("partita run {} failed ({}):\n{}", config.display(), ended.status, tail(&ended.stderr_tail, 10)));
    }
    let file = std::fs::File::open(&trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let events = read_trace(std::io::BufReader::new(file)).map_err(|e| format!("{}: {e}", trace.display()))?;
    let (epoch_monotonic_ns, startup) = events
        .iter()
        .find_map(
            |e| if let Event::ModuleStart { epoch_monotonic_ns, startup, .. } = e { Some((*epoch_monotonic_ns, *startup)) } else { None },
        )
        .ok_or("the trace has no module_start")?;
    Ok(ModuleRun { events, log_dir, spawned_monotonic_ns, epoch_monotonic_ns, startup, stdout: collect.stdout, stderr: ended.stderr_tail })
}

/// What a watched run hands its output to.
pub trait Watcher {
    /// A line of `partita run`'s stdout (`[NAME] line` for a partition's output).
    fn line(&mut self, _line: &str) {}
    /// Trace events written since the last call (with [`Launch::follow_trace`]).
    fn events(&mut self, _events: &[Event]) {}
    /// A line of `partita run`'s own stderr (warnings, the summary).
    fn stderr_line(&mut self, _line: &str) {}
    /// Called at every poll while the run lasts, with the pid of `partita run` (e.g. to
    /// sample its memory).
    fn tick(&mut self, _pid: u32) {}
    /// True: the experiment has what it needs, the run is stopped (SIGTERM, a clean stop).
    fn done(&mut self) -> bool {
        false
    }
}

/// One `partita run CONFIG ARGS...` to watch (the caller holds the machine lock).
pub struct Launch<'a> {
    pub exe: &'a Path,
    pub config: &'a Path,
    /// `--duration` or `--frames`, and any other option of `partita run`.
    pub args: Vec<OsString>,
    /// How long the run should take; past this and [`OVERRUN_GRACE`] it is stopped (SIGTERM,
    /// then SIGKILL one more grace later).
    pub expected: Duration,
    /// The trace the run writes, handed to the watcher as it grows.
    pub follow_trace: Option<&'a Path>,
    /// How often output, trace and [`Watcher::tick`] are polled.
    pub poll: Duration,
}

impl<'a> Launch<'a> {
    /// `--duration SECSs --trace TRACE EXTRA...`, the trace followed, polled every 200 ms.
    pub fn for_duration(exe: &'a Path, config: &'a Path, secs: u64, trace: &'a Path, extra: &[String]) -> Launch<'a> {
        let mut args: Vec<OsString> = vec!["--duration".into(), format!("{secs}s").into(), "--trace".into(), trace.into()];
        args.extend(extra.iter().map(OsString::from));
        Launch { exe, config, args, expected: Duration::from_secs(secs), follow_trace: Some(trace), poll: Duration::from_millis(200) }
    }
}

/// How long a run may overrun its expected length before it is stopped.
pub const OVERRUN_GRACE: Duration = Duration::from_secs(60);

/// How a watched run ended.
pub struct Ended {
    pub status: std::process::ExitStatus,
    pub success: bool,
    /// The watcher had what it needed and the run was stopped early (SIGTERM).
    pub stopped_early: bool,
    /// It did not end in its expected time and was signalled.
    pub overran: bool,
    pub seconds: f64,
    /// The last lines of its stderr.
    pub stderr_tail: String,
    /// Lines of the followed trace that are no event this bench knows.
    pub trace_unparsed: u64,
}

/// Lines of stderr an [`Ended`] keeps (a long run's warnings are not held in memory).
const STDERR_LINES: usize = 200;

/// Runs `launch`, handing `w` the run's stdout lines and its trace as they come (so a run of
/// millions of messages is never held in memory), and stops it when `w` is done or when it
/// overruns. The one way the bench runs a module.
pub fn run_watched(launch: &Launch, w: &mut dyn Watcher) -> Result<Ended, String> {
    let mut child = ModuleChild(
        std::process::Command::new(launch.exe)
            .arg("run")
            .arg(launch.config)
            .args(&launch.args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", launch.exe.display()))?,
    );
    let c = &mut child.0;
    let pid = c.id();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let out = c.stdout.take().map(|s| {
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(s).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        })
    });
    let (err_tx, err_rx) = std::sync::mpsc::channel::<String>();
    let err = c.stderr.take().map(|s| {
        std::thread::spawn(move || {
            let mut lines: std::collections::VecDeque<String> = std::collections::VecDeque::new();
            for line in std::io::BufReader::new(s).lines().map_while(Result::ok) {
                if lines.len() == STDERR_LINES {
                    lines.pop_front();
                }
                let _ = err_tx.send(line.clone());
                lines.push_back(line);
            }
            Vec::from(lines).join("\n")
        })
    });
    let mut trace = launch.follow_trace.map(|t| TraceTail::new(t.to_path_buf()));
    let started = Instant::now();
    let (mut signalled, mut stopped_early) = (0, false);
    let status = loop {
        std::thread::sleep(launch.poll);
        for line in rx.try_iter() {
            w.line(&line);
        }
        for line in err_rx.try_iter() {
            w.stderr_line(&line);
        }
        if let Some(t) = &mut trace {
            w.events(&t.read_new());
        }
        if let Some(st) = c.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        w.tick(pid);
        if !stopped_early && w.done() {
            // SAFETY: kill(2) of our own child's pid, which is not reaped yet.
            unsafe { libc::kill(pid as i32, libc::SIGTERM) };
            stopped_early = true;
        }
        // A module that does not end is stopped, SIGTERM first (its own kill path demotes
        // real-time partitions before killing them).
        let over = started.elapsed().saturating_sub(launch.expected);
        if (over > OVERRUN_GRACE && signalled == 0) || (over > 2 * OVERRUN_GRACE && signalled == 1) {
            let sig = if signalled == 0 { libc::SIGTERM } else { libc::SIGKILL };
            // SAFETY: as above.
            unsafe { libc::kill(pid as i32, sig) };
            signalled += 1;
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    if let Some(h) = out {
        let _ = h.join();
    }
    for line in rx.try_iter() {
        w.line(&line);
    }
    if let Some(t) = &mut trace {
        w.events(&t.read_new());
    }
    let stderr_tail = err.and_then(|h| h.join().ok()).unwrap_or_default();
    for line in err_rx.try_iter() {
        w.stderr_line(&line);
    }
    let trace_unparsed = trace.map_or(0, |t| t.unparsed);
    Ok(Ended { status, success: status.success(), stopped_early, overran: signalled > 0, seconds, stderr_tail, trace_unparsed })
}

/// Reads a JSON Lines trace as `partita run` writes it: only whole lines, from where it left off.
pub struct TraceTail {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
    /// Lines that are no event this bench knows (counted, not fatal: the trace may grow kinds).
    pub unparsed: u64,
}

impl TraceTail {
    pub fn new(path: PathBuf) -> TraceTail {
        TraceTail { path, offset: 0, partial: Vec::new(), unparsed: 0 }
    }

    /// The events written since the last call (none while the file does not exist yet).
    pub fn read_new(&mut self) -> Vec<Event> {
        let Ok(mut f) = std::fs::File::open(&self.path) else { return Vec::new() };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return Vec::new();
        }
        let mut bytes = Vec::new();
        let Ok(n) = f.read_to_end(&mut bytes) else { return Vec::new() };
        self.offset += n as u64;
        self.partial.extend_from_slice(&bytes);
        let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') else { return Vec::new() };
        let whole: Vec<u8> = self.partial.drain(..=end).collect();
        let mut events = Vec::new();
        for line in whole.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            match serde_json::from_slice::<Event>(line) {
                Ok(e) => events.push(e),
                Err(_) => self.unparsed += 1,
            }
        }
        events
    }
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
        let deadline = Instant::now() + Duration::from_secs(30);
        while matches!(self.0.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
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
