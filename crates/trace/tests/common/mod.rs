//! Synthetic traces with hand-chosen times, shared by the integration tests.
//!
//! Module: major frame 20 ms, 3 frames. Core 0: partition 1 "A" in [0, 8) ms (window 0) and
//! partition 2 "B" in [10, 18) ms (window 1); core 1: partition 3 "C" in [0, 15) ms (window 2).
//! In frame k (planned start P = k * 20 ms):
//! - A: window-start lateness 10+k us, PCS 20+2k us, window-end lateness 5 us, stop 30+k us;
//!   process 1 released at P + 25 us;
//! - B: lateness 8 us, PCS 15 us, end lateness 5 us, stop 40 us;
//! - C: lateness 3 us, PCS 6 us, end lateness 2 us, stop 7 us.
//!
//! Before the epoch: module_start at -5 ms, mode changes COLD_START -> NORMAL at -3, -2, -1 ms.
//! Schedule 1 in frames 0 and 1, schedule 2 (a schedule_change at 40 ms) in frame 2. A deadline
//! miss of A's process 1 at 45 ms, 5 events dropped by C at 50 ms, module_stop at 60 ms.

#![allow(dead_code)]

use partita_trace::{CoreInfo, Event, PartitionInfo};

pub const US: i64 = 1_000;
pub const MS: i64 = 1_000_000;
pub const MAF: i64 = 20 * MS;
pub const FRAMES: i64 = 3;

/// Changes applied while building a trace, to plant faults.
#[derive(Default, Clone, Copy)]
pub struct Faults {
    /// In frame 1, A is stopped only at P + 10 ms + 50 us, after B runs at P + 10 ms + 15 us.
    pub late_stop_a: bool,
    /// In frame 1, C reports running 100 us before its window's planned start.
    pub early_run_c: bool,
}

fn window(out: &mut Vec<Event>, ids: [u32; 4], span: (i64, i64), d: [i64; 4]) {
    let [core, partition, window, schedule] = ids;
    let (start, end) = span;
    let [lateness, pcs, end_lateness, stop] = d;
    out.push(Event::WindowStart { t: start + lateness, core, partition, window, planned: start, schedule });
    out.push(Event::PartitionRunning { t: start + pcs, core, partition, planned: start });
    out.push(Event::WindowEnd { t: end + end_lateness, core, partition, window, planned: end });
    out.push(Event::PartitionStopped { t: end + stop, core, partition });
}

pub fn module_start() -> Event {
    Event::ModuleStart {
        t: -5 * MS,
        module: "demo".into(),
        config: "demo.xml".into(),
        epoch_monotonic_ns: 123_456_789_000,
        mechanism: "cgroup-v2-freeze".into(),
        cores: vec![CoreInfo { core: 0, cpu: 0, policy: "CYCLIC".into() }, CoreInfo { core: 1, cpu: 1, policy: "CYCLIC".into() }],
        partitions: vec![
            PartitionInfo { id: 1, name: "A".into() },
            PartitionInfo { id: 2, name: "B".into() },
            PartitionInfo { id: 3, name: "C".into() },
        ],
        schedule: 1,
        startup: Default::default(),
    }
}

/// The trace described in the module documentation, in time order per core.
pub fn trace(faults: Faults) -> Vec<Event> {
    let mut ev = vec![module_start()];
    for (i, p) in [1, 2, 3].into_iter().enumerate() {
        let t = (i as i64 - 3) * MS;
        ev.push(Event::ModeChange { t, partition: p, from: "COLD_START".into(), to: "NORMAL".into() });
    }
    for k in 0..FRAMES {
        let p = k * MAF;
        let schedule = if k < 2 { 1 } else { 2 };
        if k == 2 {
            ev.push(Event::ScheduleChange { t: p, from: 1, to: 2 });
        }
        let mut a = Vec::new();
        window(&mut a, [0, 1, 0, schedule], (p, p + 8 * MS), [(10 + k) * US, (20 + 2 * k) * US, 5 * US, (30 + k) * US]);
        if faults.late_stop_a && k == 1 {
            a[3] = Event::PartitionStopped { t: p + 10 * MS + 50 * US, core: 0, partition: 1 };
        }
        ev.extend(a);
        ev.push(Event::ProcessRelease { t: p + 25 * US, core: 0, partition: 1, process: 1, deadline: p + MAF });
        window(&mut ev, [0, 2, 1, schedule], (p + 10 * MS, p + 18 * MS), [8 * US, 15 * US, 5 * US, 40 * US]);
        let mut c = Vec::new();
        window(&mut c, [1, 3, 2, schedule], (p, p + 15 * MS), [3 * US, 6 * US, 2 * US, 7 * US]);
        if faults.early_run_c && k == 1 {
            c[1] = Event::PartitionRunning { t: p - 100 * US, core: 1, partition: 3, planned: p };
        }
        ev.extend(c);
    }
    ev.push(Event::DeadlineMissed { t: 45 * MS, core: 0, partition: 1, process: 1, deadline: 40 * MS });
    ev.push(Event::EventsDropped { t: 50 * MS, partition: 3, count: 5 });
    ev.push(Event::ModuleStop { t: FRAMES * MAF, frames: FRAMES as u64, reason: "frames".into() });
    ev
}

pub fn clean() -> Vec<Event> {
    trace(Faults::default())
}

/// Writes and reads back a trace through its JSON Lines form.
pub fn round_trip(events: &[Event]) -> Vec<Event> {
    let mut buf = Vec::new();
    for e in events {
        e.write_line(&mut buf).unwrap();
    }
    partita_trace::read_trace(buf.as_slice()).unwrap()
}
