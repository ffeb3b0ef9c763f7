mod common;

use common::{Faults, MAF, MS, US, clean, round_trip, trace};
use partita_trace::Event;
use partita_trace::stats::Stats;
use partita_trace::summary::summarize;
use partita_trace::timeline::{RunEnd, Timeline, ViolationKind};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn per_core_statistics_are_exact() {
    let s = summarize(&clean());
    assert_eq!(s.cores.len(), 2);
    let c0 = &s.cores[0];
    assert_eq!((c0.core, c0.cpu, c0.policy.as_deref(), c0.windows, c0.run_intervals), (0, Some(0), Some("CYCLIC"), 6, 6));

    // Lateness on core 0: A 10, 11, 12 us and B 8 us three times.
    let l = c0.lateness.as_ref().unwrap();
    assert_eq!((l.n, l.min, l.max, l.abs_jitter), (6, 8 * US, 12 * US, 4 * US));
    assert!(close(l.median, 9000.0) && close(l.mean, 9500.0), "{l:?}");
    assert!(close(l.p99, 11_950.0), "{l:?}"); // h = 4.95 -> 11000 + 0.95 * 1000
    assert!(close(l.stddev, (15.5e6f64 / 6.0).sqrt()), "{l:?}");

    // PCS on core 0: A 20, 22, 24 us and B 15 us three times.
    let p = c0.pcs.as_ref().unwrap();
    assert_eq!((p.n, p.min, p.max), (6, 15 * US, 24 * US));
    assert!(close(p.median, 17_500.0) && close(p.mean, 18_500.0), "{p:?}");

    // Stop time on core 0: A 30, 31, 32 us and B 40 us three times.
    let st = c0.stop.as_ref().unwrap();
    assert_eq!((st.n, st.min, st.max), (6, 30 * US, 40 * US));
    assert!(close(st.median, 36_000.0) && close(st.mean, 35_500.0), "{st:?}");

    let e = c0.end_lateness.as_ref().unwrap();
    assert_eq!((e.n, e.min, e.max), (6, 5 * US, 5 * US));

    let c1 = &s.cores[1];
    assert_eq!(c1.windows, 3);
    assert_eq!(c1.lateness, Stats::from_samples(&[3 * US; 3]));
    assert_eq!(c1.pcs, Stats::from_samples(&[6 * US; 3]));
    assert_eq!(c1.stop, Stats::from_samples(&[7 * US; 3]));
}

#[test]
fn frames_partitions_and_lists() {
    let s = summarize(&clean());
    assert_eq!((s.frames, s.frames_counted), (3, 3));
    assert_eq!(s.module.as_deref(), Some("demo"));
    assert_eq!(s.stop_reason.as_deref(), Some("frames"));
    assert_eq!((s.first_t, s.last_t), (-5 * MS, 3 * MAF));

    let names: Vec<_> = s.partitions.iter().map(|p| (p.id, p.name.clone().unwrap())).collect();
    assert_eq!(names, [(1, "A".to_string()), (2, "B".into()), (3, "C".into())]);
    let a = &s.partitions[0];
    assert_eq!((a.windows, a.windows_running, a.window_ns), (3, 3, 24 * MS));
    assert_eq!(a.run_in_window_ns, 24 * MS - 66 * US); // minus PCS 20 + 22 + 24 us
    assert_eq!(a.run_ns, 24 * MS + 27 * US); // stop - PCS: 10 + 9 + 8 us
    assert!(close(a.received.unwrap(), (24 * MS - 66 * US) as f64 / (24 * MS) as f64));
    assert_eq!((a.releases, a.deadline_misses), (3, 1));
    let b = &s.partitions[1];
    assert_eq!((b.window_ns, b.run_in_window_ns, b.run_ns), (24 * MS, 24 * MS - 45 * US, 24 * MS + 75 * US));
    let c = &s.partitions[2];
    assert_eq!((c.window_ns, c.run_in_window_ns, c.run_ns, c.events_dropped), (45 * MS, 45 * MS - 18 * US, 45 * MS + 3 * US, 5));

    assert_eq!(s.processes.len(), 1);
    assert_eq!((s.processes[0].partition, s.processes[0].process, s.processes[0].releases), (1, 1, 3));
    assert_eq!(s.deadline_misses, 1);
    assert_eq!(s.mode_changes.len(), 3);
    assert_eq!((s.mode_changes[0].t, s.mode_changes[0].partition, s.mode_changes[0].to.as_str()), (-3 * MS, 1, "NORMAL"));
    assert_eq!(s.schedule_changes.len(), 1);
    assert_eq!((s.schedule_changes[0].t, s.schedule_changes[0].to), (2 * MAF, 2));
    assert_eq!(s.events_dropped, 5);
    assert!(s.exits.is_empty() && s.restarts.is_empty());
}

