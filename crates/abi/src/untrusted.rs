//! Decoders for what the module reads from memory a partition can write.
//!
//! A partition program may write anything, at any time, into every shared mapping it holds
//! writable: its control block (request words, status, probes, the trace and HM rings) and the
//! channel memory of its ports (a queuing source's header and slots, a queuing destination's
//! consumer page, a sampling source's header and slots). The module (and a partition reading
//! another partition's channel) must therefore treat every such word as untrusted input. The
//! rules, in one place:
//!
//! - each word is read once (an atomic or volatile load) into a local value, and only that
//!   copy is checked and used: nothing is read again after its check;
//! - a decoder takes those raw values (and what the reader knows on its own: its private copy
//!   of an index it owns, the configured capacity, the clock) and returns either the checked
//!   value or a [`Garbage`] naming the structure and field at fault and the raw value;
//! - checks only refuse what the protocol can never produce (an index beyond capacity, a
//!   counter that moved backwards or implausibly far, an unknown code), so that a well-behaved
//!   partition never trips one whatever the timing.
//!
//! The decoders are pure functions of their arguments (no memory access), so they are fuzzed
//! and property-tested directly (`fuzz/fuzz_targets/untrusted.rs`, `tests/untrusted.rs`).

use crate::{HmReport, MAX_CORES, TraceEvent, error_code, event, mode, request, system_state};

/// A value a partition wrote that the protocol can never produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Garbage {
    /// The shared structure (`"trace_ring"`, `"hm_ring"`, `"request"`, `"status"`, `"probe"`,
    /// `"queuing_port"`, `"sampling_port"`).
    pub structure: &'static str,
    /// The field of that structure.
    pub field: &'static str,
    /// The raw value read (signed values as their two's complement bits).
    pub value: u64,
}

impl Garbage {
    pub const fn new(structure: &'static str, field: &'static str, value: u64) -> Garbage {
        Garbage { structure, field, value }
    }
}

impl core::fmt::Display for Garbage {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}.{} = {:#x}", self.structure, self.field, self.value)
    }
}

/// Partition-side times (ns since the module epoch) farther in the past than this are garbage:
/// a partition program starts at most a few seconds before the epoch.
pub const EARLIEST_EVENT_NS: i64 = -3_600_000_000_000;
/// How far ahead of the reader's clock a partition-side time may be (the writer read its clock
/// after the reader did, the reader was preempted in between).
pub const CLOCK_SLACK_NS: i64 = 10_000_000_000;
/// Highest process id a runtime hands out (ids are small indexes; generous).
pub const MAX_PROCESS_ID: i64 = 1 << 20;

/// Bits of [`HmReport::to_handler`] a runtime may set: 1 = given to the error handler,
/// 2 = an injected error.
pub const HM_REPORT_FLAGS: u32 = 3;

/// What the consumer of a [`crate::Ring`] finds at its private position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingSlot {
    /// No entry yet (the slot is free, or a producer has claimed it and is writing).
    Empty,
    /// The entry at the consumer's position is complete.
    Ready,
}

/// Checks the words of a ring's consumer side. `tail` is the consumer's private position (the
/// only true one); `shared_tail` the copy in shared memory (the consumer is its only writer),
/// `head` the producers' claim counter and `seq` the sequence word of slot `tail % capacity`.
/// Protocol: `tail <= head <= tail + capacity`, and that slot's `seq` is `tail` (free) or
/// `tail + 1` (written).
pub fn ring_slot(structure: &'static str, tail: u64, shared_tail: u64, head: u64, seq: u64, capacity: u64) -> Result<RingSlot, Garbage> {
    if shared_tail != tail {
        return Err(Garbage::new(structure, "tail", shared_tail));
    }
    if head < tail || head - tail > capacity {
        return Err(Garbage::new(structure, "head", head));
    }
    if seq == tail {
        Ok(RingSlot::Empty)
    } else if seq == tail.wrapping_add(1) {
        Ok(RingSlot::Ready)
    } else {
        Err(Garbage::new(structure, "seq", seq))
    }
}

/// The `dropped` counter of a ring, reset by the consumer at each drain: at most one drop per
/// nanosecond since the previous drain (a push that finds the ring full takes several).
pub fn ring_dropped(structure: &'static str, dropped: u64, elapsed_ns: i64) -> Result<u64, Garbage> {
    if dropped > elapsed_ns.max(1) as u64 {
        return Err(Garbage::new(structure, "dropped", dropped));
    }
    Ok(dropped)
}

/// A time (ns since the module epoch) a partition reports, when the reader's clock says `now`.
pub fn event_time(structure: &'static str, field: &'static str, t: i64, now: i64) -> Result<i64, Garbage> {
    if t < EARLIEST_EVENT_NS || t > now.saturating_add(CLOCK_SLACK_NS) {
        return Err(Garbage::new(structure, field, t as u64));
    }
    Ok(t)
}

