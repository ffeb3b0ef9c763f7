//! Partition-side events (the control block's trace ring) as trace events.

use partita_abi::{TraceEvent, config_mismatch, event, mode};
use partita_trace::Event;

pub fn mode_name(m: u32) -> &'static str {
    match m {
        mode::IDLE => "IDLE",
        mode::COLD_START => "COLD_START",
        mode::WARM_START => "WARM_START",
        mode::NORMAL => "NORMAL",
        _ => "UNKNOWN",
    }
}

pub fn start_condition_name(c: u32) -> &'static str {
    use partita_abi::start_condition::*;
    match c {
        NORMAL_START => "NORMAL_START",
        PARTITION_RESTART => "PARTITION_RESTART",
        HM_MODULE_RESTART => "HM_MODULE_RESTART",
        HM_PARTITION_RESTART => "HM_PARTITION_RESTART",
        _ => "UNKNOWN",
    }
}

/// The trace event for one ring entry of `partition`; `None` for an unknown kind (a newer or
/// misbehaving runtime), which is dropped rather than trusted.
pub fn to_trace(partition: u32, e: &TraceEvent) -> Option<Event> {
    let (t, core, process) = (e.t_ns, e.core, e.a);
    Some(match e.kind {
        event::MODE_CHANGE => Event::ModeChange {
            t,
            partition,
            from: mode_name(u32::try_from(e.a).ok()?).into(),
            to: mode_name(u32::try_from(e.b).ok()?).into(),
        },
        event::PROCESS_CREATE => Event::ProcessCreate { t, core, partition, process, priority: e.b },
        event::PROCESS_START => Event::ProcessStart { t, core, partition, process },
        event::PROCESS_STOP => Event::ProcessStop { t, core, partition, process },
        event::PROCESS_SUSPEND => Event::ProcessSuspend { t, core, partition, process },
        event::PROCESS_RESUME => Event::ProcessResume { t, core, partition, process },
        event::PROCESS_RELEASE => Event::ProcessRelease { t, core, partition, process, deadline: e.b },
        event::DEADLINE_MISSED => Event::DeadlineMissed { t, core, partition, process, deadline: e.b },
        event::PROCESS_DISPATCH => Event::ProcessDispatch { t, core, partition, process, planned: e.b },
        event::CONFIG_MISMATCH => {
            let (service, attribute, line) = config_mismatch::unpack(e.a)?;
            Event::ConfigMismatch {
                t,
                core,
                partition,
                service: config_mismatch::service_name(service).into(),
                attribute: config_mismatch::attribute_name(attribute).into(),
                given: e.b,
                line,
            }
        }
        event::PRIORITIES_SHARED => Event::PrioritiesShared { t, core, partition, lowest: e.a, highest: e.b },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_events_map_to_trace_events() {
        let e = TraceEvent { t_ns: 5, kind: event::MODE_CHANGE, core: 0, a: 1, b: 3 };
        assert_eq!(to_trace(2, &e), Some(Event::ModeChange { t: 5, partition: 2, from: "COLD_START".into(), to: "NORMAL".into() }));
        let e = TraceEvent { t_ns: 7, kind: event::DEADLINE_MISSED, core: 1, a: 4, b: 6 };
        assert_eq!(to_trace(2, &e), Some(Event::DeadlineMissed { t: 7, core: 1, partition: 2, process: 4, deadline: 6 }));
        assert_eq!(to_trace(2, &TraceEvent { kind: 999, ..e }), None);
        let e = TraceEvent { t_ns: 9, kind: event::PRIORITIES_SHARED, core: 0, a: 1, b: 63 };
        assert_eq!(to_trace(2, &e), Some(Event::PrioritiesShared { t: 9, core: 0, partition: 2, lowest: 1, highest: 63 }));
        assert_eq!(to_trace(2, &TraceEvent { kind: event::MODE_CHANGE, a: -1, ..e }), None);
        let a = config_mismatch::pack(config_mismatch::QUEUING, config_mismatch::MAX_NB_MESSAGES, 17);
        let e = TraceEvent { t_ns: 9, kind: event::CONFIG_MISMATCH, core: 0, a, b: 8 };
        let want = Event::ConfigMismatch {
            t: 9,
            core: 0,
            partition: 2,
            service: "CREATE_QUEUING_PORT".into(),
            attribute: "MaxNbMessages".into(),
            given: 8,
            line: 17,
        };
        assert_eq!(to_trace(2, &e), Some(want));
        assert_eq!(to_trace(2, &TraceEvent { a: 0x7f7f, ..e }), None, "garbage from the partition is dropped");
    }
}