#[test]
fn clean_trace_passes_the_check() {
    let s = summarize(&clean());
    assert!(s.check.ok, "{:?}", s.check);
    assert_eq!((s.check.run_intervals, s.check.overlaps, s.check.out_of_window, s.check.window_sequence), (9, 0, 0, 0));
    let text = s.to_string();
    assert!(text.contains("check: OK"), "{text}");
    assert!(text.contains("window-start lateness n=6 min 8.0 med 9.0 mean 9.5"), "{text}");
}

#[test]
fn planted_overlap_is_found() {
    let s = summarize(&trace(Faults { late_stop_a: true, ..Faults::default() }));
    assert!(!s.check.ok);
    assert_eq!((s.check.overlaps, s.check.out_of_window, s.check.window_sequence), (1, 0, 0));
    let v = &s.check.first[0];
    assert_eq!((v.kind, v.core, v.partition, v.other), (ViolationKind::Overlap, 0, 1, Some(2)));
    assert_eq!((v.start, v.end), (MAF + 10 * MS + 15 * US, MAF + 10 * MS + 50 * US));
    // The late stop shows in the stop times: 2 ms + 50 us after A's planned end.
    assert_eq!(s.cores[0].stop.as_ref().unwrap().max, 2 * MS + 50 * US);
    let text = s.to_string();
    assert!(text.contains("check: FAILED") && text.contains("overlap on core 0: partitions 1 and 2"), "{text}");
}

#[test]
fn planted_run_outside_window_is_found() {
    let s = summarize(&trace(Faults { early_run_c: true, ..Faults::default() }));
    assert_eq!((s.check.overlaps, s.check.out_of_window, s.check.window_sequence), (0, 1, 0));
    let v = &s.check.first[0];
    assert_eq!((v.kind, v.core, v.partition), (ViolationKind::OutOfWindow, 1, 3));
    assert_eq!((v.start, v.end), (MAF - 100 * US, MAF));
    assert_eq!(s.partitions[2].windows_running, 3);
    assert!(s.to_string().contains("partition 3 may run on core 1 outside its windows"));
}

#[test]
fn partition_running_on_a_core_without_windows_is_found() {
    let mut ev = clean();
    ev.push(Event::PartitionRunning { t: 5 * MS, core: 1, partition: 2, planned: 0 });
    ev.push(Event::PartitionStopped { t: 6 * MS, core: 1, partition: 2 });
    let s = summarize(&ev);
    assert_eq!((s.check.overlaps, s.check.out_of_window), (1, 1));
}

#[test]
fn order_of_events_and_round_trip_do_not_matter() {
    let ev = trace(Faults { late_stop_a: true, early_run_c: true });
    let s = summarize(&ev);
    let mut reversed = ev.clone();
    reversed.reverse();
    assert_eq!(summarize(&reversed), s);
    let back = round_trip(&ev);
    assert_eq!(back, ev);
    assert_eq!(summarize(&back), s);
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["check"]["overlaps"], 1);
    assert_eq!(json["cores"][0]["pcs"]["n"], 6);
}