fn process_id(structure: &'static str, p: i64) -> Result<i64, Garbage> {
    if !(0..=MAX_PROCESS_ID).contains(&p) {
        return Err(Garbage::new(structure, "process", p as u64));
    }
    Ok(p)
}

/// An operating mode a partition wrote (`PartitionStatus::operating_mode`).
pub fn operating_mode(m: u32) -> Result<u32, Garbage> {
    match m {
        mode::IDLE | mode::COLD_START | mode::WARM_START | mode::NORMAL => Ok(m),
        _ => Err(Garbage::new("status", "operating_mode", u64::from(m))),
    }
}

/// One entry of the trace ring. `cores` has bit `c` set for each module core the partition
/// has (event cores are module core indexes); `now` is the reader's time since the epoch.
pub fn trace_event(e: TraceEvent, cores: u32, now: i64) -> Result<TraceEvent, Garbage> {
    const S: &str = "trace_ring";
    event_time(S, "t_ns", e.t_ns, now)?;
    if e.core as usize >= MAX_CORES || cores & (1 << e.core) == 0 {
        return Err(Garbage::new(S, "core", u64::from(e.core)));
    }
    let known_mode = |v: i64| u32::try_from(v).ok().and_then(|m| operating_mode(m).ok()).is_some();
    match e.kind {
        event::MODE_CHANGE => {
            if !known_mode(e.a) {
                return Err(Garbage::new(S, "a", e.a as u64));
            }
            if !known_mode(e.b) {
                return Err(Garbage::new(S, "b", e.b as u64));
            }
        }
        // `b` (a deadline, a release time or the planned window start) is only shown: any
        // value is possible (a dispatch before the first window start reads 0 - epoch).
        event::PROCESS_DISPATCH
        | event::PROCESS_START
        | event::PROCESS_STOP
        | event::PROCESS_RELEASE
        | event::DEADLINE_MISSED
        | event::PROCESS_SUSPEND
        | event::PROCESS_RESUME
        | event::PROCESS_CREATE => {
            process_id(S, e.a)?;
        }
        // `b` (the value the partition gave) is only shown.
        event::CONFIG_MISMATCH => {
            if crate::config_mismatch::unpack(e.a).is_none() {
                return Err(Garbage::new(S, "a", e.a as u64));
            }
        }
        event::PRIORITIES_SHARED => {
            // ARINC 653 P1-5 priorities 1..=239, the lowest first.
            if !(1..=239).contains(&e.a) {
                return Err(Garbage::new(S, "a", e.a as u64));
            }
            if !(e.a..=239).contains(&e.b) {
                return Err(Garbage::new(S, "b", e.b as u64));
            }
        }
        other => return Err(Garbage::new(S, "kind", u64::from(other))),
    }
    Ok(e)
}

/// One report of the HM ring; `now` is the reader's time since the epoch.
pub fn hm_report(r: HmReport, now: i64) -> Result<HmReport, Garbage> {
    const S: &str = "hm_ring";
    event_time(S, "t_ns", r.t_ns, now)?;
    if r.code >= error_code::COUNT {
        return Err(Garbage::new(S, "code", u64::from(r.code)));
    }
    process_id(S, i64::from(r.process))?;
    if r.state != system_state::PARTITION_INIT && r.state != system_state::PARTITION_EXECUTION {
        return Err(Garbage::new(S, "state", u64::from(r.state)));
    }
    if r.to_handler & !HM_REPORT_FLAGS != 0 {
        return Err(Garbage::new(S, "to_handler", u64::from(r.to_handler)));
    }
    Ok(r)
}

/// A request a partition posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// SET_PARTITION_MODE to IDLE, COLD_START or WARM_START.
    SetMode(u32),
    /// SET_MODULE_SCHEDULE to the schedule with this id (one of the configured ids).
    SetModuleSchedule(u32),
}

/// The `kind` and `arg` words of a posted request; `schedule_known` says whether a schedule
/// id is configured (the runtime refuses others before posting).
pub fn request(kind: u32, arg: u32, schedule_known: impl Fn(u32) -> bool) -> Result<Request, Garbage> {
    match kind {
        request::SET_MODE => match arg {
            mode::IDLE | mode::COLD_START | mode::WARM_START => Ok(Request::SetMode(arg)),
            _ => Err(Garbage::new("request", "arg", u64::from(arg))),
        },
        request::SET_MODULE_SCHEDULE if schedule_known(arg) => Ok(Request::SetModuleSchedule(arg)),
        request::SET_MODULE_SCHEDULE => Err(Garbage::new("request", "arg", u64::from(arg))),
        _ => Err(Garbage::new("request", "kind", u64::from(kind))),
    }
}

