//! `partita run`: from a validated module to partitions running in their windows, and back to
//! a clean machine (no leftover processes, cgroups or shared memory) with the run's events.

use crate::backend::cpu_guard;
use crate::backend::interface::Backend;
use crate::backend::kvm::KvmBackend;
use crate::backend::pm_qos::LatencyRequest;
use crate::backend::process::sched_broker::{BROKER_PRIORITY, PARTITION_RT_CEILING};
use crate::backend::process::{Capabilities, ProcessBackend, ProcessOptions, probe_capabilities};
use crate::backend::rt::{self, SCHEDULER_PRIORITY};
use crate::backend::rt_throttle::{RtThrottle, Throttling};
use crate::control::SharedControl;
use crate::guard::CoreGuard;
use crate::hm::HmTables;
use crate::lifecycle::{EventSink, Injection, Launch, Lifecycle, doorbell};
use crate::plan::Plan;
use crate::ports::udp::UdpLinks;
use crate::run_state::{PartitionRun, RunState};
use crate::scheduler::{Clock, run_core};
use crate::signal_guard::SignalGuard;
use partita_config::model::{Backend as BackendKind, Module};
use partita_trace::stream::SummaryBuilder;
use partita_trace::summary::TraceSummary;
use partita_trace::{CoreInfo, Event, PartitionInfo, StartupTimes};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::time::Duration;

/// Priority of the lifecycle thread: above every partition thread, below the schedulers.
const LIFECYCLE_PRIORITY: i32 = 95;
/// Priority of the signal guard: SIGTERM and SIGINT end the run even when partitions keep
/// every CPU busy at their ceiling, and the lifecycle and broker threads are busy too.
const SIGNAL_GUARD_PRIORITY: i32 = 98;

// The order that keeps the module in charge of its CPUs (docs/scheduling.md): partitions (at
// most their ceiling) < lifecycle = scheduling broker < signal guard < per-core schedulers.
const _: () = assert!(
    PARTITION_RT_CEILING < LIFECYCLE_PRIORITY
        && LIFECYCLE_PRIORITY == BROKER_PRIORITY
        && BROKER_PRIORITY < SIGNAL_GUARD_PRIORITY
        && SIGNAL_GUARD_PRIORITY < SCHEDULER_PRIORITY
        && IDLE_POLL_PRIORITY < PARTITION_RT_CEILING
        && crate::plan::HIGHEST_BAND_PRIORITY <= PARTITION_RT_CEILING
);
/// Below every partition thread (ARINC priorities map to 11 and up, include/ARINC653.h).
const IDLE_POLL_PRIORITY: i32 = 1;

/// From the moment every partition program is started (held before `execve`) to the epoch:
/// room for the module's threads to start, pin themselves and take their priorities (well
/// under a millisecond on a quiet host; a late one shows as the first windows' lateness).
const EPOCH_MARGIN_NS: i64 = 10_000_000;

/// A callback for the live status.
pub type Tick = Box<dyn FnMut(&RunState) + Send>;

pub struct RunOptions {
    /// Stop after this many major frames.
    pub frames: Option<u64>,
    /// Stop at the first frame boundary after this long.
    pub duration: Option<Duration>,
    /// Write the trace (JSON Lines) here.
    pub trace: Option<PathBuf>,
    /// Keep each partition's output in DIR/NAME.log.
    pub log_dir: Option<PathBuf>,
    /// How long before each boundary the schedulers wake (default 60 us).
    pub early_wake: Option<Duration>,
    /// Called about once a second while the module runs (live status).
    pub on_tick: Option<Tick>,
    /// Errors to raise as if detected (`--inject`).
    pub inject: Vec<InjectSpec>,
    /// Keep every module CPU busy while its partitions are idle (`--idle-poll`, see `idle_poll`).
    pub idle_poll: bool,
    /// Leave Linux real-time throttling as it is (`--keep-rt-throttling`; see `rt_throttle`).
    pub keep_rt_throttling: bool,
    /// A guardian process cleans up if the module is killed (`backend::guardian`): partitions
    /// then get SIGSTOP, not SIGKILL, when the module dies.
    pub guardian: bool,
    /// Make no CPU wake-up latency request for the run (`--keep-cpu-latency`; see `pm_qos`).
    pub keep_cpu_latency: bool,
}

