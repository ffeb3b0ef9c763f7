//! The scheduler loop on a virtual clock with gates that record every stop and release:
//! windows in order, never two partitions released at once on a core, stops before releases,
//! frame limits, and a module schedule change taking effect at a major frame boundary.

use partita_config::check_text;
use partita_module::backend::interface::PartitionGate;
use partita_module::control::SharedControl;
use partita_module::plan::Plan;
use partita_module::run_state::{PartitionRun, RunState};
use partita_module::scheduler::{Clock, run_core};
use partita_trace::Event;
use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct VirtualClock {
    now: AtomicI64,
    /// Time each reading of the clock moves it on (the work between readings), 0 for none.
    tick: i64,
}

impl Clock for VirtualClock {
    fn now_ns(&self) -> i64 {
        self.now.fetch_add(self.tick, Ordering::SeqCst) + self.tick
    }
    fn sleep_until(&self, t: i64) {
        self.now.fetch_max(t, Ordering::SeqCst);
    }
    fn spin_until(&self, t: i64) -> i64 {
        self.now.fetch_max(t, Ordering::SeqCst);
        self.now_ns()
    }
    fn wake(&self, _word: &AtomicU32) {}
}

type Log = Arc<Mutex<Vec<(i64, u32, &'static str)>>>;

struct RecordingGate {
    partition: u32,
    clock: Arc<VirtualClock>,
    log: Log,
    /// Also log each check of a stop ("check").
    checks: bool,
}

impl PartitionGate for RecordingGate {
    fn request_stop(&self) -> std::io::Result<()> {
        self.log.lock().unwrap().push((self.clock.now_ns(), self.partition, "stop"));
        Ok(())
    }
    fn is_stopped(&self) -> std::io::Result<bool> {
        if self.checks {
            self.log.lock().unwrap().push((self.clock.now_ns(), self.partition, "check"));
        }
        Ok(true)
    }
    fn release(&self) -> std::io::Result<()> {
        self.log.lock().unwrap().push((self.clock.now_ns(), self.partition, "release"));
        Ok(())
    }
    fn mechanism(&self) -> &'static str {
        "recording"
    }
}

const MODULE: &str = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="A" pt:Executable="a"/>
  <Partition PartitionIdentifier="2" PartitionName="B" pt:Executable="b"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="one" MajorFrameSeconds="0.02" InitialModuleSchedule="true">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0.005">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0.01" WindowDurationSeconds="0.005"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Module_Schedule ScheduleIdentifier="2" ScheduleName="two" MajorFrameSeconds="0.01">
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.01" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>"#;

const EPOCH: i64 = 1_000_000_000;
/// Boundaries are prepared this long before they are due.
const EARLY: i64 = 50_000;

fn setup(frames: u64) -> (RunState, Arc<VirtualClock>, Log) {
    setup_with(MODULE, frames, 0)
}

/// `module` run for `frames` frames on a clock that moves `tick` ns per reading.
fn setup_with(module: &str, frames: u64, tick: i64) -> (RunState, Arc<VirtualClock>, Log) {
    setup_logging(module, frames, tick, false)
}

/// [`setup_with`]; `checks`: the gates also log each check of a stop.
fn setup_logging(module: &str, frames: u64, tick: i64, checks: bool) -> (RunState, Arc<VirtualClock>, Log) {
    let checked = check_text(module, Path::new("/nonexistent"));
    assert!(checked.is_valid(), "{:#?}", checked.diagnostics);
    let plan = Plan::new(checked.module.as_ref().unwrap());
    let clock = Arc::new(VirtualClock { tick, ..VirtualClock::default() });
    clock.now.store(EPOCH - 1_000_000, Ordering::SeqCst);
    let log: Log = Arc::default();
    let partitions = (0..plan.partitions.len())
        .map(|i| PartitionRun {
            control: SharedControl::create(&plan, i, EPOCH).unwrap(),
            gate: std::sync::Arc::new(RecordingGate { partition: plan.partitions[i].id, clock: clock.clone(), log: log.clone(), checks }),
            active_cores: AtomicU32::new(0),
            state: AtomicU32::new(0),
            pending_probe: (0..plan.cores.len()).map(|_| AtomicI64::new(0)).collect(),
            probe_garbage: Default::default(),
        })
        .collect();
    let mut state = RunState::new(plan, EPOCH, partitions, frames, i64::MAX);
    state.early_wake_ns = EARLY;
    (state, clock, log)
}

