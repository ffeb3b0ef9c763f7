//! Why a time partition's own sample fell outside its window (issue 10): each `ran START END`
//! interval of the soak's time partitions is matched with the window it belongs to and with
//! what the module did at that window's start and end (the trace's `window_start` and
//! `stop_times` events), then checked twice:
//!
//! - against the window as planned (temporal accuracy: a stop issued late lets the partition
//!   run past the planned end, by at most the stop's lateness), and each interval outside it is
//!   given a [`Class`];
//! - against the window as the module enforced it, from its actual start (the scheduler
//!   thread gave the core up) to the instant its stop took effect (the stop write returned, or
//!   the core guard held the partition): an interval outside that is a partition that ran while
//!   the module had it stopped, an isolation hole, and must never happen.
//!
//! Samples are timestamped by the partition when it read the clock (GET_TIME, the module's
//! epoch): an interval printed in a later window still carries the instants it ran, so a line
//! written after a stop is judged by when its samples were taken, never by when it was read.
//! Records are kept for [`KEEP_NS`] of trace and intervals are judged once the trace is
//! [`SETTLE_NS`] past them (a stop is confirmed up to a window later), so an hour's soak holds
//! only seconds of either.

use super::soak_check::Plan;
use partita_trace::Event;
use std::collections::{BTreeMap, VecDeque};

/// How long the trace must be past an interval before it is judged (its stop confirmed).
pub const SETTLE_NS: i64 = 200_000_000;
/// How much trace history is kept for intervals that arrive late (a partition prints its
/// intervals only when it runs again).
pub const KEEP_NS: i64 = 10_000_000_000;

/// Why an interval lies outside its planned window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// (a) The scheduler thread woke for the window end after the planned end (timer, host).
    LateWake,
    /// (a) It woke in time but issued the stop after the planned end (its own work first).
    LateIssue,
    /// (b) The stop was issued in time but the write returned (or the guard held the
    /// partition) only after the planned end: the write blocked.
    SlowStop,
    /// (c) The partition ran after its stop had taken effect: an isolation hole.
    AfterStop,
    /// (d) The interval began before the window's planned start.
    BeforeStart,
    /// (e) The checker's plan and the trace disagree: inside the window the trace planned.
    Misattributed,
    /// No trace record of the window (e.g. the run's last frames).
    Unmatched,
}

impl Class {
    pub const ALL: [Class; 7] =
        [Class::LateWake, Class::LateIssue, Class::SlowStop, Class::AfterStop, Class::BeforeStart, Class::Misattributed, Class::Unmatched];

    /// The metric suffix of the class.
    pub fn key(self) -> &'static str {
        match self {
            Class::LateWake => "late_wake",
            Class::LateIssue => "late_issue",
            Class::SlowStop => "slow_stop",
            Class::AfterStop => "after_stop",
            Class::BeforeStart => "before_start",
            Class::Misattributed => "misattributed",
            Class::Unmatched => "unmatched",
        }
    }
}

/// What the module did at the end of one window (module time, ns; `stop_times`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StopRecord {
    pub core: u32,
    pub wake_planned: i64,
    pub woke: i64,
    pub issued: i64,
    pub returned: i64,
    pub held: Option<i64>,
    pub effective: i64,
    pub confirmed: Option<i64>,
}

/// One interval judged outside its planned window, with what explains it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outside {
    pub partition: String,
    pub start: i64,
    pub end: i64,
    pub planned: (i64, i64),
    pub class: Class,
    /// Beyond the enforced window too (an isolation hole).
    pub enforced: bool,
    pub stop: Option<StopRecord>,
    pub actual_start: Option<i64>,
    /// How long the partition had not run right before this interval, inside the same window
    /// (ns; None: the interval opened its window). A partition that spins on the clock only
    /// stops sampling when it loses its CPU: a gap just before a late wake-up says the whole
    /// virtual CPU stalled (the scheduler's timer could not fire either), i.e. the host.
    pub gap_before: Option<i64>,
    /// The latest partition restart (any partition) in the 5 ms before the window's planned
    /// end, relative to it (ns, <= 0). A restart clones the partition's program from the
    /// module process, which write-protects the module's memory for copy-on-write while the
    /// kernel copies its page tables under `mmap_lock`: a scheduler thread that then writes
    /// its own memory faults and waits for that lock (docs/isolation.md).
    pub restart_before: Option<i64>,
}

