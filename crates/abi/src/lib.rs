//! Shared-memory layouts between the module (`partita run`) and the partition runtime
//! (`partita-apex`). Everything is `#[repr(C)]`, fixed-size and made of atomics, because two
//! processes that do not trust each other read and write it concurrently. `no_std`, so that a
//! bare-metal guest runtime can use the same layouts later.
//!
//! Protocol, in short:
//! - The module creates one [`ControlBlock`] per partition in a memfd and passes it to the
//!   partition program as file descriptor [`CONTROL_FD`]; an eventfd, [`DOORBELL_FD`], lets the
//!   partition ring the module when it posts a [`Request`].
//! - Times are `CLOCK_MONOTONIC` nanoseconds. `epoch_ns` is the start of the first major frame;
//!   APEX `GET_TIME` is `now - epoch_ns`.
//! - At each window start on a core, the module's scheduler thread stores the planned instant in
//!   the partition's [`CoreProbe`] and wakes its futex; the partition's probe thread (the highest
//!   priority thread of the partition on that core) stores when it actually ran. That instant
//!   minus the planned boundary is the partition switch cost (PCS).
//! - Partition-side events (mode changes, process start/stop/release, missed deadlines) go
//!   through the [`TraceRing`]; the module drains it into the trace file.
//! - Sampling and queuing ports have their own shared memory and descriptors, described in
//!   [`ports`] (kept out of the control block).

#![no_std]

pub mod clock;
pub mod ports;
pub mod seconds;
pub mod untrusted;

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

/// `b"PARTITA1"` read as a little-endian u64.
pub const ABI_MAGIC: u64 = u64::from_le_bytes(*b"PARTITA1");
/// 4: a sampling slot's seq is 2 * the generation it holds (see `ports::complete_seq`).
/// 5: `PortEntry::config_line`, and the CONFIG_MISMATCH and PRIORITIES_SHARED trace events.
pub const ABI_VERSION: u32 = 6;

/// File descriptor of the control block memfd in a partition program.
pub const CONTROL_FD: i32 = 3;
/// File descriptor of the doorbell eventfd in a partition program.
pub const DOORBELL_FD: i32 = 4;
/// Environment variable that says the program runs under Partita (value: the partition id).
pub const ENV_PARTITION: &str = "PARTITA_PARTITION";
/// Environment variable present when a multi-core partition is stopped and released per core:
/// inherited descriptors (space-separated numbers, -1 = absent) of cgroup files the runtime
/// writes a thread id to, to keep each thread in the cgroup of the core it is pinned to:
/// `STAGING T0 S0 T1 S1 ...`. STAGING is `cgroup.threads` of a cgroup that stays frozen;
/// Ti is `cgroup.threads` of partition core i (index into `host_cpus`), Si the `tasks` of its
/// v1 cpuset (-1 without). A thread moves to core i by: STAGING, then Si (or affinity), then
/// Ti, so that it never runs outside core i's windows or on another CPU. When the partition's
/// windows are the same on all its cores, a last pair `TA SA` follows: the cgroup (and v1
/// cpuset) of threads that may run on any of the partition's CPUs, open only while all its
/// cores are (processes without a core preference go there, through STAGING like any move).
pub const ENV_THREAD_PLACEMENT: &str = "PARTITA_THREAD_PLACEMENT";

pub const MAX_CORES: usize = 16;
pub const MAX_SCHEDULES: usize = 8;
pub const NAME_LEN: usize = 32;
pub const TRACE_CAPACITY: usize = 4096;
/// Room for errors a partition reports to the health monitor before the module drains them.
pub const HM_CAPACITY: usize = 64;
/// A ring push gives up (and counts a drop) after this many tries: correct producers contend
/// for a slot a few times at most.
const MAX_PUSH_ATTEMPTS: u32 = 100_000;

/// ARINC 653 operating modes, with the standard's values.
pub mod mode {
    pub const IDLE: u32 = 0;
    pub const COLD_START: u32 = 1;
    pub const WARM_START: u32 = 2;
    pub const NORMAL: u32 = 3;
}

/// ARINC 653 START_CONDITION_TYPE values.
pub mod start_condition {
    pub const NORMAL_START: u32 = 0;
    pub const PARTITION_RESTART: u32 = 1;
    pub const HM_MODULE_RESTART: u32 = 2;
    pub const HM_PARTITION_RESTART: u32 = 3;
}

