//! The checks of the `soak` experiment, fed while the module runs (so an hour's trace is never
//! held in memory): the trace read as it grows ([`TraceTail`]), window-start lateness, PCS,
//! windows planned and started, health-monitor events and restarts ([`TraceStats`]), overlaps
//! and out-of-window runs of the trace's timeline checked in overlapping chunks
//! ([`ChunkedCheck`]), the time partitions' own `ran START END` intervals against their planned
//! windows ([`Plan::outside`]), the channels' `chan` lines ([`Channels`]) and the least-squares
//! slope of the module's memory and descriptors ([`slope_per_hour`]).

use partita_trace::Event;
use partita_trace::timeline::{Timeline, ViolationKind};
use std::collections::BTreeMap;

pub use crate::module_run::TraceTail;

/// One planned window of the schedule (ns from the major frame start).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedWindow {
    pub partition: String,
    pub core: u32,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// The module's one schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub major_frame_ns: i64,
    pub windows: Vec<PlannedWindow>,
}

impl Plan {
    /// How far `[start, end]` (module time) reaches outside the nearest window of `partition`,
    /// in ns: before its start plus past its end (0: inside one window). An interval can only
    /// be inside one window: the time partitions' windows are never back to back. Measured
    /// from the window's edges, not as the interval's length outside it: an interval of one
    /// sample (`ran T T`, a partition that read the clock once after a late stop) has no
    /// length, and was once counted inside every window that way.
    pub fn outside(&self, partition: &str, start: i64, end: i64) -> i64 {
        let frame = start.div_euclid(self.major_frame_ns) * self.major_frame_ns;
        // A partition without windows: any run is outside.
        let mut best = (end - start).max(1);
        let mut first = true;
        for w in self.windows.iter().filter(|w| w.partition == partition) {
            for f in [frame - self.major_frame_ns, frame, frame + self.major_frame_ns] {
                let (a, b) = (f + w.start_ns, f + w.end_ns);
                let out = (a - start).max(0) + (end - b).max(0);
                best = if first { out } else { best.min(out) };
                first = false;
            }
        }
        best
    }

    /// Windows planned to start in `[0, until)` of module time.
    pub fn planned_before(&self, until: i64) -> u64 {
        if until <= 0 {
            return 0;
        }
        let frames = until / self.major_frame_ns;
        let rest = until % self.major_frame_ns;
        let per_frame = self.windows.len() as u64;
        frames as u64 * per_frame + self.windows.iter().filter(|w| w.start_ns < rest).count() as u64
    }
}

/// Per time partition: run intervals and those (partly) outside its windows.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SampleCheck {
    pub intervals: u64,
    pub outside: u64,
    /// The longest part of one interval outside the windows, ns.
    pub max_outside_ns: i64,
}

impl SampleCheck {
    /// Accounts a `ran START END` line of `partition`.
    pub fn ran(&mut self, plan: &Plan, partition: &str, line: &str) {
        let mut it = line.split_whitespace().filter_map(|v| v.parse::<i64>().ok());
        let (Some(start), Some(end)) = (it.next(), it.next()) else { return };
        self.intervals += 1;
        let out = plan.outside(partition, start, end);
        if out > 0 {
            self.outside += 1;
            self.max_outside_ns = self.max_outside_ns.max(out);
        }
    }
}

/// Statistics of the trace, per segment (taken and reset by [`TraceStats::take_segment`]) and
/// for the whole run.
#[derive(Debug)]
pub struct TraceStats {
    /// Per core: window-start lateness and PCS (ns) of the current segment.
    pub lateness: BTreeMap<u32, Vec<f64>>,
    pub pcs: BTreeMap<u32, Vec<f64>>,
    /// Window starts seen (all cores).
    pub windows_started: u64,
    /// (partition name, code, action, source kind) -> count; source kind is `injected` or
    /// `detected` (a program's end counts as detected).
    pub hm: BTreeMap<(String, String, String, String), u64>,
    /// Partition name -> restarts.
    pub restarts: BTreeMap<String, u64>,
    pub events_dropped: u64,
    pub last_t: i64,
    /// `module_stop`: frames and reason.
    pub stop: Option<(u64, String)>,
    /// Window starts planned at or after `end_ns` (the run's planned end): a module that
    /// schedules on past its `--duration`.
    pub end_ns: i64,
    pub windows_after_end: u64,
    names: BTreeMap<u32, String>,
}

impl Default for TraceStats {
    fn default() -> TraceStats {
        TraceStats::ending_at(i64::MAX)
    }
}

