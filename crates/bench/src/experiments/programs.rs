//! The partition programs of this crate's experiments, written against the `partita_apex` Rust
//! API. Each `main` is the partition's initialization process. Parameters reach the ARINC
//! processes (entry points without arguments) through statics set before SET_PARTITION_MODE.

use crate::module_run::monotonic_ns as now_ns;
use crate::workload::{Workload, report_sample};
use partita_apex::{
    Deadline, INFINITE_TIME_VALUE, Name, OperatingMode, ProcessAttribute, ProcessId, create_process, get_my_id, get_partition_status,
    get_process_id, get_process_status, get_time, periodic_wait, resume, set_partition_mode, start, suspend, timed_wait,
};
use std::hint::black_box;
use std::io::Write;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

pub static PCS: Workload = Workload {
    name: "pcs",
    description: "N periodic processes (period = partition period) that each spin ~20 us per release",
    main: pcs_main,
};
pub static LATENCY: Workload = Workload {
    name: "latency",
    description: "cyclictest-like loop in one process at the top priority: TIMED_WAIT to the next interval, print the lateness",
    main: latency_main,
};
pub static COUNT: Workload = Workload {
    name: "count",
    description: "counts as fast as it can between two module times and prints the count (and, given the other partitions' time between two of its windows, what each switch took from it)",
    main: count_main,
};
pub static API: Workload =
    Workload { name: "api", description: "times each non-blocking APEX service and CREATE_PROCESS/START/SUSPEND/RESUME", main: api_main };
pub static IDLE: Workload =
    Workload { name: "idle", description: "one sleeping process; prints `ready` when it first runs (startup, footprint)", main: idle_main };

static ARG_A: AtomicI64 = AtomicI64::new(0);
static ARG_B: AtomicI64 = AtomicI64::new(0);
static ARG_C: AtomicI64 = AtomicI64::new(0);
static ARG_N: AtomicUsize = AtomicUsize::new(0);

