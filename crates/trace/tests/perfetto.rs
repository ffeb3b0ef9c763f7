mod common;

use common::{Faults, MS, clean, round_trip, trace};
use partita_trace::Event;
use partita_trace::perfetto::{to_chrome_json, write_chrome_json};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

fn events<'a>(json: &'a Value, ph: &str) -> Vec<&'a Value> {
    json["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == ph).collect()
}

/// thread name by (pid, tid), from the metadata events.
fn thread_names(json: &Value) -> BTreeMap<(u64, u64), String> {
    events(json, "M")
        .into_iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| ((e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()), e["args"]["name"].as_str().unwrap().to_string()))
        .collect()
}

fn on_thread<'a>(json: &'a Value, ph: &str, thread: &str) -> Vec<&'a Value> {
    let names = thread_names(json);
    events(json, ph)
        .into_iter()
        .filter(|e| names.get(&(e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap())).map(String::as_str) == Some(thread))
        .collect()
}

#[test]
fn top_level_and_metadata() {
    let json = to_chrome_json(&clean());
    assert_eq!(json["displayTimeUnit"], "ns");
    assert_eq!(json["otherData"]["ts_offset_ns"], 5 * MS); // the earliest event is at -5 ms
    assert_eq!(json["otherData"]["module"], "demo");
    let processes: BTreeSet<_> =
        events(&json, "M").iter().filter(|e| e["name"] == "process_name").map(|e| e["args"]["name"].as_str().unwrap()).collect();
    assert_eq!(processes, BTreeSet::from(["cores", "partitions"]));
    let names: BTreeSet<String> = thread_names(&json).into_values().collect();
    let want = ["module", "core 0", "core 1", "A (1)", "B (2)", "C (3)"];
    assert_eq!(names, want.iter().map(|s| s.to_string()).collect());
    let tids: BTreeSet<u64> = thread_names(&json).keys().map(|k| k.1).collect();
    assert_eq!(tids.len(), 6, "tids are unique across processes");
    assert!(tids.iter().all(|t| *t > 2), "no tid equals a pid: {tids:?}");
    // Metadata carries no timestamp.
    assert!(events(&json, "M").iter().all(|e| e.get("ts").is_none()));
}

#[test]
fn windows_and_runs_are_complete_events_in_microseconds() {
    let json = to_chrome_json(&clean());
    assert_eq!(events(&json, "X").len(), 18); // 9 windows + 9 run intervals
    let core0 = on_thread(&json, "X", "core 0");
    assert_eq!(core0.len(), 6);
    // A's first window, planned [0, 8) ms, shifted by 5 ms.
    assert_eq!(core0[0]["name"], "A (1)");
    assert_eq!(core0[0]["ts"].as_f64(), Some(5000.0));
    assert_eq!(core0[0]["dur"].as_f64(), Some(8000.0));
    assert_eq!(core0[0]["args"]["lateness_ns"], 10_000);
    assert_eq!(core0[0]["args"]["pcs_ns"], 20_000);
    assert_eq!(core0[0]["args"]["stop_ns"], 30_000);
    assert_eq!(core0[0]["args"]["t_ns"], 0);
    // A's first run: running at 20 us, stopped at 8 ms + 30 us.
    let runs = on_thread(&json, "X", "A (1)");
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0]["ts"].as_f64(), Some(5020.0));
    assert_eq!(runs[0]["dur"].as_f64(), Some(8010.0));
    assert_eq!(runs[0]["args"]["end"], "stopped");
    assert_eq!(runs[1]["ts"].as_f64(), Some(25_022.0)); // frame 1: 20 ms + 22 us
    // B runs in [10 ms + 15 us, 18 ms + 40 us): ts with a fraction of a microsecond is exact.
    let b = on_thread(&json, "X", "B (2)");
    assert_eq!(b[0]["ts"].as_f64(), Some(15_015.0));
    assert_eq!(b[0]["dur"].as_f64(), Some(8025.0));
}

#[test]
fn instants_and_counters() {
    let json = to_chrome_json(&clean());
    let instants = events(&json, "i");
    // 3 mode changes, 3 releases, 1 deadline miss, 1 schedule change, 1 events dropped.
    assert_eq!(instants.len(), 9);
    assert!(instants.iter().all(|e| e["s"] == "t"));
    let a: Vec<_> = on_thread(&json, "i", "A (1)").iter().map(|e| e["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(a, ["mode COLD_START -> NORMAL", "release 1", "release 1", "release 1", "DEADLINE MISSED 1"]);
    let module = on_thread(&json, "i", "module");
    assert_eq!(module.len(), 1);
    assert_eq!(module[0]["ts"].as_f64(), Some(45_000.0));
    assert_eq!(events(&json, "C").len(), 18); // lateness and PCS per window
}

#[test]
fn trace_is_loadable() {
    let json = to_chrome_json(&trace(Faults { late_stop_a: true, early_run_c: true }));
    let all = json["traceEvents"].as_array().unwrap();
    let mut last = f64::MIN;
    for e in all.iter().filter(|e| e["ph"] != "M") {
        let ts = e["ts"].as_f64().unwrap();
        assert!(ts >= 0.0, "negative ts: {e}");
        assert!(ts >= last, "events sorted by ts");
        last = ts;
        assert!(e["pid"].as_u64().is_some());
        if e["ph"] != "C" {
            let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            assert!(thread_names(&json).contains_key(&key), "unnamed track: {e}");
        }
    }
    // Complete events on one track never partly overlap (Perfetto needs proper nesting).
    let mut by_track: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for e in events(&json, "X") {
        let ts = e["ts"].as_f64().unwrap();
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        by_track.entry(key).or_default().push((ts, ts + e["dur"].as_f64().unwrap()));
    }
    for slices in by_track.values() {
        for pair in slices.windows(2) {
            assert!(pair[1].0 >= pair[0].1, "{pair:?}");
        }
    }
    // The planted faults appear as violation instants on the cores' tracks.
    let names: Vec<_> = events(&json, "i").iter().filter(|e| e["cat"] == "violation").map(|e| e["name"].clone()).collect();
    assert_eq!(names, ["OUTSIDE WINDOW", "OVERLAP"]);
}

#[test]
fn multi_core_partition_gets_a_track_per_core() {
    let mut ev = clean();
    for (core, start) in [(0, 18 * MS), (1, 15 * MS)] {
        ev.push(Event::WindowStart { t: start, core, partition: 4, window: 3, planned: start, schedule: 1 });
        ev.push(Event::PartitionRunning { t: start + 1000, core, partition: 4, planned: start });
        ev.push(Event::WindowEnd { t: 20 * MS, core, partition: 4, window: 3, planned: 20 * MS });
        ev.push(Event::PartitionStopped { t: 20 * MS + 1000, core, partition: 4 });
    }
    let json = to_chrome_json(&ev);
    assert_eq!(on_thread(&json, "X", "partition 4 on core 0").len(), 1);
    assert_eq!(on_thread(&json, "X", "partition 4 on core 1").len(), 1);
}

#[test]
fn streamed_output_is_the_same_json() {
    let ev = round_trip(&clean());
    let mut out = Vec::new();
    write_chrome_json(&ev, &mut out).unwrap();
    assert!(out.starts_with(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":["));
    let parsed: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(parsed, to_chrome_json(&clean()));
}
