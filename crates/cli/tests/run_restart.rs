//! Issue 10, Deliver 3: restarts and faults stay where they happen. A partition that faults in
//! its 6th period and is restarted COLD_START by its HM table (about every 120 ms,
//! tests/partitions/refault.c, a busy process in every window) runs on core 1 of a 2-core module
//! beside a producer and a consumer with a queuing channel across cores (issue4.c's roles) and a
//! well-behaved timecheck partition on each core (timecheck.c). For 6 s: dozens of restarts; no
//! GET_TIME sample of the others outside their windows; no queuing message lost, duplicated or
//! reordered; the run ends on time; no partition process or cgroup is left. The window-start
//! lateness of each core is printed (docs/isolation.md quotes it; only a generous regression
//! bound is asserted). Needs root (skipped with a message otherwise; a failure with CI=true).

mod machine;
mod partitions;

use partita_trace::Event;
use partita_trace::summary::summarize;
use partita_trace::timeline::Timeline;
use partitions::{build, privileged, run_with};

const XML: &str = r#"<ARINC_653_Module ModuleName="Restart" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"/>
  <System_HM_Table>
    <System_State_Entry SystemState="2">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="PARTITION" ErrorCode="MEMORY_VIOLATION"/>
    </System_State_Entry>
  </System_HM_Table>
  <Partition_HM_Table PartitionIdentifier="3" PartitionName="Refault">
    <System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="1" Action="COLD_START"/></System_State_Entry>
  </Partition_HM_Table>
  <Partition PartitionIdentifier="1" PartitionName="Producer" pt:Executable="ISSUE4" pt:Arguments="producer">
    <Sampling_Port Name="state" MaxMessageSize="64" Direction="SOURCE"/>
    <Queuing_Port Name="cmds" MaxMessageSize="64" Direction="SOURCE" MaxNbMessages="32"/>
  </Partition>
  <Partition PartitionIdentifier="2" PartitionName="Consumer" pt:Executable="ISSUE4" pt:Arguments="consumer">
    <Sampling_Port Name="state" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
    <Queuing_Port Name="cmds" MaxMessageSize="64" Direction="DESTINATION" MaxNbMessages="32"/>
  </Partition>
  <Partition PartitionIdentifier="3" PartitionName="Refault" pt:Executable="REFAULT"/>
  <Partition PartitionIdentifier="4" PartitionName="Time0" pt:Executable="TIMECHECK"/>
  <Partition PartitionIdentifier="5" PartitionName="Time1" pt:Executable="TIMECHECK"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="churn" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.008">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.008" pt:Core="0"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="4" PeriodSeconds="0.02" PeriodDurationSeconds="0.008">
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.01" WindowDurationSeconds="0.008" pt:Core="0"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0.006">
      <Window_Schedule WindowIdentifier="3" WindowStartSeconds="0" WindowDurationSeconds="0.006" pt:Core="1"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="3" PeriodSeconds="0.02" PeriodDurationSeconds="0.006">
      <Window_Schedule WindowIdentifier="4" WindowStartSeconds="0.006" WindowDurationSeconds="0.006" pt:Core="1"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="5" PeriodSeconds="0.02" PeriodDurationSeconds="0.006">
      <Window_Schedule WindowIdentifier="5" WindowStartSeconds="0.013" WindowDurationSeconds="0.006" pt:Core="1"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Connection_Table>
    <Channel ChannelIdentifier="1"><Source><Standard_Partition PartitionIdentifier="1" PortName="cmds"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="cmds"/></Destination></Channel>
    <Channel ChannelIdentifier="2"><Source><Standard_Partition PartitionIdentifier="1" PortName="state"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="state"/></Destination></Channel>
  </Connection_Table>
</ARINC_653_Module>
"#;

/// 6 s of 20 ms frames.
const FRAMES: u32 = 300;
/// How far past its window's planned end a sample of a well-behaved partition may be: the
/// scheduler requests the stop before the planned end, and a blocked stop is held by the core
/// guard within its bound (docs/isolation.md); the rest is room for a stalled virtual CPU.
const STOP_SLACK_NS: i64 = 1_000_000;

