//! Measures the ways to stop and release partitions at window boundaries (docs/scheduling.md).
//!
//! Two busy partitions (this program re-executed with `--child`, started through the
//! backend's `spawn`, spinning at SCHED_FIFO 50 pinned to CPU 1) alternate windows driven by
//! this thread at SCHED_FIFO 99 on CPU 1 with absolute `clock_nanosleep`. Each child logs its
//! run intervals (a gap of more than 3 us between two clock readings ends an interval) into a
//! shared memfd (its fd 3). Per mechanism we report timer lateness, stop completion, release
//! time (release write -> first sample of the incoming child) and PCS (planned boundary ->
//! first sample), and count violations: an outgoing child seen running after the scheduler
//! issued the stop.
//!
//! Needs root. Run:
//! `cargo run --release -p partita-module --example switch_mechanisms -- [--switches 4000]
//!  [--window-us 1000] [--early-us 20] [--only NAME,NAME] [--no-monitor] [--child-policy fifo|other]`

use partita_module::backend::process::{
    self as backend, CgroupSystem, FreezeWait, PartitionCgroup, RunCgroups, SignalGate, SpawnSpec, Spawned, Stopped,
};
use partita_module::backend::rt;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

const GAP_NS: i64 = 3_000;
const CAP: usize = 1 << 19;

/// One child's log in the shared memfd.
#[repr(C)]
struct ChildLog {
    ready: AtomicU32,
    go: AtomicU32,
    quit: AtomicU32,
    _pad: AtomicU32,
    count: AtomicU64,
    intervals: [[AtomicI64; 2]; CAP],
}

#[derive(Clone, Copy, PartialEq)]
enum Stop {
    /// cgroup freeze, then wait for `frozen 1` this way (None: do not wait).
    Freeze(Option<FreezeWait>),
    /// SIGSTOP, then `waitid(WSTOPPED)` if true.
    Sigstop(bool),
}

struct Mech {
    name: &'static str,
    stop: Stop,
    early: bool,
}

const MECHS: &[Mech] = &[
    Mech { name: "freeze-wait-poll", stop: Stop::Freeze(Some(FreezeWait::Poll)), early: false },
    Mech { name: "freeze-wait-inotify", stop: Stop::Freeze(Some(FreezeWait::Inotify)), early: false },
    Mech { name: "freeze-wait-sleep2", stop: Stop::Freeze(Some(FreezeWait::Sleep { us: 2 })), early: false },
    Mech { name: "freeze-wait-sleep10", stop: Stop::Freeze(Some(FreezeWait::Sleep { us: 10 })), early: false },
    Mech { name: "freeze-wait-sleep25", stop: Stop::Freeze(Some(FreezeWait::Sleep { us: 25 })), early: false },
    Mech { name: "freeze-nowait", stop: Stop::Freeze(None), early: false },
    Mech { name: "sigstop-wait", stop: Stop::Sigstop(true), early: false },
    Mech { name: "sigstop-nowait", stop: Stop::Sigstop(false), early: false },
    Mech { name: "early-freeze-wait-sleep10", stop: Stop::Freeze(Some(FreezeWait::Sleep { us: 10 })), early: true },
    Mech { name: "early-freeze-nowait", stop: Stop::Freeze(None), early: true },
    Mech { name: "early-sigstop-wait", stop: Stop::Sigstop(true), early: true },
    Mech { name: "early-sigstop-nowait", stop: Stop::Sigstop(false), early: true },
];