/// The same actions in the same order, each taken in the margin before its boundary (while the
/// scheduler holds the core), never after it.
#[track_caller]
fn assert_actions(log: &[(i64, u32, &'static str)], expected: &[(i64, u32, &'static str)]) {
    let actions: Vec<(u32, &str)> = log.iter().map(|&(_, p, a)| (p, a)).collect();
    let wanted: Vec<(u32, &str)> = expected.iter().map(|&(_, p, a)| (p, a)).collect();
    assert_eq!(actions, wanted);
    for (&(t, ..), &(boundary, ..)) in log.iter().zip(expected) {
        assert!(t <= boundary && t >= boundary - EARLY, "action at {t} for the boundary at {boundary}");
    }
}

fn events(state: &RunState) -> Vec<Event> {
    std::iter::from_fn(|| state.core_events[0].pop()).collect()
}

#[test]
fn windows_run_in_order_and_never_overlap() {
    let (state, clock, log) = setup(3);
    assert_eq!(run_core(&state, 0, clock.as_ref()), 3);
    let log = log.lock().unwrap().clone();
    let ms = 1_000_000;
    let mut expected = Vec::new();
    for f in 0..3 {
        let base = EPOCH + f * 20 * ms;
        expected.extend([(base, 1, "release"), (base + 10 * ms, 1, "stop"), (base + 10 * ms, 2, "release"), (base + 15 * ms, 2, "stop")]);
    }
    assert_actions(&log, &expected);
    // Window starts carry planned times relative to the epoch, in order, and the scheduler
    // gave the core up exactly at the boundary (it spun to it).
    let starts: Vec<(i64, i64, u32)> = events(&state)
        .into_iter()
        .filter_map(|e| match e {
            Event::WindowStart { t, planned, partition, .. } => Some((t, planned, partition)),
            _ => None,
        })
        .collect();
    let planned: Vec<(i64, i64, u32)> =
        [(0, 1), (10, 2), (20, 1), (30, 2), (40, 1), (50, 2)].iter().map(|&(t, p)| (t * ms, t * ms, p)).collect();
    assert_eq!(starts, planned);
}

#[test]
fn a_requested_schedule_starts_at_a_frame_boundary() {
    let (state, clock, log) = setup(4);
    // Requested during frame 0: applies at the boundary of frame 1 (20 ms).
    state.request_schedule(1, EPOCH + 3_000_000, 1_000_000);
    assert_eq!(state.pending_at_ns.load(Ordering::SeqCst), EPOCH + 20_000_000);
    run_core(&state, 0, clock.as_ref());
    let log = log.lock().unwrap().clone();
    let ms = 1_000_000;
    // Frame 0 in schedule one, then frames of 10 ms in schedule two where only B runs.
    let e = EPOCH;
    assert_actions(
        &log[..5],
        &[(e, 1, "release"), (e + 10 * ms, 1, "stop"), (e + 10 * ms, 2, "release"), (e + 15 * ms, 2, "stop"), (e + 20 * ms, 2, "release")],
    );
    assert!(log[4..].iter().all(|&(_, p, _)| p == 2), "{log:?}");
    let ev = events(&state);
    assert!(ev.contains(&Event::ScheduleChange { t: 20 * ms, from: 1, to: 2 }), "{ev:?}");
    // The partitions see the new schedule and its start.
    let snap = state.partitions[1].control.block().schedule.read();
    assert_eq!((snap.current_id, snap.started_ns, snap.period_ns), (2, EPOCH + 20 * ms, 10 * ms));
}

#[test]
fn stop_request_ends_the_loop_and_stops_the_open_partition() {
    let (state, clock, log) = setup(0);
    state.stop.store(true, Ordering::SeqCst);
    assert_eq!(run_core(&state, 0, clock.as_ref()), 0);
    assert!(log.lock().unwrap().is_empty());
}

