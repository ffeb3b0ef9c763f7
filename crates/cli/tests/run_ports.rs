//! Sampling and queuing ports between real C partitions (tests/partitions/ports.c) under
//! `partita run`: every return code and the validity, refresh and time-out rules on channels
//! from a partition to itself; message integrity across cores and windows; a destination that
//! cannot write into its channel memory and holds no descriptor of other channels. Needs root
//! (skipped with a message otherwise; a failure with CI=true).

mod machine;
mod partitions;
use partita_trace::Event;
use partitions::{build, privileged, run};

const ERRORS_XML: &str = r#"<ARINC_653_Module ModuleName="PortErrors" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="Errs" pt:Executable="EXE" pt:Arguments="errors">
    <Sampling_Port Name="s_out" MaxMessageSize="64" Direction="SOURCE" RefreshRateSeconds="0.05"/>
    <Sampling_Port Name="s_in" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.05"/>
    <Sampling_Port Name="s_late" MaxMessageSize="8" Direction="SOURCE"/>
    <Queuing_Port Name="q_out" MaxMessageSize="32" Direction="SOURCE" MaxNbMessages="4"/>
    <Queuing_Port Name="q_in" MaxMessageSize="32" Direction="DESTINATION" MaxNbMessages="4"/>
    <Queuing_Port Name="p_out" MaxMessageSize="32" Direction="SOURCE" MaxNbMessages="4"/>
    <Queuing_Port Name="p_in" MaxMessageSize="32" Direction="DESTINATION" MaxNbMessages="4"/>
  </Partition>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Connection_Table>
    <Channel ChannelIdentifier="1"><Source><Standard_Partition PartitionIdentifier="1" PortName="s_out"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="1" PortName="s_in"/></Destination></Channel>
    <Channel ChannelIdentifier="2"><Source><Standard_Partition PartitionIdentifier="1" PortName="q_out"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="1" PortName="q_in"/></Destination></Channel>
    <Channel ChannelIdentifier="3"><Source><Standard_Partition PartitionIdentifier="1" PortName="p_out"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="1" PortName="p_in"/></Destination></Channel>
  </Connection_Table>
</ARINC_653_Module>
"#;

/// Every check ports.c makes in its `errors` role (each must print "ok NAME").
const CHECKS: &[&str] = &[
    "create_unconfigured",
    "create_wrong_size",
    "create_wrong_direction",
    "create_wrong_refresh",
    "create_sampling_as_queuing",
    "create_sampling_source",
    "create_twice",
    "create_sampling_destination",
    "get_sampling_port_id",
    "get_id_of_uncreated",
    "read_empty",
    "read_empty_length",
    "read_source",
    "write_destination",
    "write_too_long",
    "write_empty",
    "write_unknown_id",
    "bad_writes_left_the_port_empty",
    "write",
    "read",
    "read_content",
    "read_valid",
    "read_updated_consumed",
    "current_status_new_fresh",
    "read_updated_new",
    "conditional_older",
    "conditional_recent",
    "read_stale",
    "status",
    "current_status_stale",
    "refreshed_valid",
    "create_queuing_wrong_depth",
    "create_queuing_source",
    "create_queuing_destination",
    "create_queuing_twice",
    "get_queuing_port_id",
    "receive_on_source",
    "send_on_destination",
    "send_too_long",
    "send_empty",
    "send_unknown_id",
    "receive_empty",
    "receive_wait_outside_a_process",
    "send_full",
    "queue_status",
    "receive_oldest",
    "receive_next",
    "clear_source",
    "clear",
    "cleared_seen_by_source",
    "create_in_normal",
    "receive_timed_out",
    "receive_waited_its_time_out",
    "receive_timed_out_length",
    "send_full_timed_out",
    "waiting_processes",
    "fifo_first_waiter_first",
    "fifo_second_waiter_second",
    "sampling_no_system_call",
    "create_priority_port",
    "waiting_processes_priority",
    "priority_higher_waiter_first",
    "priority_lower_waiter_second",
];