struct Opts {
    switches: usize,
    window_ns: i64,
    early_ns: i64,
    only: Vec<String>,
    /// Watch from CPU 0 when a stop that is not waited for completes.
    monitor: bool,
    /// Children at SCHED_OTHER instead of SCHED_FIFO 50 (no RT throttling).
    child_other: bool,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        child(args[2].parse().expect("child index"));
    }
    let mut o = Opts { switches: 4000, window_ns: 1_000_000, early_ns: 20_000, only: Vec::new(), monitor: true, child_other: false };
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| usage(&format!("{a} needs a value"))).clone();
        match a.as_str() {
            "--switches" => o.switches = val().parse().unwrap_or_else(|_| usage("bad --switches")),
            "--window-us" => o.window_ns = val().parse::<i64>().unwrap_or_else(|_| usage("bad --window-us")) * 1000,
            "--early-us" => o.early_ns = val().parse::<i64>().unwrap_or_else(|_| usage("bad --early-us")) * 1000,
            "--only" => o.only = val().split(',').map(str::to_string).collect(),
            "--no-monitor" => o.monitor = false,
            "--child-policy" => match val().as_str() {
                "fifo" => {}
                // Inherited by the children through the environment.
                "other" => o.child_other = true,
                _ => usage("--child-policy is fifo or other"),
            },
            _ => usage(&format!("unknown argument {a}")),
        }
    }
    if o.child_other {
        // SAFETY: still single-threaded here; nothing reads the environment concurrently.
        unsafe { std::env::set_var("SWITCH_CHILD_OTHER", "1") };
    }
    let caps = backend::probe_capabilities();
    print!("{caps}");
    let sys = CgroupSystem::detect().unwrap_or_else(|e| fail(&e.to_string()));
    let run = RunCgroups::create(&sys).unwrap_or_else(|e| fail(&e.to_string()));
    if run.freezer != backend::FreezerKind::V2 {
        fail("this measurement needs the cgroup v2 freezer");
    }
    println!(
        "kernel {}, {} switches of {} us windows on CPU 1, early wake-up {} us, children at {}, RT runtime {} us/s\n",
        std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim(),
        o.switches,
        o.window_ns / 1000,
        o.early_ns / 1000,
        if o.child_other { "SCHED_OTHER" } else { "SCHED_FIFO 50" },
        std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap_or_default().trim()
    );
    let mut rows = Vec::new();
    for m in MECHS.iter().filter(|m| o.only.is_empty() || o.only.iter().any(|n| n == m.name)) {
        let r = measure(&run, m, &o);
        r.print();
        rows.push(r);
    }
    println!("\nsummary (us; median / p99 / max)");
    println!("{:<34} {:>20} {:>20} {:>20} {:>22} {:>6}", "mechanism", "timer lateness", "stop complete", "release", "PCS", "viol.");
    for r in &rows {
        println!(
            "{:<34} {:>20} {:>20} {:>20} {:>22} {:>6}",
            r.name,
            triple(&r.lateness),
            triple(&r.stop),
            triple(&r.release),
            triple(&r.pcs),
            r.violations
        );
    }
}

fn usage(msg: &str) -> ! {
    eprintln!(
        "switch_mechanisms: {msg}\nusage: switch_mechanisms [--switches N] [--window-us W] [--early-us E] [--only NAME,...] [--no-monitor] [--child-policy fifo|other]\nmechanisms: {}",
        MECHS.iter().map(|m| m.name).collect::<Vec<_>>().join(" ")
    );
    std::process::exit(2)
}

fn fail(msg: &str) -> ! {
    eprintln!("switch_mechanisms: {msg} (needs root and cgroup v2 freezing)");
    std::process::exit(1)
}

/// The partition program: wait for `go`, then spin, logging run intervals.
fn child(index: usize) -> ! {
    let log = &map_log(3, false).expect("map fd 3")[index];
    if std::env::var_os("SWITCH_CHILD_OTHER").is_none() {
        rt::set_current_fifo(50).expect("SCHED_FIFO 50");
    }
    log.ready.store(1, Ordering::Release);
    while log.go.load(Ordering::Acquire) == 0 {
        let _ = rt::futex_wait_shared(&log.go, 0, None);
    }
    let (mut start, mut prev) = (rt::now_ns(), rt::now_ns());
    let mut n = 0usize;
    let mut push = |s: i64, e: i64| {
        if n < CAP {
            log.intervals[n][0].store(s, Ordering::Relaxed);
            log.intervals[n][1].store(e, Ordering::Relaxed);
            n += 1;
            log.count.store(n as u64, Ordering::Release);
        }
    };
    loop {
        let t = rt::now_ns();
        if t - prev > GAP_NS {
            push(start, prev);
            start = t;
        }
        prev = t;
        if log.quit.load(Ordering::Relaxed) != 0 {
            push(start, prev);
            std::process::exit(0);
        }
    }
}

