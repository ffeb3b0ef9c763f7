//! Export to the Chrome/Perfetto JSON trace format (the "Trace Event Format", JSON object form:
//! `{"displayTimeUnit":"ns","traceEvents":[...],"otherData":{...}}`), for ui.perfetto.dev.
//!
//! Layout:
//! - process "cores" (pid 1): a "module" track with schedule changes, then one track per core with
//!   a complete event (`ph:"X"`) per planned window, named after its partition, instants for the
//!   check violations found on that core, and counters of window-start lateness and PCS (us);
//! - process "partitions" (pid 2): one track per partition (one per partition and core when it runs
//!   on several cores, so that its slices never overlap on a track) with a complete event per run
//!   interval ([`crate::timeline`]) and instants (`ph:"i"`) for mode changes, releases, deadline
//!   misses, exits, restarts and dropped events.
//!
//! Names come from `process_name` / `thread_name` metadata events (without `ts`); tids are unique
//! across both processes and differ from the pids. `ts`/`dur` are microseconds (floats, exact to the ns). Perfetto
//! rejects negative timestamps, so every time is shifted by `max(0, -earliest t)`: `ts` is
//! `(t + ts_offset_ns) / 1000` with `ts_offset_ns` given in `otherData`; module times in ns are
//! also in each event's `args.t_ns`.

use crate::Event;
use crate::timeline::{RunEnd, Timeline, ViolationKind};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

const CORES_PID: u32 = 1;
const PARTITIONS_PID: u32 = 2;
/// Track tids start here, so that no tid equals a pid: Perfetto's JSON importer identifies
/// threads by tid alone and takes an event without a tid to be on thread `pid`.
const FIRST_TID: u32 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Track {
    Module,
    Core(u32),
    /// A partition, on one core when it runs on several.
    Partition(u32, Option<u32>),
}

struct Builder {
    offset: i64,
    tids: BTreeMap<Track, u32>,
    /// (time ns, sequence, event): sorted before output.
    events: Vec<(i64, usize, Value)>,
    /// Tracks of each partition, to place partition-level instants.
    partition_tracks: BTreeMap<u32, Vec<Track>>,
}

impl Builder {
    fn ts(&self, t: i64) -> f64 {
        (t + self.offset) as f64 / 1000.0
    }

    fn push(&mut self, t: i64, event: Value) {
        let seq = self.events.len();
        self.events.push((t, seq, event));
    }

    fn tid(&self, track: Track) -> u32 {
        self.tids[&track]
    }

    /// The track for an event of `partition` on `core` (its first track when `core` is None or
    /// has no track of its own).
    fn partition_track(&self, partition: u32, core: Option<u32>) -> Track {
        let tracks = &self.partition_tracks[&partition];
        core.and_then(|c| tracks.iter().copied().find(|t| *t == Track::Partition(partition, Some(c)))).unwrap_or(tracks[0])
    }

    fn complete(&mut self, track: Track, name: String, cat: &str, start: i64, end: i64, mut args: Value) {
        args["t_ns"] = json!(start);
        let pid = if matches!(track, Track::Partition(..)) { PARTITIONS_PID } else { CORES_PID };
        let ev = json!({
            "name": name, "cat": cat, "ph": "X", "pid": pid, "tid": self.tid(track),
            "ts": self.ts(start), "dur": (end - start).max(0) as f64 / 1000.0, "args": args,
        });
        self.push(start, ev);
    }

    fn instant(&mut self, track: Track, name: String, cat: &str, t: i64, mut args: Value) {
        args["t_ns"] = json!(t);
        let pid = if matches!(track, Track::Partition(..)) { PARTITIONS_PID } else { CORES_PID };
        let ev = json!({
            "name": name, "cat": cat, "ph": "i", "s": "t", "pid": pid, "tid": self.tid(track),
            "ts": self.ts(t), "args": args,
        });
        self.push(t, ev);
    }

    fn counter(&mut self, name: String, t: i64, value_ns: i64) {
        let ev = json!({"name": name, "ph": "C", "pid": CORES_PID, "tid": CORES_PID, "ts": self.ts(t), "args": {"us": value_ns as f64 / 1000.0}});
        self.push(t, ev);
    }
}

/// Converts a trace to the Perfetto JSON object.
pub fn to_chrome_json(events: &[Event]) -> Value {
    let (trace_events, other) = build(events);
    json!({"traceEvents": trace_events, "displayTimeUnit": "ns", "otherData": other})
}

