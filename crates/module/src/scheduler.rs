//! The per-core partition scheduler: one thread per module core, pinned, at the top real-time
//! priority, walking the core's window boundaries at absolute times computed from the module
//! epoch (never from "now", so nothing drifts).
//!
//! Each boundary is handled from `early_wake_ns` before it: the thread wakes, and while it
//! holds the core (no partition can run there), requests the outgoing partition's stop,
//! releases the incoming one and arms its probe; then it spins to the exact boundary and gives
//! the core up. The incoming partition thus runs from the boundary on, the outgoing one loses
//! at most the margin, and neither executes an instruction outside its window. A requested stop
//! is confirmed complete before the next boundary of the core (docs/scheduling.md).

use crate::plan::Plan;
use crate::run_state::{RunState, partition_state};
use crate::timeline::{Boundary, CoreTimeline, Ending};
use partita_trace::Event;
use std::sync::atomic::{AtomicU32, Ordering};

/// The clock and sleep operations the loop needs (real ones in `run`, fakes in tests).
pub trait Clock {
    fn now_ns(&self) -> i64;
    fn sleep_until(&self, monotonic_ns: i64);
    /// Prepares the next `sleep_until(monotonic_ns)` ahead of time (arms its timer), so that
    /// the sleep right after a boundary costs no timer programming.
    fn arm(&self, monotonic_ns: i64) {
        let _ = monotonic_ns;
    }
    /// Busy-waits until `monotonic_ns`; returns the time it saw last (>= the target).
    fn spin_until(&self, monotonic_ns: i64) -> i64;
    /// Wakes the futex of a partition's window-start probe.
    fn wake(&self, word: &AtomicU32);
}

/// How long before a boundary the scheduler wakes: a streaming estimate of the 90th
/// percentile of what preparing a boundary takes (wake-up lateness plus stopping and releasing,
/// which grows with the partitions' thread counts), so that the preparation is done before the
/// boundary without taking more than needed from the outgoing partition.
pub struct Margin {
    value: i64,
    floor: i64,
}

impl Margin {
    pub const CEILING: i64 = 2_000_000;
    /// Step of the quantile estimator (ns).
    const STEP: i64 = 2_000;

    pub fn new(initial: i64, floor: i64) -> Margin {
        Margin { value: initial.clamp(floor, Self::CEILING), floor }
    }

    pub fn get(&self) -> i64 {
        self.value
    }

    /// Records what one preparation needed (from the planned wake-up to the end of the work):
    /// up 9 steps when it needed more than the margin, down 1 step otherwise, which settles
    /// where 90 % of the preparations fit.
    pub fn record(&mut self, needed: i64) {
        self.value =
            if needed > self.value { self.value + 9 * Self::STEP } else { self.value - Self::STEP }.clamp(self.floor, Self::CEILING);
    }
}

/// A stop requested at a boundary, to be confirmed before the core's next one.
struct PendingStop {
    partition: usize,
    /// When the stop took effect (the write returned, or the guard held the partition first).
    requested_ns: i64,
    /// The boundary (monotonic ns) and when the scheduler thread meant to wake and woke for it.
    planned_end: i64,
    wake_planned: i64,
    woke: i64,
    stop: StopIssue,
}

impl PendingStop {
    /// A stop issued as the run ends (`now`): no planned boundary but the end itself.
    fn at_run_end(partition: usize, stop: StopIssue, now: i64) -> PendingStop {
        PendingStop { partition, requested_ns: stop.effective(), planned_end: now, wake_planned: now, woke: now, stop }
    }
}

/// When [`leave`] issued a stop write, when the write returned and when the core guard held
/// the partition (monotonic ns): traced (`stop_times`) to tell a late stop's cause.
#[derive(Clone, Copy)]
struct StopIssue {
    issued: i64,
    returned: i64,
    held: Option<i64>,
}

impl StopIssue {
    /// When the partition could no longer run: the write returned, or the guard held it.
    fn effective(&self) -> i64 {
        self.held.map_or(self.returned, |h| h.min(self.returned))
    }
}

/// A window a boundary starts, and how: `at_boundary` when the partition is released as a whole
/// and also runs on other cores, so only at the boundary itself (its threads there would start
/// before it); otherwise it is released while the scheduler still holds the core.
#[derive(Clone, Copy)]
struct Starting {
    partition: usize,
    window: u32,
    /// The window's planned end (monotonic ns).
    end: i64,
    at_boundary: bool,
}