/// Maps the two child logs of a memfd (creating it with `create`).
fn map_log(fd: i32, create: bool) -> std::io::Result<&'static [ChildLog; 2]> {
    let len = std::mem::size_of::<[ChildLog; 2]>();
    if create {
        // SAFETY: ftruncate on a memfd we own.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: a fresh shared mapping of a memfd of at least `len` bytes; it is never unmapped
    // (leaked for the program's lifetime), so the 'static reference stays valid. Zeroed
    // bytes are valid atomics.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: see above; the mapping is suitably aligned (page-aligned).
    Ok(unsafe { &*(p as *const [ChildLog; 2]) })
}

struct Result {
    name: &'static str,
    lateness: Vec<i64>,
    boundary: Vec<i64>,
    stop: Vec<i64>,
    stop_call: Vec<i64>,
    release_call: Vec<i64>,
    release: Vec<i64>,
    pcs: Vec<i64>,
    violations: usize,
    violation_max: i64,
    overruns: usize,
    overrun_max: i64,
    missed: usize,
    stop_failures: usize,
}

struct Partition {
    cg: PartitionCgroup,
    spawned: Spawned,
    gate: SignalGate,
}

impl Partition {
    fn stop(&self, how: Stop) -> bool {
        match how {
            Stop::Freeze(Some(w)) => self.cg.request_freeze().is_ok() && self.cg.wait_frozen(w, Duration::from_millis(50)).is_ok(),
            Stop::Freeze(None) => self.cg.request_freeze().is_ok(),
            Stop::Sigstop(true) => matches!(self.gate.stop(), Ok(Stopped::Stopped)),
            Stop::Sigstop(false) => self.gate.request_stop().is_ok(),
        }
    }

    fn release(&self, how: Stop) {
        let r = match how {
            Stop::Freeze(_) => self.cg.thaw(),
            Stop::Sigstop(_) => self.gate.release(),
        };
        r.expect("release");
    }

    /// Whether the stop is complete, as seen from another CPU.
    fn stopped(&self, how: Stop) -> bool {
        match how {
            Stop::Freeze(_) => self.cg.is_frozen().unwrap_or(false),
            _ => self.gate.is_stopped().unwrap_or(false),
        }
    }
}

