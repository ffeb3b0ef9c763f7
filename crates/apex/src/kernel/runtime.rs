//! The partition runtime: maps the control block the module passes on fd 3 (or builds a private
//! one when the program runs standalone), and starts the runtime's own threads. It initializes
//! lazily on the first APEX call; afterwards `rt()` is one atomic load.

use crate::kernel::critical::Critical;
use crate::kernel::process::ProcessSlot;
use crate::kernel::sys::{self, Futex};
use crate::kernel::{critical, faults, monitor, signals, trace};
use crate::types::MAX_NUMBER_OF_PROCESSES;
use partita_abi::{self as abi, ControlBlock, ScheduleSnapshot};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::{Once, OnceLock};

/// Linux SCHED_FIFO priorities of the partition's threads. By default the processes' ARINC
/// priorities are ranked onto 11..=73 (`levels`); the module may give another band
/// (`Runtime::band`).
pub const PROCESS_RT_BASE: i32 = 10;
/// The deadline-monitor (timer) thread.
pub const TIMER_RT_PRIO: i32 = 80;
/// The per-core window-start probe threads (the module's scheduler runs at 99).
pub const PROBE_RT_PRIO: i32 = 90;

/// "No deadline" in absolute CLOCK_MONOTONIC terms.
pub const NO_DEADLINE: i64 = i64::MAX;

pub struct Runtime {
    pub cb: &'static ControlBlock,
    pub standalone: bool,
    pub epoch_ns: i64,
    /// Host CPU of each partition core (index = PROCESSOR_CORE_ID).
    pub host_cpus: Vec<u32>,
    /// Module core index of each partition core.
    pub module_cores: Vec<u32>,
    pub procs: Box<[ProcessSlot]>,
    /// Number of created processes; slots below it are immutable in their configuration.
    pub count: AtomicU32,
    /// Serializes the services that change process states (see `critical`).
    pub lock: critical::PiMutex,
    /// Bumped (and futex-woken) when the partition enters NORMAL.
    pub mode_gen: AtomicU32,
    /// Bumped (and futex-woken) when a deadline may have moved earlier.
    pub timer_word: AtomicU32,
    /// 1 while the deadline monitor waits without a timer (its next deadline falls where the
    /// partition is stopped; the window-start probe wakes it).
    pub monitor_untimed: AtomicU32,
    /// Whether SCHED_FIFO is available (false after the first EPERM).
    pub rt_allowed: AtomicBool,
    /// Also print every trace event on stderr (standalone, `PARTITA_STANDALONE_TRACE=1`).
    pub trace_stderr: bool,
    /// SET_MODULE_SCHEDULE made here and not yet visible in the schedule state: (id + 1, the
    /// time of last switch when it was made). 0 = none.
    pub requested_schedule: AtomicU32,
    pub requested_at_switch: AtomicI64,
    /// Per partition core: the probe `wake` count of the last first-process dispatch recorded.
    pub last_dispatch: Vec<AtomicU32>,
    /// Gated per core by the module: how threads are kept in their core's cgroup.
    pub placement: Option<crate::kernel::placement::Placement>,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();
static STARTED: Once = Once::new();

/// The runtime, initialized on first use. After initialization: no system call, no lock.
#[inline]
pub fn rt() -> &'static Runtime {
    if let Some(r) = RUNTIME.get()
        && STARTED.is_completed()
    {
        return r;
    }
    init_slow()
}

#[cold]
fn init_slow() -> &'static Runtime {
    let r = RUNTIME.get_or_init(Runtime::new);
    STARTED.call_once(|| r.start_threads());
    r
}

unsafe extern "C" {
    static mut stdout: *mut libc::FILE;
}

