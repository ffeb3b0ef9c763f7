//! The lifecycle thread's reads of partition-writable memory: the trace and HM rings, the
//! request words, the operating mode and (through the scheduler threads) the probes. Every
//! value goes through a decoder of [`partita_abi::untrusted`]; garbage becomes a `shm_garbage`
//! trace event and the partition's ILLEGAL_REQUEST through the health monitor (at most once per
//! structure every [`REPORT_INTERVAL_NS`], repeats counted), and the module goes on.

use super::Lifecycle;
use crate::partition_events::to_trace;
use partita_abi::untrusted::{self, Garbage};
use partita_abi::{HM_CAPACITY, HmReport, TRACE_CAPACITY, error_code};
use partita_trace::Event;
use std::sync::atomic::Ordering;

/// Garbage of one structure of a partition is reported at most this often (a partition that
/// keeps writing garbage must not fill the trace nor keep the health monitor busy).
pub const REPORT_INTERVAL_NS: i64 = 10_000_000;

/// The structures reported separately.
const STRUCTURES: [&str; 5] = ["trace_ring", "hm_ring", "request", "status", "probe"];

/// The module's private state of one partition's shared memory.
#[derive(Default)]
pub struct Guard {
    /// The consumer positions of the partition's rings: the module's own copies (the shared
    /// ones are only compared with them).
    trace_tail: u64,
    hm_tail: u64,
    /// Error codes the module injected into the partition's runtime (`HmBlock::injected`): a
    /// report flagged as injected must be one of them.
    injected: u32,
    /// CLOCK_MONOTONIC of the last take of the trace ring's drop counter.
    dropped_taken_ns: i64,
    /// Per structure: when garbage was last reported, and how much since.
    last_report_ns: [Option<i64>; STRUCTURES.len()],
    suppressed: [u64; STRUCTURES.len()],
}

impl Guard {
    pub fn new(now_ns: i64) -> Guard {
        Guard { dropped_taken_ns: now_ns, ..Guard::default() }
    }

    /// The module handed error `code` to the partition's runtime as injected.
    pub fn note_injected(&mut self, code: u32) {
        self.injected |= 1 << code;
    }

    /// Whether garbage of `structure` seen at `now` (plus `repeats` more) is reported now:
    /// `Some(repeats since the last report)`, or None (counted for the next report).
    fn report_due(&mut self, structure: &str, now: i64, repeats: u64) -> Option<u64> {
        let s = STRUCTURES.iter().position(|&s| s == structure).unwrap_or(0);
        if self.last_report_ns[s].is_some_and(|last| now - last < REPORT_INTERVAL_NS) {
            self.suppressed[s] = self.suppressed[s].saturating_add(repeats.saturating_add(1));
            return None;
        }
        self.last_report_ns[s] = Some(now);
        Some(std::mem::take(&mut self.suppressed[s]).saturating_add(repeats))
    }

    /// Nothing of `structure` was reported yet.
    fn first_report(&self, structure: &str) -> bool {
        STRUCTURES.iter().position(|&s| s == structure).is_none_or(|s| self.last_report_ns[s].is_none())
    }

    /// The partition's rings were re-initialized (a restart): both positions are 0 again.
    pub fn rings_reset(&mut self) {
        self.trace_tail = 0;
        self.hm_tail = 0;
    }
}