/// A window-start probe read back after the window: `planned_shared` is the probe's copy of
/// the planned start the module stored (`planned`), `running` when the probe thread ran, `now`
/// the reader's clock (same clock, read after `running`). `Ok(None)`: the probe thread did not
/// run for this window start.
pub fn probe(planned: i64, planned_shared: i64, running: i64, now: i64) -> Result<Option<i64>, Garbage> {
    if planned_shared != planned {
        return Err(Garbage::new("probe", "planned_ns", planned_shared as u64));
    }
    if running > now {
        return Err(Garbage::new("probe", "running_ns", running as u64));
    }
    Ok((running >= planned).then_some(running))
}

/// The fill of a queuing channel: `head` (written by the source) minus `tail` (written by the
/// destination), at most the configured depth.
pub fn queue_fill(head: u32, tail: u32, depth: u32) -> Result<u32, Garbage> {
    let n = head.wrapping_sub(tail);
    if n > depth {
        return Err(Garbage::new("queuing_port", "head", u64::from(head)));
    }
    Ok(n)
}

/// The length of a message in a port slot: at most the port's configured maximum.
pub fn message_length(structure: &'static str, length: u32, max: u32) -> Result<u32, Garbage> {
    if length > max {
        return Err(Garbage::new(structure, "length", u64::from(length)));
    }
    Ok(length)
}

/// Little-endian words taken from fuzzer bytes (zeros once they run out).
struct Words<'a>(&'a [u8]);

impl Words<'_> {
    fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        let n = self.0.len().min(8);
        b[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        u64::from_le_bytes(b)
    }
    fn u32(&mut self) -> u32 {
        self.u64() as u32
    }
    fn i64(&mut self) -> i64 {
        self.u64() as i64
    }
}