impl Outside {
    /// One line for the report.
    pub fn describe(&self) -> String {
        let us = |v: i64| format!("{:+.0}", v as f64 / 1e3);
        let (ps, pe) = self.planned;
        let mut s = format!(
            "{} ran [{}, {}] ns, window [{ps}, {pe}): {}; past the end {} us, before the start {} us",
            self.partition,
            self.start,
            self.end,
            self.class.key(),
            us((self.end - pe).max(0)),
            us((ps - self.start).max(0))
        );
        if let Some(r) = &self.stop {
            s += &format!(
                "; relative to the planned end (us): wake planned {} woke {} issued {} returned {}{} effective {} confirmed {}",
                us(r.wake_planned - pe),
                us(r.woke - pe),
                us(r.issued - pe),
                us(r.returned - pe),
                r.held.map_or(String::new(), |h| format!(" held {}", us(h - pe))),
                us(r.effective - pe),
                r.confirmed.map_or("never".into(), |c| us(c - pe)),
            );
        }
        if let Some(r) = self.restart_before {
            s += &format!("; a partition restarted {} us before the planned end", -r / 1000);
        }
        if let Some(g) = self.gap_before {
            s += &format!("; not running for {} us just before", g / 1000);
        }
        if self.enforced {
            s += " [OUTSIDE THE ENFORCED WINDOW]";
        }
        s
    }
}

/// The planned window of `partition` an interval belongs to: of the windows in its frame and
/// the two around it, the one it lies least outside (absolute module time).
pub fn window_of(plan: &Plan, partition: &str, start: i64, end: i64) -> Option<(i64, i64)> {
    let frame = start.div_euclid(plan.major_frame_ns) * plan.major_frame_ns;
    let mut best: Option<(i64, (i64, i64))> = None;
    for w in plan.windows.iter().filter(|w| w.partition == partition) {
        for f in [frame - plan.major_frame_ns, frame, frame + plan.major_frame_ns] {
            let (a, b) = (f + w.start_ns, f + w.end_ns);
            let out = (a - start).max(0) + (end - b).max(0);
            if best.is_none_or(|(o, _)| out < o) {
                best = Some((out, (a, b)));
            }
        }
    }
    best.map(|(_, w)| w)
}

/// Classifies an interval `[start, end]` outside its planned window `planned`, given the
/// actual start and the stop of that window from the trace.
pub fn classify(start: i64, end: i64, planned: (i64, i64), actual_start: Option<i64>, stop: Option<&StopRecord>) -> Class {
    let (ps, pe) = planned;
    if start >= ps && end <= pe {
        return Class::Misattributed;
    }
    if start < ps {
        return if actual_start.is_some() { Class::BeforeStart } else { Class::Unmatched };
    }
    let Some(r) = stop else { return Class::Unmatched };
    if end > r.effective {
        Class::AfterStop
    } else if r.woke > pe {
        Class::LateWake
    } else if r.issued > pe {
        Class::LateIssue
    } else {
        Class::SlowStop
    }
}

/// An interval outside its window as enforced (module time, ns).
#[derive(Debug, Clone, PartialEq)]
pub struct Unenforced {
    pub partition: String,
    pub start: i64,
    pub end: i64,
    pub planned: (i64, i64),
    /// The window's actual start (`window_start`) and when its stop took effect.
    pub actual_start: i64,
    pub effective: i64,
}

impl Unenforced {
    pub fn describe(&self) -> String {
        let (ps, pe) = self.planned;
        format!(
            "{} ran [{}, {}] ns, window planned [{ps}, {pe}), started {}, stopped {} (ran {} us before the start, {} us after the stop)",
            self.partition,
            self.start,
            self.end,
            self.actual_start,
            self.effective,
            (self.actual_start - self.start).max(0) / 1000,
            (self.end - self.effective).max(0) / 1000
        )
    }
}

