//! A partition that writes garbage over every shared mapping it can write
//! (tests/partitions/garbage.c) beside a well-behaved pair exchanging queuing and sampling
//! messages (tests/partitions/ports.c, tx on core 0, rx on core 1 like the hostile one): the
//! module believes none of it (no absurd figure, `shm_garbage` events, ILLEGAL_REQUEST through
//! the health monitor), the pair loses no message and keeps its windows, and the run ends on
//! time. Needs root (skipped with a message otherwise; a failure with CI=true).

mod machine;
mod partitions;
use partita_abi::ControlBlock;
use partita_trace::Event;
use partitions::{build, privileged, run_with};
use std::collections::BTreeSet;
use std::mem::offset_of;

const FRAMES: u32 = 300;

const XML: &str = r#"<ARINC_653_Module ModuleName="Garbage" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"/>
  <System_HM_Table>
    <System_State_Entry SystemState="1">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="PARTITION" ErrorCode="ILLEGAL_REQUEST"/>
    </System_State_Entry>
    <System_State_Entry SystemState="2">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="PARTITION" ErrorCode="ILLEGAL_REQUEST"/>
    </System_State_Entry>
  </System_HM_Table>
  <Partition_HM_Table PartitionIdentifier="3" PartitionName="Garbage">
    <System_State_Entry SystemState="1"><Error_ID_Action ErrorIdentifier="1" Action="IGNORE"/></System_State_Entry>
    <System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="1" Action="IGNORE"/></System_State_Entry>
  </Partition_HM_Table>
  <Partition PartitionIdentifier="1" PartitionName="Tx" pt:Executable="PORTS" pt:Arguments="tx">
    <Sampling_Port Name="counter" MaxMessageSize="64" Direction="SOURCE"/>
    <Queuing_Port Name="q" MaxMessageSize="64" Direction="SOURCE" MaxNbMessages="16"/>
  </Partition>
  <Partition PartitionIdentifier="2" PartitionName="Rx" pt:Executable="PORTS" pt:Arguments="rx">
    <Sampling_Port Name="counter" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
    <Queuing_Port Name="q" MaxMessageSize="64" Direction="DESTINATION" MaxNbMessages="16"/>
  </Partition>
  <Partition PartitionIdentifier="3" PartitionName="Garbage" pt:Executable="GARBAGE" pt:Arguments="ARGS">
    <Sampling_Port Name="gs_out" MaxMessageSize="32" Direction="SOURCE"/>
    <Sampling_Port Name="gs_in" MaxMessageSize="32" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
    <Queuing_Port Name="gq_out" MaxMessageSize="32" Direction="SOURCE" MaxNbMessages="4"/>
    <Queuing_Port Name="gq_in" MaxMessageSize="32" Direction="DESTINATION" MaxNbMessages="4"/>
  </Partition>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.012">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.012" pt:Core="0"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0.012">
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.006" WindowDurationSeconds="0.012" pt:Core="1"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="3" PeriodSeconds="0.02" PeriodDurationSeconds="0.006">
      <Window_Schedule WindowIdentifier="3" WindowStartSeconds="0" WindowDurationSeconds="0.006" pt:Core="1"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Connection_Table>
    <Channel ChannelIdentifier="1"><Source><Standard_Partition PartitionIdentifier="1" PortName="q"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="q"/></Destination></Channel>
    <Channel ChannelIdentifier="2"><Source><Standard_Partition PartitionIdentifier="1" PortName="counter"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="counter"/></Destination></Channel>
    <Channel ChannelIdentifier="3"><Source><Standard_Partition PartitionIdentifier="3" PortName="gq_out"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="3" PortName="gq_in"/></Destination></Channel>
    <Channel ChannelIdentifier="4"><Source><Standard_Partition PartitionIdentifier="3" PortName="gs_out"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="3" PortName="gs_in"/></Destination></Channel>
  </Connection_Table>
</ARINC_653_Module>
"#;

/// Byte offsets garbage.c needs: what it leaves alone (module_running, schedule.seq), and where
/// it writes plausible-looking values (the request, the trace ring's head/tail/dropped).
fn garbage_args() -> String {
    let running = offset_of!(ControlBlock, status) + 12;
    let seq = offset_of!(ControlBlock, schedule);
    format!("{running} {seq} {} {}", offset_of!(ControlBlock, request), offset_of!(ControlBlock, trace))
}

