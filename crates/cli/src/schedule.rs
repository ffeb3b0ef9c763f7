//! `partita schedule`: per-core timelines, utilization and gaps; SVG Gantt; synthesis.

use crate::check::{load, print_diagnostics};
use crate::{exit, gantt};
use partita_config::analysis::{self, ScheduleAnalysis};
use partita_config::diag::Diagnostic;
use partita_config::model::CorePolicy;
use partita_config::synth::{self, SynthError};
use partita_config::time::Nanos;
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

/// The `--json` document of `partita schedule` (schema "partita-schedule/1").
#[derive(Serialize)]
struct ScheduleReport<'a> {
    schema: &'static str,
    file: String,
    valid: bool,
    diagnostics: &'a [Diagnostic],
    schedules: Vec<ScheduleAnalysis>,
}

pub fn run(path: &Path, svg: Option<&Path>, json: bool) -> ExitCode {
    let checked = match load(path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let file = path.display().to_string();
    let schedules = checked.module.as_ref().map(analysis::analyze).unwrap_or_default();
    let valid = checked.is_valid();
    if json {
        let report = ScheduleReport {
            schema: "partita-schedule/1",
            file: file.clone(),
            valid,
            diagnostics: &checked.diagnostics,
            schedules: schedules.clone(),
        };
        println!("{}", serde_json::to_string_pretty(&report).expect("serializable"));
    } else {
        print_diagnostics(&file, &checked.diagnostics);
        for s in &schedules {
            print_schedule(s);
        }
    }
    if let (Some(out), Some(module)) = (svg, &checked.module) {
        let drawing = gantt::render(&module.name.value, &schedules);
        if let Err(e) = std::fs::write(out, drawing) {
            eprintln!("partita: cannot write {}: {e}", out.display());
            return exit::usage();
        }
        if !json {
            println!("wrote {}", out.display());
        }
    }
    if valid { exit::ok() } else { exit::invalid() }
}

fn print_schedule(s: &ScheduleAnalysis) {
    let initial = if s.initial { " (initial)" } else { "" };
    println!("schedule {} \"{}\"{initial}: major frame {}", s.id, s.name, s.major_frame_ns);
    for core in &s.cores {
        println!("  core {} (CPU {}, {}):", core.core, core.cpu, core.policy.as_str());
        if core.policy == CorePolicy::FixedPriority {
            for (p, prio) in &core.priorities {
                println!("    partition {p} at priority {prio}");
            }
            continue;
        }
        // Windows and gaps interleaved in time order.
        let mut rows: Vec<(Nanos, Nanos, String)> = core
            .windows
            .iter()
            .map(|w| (w.start_ns, w.end_ns, format!("{} (partition {}, window {})", w.partition_name, w.partition, w.window)))
            .chain(core.gaps.iter().map(|g| (g.start_ns, g.end_ns, "idle".to_string())))
            .collect();
        rows.sort_by_key(|r| (r.0, r.1));
        for (start, end, what) in rows {
            println!("    {:>12} .. {:>12}  {what}", start.to_string(), end.to_string());
        }
        let idle: i64 = core.gaps.iter().map(|g| g.end_ns.0 - g.start_ns.0).sum();
        println!("    utilization {:.1} %, idle {} in {} gap(s)", core.utilization * 100.0, Nanos(idle), core.gaps.len());
    }
    println!("  partitions:");
    println!(
        "    {:>4}  {:<16} {:>10} {:>10} {:>12} {:>9} {:>9}  cores",
        "id", "name", "period", "duration", "window time", "util", "required"
    );
    for p in &s.partitions {
        let cores: Vec<String> = p.cores.iter().map(u32::to_string).collect();
        println!(
            "    {:>4}  {:<16} {:>10} {:>10} {:>12} {:>8.1}% {:>8.1}%  {}",
            p.id,
            p.name,
            p.period_ns.to_string(),
            p.duration_ns.to_string(),
            p.window_ns.to_string(),
            p.utilization * 100.0,
            p.required_utilization * 100.0,
            cores.join(",")
        );
    }
}

pub fn synthesize(request: &Path, output: &Path, json: bool) -> ExitCode {
    let bytes = match std::fs::read(request) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("partita: cannot read {}: {e}", request.display());
            return exit::usage();
        }
    };
    let file = request.display().to_string();
    let text = match partita_config::source::decode(&bytes) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{file}:{}: error: {}", e.span, e.message);
            return exit::invalid();
        }
    };
    let base = request.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let result = match synth::synthesize(&text, base) {
        Ok(r) => r,
        Err(SynthError::NotAModule(diagnostics)) => {
            if json {
                let doc = serde_json::json!({
                    "schema": "partita-synthesis/1", "file": file, "output": null, "schedulable": false,
                    "reasons": ["the request is not a usable module configuration (see diagnostics)"], "report": [], "cores": [], "diagnostics": diagnostics,
                });
                println!("{}", serde_json::to_string_pretty(&doc).expect("serializable"));
                return exit::invalid();
            }
            print_diagnostics(&file, &diagnostics);
            eprintln!("partita: {file} is not a usable request; nothing written");
            return exit::invalid();
        }
    };
    if json {
        #[derive(Serialize)]
        struct SynthReport<'a> {
            schema: &'static str,
            file: &'a str,
            output: Option<String>,
            schedulable: bool,
            /// Why not, when not schedulable (also in `report`).
            reasons: &'a [String],
            report: &'a [String],
            cores: &'a [synth::CoreAssignment],
        }
        let out = result.schedulable.then(|| output.display().to_string());
        let doc = SynthReport {
            schema: "partita-synthesis/1",
            file: &file,
            output: out,
            schedulable: result.schedulable,
            reasons: &result.reasons,
            report: &result.report,
            cores: &result.cores,
        };
        println!("{}", serde_json::to_string_pretty(&doc).expect("serializable"));
    } else {
        for line in &result.report {
            println!("{line}");
        }
    }
    if !result.schedulable {
        eprintln!("partita: not schedulable; {} not written", output.display());
        return exit::invalid();
    }
    if let Err(e) = std::fs::write(output, &result.xml) {
        eprintln!("partita: cannot write {}: {e}", output.display());
        return exit::usage();
    }
    if !json {
        println!("wrote {}", output.display());
    }
    exit::ok()
}