/// Runs core `core` until the run ends; returns the number of frames it completed.
pub fn run_core(state: &RunState, core: usize, clock: &dyn Clock) -> u64 {
    let plan = &state.plan;
    let timeline = CoreTimeline::new(&plan.schedules, core);
    let mut c = CoreLoop {
        state,
        core,
        clock,
        sched: plan.initial_schedule,
        frame_start: state.epoch_ns(),
        frames: 0,
        pending: Vec::new(),
        margin: Margin::new(state.early_wake_ns, state.early_wake_ns.min(30_000)),
        open: None,
        carried: None,
        armed: Armed::default(),
    };
    let served = start_served(state, core, clock, c.sched);
    'frames: loop {
        if state.stop.load(Ordering::Acquire)
            || (state.frames_limit > 0 && c.frames >= state.frames_limit)
            || c.frame_start >= state.end_ns()
        {
            break;
        }
        // A schedule change applies to every core at the same frame boundary.
        let first_started = c.carried.is_some();
        let next = c.carried.take().unwrap_or_else(|| schedule_of_frame(state, c.sched, c.frame_start));
        if next != c.sched {
            if core == 0 {
                publish_schedule(state, c.sched, next, c.frame_start);
            }
            c.sched = next;
        }
        let maf = plan.schedules[c.sched].major_frame_ns;
        for i in usize::from(first_started)..timeline.boundaries(c.sched).len() {
            if !c.boundary(&timeline, i) {
                break 'frames;
            }
        }
        c.frame_start += maf;
        c.frames += 1;
        if core == 0 {
            state.frames.store(c.frames, Ordering::Release);
        }
        if timeline.boundaries(c.sched).is_empty() {
            // A core without windows in this schedule just follows the frames.
            clock.sleep_until(c.frame_start);
        }
    }
    finish_core(state, core, clock, &served, c.open, c.pending);
    state.cores_done.fetch_add(1, Ordering::AcqRel);
    c.frames
}

/// A FIXED_PRIORITY core runs its partitions for the whole run; the kernel serves the most
/// urgent one that has work (their priority bands are disjoint). Starts them at the epoch;
/// returns them.
fn start_served(state: &RunState, core: usize, clock: &dyn Clock, sched: usize) -> Vec<usize> {
    let plan = &state.plan;
    let served: Vec<usize> =
        (0..plan.partitions.len()).filter(|&p| plan.partitions[p].served_by_priority.is_some_and(|(c, _)| c as usize == core)).collect();
    if !served.is_empty() {
        clock.sleep_until(state.epoch_ns());
        for &p in &served {
            enter(state, core, p, state.epoch_ns(), i64::MAX);
            state.emit(
                core,
                Event::WindowStart {
                    t: state.rel(clock.now_ns()),
                    core: core as u32,
                    partition: plan.partitions[p].id,
                    window: 0,
                    planned: 0,
                    schedule: plan.schedules[sched].id,
                },
            );
        }
    }
    served
}

/// The end of a core's run: the served partitions and the open window are stopped, and the run
/// ends only once every stop it requested is complete (at most 0.5 s).
fn finish_core(
    state: &RunState,
    core: usize,
    clock: &dyn Clock,
    served: &[usize],
    open: Option<(usize, i64)>,
    mut pending: Vec<PendingStop>,
) {
    for &p in served {
        let now = clock.now_ns();
        state.emit(
            core,
            Event::WindowEnd {
                t: state.rel(now),
                core: core as u32,
                partition: state.plan.partitions[p].id,
                window: 0,
                planned: state.rel(now),
            },
        );
        if let Some(stop) = leave(state, core, p, clock, None) {
            pending.push(PendingStop::at_run_end(p, stop, now));
        }
    }
    if let Some((p, planned)) = open {
        let now = clock.now_ns();
        if let Some(stop) = leave(state, core, p, clock, None) {
            pending.push(PendingStop::at_run_end(p, stop, now));
        }
        report_probe(state, core, p, planned, clock);
    }
    let deadline = clock.now_ns() + 500_000_000;
    while !pending.is_empty() && clock.now_ns() < deadline {
        clock.sleep_until(clock.now_ns() + 100_000);
        confirm_stops(state, core, &mut pending, None, clock);
    }
    for s in pending {
        crate::warn_line!("partita: partition {} did not stop within 0.5 s of the end of the run", state.plan.partitions[s.partition].name);
    }
}

