//! Real C partitions, built against include/ARINC653.h and the static APEX library, run by
//! `partita run`: their own GET_TIME samples fall only inside their windows (3 partitions on
//! 2 cores), the trace shows no overlap, and restart semantics hold. Needs root (skipped with
//! a message otherwise; a failure with CI=true).

mod machine;
mod partitions;

use partita_trace::Event;
use partita_trace::summary::summarize;
use partitions::{build, intervals, privileged, ran_intervals, run, single_partition_module};

/// A partition's name, core and windows ((start, end) in ms of the 40 ms major frame).
type PartitionWindows = (&'static str, u32, &'static [(u32, u32)]);

const WINDOWS: [PartitionWindows; 3] = [("TA", 0, &[(0, 12), (25, 33)]), ("TB", 0, &[(12, 22), (33, 40)]), ("TC", 1, &[(5, 30)])];

#[test]
fn partitions_own_clock_samples_fall_only_inside_their_windows() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build("timecheck", dir.path());
    let mut xml = String::from("<ARINC_653_Module ModuleName=\"TimeCheck\" xmlns:pt=\"urn:partita:1\">\n  <pt:Cores Cpus=\"0-1\"/>\n");
    for (i, (name, ..)) in WINDOWS.iter().enumerate() {
        xml.push_str(&format!(
            "  <Partition PartitionIdentifier=\"{}\" PartitionName=\"{name}\" pt:Executable=\"{}\"/>\n",
            i + 1,
            exe.display()
        ));
    }
    xml.push_str("  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"0.04\">\n");
    for (i, (_, core, windows)) in WINDOWS.iter().enumerate() {
        let total: u32 = windows.iter().map(|(a, b)| b - a).sum();
        xml.push_str(&format!(
            "    <Partition_Schedule PartitionIdentifier=\"{}\" PeriodSeconds=\"0.04\" PeriodDurationSeconds=\"0.{total:03}\">\n",
            i + 1
        ));
        for (w, (a, b)) in windows.iter().enumerate() {
            xml.push_str(&format!(
                "      <Window_Schedule WindowIdentifier=\"{}\" WindowStartSeconds=\"0.{a:03}\" WindowDurationSeconds=\"0.{:03}\" pt:Core=\"{core}\"/>\n",
                w + 1,
                b - a
            ));
        }
        xml.push_str("    </Partition_Schedule>\n");
    }
    xml.push_str("  </Module_Schedule>\n</ARINC_653_Module>\n");
    let config = dir.path().join("module.xml");
    std::fs::write(&config, xml).unwrap();
    let frames = 50;
    let (_, events) = run(&config, frames);
    let ms = 1_000_000i64;
    for (name, _, windows) in WINDOWS {
        let log = std::fs::read_to_string(dir.path().join(format!("logs/{name}.log"))).unwrap();
        let intervals = ran_intervals(&log);
        assert!(intervals.len() as u32 >= frames / 2, "{name} ran in only {} intervals:\n{log}", intervals.len());
        for &(start, end) in &intervals {
            let frame = start.div_euclid(40 * ms);
            let inside = windows.iter().any(|&(a, b)| start >= frame * 40 * ms + a as i64 * ms && end <= frame * 40 * ms + b as i64 * ms);
            assert!(inside, "{name} ran during [{start}, {end}] ns, outside its windows {windows:?} of frame {frame}");
        }
    }
    let summary = summarize(&events);
    assert!(summary.check.ok, "{summary}");
}

#[test]
fn a_partition_restart_gives_partition_restart_and_cold_start() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build("restart", dir.path());
    let config = single_partition_module(dir.path(), "R", 1, &exe, "", 0);
    let (stdout, events) = run(&config, 40);
    // NORMAL_START = 0, PARTITION_RESTART = 1; COLD_START = 1; INVALID_MODE = 5.
    let lines: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("[R] ")).collect();
    assert_eq!(lines[..3], ["start condition 0 mode 1", "WARM_START from COLD_START: 5", "start condition 1 mode 1"], "{stdout}");
    let releases = lines.iter().filter(|l| l.starts_with("release ")).count();
    assert!(releases >= 10, "{releases} releases after the restart:\n{stdout}");
    assert!(
        events.iter().any(|e| matches!(e, Event::PartitionRestart { mode, start_condition, .. } if mode == "COLD_START" && start_condition == "PARTITION_RESTART")),
        "{events:?}"
    );
    assert!(events.iter().any(|e| matches!(e, Event::ModeChange { from, to, .. } if from == "COLD_START" && to == "NORMAL")));
    // Releases in the trace match what the process printed, one per period after NORMAL.
    let traced = events.iter().filter(|e| matches!(e, Event::ProcessRelease { .. })).count();
    assert!(traced.abs_diff(releases) <= 1, "traced {traced}, printed {releases}");
}

