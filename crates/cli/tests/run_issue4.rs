//! Issue 4's acceptance: producer, consumer and faulty C partitions (tests/partitions/issue4.c,
//! standard APEX names only) in one two-core module with a 20 ms major frame and HM tables,
//! for 6 s. No message is lost, duplicated, reordered or corrupted on the queuing channel and
//! every sampling read is valid and whole, across cores and windows; the faulty partition's
//! error handler gets its application error and message; its memory violation restarts it
//! cold with HM_PARTITION_RESTART (seen by the program and in the trace); meanwhile the others
//! keep every window and never run outside them. Bad input (oversized or empty messages,
//! unknown port ids, another partition's ports, processes and descriptors) is refused and
//! changes nothing the consumer sees. Writing into another partition's channel memory is
//! run_ports.rs' spy. Needs root (skipped with a message otherwise; a failure with CI=true).

mod machine;
mod partitions;

use partita_trace::Event;
use partita_trace::summary::summarize;
use partitions::{build, privileged, run_with};

const XML: &str = r#"<ARINC_653_Module ModuleName="Issue4" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"/>
  <System_HM_Table>
    <System_State_Entry SystemState="2" Description="partition execution">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="PROCESS" ErrorCode="APPLICATION_ERROR"/>
      <Error_ID_Level ErrorIdentifier="2" ErrorLevel="PARTITION" ErrorCode="MEMORY_VIOLATION"/>
    </System_State_Entry>
  </System_HM_Table>
  <Partition_HM_Table PartitionIdentifier="3" PartitionName="Faulty">
    <System_State_Entry SystemState="2">
      <Error_ID_Action ErrorIdentifier="2" Action="COLD_START"/>
    </System_State_Entry>
  </Partition_HM_Table>
  <Partition PartitionIdentifier="1" PartitionName="Producer" pt:Executable="EXE" pt:Arguments="producer">
    <Sampling_Port Name="state" MaxMessageSize="64" Direction="SOURCE"/>
    <Queuing_Port Name="cmds" MaxMessageSize="64" Direction="SOURCE" MaxNbMessages="32"/>
  </Partition>
  <Partition PartitionIdentifier="2" PartitionName="Consumer" pt:Executable="EXE" pt:Arguments="consumer">
    <Sampling_Port Name="state" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
    <Queuing_Port Name="cmds" MaxMessageSize="64" Direction="DESTINATION" MaxNbMessages="32"/>
  </Partition>
  <Partition PartitionIdentifier="3" PartitionName="Faulty" pt:Executable="EXE" pt:Arguments="faulty">
    <Sampling_Port Name="state" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
  </Partition>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="acceptance" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.008">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.008" pt:Core="0"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0.008">
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.004" WindowDurationSeconds="0.008" pt:Core="1"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="3" PeriodSeconds="0.02" PeriodDurationSeconds="0.006">
      <Window_Schedule WindowIdentifier="3" WindowStartSeconds="0.01" WindowDurationSeconds="0.006" pt:Core="0"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Connection_Table>
    <Channel ChannelIdentifier="1"><Source><Standard_Partition PartitionIdentifier="1" PortName="cmds"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="cmds"/></Destination></Channel>
    <Channel ChannelIdentifier="2"><Source><Standard_Partition PartitionIdentifier="1" PortName="state"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="state"/></Destination>
      <Destination><Standard_Partition PartitionIdentifier="3" PortName="state"/></Destination></Channel>
  </Connection_Table>
</ARINC_653_Module>
"#;

/// 6 s of 20 ms frames.
const FRAMES: u32 = 300;

/// The checks each partition must pass ("ok NAME" lines of issue4.c).
const CHECKS: &[(&str, &[&str])] = &[
    (
        "Producer",
        &[
            "producer_create_cmds",
            "producer_create_state",
            "send_oversized",
            "send_empty",
            "send_negative_length",
            "send_unknown_id",
            "send_negative_id",
            "write_oversized",
            "write_unknown_id",
        ],
    ),
    ("Consumer", &["consumer_create_cmds", "consumer_create_state", "receive_unknown_id", "read_unknown_id", "nothing_after_the_last"]),
    (
        "Faulty",
        &[
            "faulty_create_state",
            "create_others_queuing_port",
            "create_others_queuing_source",
            "become_the_writer",
            "receive_guessed_ids",
            "write_own_destination",
            "signal_other_processes",
            "create_error_handler",
            "raise_application_error",
        ],
    ),
];