/// What one core's scheduler carries from boundary to boundary.
struct CoreLoop<'a> {
    state: &'a RunState,
    core: usize,
    clock: &'a dyn Clock,
    /// The schedule in force, the start of the current frame and the frames completed.
    sched: usize,
    frame_start: i64,
    frames: u64,
    /// Stops requested at earlier boundaries, to be confirmed.
    pending: Vec<PendingStop>,
    margin: Margin,
    /// Partition whose window is open on this core, with its planned start.
    open: Option<(usize, i64)>,
    /// The schedule of the next frame, when its first window was already started with the last
    /// boundary of the previous frame (the same instant; see `merged_frame_start`).
    carried: Option<usize>,
    /// Wake-ups armed ahead, (planned boundary, wake-up instant): the next boundary's and the
    /// one after it. A timer armed while an earlier one is pending is not the CPU's next event,
    /// so arming it does not reprogram the CPU's timer (8 us on a nested VM; docs/scheduling.md).
    armed: Armed,
}

/// The wake-ups a scheduler thread armed: (planned boundary, wake-up instant) of the next
/// boundary and of the one after it.
#[derive(Default)]
struct Armed {
    next: Option<(i64, i64)>,
    ahead: Option<(i64, i64)>,
}

impl Armed {
    /// The wake-up armed for boundary `planned`, if any.
    fn wake_for(&self, planned: i64) -> Option<i64> {
        [self.next, self.ahead].into_iter().flatten().find(|(p, _)| *p == planned).map(|(_, w)| w)
    }

    /// Arms the wake-up of the next boundary (`next_boundary`, as armed ahead if it was, else
    /// `margin` before it) and, ahead, that of the boundary after it, predicted from the
    /// timeline (`next_at`: the next boundary's schedule, frame start and index). A wrong
    /// prediction (a schedule change, the run's end) costs a timer programming, nothing else.
    fn arm(
        &mut self,
        clock: &dyn Clock,
        timeline: &CoreTimeline,
        plan: &Plan,
        margin: i64,
        next_boundary: i64,
        next_at: (usize, i64, usize),
    ) {
        let wake = self.wake_for(next_boundary).unwrap_or(next_boundary - margin);
        clock.arm(wake);
        self.next = Some((next_boundary, wake));
        let (sched, frame_start, j) = next_at;
        self.ahead = timeline.after(sched, plan.schedules[sched].major_frame_ns, frame_start, j).map(|after| {
            clock.arm(after - margin);
            (after, after - margin)
        });
    }
}

