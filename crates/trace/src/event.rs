//! Trace events. The JSON form of each is `{"ev":"snake_case_name","t":..,...}`.

use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Write};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum Event {
    /// First line: what ran, where, and the clock reference.
    ModuleStart {
        t: i64,
        module: String,
        config: String,
        /// CLOCK_MONOTONIC ns of the epoch (t = 0).
        epoch_monotonic_ns: i64,
        /// How partitions are stopped and released (e.g. "cgroup-v2-freeze").
        mechanism: String,
        cores: Vec<CoreInfo>,
        partitions: Vec<PartitionInfo>,
        schedule: u32,
        /// When the module's start-up steps began (absent in older traces: zeros).
        #[serde(default)]
        startup: StartupTimes,
    },
    /// The scheduler thread of `core` woke for a window start (`t`) planned at `planned`.
    WindowStart {
        t: i64,
        core: u32,
        partition: u32,
        window: u32,
        planned: i64,
        schedule: u32,
    },
    /// The scheduler thread woke for the end of a window.
    WindowEnd {
        t: i64,
        core: u32,
        partition: u32,
        window: u32,
        planned: i64,
    },
    /// The partition is completely stopped on `core` (no thread of it can run there).
    PartitionStopped {
        t: i64,
        core: u32,
        partition: u32,
    },
    /// How the stop of `partition` at a window end on `core` went (module time, ns), emitted
    /// once the stop is confirmed, or found unconfirmed at the partition's next window: so that
    /// a partition seen running past its planned end can be told apart as a late wake-up of the
    /// scheduler thread (`woke` after `planned_end`), a stop write that blocked (`returned` or
    /// `held` after `planned_end`) or a run after the stop took effect (an isolation hole).
    /// `wake_planned`: when the thread meant to wake (the boundary less its margin); `woke`:
    /// when it did; `issued` / `returned`: the stop write; `held`: when the core guard had sent
    /// SIGSTOP to every thread (a write blocked beyond the guard's delay); `effective`: when the
    /// module counts the partition as stopped (`min(returned, held)`, the `partition_stopped`
    /// time); `confirmed`: when the kernel's confirmation was seen (None: not before the next
    /// window). `t`: the check that saw it.
    StopTimes {
        t: i64,
        core: u32,
        partition: u32,
        planned_end: i64,
        wake_planned: i64,
        woke: i64,
        issued: i64,
        returned: i64,
        held: Option<i64>,
        effective: i64,
        confirmed: Option<i64>,
    },
    /// The partition's first code ran on `core` after the window start planned at `planned`:
    /// the partition switch cost (PCS) is `t - planned`.
    PartitionRunning {
        t: i64,
        core: u32,
        partition: u32,
        planned: i64,
    },
    /// The first ARINC process dispatched after a window start (context-switch overhead).
    ProcessDispatch {
        t: i64,
        core: u32,
        partition: u32,
        process: i64,
        planned: i64,
    },
    ModeChange {
        t: i64,
        partition: u32,
        from: String,
        to: String,
    },
    ProcessCreate {
        t: i64,
        core: u32,
        partition: u32,
        process: i64,
        priority: i64,
    },
    /// More distinct process priorities than the partition's band of Linux levels: those in use
    /// from `lowest` to `highest` share the band's lowest level (no preemption among them).
    PrioritiesShared {
        t: i64,
        core: u32,
        partition: u32,
        lowest: i64,
        highest: i64,
    },
    ProcessStart {
        t: i64,
        core: u32,
        partition: u32,
        process: i64,
    },
    ProcessStop {
        t: i64,
        core: u32,
        partition: u32,
        process: i64,
    },
    ProcessSuspend {
        t: i64,
        core: u32,
        partition: u32,
        process: i64,
    },
    ProcessResume {
        t: i64,
        core: u32,
        partition: u32,
        process: i64,
    },
    /// A periodic release; `deadline` is the absolute deadline of the new job.
    ProcessRelease {
        t: i64,
        core: u32,
        partition: u32,
        process: i64,
        deadline: i64,
    },
    DeadlineMissed {
        t: i64,
        core: u32,
        partition: u32,
        process: i64,
        deadline: i64,
    },
    /// A port creation of `partition` refused with INVALID_CONFIG: `attribute` of the element at
    /// `line` of the configuration (0: no such element) differs from the value `given`.
    ConfigMismatch {
        t: i64,
        core: u32,
        partition: u32,
        service: String,
        attribute: String,
        given: i64,
        line: u32,
    },
    /// SET_MODULE_SCHEDULE took effect at a major frame boundary.
    ScheduleChange {
        t: i64,
        from: u32,
        to: u32,
    },
    /// The partition's program ended (exit status or signal) or could not start.
    PartitionExit {
        t: i64,
        partition: u32,
        reason: String,
    },
    PartitionRestart {
        t: i64,
        partition: u32,
        mode: String,
        start_condition: String,
    },
    /// The health monitor handled an error: its level (PROCESS, PARTITION, MODULE) and the action
    /// taken (ERROR_HANDLER for a process-level error given to the partition's error handler;
    /// IGNORE, IDLE, WARM_START, COLD_START, SHUTDOWN, RESET). `process` 0: the initialization
    /// process, no process (an injected error) or the partition program as a whole.
    HmEvent {
        t: i64,
        partition: u32,
        process: i64,
        code: String,
        level: String,
        action: String,
        /// Why: "detected", "injected", or how the partition program ended.
        source: String,
    },
    /// Events a partition produced faster than the module could drain them.
    EventsDropped {
        t: i64,
        partition: u32,
        count: u64,
    },
    /// The module read a value the protocol can never produce from memory partition
    /// `partition` can write: `structure` (`trace_ring`, `hm_ring`, `request`, `status`,
    /// `probe`), its `field` and the raw `value`. `repeats`: more such reads of that structure
    /// since the previous event for it (reported at most every 10 ms per structure). The
    /// health monitor then handles ILLEGAL_REQUEST for the partition (see the `hm_event`).
    ShmGarbage {
        t: i64,
        partition: u32,
        structure: String,
        field: String,
        value: u64,
        repeats: u64,
    },
    /// Last line.
    ModuleStop {
        t: i64,
        frames: u64,
        reason: String,
    },
}