#[test]
fn a_fixed_priority_core_serves_the_most_urgent_partition_first() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let high = build("fp_high", dir.path());
    let low = build("timecheck", dir.path());
    // Core 1 serves High (priority 9) before Low (priority 1), whatever their ARINC process
    // priorities (Low's spinner has ARINC priority 5, High's worker 1). Core 0 has a window.
    let xml = format!(
        r#"<ARINC_653_Module ModuleName="FixedPriority" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1">
    <pt:Core Id="1" Policy="FIXED_PRIORITY">
      <pt:Partition_Priority PartitionIdentifier="2" Priority="9"/>
      <pt:Partition_Priority PartitionIdentifier="3" Priority="1"/>
    </pt:Core>
  </pt:Cores>
  <Partition PartitionIdentifier="1" PartitionName="Cyclic" pt:Executable="{low}"/>
  <Partition PartitionIdentifier="2" PartitionName="High" pt:Executable="{high}"/>
  <Partition PartitionIdentifier="3" PartitionName="Low" pt:Executable="{low}"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0"/>
    <Partition_Schedule PartitionIdentifier="3" PeriodSeconds="0.02" PeriodDurationSeconds="0"/>
  </Module_Schedule>
</ARINC_653_Module>
"#,
        low = low.display(),
        high = high.display()
    );
    let config = dir.path().join("module.xml");
    std::fs::write(&config, xml).unwrap();
    let frames = 60;
    let (stdout, _) = run(&config, frames);
    let high_periods = stdout.lines().filter(|l| l.starts_with("[High] period ")).count();
    // 60 frames of 20 ms: High needs half of each period and gets it first. (A few periods may
    // be lost to the kernel's real-time throttling, which stops every real-time thread.)
    assert!(high_periods as u32 >= frames * 2 / 3, "High completed only {high_periods} periods:\n{stdout}");
    // Low runs in what High leaves: its spinner reports run intervals, each ending when High
    // is released again.
    let low_runs = std::fs::read_to_string(dir.path().join("logs/Low.log")).unwrap().lines().filter(|l| l.starts_with("ran ")).count();
    assert!(low_runs as u32 >= frames / 2, "Low ran in only {low_runs} intervals");
}