/// ARINC 653 ERROR_CODE_TYPE values (as in ARINC653.h).
pub mod error_code {
    pub const DEADLINE_MISSED: u32 = 0;
    pub const APPLICATION_ERROR: u32 = 1;
    pub const NUMERIC_ERROR: u32 = 2;
    pub const ILLEGAL_REQUEST: u32 = 3;
    pub const STACK_OVERFLOW: u32 = 4;
    pub const MEMORY_VIOLATION: u32 = 5;
    pub const HARDWARE_FAULT: u32 = 6;
    pub const POWER_FAILURE: u32 = 7;
    pub const COUNT: u32 = 8;
    /// The standard's names, by value.
    pub const NAMES: [&str; COUNT as usize] = [
        "DEADLINE_MISSED",
        "APPLICATION_ERROR",
        "NUMERIC_ERROR",
        "ILLEGAL_REQUEST",
        "STACK_OVERFLOW",
        "MEMORY_VIOLATION",
        "HARDWARE_FAULT",
        "POWER_FAILURE",
    ];
}

/// Partita's system states, the `SystemState` values of the HM tables.
pub mod system_state {
    /// The partition is initializing (COLD_START / WARM_START: its initialization process).
    pub const PARTITION_INIT: u32 = 1;
    /// The partition is in NORMAL mode (its processes, or its error handler).
    pub const PARTITION_EXECUTION: u32 = 2;
}

/// A fixed-size, NUL-padded name.
pub fn name_bytes(name: &str) -> [u8; NAME_LEN] {
    let mut out = [0u8; NAME_LEN];
    let n = name.len().min(NAME_LEN - 1);
    out[..n].copy_from_slice(&name.as_bytes()[..n]);
    out
}

/// The part of a name before its first NUL.
pub fn name_str(bytes: &[u8; NAME_LEN]) -> &str {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
    core::str::from_utf8(&bytes[..end]).unwrap_or("")
}

#[repr(C)]
pub struct ControlBlock {
    pub magic: u64,
    pub version: u32,
    /// `size_of::<ControlBlock>()`, checked by the partition runtime.
    pub size: u32,
    pub partition_id: u32,
    /// 0 = LEVEL_A .. 4 = LEVEL_E, 255 = not given.
    pub criticality: u32,
    pub system_partition: u32,
    /// Number of valid entries in `host_cpus` / `module_cores`.
    pub core_count: u32,
    pub name: [u8; NAME_LEN],
    /// Host CPU of each module core the partition has windows (or a priority) on.
    pub host_cpus: [u32; MAX_CORES],
    /// The module core index of each entry of `host_cpus`.
    pub module_cores: [u32; MAX_CORES],
    /// CLOCK_MONOTONIC of the start of the first major frame.
    pub epoch_ns: i64,
    pub status: PartitionStatus,
    pub schedule: ScheduleState,
    pub schedule_count: u32,
    /// The Linux real-time priorities the partition's processes use: the distinct ARINC
    /// priorities (1..=239) in use are ranked onto `rt_base + 1 ..= rt_base + rt_levels`, the
    /// highest at the top; the initialization process runs at `rt_base`, a process holding the
    /// preemption lock at `rt_base + rt_levels + 1`.
    /// Partitions served by priority on a FIXED_PRIORITY core get disjoint bands, ordered by
    /// their partition priority. 0 levels: the default band (base 10, 63 levels).
    pub rt_base: u32,
    pub rt_levels: u32,
    pub _pad: u32,
    pub schedules: [ScheduleEntry; MAX_SCHEDULES],
    pub request: Request,
    pub probes: [CoreProbe; MAX_CORES],
    pub trace: TraceRing,
    pub hm: HmBlock,
}

/// What the module says about the partition; the runtime also writes `operating_mode` when it
/// goes from COLD_START/WARM_START to NORMAL (that needs no module action).
#[repr(C)]
pub struct PartitionStatus {
    pub operating_mode: AtomicU32,
    pub start_condition: AtomicU32,
    /// How many times the module restarted the partition.
    pub restarts: AtomicU32,
    /// 1 while the module is running, 0 once it shuts down (the runtime then stops).
    pub module_running: AtomicU32,
}

/// The module schedule in force, published by the module with a sequence lock (`seq` odd
/// while it writes).
#[repr(C)]
pub struct ScheduleState {
    pub seq: AtomicU32,
    pub current_id: AtomicU32,
    pub next_id: AtomicU32,
    pub _pad: AtomicU32,
    /// CLOCK_MONOTONIC when the current schedule began (a major frame boundary).
    pub started_ns: AtomicI64,
    pub time_of_last_switch_ns: AtomicI64,
    /// The partition's period and duration in the current schedule (0 if absent from it).
    pub period_ns: AtomicI64,
    pub duration_ns: AtomicI64,
}