#[test]
fn consecutive_windows_early_stops_and_exits() {
    let p = |t, core, partition| Event::PartitionStopped { t, core, partition };
    let ev = vec![
        // Partition 1 in [0, 5) and [5, 10) without a stop between, stopped 4 us after 10.
        Event::WindowStart { t: 1_000, core: 0, partition: 1, window: 0, planned: 0, schedule: 0 },
        Event::PartitionRunning { t: 2_000, core: 0, partition: 1, planned: 0 },
        Event::WindowEnd { t: 5_000_100, core: 0, partition: 1, window: 0, planned: 5_000_000 },
        Event::WindowStart { t: 5_000_200, core: 0, partition: 1, window: 1, planned: 5_000_000, schedule: 0 },
        Event::WindowEnd { t: 10_000_100, core: 0, partition: 1, window: 1, planned: 10_000_000 },
        p(10_004_000, 0, 1),
        // Partition 2 in [10, 20): stops itself early (at 15 ms), then exits after a new run.
        Event::WindowStart { t: 10_000_500, core: 0, partition: 2, window: 2, planned: 10_000_000, schedule: 0 },
        Event::PartitionRunning { t: 10_006_000, core: 0, partition: 2, planned: 10_000_000 },
        p(15_000_000, 0, 2),
        Event::PartitionRunning { t: 16_000_000, core: 0, partition: 2, planned: 10_000_000 },
        Event::PartitionExit { t: 17_000_000, partition: 2, reason: "exit status 1".into() },
        p(17_500_000, 0, 2),
        Event::WindowEnd { t: 20_000_100, core: 0, partition: 2, window: 2, planned: 20_000_000 },
        Event::ModuleStop { t: 21_000_000, frames: 1, reason: "done".into() },
    ];
    let tl = Timeline::build(&ev);
    assert!(tl.violations.is_empty(), "{:?}", tl.violations);
    let runs: Vec<_> = tl.runs.iter().map(|r| (r.partition, r.start, r.end, r.end_kind)).collect();
    assert_eq!(
        runs,
        [
            (1, 2_000, 10_004_000, RunEnd::Stopped),
            (2, 10_006_000, 15_000_000, RunEnd::Stopped),
            (2, 16_000_000, 17_000_000, RunEnd::Exited)
        ]
    );
    let stops: Vec<_> = tl.windows.iter().map(|w| w.stop_time()).collect();
    assert_eq!(stops, [None, Some(4_000), Some(-2_500_000)]);
    let s = summarize(&ev);
    assert_eq!(s.exits.len(), 1);
    assert_eq!(s.partitions[1].exits, 1);
    assert_eq!(s.frames, 1);
}

#[test]
fn window_sequence_errors_are_found() {
    let ev = vec![
        Event::WindowStart { t: 0, core: 0, partition: 1, window: 0, planned: 0, schedule: 0 },
        Event::WindowEnd { t: 10, core: 0, partition: 1, window: 0, planned: 100 },
        // Starts before the previous window's planned end.
        Event::WindowStart { t: 20, core: 0, partition: 2, window: 1, planned: 50, schedule: 0 },
        // Ends a window of another partition.
        Event::WindowEnd { t: 200, core: 0, partition: 3, window: 2, planned: 200 },
    ];
    let tl = Timeline::build(&ev);
    assert_eq!(tl.count(ViolationKind::WindowSequence), 2, "{:?}", tl.violations);
}

#[test]
fn fixed_priority_cores_have_no_window_check() {
    let mut ev = clean();
    if let Event::ModuleStart { cores, .. } = &mut ev[0] {
        cores.push(partita_trace::CoreInfo { core: 2, cpu: 2, policy: "FIXED_PRIORITY".into() });
    }
    ev.push(Event::PartitionRunning { t: MS, core: 2, partition: 3, planned: 0 });
    let s = summarize(&ev);
    assert!(s.check.ok, "{:?}", s.check);
    assert_eq!(s.cores[2].run_intervals, 1);
}

#[test]
fn empty_trace() {
    let s = summarize(&[]);
    assert_eq!((s.frames, s.events, s.cores.len()), (0, 0, 0));
    assert!(s.check.ok);
    assert!(s.to_string().contains("no module_stop"));
}