impl CoreLoop<'_> {
    /// Handles boundary `i` of the current frame: wakes the margin before it, stops the
    /// outgoing partition, releases the incoming one, spins to the boundary and gives the core
    /// up. False when the run stops.
    fn boundary(&mut self, timeline: &CoreTimeline, i: usize) -> bool {
        let (state, core, clock) = (self.state, self.core, self.clock);
        let plan = &state.plan;
        let (sched, frame_start, frames) = (self.sched, self.frame_start, self.frames);
        let maf = plan.schedules[sched].major_frame_ns;
        let list = timeline.boundaries(sched);
        let b = &list[i];
        let mut pending = std::mem::take(&mut self.pending);
        let mut open = self.open;
        let carried;
        let margin = &mut self.margin;
        let going_on = 'step: {
            let planned = frame_start + b.offset_ns;
            // The frame's last boundary also starts the next frame's first window when both
            // fall at this instant: one preparation, one spin.
            let merged = if i + 1 == list.len() { merged_frame_start(state, timeline, sched, frame_start + maf, frames + 1) } else { None };
            let b = &merged.map_or(*b, |(_, seam)| seam);
            let wake_at = self.armed.wake_for(planned).unwrap_or(planned - margin.get());
            // Late already (the previous boundary took longer than the time up to this one's
            // margin): the margin could not have helped, so only the work counts.
            let from = wake_at.max(clock.now_ns());
            clock.sleep_until(wake_at);
            let woke = clock.now_ns();
            // Stops requested at earlier boundaries are checked once this boundary's stop is
            // issued: a check reads the kernel's state and can be slow (the soak saw stops
            // issued up to 1.2 ms late behind it: its `late_issue` class, docs/isolation.md).
            // An earlier stop of the partition ending here is checked first, while its window
            // is still open, so that one not confirmed before that window is reported as such.
            let open_before = open.map(|o| o.0);
            let mut earlier = std::mem::take(&mut pending);
            if earlier.iter().any(|s| b.end.is_some_and(|e| e.partition == s.partition)) {
                confirm_stops(state, core, &mut earlier, open_before, clock);
            }
            let acted = clock.now_ns();
            // A window followed at once by another of the same partition: it keeps running.
            let continuing = matches!((b.end, b.start), (Some(e), Some(s)) if e.partition == s.partition);
            if let Some(Ending { partition: p, window, start_offset_ns: start_offset }) = b.end {
                state.emit(
                    core,
                    Event::WindowEnd {
                        t: state.rel(acted),
                        core: core as u32,
                        partition: plan.partitions[p].id,
                        window,
                        planned: state.rel(planned),
                    },
                );
                if !continuing && let Some(stop) = leave(state, core, p, clock, Some(planned)) {
                    pending.push(PendingStop {
                        partition: p,
                        requested_ns: stop.effective(),
                        planned_end: planned,
                        wake_planned: wake_at,
                        woke,
                        stop,
                    });
                }
                report_probe(state, core, p, frame_start + start_offset, clock);
                open = None;
            }
            confirm_stops(state, core, &mut earlier, open_before, clock);
            earlier.append(&mut pending);
            pending = earlier;
            // Released while this thread holds the core, unless the partition is released as
            // a whole and also runs on other cores (its threads there would start before the
            // boundary). Gated per core, its threads here are pinned here.
            let starting = b.start.map(|o| Starting {
                partition: o.partition,
                window: o.window,
                end: planned + o.duration_ns,
                at_boundary: plan.partitions[o.partition].cores.len() > 1 && state.partitions[o.partition].gate.core(core).is_none(),
            });
            let mut woken_late: Option<usize> = None;
            match starting {
                Some(s) if continuing => {
                    arm_probe(state, core, s.partition, planned, s.end);
                    woken_late = Some(s.partition);
                }
                Some(s) if !s.at_boundary && !enter(state, core, s.partition, planned, s.end) => woken_late = Some(s.partition),
                _ => {}
            }
            margin.record(clock.now_ns() - from);
            // The next boundary, and where it is in its frame: (schedule, frame start, index).
            let (next_boundary, next_at) = match merged {
                Some((next_sched, _)) => (
                    frame_start + maf + timeline.after_seam(next_sched, plan.schedules[next_sched].major_frame_ns),
                    (next_sched, frame_start + maf, 1),
                ),
                None if i + 1 < list.len() => (next_wake(list, i, frame_start, maf), (sched, frame_start, i + 1)),
                None => (next_wake(list, i, frame_start, maf), (sched, frame_start + maf, 0)),
            };
            self.armed.arm(clock, timeline, plan, margin.get(), next_boundary, next_at);
            let at = if acted < planned { clock.spin_until(planned) } else { acted };
            if let Some(Starting { partition: p, window, end, at_boundary }) = starting {
                if at_boundary && !continuing && !enter(state, core, p, planned, end) {
                    woken_late = Some(p);
                }
                state.emit(
                    core,
                    Event::WindowStart {
                        t: state.rel(at),
                        core: core as u32,
                        partition: plan.partitions[p].id,
                        window,
                        planned: state.rel(planned),
                        schedule: plan.schedules[sched].id,
                    },
                );
                open = Some((p, planned));
            }
            // A partition that was not frozen (its previous window just ended here, or it
            // runs on another core too) is waiting on its probe futex: wake it.
            if let Some(p) = woken_late.or(starting.filter(|s| s.at_boundary).map(|s| s.partition))
                && let Some(i) = probe_slot(state, p, core)
            {
                clock.wake(&state.partitions[p].control.block().probes[i].wake);
            }
            carried = merged.map(|(next_sched, _)| next_sched);
            if state.stop.load(Ordering::Acquire) {
                break 'step false;
            }
            chase_stops(state, core, &mut pending, open.map(|o| o.0), clock, next_boundary - margin.get());
            true
        };
        self.pending = pending;
        (self.open, self.carried) = (open, carried);
        going_on
    }
}