/// A consistent copy of [`ScheduleState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleSnapshot {
    pub current_id: u32,
    pub next_id: u32,
    pub started_ns: i64,
    pub time_of_last_switch_ns: i64,
    pub period_ns: i64,
    pub duration_ns: i64,
}

impl ScheduleState {
    /// Writer side (module only): publish a new state.
    pub fn publish(&self, s: &ScheduleSnapshot) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        core::sync::atomic::fence(Ordering::Release);
        self.current_id.store(s.current_id, Ordering::Relaxed);
        self.next_id.store(s.next_id, Ordering::Relaxed);
        self.started_ns.store(s.started_ns, Ordering::Relaxed);
        self.time_of_last_switch_ns.store(s.time_of_last_switch_ns, Ordering::Relaxed);
        self.period_ns.store(s.period_ns, Ordering::Relaxed);
        self.duration_ns.store(s.duration_ns, Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }

    /// Reader side: a consistent snapshot (retries while the module writes).
    pub fn read(&self) -> ScheduleSnapshot {
        loop {
            let before = self.seq.load(Ordering::Acquire);
            if before % 2 == 1 {
                core::hint::spin_loop();
                continue;
            }
            let s = ScheduleSnapshot {
                current_id: self.current_id.load(Ordering::Relaxed),
                next_id: self.next_id.load(Ordering::Relaxed),
                started_ns: self.started_ns.load(Ordering::Relaxed),
                time_of_last_switch_ns: self.time_of_last_switch_ns.load(Ordering::Relaxed),
                period_ns: self.period_ns.load(Ordering::Relaxed),
                duration_ns: self.duration_ns.load(Ordering::Relaxed),
            };
            core::sync::atomic::fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == before {
                return s;
            }
        }
    }
}

/// Bits of [`ScheduleEntry::flags`].
pub mod schedule_flags {
    /// The partition's Partition_Schedule in this schedule has `SetModuleSchedule="true"`: it
    /// may call SET_MODULE_SCHEDULE while this schedule is in force.
    pub const MAY_SET_SCHEDULE: u32 = 1;
}

/// One configured module schedule, as the partition sees it (written once before start).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ScheduleEntry {
    pub id: u32,
    /// [`schedule_flags`] of the partition in this schedule.
    pub flags: u32,
    pub name: [u8; NAME_LEN],
    pub major_frame_ns: i64,
    /// The partition's period and duration in this schedule (0 if absent from it).
    pub period_ns: i64,
    pub duration_ns: i64,
}

impl ScheduleEntry {
    pub const EMPTY: ScheduleEntry =
        ScheduleEntry { id: 0, flags: 0, name: [0; NAME_LEN], major_frame_ns: 0, period_ns: 0, duration_ns: 0 };
}

/// Requests a partition makes of the module; posted by bumping `seq` after writing
/// `kind`/`arg`, then writing 1 to the doorbell eventfd. The module acknowledges by copying
/// `seq` into `done`.
#[repr(C)]
pub struct Request {
    pub seq: AtomicU32,
    pub kind: AtomicU32,
    pub arg: AtomicU32,
    pub done: AtomicU32,
}

pub mod request {
    /// SET_PARTITION_MODE(arg) for IDLE, COLD_START or WARM_START (the module restarts or idles it).
    pub const SET_MODE: u32 = 1;
    /// SET_MODULE_SCHEDULE(arg): takes effect at the end of the current major frame.
    pub const SET_MODULE_SCHEDULE: u32 = 2;
}

/// The health monitor's part of the control block.
#[repr(C)]
pub struct HmBlock {
    /// Bit `c` set: error code `c` is PROCESS level in PARTITION_EXECUTION (from the
    /// System_HM_Table, written by the module before start). The runtime gives those to the
    /// partition's error handler when it has one; everything else goes to the module.
    pub process_level: AtomicU32,
    /// Bit `c` set: an injected error `c` (`partita run --inject`) of PROCESS level, which the
    /// runtime takes (swap to 0) at its next window start and handles as if it detected it.
    pub injected: AtomicU32,
    /// Errors the partition reports to the module (it rings the doorbell after each).
    pub reports: Ring<HmReport, HM_CAPACITY>,
}

