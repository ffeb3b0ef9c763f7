//! `partita check`: validation result and a one-screen module summary.

use crate::exit;
use partita_config::analysis::{self, ModuleSummary};
use partita_config::diag::Diagnostic;
use partita_config::hm::{DecisionRow, STATES, decision_table};
use partita_config::model::Backend;
use partita_config::{Checked, check_file};
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

/// Loads a configuration; an unreadable file is reported here (exit 2).
pub fn load(path: &Path) -> Result<Checked, ExitCode> {
    check_file(path).map_err(|e| {
        eprintln!("partita: cannot read {}: {e}", path.display());
        exit::usage()
    })
}

pub fn print_diagnostics(file: &str, diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        eprintln!("{}", d.render(file));
    }
}

/// The `--json` document of `partita check` (schema "partita-check/1").
#[derive(Serialize)]
struct CheckReport<'a> {
    schema: &'static str,
    file: String,
    valid: bool,
    errors: usize,
    warnings: usize,
    diagnostics: &'a [Diagnostic],
    module: Option<ModuleSummary>,
    /// The health monitor's decision for every partition, system state and error code.
    health_monitor: Vec<DecisionRow>,
    /// What this host lacks for the module (a kvm partition without a usable /dev/kvm): the
    /// configuration is valid, but `partita run` would refuse it here. Left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    host_warnings: Vec<String>,
}

/// What this host lacks for `summary`'s partitions: one line per kvm partition when /dev/kvm
/// is unusable here (the reason is the one `partita run` would refuse it with).
fn host_warnings(summary: Option<&ModuleSummary>) -> Vec<String> {
    let kvm: Vec<String> = summary
        .map(|s| s.partitions.iter().filter(|p| p.backend == Backend::Kvm).map(|p| format!("partition {} \"{}\"", p.id, p.name)).collect())
        .unwrap_or_default();
    if kvm.is_empty() {
        return Vec::new();
    }
    match partita_module::backend::kvm::open_kvm() {
        Ok(_) => Vec::new(),
        Err(e) => kvm.into_iter().map(|p| format!("{p} asks for the kvm backend, but {e}: partita run refuses it on this host")).collect(),
    }
}

pub fn run(path: &Path, json: bool) -> ExitCode {
    let checked = match load(path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let file = path.display().to_string();
    let valid = checked.is_valid();
    let summary = checked.module.as_ref().map(analysis::summarize);
    let hm = checked.module.as_ref().map(decision_table).unwrap_or_default();
    let host = host_warnings(summary.as_ref());
    if json {
        let report = CheckReport {
            schema: "partita-check/1",
            file,
            valid,
            errors: checked.errors().count(),
            warnings: checked.warnings().count(),
            diagnostics: &checked.diagnostics,
            module: summary,
            health_monitor: hm,
            host_warnings: host,
        };
        println!("{}", serde_json::to_string_pretty(&report).expect("serializable"));
    } else {
        print_diagnostics(&file, &checked.diagnostics);
        for w in &host {
            eprintln!("{file}: warning: {w}");
        }
        let verdict = if valid { "valid" } else { "INVALID" };
        println!("{file}: {verdict} ({} errors, {} warnings)", checked.errors().count(), checked.warnings().count());
        if let Some(s) = &summary {
            print_summary(s);
            print_health_monitor(&hm);
        }
    }
    if valid { exit::ok() } else { exit::invalid() }
}

fn mib(bytes: u64) -> String {
    match bytes {
        0 => "-".into(),
        b if b.is_multiple_of(1 << 20) => format!("{} MiB", b >> 20),
        b => format!("{:.1} KiB", b as f64 / 1024.0),
    }
}

fn print_summary(s: &ModuleSummary) {
    println!("module \"{}\"{}", s.name, s.version.as_ref().map_or(String::new(), |v| format!(" version {v}")));
    let cores: Vec<String> = s.cores.iter().map(|c| format!("{} (CPU {}, {})", c.index, c.cpu, c.policy.as_str())).collect();
    println!("cores: {}", cores.join(", "));
    println!("partitions:");
    println!("  {:>4}  {:<16} {:<8} {:<7} {:>10}  executable", "id", "name", "crit", "backend", "memory");
    for p in &s.partitions {
        let backend = match p.backend {
            Backend::Process => "process",
            Backend::Kvm => "kvm",
        };
        let crit = p.criticality.map_or("-", |c| c.as_str());
        let sys = if p.system_partition { " [system]" } else { "" };
        println!(
            "  {:>4}  {:<16} {:<8} {:<7} {:>10}  {}{sys}",
            p.id,
            p.name,
            crit,
            backend,
            mib(p.memory_bytes),
            p.executable.as_deref().unwrap_or("-")
        );
    }
    let ports: usize = s.partitions.iter().map(|p| p.ports.len()).sum();
    println!("ports: {ports}; channels: {}", s.channels.len());
    for c in &s.channels {
        let kind = c.kind.map_or("?", |k| k.as_str());
        let name = c.name.as_deref().unwrap_or("");
        println!("  {:>4}  {:<16} {:<8} {} -> {}", c.id, name, kind, c.source, c.destinations.join(", "));
    }
    println!("schedules:");
    for sch in &s.schedules {
        let initial = if sch.initial { " (initial)" } else { "" };
        println!("  {:>4}  \"{}\"{initial}: major frame {}", sch.id, sch.name, sch.major_frame_ns);
        for core in &sch.cores {
            if core.policy == partita_config::model::CorePolicy::FixedPriority {
                let served: Vec<String> = core.priorities.iter().map(|(p, prio)| format!("{p} (priority {prio})")).collect();
                println!(
                    "        core {}: FIXED_PRIORITY, serves {}",
                    core.core,
                    if served.is_empty() { "-".into() } else { served.join(", ") }
                );
            } else {
                println!("        core {}: {} windows, utilization {:.1} %", core.core, core.windows.len(), core.utilization * 100.0);
            }
        }
    }
}

/// The decision table: per partition and system state, each error code's level and action and
/// the table entry (or default) that decides each.
fn print_health_monitor(rows: &[DecisionRow]) {
    println!("health monitor (level, action; what decides them):");
    let mut last = None;
    for r in rows {
        if last != Some((r.partition, r.state)) {
            let meaning = STATES.iter().find(|(s, _)| *s == r.state).map_or("", |(_, m)| m);
            println!("  partition {} \"{}\", SystemState {} ({meaning}):", r.partition, r.partition_name, r.state);
            last = Some((r.partition, r.state));
        }
        let action = if r.level == "PROCESS" { format!("error handler, else {}", r.action) } else { r.action.to_string() };
        println!("    {:<18} {:<9} {:<26} level: {}; action: {}", r.code, r.level, action, r.level_from, r.action_from);
    }
}
