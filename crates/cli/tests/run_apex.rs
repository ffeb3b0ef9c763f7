//! Real C partitions, built against include/ARINC653.h and the static APEX library, run by
//! `partita run`: their own GET_TIME samples fall only inside their windows (3 partitions on
//! 2 cores), the trace shows no overlap, and restart semantics hold. Needs root (skipped with
//! a message otherwise; a failure with CI=true).

use partita_trace::Event;
use partita_trace::summary::summarize;

mod common;
use common::{build, privileged, run};

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
        let intervals: Vec<(i64, i64)> = log
            .lines()
            .filter_map(|l| l.strip_prefix("ran "))
            .map(|l| {
                let mut it = l.split_whitespace().map(|v| v.parse::<i64>().unwrap());
                (it.next().unwrap(), it.next().unwrap())
            })
            .collect();
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
    let xml = format!(
        r#"<ARINC_653_Module ModuleName="Restart" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="R" pt:Executable="{}"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>
"#,
        exe.display()
    );
    let config = dir.path().join("module.xml");
    std::fs::write(&config, xml).unwrap();
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