/// One error a partition detected.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HmReport {
    /// ns since the module epoch.
    pub t_ns: i64,
    /// [`error_code`] value.
    pub code: u32,
    /// Failed process id; 0 = the initialization process or no process.
    pub process: i32,
    /// [`system_state`] value.
    pub state: u32,
    /// 1: the runtime gave it to the partition's error handler (reported for the trace only);
    /// 0: the module decides (level and action from its tables).
    pub to_handler: u32,
}

/// Per-core window-start probe (see the crate documentation).
#[repr(C)]
pub struct CoreProbe {
    /// Futex word: the module increments it and wakes; the probe thread waits on it.
    pub wake: AtomicU32,
    pub _pad: AtomicU32,
    /// CLOCK_MONOTONIC of the window start the module planned.
    pub planned_ns: AtomicI64,
    /// CLOCK_MONOTONIC when the probe thread ran for that window start.
    pub running_ns: AtomicI64,
    /// CLOCK_MONOTONIC when the first ARINC process ran after that (first-process dispatch).
    pub dispatched_ns: AtomicI64,
    /// CLOCK_MONOTONIC of the planned end of that window (i64::MAX: the partition is not
    /// stopped on this core, e.g. served by priority). Written by the module with
    /// `planned_ns`; the runtime lets a wait whose instant falls at or after it wait for the
    /// next window start (this probe) instead of a timer, which would fire while the partition
    /// is stopped, or at the next window start itself, where its interrupt delays the switch.
    pub window_end_ns: AtomicI64,
}

/// Kinds of partition-side trace events.
pub mod event {
    /// a = previous mode, b = new mode.
    pub const MODE_CHANGE: u32 = 1;
    /// process started (START/DELAYED_START); a = process id, b = release time (ns since epoch).
    pub const PROCESS_START: u32 = 2;
    /// process stopped; a = process id.
    pub const PROCESS_STOP: u32 = 3;
    /// periodic release; a = process id, b = deadline (ns since epoch).
    pub const PROCESS_RELEASE: u32 = 4;
    /// a = process id, b = the deadline it missed (ns since epoch).
    pub const DEADLINE_MISSED: u32 = 5;
    /// process suspended / resumed; a = process id.
    pub const PROCESS_SUSPEND: u32 = 6;
    pub const PROCESS_RESUME: u32 = 7;
    /// process created; a = process id, b = priority.
    pub const PROCESS_CREATE: u32 = 8;
    /// first process dispatch after a window start; a = process id, b = window start (planned).
    pub const PROCESS_DISPATCH: u32 = 9;
    /// A port creation refused with INVALID_CONFIG because a value differs from the
    /// configuration; a = [`super::config_mismatch::pack`], b = the value given.
    pub const CONFIG_MISMATCH: u32 = 10;
    /// the partition uses more distinct process priorities than its band has Linux levels: the
    /// priorities in use from a (the lowest) to b share the band's lowest level (said once for
    /// each new list; the partition's log names each of them).
    pub const PRIORITIES_SHARED: u32 = 11;
}

/// What a CONFIG_MISMATCH trace event says, packed into its `a`: the configuration line of the
/// port's element (0: none, e.g. no port of that name), the attribute, the service.
pub mod config_mismatch {
    pub const SAMPLING: u32 = 1;
    pub const QUEUING: u32 = 2;

    pub const NAME: u32 = 1;
    pub const KIND: u32 = 2;
    pub const MAX_MESSAGE_SIZE: u32 = 3;
    pub const DIRECTION: u32 = 4;
    pub const REFRESH_PERIOD: u32 = 5;
    pub const MAX_NB_MESSAGES: u32 = 6;

    pub fn pack(service: u32, attribute: u32, line: u32) -> i64 {
        (i64::from(line) << 16) | (i64::from(attribute & 0xff) << 8) | i64::from(service & 0xff)
    }

    /// (service, attribute, line) of a packed `a`; None for values no runtime writes.
    pub fn unpack(a: i64) -> Option<(u32, u32, u32)> {
        let service = (a & 0xff) as u32;
        let attribute = ((a >> 8) & 0xff) as u32;
        let line = u32::try_from(a >> 16).ok()?;
        ((SAMPLING..=QUEUING).contains(&service) && (NAME..=MAX_NB_MESSAGES).contains(&attribute)).then_some((service, attribute, line))
    }