/// Two partitions filling a 2 ms frame: the end of the frame's last window and the start of the
/// next frame's first fall at the same instant.
const FILLED: &str = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="A" pt:Executable="a"/>
  <Partition PartitionIdentifier="2" PartitionName="B" pt:Executable="b"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="one" MajorFrameSeconds="0.002">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.002" PeriodDurationSeconds="0.001">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.001"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.002" PeriodDurationSeconds="0.001">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0.001" WindowDurationSeconds="0.001"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>"#;

#[test]
fn a_frame_boundary_is_prepared_once_and_the_margin_does_not_creep() {
    // Every clock reading takes 1 us: a preparation costs a few us, far below the margin.
    let frames = 500;
    let (state, clock, log) = setup_with(FILLED, frames, 1_000);
    assert_eq!(run_core(&state, 0, clock.as_ref()), frames);
    let log = log.lock().unwrap().clone();
    let ms = 1_000_000;
    let mut expected = vec![(EPOCH, 1, "release")];
    for f in 0..frames as i64 {
        let base = EPOCH + f * 2 * ms;
        expected.extend([(base + ms, 1, "stop"), (base + ms, 2, "release"), (base + 2 * ms, 2, "stop")]);
        if f + 1 < frames as i64 {
            expected.push((base + 2 * ms, 1, "release"));
        }
    }
    // Within the initial margin of their boundary in the last frame as in the first.
    assert_actions(&log, &expected);
}

const ALONE: &str = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="A" pt:Executable="a"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="one" MajorFrameSeconds="0.002">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.002" PeriodDurationSeconds="0.002">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.001"/>
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.001" WindowDurationSeconds="0.001"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>"#;

#[test]
fn a_partition_whose_windows_follow_each_other_keeps_running_across_them() {
    let (state, clock, log) = setup_with(ALONE, 3, 0);
    assert_eq!(run_core(&state, 0, clock.as_ref()), 3);
    // Released once, stopped once at the end of the run; every window still starts and ends.
    assert_eq!(log.lock().unwrap().iter().map(|&(_, p, a)| (p, a)).collect::<Vec<_>>(), vec![(1, "release"), (1, "stop")]);
    let ev = events(&state);
    let starts = ev.iter().filter(|e| matches!(e, Event::WindowStart { .. })).count();
    let ends = ev.iter().filter(|e| matches!(e, Event::WindowEnd { .. })).count();
    assert_eq!((starts, ends), (6, 6), "{ev:?}");
}

/// A stop is issued before the stops of earlier boundaries are checked (a check reads the
/// kernel's state and may be slow: issue 10's `late_issue` class), and each stop is traced with
/// its times in order.
#[test]
fn a_stop_is_issued_before_earlier_stops_are_checked_and_traced_with_its_times() {
    let (state, clock, log) = setup_logging(MODULE, 2, 1_000, true);
    run_core(&state, 0, clock.as_ref());
    let log = log.lock().unwrap().clone();
    let ms = 1_000_000;
    // At 15 ms B's window ends while A's stop of 10 ms is still to be checked.
    let at_15: Vec<(u32, &str)> =
        log.iter().filter(|(t, ..)| (EPOCH + 15 * ms - EARLY..=EPOCH + 15 * ms).contains(t)).map(|&(_, p, a)| (p, a)).collect();
    assert_eq!(at_15, [(2, "stop"), (1, "check")], "{log:?}");
    let times: Vec<Event> = events(&state).into_iter().filter(|e| matches!(e, Event::StopTimes { .. })).collect();
    assert_eq!(times.len(), 4, "A and B, two frames: {times:?}");
    for e in &times {
        let Event::StopTimes { planned_end, wake_planned, woke, issued, returned, held, effective, confirmed, .. } = *e else {
            unreachable!()
        };
        assert!(wake_planned < planned_end && wake_planned <= woke && woke <= issued && issued <= returned, "{e:?}");
        assert_eq!((held, effective), (None, returned), "{e:?}");
        assert!(confirmed.is_some_and(|c| c >= returned), "{e:?}");
    }
}