/// `--inject PARTITION:ERROR_CODE@TIME`: raise `code` (an ABI error code) for the partition
/// named `partition` at `at` after the module epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectSpec {
    pub partition: String,
    pub code: u32,
    pub at: Duration,
}

pub struct RunReport {
    pub frames: u64,
    /// The run summary, built while the module ran (the events themselves are only in the
    /// trace file, if any).
    pub summary: TraceSummary,
    pub mechanism: String,
    pub capabilities: Capabilities,
    pub interrupted: bool,
    /// The health monitor shut the module down (module-level fault).
    pub module_fault: bool,
}

/// The real clock of one scheduler thread: absolute CLOCK_MONOTONIC sleeps on two timerfds,
/// armed ahead (see `Clock::arm`): the scheduler arms the next boundary's wake-up and the one
/// after it, so that each arming finds an earlier timer pending and does not reprogram the
/// CPU's timer (which exits to the hypervisor on a nested VM: 8 us there).
struct RealClock {
    timers: [std::os::fd::OwnedFd; 2],
    /// The expiry each timer is armed at (`i64::MIN`: not armed, or read since).
    armed: [std::cell::Cell<i64>; 2],
}

impl RealClock {
    fn new() -> std::io::Result<RealClock> {
        let timer = || {
            // SAFETY: timerfd_create with valid flags; the result is checked and owned.
            let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: a fresh descriptor owned by nobody else.
            Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
        };
        Ok(RealClock { timers: [timer()?, timer()?], armed: [std::cell::Cell::new(i64::MIN), std::cell::Cell::new(i64::MIN)] })
    }

    fn armed_at(&self, t: i64) -> Option<usize> {
        self.armed.iter().position(|a| a.get() == t)
    }
}

impl Clock for RealClock {
    fn now_ns(&self) -> i64 {
        rt::now_ns()
    }
    fn arm(&self, t: i64) {
        if self.armed_at(t).is_some() {
            return;
        }
        // A timer that is free or has expired, else the later of the two.
        let now = rt::now_ns();
        let k = self.armed.iter().position(|a| a.get() < now).unwrap_or(if self.armed[0].get() > self.armed[1].get() { 0 } else { 1 });
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: t.max(1) / 1_000_000_000, tv_nsec: t.max(1) % 1_000_000_000 },
        };
        // SAFETY: arming our own timerfd with a valid absolute expiry.
        let r = unsafe {
            libc::timerfd_settime(std::os::fd::AsRawFd::as_raw_fd(&self.timers[k]), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
        };
        self.armed[k].set(if r == 0 { t } else { i64::MIN });
    }
    fn sleep_until(&self, t: i64) {
        while rt::now_ns() < t {
            self.arm(t);
            let Some(k) = self.armed_at(t) else {
                rt::sleep_until_ns(t);
                break;
            };
            let mut expirations = 0u64;
            // SAFETY: reading the 8-byte expiration count of our timerfd into a valid buffer.
            unsafe { libc::read(std::os::fd::AsRawFd::as_raw_fd(&self.timers[k]), (&mut expirations as *mut u64).cast(), 8) };
            // The timer is one-shot: it must be armed again for another sleep.
            self.armed[k].set(i64::MIN);
        }
    }
    fn spin_until(&self, t: i64) -> i64 {
        rt::spin_until_ns(t)
    }
    fn wake(&self, word: &AtomicU32) {
        let _ = rt::futex_wake_shared(word, i32::MAX);
    }
}