impl Runtime {
    fn new() -> Runtime {
        // SAFETY: `stdout` is the C library's stream; changing its buffering before our own
        // output is the documented use of setvbuf.
        unsafe { libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IOLBF, 0) };
        let standalone = std::env::var_os(abi::ENV_PARTITION).is_none();
        let cb = if standalone { standalone_block() } else { map_control_block() };
        let n = (cb.core_count as usize).clamp(1, abi::MAX_CORES);
        let host_cpus = cb.host_cpus[..n].to_vec();
        let module_cores = cb.module_cores[..n].to_vec();
        let procs: Box<[ProcessSlot]> = (0..MAX_NUMBER_OF_PROCESSES).map(|_| ProcessSlot::default()).collect();
        Runtime {
            cb,
            standalone,
            epoch_ns: cb.epoch_ns,
            last_dispatch: (0..n).map(|_| AtomicU32::new(0)).collect(),
            host_cpus,
            module_cores,
            procs,
            count: AtomicU32::new(0),
            lock: critical::PiMutex::new(),
            mode_gen: AtomicU32::new(0),
            timer_word: AtomicU32::new(0),
            monitor_untimed: AtomicU32::new(0),
            rt_allowed: AtomicBool::new(true),
            trace_stderr: standalone && std::env::var_os("PARTITA_STANDALONE_TRACE").is_some_and(|v| v != "0"),
            requested_schedule: AtomicU32::new(0),
            requested_at_switch: AtomicI64::new(0),
            placement: if standalone { None } else { crate::kernel::placement::Placement::from_env(n) },
        }
    }

    fn start_threads(&'static self) {
        signals::install();
        faults::install();
        faults::prepare_thread();
        monitor::start(self);
    }

    /// The band of Linux real-time priorities given by the module (see the ABI): its base and
    /// its number of levels (the processes' priorities are ranked onto base+1..=base+levels).
    pub fn band(&self) -> (i32, i32) {
        match (self.cb.rt_base as i32, self.cb.rt_levels as i32) {
            (base, levels) if levels > 0 && base > 0 && base + levels + 1 < TIMER_RT_PRIO => (base, levels),
            _ => (PROCESS_RT_BASE, 63),
        }
    }

    /// The priority of a process holding the preemption lock: above the partition's band.
    pub fn lock_rt_priority(&self) -> i32 {
        let (base, levels) = self.band();
        base + levels + 1
    }

    pub fn mode(&self) -> u32 {
        self.cb.status.operating_mode.load(Ordering::Acquire)
    }

    /// Whether a process without a core preference may run on any of the partition's cores:
    /// several cores and either one gate for all of them (the module then requires the same
    /// windows on each) or, gated per core, a shared cgroup (the windows are the same on each).
    pub fn no_preference_runs_anywhere(&self) -> bool {
        self.core_count() > 1 && self.placement.as_ref().is_none_or(|p| p.has_shared())
    }

    pub fn core_count(&self) -> usize {
        self.host_cpus.len()
    }

    /// Index (PROCESSOR_CORE_ID) of the partition core the caller runs on, if any.
    pub fn current_core_index(&self) -> Option<usize> {
        let cpu = sys::current_cpu()?;
        self.host_cpus.iter().position(|&c| c == cpu)
    }

    /// Module core index for trace events from the calling thread.
    pub fn current_module_core(&self) -> u32 {
        self.module_cores[self.current_core_index().unwrap_or(0)]
    }

    /// The first partition period start at or after `t` (absolute ns); `t` itself when the
    /// partition has no period in the current schedule.
    pub fn next_period_start(&self, t: i64) -> i64 {
        let s = self.schedule();
        let base = if s.started_ns > 0 { s.started_ns } else { self.epoch_ns };
        if s.period_ns <= 0 {
            return t;
        }
        if t <= base {
            return base;
        }
        let k = (t - base + s.period_ns - 1) / s.period_ns;
        base + k * s.period_ns
    }

    pub fn schedule(&self) -> ScheduleSnapshot {
        self.cb.schedule.read()
    }

    pub fn processes(&self) -> &[ProcessSlot] {
        &self.procs[..self.count.load(Ordering::Acquire) as usize]
    }

    /// Wakes the deadline monitor after a deadline moved earlier.
    pub fn kick_timer(&self) {
        self.timer_word.fetch_add(1, Ordering::Release);
        sys::futex_wake(&self.timer_word, 1, Futex::Private);
    }

    pub fn trace(&self, kind: u32, a: i64, b: i64) {
        trace::push(self, kind, a, b);
    }
}

