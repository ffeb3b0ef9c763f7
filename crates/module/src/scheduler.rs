//! The per-core partition scheduler: one thread per module core, pinned, at the top real-time
//! priority, walking the core's window boundaries at absolute times computed from the module
//! epoch (never from "now", so nothing drifts). At a boundary it stops the outgoing partition
//! (complete before anything else happens) and releases the incoming one, then wakes its probe
//! so the partition records when it actually ran.

use crate::run_state::{RunState, partition_state};
use crate::timeline::{Boundary, boundaries};
use partita_trace::Event;
use std::sync::atomic::Ordering;

/// The clock and sleep operations the loop needs (real ones in `rt`, fakes in tests).
pub trait Clock {
    fn now_ns(&self) -> i64;
    fn sleep_until(&self, monotonic_ns: i64);
    /// Wakes the futex of a partition's window-start probe.
    fn wake(&self, word: &std::sync::atomic::AtomicU32);
}

/// Runs core `core` until the run ends; returns the number of frames it completed.
pub fn run_core(state: &RunState, core: usize, clock: &dyn Clock) -> u64 {
    let plan = &state.plan;
    let per_schedule: Vec<Vec<Boundary>> = plan.schedules.iter().map(|s| boundaries(s, core)).collect();
    let mut sched = plan.initial_schedule;
    let mut frame_start = state.epoch_ns;
    let mut frames = 0u64;
    // Partition whose window is open on this core, with its window id and planned start.
    let mut open: Option<(usize, u32, i64)> = None;
    'frames: loop {
        if state.stop.load(Ordering::Acquire)
            || (state.frames_limit > 0 && frames >= state.frames_limit)
            || frame_start >= state.end_ns
        {
            break;
        }
        // A schedule change applies to every core at the same frame boundary.
        let pending = state.pending_schedule.load(Ordering::Acquire);
        if pending > 0 && state.pending_at_ns.load(Ordering::Acquire) == frame_start {
            let to = pending - 1;
            if core == 0 {
                publish_schedule(state, sched, to, frame_start, clock);
            }
            sched = to;
        }
        let maf = plan.schedules[sched].major_frame_ns;
        for b in &per_schedule[sched] {
            let planned = frame_start + b.offset_ns;
            clock.sleep_until(planned);
            let woke = clock.now_ns();
            if let Some((p, window, start_offset)) = b.end {
                let t = state.rel(woke);
                state.emit(core, Event::WindowEnd { t, core: core as u32, partition: plan.partitions[p].id, window, planned: state.rel(planned) });
                leave(state, core, p, clock);
                report_probe(state, core, p, frame_start + start_offset);
                open = None;
            }
            if let Some((p, window)) = b.start {
                state.emit(
                    core,
                    Event::WindowStart {
                        t: state.rel(woke),
                        core: core as u32,
                        partition: plan.partitions[p].id,
                        window,
                        planned: state.rel(planned),
                        schedule: plan.schedules[sched].id,
                    },
                );
                enter(state, core, p, planned, clock);
                open = Some((p, window, planned));
            }
            if state.stop.load(Ordering::Acquire) {
                break 'frames;
            }
        }
        frame_start += maf;
        frames += 1;
        if core == 0 {
            state.frames.store(frames, Ordering::Release);
        }
        if per_schedule[sched].is_empty() {
            // A core without windows in this schedule just follows the frames.
            clock.sleep_until(frame_start);
        }
    }
    if let Some((p, _, planned)) = open {
        leave(state, core, p, clock);
        report_probe(state, core, p, planned);
    }
    state.cores_done.fetch_add(1, Ordering::AcqRel);
    frames
}

/// Opens partition `p`'s window on `core`: releases it if no other core has it open.
fn enter(state: &RunState, core: usize, p: usize, planned: i64, clock: &dyn Clock) {
    let run = &state.partitions[p];
    if run.state.load(Ordering::Acquire) != partition_state::ACTIVE {
        return;
    }
    let probe_index = probe_slot(state, p, core);
    if let Some(i) = probe_index {
        let probe = &run.control.block().probes[i];
        probe.planned_ns.store(planned, Ordering::Release);
        probe.wake.fetch_add(1, Ordering::Release);
        run.pending_probe[core].store(planned, Ordering::Release);
    }
    if run.active_cores.fetch_add(1, Ordering::AcqRel) == 0 {
        if let Err(e) = run.gate.release() {
            eprintln!("partita: cannot release partition {}: {e}", state.plan.partitions[p].name);
        }
    }
    if let Some(i) = probe_index {
        clock.wake(&run.control.block().probes[i].wake);
    }
}

/// Closes partition `p`'s window on `core`: stops it, completely, unless another core still
/// has it open (a multi-core partition).
fn leave(state: &RunState, core: usize, p: usize, clock: &dyn Clock) {
    let run = &state.partitions[p];
    // Saturating: an inactive partition was never counted in.
    let before = run.active_cores.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).unwrap_or(0);
    if before == 1 {
        match run.gate.stop() {
            Ok(()) => state.emit(core, Event::PartitionStopped { t: state.rel(clock.now_ns()), core: core as u32, partition: state.plan.partitions[p].id }),
            Err(e) => eprintln!("partita: cannot stop partition {}: {e}", state.plan.partitions[p].name),
        }
    }
}

/// Index of `core` among the partition's cores (its probe slot).
fn probe_slot(state: &RunState, p: usize, core: usize) -> Option<usize> {
    state.plan.partitions[p].cores.iter().position(|&c| c as usize == core).filter(|&i| i < partita_abi::MAX_CORES)
}

/// After a window: if the partition's probe ran for that window start, record when.
fn report_probe(state: &RunState, core: usize, p: usize, planned: i64) {
    let run = &state.partitions[p];
    if run.pending_probe[core].swap(0, Ordering::AcqRel) != planned {
        return;
    }
    let Some(i) = probe_slot(state, p, core) else { return };
    let probe = &run.control.block().probes[i];
    let running = probe.running_ns.load(Ordering::Acquire);
    if probe.planned_ns.load(Ordering::Acquire) == planned && running >= planned {
        state.emit(
            core,
            Event::PartitionRunning { t: state.rel(running), core: core as u32, partition: state.plan.partitions[p].id, planned: state.rel(planned) },
        );
    }
}

/// Core 0 publishes a schedule change to every partition and the trace.
fn publish_schedule(state: &RunState, from: usize, to: usize, at: i64, clock: &dyn Clock) {
    let plan = &state.plan;
    state.schedule_started_ns.store(at, Ordering::Release);
    state.schedule.store(to, Ordering::Release);
    state.pending_schedule.store(0, Ordering::Release);
    for (i, run) in state.partitions.iter().enumerate() {
        let (period_ns, duration_ns) = plan.schedules[to].periods[i];
        run.control.block().schedule.publish(&partita_abi::ScheduleSnapshot {
            current_id: plan.schedules[to].id,
            next_id: plan.schedules[to].id,
            started_ns: at,
            time_of_last_switch_ns: state.rel(at),
            period_ns,
            duration_ns,
        });
    }
    let _ = clock;
    state.emit(0, Event::ScheduleChange { t: state.rel(at), from: plan.schedules[from].id, to: plan.schedules[to].id });
}
