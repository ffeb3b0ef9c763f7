//! One `partita run` watched while it runs, for the `faults` and `messages` experiments: its
//! `[NAME] line` output and its trace are handed over as they come (so a run of millions of
//! messages or thousands of faults is never held in memory), and it is stopped when the
//! experiment has what it needs or when it overruns its duration.

use super::soak_check::TraceTail;
use crate::module_run::{ModuleChild, tail};
use partita_trace::Event;
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a watched run ended.
pub struct Ended {
    pub success: bool,
    /// The experiment stopped it early (SIGTERM) because it had what it needed.
    pub stopped_early: bool,
    /// It did not end at its duration and was signalled.
    pub overran: bool,
    pub seconds: f64,
    pub stderr_tail: String,
}

/// What a watched run hands its output to.
pub trait Watcher {
    /// A line of `partita run`'s stdout (`[NAME] line` for a partition's output).
    fn line(&mut self, line: &str);
    /// Trace events written since the last call.
    fn events(&mut self, events: &[Event]);
    /// True: the experiment has what it needs, the run is stopped (SIGTERM).
    fn done(&mut self) -> bool {
        false
    }
}

/// Runs `exe run CONFIG --duration SECSs --trace TRACE EXTRA...` (the caller holds the machine
/// lock), handing `w` its stdout lines and its trace as it grows, every 200 ms.
pub fn run_watched(exe: &Path, config: &Path, trace: &Path, secs: u64, extra: &[String], w: &mut dyn Watcher) -> Result<Ended, String> {
    let mut child = ModuleChild(
        Command::new(exe)
            .arg("run")
            .arg(config)
            .args(["--duration", &format!("{secs}s"), "--trace"])
            .arg(trace)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?,
    );
    let c = &mut child.0;
    let pid = c.id();
    let (tx, rx) = mpsc::channel::<String>();
    let out = c.stdout.take().map(|s| {
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(s).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        })
    });
    let err = c.stderr.take().map(|s| {
        std::thread::spawn(move || {
            let mut lines: Vec<String> = Vec::new();
            for line in std::io::BufReader::new(s).lines().map_while(Result::ok) {
                lines.push(line);
                if lines.len() > 200 {
                    lines.drain(..100);
                }
            }
            lines.join("\n")
        })
    });
    let mut reader = TraceTail::new(trace.to_path_buf());
    let started = Instant::now();
    let (mut signalled, mut stopped_early) = (0, false);
    let status = loop {
        std::thread::sleep(Duration::from_millis(200));
        for line in rx.try_iter() {
            w.line(&line);
        }
        w.events(&reader.read_new());
        if let Some(st) = c.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if !stopped_early && w.done() {
            // SAFETY: kill(2) of our own child's pid, which is not reaped yet.
            unsafe { libc::kill(pid as i32, libc::SIGTERM) };
            stopped_early = true;
        }
        // Ends by --duration; a module that does not is stopped, SIGTERM first (its own kill
        // path demotes real-time partitions before killing them).
        let over = started.elapsed().as_secs_f64() - secs as f64;
        if (over > 60.0 && signalled == 0) || (over > 120.0 && signalled == 1) {
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
    w.events(&reader.read_new());
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(Ended { success: status.success(), stopped_early, overran: signalled > 0, seconds, stderr_tail: tail(&stderr, 10) })
}