/// The schedule of the frame starting at `frame_start`: a requested change applies there.
/// Requests are made well before (see `RunState::request_schedule`), so every core decides
/// the same, even the ones deciding at their last boundary of the previous frame.
fn schedule_of_frame(state: &RunState, current: usize, frame_start: i64) -> usize {
    let requested = state.pending_schedule.load(Ordering::Acquire);
    if requested > 0 && state.pending_at_ns.load(Ordering::Acquire) == frame_start { requested - 1 } else { current }
}

/// When the next frame (which starts at `next_frame_start` and is the run's frame number
/// `next_frame`) runs and its first boundary merges with the last of this frame of schedule
/// `sched` (the timeline's seam): that frame's schedule and the merged boundary.
fn merged_frame_start(
    state: &RunState,
    timeline: &CoreTimeline,
    sched: usize,
    next_frame_start: i64,
    next_frame: u64,
) -> Option<(usize, Boundary)> {
    let runs = !(state.frames_limit > 0 && next_frame >= state.frames_limit) && next_frame_start < state.end_ns();
    if !runs {
        return None;
    }
    let next_sched = schedule_of_frame(state, sched, next_frame_start);
    timeline.seam(sched, next_sched).map(|b| (next_sched, b))
}

/// When the boundary after the `i`th of `list` is due (the first of the next frame after the last one).
fn next_wake(list: &[Boundary], i: usize, frame_start: i64, maf: i64) -> i64 {
    match list.get(i + 1) {
        Some(n) => frame_start + n.offset_ns,
        None => frame_start + maf + list.first().map_or(0, |f| f.offset_ns),
    }
}

/// Checks the stops requested at earlier boundaries; the confirmed ones are traced with the
/// instant they took effect (the request, made while the partition could not run).
/// `open_here`: the partition whose window is open on this core.
fn confirm_stops(state: &RunState, core: usize, pending: &mut Vec<PendingStop>, open_here: Option<usize>, clock: &dyn Clock) {
    pending.retain(|s| {
        let run = &state.partitions[s.partition];
        let per_core = run.gate.core(core);
        let released_again = if per_core.is_some() { open_here == Some(s.partition) } else { run.active_cores.load(Ordering::Acquire) > 0 };
        let gate = per_core.unwrap_or(&*run.gate);
        // Not released again: it must be stopped, and a gate whose stop can be undone stops it again.
        let stopped = if released_again { gate.is_stopped() } else { gate.enforce_stop() };
        match stopped {
            Ok(true) => {
                emit_stop_times(state, core, s, Some(clock.now_ns()), clock);
                state.emit(
                    core,
                    Event::PartitionStopped {
                        t: state.rel(s.requested_ns),
                        core: core as u32,
                        partition: state.plan.partitions[s.partition].id,
                    },
                );
                false
            }
            // Released again before the kernel confirmed the stop (the vCPU was stalled, or
            // higher-priority threads kept the partition's threads from reaching the freezer):
            // the stop took effect when requested, but say that it was not confirmed.
            Ok(false) if released_again => {
                crate::warn_line!(
                    "partita: warning: the stop of partition {} requested at {:+.3} ms was not confirmed before its next window",
                    state.plan.partitions[s.partition].name,
                    state.rel(s.requested_ns) as f64 / 1e6
                );
                emit_stop_times(state, core, s, None, clock);
                state.emit(
                    core,
                    Event::PartitionStopped {
                        t: state.rel(s.requested_ns),
                        core: core as u32,
                        partition: state.plan.partitions[s.partition].id,
                    },
                );
                false
            }
            Ok(false) => true,
            Err(e) => {
                crate::warn_line!("partita: cannot check that partition {} stopped: {e}", state.plan.partitions[s.partition].name);
                false
            }
        }
    });
}