/// Six partitions served by priority on one FIXED_PRIORITY core get 11 Linux levels each; each
/// runs the priority-order program with 11 distinct priorities out of 1..=239 created (ranked
/// in the initialization), where processes at 1, 63, 64, 100, 150, 200 and 239 must preempt
/// each other in order on that band. Only that chain ("chain"): a priority change at run time
/// (SET_PRIORITY, a mutex ceiling) goes through the module's scheduling broker, and a lower
/// process of the partition may run while the caller waits for it (see the report of this
/// change); the standalone tests (c_programs.rs) check those on an 11-level band.
#[test]
fn priorities_1_to_239_keep_their_order_on_a_fixed_priority_cores_narrow_band() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build("priorities", dir.path());
    let cyclic = build("timecheck", dir.path());
    let served: Vec<u32> = (2..=7).collect();
    let mut xml = String::from("<ARINC_653_Module ModuleName=\"Priorities\" xmlns:pt=\"urn:partita:1\">\n  <pt:Cores Cpus=\"0-1\">\n");
    xml.push_str("    <pt:Core Id=\"1\" Policy=\"FIXED_PRIORITY\">\n");
    for &p in &served {
        xml.push_str(&format!("      <pt:Partition_Priority PartitionIdentifier=\"{p}\" Priority=\"{p}\"/>\n"));
    }
    xml.push_str("    </pt:Core>\n  </pt:Cores>\n");
    xml.push_str(&format!("  <Partition PartitionIdentifier=\"1\" PartitionName=\"Cyclic\" pt:Executable=\"{}\"/>\n", cyclic.display()));
    for &p in &served {
        xml.push_str(&format!(
            "  <Partition PartitionIdentifier=\"{p}\" PartitionName=\"P{p}\" pt:Executable=\"{}\" pt:Arguments=\"chain\"/>\n",
            exe.display()
        ));
    }
    xml.push_str("  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"0.02\">\n");
    xml.push_str("    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.02\" PeriodDurationSeconds=\"0.01\">\n");
    xml.push_str("      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0\" WindowDurationSeconds=\"0.01\"/>\n    </Partition_Schedule>\n");
    for &p in &served {
        xml.push_str(&format!(
            "    <Partition_Schedule PartitionIdentifier=\"{p}\" PeriodSeconds=\"0.02\" PeriodDurationSeconds=\"0\"/>\n"
        ));
    }
    xml.push_str("  </Module_Schedule>\n</ARINC_653_Module>\n");
    let config = dir.path().join("module.xml");
    std::fs::write(&config, xml).unwrap();
    let (stdout, _) = run(&config, 50);
    // The partitions' own checks (the run summary's trace check is not this test's subject).
    assert!(!stdout.lines().any(|l| l.starts_with("[P") && l.contains("] FAIL")), "{stdout}");
    for p in served {
        assert!(stdout.contains(&format!("[P{p}] PASS order")), "P{p} did not pass the order check:\n{stdout}");
        let log = std::fs::read_to_string(dir.path().join(format!("logs/P{p}.log"))).unwrap_or_default();
        assert!(!log.contains("share the lowest level"), "P{p}'s 11 priorities fit its 11 levels:\n{log}");
    }
}

#[test]
fn only_a_partition_with_set_module_schedule_may_change_the_schedule() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build("schedset", dir.path());
    for authorized in [false, true] {
        let xml = format!(
            r#"<ARINC_653_Module ModuleName="SchedSet" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="S" pt:Executable="{}"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="first" MajorFrameSeconds="0.02" InitialModuleSchedule="true">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01" SetModuleSchedule="{authorized}">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Module_Schedule ScheduleIdentifier="2" ScheduleName="other" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.005">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.005"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>
"#,
            exe.display()
        );
        let config = dir.path().join("module.xml");
        std::fs::write(&config, xml).unwrap();
        let (stdout, events) = run(&config, 20);
        let lines: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("[S] ")).collect();
        let changes = events.iter().filter(|e| matches!(e, Event::ScheduleChange { .. })).count();
        let last = lines.iter().rev().find(|l| l.starts_with("current ")).copied();
        if authorized {
            assert_eq!(lines[..2], ["SET_MODULE_SCHEDULE 0", "next 2 other 2"], "{stdout}");
            assert_eq!(changes, 1, "{events:?}");
            assert_eq!(last, Some("current 2"), "{stdout}");
        } else {
            // INVALID_CONFIG = 4; the next schedule stays the current one.
            assert_eq!(lines[..2], ["SET_MODULE_SCHEDULE 4", "next 1 other 2"], "{stdout}");
            assert_eq!(changes, 0, "{events:?}");
            assert!(lines.iter().filter(|l| l.starts_with("current ")).all(|l| *l == "current 1"), "{stdout}");
            assert!(last.is_some(), "{stdout}");
        }
    }
}