impl TraceStats {
    /// Statistics of a run planned to end at `end_ns` (module time).
    pub fn ending_at(end_ns: i64) -> TraceStats {
        TraceStats {
            lateness: BTreeMap::new(),
            pcs: BTreeMap::new(),
            windows_started: 0,
            hm: BTreeMap::new(),
            restarts: BTreeMap::new(),
            events_dropped: 0,
            last_t: 0,
            stop: None,
            end_ns,
            windows_after_end: 0,
            names: BTreeMap::new(),
        }
    }

    pub fn name(&self, id: u32) -> String {
        self.names.get(&id).cloned().unwrap_or_else(|| format!("partition {id}"))
    }

    pub fn feed(&mut self, events: &[Event]) {
        for e in events {
            self.last_t = self.last_t.max(e.t());
            match e {
                Event::ModuleStart { partitions, .. } => {
                    self.names.extend(partitions.iter().map(|p| (p.id, p.name.clone())));
                }
                Event::WindowStart { t, core, planned, .. } => {
                    self.windows_started += 1;
                    self.windows_after_end += (*planned >= self.end_ns) as u64;
                    self.lateness.entry(*core).or_default().push((t - planned) as f64);
                }
                Event::PartitionRunning { t, core, planned, .. } => self.pcs.entry(*core).or_default().push((t - planned) as f64),
                Event::HmEvent { partition, code, action, source, .. } => {
                    let kind = if source == "injected" { "injected" } else { "detected" };
                    *self.hm.entry((self.name(*partition), code.clone(), action.clone(), kind.to_string())).or_default() += 1;
                }
                Event::PartitionRestart { partition, .. } => *self.restarts.entry(self.name(*partition)).or_default() += 1,
                Event::EventsDropped { count, .. } => self.events_dropped += count,
                Event::ModuleStop { frames, reason, .. } => self.stop = Some((*frames, reason.clone())),
                _ => {}
            }
        }
    }

    /// The lateness and PCS samples since the last call, per core.
    pub fn take_segment(&mut self) -> (BTreeMap<u32, Vec<f64>>, BTreeMap<u32, Vec<f64>>) {
        (std::mem::take(&mut self.lateness), std::mem::take(&mut self.pcs))
    }

    /// HM events of `code` (any partition, action and source).
    pub fn hm_count(&self, code: &str) -> u64 {
        self.hm.iter().filter(|(k, _)| k.1 == code).map(|(_, n)| n).sum()
    }
}

/// The overlap, out-of-window and window-sequence checks of `partita_trace::timeline` over a
/// trace fed in pieces: each check builds the timeline of the events since a margin before the
/// last checked time and counts the violations that start in the newly checked span, which
/// ends a margin before the newest event (a run or window cut by the end of a piece is checked
/// in the next piece, whole).
pub struct ChunkedCheck {
    buf: Vec<Event>,
    module_start: Option<Event>,
    checked_to: i64,
    margin: i64,
    pub overlaps: u64,
    pub out_of_window: u64,
    pub window_sequence: u64,
    /// The first violations found, for the report.
    pub first: Vec<String>,
}

impl ChunkedCheck {
    /// `margin`: at least two major frames.
    pub fn new(margin: i64) -> ChunkedCheck {
        ChunkedCheck {
            buf: Vec::new(),
            module_start: None,
            checked_to: i64::MIN,
            margin,
            overlaps: 0,
            out_of_window: 0,
            window_sequence: 0,
            first: Vec::new(),
        }
    }

    pub fn feed(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::ModuleStart { .. } => self.module_start = Some(e.clone()),
                Event::WindowStart { .. }
                | Event::WindowEnd { .. }
                | Event::PartitionRunning { .. }
                | Event::PartitionStopped { .. }
                | Event::PartitionExit { .. } => self.buf.push(e.clone()),
                _ => {}
            }
        }
    }

    /// Checks up to a margin before the newest event (`last`: everything, at the end).
    pub fn check(&mut self, last: bool) {
        let newest = self.buf.iter().map(Event::t).max().unwrap_or(i64::MIN);
        let to = if last { i64::MAX } else { newest.saturating_sub(self.margin) };
        if to <= self.checked_to {
            return;
        }
        let mut events: Vec<Event> = self.module_start.iter().cloned().collect();
        events.extend(self.buf.iter().cloned());
        let tl = Timeline::build(&events);
        for v in tl.violations.iter().filter(|v| v.start >= self.checked_to && v.start < to) {
            match v.kind {
                ViolationKind::Overlap => self.overlaps += 1,
                ViolationKind::OutOfWindow => self.out_of_window += 1,
                ViolationKind::WindowSequence => self.window_sequence += 1,
            }
            if self.first.len() < 10 {
                self.first.push(format!("{:?} core {} partition {} [{}, {}) ns", v.kind, v.core, v.partition, v.start, v.end));
            }
        }
        self.checked_to = to;
        let keep_from = to.saturating_sub(self.margin);
        self.buf.retain(|e| e.t() >= keep_from);
    }
}