/// The attribution of a soak's intervals, fed with the trace and the intervals as they come.
#[derive(Debug, Default)]
pub struct Attribution {
    names: BTreeMap<u32, String>,
    /// (partition, planned start) -> actual start.
    starts: BTreeMap<(String, i64), i64>,
    /// (partition, actual start) -> planned start: the window a partition was running in.
    opened: BTreeMap<(String, i64), i64>,
    /// (partition, planned end) -> what the module did.
    stops: BTreeMap<(String, i64), StopRecord>,
    /// Intervals waiting for the trace: (partition, start, end, end of the partition's
    /// previous interval).
    waiting: VecDeque<(String, i64, i64, Option<i64>)>,
    /// Per partition: the end of its last interval.
    last_end: BTreeMap<String, i64>,
    /// Restarts of any partition (module time), for [`Outside::restart_before`].
    restarts: std::collections::BTreeSet<i64>,
    newest: i64,
    /// Intervals judged.
    pub checked: u64,
    /// Of them outside the planned window, by class.
    pub classes: BTreeMap<Class, u64>,
    /// Intervals outside the window as enforced (actual start .. stop in effect): must be 0.
    pub outside_enforced: u64,
    /// Intervals whose window has no record in the trace (not checked against the enforced window).
    pub unchecked_enforced: u64,
    /// The first intervals outside the enforced window.
    pub enforced_first: Vec<Unenforced>,
    /// The outside intervals, explained (the first [`KEPT`]).
    pub outside: Vec<Outside>,
    /// CLOCK_MONOTONIC ns of the module epoch (to compare with host figures).
    pub epoch_monotonic_ns: i64,
    /// Per core: stop lateness (effective stop minus planned end, ns; negative: early) and the
    /// scheduler thread's wake-up lateness for the window end.
    pub stop_lateness: BTreeMap<u32, Vec<f64>>,
    pub wake_lateness: BTreeMap<u32, Vec<f64>>,
}

/// How long before a window end a restart counts as near it ([`Outside::restart_before`]).
pub const RESTART_NEAR_NS: i64 = 5_000_000;

/// How many outside intervals are kept with their explanation.
pub const KEPT: usize = 10_000;

impl Attribution {
    /// Accounts the trace events of the partitions named in `watched`.
    pub fn feed(&mut self, events: &[Event], watched: &[&str]) {
        for e in events {
            self.newest = self.newest.max(e.t());
            match e {
                Event::ModuleStart { partitions, epoch_monotonic_ns, .. } => {
                    self.epoch_monotonic_ns = *epoch_monotonic_ns;
                    self.names.extend(partitions.iter().filter(|p| watched.contains(&p.name.as_str())).map(|p| (p.id, p.name.clone())));
                }
                Event::WindowStart { t, partition, planned, .. } => {
                    if let Some(n) = self.names.get(partition) {
                        self.starts.insert((n.clone(), *planned), *t);
                        self.opened.insert((n.clone(), *t), *planned);
                    }
                }
                Event::StopTimes {
                    core, partition, planned_end, wake_planned, woke, issued, returned, held, effective, confirmed, ..
                } => {
                    if let Some(n) = self.names.get(partition) {
                        let r = StopRecord {
                            core: *core,
                            wake_planned: *wake_planned,
                            woke: *woke,
                            issued: *issued,
                            returned: *returned,
                            held: *held,
                            effective: *effective,
                            confirmed: *confirmed,
                        };
                        self.stop_lateness.entry(*core).or_default().push((effective - planned_end) as f64);
                        self.wake_lateness.entry(*core).or_default().push((woke - wake_planned) as f64);
                        self.stops.insert((n.clone(), *planned_end), r);
                    }
                }
                Event::PartitionRestart { t, .. } => {
                    self.restarts.insert(*t);
                }
                _ => {}
            }
        }
    }

    /// Accounts one run interval of `partition`.
    pub fn interval(&mut self, partition: &str, start: i64, end: i64) {
        let before = self.last_end.insert(partition.to_string(), end);
        self.waiting.push_back((partition.to_string(), start, end, before));
    }

