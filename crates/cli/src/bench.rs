//! `partita bench list | EXP...` and the hidden `partita bench-partition` that runs a workload
//! inside a partition (the bench's module configurations name this binary as the program).

use crate::exit;
use partita_bench::experiment::{Backend, registry};
use partita_bench::runner::{BenchOptions, run};
use partita_bench::workload::{Programs, run_workload};
use std::path::PathBuf;
use std::process::ExitCode;

pub struct BenchArgs {
    pub experiments: Vec<String>,
    pub backend: Option<String>,
    pub quick: bool,
    pub json: bool,
    pub db: PathBuf,
    pub workload_cmd: Option<String>,
    pub duration: Option<std::time::Duration>,
}

pub fn list() -> ExitCode {
    for e in registry() {
        let backends: Vec<&str> = e.backends().iter().map(|b| b.name()).collect();
        println!("{:<20} {} [backends: {}]", e.name(), e.reproduces(), backends.join(", "));
        println!("{:<20} {}\n", "", e.description());
    }
    exit::ok()
}

pub fn bench(args: BenchArgs) -> ExitCode {
    if args.experiments.is_empty() {
        eprintln!("partita: name experiments to run (partita bench list shows them), or `all`");
        return exit::usage();
    }
    if args.experiments.len() == 1 && args.experiments[0] == "list" {
        return list();
    }
    let backend = match args.backend.as_deref().map(|b| (b, Backend::parse(b))) {
        None => None,
        Some((_, Some(Backend::Kvm))) => {
            eprintln!(
                "partita: the bench has no kvm experiments yet (kvm partitions run under partita run: docs/kvm.md); use --backend process or --backend native"
            );
            return exit::usage();
        }
        Some((_, Some(b))) => Some(b),
        Some((b, None)) => {
            eprintln!("partita: unknown backend {b:?} (native, process; kvm is not in the bench yet)");
            return exit::usage();
        }
    };
    let mut experiments = Vec::new();
    for name in &args.experiments {
        if name == "all" {
            // Experiments that take hours (soak) run only when named.
            experiments.extend(registry().into_iter().filter(|e| e.in_all() && backend.is_none_or(|b| e.backends().contains(&b))));
            continue;
        }
        match partita_bench::find(name) {
            Some(e) => experiments.push(e),
            None => {
                let names: Vec<&str> = registry().iter().map(|e| e.name()).collect();
                eprintln!("partita: no experiment {name:?} (experiments: {}, all)", names.join(", "));
                return exit::usage();
            }
        }
    }
    let programs = match Programs::this_binary() {
        Ok(p) => Programs { workload_cmd: args.workload_cmd.clone(), ..p },
        Err(e) => {
            eprintln!("partita: {e}");
            return exit::usage();
        }
    };
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let seconds = args.duration.map(|d| d.as_secs().max(1));
    let opts = BenchOptions { experiments, backend, quick: args.quick, json: args.json, db: args.db.clone(), programs, command, seconds };
    match run(&opts) {
        Ok((results, errors)) => {
            eprintln!(
                "partita: {} result(s) stored in {} (partita report --db {} -o report.html)",
                results.len(),
                args.db.display(),
                args.db.display()
            );
            if errors.is_empty() { exit::ok() } else { exit::invalid() }
        }
        Err(e) => {
            eprintln!("partita: {e}");
            exit::usage()
        }
    }
}

/// `partita bench-partition NAME ARGS...`: a workload as a partition program.
pub fn partition(name: &str, args: &[String]) -> ExitCode {
    ExitCode::from(run_workload(name, args).clamp(0, 255) as u8)
}