pub fn run(module: &Module, config_path: &Path, mut opts: RunOptions) -> Result<RunReport, String> {
    let run_began_ns = rt::now_ns();
    let plan = Plan::new(module);
    let hm = HmTables::new(module);
    let mut injections = Vec::new();
    for j in &opts.inject {
        let partition = plan
            .partitions
            .iter()
            .position(|p| p.name == j.partition)
            .ok_or_else(|| format!("--inject names partition {:?}, which the module does not run", j.partition))?;
        injections.push(Injection { partition, code: j.code, at_ns: j.at.as_nanos().min(i64::MAX as u128) as i64 });
    }
    // First, before any thread of the run exists: they all inherit the blocked signals.
    let signals = SignalGuard::new().map_err(|e| format!("cannot set up the signal guard (signalfd): {e}"))?;
    let caps = probe_capabilities();
    for m in &caps.missing {
        crate::warn_line!("partita: warning: {m}");
    }
    caps.require_if_strict().map_err(|e| e.to_string())?;
    // Before anything is created: a kvm partition on a machine whose /dev/kvm is unusable is
    // refused with its name and the reason.
    let mut kvm = match plan.partitions.iter().find(|p| p.backend == BackendKind::Kvm) {
        Some(p) => Some(
            KvmBackend::new(caps.sched_fifo, PARTITION_RT_CEILING)
                .map_err(|e| format!("partition {} \"{}\" asks for the kvm backend, but {e}", p.id, p.name))?,
        ),
        None => None,
    };
    // Before anything is created: the CPUs are this run's alone and no real-time task holds them.
    let module_cpus: Vec<u32> = plan.cores.iter().map(|c| c.cpu).collect();
    let _cpu_locks = match cpu_guard::lock_cpus(Path::new(cpu_guard::LOCK_DIR), &module_cpus) {
        Ok(l) => Some(l),
        Err(e @ cpu_guard::LockError::Held(_)) => return Err(e.to_string()),
        Err(e) if crate::backend::strict() => return Err(e.to_string()),
        Err(e) => {
            crate::warn_line!("partita: warning: {e}; another run could use the same CPUs");
            None
        }
    };
    if caps.sched_fifo {
        cpu_guard::probe_cpus(&module_cpus)?;
    }
    // Restored when the run ends; a stuck run restores it before it exits (`end_stuck_run`).
    let throttle = std::sync::Mutex::new(rt_throttling(&opts)?);
    let _latency = cpu_latency(&opts, &module_cpus)?;
    // The process backend's run: its cgroups, the partitions' data directories, the broker.
    let mut backend = ProcessBackend::new(
        &plan,
        ProcessOptions {
            caps: &caps,
            guardian: opts.guardian,
            workdir: module.base_dir.clone(),
            config_path,
            spawner_priority: LIFECYCLE_PRIORITY,
        },
    )?;
    // Partitions are created stopped before the epoch; their initialization runs in their
    // windows. The epoch is decided once their programs are started (`RunState::set_epoch`):
    // until then this placeholder stands in.
    let prepare_began_ns = rt::now_ns();
    let epoch_ns = prepare_began_ns;
    let ids: Vec<u32> = plan.partitions.iter().map(|p| p.id).collect();
    let memory = crate::ports::create(module, &ids).map_err(|e| format!("channel memory: {e}"))?;
    let mut udp = UdpLinks::start(memory.remote).map_err(|e| format!("inter-module channels: {e}"))?;
    let mut ports = memory.partitions.into_iter();
    let mut runs = Vec::new();
    let mut launches = Vec::new();
    for (i, p) in plan.partitions.iter().enumerate() {
        // Each partition by the backend its pt:Backend names.
        let prepared = match (p.backend, kvm.as_mut()) {
            (BackendKind::Kvm, Some(kvm)) => kvm.prepare(&plan, i)?,
            _ => backend.prepare(&plan, i)?,
        };
        let mut control = SharedControl::create(&plan, i, epoch_ns).map_err(|e| format!("partition {}: control block: {e}", p.name))?;
        control.block().hm.process_level.store(hm.process_level_mask(), Ordering::Release);
        control.attach_ports(ports.next().unwrap_or_default());
        runs.push(PartitionRun {
            control,
            gate: prepared.gate,
            active_cores: AtomicU32::new(0),
            state: AtomicU32::new(0),
            pending_probe: (0..plan.cores.len()).map(|_| AtomicI64::new(0)).collect(),
            probe_garbage: Default::default(),
        });
        launches.push(Launch {
            name: p.name.clone(),
            id: p.id,
            partition: prepared.partition,
            doorbell: doorbell().map_err(|e| e.to_string())?,
            log: opts.log_dir.as_ref().map(|d| d.join(format!("{}.log", p.name))),
        });
    }
    if let Some(dir) = &opts.log_dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mechanism = runs.first().map_or("none", |r| r.gate.mechanism()).to_string();
    let frames_limit = opts.frames.unwrap_or(0);
    let mut state = RunState::new(plan, epoch_ns, runs, frames_limit, i64::MAX);
    if let Some(early) = opts.early_wake {
        state.early_wake_ns = early.as_nanos().min(10_000_000) as i64;
    }
    state.guards = (0..state.plan.cores.len())
        .map(|core| match CoreGuard::new() {
            Ok(g) => Some(g),
            Err(e) => {
                crate::warn_line!(
                    "partita: warning: core {core} has no guard ({e}): a stop blocked in the kernel lets its partition run on"
                );
                None
            }
        })
        .collect();
    let trace_file = match &opts.trace {
        Some(path) => {
            Some(std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?))
        }
        None => None,
    };
    // The summary's timeline is checked in pieces: a margin of two of the longest major frames
    // (at least 1 s) keeps every window inside a piece.
    let longest_frame = state.plan.schedules.iter().map(|s| s.major_frame_ns).max().unwrap_or(0);
    let summary = SummaryBuilder::streaming(longest_frame.saturating_mul(2), SUMMARY_LIST_LIMIT);
    let sink = EventSink { file: trace_file, summary };
    let mut lifecycle = Lifecycle::new(
        &state,
        launches,
        sink,
        Box::new(crate::output::Console::new(std::io::stdout()).map_err(|e| e.to_string())?),
        hm,
        injections,
    )
    .map_err(|e| e.to_string())?;
    let failed: Vec<(usize, String)> = (0..state.partitions.len()).filter_map(|i| lifecycle.start(i).err().map(|r| (i, r))).collect();
    let started_ns = rt::now_ns();
    if let Err(e) = rt::lock_memory() {
        crate::warn_line!("partita: warning: cannot lock memory ({e}); page faults may delay window boundaries");
    }
    let duration_ns = opts.duration.map(|d| d.as_nanos().min(i64::MAX as u128) as i64);
    state.set_epoch(rt::now_ns() + EPOCH_MARGIN_NS, duration_ns);
    let startup = StartupTimes { run_t: state.rel(run_began_ns), prepare_t: state.rel(prepare_began_ns), started_t: state.rel(started_ns) };
    lifecycle.emit(module_start(&state, config_path, &mechanism, startup));
    for (i, reason) in failed {
        lifecycle.fail(i, reason);
    }
    let interrupted = Arc::new(AtomicBool::new(false));
    let wake = lifecycle.wake.try_clone().map_err(|e| e.to_string())?;
    // From the stop on, this thread ends the run (joins, trace, clean-up) at the lifecycle's
    // priority, so that a busy host does not hold the end of the run for seconds.
    let mut teardown_priority: Option<rt::RaisedPriority> = None;
    let guards_end = AtomicBool::new(false);
    let sink = std::thread::scope(|scope| {
        {
            let (state, interrupted, signals) = (&state, &interrupted, &signals);
            std::thread::Builder::new()
                .name("partita-signals".into())
                .spawn_scoped(scope, move || {
                    if let Err(e) = rt::set_current_fifo(SIGNAL_GUARD_PRIORITY) {
                        crate::warn_line!("partita: warning: the signal guard runs without real-time priority: {e}");
                    }
                    signals.serve(state, interrupted);
                })
                .expect("thread");
        }
        let lc = std::thread::Builder::new()
            .name("partita-lifecycle".into())
            .spawn_scoped(scope, move || {
                let _ = rt::set_current_fifo(LIFECYCLE_PRIORITY);
                lifecycle.run()
            })
            .expect("thread");
        let cores: Vec<_> = (0..state.plan.cores.len())
            .map(|core| {
                let state = &state;
                let cpu = state.plan.cores[core].cpu as usize;
                std::thread::Builder::new()
                    .name(format!("partita-core{core}"))
                    .spawn_scoped(scope, move || {
                        if let Err(e) = rt::pin_current_thread(cpu) {
                            crate::warn_line!("partita: warning: cannot pin core {core}'s scheduler to CPU {cpu}: {e}");
                        }
                        if let Err(e) = rt::set_current_fifo(SCHEDULER_PRIORITY) {
                            crate::warn_line!("partita: warning: core {core}'s scheduler runs without real-time priority: {e}");
                        }
                        match RealClock::new() {
                            Ok(clock) => run_core(state, core, &clock),
                            Err(e) => {
                                crate::warn_line!("partita: core {core}'s scheduler has no timer: {e}");
                                state.stop.store(true, Ordering::Release);
                                state.cores_done.fetch_add(1, Ordering::AcqRel);
                                0
                            }
                        }
                    })
                    .expect("thread")
            })
            .collect();
        // Set once every scheduler thread has ended (also one that panicked and never counted
        // itself done): the guards end then.
        let guards_end = &guards_end;
        for (core, guard) in state.guards.iter().enumerate() {
            let Some(guard) = guard else { continue };
            let state = &state;
            let cpu = state.plan.cores[core].cpu as usize;
            std::thread::Builder::new()
                .name(format!("partita-guard{core}"))
                .spawn_scoped(scope, move || {
                    // On the core's CPU at the scheduler's priority: it runs as soon as the
                    // scheduler thread sleeps in a blocked write (guard.rs).
                    if let Err(e) = rt::pin_current_thread(cpu).and_then(|()| rt::set_current_fifo(SCHEDULER_PRIORITY)) {
                        crate::warn_line!("partita: warning: core {core}'s guard cannot run on CPU {cpu} at the top priority: {e}");
                    }
                    guard.run(
                        || guards_end.load(Ordering::Acquire),
                        |p| {
                            let g = &*state.partitions[p].gate;
                            g.core(core).unwrap_or(g)
                        },
                    );
                })
                .expect("thread");
        }
        if opts.idle_poll {
            for core in 0..state.plan.cores.len() {
                let state = &state;
                let cpu = state.plan.cores[core].cpu as usize;
                std::thread::Builder::new()
                    .name(format!("partita-idle{core}"))
                    .spawn_scoped(scope, move || idle_poll(state, cpu))
                    .expect("thread");
            }
        }
        let mut last_tick = rt::now_ns();
        let planned_end = planned_end_ns(&state);
        let mut stop_seen: Option<i64> = None;
        loop {
            // A scheduler thread that ended without counting itself done panicked: end the run
            // (the others stop at their next frame boundary) rather than wait for ever.
            let finished = cores.iter().filter(|c| c.is_finished()).count() as u32;
            if finished == cores.len() as u32 {
                break;
            }
            if interrupted.load(Ordering::Relaxed) || finished > state.cores_done.load(Ordering::Acquire) {
                state.stop.store(true, Ordering::Release);
            }
            if stop_seen.is_none() && state.stop.load(Ordering::Acquire) {
                stop_seen = Some(rt::now_ns());
                teardown_priority = rt::RaisedPriority::raise(LIFECYCLE_PRIORITY).ok();
            }
            let give_up_at = stop_seen.unwrap_or(i64::MAX).min(planned_end).saturating_add(STUCK_NS);
            if rt::now_ns() >= give_up_at {
                let cores = cores.len() as u32;
                let stuck = cores - state.cores_done.load(Ordering::Acquire).min(cores);
                let what = format!(
                    "{stuck} of {cores} scheduler threads are still blocked in the kernel {} s after the planned end",
                    STUCK_NS / 1_000_000_000
                );
                end_stuck_run(&state, &throttle, &what);
            }
            std::thread::sleep(Duration::from_millis(20));
            if rt::now_ns() - last_tick >= 1_000_000_000 {
                last_tick = rt::now_ns();
                if let Some(tick) = opts.on_tick.as_mut() {
                    tick(&state);
                }
            }
        }
        if teardown_priority.is_none() {
            teardown_priority = rt::RaisedPriority::raise(LIFECYCLE_PRIORITY).ok();
        }
        for c in cores {
            let _ = c.join();
        }
        guards_end.store(true, Ordering::Release);
        for g in state.guards.iter().flatten() {
            g.wake();
        }
        signals.finish();
        let one: u64 = 1;
        // SAFETY: writing the 8-byte counter to our eventfd.
        unsafe { libc::write(std::os::fd::AsRawFd::as_raw_fd(&wake), (&one as *const u64).cast(), 8) };
        // The lifecycle thread ends the partitions and the run; one that does not end (a busy
        // loop at its priority, a kernel call that never returns) must not keep the run from
        // ending either. Its budget: the stuck margin plus what its clean-up may wait for
        // each partition's threads to die (`Lifecycle::shutdown`).
        let budget = STUCK_NS.saturating_add(SHUTDOWN_WAIT_NS.saturating_mul(state.partitions.len() as i64));
        let give_up_at = rt::now_ns().saturating_add(budget);
        while !lc.is_finished() {
            if rt::now_ns() >= give_up_at {
                let what = format!("the lifecycle thread has not ended {} s after the last core stopped", budget / 1_000_000_000);
                end_stuck_run(&state, &throttle, &what);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        lc.join().expect("lifecycle thread")
    });
    let frames = state.frames.load(Ordering::Acquire);
    let mut sink = sink;
    let module_fault = state.module_fault.load(Ordering::Acquire);
    let reason = if module_fault {
        "health monitor shutdown"
    } else if interrupted.load(Ordering::Relaxed) {
        "interrupted"
    } else {
        "completed"
    };
    sink.push(Event::ModuleStop { t: state.rel(rt::now_ns()), frames, reason: reason.into() });
    if let Some(f) = &mut sink.file {
        f.flush().map_err(|e| format!("cannot write the trace: {e}"))?;
    }
    // The run's cgroups are removed here, once every partition is gone.
    drop(backend);
    udp.stop();
    for line in udp.summary() {
        crate::warn_line!("partita: {line}");
    }
    Ok(RunReport {
        frames,
        summary: sink.summary.finish(),
        mechanism,
        capabilities: caps,
        interrupted: interrupted.load(Ordering::Relaxed),
        module_fault,
    })
}

/// Entries each list of the run summary keeps (mode changes, restarts, HM events, ...): the
/// earliest ones; the summary counts them all.
const SUMMARY_LIST_LIMIT: usize = 100;

/// How long after its planned end (or a stop request) a run whose scheduler threads have not
/// all finished is declared stuck: ample for the last stops (0.5 s) and the clean-up.
const STUCK_NS: i64 = 3_000_000_000;

/// The longest the lifecycle's clean-up waits for one partition's threads to die
/// (`Lifecycle::shutdown`'s `kill_all` timeout).
const SHUTDOWN_WAIT_NS: i64 = crate::lifecycle::SHUTDOWN_KILL_WAIT.as_nanos() as i64;

/// Exit status of a run that had to be abandoned because a core stayed stuck in the kernel.
pub const EXIT_STUCK: i32 = 3;

/// When the run should end by its `--duration` or `--frames` (i64::MAX: only by a signal).
fn planned_end_ns(state: &RunState) -> i64 {
    let frames = if state.frames_limit > 0 {
        let longest = state.plan.schedules.iter().map(|s| s.major_frame_ns).max().unwrap_or(0);
        state.epoch_ns().saturating_add((state.frames_limit as i64).saturating_mul(longest))
    } else {
        i64::MAX
    };
    // `end_ns` ends at the first frame boundary after it.
    let longest = state.plan.schedules.iter().map(|s| s.major_frame_ns).max().unwrap_or(0);
    frames.min(state.end_ns().saturating_add(longest))
}

/// A scheduler thread is still blocked in a kernel call (a stop or release write) seconds after
/// the run should have ended: the run cannot end normally (that thread cannot be joined), yet
/// `partita run` must. Every partition thread is moved to the normal policy and killed without
/// any cgroup write (those are what is stuck), real-time throttling is restored, and the
/// process exits with [`EXIT_STUCK`]. The cgroups left behind are removed by the next run.
fn end_stuck_run(state: &RunState, throttle: &std::sync::Mutex<Option<RtThrottle>>, what: &str) -> ! {
    crate::warn_line!("partita: error: the run did not end: {what}; killing every partition and exiting with status {EXIT_STUCK}");
    for (i, run) in state.partitions.iter().enumerate() {
        if let Err(e) = run.gate.kill_threads() {
            crate::warn_line!("partita: cannot kill partition {}: {e}", state.plan.partitions[i].name);
        }
    }
    drop(throttle.lock().unwrap_or_else(|e| e.into_inner()).take());
    std::process::exit(EXIT_STUCK)
}

/// Requests zero CPU wake-up latency on the run's CPUs for the run unless told not to
/// (`backend::pm_qos`: a timer wake-up costs ~37 us here without the request, ~16 us with it).
fn cpu_latency(opts: &RunOptions, cpus: &[u32]) -> Result<Option<LatencyRequest>, String> {
    if opts.keep_cpu_latency {
        return Ok(None);
    }
    match LatencyRequest::hold(cpus) {
        Ok(r) => {
            crate::warn_line!(
                "partita: zero CPU wake-up latency requested for the run on {} (released at the end; --keep-cpu-latency leaves it)",
                r.describe()
            );
            Ok(Some(r))
        }
        Err(e) if crate::backend::strict() => Err(format!("cannot request zero CPU wake-up latency (PM QoS): {e}")),
        Err(e) => {
            crate::warn_line!("partita: warning: cannot request zero CPU wake-up latency (PM QoS): {e}; wake-ups are slower");
            Ok(None)
        }
    }
}

/// Lifts real-time throttling for the run unless told not to; says what it did or what it costs.
fn rt_throttling(opts: &RunOptions) -> Result<Option<RtThrottle>, String> {
    let found = Throttling::read().map_err(|e| format!("cannot read the real-time throttling settings: {e}"))?;
    if !found.active() {
        return Ok(None);
    }
    let cost = format!(
        "Linux real-time throttling (kernel.sched_rt_runtime_us = {} of {}) stops all real-time threads of a CPU that they keep busy for {}: partitions and the module scheduler",
        found.runtime_us,
        found.period_us,
        found.describe()
    );
    if opts.keep_rt_throttling {
        crate::warn_line!("partita: warning: {cost}; windows can start up to {} ms late", found.stalled_ms());
        return Ok(None);
    }
    match RtThrottle::lift() {
        Ok(lifted) => {
            if let Some(t) = &lifted {
                crate::warn_line!(
                    "partita: real-time throttling lifted for the run (it was {} us of every {} us; restored at the end; --keep-rt-throttling keeps it)",
                    t.found.runtime_us,
                    t.found.period_us
                );
            }
            Ok(lifted)
        }
        Err(e) if crate::backend::strict() => {
            Err(format!("{cost}, and it cannot be lifted: {e} (CI=true: missing capabilities are errors)"))
        }
        Err(e) => {
            crate::warn_line!("partita: warning: {cost}, and it cannot be lifted: {e}");
            Ok(None)
        }
    }
}

fn module_start(state: &RunState, config_path: &Path, mechanism: &str, startup: StartupTimes) -> Event {
    let plan = &state.plan;
    Event::ModuleStart {
        t: state.rel(rt::now_ns()),
        module: plan.module_name.clone(),
        config: config_path.display().to_string(),
        epoch_monotonic_ns: state.epoch_ns(),
        mechanism: mechanism.to_string(),
        cores: plan.cores.iter().map(|c| CoreInfo { core: c.index, cpu: c.cpu, policy: c.policy.as_str().to_string() }).collect(),
        partitions: plan.partitions.iter().map(|p| PartitionInfo { id: p.id, name: p.name.clone() }).collect(),
        schedule: plan.schedules[plan.initial_schedule].id,
        startup,
    }
}

/// Spins on `cpu` at the lowest real-time priority until the run ends, so that the CPU never
/// halts while its partitions are idle: on a virtual machine a halted virtual CPU takes tens of
/// microseconds to wake (an IPI or timer through the host), a running one a few. Every
/// partition thread preempts it at once, so it never runs in a partition's place.
///
/// Real-time, not SCHED_IDLE: an ordinary spinner is an ordinary task starved by busy
/// partitions, and Linux's fair deadline server then runs it for 50 ms of every second in
/// their place (measured: 150 of 3600 windows late by up to 51 ms). The price is that
/// ordinary tasks get a module CPU only through that server (docs/scheduling.md).
fn idle_poll(state: &RunState, cpu: usize) {
    if let Err(e) = rt::pin_current_thread(cpu) {
        crate::warn_line!("partita: warning: --idle-poll: cannot pin to CPU {cpu} ({e}); CPU {cpu} may halt when idle");
        return;
    }
    if let Err(e) = rt::set_current_fifo(IDLE_POLL_PRIORITY) {
        crate::warn_line!("partita: warning: --idle-poll: no real-time priority ({e}); CPU {cpu} may halt when idle");
        return;
    }
    let cores = state.plan.cores.len() as u32;
    while state.cores_done.load(Ordering::Acquire) < cores {
        for _ in 0..1000 {
            std::hint::spin_loop();
        }
    }
}