fn measure(run: &RunCgroups, m: &Mech, o: &Opts) -> Result {
    // SAFETY: valid name and flags; a fresh descriptor that we own.
    let memfd = unsafe { OwnedFd::from_raw_fd(libc::memfd_create(c"switch-logs".as_ptr(), libc::MFD_CLOEXEC)) };
    let logs = map_log(memfd.as_raw_fd(), true).unwrap_or_else(|e| fail(&format!("memfd: {e}")));
    // SAFETY: plain system call; a fresh descriptor that we own.
    let bell = unsafe { OwnedFd::from_raw_fd(libc::eventfd(0, libc::EFD_CLOEXEC)) };
    let exe = std::env::current_exe().expect("current_exe");
    let parts: Vec<Partition> = (0..2)
        .map(|i| {
            let cg = run.partition(&format!("{}{i}", m.name), None).expect("partition cgroup");
            let mut spec = SpawnSpec::new(["A", "B"][i], i as u32, &exe, "/", memfd.as_fd(), bell.as_fd());
            spec.args = vec!["--child".into(), i.to_string().into()];
            spec.cpus = vec![1];
            spec.cgroup = Some(&cg);
            let spawned = backend::spawn(&spec).unwrap_or_else(|e| fail(&e.to_string()));
            cg.thaw().expect("thaw");
            let gate = SignalGate::new(&spawned.process).expect("pidfd");
            Partition { cg, spawned, gate }
        })
        .collect();
    while logs.iter().any(|l| l.ready.load(Ordering::Acquire) == 0) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let signals = matches!(m.stop, Stop::Sigstop(_));
    for p in &parts {
        assert!(p.stop(if signals { Stop::Sigstop(true) } else { Stop::Freeze(Some(FreezeWait::Sleep { us: 50 })) }), "initial stop");
    }
    for l in logs {
        l.go.store(1, Ordering::Release);
        rt::futex_wake_shared(&l.go, 1).expect("futex wake");
    }

    let n = o.switches;
    let (mut wake, mut go, mut stop_done, mut rel, mut rel_done) =
        (vec![0i64; n + 1], vec![0i64; n + 1], vec![0i64; n + 1], vec![0i64; n + 1], vec![0i64; n + 1]);
    let mut stop_failures = 0;
    // A monitor on CPU 0 sees when a stop that was not waited for completes.
    let seq = Arc::new(AtomicI64::new(-1));
    let seen: Arc<Vec<AtomicI64>> = Arc::new((0..=n).map(|_| AtomicI64::new(0)).collect());
    let nowait = matches!(m.stop, Stop::Freeze(None) | Stop::Sigstop(false));
    let parts = Arc::new(parts);
    let monitor = (nowait && o.monitor).then(|| {
        let (seq, seen, parts, stop) = (seq.clone(), seen.clone(), parts.clone(), m.stop);
        std::thread::spawn(move || {
            let _ = rt::pin_current_thread(0);
            let mut done = 0i64;
            loop {
                let k = seq.load(Ordering::Acquire);
                if k == i64::MAX {
                    return;
                }
                if k > done {
                    if parts[((k - 1) % 2) as usize].stopped(stop) {
                        seen[k as usize].store(rt::now_ns(), Ordering::Release);
                        done = k;
                    }
                } else {
                    std::hint::spin_loop();
                }
            }
        })
    });

    rt::pin_current_thread(1).expect("pin to CPU 1");
    rt::set_current_fifo(rt::SCHEDULER_PRIORITY).expect("SCHED_FIFO 99");
    let _ = rt::lock_memory();
    let epoch = rt::now_ns() + 20_000_000;
    for k in 0..=n {
        let b = epoch + k as i64 * o.window_ns;
        if m.early {
            rt::sleep_until_ns(b - o.early_ns);
            wake[k] = rt::now_ns();
            go[k] = rt::spin_until_ns(b);
        } else {
            rt::sleep_until_ns(b);
            wake[k] = rt::now_ns();
            go[k] = wake[k];
        }
        if k > 0 {
            if !parts[(k - 1) % 2].stop(m.stop) {
                stop_failures += 1;
            }
            stop_done[k] = rt::now_ns();
            seq.store(k as i64, Ordering::Release);
        }
        if k < n {
            rel[k] = rt::now_ns();
            parts[k % 2].release(m.stop);
            rel_done[k] = rt::now_ns();
        }
    }
    let _ = rt::set_current_normal();
    let _ = rt::pin_current_thread_to(&[0, 1]);
    seq.store(i64::MAX, Ordering::Release);
    if let Some(h) = monitor {
        h.join().expect("monitor");
    }
    let final_release = rt::now_ns();
    for (l, p) in logs.iter().zip(parts.iter()) {
        l.quit.store(1, Ordering::Release);
        p.release(m.stop);
    }
    let mut parts = Arc::into_inner(parts).expect("monitor finished");
    for p in parts.iter_mut() {
        let _ = p.spawned.process.wait();
    }
    let iv: Vec<Vec<(i64, i64)>> = logs
        .iter()
        .map(|l| {
            let c = l.count.load(Ordering::Acquire) as usize;
            (0..c).map(|i| (l.intervals[i][0].load(Ordering::Relaxed), l.intervals[i][1].load(Ordering::Relaxed))).collect()
        })
        .collect();

    let mut r = Result {
        name: m.name,
        lateness: Vec::new(),
        boundary: Vec::new(),
        stop: Vec::new(),
        stop_call: Vec::new(),
        release_call: Vec::new(),
        release: Vec::new(),
        pcs: Vec::new(),
        violations: 0,
        violation_max: 0,
        overruns: 0,
        overrun_max: 0,
        missed: 0,
        stop_failures,
    };
    for k in 1..=n {
        let b = epoch + k as i64 * o.window_ns;
        r.lateness.push(wake[k] - (b - if m.early { o.early_ns } else { 0 }));
        r.boundary.push(go[k] - b);
        r.stop_call.push(stop_done[k] - go[k]);
        if k < n {
            r.release_call.push(rel_done[k] - rel[k]);
        }
        let t = seen[k].load(Ordering::Acquire);
        match (nowait, t) {
            (false, _) => r.stop.push(stop_done[k] - go[k]),
            (true, t) if t > 0 => r.stop.push(t - go[k]),
            _ => {}
        }
        // The outgoing child: anything after the stop was issued, until it is released again?
        let out = &iv[(k - 1) % 2];
        let back = if k + 1 < n { rel[k + 1] } else { final_release };
        let i = out.partition_point(|&(_, e)| e <= go[k]);
        if i < out.len() && out[i].0 < back {
            r.violations += 1;
            r.violation_max = r.violation_max.max(out[i].1.min(back) - go[k]);
        }
        let j = out.partition_point(|&(_, e)| e <= b);
        if j < out.len() && out[j].0 < go[k] {
            r.overruns += 1;
            r.overrun_max = r.overrun_max.max(out[j].1.min(go[k]) - b);
        }
        if k < n {
            let inc = &iv[k % 2];
            let f = inc.partition_point(|&(s, _)| s < rel[k]);
            match inc.get(f) {
                Some(&(s, _)) if s < b + o.window_ns => {
                    r.release.push(s - rel[k]);
                    r.pcs.push(s - b);
                }
                _ => r.missed += 1,
            }
        }
    }
    r
}

