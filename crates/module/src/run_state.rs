//! State shared by the scheduler threads, the lifecycle thread and the run's owner.

use crate::backend::interface::PartitionGate;
use crate::control::SharedControl;
use crate::guard::CoreGuard;
use crate::plan::Plan;
use crossbeam_queue::ArrayQueue;
use partita_trace::Event;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// What the module knows of a partition at run time.
pub struct PartitionRun {
    pub control: SharedControl,
    pub gate: Arc<dyn PartitionGate>,
    /// Cores on which one of its windows is open now; it is released while this is > 0.
    pub active_cores: AtomicU32,
    pub state: AtomicU32,
    /// Planned window start (CLOCK_MONOTONIC) whose PCS is still to be read, per module core.
    pub pending_probe: Vec<AtomicI64>,
    /// Garbage a scheduler thread read from the partition's probes, for the lifecycle thread
    /// to report (the scheduler threads never block nor allocate for it).
    pub probe_garbage: ProbeGarbage,
}

/// Probe garbage seen since the lifecycle thread last took it.
#[derive(Default)]
pub struct ProbeGarbage {
    /// How many times.
    pub count: AtomicU64,
    /// The last field at fault: 0 = `planned_ns`, 1 = `running_ns`.
    pub running_field: AtomicBool,
    pub value: AtomicU64,
}

impl ProbeGarbage {
    pub fn note(&self, g: &partita_abi::untrusted::Garbage) {
        self.running_field.store(g.field == "running_ns", Ordering::Relaxed);
        self.value.store(g.value, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Release);
    }

    /// The garbage noted since the last take, as (the last one, how many).
    pub fn take(&self) -> Option<(partita_abi::untrusted::Garbage, u64)> {
        let n = self.count.swap(0, Ordering::Acquire);
        let field = if self.running_field.load(Ordering::Relaxed) { "running_ns" } else { "planned_ns" };
        (n > 0).then(|| (partita_abi::untrusted::Garbage::new("probe", field, self.value.load(Ordering::Relaxed)), n))
    }
}

/// Values of [`PartitionRun::state`].
pub mod partition_state {
    /// Its program runs (or is being started) in its windows.
    pub const ACTIVE: u32 = 0;
    /// IDLE mode: no program; its windows pass unused.
    pub const IDLE: u32 = 1;
    /// Its program ended or could not start; its windows pass unused.
    pub const DEAD: u32 = 2;
}

pub struct RunState {
    pub plan: Plan,
    /// CLOCK_MONOTONIC of the start of the first major frame: decided once every partition
    /// program is started ([`RunState::set_epoch`]), before any scheduler thread runs.
    epoch_ns: AtomicI64,
    pub partitions: Vec<PartitionRun>,
    /// Set to end the run at the next boundary (Ctrl-C, fatal error).
    pub stop: AtomicBool,
    /// The health monitor shut the module down (a module-level fault: exit status 1).
    pub module_fault: AtomicBool,
    /// End after this many major frames of core 0's schedule (0 = no limit).
    pub frames_limit: u64,
    /// End at the first frame boundary at or after this instant (i64::MAX = no limit).
    end_ns: AtomicI64,
    /// Major frames completed (counted by core 0).
    pub frames: AtomicU64,
    /// Index (into plan.schedules) of the schedule in force, and when it began.
    pub schedule: AtomicUsize,
    pub schedule_started_ns: AtomicI64,
    /// A requested schedule change: index + 1 (0 = none) and the frame boundary it applies at.
    pub pending_schedule: AtomicUsize,
    pub pending_at_ns: AtomicI64,
    /// Events from the scheduler threads (one queue per core) and the lifecycle thread.
    pub core_events: Vec<ArrayQueue<Event>>,
    pub dropped_events: AtomicU64,
    /// Cores whose scheduler thread has finished.
    pub cores_done: AtomicU32,
    /// How long before a boundary the scheduler first wakes to prepare it; it then adapts
    /// (`scheduler::Margin`).
    pub early_wake_ns: i64,
    /// Per core: the guard that holds a partition whose stop write is blocked (guard.rs); empty
    /// or None: not guarded (virtual-time tests).
    pub guards: Vec<Option<CoreGuard>>,
}