    /// Judges the intervals the trace is settled for (`all`: every one left, at the end), and
    /// forgets records too old to be needed.
    pub fn settle(&mut self, plan: &Plan, all: bool) {
        let horizon = if all { i64::MAX } else { self.newest - SETTLE_NS };
        let mut keep = VecDeque::new();
        while let Some((p, s, e, before)) = self.waiting.pop_front() {
            if e <= horizon || all { self.judge(plan, &p, s, e, before) } else { keep.push_back((p, s, e, before)) }
        }
        self.waiting = keep;
        let old = self.newest - KEEP_NS;
        self.starts.retain(|k, _| k.1 >= old);
        self.opened.retain(|k, _| k.1 >= old);
        self.stops.retain(|k, _| k.1 >= old);
        self.restarts.retain(|&t| t >= old);
    }

    /// The window `partition` was running in at `start` by the trace: the latest one that
    /// actually started at or before it, with its planned times, actual start and stop.
    fn running_in(&self, plan: &Plan, partition: &str, start: i64) -> Option<((i64, i64), i64, Option<StopRecord>)> {
        let key = partition.to_string();
        let (&(_, actual), &ps) = self.opened.range((key.clone(), i64::MIN)..=(key.clone(), start)).next_back()?;
        let planned = window_of(plan, partition, ps, ps).filter(|w| w.0 == ps)?;
        Some((planned, actual, self.stops.get(&(key, planned.1)).copied()))
    }

    fn judge(&mut self, plan: &Plan, partition: &str, start: i64, end: i64, before: Option<i64>) {
        self.checked += 1;
        // An interval belongs to the window the module had open when it ran (a stop held up
        // for a long time lets a partition run on into later frames, nearer other windows of
        // it); else, outside every enforced window, to its nearest planned window.
        let running = self.running_in(plan, partition, start);
        let inside_enforced = running.and_then(|(w, a, r)| r.filter(|r| start >= a && end <= r.effective).map(|r| (w, a, r)));
        let (planned, actual_start, stop) = match inside_enforced {
            Some((w, a, r)) => (w, Some(a), Some(r)),
            None => {
                let Some(planned) = window_of(plan, partition, start, end) else {
                    *self.classes.entry(Class::Unmatched).or_default() += 1;
                    return;
                };
                let key = partition.to_string();
                (planned, self.starts.get(&(key.clone(), planned.0)).copied(), self.stops.get(&(key, planned.1)).copied())
            }
        };
        let checkable = running.is_some_and(|r| r.2.is_some()) || (actual_start.is_some() && stop.is_some());
        let enforced = match (actual_start, stop) {
            _ if inside_enforced.is_some() => false,
            _ if !checkable => {
                self.unchecked_enforced += 1;
                false
            }
            (a, r) => {
                let (a, effective) =
                    (a.or(running.map(|r| r.1)).unwrap_or(i64::MIN), r.or(running.and_then(|r| r.2)).map_or(i64::MIN, |r| r.effective));
                if self.enforced_first.len() < 30 {
                    self.enforced_first.push(Unenforced {
                        partition: partition.to_string(),
                        start,
                        end,
                        planned,
                        actual_start: a,
                        effective,
                    });
                }
                true
            }
        };
        self.outside_enforced += enforced as u64;
        if start >= planned.0 && end <= planned.1 {
            return;
        }
        let class = classify(start, end, planned, actual_start, stop.as_ref());
        *self.classes.entry(class).or_default() += 1;
        if self.outside.len() < KEPT {
            let gap_before = before.filter(|&b| b >= planned.0 && b < start).map(|b| start - b);
            let restart_before = self.restarts.range(planned.1 - RESTART_NEAR_NS..=planned.1).next_back().map(|t| t - planned.1);
            self.outside.push(Outside {
                partition: partition.to_string(),
                start,
                end,
                planned,
                class,
                enforced,
                stop,
                actual_start,
                gap_before,
                restart_before,
            });
        }
    }

