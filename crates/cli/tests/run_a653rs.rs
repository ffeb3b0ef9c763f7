//! A Rust partition written only against `a653rs`' prelude (crates/apex/examples/
//! a653rs_partition.rs, hypervisor type `partita_apex::Partita`) run by `partita run`: its
//! start function sees COLD_START and the configured period, its producer and consumer
//! processes pass three messages through a buffer, in order, and the trace shows the
//! partition going NORMAL. Two a653rs partitions (crates/apex/examples/a653rs_ports.rs) on two
//! cores pass commands over a queuing channel and samples over a sampling channel, in order,
//! with the standard return codes for bad calls. Needs root (skipped with a message otherwise;
//! a failure with CI=true).

mod machine;
mod partitions;

use partita_trace::Event;
use partitions::{privileged, run, run_with, single_partition_module};
use std::path::{Path, PathBuf};

/// Builds the example with the cargo running this test, into the same target directory and
/// profile as the `partita` binary (so nothing is rebuilt but the example itself).
fn build_example(name: &str) -> PathBuf {
    let profile_dir = assert_cmd::cargo::cargo_bin!("partita").parent().unwrap().to_path_buf();
    let target_dir = profile_dir.parent().unwrap();
    let profile = match profile_dir.file_name().unwrap().to_str().unwrap() {
        "debug" => "dev",
        other => other,
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let out = std::process::Command::new(cargo)
        .args(["build", "--quiet", "-p", "partita-apex", "--example", name, "--profile", profile, "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(target_dir)
        .output()
        .expect("run cargo");
    assert!(out.status.success(), "building example {name}:\n{}", String::from_utf8_lossy(&out.stderr));
    let exe = profile_dir.join("examples").join(name);
    assert!(exe.is_file(), "{} was not built", exe.display());
    exe
}

#[test]
fn an_a653rs_partition_runs_under_partita_run() {
    if !privileged() {
        return;
    }
    let exe = build_example("a653rs_partition");
    let dir = tempfile::tempdir().unwrap();
    let config = single_partition_module(dir.path(), "Ticker", 7, &exe, "", 0);
    let (stdout, events) = run(&config, 30);

    let lines: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("[Ticker] ")).collect();
    assert_eq!(lines.first().copied(), Some("a653rs partition 7 in ColdStart, period Normal(20ms)"), "{stdout}");
    assert!(lines.contains(&"second TICKS buffer: Err(NoAction)"), "{stdout}");
    let received: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("received ")).map(|l| l.split(" at ").next().unwrap()).collect();
    assert_eq!(received, ["tick 0", "tick 1", "tick 2"], "{stdout}");
    assert!(lines.contains(&"producer done"), "{stdout}");
    // The `log` backend: one line per record at or above the level.
    assert!(lines.contains(&"INFO a653rs_partition: producer sent 3 messages"), "{stdout}");
    assert!(!stdout.contains("not shown"), "{stdout}");

    assert!(events.iter().any(|e| matches!(e, Event::ModeChange { from, to, .. } if from == "COLD_START" && to == "NORMAL")), "{events:?}");
    assert!(events.iter().filter(|e| matches!(e, Event::ProcessRelease { .. })).count() >= 3, "{events:?}");
}

const PORTS_XML: &str = r#"<ARINC_653_Module ModuleName="A653rsPorts" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"/>
  <Partition PartitionIdentifier="1" PartitionName="Sensor" pt:Executable="EXE" pt:Arguments="sensor">
    <Sampling_Port Name="ALTITUDE" MaxMessageSize="16" Direction="SOURCE"/>
    <Queuing_Port Name="COMMANDS" MaxMessageSize="32" Direction="SOURCE" MaxNbMessages="8"/>
  </Partition>
  <Partition PartitionIdentifier="2" PartitionName="Display" pt:Executable="EXE" pt:Arguments="display">
    <Sampling_Port Name="ALTITUDE" MaxMessageSize="16" Direction="DESTINATION" RefreshRateSeconds="0.2"/>
    <Queuing_Port Name="COMMANDS" MaxMessageSize="32" Direction="DESTINATION" MaxNbMessages="8"/>
  </Partition>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01" pt:Core="0"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.005" WindowDurationSeconds="0.01" pt:Core="1"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Connection_Table>
    <Channel ChannelIdentifier="1"><Source><Standard_Partition PartitionIdentifier="1" PortName="ALTITUDE"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="ALTITUDE"/></Destination></Channel>
    <Channel ChannelIdentifier="2"><Source><Standard_Partition PartitionIdentifier="1" PortName="COMMANDS"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="COMMANDS"/></Destination></Channel>
  </Connection_Table>
</ARINC_653_Module>
"#;

#[test]
fn a653rs_partitions_talk_over_sampling_and_queuing_ports() {
    if !privileged() {
        return;
    }
    let exe = build_example("a653rs_ports");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("module.xml");
    std::fs::write(&config, PORTS_XML.replace("EXE", exe.to_str().unwrap())).unwrap();
    let r = run_with(&config, 80, &[]);
    assert_eq!(
        r.status,
        Some(0),
        "{}
{}",
        r.stdout,
        r.stderr
    );
    let stdout = r.stdout;
    let lines = |who: &str| -> Vec<String> {
        let prefix = format!("[{who}] ");
        stdout.lines().filter_map(|l| l.strip_prefix(prefix.as_str())).map(str::to_string).collect()
    };
    let sensor = lines("Sensor");
    for expected in [
        "second COMMANDS: Err(NoAction)",
        "ALTITUDE of the wrong size: Err(InvalidConfig)",
        "COMMANDS of the wrong depth: Err(InvalidConfig)",
        "unconfigured port: Err(InvalidConfig)",
        "write too long: Err(InvalidConfig)",
        "send too long: Err(InvalidConfig)",
        "send empty: Err(InvalidParam)",
        "send to an unknown id: Err(InvalidParam)",
        "read a source: Err(InvalidMode)",
        "sensor sent 40",
    ] {
        assert!(sensor.iter().any(|l| l == expected), "{expected}:\n{stdout}");
    }
    assert!(!sensor.iter().any(|l| l.contains("failed")), "{stdout}");
    let display = lines("Display");
    for expected in [
        "ALTITUDE with the wrong refresh: Err(InvalidConfig)",
        "read before any write: Err(NoAction)",
        "found by name: Ok(true)",
        "found as a source: Err(InvalidConfig)",
        "display received 40, out of order 0",
        "samples read, invalid 0, old 0, last 39",
        "queue after: 0 of 8 x 32 bytes, Destination",
        "sampling after: Normal(200ms), 16 bytes, Destination, Valid",
        "receive into a short slice: Err(InvalidParam)",
        "receive from an empty queue: Err(NotAvailable)",
        "send on a destination: Err(InvalidMode)",
        "clear: Ok(())",
    ] {
        assert!(display.iter().any(|l| l == expected), "{expected}:\n{stdout}");
    }
    assert!(!display.iter().any(|l| l.contains("failed") || l.starts_with("expected")), "{stdout}");
}