#[test]
fn a_multi_core_partition_runs_on_each_core_only_in_that_cores_windows() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let multi = build("timecheck_cores", dir.path());
    let single = build("timecheck", dir.path());
    // 40 ms frame. M has different windows on its two cores; A and B fill the rest.
    let m_windows: [(u32, &[(u32, u32)]); 2] = [(0, &[(0, 10), (20, 30)]), (1, &[(10, 25)])];
    let xml = format!(
        r#"<ARINC_653_Module ModuleName="PerCore" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"/>
  <Partition PartitionIdentifier="1" PartitionName="M" pt:Executable="{multi}"/>
  <Partition PartitionIdentifier="2" PartitionName="A" pt:Executable="{single}"/>
  <Partition PartitionIdentifier="3" PartitionName="B" pt:Executable="{single}"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.04">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.04" PeriodDurationSeconds="0.015">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01" pt:Core="0"/>
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.02" WindowDurationSeconds="0.01" pt:Core="0"/>
      <Window_Schedule WindowIdentifier="3" WindowStartSeconds="0.01" WindowDurationSeconds="0.015" pt:Core="1"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.04" PeriodDurationSeconds="0.02">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0.01" WindowDurationSeconds="0.01" pt:Core="0"/>
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.03" WindowDurationSeconds="0.01" pt:Core="0"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="3" PeriodSeconds="0.04" PeriodDurationSeconds="0.025">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01" pt:Core="1"/>
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.025" WindowDurationSeconds="0.015" pt:Core="1"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>
"#,
        multi = multi.display(),
        single = single.display()
    );
    let config = dir.path().join("module.xml");
    std::fs::write(&config, xml).unwrap();
    let frames = 50;
    let (stdout, events) = run(&config, frames);
    let ms = 1_000_000i64;
    let log = std::fs::read_to_string(dir.path().join("logs/M.log")).unwrap();
    assert!(!log.contains("wrong cpu"), "a process of M ran on another core than its own:\n{log}");
    for (core, windows) in m_windows {
        let intervals: Vec<(i64, i64)> = log
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("ran {core} ")))
            .map(|l| {
                let mut it = l.split_whitespace().map(|v| v.parse::<i64>().unwrap());
                (it.next().unwrap(), it.next().unwrap())
            })
            .collect();
        assert!(intervals.len() as u32 >= frames / 2, "M ran on core {core} in only {} intervals:\n{log}\n{stdout}", intervals.len());
        for &(start, end) in &intervals {
            let frame = start.div_euclid(40 * ms);
            let inside = windows.iter().any(|&(a, b)| start >= frame * 40 * ms + a as i64 * ms && end <= frame * 40 * ms + b as i64 * ms);
            assert!(inside, "M ran on core {core} during [{start}, {end}] ns, outside that core's windows {windows:?} of frame {frame}");
        }
    }
    // Window starts and partition switch costs are traced per core.
    for core in [0, 1] {
        assert!(
            events.iter().any(|e| matches!(e, Event::PartitionRunning { core: c, partition: 1, .. } if *c == core)),
            "no PCS of M on core {core}"
        );
    }
    let summary = summarize(&events);
    assert!(summary.check.ok, "{summary}");
}

#[test]
fn a_partition_cannot_move_its_threads_to_another_cpu() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build("escape", dir.path());
    // E runs on core 1 (CPU 1) and tries to move to CPU 0, then to every CPU.
    let config = single_partition_module(dir.path(), "E", 1, &exe, "0", 1);
    let (stdout, _) = run(&config, 10);
    let lines: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("[E] ")).collect();
    // EINVAL = 22: CPU 0 is outside the partition's cpuset; asking for every CPU leaves it on 1.
    assert_eq!(lines.get(..2), Some(&["other -1 errno 22 allowed 1 on 1", "all 0 errno 0 allowed 1 on 1"][..]), "{stdout}");
}

/// M runs on both cores with the same windows (0-10 ms of each 20 ms frame); A and B fill the
/// rest. Its two workers have the same priority and no core preference.
fn parallel_module(dir: &std::path::Path, args: &str) -> std::path::PathBuf {
    let multi = build("parallel", dir);
    let single = build("timecheck", dir);
    let xml = format!(
        r#"<ARINC_653_Module ModuleName="Parallel" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"/>
  <Partition PartitionIdentifier="1" PartitionName="M" pt:Executable="{multi}" pt:Arguments="{args}"/>
  <Partition PartitionIdentifier="2" PartitionName="A" pt:Executable="{single}"/>
  <Partition PartitionIdentifier="3" PartitionName="B" pt:Executable="{single}"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01" pt:Core="0"/>
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0" WindowDurationSeconds="0.01" pt:Core="1"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0.01" WindowDurationSeconds="0.01" pt:Core="0"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="3" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0.01" WindowDurationSeconds="0.01" pt:Core="1"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>
"#,
        multi = multi.display(),
        single = single.display()
    );
    let config = dir.join("module.xml");
    std::fs::write(&config, xml).unwrap();
    config
}

/// A run of the parallel module: stdout, the trace, M's log and its two workers' run intervals.
struct Parallel {
    stdout: String,
    events: Vec<Event>,
    log: String,
    workers: Vec<Vec<(i64, i64)>>,
}

