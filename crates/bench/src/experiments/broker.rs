//! `broker`: what a scheduling call costs a partition when the module's scheduling broker
//! makes it (seccomp USER_NOTIF, crates/module/src/backend/process/sched_broker.rs), against an
//! allowed call that the kernel answers directly.

use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::{ModuleSpec, PartitionSpec, Window, machine_lock, monotonic_ns as now_ns, run_module};
use crate::workload::Workload;
use partita_apex::{Deadline, INFINITE_TIME_VALUE, Name, ProcessAttribute, create_process, set_partition_mode, start};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Broker;

/// The samples of the `broker` workload, in the order it takes them.
pub const CALLS: [&str; 6] = ["clock_read", "direct", "brokered_self", "brokered_tid", "signal_fast", "signal_brokered"];

pub static BROKER: Workload = Workload {
    name: "broker",
    description: "times N sched_getparam calls (allowed: the kernel answers) and N sched_setparam calls to the caller's own priority (brokered), by 0 and by thread id; N tgkill calls to itself with signal 0 (allowed, the filter's fast-signal path) and with a caught SIGUSR1 (brokered)",
    main: broker_main,
};

static CALLS_N: AtomicUsize = AtomicUsize::new(0);

impl Experiment for Broker {
    fn name(&self) -> &'static str {
        "broker"
    }
    fn reproduces(&self) -> &'static str {
        "Partita's own (issue 10: the cost of taking CAP_SYS_NICE from partitions)"
    }
    fn description(&self) -> &'static str {
        "A process of a partition that owns CPU 1 times N calls of each kind with two CLOCK_MONOTONIC reads (clock_read_ns \
         is the empty measurement, included in every figure): direct_ns = sched_getparam(0), allowed by the filter and \
         answered by the kernel; brokered_self_ns = sched_setparam(0, its own priority), which the filter hands to the \
         module's broker thread (receive, checks, a process_vm_readv of the parameter, the call, the answer); \
         brokered_tid_ns = the same call naming the thread by its id (pthread_setschedparam's form), which the broker \
         must map from the partition's PID namespace to the host's; signal_fast_ns = tgkill of the calling thread with \
         signal 0 (delivers nothing; the filter's path of every signal it lets through, the runtime's STOP/SUSPEND \
         signal SIGRTMAX-2 included, is this one plus at most five comparisons); signal_brokered_ns = tgkill of the calling thread with SIGUSR1, caught by an empty \
         handler, which the filter hands to the broker (it cannot see handlers): the broker reads the target's status, \
         finds the signal caught, demotes nothing and lets the call run. --backend native runs the same program without \
         a module: every call is direct there."
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        vec![params([("calls", (if quick { 1000 } else { 10_000 }).into())])]
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let calls = p["calls"].as_i64().unwrap_or(1000).to_string();
        let samples = if ctx.backend == Backend::Native {
            ctx.progress("the calls natively (no filter, no broker)");
            let _machine = machine_lock()?;
            let out = ctx
                .programs
                .native_command("broker", &[&calls])
                .env("PARTITA_STANDALONE_CPUS", "1")
                .output()
                .map_err(|e| format!("{}: {e}", ctx.programs.exe.display()))?;
            crate::workload::parse_samples(&String::from_utf8_lossy(&out.stdout))
        } else {
            ctx.progress("the calls in a partition");
            let maf = 100_000_000;
            let spec = ModuleSpec {
                name: "Broker".into(),
                cpus: "1".into(),
                major_frame_ns: maf,
                partitions: vec![PartitionSpec {
                    name: "Broker".into(),
                    workload: "broker".into(),
                    args: vec![calls],
                    windows: vec![Window { start_ns: 0, duration_ns: maf, core: 0 }],
                }],
            };
            run_module(ctx, &spec, 30)?.samples("Broker")
        };
        if samples.is_empty() {
            return Err("the broker program printed no samples".into());
        }
        for c in CALLS {
            ctx.samples(&format!("{c}_ns"), Unit::Ns, samples.iter().filter(|(m, _)| m == c).map(|(_, v)| *v));
        }
        Ok(())
    }
}

extern "C" fn on_usr1(_: i32) {}

extern "C" fn broker_process() {
    let n = CALLS_N.load(Ordering::Relaxed);
    let mut s: Vec<(&'static str, i64)> = Vec::with_capacity(n * CALLS.len());
    let mut p = libc::sched_param { sched_priority: 0 };
    // SAFETY: reads the calling thread's parameter into a valid sched_param.
    unsafe { libc::sched_getparam(0, &mut p) };
    // SAFETY: gettid has no preconditions (the id in the partition's PID namespace).
    let tid = unsafe { libc::gettid() };
    let mut failed = 0;
    let mut time = |name: &'static str, f: &mut dyn FnMut() -> i32| {
        for _ in 0..n {
            let t0 = now_ns();
            let r = f();
            let t1 = now_ns();
            if r == 0 {
                s.push((name, t1 - t0));
            } else {
                failed += 1;
            }
        }
    };
    time("clock_read", &mut || 0);
    let mut q = libc::sched_param { sched_priority: 0 };
    // SAFETY (each closure): plain scheduling calls on the calling thread with valid parameters.
    time("direct", &mut || unsafe { libc::sched_getparam(0, &mut q) });
    time("brokered_self", &mut || unsafe { libc::sched_setparam(0, &p) });
    time("brokered_tid", &mut || unsafe { libc::sched_setparam(tid, &p) });
    // SAFETY: an empty handler for SIGUSR1 (async-signal-safe: it does nothing).
    unsafe { libc::signal(libc::SIGUSR1, on_usr1 as *const () as libc::sighandler_t) };
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    // SAFETY (each closure): tgkill of the calling thread with no signal, or one it catches.
    time("signal_fast", &mut || unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, 0) as i32 });
    time("signal_brokered", &mut || unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, libc::SIGUSR1) as i32 });
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for (name, v) in s {
        let _ = writeln!(w, "sample {name} {v}");
    }
    if failed > 0 {
        let _ = writeln!(w, "note {failed} calls failed");
    }
    let _ = w.flush();
    std::process::exit(0);
}

/// `broker N`: N calls of each kind from one process (priority 50), then the partition exits.
fn broker_main(args: &[String]) -> i32 {
    let n = args.first().and_then(|a| a.parse::<i64>().ok()).unwrap_or(1000).clamp(1, 1_000_000);
    CALLS_N.store(n as usize, Ordering::Relaxed);
    let attr = ProcessAttribute {
        period: INFINITE_TIME_VALUE,
        time_capacity: INFINITE_TIME_VALUE,
        entry_point: broker_process,
        stack_size: 0,
        base_priority: 50,
        deadline: Deadline::Soft,
        name: Name::from("MEAS"),
    };
    match create_process(&attr).map_err(|e| format!("{e:?}")).and_then(|id| start(id).map_err(|e| format!("{e:?}"))) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("CREATE_PROCESS/START: {e}");
            return 1;
        }
    }
    let r = set_partition_mode(partita_apex::OperatingMode::Normal as u32);
    eprintln!("SET_PARTITION_MODE(NORMAL) returned {r:?}");
    1
}