    /// Intervals outside their planned windows (every class).
    pub fn outside_planned(&self) -> u64 {
        self.classes.values().sum()
    }

    /// `a/b/c/...` counts of the classes, for a report line.
    pub fn classes_line(&self) -> String {
        Class::ALL.iter().filter_map(|c| self.classes.get(c).map(|n| format!("{} {n}", c.key()))).collect::<Vec<_>>().join(", ")
    }
}

/// The host's steal time per CPU (`/proc/stat`, in USER_HZ ticks of 10 ms), read every 10 ms
/// by a thread while the soak runs: a vCPU the host did not run shows as steal, so an outside
/// interval with steal around its window end points at the host rather than the module.
pub struct StealWatch {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<Vec<StealStep>>>,
}

/// Steal ticks that appeared on `cpu` between two reads (CLOCK_MONOTONIC ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StealStep {
    pub cpu: u32,
    pub from_ns: i64,
    pub to_ns: i64,
    pub ticks: u64,
}

/// Per CPU `cpuN` line of /proc/stat: its steal ticks (the 8th value).
pub fn parse_steal(stat: &str) -> BTreeMap<u32, u64> {
    stat.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let cpu: u32 = w.next()?.strip_prefix("cpu")?.parse().ok()?;
            Some((cpu, w.nth(7)?.parse().ok()?))
        })
        .collect()
}

impl StealWatch {
    pub fn start() -> StealWatch {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let read = || std::fs::read_to_string("/proc/stat").map(|s| parse_steal(&s)).unwrap_or_default();
            let (mut last, mut at) = (read(), crate::module_run::monotonic_ns());
            let mut steps = Vec::new();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(10));
                let (now, now_at) = (read(), crate::module_run::monotonic_ns());
                for (cpu, v) in &now {
                    let d = v.saturating_sub(last.get(cpu).copied().unwrap_or(*v));
                    if d > 0 && steps.len() < 1_000_000 {
                        steps.push(StealStep { cpu: *cpu, from_ns: at, to_ns: now_at, ticks: d });
                    }
                }
                (last, at) = (now, now_at);
            }
            steps
        });
        StealWatch { stop, thread: Some(thread) }
    }

    /// Stops the thread; the steal seen.
    pub fn finish(mut self) -> Vec<StealStep> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default()
    }
}