/// Posts a request to the module and rings its doorbell. Waits (briefly, bounded) for the
/// previous request to be acknowledged so that it is not overwritten unseen.
pub fn post_request(rt: &Runtime, kind: u32, arg: u32) {
    let _c = Critical::enter(rt);
    let r = &rt.cb.request;
    let give_up = sys::now_ns() + 50_000_000;
    while r.done.load(Ordering::Acquire) != r.seq.load(Ordering::Relaxed) && sys::now_ns() < give_up {
        let ts = libc::timespec { tv_sec: 0, tv_nsec: 200_000 };
        // SAFETY: a valid timespec; the remaining time is not needed.
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
    }
    r.kind.store(kind, Ordering::Relaxed);
    r.arg.store(arg, Ordering::Relaxed);
    r.seq.fetch_add(1, Ordering::Release);
    sys::write_all(abi::DOORBELL_FD, &1u64.to_ne_bytes());
}

/// Maps fd 3 and checks it is a control block of our ABI; any mismatch is fatal (the module
/// and the library disagree, nothing sensible can run).
fn map_control_block() -> &'static ControlBlock {
    let fail = |why: &str| -> ! {
        eprintln!("partita-apex: {} is set but fd {} is not a usable Partita control block: {why}", abi::ENV_PARTITION, abi::CONTROL_FD);
        std::process::exit(1)
    };
    let size = size_of::<ControlBlock>();
    // SAFETY: fstat writes into a zeroed stat buffer; fd 3 may or may not be open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid, writable stat buffer.
    if unsafe { libc::fstat(abi::CONTROL_FD, &mut st) } != 0 {
        fail("fstat failed (is fd 3 open?)");
    }
    if (st.st_size as usize) < size {
        fail(&format!("it is {} bytes, the ABI needs {size}", st.st_size));
    }
    // SAFETY: mapping a shared file mapping of the checked size; the result is checked.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, abi::CONTROL_FD, 0) };
    if p == libc::MAP_FAILED {
        fail(&format!("mmap failed: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the mapping is page-aligned, at least `size` bytes, lives for the rest of the
    // program (never unmapped) and ControlBlock is made of atomics and plain integers, valid
    // for any bit pattern.
    let cb: &'static ControlBlock = unsafe { &*(p as *const ControlBlock) };
    if cb.magic != abi::ABI_MAGIC {
        fail("bad magic");
    }
    if cb.version != abi::ABI_VERSION {
        fail(&format!("ABI version {} (this library speaks {})", cb.version, abi::ABI_VERSION));
    }
    if cb.size as usize != size {
        fail(&format!("control block size {} (this library expects {size})", cb.size));
    }
    if cb.core_count == 0 || cb.core_count as usize > abi::MAX_CORES {
        fail(&format!("core_count {}", cb.core_count));
    }
    cb
}

/// The CPUs of `PARTITA_STANDALONE_CPUS` ("0,1" or "2"), or the CPU the program starts on.
fn standalone_cpus() -> Vec<u32> {
    let here = sys::current_cpu().unwrap_or(0);
    let Some(list) = std::env::var("PARTITA_STANDALONE_CPUS").ok() else { return vec![here] };
    let cpus: Option<Vec<u32>> = list.split(',').map(|c| c.trim().parse().ok()).collect();
    match cpus {
        Some(c) if !c.is_empty() && c.len() <= abi::MAX_CORES => c,
        _ => {
            eprintln!("partita-apex: ignoring PARTITA_STANDALONE_CPUS={list:?} (expected e.g. \"0,1\")");
            vec![here]
        }
    }
}

/// A private control block for a program started outside `partita run`.
fn standalone_block() -> &'static ControlBlock {
    let period = match std::env::var("PARTITA_STANDALONE_PERIOD") {
        Ok(v) => match abi::seconds::parse_seconds(&v) {
            Ok(p) if p > 0 => p,
            _ => {
                eprintln!("partita-apex: ignoring PARTITA_STANDALONE_PERIOD={v:?} (expected decimal seconds, e.g. 0.02)");
                100_000_000
            }
        },
        Err(_) => 100_000_000,
    };
    let cpus = standalone_cpus();
    // SAFETY: ControlBlock is atomics and plain integers, for which all-zero bytes are valid.
    let mut cb: Box<ControlBlock> = unsafe { Box::new_zeroed().assume_init() };
    let epoch = sys::now_ns();
    cb.magic = abi::ABI_MAGIC;
    cb.version = abi::ABI_VERSION;
    cb.size = size_of::<ControlBlock>() as u32;
    cb.criticality = 255;
    cb.core_count = cpus.len() as u32;
    cb.name = abi::name_bytes("standalone");
    for (i, &c) in cpus.iter().enumerate() {
        cb.host_cpus[i] = c;
        cb.module_cores[i] = i as u32;
    }
    cb.epoch_ns = epoch;
    cb.status.operating_mode.store(abi::mode::COLD_START, Ordering::Relaxed);
    cb.status.start_condition.store(abi::start_condition::NORMAL_START, Ordering::Relaxed);
    cb.status.module_running.store(1, Ordering::Relaxed);
    cb.schedule_count = 1;
    cb.schedules[0] = abi::ScheduleEntry {
        id: 1,
        // Alone, the program is its own module: nothing to refuse.
        flags: abi::schedule_flags::MAY_SET_SCHEDULE,
        name: abi::name_bytes("standalone"),
        major_frame_ns: period,
        period_ns: period,
        duration_ns: period,
    };
    cb.schedule.publish(&ScheduleSnapshot {
        current_id: 1,
        next_id: 1,
        started_ns: epoch,
        time_of_last_switch_ns: 0,
        period_ns: period,
        duration_ns: period,
    });
    cb.trace.init();
    cb.hm.reports.init();
    // No module tables: the default levels (DEADLINE_MISSED and APPLICATION_ERROR are PROCESS
    // level, see the module's `hm`) decide what the error handler gets.
    // PARTITA_STANDALONE_PROCESS_LEVEL (error code names, comma-separated) replaces them, so that
    // a program can try its error handler on the errors its module makes PROCESS level.
    let mut levels = 1 << abi::error_code::DEADLINE_MISSED | 1 << abi::error_code::APPLICATION_ERROR;
    if let Ok(names) = std::env::var("PARTITA_STANDALONE_PROCESS_LEVEL") {
        levels = 0;
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match abi::error_code::NAMES.iter().position(|n| *n == name) {
                Some(code) => levels |= 1 << code,
                None => eprintln!("partita-apex: PARTITA_STANDALONE_PROCESS_LEVEL: unknown error code {name:?} ignored"),
            }
        }
    }
    cb.hm.process_level.store(levels, Ordering::Relaxed);
    // PARTITA_STANDALONE_RT_BAND ("base,levels") gives the program the band of Linux levels a
    // module would (a narrow one on a FIXED_PRIORITY core), to try its priorities on it.
    if let Ok(v) = std::env::var("PARTITA_STANDALONE_RT_BAND") {
        match v.split_once(',').map(|(b, l)| (b.trim().parse::<u32>(), l.trim().parse::<u32>())) {
            Some((Ok(base), Ok(levels))) if base > 0 && levels > 0 && (base + levels + 1) < TIMER_RT_PRIO as u32 => {
                (cb.rt_base, cb.rt_levels) = (base, levels);
            }
            _ => eprintln!("partita-apex: ignoring PARTITA_STANDALONE_RT_BAND={v:?} (expected \"base,levels\" below {TIMER_RT_PRIO})"),
        }
    }
    eprintln!(
        "partita-apex: {} is not set: running standalone (partition period {} s, CPU {:?}); the partition owns the CPU all the time",
        abi::ENV_PARTITION,
        period as f64 / 1e9,
        cpus
    );
    Box::leak(cb)
}