/// Traces how the stop `s` went (`stop_times`); `confirmed`: when its completion was seen.
fn emit_stop_times(state: &RunState, core: usize, s: &PendingStop, confirmed: Option<i64>, clock: &dyn Clock) {
    state.emit(
        core,
        Event::StopTimes {
            t: state.rel(confirmed.unwrap_or_else(|| clock.now_ns())),
            core: core as u32,
            partition: state.plan.partitions[s.partition].id,
            planned_end: state.rel(s.planned_end),
            wake_planned: state.rel(s.wake_planned),
            woke: state.rel(s.woke),
            issued: state.rel(s.stop.issued),
            returned: state.rel(s.stop.returned),
            held: s.stop.held.map(|h| state.rel(h)),
            effective: state.rel(s.requested_ns),
            confirmed: confirmed.map(|c| state.rel(c)),
        },
    );
}

/// First check of a chased stop after the boundary: the outgoing partition's threads need
/// the CPU for a few microseconds each to enter their stop once the scheduler sleeps, and the
/// incoming partition must not be preempted by the check before it runs (a first check at
/// 30 us tripled the `partita bench pcs` median, docs/scheduling.md "Signal gate").
const CHASE_FIRST_NS: i64 = 200_000;
/// Longest pause between two checks of a chased stop.
const CHASE_MAX_NS: i64 = 1_000_000;

/// Confirms the stops of gates that ask for it ([`crate::backend::interface::PartitionGate::chased`]) soon
/// after the boundary rather than at the core's next one, so that a stop a partition undid
/// (a SIGCONT between its processes) is enforced again soon: checks after 200 us, then at
/// doubling intervals up to 1 ms, until every such stop is confirmed or
/// `until` (the next preparation) comes.
fn chase_stops(state: &RunState, core: usize, pending: &mut Vec<PendingStop>, open_here: Option<usize>, clock: &dyn Clock, until: i64) {
    let mut step = CHASE_FIRST_NS;
    while pending.iter().any(|s| state.partitions[s.partition].gate.chased()) {
        let at = clock.now_ns() + step;
        if at >= until {
            return;
        }
        clock.sleep_until(at);
        confirm_stops(state, core, pending, open_here, clock);
        step = (step * 2).min(CHASE_MAX_NS);
    }
}

/// Opens partition `p`'s window on `core`: arms its probe and releases it if no other core
/// has it open. Returns whether it was released here (false: it was already running).
fn enter(state: &RunState, core: usize, p: usize, planned: i64, end: i64) -> bool {
    let run = &state.partitions[p];
    if !arm_probe(state, core, p, planned, end) {
        return true;
    }
    let first = run.active_cores.fetch_add(1, Ordering::AcqRel) == 0;
    if let Some(gate) = run.gate.core(core) {
        if let Err(e) = gate.release() {
            crate::warn_line!("partita: cannot release partition {} on core {core}: {e}", state.plan.partitions[p].name);
        }
        return true;
    }
    if first {
        if let Err(e) = run.gate.release() {
            crate::warn_line!("partita: cannot release partition {}: {e}", state.plan.partitions[p].name);
        }
        return true;
    }
    false
}

/// Arms partition `p`'s window-start probe on `core` for the window planned at `planned`;
/// false (nothing done) when the partition is not active.
fn arm_probe(state: &RunState, core: usize, p: usize, planned: i64, end: i64) -> bool {
    let run = &state.partitions[p];
    if run.state.load(Ordering::Acquire) != partition_state::ACTIVE {
        return false;
    }
    if let Some(i) = probe_slot(state, p, core) {
        let probe = &run.control.block().probes[i];
        probe.window_end_ns.store(end, Ordering::Release);
        probe.planned_ns.store(planned, Ordering::Release);
        // A frozen probe thread restarts its futex wait when thawed and sees the new value.
        probe.wake.fetch_add(1, Ordering::Release);
        run.pending_probe[core].store(planned, Ordering::Release);
    }
    true
}