/// One fuzzing input: `data` is read as the raw words of every structure a partition can
/// write, and each decoder (and each untrusted reader: the ring consumer, the queuing and
/// sampling readers) runs over them. Panics only if a decoder lets through what it must
/// refuse, or panics itself (`fuzz/fuzz_targets/untrusted.rs`, `tests/untrusted.rs`).
pub fn fuzz_one(data: &[u8]) {
    use crate::ports::{CONSUMER_PAGE_BYTES, QueuingArea, SamplingArea, queuing_area_bytes, sampling_area_bytes};
    use core::sync::atomic::Ordering;
    let mut w = Words(data);
    let now = w.i64();
    let cores = w.u32();
    let e = TraceEvent { t_ns: w.i64(), kind: w.u32(), core: w.u32(), a: w.i64(), b: w.i64() };
    if let Ok(d) = trace_event(e, cores, now) {
        assert_eq!(d, e, "a valid event decodes to itself");
        assert!((d.core as usize) < MAX_CORES && cores & 1 << d.core != 0);
        assert!(d.t_ns >= EARLIEST_EVENT_NS && d.t_ns <= now.saturating_add(CLOCK_SLACK_NS));
    }
    let r = HmReport { t_ns: w.i64(), code: w.u32(), process: w.u32() as i32, state: w.u32(), to_handler: w.u32() };
    if let Ok(d) = hm_report(r, now) {
        assert_eq!(d, r);
        assert!(d.code < error_code::COUNT && d.process >= 0);
    }
    let (kind, arg) = (w.u32(), w.u32());
    let known = w.u32();
    if let Ok(req) = request(kind, arg, |id| id == known) {
        assert!(
            matches!(req, Request::SetMode(mode::IDLE | mode::COLD_START | mode::WARM_START)) || req == Request::SetModuleSchedule(known)
        );
    }
    let _ = operating_mode(w.u32());
    let (planned, planned_shared, running, clock) = (w.i64(), w.i64(), w.i64(), w.i64());
    if let Ok(Some(t)) = probe(planned, planned_shared, running, clock) {
        assert!(t >= planned && t <= clock);
    }
    let elapsed = w.i64();
    if let Ok(n) = ring_dropped("r", w.u64(), elapsed) {
        assert!(n <= elapsed.max(1) as u64);
    }

    // A ring whose shared words are all the partition's.
    // SAFETY: a ring is atomics and plain integers: all-zero bytes are a valid value.
    let ring: crate::Ring<HmReport, 8> = unsafe { core::mem::zeroed() };
    ring.head.store(w.u64(), Ordering::Relaxed);
    ring.tail.store(w.u64(), Ordering::Relaxed);
    ring.dropped.store(w.u64(), Ordering::Relaxed);
    for s in &ring.slots {
        s.seq.store(w.u64(), Ordering::Relaxed);
    }
    let mut tail = ring.tail.load(Ordering::Relaxed) ^ (w.u64() & 1);
    for _ in 0..20 {
        let before = tail;
        match ring.pop_untrusted("r", &mut tail) {
            Ok(Some(_)) => assert_eq!(tail, before.wrapping_add(1)),
            Ok(None) => break,
            Err(_) => {
                assert_eq!(tail, before, "garbage advances nothing");
                break;
            }
        }
    }

    // A queuing channel (max 16 bytes, depth 4) and a sampling one (max 16).
    let max = 16;
    let mut qdata = [0u64; queuing_area_bytes(16, 4) / 8];
    let mut consumer = [0u64; CONSUMER_PAGE_BYTES / 8];
    let mut sdata = [0u64; sampling_area_bytes(16) / 8];
    for x in qdata.iter_mut().chain(consumer.iter_mut().take(2)).chain(sdata.iter_mut()) {
        *x = w.u64();
    }
    // SAFETY: 8-aligned buffers of the sizes the layouts need, alive for the views' lifetime and
    // only accessed through them.
    let (q, s) = unsafe {
        (QueuingArea::from_raw(qdata.as_ptr().cast(), consumer.as_ptr().cast(), max, 4), SamplingArea::from_raw(sdata.as_ptr().cast(), max))
    };
    let mut buf = [0u8; 16];
    for _ in 0..6 {
        match q.pop_checked(&mut buf) {
            Ok(Some(m)) => assert!(m.length <= max),
            Ok(None) => break,
            Err(_) => {}
        }
    }
    assert!(q.len() <= 4);
    if let Some(m) = s.read(&mut buf) {
        assert!(m.length <= max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_positions_follow_the_protocol() {
        assert_eq!(ring_slot("r", 5, 5, 5, 5, 8), Ok(RingSlot::Empty));
        assert_eq!(ring_slot("r", 5, 5, 6, 6, 8), Ok(RingSlot::Ready));
        assert_eq!(ring_slot("r", 5, 5, 13, 6, 8), Ok(RingSlot::Ready), "full ring");
        assert_eq!(ring_slot("r", 5, 5, 14, 6, 8).unwrap_err().field, "head");
        assert_eq!(ring_slot("r", 5, 5, 4, 5, 8).unwrap_err().field, "head");
        assert_eq!(ring_slot("r", 5, 9, 5, 5, 8).unwrap_err().field, "tail");
        assert_eq!(ring_slot("r", 5, 5, 6, 13, 8).unwrap_err().field, "seq");
    }

    #[test]
    fn config_mismatch_events_decode_or_name_the_field() {
        use crate::config_mismatch::*;
        let e = TraceEvent { t_ns: 5, kind: event::CONFIG_MISMATCH, core: 0, a: pack(SAMPLING, REFRESH_PERIOD, 12), b: -7 };
        assert_eq!(trace_event(e, 1, 10), Ok(e), "any value given is shown");
        assert_eq!(trace_event(TraceEvent { a: pack(SAMPLING, 9, 12), ..e }, 1, 10).unwrap_err().field, "a");
        assert_eq!(trace_event(TraceEvent { a: -1, ..e }, 1, 10).unwrap_err().field, "a");
    }

    #[test]
    fn requests_decode_or_name_the_field() {
        assert_eq!(request(request::SET_MODE, mode::COLD_START, |_| false), Ok(Request::SetMode(mode::COLD_START)));
        assert_eq!(request(request::SET_MODE, mode::NORMAL, |_| false).unwrap_err().field, "arg");
        assert_eq!(request(request::SET_MODULE_SCHEDULE, 7, |id| id == 7), Ok(Request::SetModuleSchedule(7)));
        assert_eq!(request(request::SET_MODULE_SCHEDULE, 8, |id| id == 7).unwrap_err().field, "arg");
        assert_eq!(request(99, 0, |_| true).unwrap_err(), Garbage::new("request", "kind", 99));
    }

    #[test]
    fn probes_and_queues_are_bounded() {
        assert_eq!(probe(100, 100, 150, 200), Ok(Some(150)));
        assert_eq!(probe(100, 100, 50, 200), Ok(None), "not run yet");
        assert_eq!(probe(100, 101, 150, 200).unwrap_err().field, "planned_ns");
        assert_eq!(probe(100, 100, 250, 200).unwrap_err().field, "running_ns");
        assert_eq!(queue_fill(3, 1, 2), Ok(2));
        assert_eq!(queue_fill(1, u32::MAX, 2), Ok(2), "wrapping");
        assert!(queue_fill(4, 1, 2).is_err() && queue_fill(1, 2, 2).is_err());
        assert_eq!(message_length("q", 9, 8).unwrap_err().field, "length");
    }
}