#[test]
fn garbage_in_shared_memory_is_refused_reported_and_harms_nobody() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ports = build("ports", dir.path());
    let garbage = build("garbage", dir.path());
    let config = dir.path().join("module.xml");
    let xml = XML.replace("PORTS", ports.to_str().unwrap()).replace("GARBAGE", garbage.to_str().unwrap()).replace("ARGS", &garbage_args());
    std::fs::write(&config, xml).unwrap();
    // run_with ends `partita run` after 60 s whatever happens: the test cannot hang (the time
    // it waits for the machine lock is not the run's).
    let r = run_with(&config, FRAMES, &[]);
    let all = format!("{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.status, Some(0), "{all}");
    // Ran its frames and ended on time: the last event is at most 3 s after the last frame's
    // end (the stops of the last windows; a hang is caught, while the ~0.95 s scheduler stalls
    // of a loaded host, a known issue of their own (docs/isolation-measured.md, "Samples outside
    // windows: causes"), made 1 s fail here twice).
    let stop = r.events.iter().find_map(|e| match e {
        Event::ModuleStop { t, frames, .. } => Some((*t, *frames)),
        _ => None,
    });
    let (stop_t, frames) = stop.unwrap_or_else(|| panic!("no module_stop\n{all}"));
    assert_eq!(frames, u64::from(FRAMES), "{all}");
    let end = i64::from(FRAMES) * 20_000_000;
    assert!(stop_t <= end + 3_000_000_000, "module_stop at {stop_t} ns, frames end at {end}\n{all}");

    // The hostile partition really wrote: its control block and its port memory.
    let g_line = r.stdout.lines().find_map(|l| l.strip_prefix("[Garbage] garbage regions ")).unwrap_or_else(|| panic!("{all}"));
    let fields: Vec<u32> = g_line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert!(fields.len() == 2 && fields[0] >= 4 && fields[1] >= 1, "regions: {g_line}");

    // The well-behaved pair lost nothing: every message, in order, intact.
    assert!(r.stdout.contains("[Tx] tx done 20000"), "{all}");
    assert!(r.stdout.contains("[Rx] rx done 20000 bad 0 torn 0"), "{all}");

    // The garbage was seen, named and handed to the health monitor, for partition 3 only.
    let garbage: Vec<(u32, &str, &str, u64)> = r
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ShmGarbage { partition, structure, field, value, .. } => Some((*partition, structure.as_str(), field.as_str(), *value)),
            _ => None,
        })
        .collect();
    assert!(garbage.iter().all(|g| g.0 == 3), "garbage blamed on a well-behaved partition: {garbage:?}");
    let structures: BTreeSet<&str> = garbage.iter().map(|g| g.1).collect();
    for s in ["trace_ring", "request", "status"] {
        assert!(structures.contains(s), "no shm_garbage for {s}: {structures:?}");
    }
    let hm: Vec<&Event> = r.events.iter().filter(|e| matches!(e, Event::HmEvent { source, .. } if source == "shm_garbage")).collect();
    assert!(!hm.is_empty(), "no HM event for the garbage");
    for e in &hm {
        let Event::HmEvent { partition, code, action, .. } = e else { unreachable!() };
        assert_eq!((*partition, code.as_str(), action.as_str()), (3, "ILLEGAL_REQUEST", "IGNORE"), "{e:?}");
    }
    // It kept at it all run long, and the module kept refusing it (it was not stopped).
    let last = r.events.iter().filter(|e| matches!(e, Event::ShmGarbage { .. })).map(|e| e.t()).max().unwrap_or(0);
    assert!(last > end * 8 / 10, "last shm_garbage at {last} ns of {end}");
    // Reported at most every 10 ms per structure (5 structures): bounded, whatever it wrote.
    assert!(garbage.len() <= 5 * (FRAMES as usize * 20 / 10 + 10), "{} shm_garbage events", garbage.len());

    // No absurd figure: the drop counts the module believed are plausible, the summary too.
    let dropped: u64 = r
        .events
        .iter()
        .filter_map(|e| match e {
            Event::EventsDropped { count, .. } => Some(*count),
            _ => None,
        })
        .fold(0u64, u64::saturating_add);
    assert!(dropped < 1_000_000_000, "events dropped: {dropped}");
    for line in r.stdout.lines().filter(|l| !l.starts_with('[')) {
        let absurd = line.split(|c: char| !c.is_ascii_digit()).find(|w| w.len() > 12);
        assert_eq!(absurd, None, "absurd figure in the summary line {line:?}");
    }
    let s = partita_trace::summary::summarize(&r.events);
    assert!(s.shm_garbage > 0 && s.events_dropped < 1_000_000_000, "{s}");

    // Tx and Rx kept their windows: each started, and their probe ran for at least 99 % of
    // them, besides the first (the program starts in it, before its probe thread): a host
    // stall may hide a few; the mechanism is what is asserted.
    for id in [1u32, 2] {
        let starts = r.events.iter().filter(|e| matches!(e, Event::WindowStart { partition, .. } if *partition == id)).count();
        let running = r.events.iter().filter(|e| matches!(e, Event::PartitionRunning { partition, .. } if *partition == id)).count();
        assert_eq!(starts, FRAMES as usize, "partition {id} window starts");
        assert!((running + 1) * 100 >= starts * 99, "partition {id}: probe ran in {running} of {starts} windows");
    }
}