/// The "ran START END" intervals a timecheck partition printed.
fn ran(stdout: &str, name: &str) -> Vec<(i64, i64)> {
    let prefix = format!("[{name}] ran ");
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .map(|l| {
            let mut it = l.split_whitespace().map(|x| x.parse::<i64>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect()
}

#[test]
fn a_partition_restarted_every_120_ms_costs_the_others_nothing() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let issue4 = build("issue4", dir.path());
    let refault = build("refault", dir.path());
    let timecheck = build("timecheck", dir.path());
    let config = dir.path().join("module.xml");
    let xml = XML
        .replace("ISSUE4", issue4.to_str().unwrap())
        .replace("REFAULT", refault.to_str().unwrap())
        .replace("TIMECHECK", timecheck.to_str().unwrap());
    std::fs::write(&config, xml).unwrap();
    let r = run_with(&config, FRAMES, &[]);
    let out = &r.stdout;
    assert_eq!(r.status, Some(0), "{out}\n{}", r.stderr);
    // On time: the module stopped within a second of its 6 s of frames (a blocked core used
    // to cost seconds).
    let stop = r.events.iter().find_map(|e| match e {
        Event::ModuleStop { t, .. } => Some(*t),
        _ => None,
    });
    let planned = FRAMES as i64 * 20_000_000;
    assert!(stop.is_some_and(|t| t < planned + 1_000_000_000), "module stop at {stop:?}, planned {planned}\n{}", r.stderr);

    // Dozens of cold restarts, each after a MEMORY_VIOLATION.
    let restarts = r
        .events
        .iter()
        .filter(|e| matches!(e, Event::PartitionRestart { partition: 3, mode, start_condition, .. } if mode == "COLD_START" && start_condition == "HM_PARTITION_RESTART"))
        .count();
    assert!(restarts >= 24, "only {restarts} restarts\n{}", r.stderr);

    // Every message once and in order across the restarts on the consumer's core.
    let consumer = "consumer done 5000 lost 0 dup 0 reordered 0 corrupt 0 invalid 0 torn 0 old 0 last 4999";
    assert!(out.lines().any(|l| l == format!("[Consumer] {consumer}")), "{out}\n{}", r.stderr);
    assert!(!out.lines().any(|l| l.contains("FAIL")), "{out}");

    // The well-behaved partitions' own samples: only inside their windows (from the planned
    // start to the planned end, plus the stop slack).
    let tl = Timeline::build(&r.events);
    for (name, id, core) in [("Time0", 4, 0), ("Time1", 5, 1)] {
        let spans = tl.window_spans(core, id, |w| w.planned_end.map_or(i64::MAX, |e| e + STOP_SLACK_NS));
        let samples = ran(out, name);
        assert!(samples.len() >= FRAMES as usize / 2, "{name}: {} intervals\n{out}", samples.len());
        let outside: Vec<_> = samples.iter().filter(|&&(s, e)| !partita_trace::timeline::outside(&spans, s, e + 1).is_empty()).collect();
        assert!(
            outside.is_empty(),
            "{name}: {} of {} intervals outside its windows: {:?}",
            outside.len(),
            samples.len(),
            &outside[..outside.len().min(10)]
        );
    }
    let s = summarize(&r.events);
    assert!(s.check.overlaps == 0 && s.check.window_sequence == 0, "{s}");
    for id in [1, 2, 4, 5] {
        let p = s.partitions.iter().find(|p| p.id == id).unwrap();
        assert_eq!(p.windows as u32, FRAMES, "partition {id}: {s}");
        assert_eq!(p.restarts + p.exits + p.hm_events, 0, "{s}");
    }
    // The acceptance figure is measured and printed (docs/isolation.md), not asserted: timing belongs in partita bench.
    for c in &s.cores {
        let l = c.lateness.as_ref().unwrap();
        eprintln!(
            "core {}: window-start lateness median {:.1} us p99 {:.1} us max {:.1} us (n {})",
            c.core,
            l.median / 1e3,
            l.p99 / 1e3,
            l.max as f64 / 1e3,
            l.n
        );
    }
    eprintln!("{restarts} restarts");

    // Nothing left: no partition program, no cgroup of the run.
    for exe in [&issue4, &refault, &timecheck] {
        let left = std::process::Command::new("pgrep").arg("-f").arg(exe).output().unwrap();
        assert!(left.stdout.is_empty(), "left running: {}", String::from_utf8_lossy(&left.stdout));
    }
    assert!(!r.stderr.contains("cannot remove cgroup"), "{}", r.stderr);
    for base in cgroup_bases() {
        let left = std::fs::read_dir(&base)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("partita-"))
            .filter(|e| e.path().join("Refault").exists())
            .map(|e| e.path())
            .collect::<Vec<_>>();
        assert!(left.is_empty(), "run cgroups left: {left:?}");
    }
}

/// Where runs create their cgroups: the v2 root, and this process's own cgroup in each v1
/// hierarchy the module uses (runs nest below it; the module is started from this process).
fn cgroup_bases() -> Vec<std::path::PathBuf> {
    let mut bases = vec![std::path::PathBuf::from("/sys/fs/cgroup"), std::path::PathBuf::from("/sys/fs/cgroup/unified")];
    for line in std::fs::read_to_string("/proc/self/cgroup").unwrap().lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
        for c in controllers.split(',').filter(|c| ["memory", "cpuset", "freezer"].contains(c)) {
            bases.push(std::path::Path::new("/sys/fs/cgroup").join(c).join(path.trim_start_matches('/')));
        }
    }
    bases
}