impl Drop for StealWatch {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Steal ticks read within `around` ns of `[from, to]` (CLOCK_MONOTONIC ns).
pub fn steal_near(steps: &[StealStep], from: i64, to: i64, around: i64) -> u64 {
    steps.iter().filter(|s| s.to_ns >= from - around && s.from_ns <= to + around).map(|s| s.ticks).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::soak_check::PlannedWindow;
    use partita_trace::PartitionInfo;

    /// A: 0..40 of a 100 ns frame.
    fn plan() -> Plan {
        Plan { major_frame_ns: 100, windows: vec![PlannedWindow { partition: "A".into(), core: 0, start_ns: 0, end_ns: 40 }] }
    }

    fn module_start() -> Event {
        Event::ModuleStart {
            t: 0,
            module: "M".into(),
            config: "c".into(),
            epoch_monotonic_ns: 0,
            mechanism: "m".into(),
            cores: vec![],
            partitions: vec![PartitionInfo { id: 1, name: "A".into() }, PartitionInfo { id: 2, name: "B".into() }],
            schedule: 1,
            startup: Default::default(),
        }
    }

    fn start(t: i64, planned: i64) -> Event {
        Event::WindowStart { t, core: 0, partition: 1, window: 1, planned, schedule: 1 }
    }

    /// The stop of the window ending at `planned_end`: woke, issued, returned relative to it.
    fn stop(planned_end: i64, woke: i64, issued: i64, returned: i64, held: Option<i64>) -> Event {
        let effective = held.map_or(returned, |h| h.min(returned)) + planned_end;
        Event::StopTimes {
            t: planned_end + 50,
            core: 0,
            partition: 1,
            planned_end,
            wake_planned: planned_end - 5,
            woke: planned_end + woke,
            issued: planned_end + issued,
            returned: planned_end + returned,
            held: held.map(|h| planned_end + h),
            effective,
            confirmed: Some(planned_end + 50),
        }
    }

    /// Frames 0..10 of A, each started on time and stopped 3 ns before the planned end, but
    /// frame 2's scheduler thread woke 6 ns late, frame 4's write blocked (returned 8 ns after
    /// the end), frame 5's was held by the guard at +2, frame 7 stopped late from its own work.
    fn trace() -> Vec<Event> {
        let mut ev = vec![module_start()];
        for f in 0..10 {
            let (b, e) = (f * 100, f * 100 + 40);
            ev.push(start(b + 1, b));
            ev.push(match f {
                2 => stop(e, 6, 7, 8, None),
                4 => stop(e, -4, -3, 8, None),
                5 => stop(e, -4, -3, 30, Some(2)),
                7 => stop(e, -4, 1, 2, None),
                _ => stop(e, -4, -3, -2, None),
            });
        }
        // A restart of another partition 3 ns before frame 2's window end.
        ev.push(Event::PartitionRestart { t: 237, partition: 2, mode: "COLD_START".into(), start_condition: "x".into() });
        // Another partition's records are not A's.
        ev.push(Event::WindowStart { t: 2000, core: 1, partition: 2, window: 1, planned: 2000, schedule: 1 });
        ev
    }

    #[test]
    fn each_outside_interval_gets_its_cause() {
        let p = plan();
        let mut a = Attribution::default();
        a.feed(&trace(), &["A"]);
        // Inside: two intervals of frame 0 and one of frame 1.
        a.interval("A", 2, 20);
        a.interval("A", 21, 37);
        a.interval("A", 101, 138);
        // Frame 2: ran to +5 (the scheduler woke at +6): a late wake-up, after not running
        // from 230 to 236 (a stalled CPU).
        a.interval("A", 201, 230);
        a.interval("A", 236, 245);
        // Frame 4: ran to +7, the write returned at +8: a slow stop.
        a.interval("A", 401, 447);
        // Frame 5: ran to +1, held at +2.
        a.interval("A", 501, 541);
        // Frame 7: ran to +1 before the stop issued at +1 after waking in time.
        a.interval("A", 701, 741);
        // Frame 3: ran after its stop took effect (-2): a hole, in the planned and enforced sense.
        a.interval("A", 301, 345);
        // Frame 6: ran at 39, after the stop took effect at 38, though inside the plan.
        a.interval("A", 639, 639);
        // Frame 8: began 3 ns before its planned start.
        a.interval("A", 797, 810);
        // Frame 9's end is not settled before the trace is 200 ms past it.
        a.settle(&p, false);
        assert_eq!(a.checked, 0, "the trace ends at 2000 ns: nothing settled");
        a.settle(&p, true);
        assert_eq!(a.checked, 11);
        let n = |c: Class| a.classes.get(&c).copied().unwrap_or(0);
        assert_eq!(n(Class::LateWake), 1);
        assert_eq!(n(Class::SlowStop), 2);
        assert_eq!(n(Class::LateIssue), 1);
        assert_eq!(n(Class::AfterStop), 1);
        assert_eq!(n(Class::BeforeStart), 1);
        assert_eq!(a.outside_planned(), 6);
        // Outside the enforced window: frame 3 and 6 (after the stop), frame 8 (before the
        // actual start at 801).
        assert_eq!(a.outside_enforced, 3);
        let late: Vec<(i64, i64)> = a.enforced_first.iter().map(|u| (u.start, u.actual_start)).collect();
        assert_eq!(late, [(301, 301), (639, 601), (797, 801)]);
        assert!(a.enforced_first[2].describe().contains("ran 0 us before the start"));
        assert_eq!(a.unchecked_enforced, 0);
        assert!(a.outside.iter().any(|o| o.class == Class::AfterStop && o.enforced && o.describe().contains("ENFORCED")));
        assert_eq!(a.stop_lateness[&0].len(), 10);
        assert_eq!(a.wake_lateness[&0][2], 11.0);
        let gaps: Vec<Option<i64>> = a.outside.iter().map(|o| o.gap_before).collect();
        assert_eq!(gaps, [Some(6), None, None, None, None, None], "only frame 2's follows another interval of its window");
        assert_eq!(a.outside[0].restart_before, Some(-3));
        assert_eq!(a.outside[5].restart_before, Some(237 - 840), "frame 8's is within 5 ms too (ns frames)");
        assert!(a.outside[0].describe().contains("not running for 0 us just before"), "{}", a.outside[0].describe());
    }

    #[test]
    fn a_stop_held_up_for_frames_is_a_late_wake_of_the_window_it_ran_in() {
        let p = plan();
        let mut a = Attribution::default();
        // Frame 0's window starts at 1 and its stop takes effect only at 250 (the scheduler
        // thread woke at 245); frame 1's window then starts late, at 251.
        a.feed(&[module_start(), start(1, 0), stop(40, 205, 206, 210, None), start(251, 100), stop(140, -4, -3, -2, None)], &["A"]);
        // Ran on to 80, nearer frame 1's planned window (100..140) than frame 0's.
        a.interval("A", 41, 80);
        a.settle(&p, true);
        assert_eq!(a.outside_enforced, 0, "{:?}", a.enforced_first);
        assert_eq!((a.outside_planned(), a.classes.get(&Class::LateWake).copied()), (1, Some(1)));
        assert_eq!(a.outside[0].planned, (0, 40));
    }

    #[test]
    fn intervals_settle_only_once_the_trace_is_past_them() {
        let p = plan();
        let mut a = Attribution::default();
        a.feed(&[module_start(), start(1, 0)], &["A"]);
        a.interval("A", 2, 20);
        a.settle(&p, false);
        assert_eq!(a.checked, 0);
        a.feed(&[start(SETTLE_NS + 100, SETTLE_NS + 100)], &["A"]);
        a.settle(&p, false);
        assert_eq!((a.checked, a.outside_planned()), (1, 0));
        assert_eq!(a.unchecked_enforced, 1, "no stop record of the window");
    }

    #[test]
    fn steal_is_read_per_cpu_and_found_near_a_window() {
        let stat = "cpu  1 2 3 4 5 6 7 99 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu1 1 2 3 4 5 6 7 12 0 0\nintr 5\n";
        assert_eq!(parse_steal(stat), BTreeMap::from([(0, 8), (1, 12)]));
        let steps = [StealStep { cpu: 1, from_ns: 100, to_ns: 200, ticks: 3 }, StealStep { cpu: 0, from_ns: 500, to_ns: 600, ticks: 1 }];
        assert_eq!(steal_near(&steps, 250, 260, 60), 3);
        assert_eq!(steal_near(&steps, 250, 260, 10), 0);
        assert_eq!(steal_near(&steps, 0, 1000, 0), 4);
    }

    #[test]
    fn the_classifier_alone() {
        let r = StopRecord { core: 0, wake_planned: 35, woke: 36, issued: 37, returned: 38, held: None, effective: 38, confirmed: None };
        assert_eq!(classify(5, 30, (0, 40), Some(1), Some(&r)), Class::Misattributed);
        assert_eq!(classify(-1, 30, (0, 40), Some(1), Some(&r)), Class::BeforeStart);
        assert_eq!(classify(-1, 30, (0, 40), None, Some(&r)), Class::Unmatched);
        assert_eq!(classify(5, 41, (0, 40), Some(1), None), Class::Unmatched);
        assert_eq!(classify(5, 41, (0, 40), Some(1), Some(&r)), Class::AfterStop);
        let late = StopRecord { woke: 42, issued: 43, returned: 44, effective: 44, ..r };
        assert_eq!(classify(5, 41, (0, 40), Some(1), Some(&late)), Class::LateWake);
        assert_eq!(window_of(&plan(), "A", 195, 205), Some((200, 240)));
        assert_eq!(window_of(&plan(), "A", 139, 141), Some((100, 140)));
        assert_eq!(window_of(&plan(), "B", 0, 1), None);
    }
}