#[test]
fn producer_consumer_and_faulty_partitions_meet_issue_4() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build("issue4", dir.path());
    let config = dir.path().join("module.xml");
    std::fs::write(&config, XML.replace("EXE", exe.to_str().unwrap())).unwrap();
    let r = run_with(&config, FRAMES, &[]);
    let out = &r.stdout;
    assert_eq!(r.status, Some(0), "{out}\n{}", r.stderr);
    let lines = |name: &str| -> Vec<&str> {
        let prefix = format!("[{name}] ");
        out.lines().filter_map(|l| l.strip_prefix(prefix.as_str())).collect()
    };
    assert!(!out.lines().any(|l| l.contains("FAIL")), "{out}");
    for (partition, checks) in CHECKS {
        let got = lines(partition);
        for check in *checks {
            assert!(got.contains(&format!("ok {check}").as_str()), "{partition}: {check} did not pass:\n{out}");
        }
    }

    // Every message once, in order, intact; every sample valid, whole and never older.
    assert!(lines("Producer").contains(&"producer done 5000"), "{out}");
    let consumer = "consumer done 5000 lost 0 dup 0 reordered 0 corrupt 0 invalid 0 torn 0 old 0 last 4999";
    assert!(lines("Consumer").contains(&consumer), "{out}");

    // The error handler got the application error and its message; the memory violation
    // restarted the partition cold, which its program saw; it then read whole, valid samples.
    let faulty = lines("Faulty");
    assert!(faulty.contains(&"handler: code 1 length 19 message sensor out of range"), "{out}");
    assert_eq!(
        faulty.iter().filter(|l| l.starts_with("start condition")).copied().collect::<Vec<_>>(),
        ["start condition 0 mode 1", "start condition 3 mode 1"]
    );
    assert!(faulty.contains(&"faulty reads 50 valid 50 torn 0"), "{out}");
    // Its directory (5) and the one channel it reads (6): no descriptor of the others' channels.
    assert!(faulty.contains(&"faulty fds 0 1 2 3 4 5 6"), "{out}");

    let hm: Vec<(u32, &str, &str, &str, &str)> = r
        .events
        .iter()
        .filter_map(|e| match e {
            Event::HmEvent { partition, code, level, action, source, .. } => {
                Some((*partition, code.as_str(), level.as_str(), action.as_str(), source.as_str()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        hm,
        [(3, "APPLICATION_ERROR", "PROCESS", "ERROR_HANDLER", "detected"), (3, "MEMORY_VIOLATION", "PARTITION", "COLD_START", "detected")]
    );
    let restarts: Vec<(u32, &str, &str)> = r
        .events
        .iter()
        .filter_map(|e| match e {
            Event::PartitionRestart { partition, mode, start_condition, .. } => Some((*partition, mode.as_str(), start_condition.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(restarts, [(3, "COLD_START", "HM_PARTITION_RESTART")]);

    // Every planned window started, no two partitions ran at once on a core, none outside its
    // windows; the producer and consumer were never disturbed.
    let s = summarize(&r.events);
    assert!(s.check.ok && s.check.overlaps == 0 && s.check.out_of_window == 0 && s.check.window_sequence == 0, "{s}");
    for id in [1, 2, 3] {
        let p = s.partitions.iter().find(|p| p.id == id).unwrap();
        assert_eq!(p.windows as u32, FRAMES, "partition {id}: {s}");
    }
    for id in [1, 2] {
        let p = s.partitions.iter().find(|p| p.id == id).unwrap();
        assert_eq!(p.restarts + p.exits + p.hm_events, 0, "{s}");
    }
}