fn stats(v: &[i64]) -> Option<(f64, f64, f64, f64)> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let q = |p: f64| s[((p * s.len() as f64) as usize).min(s.len() - 1)] as f64 / 1000.0;
    Some((s[0] as f64 / 1000.0, q(0.5), q(0.99), s[s.len() - 1] as f64 / 1000.0))
}

fn triple(v: &[i64]) -> String {
    stats(v).map_or("-".into(), |(_, med, p99, max)| format!("{med:.1}/{p99:.1}/{max:.0}"))
}

impl Result {
    fn print(&self) {
        println!("== {}", self.name);
        let line = |what: &str, v: &[i64]| match stats(v) {
            Some((min, med, p99, max)) => {
                println!("  {what:<44} min {min:>8.1}  median {med:>8.1}  p99 {p99:>8.1}  max {max:>9.1} us  (n={})", v.len())
            }
            None => println!("  {what:<44} -"),
        };
        line("timer lateness (wake - planned)", &self.lateness);
        line("boundary lateness (switch starts - boundary)", &self.boundary);
        line("stop call returns (write, or write + wait)", &self.stop_call);
        line("stop completion (from stop issued)", &self.stop);
        line("release call (thaw write / SIGCONT)", &self.release_call);
        line("release (release write -> incoming runs)", &self.release);
        line("PCS (planned boundary -> incoming runs)", &self.pcs);
        println!(
            "  outgoing seen running after the stop was issued: {} switches (max {:.1} us)",
            self.violations,
            self.violation_max as f64 / 1000.0
        );
        println!("  outgoing ran past the planned boundary: {} switches (max {:.1} us)", self.overruns, self.overrun_max as f64 / 1000.0);
        let stalls = self.lateness.iter().filter(|&&l| l > 1_000_000).count();
        println!(
            "  incoming not seen in its window: {}, stop failures/timeouts: {}, switches woken > 1 ms late: {stalls}",
            self.missed, self.stop_failures
        );
    }
}