/// The module's start-up, in ns relative to the epoch (so negative): `partita run` set itself up
/// from `run_t` (capabilities, CPU locks, throttling, cgroups) to `prepare_t`, prepared the
/// partitions and started their programs (held before their first instruction) until
/// `started_t`; the epoch followed after a fixed margin for the module's threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartupTimes {
    pub run_t: i64,
    pub prepare_t: i64,
    pub started_t: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreInfo {
    pub core: u32,
    pub cpu: u32,
    pub policy: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionInfo {
    pub id: u32,
    pub name: String,
}

impl Event {
    pub fn t(&self) -> i64 {
        match self {
            Event::ModuleStart { t, .. }
            | Event::WindowStart { t, .. }
            | Event::WindowEnd { t, .. }
            | Event::PartitionStopped { t, .. }
            | Event::StopTimes { t, .. }
            | Event::PartitionRunning { t, .. }
            | Event::ProcessDispatch { t, .. }
            | Event::ModeChange { t, .. }
            | Event::ProcessCreate { t, .. }
            | Event::PrioritiesShared { t, .. }
            | Event::ProcessStart { t, .. }
            | Event::ProcessStop { t, .. }
            | Event::ProcessSuspend { t, .. }
            | Event::ProcessResume { t, .. }
            | Event::ProcessRelease { t, .. }
            | Event::DeadlineMissed { t, .. }
            | Event::ConfigMismatch { t, .. }
            | Event::ScheduleChange { t, .. }
            | Event::PartitionExit { t, .. }
            | Event::PartitionRestart { t, .. }
            | Event::HmEvent { t, .. }
            | Event::EventsDropped { t, .. }
            | Event::ShmGarbage { t, .. }
            | Event::ModuleStop { t, .. } => *t,
        }
    }

    /// Writes the event as one JSON line.
    pub fn write_line(&self, out: &mut impl Write) -> io::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        out.write_all(b"\n")
    }
}