fn arg(args: &[String], i: usize, default: i64) -> i64 {
    args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

fn attribute(name: &str, entry: extern "C" fn(), period: i64, priority: i32) -> ProcessAttribute {
    ProcessAttribute {
        period,
        time_capacity: if period > 0 { period } else { INFINITE_TIME_VALUE },
        entry_point: entry,
        stack_size: 0,
        base_priority: priority,
        deadline: Deadline::Soft,
        name: Name::from(name),
    }
}

fn create_and_start(attr: &ProcessAttribute) -> Result<ProcessId, String> {
    let id = create_process(attr).map_err(|e| format!("CREATE_PROCESS {:?}: {e:?}", attr.name))?;
    start(id).map_err(|e| format!("START: {e:?}"))?;
    Ok(id)
}

/// Goes NORMAL (does not return on success).
fn go_normal() -> i32 {
    let r = set_partition_mode(OperatingMode::Normal as u32);
    eprintln!("SET_PARTITION_MODE(NORMAL) returned {r:?}");
    1
}

fn fail(e: String) -> i32 {
    eprintln!("{e}");
    1
}

/// Exits the program. Standalone (a native baseline), its threads run at several SCHED_FIFO
/// priorities on one CPU and are first moved to SCHED_OTHER: a process dying real-time there can
/// hold the CPU for good (`backend::rt::demote_threads`). In a partition the module does that.
fn exit_process(code: i32) -> ! {
    if std::env::var_os("PARTITA_PARTITION").is_none() {
        use partita_module::backend::rt::{demote_threads, threads_of};
        demote_threads(threads_of(std::process::id() as i32));
    }
    std::process::exit(code)
}

fn spin_ns(ns: i64) {
    let end = now_ns() + ns;
    while now_ns() < end {
        std::hint::spin_loop();
    }
}

extern "C" fn pcs_process() {
    loop {
        spin_ns(20_000);
        let _ = periodic_wait();
    }
}

/// `pcs N`: N periodic processes at distinct priorities.
fn pcs_main(args: &[String]) -> i32 {
    let n = arg(args, 0, 1).clamp(1, 100);
    let period = get_partition_status().period;
    for i in 0..n {
        if let Err(e) = create_and_start(&attribute(&format!("P{i}"), pcs_process, period, 10 + (i % 50) as i32)) {
            return fail(e);
        }
    }
    go_normal()
}

extern "C" fn latency_process() {
    let (interval, loops) = (ARG_A.load(Ordering::Relaxed), ARG_B.load(Ordering::Relaxed));
    let mut out = Vec::with_capacity(loops as usize);
    let mut next = get_time() + interval;
    for _ in 0..loops {
        let _ = timed_wait((next - get_time()).max(0));
        out.push(get_time() - next);
        next += interval;
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for v in out {
        let _ = writeln!(w, "sample partition_wakeup_ns {v}");
    }
    let _ = w.flush();
    exit_process(0);
}

/// `latency INTERVAL_NS LOOPS`.
fn latency_main(args: &[String]) -> i32 {
    ARG_A.store(arg(args, 0, 1_000_000).max(10_000), Ordering::Relaxed);
    ARG_B.store(arg(args, 1, 1000).max(1), Ordering::Relaxed);
    if let Err(e) = create_and_start(&attribute("CYCLIC", latency_process, INFINITE_TIME_VALUE, 63)) {
        return fail(e);
    }
    go_normal()
}

extern "C" fn count_process() {
    let (from, to) = (ARG_A.load(Ordering::Relaxed), ARG_B.load(Ordering::Relaxed));
    while get_time() < from {
        std::hint::spin_loop();
    }
    // A pause longer than half the other partitions' time is a switch away and back: what it
    // took beyond their windows is what the two switches took from this partition. Shorter
    // pauses (beyond a few us) inside its windows are time the host (or anything else) took.
    let others = ARG_C.load(Ordering::Relaxed);
    let mut switch_lost: Vec<i64> = Vec::with_capacity(if others > 0 { ((to - from) / others.max(1) + 16) as usize } else { 0 });
    let mut paused = 0i64;
    let mut count: u64 = 0;
    // Counting speed away from switches (from STEADY_AFTER_NS after one on): this partition's
    // own reference, whatever its process's speed on this machine.
    let (mut steady_count, mut steady_ns, mut switched_at) = (0u64, 0i64, i64::MIN / 2);
    let mut last = get_time();
    loop {
        for _ in 0..1024 {
            count = black_box(count + 1);
        }
        let now = get_time();
        if others > 0 && now - last > others / 2 {
            switch_lost.push(now - last - others);
            switched_at = now;
        } else if now - last > PAUSE_NS {
            paused += now - last;
        } else if now - switched_at > STEADY_AFTER_NS {
            steady_count += 1024;
            steady_ns += now - last;
        }
        last = now;
        if now >= to {
            break;
        }
    }
    report_sample("count", count as f64);
    report_sample("paused_ns", paused as f64);
    if steady_ns > 0 {
        report_sample("steady_count_per_s", steady_count as f64 / steady_ns as f64 * 1e9);
    }
    if !switch_lost.is_empty() {
        switch_lost.sort_unstable();
        report_sample("switch_lost_ns", switch_lost[switch_lost.len() / 2] as f64);
    }
    exit_process(0);
}

/// A pause in counting longer than this is not counting (one round of the loop takes < 1 us).
const PAUSE_NS: i64 = 3_000;
/// After a switch, caches and predictors may still be warming up: not steady yet.
const STEADY_AFTER_NS: i64 = 200_000;

/// `count FROM_NS TO_NS [OTHERS_NS]` (module times; OTHERS_NS: the other partitions' planned
/// time between the end of one of its windows and the start of the next).
fn count_main(args: &[String]) -> i32 {
    ARG_A.store(arg(args, 0, 0), Ordering::Relaxed);
    ARG_B.store(arg(args, 1, 1_000_000_000), Ordering::Relaxed);
    ARG_C.store(arg(args, 2, 0), Ordering::Relaxed);
    if let Err(e) = create_and_start(&attribute("COUNT", count_process, INFINITE_TIME_VALUE, 1)) {
        return fail(e);
    }
    go_normal()
}

extern "C" fn sleeper() {
    loop {
        let _ = timed_wait(1_000_000_000);
    }
}

/// Processes created (and timed) by the initialization process, left DORMANT for START.
static DORMANT: std::sync::Mutex<Vec<ProcessId>> = std::sync::Mutex::new(Vec::new());

/// Times `f` `n` times, one sample per call (the clock reads included; see `clock_read`).
fn time_each(samples: &mut Vec<(&'static str, i64)>, name: &'static str, n: usize, mut f: impl FnMut()) {
    for _ in 0..n {
        let t0 = now_ns();
        f();
        samples.push((name, now_ns() - t0));
    }
}

extern "C" fn api_process() {
    let n = ARG_N.load(Ordering::Relaxed);
    let mut s: Vec<(&'static str, i64)> = Vec::with_capacity(n * 10);
    let target = get_process_id(&Name::from("TARGET")).expect("TARGET exists");
    let target_name = Name::from("TARGET");
    time_each(&mut s, "clock_read", n, || {});
    time_each(&mut s, "GET_TIME", n, || {
        black_box(get_time());
    });
    time_each(&mut s, "GET_MY_ID", n, || {
        black_box(get_my_id().ok());
    });
    time_each(&mut s, "GET_PROCESS_ID", n, || {
        black_box(get_process_id(&target_name).ok());
    });
    time_each(&mut s, "GET_PROCESS_STATUS", n, || {
        black_box(get_process_status(target).ok());
    });
    time_each(&mut s, "GET_PARTITION_STATUS", n, || {
        black_box(get_partition_status());
    });
    for _ in 0..n {
        let t0 = now_ns();
        let r = suspend(target);
        let t1 = now_ns();
        let q = resume(target);
        let t2 = now_ns();
        if r.is_ok() && q.is_ok() {
            s.push(("SUSPEND", t1 - t0));
            s.push(("RESUME", t2 - t1));
        }
    }
    let dormant = std::mem::take(&mut *DORMANT.lock().unwrap_or_else(|p| p.into_inner()));
    for id in dormant {
        let t0 = now_ns();
        if start(id).is_ok() {
            s.push(("START", now_ns() - t0));
        }
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for (name, v) in s {
        let _ = writeln!(w, "sample {name} {v}");
    }
    let _ = w.flush();
    exit_process(0);
}

/// `api N`: N calls of each service; CREATE_PROCESS and START as often as the process table
/// allows (up to 100).
fn api_main(args: &[String]) -> i32 {
    ARG_N.store(arg(args, 0, 1000).clamp(1, 1_000_000) as usize, Ordering::Relaxed);
    if let Err(e) = create_and_start(&attribute("MEAS", api_process, INFINITE_TIME_VALUE, 50)) {
        return fail(e);
    }
    if let Err(e) = create_and_start(&attribute("TARGET", sleeper, INFINITE_TIME_VALUE, 10)) {
        return fail(e);
    }
    let mut created = Vec::new();
    for i in 0..100 {
        let attr = attribute(&format!("D{i}"), sleeper, INFINITE_TIME_VALUE, 5);
        let t0 = now_ns();
        match create_process(&attr) {
            Ok(id) => {
                report_sample("CREATE_PROCESS", (now_ns() - t0) as f64);
                created.push(id);
            }
            Err(_) => break,
        }
    }
    *DORMANT.lock().unwrap_or_else(|p| p.into_inner()) = created;
    go_normal()
}

extern "C" fn idle_process() {
    println!("ready {}", get_time());
    if std::env::var_os("PARTITA_PARTITION").is_none() {
        exit_process(0);
    }
    sleeper();
}

/// `idle`: one process that reports when it first runs, then sleeps (standalone: exits).
fn idle_main(_args: &[String]) -> i32 {
    if let Err(e) = create_and_start(&attribute("IDLE", idle_process, INFINITE_TIME_VALUE, 10)) {
        return fail(e);
    }
    go_normal()
}