/// Default margin of the early wake-up before a boundary (docs/scheduling.md).
pub const DEFAULT_EARLY_WAKE_NS: i64 = 100_000;

/// Room for events of about one second of 1 ms windows per core before the drain runs.
const EVENTS_PER_CORE: usize = 16_384;

impl RunState {
    pub fn new(plan: Plan, epoch_ns: i64, partitions: Vec<PartitionRun>, frames_limit: u64, end_ns: i64) -> RunState {
        let cores = plan.cores.len();
        let initial = plan.initial_schedule;
        RunState {
            plan,
            epoch_ns: AtomicI64::new(epoch_ns),
            partitions,
            stop: AtomicBool::new(false),
            module_fault: AtomicBool::new(false),
            frames_limit,
            end_ns: AtomicI64::new(end_ns),
            frames: AtomicU64::new(0),
            schedule: AtomicUsize::new(initial),
            schedule_started_ns: AtomicI64::new(epoch_ns),
            pending_schedule: AtomicUsize::new(0),
            pending_at_ns: AtomicI64::new(0),
            core_events: (0..cores).map(|_| ArrayQueue::new(EVENTS_PER_CORE)).collect(),
            dropped_events: AtomicU64::new(0),
            cores_done: AtomicU32::new(0),
            early_wake_ns: DEFAULT_EARLY_WAKE_NS,
            guards: Vec::new(),
        }
    }

    /// Records an event of `core` (never blocks: a full queue counts a drop).
    pub fn emit(&self, core: usize, e: Event) {
        if self.core_events[core].push(e).is_err() {
            self.dropped_events.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// CLOCK_MONOTONIC of the start of the first major frame.
    pub fn epoch_ns(&self) -> i64 {
        self.epoch_ns.load(Ordering::Acquire)
    }

    /// The first frame boundary at or after this instant ends the run (i64::MAX: no limit).
    pub fn end_ns(&self) -> i64 {
        self.end_ns.load(Ordering::Acquire)
    }

    /// Sets the epoch (and the end, `duration_ns` after it) once the partitions' programs are
    /// started, in the run state and in every partition's control block: the start-up takes
    /// what preparing the partitions took, not a fixed margin per partition. Called before any
    /// scheduler thread exists and before any partition program runs.
    pub fn set_epoch(&self, epoch_ns: i64, duration_ns: Option<i64>) {
        self.epoch_ns.store(epoch_ns, Ordering::Release);
        self.end_ns.store(duration_ns.map_or(i64::MAX, |d| epoch_ns.saturating_add(d)), Ordering::Release);
        self.schedule_started_ns.store(epoch_ns, Ordering::Release);
        for p in &self.partitions {
            p.control.set_epoch(&self.plan, epoch_ns);
        }
    }

    /// Nanoseconds since the epoch of a CLOCK_MONOTONIC instant.
    pub fn rel(&self, monotonic_ns: i64) -> i64 {
        monotonic_ns - self.epoch_ns()
    }

    /// Asks for schedule `index` from the next major frame boundary that is at least `margin_ns`
    /// away (all cores switch at the same boundary).
    pub fn request_schedule(&self, index: usize, now_ns: i64, margin_ns: i64) {
        let current = &self.plan.schedules[self.schedule.load(Ordering::Acquire)];
        let started = self.schedule_started_ns.load(Ordering::Acquire);
        let maf = current.major_frame_ns.max(1);
        let elapsed = (now_ns + margin_ns - started).max(0);
        let at = started + (elapsed / maf + 1) * maf;
        self.pending_at_ns.store(at, Ordering::Release);
        self.pending_schedule.store(index + 1, Ordering::Release);
    }
}
