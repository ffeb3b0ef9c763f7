//! `partita run` and `partita demo`: run a module, show partition output live, then a summary.

use crate::check::{load, print_diagnostics};
use crate::exit;
use partita_module::hm::code_by_name;
use partita_module::run::{InjectSpec, RunOptions, RunReport, run};
use partita_module::run_state::RunState;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// "10s", "500ms", "2m", "1.5" (seconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, scale) = if let Some(v) = s.strip_suffix("ms") {
        (v, 1e-3)
    } else if let Some(v) = s.strip_suffix('s') {
        (v, 1.0)
    } else if let Some(v) = s.strip_suffix('m') {
        (v, 60.0)
    } else if let Some(v) = s.strip_suffix('h') {
        (v, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("{s:?} is not a duration (for example 10s, 500ms, 2m)"))?;
    if !(v.is_finite() && v > 0.0) || v * scale > 1e9 {
        return Err(format!("{s:?} is not a positive duration"));
    }
    Ok(Duration::from_secs_f64(v * scale))
}

/// `PARTITION:ERROR_CODE@TIME`, e.g. `Faulty:MEMORY_VIOLATION@2s`.
pub fn parse_inject(s: &str) -> Result<InjectSpec, String> {
    let form = "expected PARTITION:ERROR_CODE@TIME, e.g. Faulty:MEMORY_VIOLATION@2s";
    let (partition, rest) = s.rsplit_once(':').ok_or_else(|| format!("{s:?}: {form}"))?;
    let (code, time) = rest.split_once('@').ok_or_else(|| format!("{s:?}: {form}"))?;
    if partition.is_empty() {
        return Err(format!("{s:?}: no partition name; {form}"));
    }
    let code = code_by_name(code.trim()).ok_or_else(|| {
        format!(
            "{s:?}: unknown error code {code:?} (one of DEADLINE_MISSED, APPLICATION_ERROR, NUMERIC_ERROR, ILLEGAL_REQUEST, STACK_OVERFLOW, MEMORY_VIOLATION, HARDWARE_FAULT, POWER_FAILURE)"
        )
    })?;
    let at = parse_duration(time).map_err(|e| format!("{s:?}: bad time: {e}"))?;
    Ok(InjectSpec { partition: partition.to_string(), code, at })
}

pub struct RunArgs {
    pub file: PathBuf,
    pub duration: Option<Duration>,
    pub frames: Option<u64>,
    pub trace: Option<PathBuf>,
    pub logs: Option<PathBuf>,
    pub inject: Vec<InjectSpec>,
    pub live_status: bool,
    pub idle_poll: bool,
    pub keep_rt_throttling: bool,
    pub keep_cpu_latency: bool,
}

pub fn run_module(args: RunArgs) -> ExitCode {
    let checked = match load(&args.file) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let file = args.file.display().to_string();
    print_diagnostics(&file, &checked.diagnostics);
    let Some(module) = checked.module.as_ref().filter(|_| checked.is_valid()) else {
        eprintln!("partita: {file} is not a valid configuration; nothing runs");
        return exit::invalid();
    };
    if let Some(j) = args.inject.iter().find(|j| module.partition_by_name(&j.partition).is_none()) {
        let names: Vec<&str> = module.partitions.iter().map(|p| p.name.value.as_str()).collect();
        eprintln!("partita: --inject names partition {:?}, which {file} does not declare (partitions: {})", j.partition, names.join(", "));
        return exit::usage();
    }
    let on_tick: Option<partita_module::run::Tick> = if args.live_status { Some(Box::new(live_status)) } else { None };
    let opts = RunOptions {
        frames: args.frames,
        duration: args.duration,
        trace: args.trace.clone(),
        log_dir: args.logs.clone(),
        early_wake: None,
        on_tick,
        inject: args.inject,
        idle_poll: args.idle_poll,
        keep_rt_throttling: args.keep_rt_throttling,
        guardian: start_guardian(),
        keep_cpu_latency: args.keep_cpu_latency,
    };
    match run(module, &args.file, opts) {
        Ok(report) => {
            print_report(&report, args.trace.as_deref(), args.logs.as_deref());
            if report.module_fault {
                eprintln!("partita: the health monitor shut the module down (module-level fault)");
                return exit::invalid();
            }
            exit::ok()
        }
        Err(e) => {
            eprintln!("partita: {e}");
            exit::invalid()
        }
    }
}

