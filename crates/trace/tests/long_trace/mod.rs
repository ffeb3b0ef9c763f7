//! A long synthetic trace, generated frame by frame (no list of events needed), for the tests
//! of the streaming summary.
//!
//! Major frame 20 ms. Core 0: partition 1 in [0, 8) ms, partition 2 in [10, 18) ms; core 1:
//! partition 3 in [0, 15) ms, which has a restart and an HM event every 50 frames. Lateness,
//! PCS and stop times vary with the frame number. Every 97th frame, partition 1 is stopped only
//! after partition 2 starts running (an overlap); every 89th, partition 3 reports running
//! 100 us before its window (a run outside its windows). Events of a frame
//! come core by core, so they reach the builder out of time order within a frame.

#![allow(dead_code)]

use partita_trace::{CoreInfo, Event, PartitionInfo};

pub const MS: i64 = 1_000_000;
pub const MAF: i64 = 20 * MS;

pub fn module_start() -> Event {
    Event::ModuleStart {
        t: -5 * MS,
        module: "long".into(),
        config: "long.xml".into(),
        epoch_monotonic_ns: 1,
        mechanism: "test".into(),
        cores: vec![CoreInfo { core: 0, cpu: 0, policy: "CYCLIC".into() }, CoreInfo { core: 1, cpu: 1, policy: "CYCLIC".into() }],
        partitions: (1..=3).map(|id| PartitionInfo { id, name: format!("P{id}") }).collect(),
        schedule: 1,
        startup: Default::default(),
    }
}

fn window(out: &mut Vec<Event>, core: u32, partition: u32, window: u32, span: (i64, i64), d: [i64; 4]) {
    let (start, end) = span;
    let [lateness, pcs, end_lateness, stop] = d;
    out.push(Event::WindowStart { t: start + lateness, core, partition, window, planned: start, schedule: 1 });
    out.push(Event::PartitionRunning { t: start + pcs, core, partition, planned: start });
    out.push(Event::WindowEnd { t: end + end_lateness, core, partition, window, planned: end });
    if stop != i64::MAX {
        out.push(Event::PartitionStopped { t: end + stop, core, partition });
    }
}

/// The events of frame `k`, appended to `out`.
pub fn frame(k: i64, out: &mut Vec<Event>) {
    let p = k * MAF;
    let v = (k * 7919) % 1000; // 0..999: varies the figures
    let fault = k % 97 == 50;
    // Core 0.
    let stop1 = if fault { i64::MAX } else { 20_000 + v * 3 };
    window(out, 0, 1, 0, (p, p + 8 * MS), [5_000 + v, 15_000 + 2 * v, 3_000, stop1]);
    window(out, 0, 2, 1, (p + 10 * MS, p + 18 * MS), [8_000, 12_000 + v * 50, 4_000, 30_000 + v]);
    if fault {
        // Partition 1 stopped only 100 us after partition 2 ran.
        out.push(Event::PartitionStopped { t: p + 10 * MS + 12_000 + v * 50 + 100_000, core: 0, partition: 1 });
    }
    out.push(Event::ProcessRelease { t: p + 25_000, core: 0, partition: 1, process: 1, deadline: p + MAF });
    // Core 1.
    // Every 89th frame, partition 3 reports running 100 us before its window starts.
    let pcs3 = if k % 89 == 30 { -100_000 } else { 6_000 + v };
    window(out, 1, 3, 2, (p, p + 15 * MS), [3_000 + v / 2, pcs3, 2_000, 7_000 + v * 1000]);
    if k % 50 == 49 {
        let t = p + 16 * MS;
        out.push(Event::HmEvent {
            t,
            partition: 3,
            process: 0,
            code: "MEMORY_VIOLATION".into(),
            level: "PARTITION".into(),
            action: "COLD_START".into(),
            source: "detected".into(),
        });
        out.push(Event::PartitionRestart {
            t: t + 1,
            partition: 3,
            mode: "COLD_START".into(),
            start_condition: "HM_PARTITION_RESTART".into(),
        });
        out.push(Event::ModeChange { t: t + 2, partition: 3, from: "NORMAL".into(), to: "COLD_START".into() });
        out.push(Event::ModeChange { t: t + 3, partition: 3, from: "COLD_START".into(), to: "NORMAL".into() });
    }
}

/// `frames` frames with module_start and module_stop.
pub fn trace(frames: i64) -> Vec<Event> {
    let mut out = vec![module_start()];
    for k in 0..frames {
        frame(k, &mut out);
    }
    out.push(Event::ModuleStop { t: frames * MAF + MS, frames: frames as u64, reason: "frames".into() });
    out
}