/// Closes partition `p`'s window on `core` and requests its stop there (gated per core), or
/// as a whole unless another core still has it open; `due`: the window's planned end (the
/// core guard holds a blocked write no later than then). Returns when the stop was issued and
/// took effect.
fn leave(state: &RunState, core: usize, p: usize, clock: &dyn Clock, due: Option<i64>) -> Option<StopIssue> {
    let run = &state.partitions[p];
    // Saturating: an inactive partition was never counted in.
    let before = run.active_cores.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).unwrap_or(0);
    let gate = match run.gate.core(core) {
        // Stopped here even if it never ran (inactive): its core cgroup was thawed at enter.
        Some(gate) => gate,
        None if before != 1 => return None,
        None => &*run.gate,
    };
    // A write blocked in the kernel must not leave the partition running (guard.rs).
    let guard = state.guards.get(core).and_then(Option::as_ref);
    let asked = clock.now_ns();
    match (guard, due) {
        (Some(g), Some(due)) => g.arm_by(p, asked, due),
        (Some(g), None) => g.arm(p),
        _ => {}
    }
    let stopped = gate.request_stop();
    let done = clock.now_ns();
    let held = guard.and_then(|g| g.disarm(gate));
    if let Some(h) = held {
        crate::warn_line!(
            "partita: warning: core {core}: the stop of partition {} blocked in the kernel for {:.3} ms; the core guard had stopped its {} threads (SIGSTOP) {:.3} ms after the request",
            state.plan.partitions[p].name,
            (done - asked) as f64 / 1e6,
            h.threads,
            (h.at_ns - asked) as f64 / 1e6
        );
    }
    match stopped {
        // Held: the partition stopped when the guard's signals were sent.
        Ok(()) => Some(StopIssue { issued: asked, returned: done, held: held.map(|h| h.at_ns) }),
        Err(e) => {
            crate::warn_line!("partita: cannot stop partition {}: {e}", state.plan.partitions[p].name);
            None
        }
    }
}

/// Index of `core` among the partition's cores (its probe slot).
fn probe_slot(state: &RunState, p: usize, core: usize) -> Option<usize> {
    state.plan.partitions[p].cores.iter().position(|&c| c as usize == core).filter(|&i| i < partita_abi::MAX_CORES)
}

/// After a window: if the partition's probe ran for that window start, record when.
fn report_probe(state: &RunState, core: usize, p: usize, planned: i64, clock: &dyn Clock) {
    let run = &state.partitions[p];
    if run.pending_probe[core].swap(0, Ordering::AcqRel) != planned {
        return;
    }
    let Some(i) = probe_slot(state, p, core) else { return };
    let probe = &run.control.block().probes[i];
    let running = probe.running_ns.load(Ordering::Acquire);
    let planned_shared = probe.planned_ns.load(Ordering::Acquire);
    // Read after `running`: a correct probe thread never stored a later instant.
    let now = clock.now_ns();
    match partita_abi::untrusted::probe(planned, planned_shared, running, now) {
        Ok(Some(running)) => state.emit(
            core,
            Event::PartitionRunning {
                t: state.rel(running),
                core: core as u32,
                partition: state.plan.partitions[p].id,
                planned: state.rel(planned),
            },
        ),
        Ok(None) => {}
        // The lifecycle thread reports it (trace event, health monitor).
        Err(g) => run.probe_garbage.note(&g),
    }
}

/// Core 0 publishes a schedule change to every partition and the trace.
fn publish_schedule(state: &RunState, from: usize, to: usize, at: i64) {
    let plan = &state.plan;
    state.schedule_started_ns.store(at, Ordering::Release);
    state.schedule.store(to, Ordering::Release);
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
    state.emit(0, Event::ScheduleChange { t: state.rel(at), from: plan.schedules[from].id, to: plan.schedules[to].id });
}

#[cfg(test)]
mod tests {
    use super::Margin;

    #[test]
    fn margin_settles_where_nine_in_ten_preparations_fit() {
        let mut m = Margin::new(100_000, 30_000);
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut fit = 0;
        for i in 0..40_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Preparations of 40..130 us, uniform.
            let need = 40_000 + (x % 90_000) as i64;
            if i >= 20_000 && need <= m.get() {
                fit += 1;
            }
            m.record(need);
        }
        let share = fit as f64 / 20_000.0;
        assert!((0.85..=0.95).contains(&share), "{share}");
    }

    #[test]
    fn margin_stays_within_its_bounds() {
        let mut m = Margin::new(100_000, 30_000);
        for _ in 0..1_000 {
            m.record(0);
        }
        assert_eq!(m.get(), 30_000);
        for _ in 0..1_000 {
            m.record(10_000_000);
        }
        assert_eq!(m.get(), Margin::CEILING);
    }
}