/// Runs the parallel module (`args` for M) for `frames` frames.
fn run_parallel(dir: &std::path::Path, args: &str, frames: u32) -> Parallel {
    let config = parallel_module(dir, args);
    let (stdout, events) = run(&config, frames);
    let log = std::fs::read_to_string(dir.join("logs/M.log")).unwrap();
    let workers = (0..2).map(|k| intervals(&log, &format!("ran {k} "))).collect();
    Parallel { stdout, events, log, workers }
}

/// Total time during which an interval of `a` and one of `b` both hold.
fn overlap(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    a.iter().flat_map(|&(s, e)| b.iter().map(move |&(t, f)| (e.min(f) - s.max(t)).max(0))).sum()
}

/// Issue 11 item 5: processes without a core preference run in parallel on a multi-core
/// partition's cores, each only in the partition's windows, and GET_PROCESS_STATUS shows the
/// one running on the other core as RUNNING. On one core the second worker (same priority,
/// FIFO) would never run while the first spins.
#[test]
fn processes_without_a_core_preference_run_in_parallel_on_the_partitions_cores() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Parallel { stdout, events, log, workers: w } = run_parallel(dir.path(), "", 50);
    let ms = 1_000_000i64;
    for (k, ran) in w.iter().enumerate() {
        assert!(ran.len() >= 20, "worker {k} ran in only {} intervals:\n{log}\n{stdout}", ran.len());
        for &(start, end) in ran {
            let frame = start.div_euclid(20 * ms);
            assert!(end <= frame * 20 * ms + 10 * ms, "worker {k} ran during [{start}, {end}] ns, outside M's window of frame {frame}");
        }
    }
    // In parallel: together the workers ran at the same time for most of M's 50 x 10 ms.
    let both = overlap(&w[0], &w[1]);
    assert!(both > 250 * ms, "the workers ran at the same time for only {} ms of 500:\n{log}", both / ms);
    assert!(log.contains("running 0") || log.contains("running 1"), "no worker saw the other RUNNING:\n{log}");
    let cores: Vec<&str> = log.lines().filter(|l| l.starts_with("core ")).collect();
    assert!(cores.contains(&"core 0 0") || cores.contains(&"core 1 0"), "{cores:?}");
    assert!(cores.contains(&"core 0 1") || cores.contains(&"core 1 1"), "{cores:?}");
    assert!(summarize(&events).check.ok, "{}", summarize(&events));
}

/// With PROCESSES_PAUSE (the default concurrency control) the error handler of a multi-core
/// partition runs alone: no worker, on either core, runs while it does.
#[test]
fn the_error_handler_pauses_the_processes_on_every_core() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Parallel { stdout, events, log, workers: w } = run_parallel(dir.path(), "pause", 100);
    let handler: Vec<&str> = log.lines().filter(|l| l.starts_with("handler ") && *l != "handler cut").collect();
    assert!(handler.len() >= 5, "the error handler watched the workers {} times:\n{log}\n{stdout}", handler.len());
    // Each time, both workers' loop counters stood still within 3 ms and for the 2 ms after.
    assert!(handler.iter().all(|l| *l == "handler 1 0"), "workers ran while the error handler did (SETTLED MOVED): {handler:?}");
    assert!(overlap(&w[0], &w[1]) > 100_000_000, "the workers did not run in parallel outside the handler:\n{log}");
    assert!(summarize(&events).check.ok, "{}", summarize(&events));
}

/// A priority change under the module is a brokered system call (the partition holds no
/// CAP_SYS_NICE); while the caller waits for the broker, no process of its partition with a lower
/// priority may run. H never blocks, so L's counter can move only inside H's brokered calls:
/// SET_PRIORITY (re-ranking the partition's levels too) and LOCK/UNLOCK_PREEMPTION, 2,000 calls.
#[test]
fn no_lower_process_runs_while_a_priority_change_is_brokered() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build("brokered", dir.path());
    let config = single_partition_module(dir.path(), "B", 1, &exe, "", 1);
    let (stdout, _) = run(&config, 100);
    let line = stdout.lines().find_map(|l| l.strip_prefix("[B] lower ran ")).unwrap_or_else(|| panic!("no result line:\n{stdout}"));
    assert_eq!(line, "0 of 2000", "a lower process ran during brokered priority changes:\n{stdout}");
    assert!(!stdout.contains("SET_PRIORITY "), "{stdout}");
}