/// The latest `chan` lines of the producer and the consumer.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Channels {
    /// Channel -> (key -> value) of the producer's line (`sent`, `full`).
    pub sent: BTreeMap<String, BTreeMap<String, u64>>,
    /// Channel -> (key -> value) of the consumer's line (`received`, `skipped`, ...).
    pub seen: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Channels {
    /// Accounts a `chan NAME key value ...` line (the rest of a partition's output line).
    pub fn line(&mut self, from_producer: bool, rest: &str) {
        let mut words = rest.split_whitespace();
        let Some(chan) = words.next() else { return };
        let words: Vec<&str> = words.collect();
        let fields: BTreeMap<String, u64> =
            words.chunks(2).filter_map(|kv| Some((kv.first()?.to_string(), kv.get(1)?.parse().ok()?))).collect();
        let map = if from_producer { &mut self.sent } else { &mut self.seen };
        map.insert(chan.to_string(), fields);
    }

    pub fn get(&self, from_producer: bool, chan: &str, key: &str) -> u64 {
        let map = if from_producer { &self.sent } else { &self.seen };
        map.get(chan).and_then(|f| f.get(key)).copied().unwrap_or(0)
    }
}

/// The least-squares slope of `(seconds, value)` points, per hour; None with fewer than 2
/// distinct times.
pub fn slope_per_hour(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let (mt, mv) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mt).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mt) * (p.1 - mv)).sum();
    (sxx > 0.0).then(|| sxy / sxx * 3600.0)
}

