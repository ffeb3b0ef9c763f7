//! `partita`: the command line of the Partita partitioning platform.

mod bench;
mod check;
mod demo;
mod gantt;
mod guest_cc;
mod report;
mod run;
mod schedule;
mod trace;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "partita", version, about = "ARINC 653 time-and-space partitioning for multi-core Linux")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and validate a module configuration and print a summary of it.
    ///
    /// Exit status: 0 valid, 1 invalid (each error as FILE:LINE:COL: error: TEXT), 2 usage or I/O error.
    Check {
        /// The ARINC 653 XML configuration.
        file: PathBuf,
        /// Print one JSON document (schema partita-check/1, see docs/configuration.md) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show the per-core timeline of every module schedule, or synthesize windows.
    ///
    /// Exit status as `check`; with --synthesize: 0 schedulable, 1 not, 2 usage or I/O error.
    Schedule {
        /// The configuration to show (or, with --synthesize, the request).
        file: PathBuf,
        /// Also draw one major frame of each schedule as an SVG Gantt chart.
        #[arg(long, value_name = "OUT.svg", conflicts_with = "synthesize")]
        svg: Option<PathBuf>,
        /// Print one JSON document (schema partita-schedule/1) instead of text.
        #[arg(long)]
        json: bool,
        /// Build Window_Schedule entries from each partition's period and duration.
        #[arg(long, requires = "output")]
        synthesize: bool,
        /// Where --synthesize writes the completed configuration.
        #[arg(short, long, value_name = "OUT.xml", requires = "synthesize")]
        output: Option<PathBuf>,
    },
    /// Run a module: partitions in their windows on their cores, output shown live as
    /// `[NAME] line`, then a summary. Exit status: 0 clean, 1 module-level fault, 2 usage.
    Run {
        file: PathBuf,
        /// Stop at the first major frame boundary after this long (10s, 500ms, 2m).
        #[arg(long, value_parser = run::parse_duration, conflicts_with = "frames")]
        duration: Option<std::time::Duration>,
        /// Stop after this many major frames.
        #[arg(long)]
        frames: Option<u64>,
        /// Write the trace (JSON Lines, design.md §5) to this file.
        #[arg(long, value_name = "OUT")]
        trace: Option<PathBuf>,
        /// Keep each partition's output in DIR/NAME.log.
        #[arg(long, value_name = "DIR")]
        logs: Option<PathBuf>,
        /// Raise ERROR_CODE (DEADLINE_MISSED, APPLICATION_ERROR, NUMERIC_ERROR, ILLEGAL_REQUEST,
        /// STACK_OVERFLOW, MEMORY_VIOLATION, HARDWARE_FAULT, POWER_FAILURE) for PARTITION (its
        /// name) at TIME after the module start (2s, 500ms), as if detected. Repeatable.
        #[arg(long, value_name = "PARTITION:ERROR_CODE@TIME", value_parser = run::parse_inject)]
        inject: Vec<partita_module::run::InjectSpec>,
        /// Keep the module's CPUs busy (a spinner per core below every partition thread) while
        /// partitions are idle, so that a virtual CPU never halts: lower wake-up latency on
        /// virtual machines, at the price of CPUs that ordinary tasks hardly get.
        #[arg(long)]
        idle_poll: bool,
        /// Leave Linux real-time throttling on (by default `run` lifts it for the run and
        /// restores it: it would stop busy partitions and the scheduler 50 ms each second).
        #[arg(long)]
        keep_rt_throttling: bool,
        /// Make no CPU wake-up latency request (by default `run` asks for zero wake-up latency
        /// on its CPUs for the run, as real-time set-ups do, and releases it at the end).
        #[arg(long)]
        keep_cpu_latency: bool,
    },
    /// Build the flight-control example's partitions and run it for 10 s with a live status.
    Demo {
        /// Only build the partitions (into examples/bin/).
        #[arg(long)]
        build_only: bool,
    },
    /// Statistics of a run's trace (window lateness, PCS, overlaps), or its conversion for the
    /// Perfetto UI (one track per core and per partition).
    Trace {
        /// A trace written by `partita run --trace`.
        trace: PathBuf,
        /// Write the trace in the Chrome/Perfetto JSON format to this file.
        #[arg(long, value_name = "OUT.json")]
        perfetto: Option<PathBuf>,
        /// Print the statistics (the default when --perfetto is not given).
        #[arg(long)]
        summary: bool,
        /// Statistics as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Characterization experiments (design.md §6, docs/bench.md): `partita bench list`, or
    /// `partita bench EXP... | all`. Results go to an SQLite store; a progress bar on stderr.
    ///
    /// Exit status: 0 all ran, 1 an experiment failed (the others still ran), 2 usage (unknown
    /// experiment, the kvm backend, which has no bench experiments yet).
    Bench {
        /// Experiments to run (`list` to show them, `all` for every one).
        experiments: Vec<String>,
        /// native (the baseline without Partita), process (partitions as processes), kvm (not in the bench yet).
        #[arg(long)]
        backend: Option<String>,
        /// Fewer points and shorter runs: each experiment within about a minute.
        #[arg(long)]
        quick: bool,
        /// Print one JSON object per line and parameter point (statistics in ns for times).
        #[arg(long)]
        json: bool,
        /// The result store.
        #[arg(long, value_name = "FILE", default_value = "partita-results.db")]
        db: PathBuf,
        /// A program of your own (a shell command) that native-vs-partition also measures,
        /// natively and as a partition: its wall time from start to exit.
        #[arg(long, value_name = "CMD")]
        workload_cmd: Option<String>,
        /// Run length of the experiments with a `seconds` parameter (soak: default 1h, 90s with
        /// --quick; pcs, slot-loss): 90s, 10m, 1h.
        #[arg(long, value_parser = run::parse_duration)]
        duration: Option<std::time::Duration>,
    },
    /// One self-contained HTML page from the bench's result store: a section per experiment,
    /// Partita's figures beside the published ones, SVG charts.
    Report {
        #[arg(long, value_name = "FILE", default_value = "partita-results.db")]
        db: PathBuf,
        #[arg(short, long, value_name = "report.html")]
        output: PathBuf,
    },
    /// Builds the guest image of a kvm partition: `partita guest-cc SRC.c... -o OUT.elf
    /// [CFLAGS...]` with `$CC` (else gcc), freestanding, with the guest start-up code and console
    /// helper (docs/kvm.md), and checks it as `partita run` would load it.
    ///
    /// Exit status: 0 built, 1 the compiler failed or the image would be refused, 2 usage or no
    /// compiler.
    GuestCc {
        /// Sources (.c, .S, .s), `-o OUT.elf`, and compiler flags, in any order.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Runs a bench workload as a partition program (used by the bench's configurations).
    #[command(hide = true)]
    BenchPartition {
        workload: String,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The guardian of a run (started by `run`): cleans up after the module PID if it is killed.
    #[command(name = "__partita-guardian", hide = true)]
    Guardian { module_pid: String },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Run { .. } | Command::Demo { .. } | Command::Bench { .. }) {
        // A command that only prints ends quietly when its reader goes away (`partita check
        // ... | head`), as Unix tools do, instead of panicking on the write. Commands that run
        // modules keep going: they must clean up their partitions.
        // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    match cli.command {
        Command::Check { file, json } => check::run(&file, json),
        Command::Schedule { file, json, synthesize: true, output, .. } => {
            schedule::synthesize(&file, output.as_deref().expect("clap requires --output"), json)
        }
        Command::Schedule { file, svg, json, .. } => schedule::run(&file, svg.as_deref(), json),
        Command::Run { file, duration, frames, trace, logs, inject, idle_poll, keep_rt_throttling, keep_cpu_latency } => {
            run::run_module(run::RunArgs {
                file,
                duration,
                frames,
                trace,
                logs,
                inject,
                idle_poll,
                keep_rt_throttling,
                keep_cpu_latency,
                live_status: false,
            })
        }
        Command::Demo { build_only } => demo::run(build_only),
        Command::Trace { trace, perfetto, summary, json } => trace::run(&trace, perfetto.as_deref(), summary, json),
        Command::Bench { experiments, backend, quick, json, db, workload_cmd, duration } => {
            bench::bench(bench::BenchArgs { experiments, backend, quick, json, db, workload_cmd, duration })
        }
        Command::Report { db, output } => report::run(&db, &output),
        Command::GuestCc { args } => guest_cc::run(&args),
        Command::BenchPartition { workload, args } => bench::partition(&workload, &args),
        Command::Guardian { module_pid } => run::guardian_main(&module_pid),
    }
}

/// Exit statuses shared by the configuration commands (design.md §2).
pub mod exit {
    use std::process::ExitCode;
    pub fn ok() -> ExitCode {
        ExitCode::from(0)
    }
    pub fn invalid() -> ExitCode {
        ExitCode::from(1)
    }
    pub fn usage() -> ExitCode {
        ExitCode::from(2)
    }
}