/// Writes the Perfetto JSON of a trace to `out`, one trace event per line.
pub fn write_chrome_json(events: &[Event], mut out: impl Write) -> io::Result<()> {
    let (trace_events, other) = build(events);
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    for (i, ev) in trace_events.iter().enumerate() {
        if i > 0 {
            out.write_all(b",\n")?;
        }
        serde_json::to_writer(&mut out, ev)?;
    }
    out.write_all(b"\n],\"otherData\":")?;
    serde_json::to_writer(&mut out, &other)?;
    out.write_all(b"}\n")?;
    out.flush()
}

fn build(events: &[Event]) -> (Vec<Value>, Value) {
    let tl = Timeline::build(events);
    let mut names: BTreeMap<u32, String> = BTreeMap::new();
    let mut other = json!({"source": "partita trace --perfetto"});
    let mut cores: BTreeSet<u32> = tl.windows.iter().map(|w| w.core).chain(tl.runs.iter().map(|r| r.core)).collect();
    let mut partition_cores: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for (p, c) in tl.windows.iter().map(|w| (w.partition, w.core)).chain(tl.runs.iter().map(|r| (r.partition, r.core))) {
        partition_cores.entry(p).or_default().insert(c);
    }
    for e in events {
        let p = match e {
            Event::ModuleStart { module, config, epoch_monotonic_ns, mechanism, cores: infos, partitions, .. } => {
                other["module"] = json!(module);
                other["config"] = json!(config);
                other["mechanism"] = json!(mechanism);
                other["epoch_monotonic_ns"] = json!(epoch_monotonic_ns);
                cores.extend(infos.iter().map(|c| c.core));
                names.extend(partitions.iter().map(|p| (p.id, p.name.clone())));
                for p in partitions {
                    partition_cores.entry(p.id).or_default();
                }
                continue;
            }
            Event::ProcessDispatch { core, .. } | Event::ProcessCreate { core, .. } => {
                cores.insert(*core);
                continue;
            }
            Event::ModeChange { partition, .. }
            | Event::ProcessRelease { partition, .. }
            | Event::DeadlineMissed { partition, .. }
            | Event::PartitionExit { partition, .. }
            | Event::PartitionRestart { partition, .. }
            | Event::HmEvent { partition, .. }
            | Event::EventsDropped { partition, .. }
            | Event::ShmGarbage { partition, .. }
            | Event::ConfigMismatch { partition, .. } => *partition,
            _ => continue,
        };
        partition_cores.entry(p).or_default();
    }
    let offset = (-tl.first_t).max(0);
    other["ts_offset_ns"] = json!(offset);
    let label = |p: u32| names.get(&p).map_or(format!("partition {p}"), |n| format!("{n} ({p})"));

    let mut b = Builder { offset, tids: BTreeMap::new(), events: Vec::new(), partition_tracks: BTreeMap::new() };
    let mut meta = vec![
        json!({"name": "process_name", "ph": "M", "pid": CORES_PID, "tid": CORES_PID, "args": {"name": "cores"}}),
        json!({"name": "process_sort_index", "ph": "M", "pid": CORES_PID, "tid": CORES_PID, "args": {"sort_index": 0}}),
        json!({"name": "process_name", "ph": "M", "pid": PARTITIONS_PID, "tid": PARTITIONS_PID, "args": {"name": "partitions"}}),
        json!({"name": "process_sort_index", "ph": "M", "pid": PARTITIONS_PID, "tid": PARTITIONS_PID, "args": {"sort_index": 1}}),
    ];
    let mut tracks = vec![(Track::Module, CORES_PID, "module".to_string())];
    tracks.extend(cores.iter().map(|&c| (Track::Core(c), CORES_PID, format!("core {c}"))));
    for (&p, cs) in &partition_cores {
        let list: Vec<Track> = match cs.len() {
            0 | 1 => vec![Track::Partition(p, None)],
            _ => cs.iter().map(|&c| Track::Partition(p, Some(c))).collect(),
        };
        for &t in &list {
            let name = match t {
                Track::Partition(_, Some(c)) => format!("{} on core {c}", label(p)),
                _ => label(p),
            };
            tracks.push((t, PARTITIONS_PID, name));
        }
        b.partition_tracks.insert(p, list);
    }
    for (i, (track, pid, name)) in tracks.into_iter().enumerate() {
        let tid = FIRST_TID + i as u32;
        b.tids.insert(track, tid);
        meta.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}));
        meta.push(json!({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": i}}));
    }

    for w in &tl.windows {
        let end = w.planned_end.unwrap_or(tl.last_t.max(w.planned_start));
        let args = json!({
            "partition": w.partition, "window": w.window, "schedule": w.schedule,
            "lateness_ns": w.start_t - w.planned_start, "pcs_ns": w.running_t.map(|r| r - w.planned_start),
            "stop_ns": w.stop_time(),
        });
        b.complete(Track::Core(w.core), label(w.partition), "window", w.planned_start, end, args);
    }
    for r in &tl.runs {
        let end_kind = match r.end_kind {
            RunEnd::Stopped => "stopped",
            RunEnd::Exited => "exited",
            RunEnd::TraceEnd => "trace end",
        };
        let track = b.partition_track(r.partition, Some(r.core));
        b.complete(track, format!("running on core {}", r.core), "run", r.start, r.end, json!({"core": r.core, "end": end_kind}));
    }
    for v in &tl.violations {
        let name = match v.kind {
            ViolationKind::Overlap => "OVERLAP",
            ViolationKind::OutOfWindow => "OUTSIDE WINDOW",
            ViolationKind::WindowSequence => "WINDOW SEQUENCE",
        };
        let args = json!({"partition": v.partition, "other": v.other, "end_ns": v.end});
        b.instant(Track::Core(v.core), name.to_string(), "violation", v.start, args);
    }
    for e in events {
        match e {
            Event::WindowStart { t, core, planned, .. } => b.counter(format!("core {core} window-start lateness (us)"), *t, t - planned),
            Event::PartitionRunning { t, core, planned, .. } => b.counter(format!("core {core} PCS (us)"), *t, t - planned),
            Event::ModeChange { t, partition, from, to } => {
                let track = b.partition_track(*partition, None);
                b.instant(track, format!("mode {from} -> {to}"), "mode", *t, json!({"from": from, "to": to}));
            }
            Event::ProcessRelease { t, core, partition, process, deadline } => {
                let track = b.partition_track(*partition, Some(*core));
                b.instant(track, format!("release {process}"), "process", *t, json!({"process": process, "deadline_ns": deadline}));
            }
            Event::DeadlineMissed { t, core, partition, process, deadline } => {
                let track = b.partition_track(*partition, Some(*core));
                b.instant(track, format!("DEADLINE MISSED {process}"), "hm", *t, json!({"process": process, "deadline_ns": deadline}));
            }
            Event::PartitionExit { t, partition, reason } => {
                let track = b.partition_track(*partition, None);
                b.instant(track, format!("exit: {reason}"), "hm", *t, json!({"reason": reason}));
            }
            Event::PartitionRestart { t, partition, mode, start_condition } => {
                let track = b.partition_track(*partition, None);
                let args = json!({"mode": mode, "start_condition": start_condition});
                b.instant(track, format!("restart {mode}"), "hm", *t, args);
            }
            Event::HmEvent { t, partition, process, code, level, action, source } => {
                let track = b.partition_track(*partition, None);
                let args = json!({"process": process, "code": code, "level": level, "action": action, "source": source});
                b.instant(track, format!("HM {code} -> {action}"), "hm", *t, args);
            }
            Event::EventsDropped { t, partition, count } => {
                let track = b.partition_track(*partition, None);
                b.instant(track, format!("{count} events dropped"), "trace", *t, json!({"count": count}));
            }
            Event::ShmGarbage { t, partition, structure, field, value, repeats } => {
                let track = b.partition_track(*partition, None);
                let args = json!({"structure": structure, "field": field, "value": value, "repeats": repeats});
                b.instant(track, format!("shm garbage {structure}.{field}"), "hm", *t, args);
            }
            Event::ConfigMismatch { t, partition, service, attribute, given, line, .. } => {
                let track = b.partition_track(*partition, None);
                let args = json!({"service": service, "attribute": attribute, "given": given, "line": line});
                b.instant(track, format!("{service}: INVALID_CONFIG ({attribute}, line {line})"), "config", *t, args);
            }
            Event::ScheduleChange { t, from, to } => {
                b.instant(Track::Module, format!("schedule {from} -> {to}"), "schedule", *t, json!({"from": from, "to": to}));
            }
            _ => {}
        }
    }
    b.events.sort_by_key(|(t, seq, _)| (*t, *seq));
    meta.extend(b.events.into_iter().map(|(_, _, v)| v));
    (meta, other)
}