/// `VmRSS` of `/proc/PID/status` in bytes and the number of open descriptors of `pid`.
pub fn rss_and_fds(pid: u32) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.split_whitespace().next()?.parse().ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some((kb * 1024.0, fds as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        let w = |p: &str, core, a, b| PlannedWindow { partition: p.into(), core, start_ns: a, end_ns: b };
        Plan { major_frame_ns: 100, windows: vec![w("A", 0, 0, 40), w("A", 0, 60, 80), w("B", 1, 10, 50)] }
    }

    #[test]
    fn intervals_are_checked_against_the_windows_of_their_frame() {
        let p = plan();
        assert_eq!(p.outside("A", 0, 40), 0);
        assert_eq!(p.outside("A", 1061, 1079), 0);
        assert_eq!(p.outside("A", 1030, 1045), 5, "5 ns past the end of the window");
        assert_eq!(p.outside("A", 195, 205), 5, "started 5 ns before the next frame's window");
        assert_eq!(p.outside("B", 0, 5), 10, "ends 5 ns before its window, which starts at 10");
        assert_eq!(p.outside("A", 1045, 1045), 5, "one sample 5 ns past the window's end");
        assert_eq!(p.outside("A", 1040, 1040), 0, "one sample at the window's end");
        assert_eq!(p.outside("C", 0, 5), 5, "a partition without windows is outside");
        assert_eq!(p.outside("C", 3, 3), 1);
        let mut c = SampleCheck::default();
        c.ran(&p, "A", "1061 1079");
        c.ran(&p, "A", "1030 1045");
        c.ran(&p, "A", "garbage");
        c.ran(&p, "A", "1047 1047");
        assert_eq!(c, SampleCheck { intervals: 3, outside: 2, max_outside_ns: 7 });
        assert_eq!(p.planned_before(0), 0);
        assert_eq!(p.planned_before(200), 6);
        assert_eq!(p.planned_before(211), 8);
    }

    #[test]
    fn the_slope_is_per_hour_and_needs_two_times() {
        assert_eq!(slope_per_hour(&[(0.0, 5.0)]), None);
        assert_eq!(slope_per_hour(&[(1.0, 5.0), (1.0, 6.0)]), None);
        let s = slope_per_hour(&[(0.0, 10.0), (1.0, 12.0), (2.0, 14.0)]).unwrap();
        assert!((s - 7200.0).abs() < 1e-9, "{s}");
        let flat = slope_per_hour(&[(0.0, 10.0), (1.0, 11.0), (2.0, 10.0), (3.0, 11.0)]).unwrap();
        assert!(flat.abs() < 1000.0, "{flat}");
    }

    #[test]
    fn chan_lines_keep_the_latest_figures() {
        let mut c = Channels::default();
        c.line(true, "q sent 8 full 0");
        c.line(true, "q sent 16 full 1");
        c.line(false, "q received 15 skipped 0 duplicated 0 reordered 0 torn 0 overflowed 0");
        c.line(false, "bad");
        assert_eq!(c.get(true, "q", "sent"), 16);
        assert_eq!(c.get(true, "q", "full"), 1);
        assert_eq!(c.get(false, "q", "received"), 15);
        assert_eq!(c.get(false, "s", "received"), 0);
    }

    #[test]
    fn the_trace_is_read_in_whole_lines_as_it_grows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = TraceTail::new(path.clone());
        assert!(t.read_new().is_empty(), "no file yet");
        let a = Event::WindowStart { t: 5, core: 0, partition: 1, window: 1, planned: 0, schedule: 1 };
        let mut line = Vec::new();
        a.write_line(&mut line).unwrap();
        let (head, tail) = line.split_at(10);
        std::fs::write(&path, head).unwrap();
        assert!(t.read_new().is_empty(), "half a line");
        let mut rest = tail.to_vec();
        rest.extend_from_slice(b"{\"ev\":\"no_such_event\",\"t\":1}\n");
        std::fs::OpenOptions::new().append(true).open(&path).and_then(|mut f| std::io::Write::write_all(&mut f, &rest)).unwrap();
        assert_eq!(t.read_new(), vec![a]);
        assert_eq!(t.unparsed, 1);
    }

    fn start(t: i64, core: u32, partition: u32, planned: i64) -> Event {
        Event::WindowStart { t, core, partition, window: 1, planned, schedule: 1 }
    }
    fn end(t: i64, core: u32, partition: u32, planned: i64) -> Event {
        Event::WindowEnd { t, core, partition, window: 1, planned }
    }
    fn running(t: i64, core: u32, partition: u32, planned: i64) -> Event {
        Event::PartitionRunning { t, core, partition, planned }
    }
    fn stopped(t: i64, core: u32, partition: u32) -> Event {
        Event::PartitionStopped { t, core, partition }
    }

    #[test]
    fn chunks_count_each_violation_once_and_none_at_their_edges() {
        // Two partitions alternate on core 0 in 50 ns windows; in frame 3 partition 2 runs
        // before partition 1 stopped (one overlap).
        let mut events = Vec::new();
        for f in 0..8i64 {
            let b = f * 100;
            let late_stop = if f == 3 { 20 } else { 0 };
            events.extend([
                start(b + 1, 0, 1, b),
                running(b + 2, 0, 1, b),
                end(b + 49, 0, 1, b + 50),
                stopped(b + 49 + late_stop, 0, 1),
                start(b + 51, 0, 2, b + 50),
                running(b + 52, 0, 2, b + 50),
                end(b + 99, 0, 2, b + 100),
                stopped(b + 99, 0, 2),
            ]);
        }
        let whole = Timeline::build(&events);
        assert_eq!(whole.count(ViolationKind::Overlap), 1);
        for piece in [1, 3, 7, 64] {
            let mut c = ChunkedCheck::new(200);
            for chunk in events.chunks(piece) {
                c.feed(chunk);
                c.check(false);
            }
            c.check(true);
            assert_eq!((c.overlaps, c.window_sequence), (1, 0), "pieces of {piece}: {:?}", c.first);
            assert_eq!(c.out_of_window, whole.count(ViolationKind::OutOfWindow) as u64, "pieces of {piece}");
        }
    }

    #[test]
    fn hm_events_count_by_partition_code_action_and_source() {
        let mut s = TraceStats::ending_at(6);
        s.feed(&[
            Event::ModuleStart {
                t: 0,
                module: "M".into(),
                config: "c".into(),
                epoch_monotonic_ns: 0,
                mechanism: "m".into(),
                cores: vec![],
                partitions: vec![partita_trace::PartitionInfo { id: 3, name: "Faulty".into() }],
                schedule: 1,
                startup: Default::default(),
            },
            Event::HmEvent {
                t: 1,
                partition: 3,
                process: 0,
                code: "MEMORY_VIOLATION".into(),
                level: "PARTITION".into(),
                action: "COLD_START".into(),
                source: "detected".into(),
            },
            Event::HmEvent {
                t: 2,
                partition: 3,
                process: 0,
                code: "MEMORY_VIOLATION".into(),
                level: "PARTITION".into(),
                action: "COLD_START".into(),
                source: "injected".into(),
            },
            Event::PartitionRestart { t: 3, partition: 3, mode: "COLD_START".into(), start_condition: "HM_PARTITION_RESTART".into() },
            start(7, 1, 3, 5),
            start(9, 1, 3, 6),
        ]);
        assert_eq!(s.hm_count("MEMORY_VIOLATION"), 2);
        assert_eq!(s.hm.len(), 2);
        assert_eq!(s.restarts["Faulty"], 1);
        assert_eq!((s.windows_started, s.windows_after_end), (2, 1));
        let (lateness, _) = s.take_segment();
        assert_eq!(lateness[&1], [2.0, 3.0]);
        assert!(s.lateness.is_empty());
    }
}