/// Reads a trace; a malformed line is an error naming its line number.
pub fn read_trace(input: impl BufRead) -> Result<Vec<Event>, String> {
    let mut events = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let line = line.map_err(|e| format!("line {}: {e}", i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        events.push(serde_json::from_str(&line).map_err(|e| format!("line {}: {e}", i + 1))?);
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_form_matches_the_design() {
        let e = Event::WindowStart { t: 1500, core: 1, partition: 2, window: 3, planned: 1000, schedule: 1 };
        let mut buf = Vec::new();
        e.write_line(&mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(text, "{\"ev\":\"window_start\",\"t\":1500,\"core\":1,\"partition\":2,\"window\":3,\"planned\":1000,\"schedule\":1}\n");
        assert_eq!(read_trace(text.as_bytes()).unwrap(), vec![e]);
    }

    /// A trace written before `module_start` carried `startup` still reads, with zeros; a new
    /// one carries the instants.
    #[test]
    fn module_start_reads_with_and_without_startup_times() {
        let old = r#"{"ev":"module_start","t":-5,"module":"M","config":"m.xml","epoch_monotonic_ns":100,"mechanism":"x","cores":[],"partitions":[],"schedule":1}"#;
        let events = read_trace(old.as_bytes()).unwrap();
        assert!(matches!(&events[0], Event::ModuleStart { startup, .. } if *startup == StartupTimes::default()), "{events:?}");
        let e = Event::ModuleStart {
            t: -5,
            module: "M".into(),
            config: "m.xml".into(),
            epoch_monotonic_ns: 100,
            mechanism: "x".into(),
            cores: vec![],
            partitions: vec![],
            schedule: 1,
            startup: StartupTimes { run_t: -90, prepare_t: -60, started_t: -12 },
        };
        let mut buf = Vec::new();
        e.write_line(&mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains(r#""startup":{"run_t":-90,"prepare_t":-60,"started_t":-12}"#), "{text}");
        assert_eq!(read_trace(text.as_bytes()).unwrap(), vec![e]);
    }

    #[test]
    fn hm_events_read_back_and_count_in_the_summary() {
        let e = Event::HmEvent {
            t: 7,
            partition: 3,
            process: 2,
            code: "MEMORY_VIOLATION".into(),
            level: "PARTITION".into(),
            action: "COLD_START".into(),
            source: "detected".into(),
        };
        let mut buf = Vec::new();
        e.write_line(&mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.starts_with("{\"ev\":\"hm_event\",\"t\":7,\"partition\":3,\"process\":2,\"code\":\"MEMORY_VIOLATION\""), "{text}");
        let events = read_trace(text.as_bytes()).unwrap();
        assert_eq!(events, vec![e]);
        let s = crate::summary::summarize(&events);
        assert_eq!(s.hm_events.len(), 1);
        assert_eq!(s.partitions.iter().find(|p| p.id == 3).map(|p| p.hm_events), Some(1));
        assert!(s.to_string().contains("partition 3 process 2: MEMORY_VIOLATION (PARTITION, detected) -> COLD_START"), "{s}");
    }

    #[test]
    fn malformed_lines_are_reported_by_number() {
        let err = read_trace("{\"ev\":\"module_stop\",\"t\":5,\"frames\":1,\"reason\":\"x\"}\n{oops}\n".as_bytes()).unwrap_err();
        assert!(err.starts_with("line 2:"), "{err}");
    }
}