    /// The service a packed value names.
    pub fn service_name(service: u32) -> &'static str {
        if service == SAMPLING { "CREATE_SAMPLING_PORT" } else { "CREATE_QUEUING_PORT" }
    }

    /// The configuration attribute (or, for NAME and KIND, what) a packed value names.
    pub fn attribute_name(attribute: u32) -> &'static str {
        match attribute {
            NAME => "Name",
            KIND => "kind (Sampling_Port or Queuing_Port)",
            MAX_MESSAGE_SIZE => "MaxMessageSize",
            DIRECTION => "Direction",
            REFRESH_PERIOD => "RefreshRateSeconds",
            _ => "MaxNbMessages",
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn packs_and_unpacks_and_refuses_garbage() {
            assert_eq!(unpack(pack(QUEUING, MAX_NB_MESSAGES, 1234)), Some((QUEUING, MAX_NB_MESSAGES, 1234)));
            assert_eq!(unpack(pack(SAMPLING, NAME, 0)), Some((SAMPLING, NAME, 0)));
            assert_eq!(unpack(pack(3, NAME, 1)), None);
            assert_eq!(unpack(pack(SAMPLING, 0, 1)), None);
            assert_eq!(unpack(-1), None);
            assert_eq!(unpack(i64::MAX), None);
        }
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TraceEvent {
    /// ns since the module epoch.
    pub t_ns: i64,
    pub kind: u32,
    /// Module core index.
    pub core: u32,
    pub a: i64,
    pub b: i64,
}

#[repr(C)]
pub struct Slot<T> {
    seq: AtomicU64,
    event: UnsafeCell<T>,
}

/// Bounded multi-producer (partition threads, signal handlers: lock-free), single-consumer
/// (module) ring. A full ring drops the entry and counts it; it never blocks a partition.
#[repr(C)]
pub struct Ring<T, const N: usize> {
    head: AtomicU64,
    tail: AtomicU64,
    pub dropped: AtomicU64,
    slots: [Slot<T>; N],
}

/// The partition-side trace events.
pub type TraceRing = Ring<TraceEvent, TRACE_CAPACITY>;

// SAFETY: slots are handed between threads through the per-slot sequence numbers (acquire /
// release), so a slot's entry is only accessed by the one thread that owns it at the time.
unsafe impl<T: Copy + Send, const N: usize> Sync for Ring<T, N> {}

impl<T: Copy, const N: usize> Ring<T, N> {
    const POWER_OF_TWO: () = assert!(N.is_power_of_two());

    /// Prepares a zeroed ring (the module does this once on a fresh control block).
    pub fn init(&self) {
        let () = Self::POWER_OF_TWO;
        for (i, s) in self.slots.iter().enumerate() {
            s.seq.store(i as u64, Ordering::Relaxed);
        }
        self.head.store(0, Ordering::Relaxed);
        self.tail.store(0, Ordering::Relaxed);
        self.dropped.store(0, Ordering::Release);
    }

    /// Producer side; false (and counted) when the ring is full. Wrapping arithmetic and a
    /// bounded number of retries: words another process scribbled on make the push fail, never
    /// panic or spin.
    pub fn push(&self, e: T) -> bool {
        let mask = N as u64 - 1;
        let mut pos = self.head.load(Ordering::Relaxed);
        for _ in 0..MAX_PUSH_ATTEMPTS {
            let slot = &self.slots[(pos & mask) as usize];
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == pos {
                match self.head.compare_exchange_weak(pos, pos.wrapping_add(1), Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        // SAFETY: winning the CAS for `pos` makes this thread the only writer of
                        // the slot until it publishes `pos + 1`.
                        unsafe { *slot.event.get() = e };
                        slot.seq.store(pos.wrapping_add(1), Ordering::Release);
                        return true;
                    }
                    Err(now) => pos = now,
                }
            } else if seq < pos {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return false;
            } else {
                pos = self.head.load(Ordering::Relaxed);
            }
        }
        self.dropped.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Consumer side for a consumer that does not trust the producers (the module reading a
    /// partition's ring): `tail` is the consumer's own position, kept outside the shared
    /// memory (0 after [`Ring::init`]) and advanced here. Every shared word is read once and
    /// checked by [`untrusted::ring_slot`]; the entry is copied out once. On garbage nothing is
    /// advanced: the caller reports it and re-initializes the ring (or stops reading it).
    pub fn pop_untrusted(&self, structure: &'static str, tail: &mut u64) -> Result<Option<T>, untrusted::Garbage> {
        let pos = *tail;
        let slot = &self.slots[(pos % N as u64) as usize];
        let shared_tail = self.tail.load(Ordering::Relaxed);
        let seq = slot.seq.load(Ordering::Acquire);
        let head = self.head.load(Ordering::Relaxed);
        match untrusted::ring_slot(structure, pos, shared_tail, head, seq, N as u64)? {
            untrusted::RingSlot::Empty => Ok(None),
            untrusted::RingSlot::Ready => {
                // SAFETY: the slot lies inside the ring; a volatile copy of plain integers is
                // valid whatever bytes a misbehaving producer left there (T is Copy and, for
                // the rings used here, made of integers only), and it is read exactly once.
                let e = unsafe { core::ptr::read_volatile(slot.event.get()) };
                slot.seq.store(pos.wrapping_add(N as u64), Ordering::Release);
                *tail = pos.wrapping_add(1);
                self.tail.store(*tail, Ordering::Relaxed);
                Ok(Some(e))
            }
        }
    }

    /// Takes the `dropped` counter (resetting it), for a consumer that does not trust it:
    /// checked by [`untrusted::ring_dropped`] against the time since the previous take.
    pub fn take_dropped_untrusted(&self, structure: &'static str, elapsed_ns: i64) -> Result<u64, untrusted::Garbage> {
        untrusted::ring_dropped(structure, self.dropped.swap(0, Ordering::AcqRel), elapsed_ns)
    }

    /// Consumer side (one thread only).
    pub fn pop(&self) -> Option<T> {
        let pos = self.tail.load(Ordering::Relaxed);
        let slot = &self.slots[(pos as usize) & (N - 1)];
        if slot.seq.load(Ordering::Acquire) != pos.wrapping_add(1) {
            return None;
        }
        // SAFETY: seq == pos + 1 means the producer finished writing and no producer touches
        // the slot until we hand it back with pos + CAPACITY.
        let e = unsafe { *slot.event.get() };
        slot.seq.store(pos.wrapping_add(N as u64), Ordering::Release);
        self.tail.store(pos.wrapping_add(1), Ordering::Relaxed);
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::boxed::Box;
    use std::vec::Vec;

    fn zeroed_ring() -> Box<TraceRing> {
        // SAFETY: TraceRing is atomics and plain integers, for which all-zero bytes are valid.
        let ring: Box<TraceRing> = unsafe { Box::new_zeroed().assume_init() };
        ring.init();
        ring
    }

    #[test]
    fn ring_keeps_order_and_counts_drops() {
        let ring = zeroed_ring();
        for i in 0..TRACE_CAPACITY as i64 + 5 {
            ring.push(TraceEvent { t_ns: i, ..Default::default() });
        }
        assert_eq!(ring.dropped.load(Ordering::Relaxed), 5);
        let got: Vec<i64> = core::iter::from_fn(|| ring.pop()).map(|e| e.t_ns).collect();
        assert_eq!(got, (0..TRACE_CAPACITY as i64).collect::<Vec<_>>());
        assert!(ring.push(TraceEvent { t_ns: 99, ..Default::default() }));
        assert_eq!(ring.pop().map(|e| e.t_ns), Some(99));
    }

    #[test]
    fn ring_is_safe_with_concurrent_producers() {
        let ring = zeroed_ring();
        let ring: &'static TraceRing = Box::leak(ring);
        let producers: Vec<_> = (0..4)
            .map(|p| {
                std::thread::spawn(move || {
                    for i in 0..10_000i64 {
                        while !ring.push(TraceEvent { t_ns: i, kind: p, ..Default::default() }) {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let mut next = [0i64; 4];
        let mut seen = 0;
        while seen < 40_000 {
            if let Some(e) = ring.pop() {
                assert_eq!(e.t_ns, next[e.kind as usize], "per-producer order");
                next[e.kind as usize] += 1;
                seen += 1;
            }
        }
        for p in producers {
            p.join().unwrap();
        }
        assert_eq!(next, [10_000; 4]);
    }

    #[test]
    fn schedule_state_round_trips() {
        // SAFETY: ScheduleState is atomics only; zero is valid.
        let s: Box<ScheduleState> = unsafe { Box::new_zeroed().assume_init() };
        let snap =
            ScheduleSnapshot { current_id: 2, next_id: 3, started_ns: 10, time_of_last_switch_ns: 10, period_ns: 20, duration_ns: 5 };
        s.publish(&snap);
        assert_eq!(s.read(), snap);
    }

    #[test]
    fn names_are_truncated_and_nul_padded() {
        let b = name_bytes("GnC");
        assert_eq!(name_str(&b), "GnC");
        let long = "x".repeat(100);
        assert_eq!(name_str(&name_bytes(&long)).len(), NAME_LEN - 1);
    }
}