impl Lifecycle<'_> {
    /// Reports garbage partition `i` wrote (`repeats`: more of it seen by a scheduler thread).
    pub(super) fn garbage(&mut self, i: usize, g: Garbage, repeats: u64) {
        let now = crate::backend::rt::now_ns();
        let first = self.guards[i].first_report(g.structure);
        let Some(repeats) = self.guards[i].report_due(g.structure, now, repeats) else { return };
        if first {
            // Once per structure on the console; the trace has every report.
            crate::warn_line!("partita: partition {} wrote garbage into shared memory: {g} (ILLEGAL_REQUEST)", self.launches[i].name);
        }
        let partition = self.launches[i].id;
        self.sink.push(Event::ShmGarbage {
            t: self.state.rel(now),
            partition,
            structure: g.structure.into(),
            field: g.field.into(),
            value: g.value,
            repeats,
        });
        let state = self.system_state(i);
        let no_process = !self.launches[i].partition.is_running();
        self.module_error(i, 0, state, error_code::ILLEGAL_REQUEST, no_process, "shm_garbage");
    }

    /// Moves partition `i`'s trace ring into the trace: at most one ring's worth per call.
    pub(super) fn drain_trace_ring(&mut self, i: usize) {
        let state = self.state;
        let block = state.partitions[i].control.block();
        let id = self.launches[i].id;
        let cores =
            state.plan.partitions[i].cores.iter().filter(|&&c| (c as usize) < partita_abi::MAX_CORES).fold(0u32, |m, &c| m | 1 << c);
        let now = crate::backend::rt::now_ns();
        for _ in 0..TRACE_CAPACITY {
            match block.trace.pop_untrusted("trace_ring", &mut self.guards[i].trace_tail) {
                Ok(None) => break,
                Ok(Some(raw)) => match untrusted::trace_event(raw, cores, state.rel(now)) {
                    Ok(e) => {
                        if let Some(ev) = to_trace(id, &e) {
                            self.sink.push(ev);
                        }
                    }
                    Err(g) => self.garbage(i, g, 0),
                },
                Err(g) => {
                    // The positions are lost: start the ring afresh (only a partition that broke
                    // the protocol loses events by this).
                    block.trace.init();
                    self.guards[i].trace_tail = 0;
                    self.garbage(i, g, 0);
                    break;
                }
            }
        }
        let elapsed = now - self.guards[i].dropped_taken_ns;
        self.guards[i].dropped_taken_ns = now;
        match block.trace.take_dropped_untrusted("trace_ring", elapsed) {
            Ok(0) => {}
            Ok(count) => self.sink.push(Event::EventsDropped { t: state.rel(now), partition: id, count }),
            Err(g) => self.garbage(i, g, 0),
        }
    }

    /// The next reports of partition `i`'s HM ring (at most a ring's worth), checked.
    pub(super) fn take_hm_reports(&mut self, i: usize) -> Vec<HmReport> {
        let block = self.state.partitions[i].control.block();
        let now = self.state.rel(crate::backend::rt::now_ns());
        let mut out = Vec::new();
        for _ in 0..HM_CAPACITY {
            match block.hm.reports.pop_untrusted("hm_ring", &mut self.guards[i].hm_tail) {
                Ok(None) => break,
                Ok(Some(raw)) => match untrusted::hm_report(raw, now) {
                    Ok(r) if r.to_handler & super::INJECTED != 0 && self.guards[i].injected & 1 << r.code == 0 => {
                        // Claims an injection the module never made.
                        self.garbage(i, Garbage::new("hm_ring", "to_handler", u64::from(r.to_handler)), 0)
                    }
                    Ok(r) => out.push(r),
                    Err(g) => self.garbage(i, g, 0),
                },
                Err(g) => {
                    block.hm.reports.init();
                    self.guards[i].hm_tail = 0;
                    self.garbage(i, g, 0);
                    break;
                }
            }
        }
        out
    }

    /// Checks what else partition `i` may have scribbled on: its operating mode, and the
    /// probe garbage the scheduler threads noted.
    pub(super) fn check_words(&mut self, i: usize) {
        let state = self.state;
        let m = state.partitions[i].control.block().status.operating_mode.load(Ordering::Acquire);
        if let Err(g) = untrusted::operating_mode(m) {
            self.garbage(i, g, 0);
        }
        if let Some((g, n)) = state.partitions[i].probe_garbage.take() {
            self.garbage(i, g, n - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_reported_at_most_every_interval_per_structure_with_its_repeats() {
        let mut g = Guard::new(0);
        assert!(g.first_report("request"));
        assert_eq!(g.report_due("request", 1_000, 0), Some(0));
        assert!(!g.first_report("request"));
        assert_eq!(g.report_due("request", 2_000, 0), None, "within the interval");
        assert_eq!(g.report_due("request", 3_000, 4), None);
        assert_eq!(g.report_due("trace_ring", 3_000, 0), Some(0), "another structure has its own interval");
        assert_eq!(g.report_due("request", 1_000 + REPORT_INTERVAL_NS, 1), Some(1 + 5 + 1), "the suppressed ones are counted");
        assert_eq!(g.report_due("request", 1_000 + 2 * REPORT_INTERVAL_NS, 0), Some(0));
    }
}