/// Starts `partita __partita-guardian <our pid>` (backend::guardian): it cleans up the run's
/// partitions and cgroups if this process is killed. Without it (warning) partitions are
/// killed outright by the kernel when the module dies.
fn start_guardian() -> bool {
    let spawned = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .arg(GUARDIAN_COMMAND)
            .arg(std::process::id().to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
    });
    match spawned {
        // Never waited for: it outlives this process by design and is then reaped by init.
        Ok(_child) => true,
        Err(e) => {
            eprintln!(
                "partita: warning: cannot start the run's guardian process ({e}); if partita is killed, its partitions are killed by the kernel at their real-time priorities"
            );
            false
        }
    }
}

/// The hidden subcommand of the guardian (main.rs).
const GUARDIAN_COMMAND: &str = "__partita-guardian";

/// `partita __partita-guardian PID`.
pub fn guardian_main(module: &str) -> ExitCode {
    let Ok(pid) = module.parse::<i32>() else {
        eprintln!("partita guardian: {module:?} is not a pid");
        return exit::usage();
    };
    match partita_module::backend::guardian::guard(pid) {
        Ok(done) => {
            for d in done {
                eprintln!("partita guardian: module {pid} is gone; removed {d}");
            }
            exit::ok()
        }
        Err(e) => {
            eprintln!("partita guardian: {e}");
            exit::invalid()
        }
    }
}

fn live_status(state: &RunState) {
    let modes: Vec<String> = state
        .plan
        .partitions
        .iter()
        .zip(&state.partitions)
        .map(|(p, r)| {
            let mode = r.control.block().status.operating_mode.load(Ordering::Acquire);
            format!("{} {}", p.name, partita_module::partition_events::mode_name(mode))
        })
        .collect();
    say(format_args!("partita: frame {} | {}\n", state.frames.load(Ordering::Acquire), modes.join(", ")));
}

/// Writes to stdout, ignoring errors: a reader that went away (a closed pipe) must not stop or
/// panic a running module, whose partitions and cgroups it has to clean up.
fn say(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_fmt(args);
}

fn print_report(report: &RunReport, trace: Option<&Path>, logs: Option<&Path>) {
    let s = &report.summary;
    say(format_args!(
        "--- partita run summary ({}; stop/release by {}) ---\n",
        if report.interrupted { "interrupted" } else { "completed" },
        report.mechanism
    ));
    say(format_args!("{s}"));
    if let Some(t) = trace {
        say(format_args!("trace: {} (partita trace {} --summary | --perfetto OUT.json)\n", t.display(), t.display()));
    }
    if let Some(l) = logs {
        say(format_args!("partition logs: {}\n", l.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("abc").is_err());
        assert!(parse_duration("0").is_err());
    }

    #[test]
    fn injections() {
        let j = parse_inject("Faulty:MEMORY_VIOLATION@500ms").unwrap();
        assert_eq!(j, InjectSpec { partition: "Faulty".into(), code: 5, at: Duration::from_millis(500) });
        assert_eq!(parse_inject("A:B:POWER_FAILURE@2s").unwrap().partition, "A:B");
        assert!(parse_inject("Faulty:SEGFAULT@1s").unwrap_err().contains("unknown error code"));
        assert!(parse_inject("Faulty:MEMORY_VIOLATION").is_err());
        assert!(parse_inject("MEMORY_VIOLATION@1s").is_err());
        assert!(parse_inject(":MEMORY_VIOLATION@1s").is_err());
        assert!(parse_inject("Faulty:MEMORY_VIOLATION@soon").unwrap_err().contains("bad time"));
    }
}