#[test]
fn port_services_give_the_standard_return_codes() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build("ports", dir.path());
    let config = dir.path().join("module.xml");
    std::fs::write(&config, ERRORS_XML.replace("EXE", exe.to_str().unwrap())).unwrap();
    let ran = partitions::run_with(&config, 60, &[]);
    assert_eq!(ran.status, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    let stdout = ran.stdout;
    let lines: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("[Errs] ")).collect();
    let failed: Vec<&&str> = lines.iter().filter(|l| l.starts_with("FAIL")).collect();
    assert!(failed.is_empty(), "{failed:#?}\n{stdout}");
    for check in CHECKS {
        assert!(lines.contains(&format!("ok {check}").as_str()), "check {check} did not run:\n{stdout}");
    }
    assert!(lines.contains(&"errors done"), "{stdout}");
    // Each INVALID_CONFIG of a creation says in the partition's log which value differs from
    // which configuration element.
    let log = format!("{stdout}{}", ran.stderr);
    for why in [
        r#"CREATE_SAMPLING_PORT "nope": INVALID_CONFIG: the configuration declares no port of that name"#,
        r#"CREATE_SAMPLING_PORT "s_out": INVALID_CONFIG: MaxMessageSize 32 given, but <Sampling_Port> Name="s_out" (line 3) of the configuration has 64"#,
        r#"CREATE_SAMPLING_PORT "s_out": INVALID_CONFIG: Direction (0 SOURCE, 1 DESTINATION) 1 given"#,
        r#"CREATE_SAMPLING_PORT "s_in": INVALID_CONFIG: RefreshRateSeconds 60000000 ns given, but <Sampling_Port> Name="s_in" (line 4) of the configuration has 50000000 ns"#,
        r#"CREATE_QUEUING_PORT "s_out": INVALID_CONFIG: the configuration declares it as a <Sampling_Port> (line 3)"#,
    ] {
        assert!(log.contains(why), "missing from the partition's log: {why}\n{log}");
    }
    // ... and the trace says it too, with the configuration line of the element.
    let mismatches: Vec<(String, String, i64, u32)> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ConfigMismatch { partition: 1, service, attribute, given, line, .. } => {
                Some((service.clone(), attribute.clone(), *given, *line))
            }
            _ => None,
        })
        .collect();
    for want in [
        ("CREATE_SAMPLING_PORT", "Name", 0, 0),
        ("CREATE_SAMPLING_PORT", "MaxMessageSize", 32, 3),
        ("CREATE_SAMPLING_PORT", "Direction", 1, 3),
        ("CREATE_SAMPLING_PORT", "RefreshRateSeconds", 60_000_000, 4),
        ("CREATE_QUEUING_PORT", "kind (Sampling_Port or Queuing_Port)", 0, 3),
    ] {
        let want = (want.0.to_string(), want.1.to_string(), want.2, want.3);
        assert!(mismatches.contains(&want), "no config_mismatch {want:?} in the trace: {mismatches:?}");
    }
}

const TRAFFIC_XML: &str = r#"<ARINC_653_Module ModuleName="PortTraffic" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"/>
  <Partition PartitionIdentifier="1" PartitionName="Tx" pt:Executable="EXE" pt:Arguments="tx">
    <Sampling_Port Name="counter" MaxMessageSize="64" Direction="SOURCE"/>
    <Queuing_Port Name="q" MaxMessageSize="64" Direction="SOURCE" MaxNbMessages="16"/>
  </Partition>
  <Partition PartitionIdentifier="2" PartitionName="Rx" pt:Executable="EXE" pt:Arguments="rx">
    <Sampling_Port Name="counter" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
    <Queuing_Port Name="q" MaxMessageSize="64" Direction="DESTINATION" MaxNbMessages="16"/>
  </Partition>
  <Partition PartitionIdentifier="3" PartitionName="Spy" pt:Executable="EXE" pt:Arguments="spy">
    <Sampling_Port Name="counter" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
  </Partition>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.012">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.012" pt:Core="0"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0.012">
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.006" WindowDurationSeconds="0.012" pt:Core="1"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="3" PeriodSeconds="0.02" PeriodDurationSeconds="0.002">
      <Window_Schedule WindowIdentifier="3" WindowStartSeconds="0.018" WindowDurationSeconds="0.002" pt:Core="1"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Connection_Table>
    <Channel ChannelIdentifier="1"><Source><Standard_Partition PartitionIdentifier="1" PortName="q"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="q"/></Destination></Channel>
    <Channel ChannelIdentifier="2"><Source><Standard_Partition PartitionIdentifier="1" PortName="counter"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="counter"/></Destination>
      <Destination><Standard_Partition PartitionIdentifier="3" PortName="counter"/></Destination></Channel>
  </Connection_Table>
</ARINC_653_Module>
"#;

#[test]
fn messages_cross_cores_and_windows_intact_and_a_destination_cannot_write_its_channel() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build("ports", dir.path());
    let config = dir.path().join("module.xml");
    std::fs::write(&config, TRAFFIC_XML.replace("EXE", exe.to_str().unwrap())).unwrap();
    let (stdout, _) = run(&config, 300);
    // Tx and Rx overlap on two cores for 6 ms of each 20 ms frame; the rest of the time one of
    // them is frozen, so messages also wait in the queue across windows.
    assert!(stdout.contains("[Tx] tx done 20000"), "{stdout}");
    assert!(stdout.contains("[Rx] rx done 20000 bad 0 torn 0"), "{stdout}");
    let spy: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("[Spy] spy ")).collect();
    assert!(spy.contains(&"create 0"), "{stdout}");
    // Its directory (5) and the one channel it is a destination of (6), nothing else.
    assert!(spy.contains(&"fds 0 1 2 3 4 5 6"), "{stdout}");
    for attempt in ["map-write refused", "reopen-write refused", "chmod refused", "mprotect-write refused", "store faulted"] {
        assert!(spy.contains(&format!("fd 6 {attempt}").as_str()), "{attempt}: {stdout}");
    }
    assert!(!stdout.contains("ALLOWED"), "{stdout}");
    assert!(spy.contains(&"done"), "{stdout}");
}
