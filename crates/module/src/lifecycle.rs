//! The lifecycle thread: everything that happens between window boundaries. It waits (epoll)
//! on the partitions' output pipes, doorbells (requests: restart, idle, schedule change) and
//! the descriptors their backend gives for a start decided and a program ended
//! (`backend::interface::Started`: exec-status pipes and pidfds in the process backend); it
//! starts, kills and reaps them only through `backend::interface::Partition`. Every few
//! milliseconds it drains the scheduler and partition events into the trace. It also carries
//! out the health monitor's actions (`hm` decides them) on errors the partitions report,
//! programs that end, and errors injected with `partita run --inject`.

use crate::backend::interface::{Partition, StartCheck, StartContext};
use crate::backend::sys::{self, cvt};
use crate::hm::{Action, HmTables, code_name, level_name};
use crate::output::PartitionOutput;
use crate::partition_events::{mode_name, start_condition_name};
use crate::run_state::{RunState, partition_state};
use partita_abi::untrusted::{self, Request};
use partita_abi::{HmReport, mode, start_condition, system_state};
use partita_trace::Event;
use partita_trace::stream::SummaryBuilder;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

mod shm;

/// Where events go: the trace file (if any), written as the events are drained, and the run
/// summary, built event by event in bounded memory (`partita_trace::stream`): the module keeps
/// no event, so its memory does not grow with the length of the run (docs/trace.md).
pub struct EventSink {
    pub file: Option<io::BufWriter<File>>,
    pub summary: SummaryBuilder,
}

impl EventSink {
    pub fn push(&mut self, e: Event) {
        if let Some(f) = &mut self.file
            && let Err(err) = e.write_line(f)
        {
            crate::warn_line!("partita: cannot write the trace: {err}; it stops here");
            self.file = None;
        }
        self.summary.push(&e);
    }
}

/// What the lifecycle thread needs to (re)start one partition: its backend's handle, and the
/// module's side (doorbell, output log).
pub struct Launch {
    pub name: String,
    pub id: u32,
    /// The backend's handle: starts, kills and reaps the partition's program.
    pub partition: Box<dyn Partition>,
    pub doorbell: OwnedFd,
    pub log: Option<PathBuf>,
}

/// An error to raise as if detected (`partita run --inject PARTITION:CODE@TIME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    /// Index of the partition in the plan.
    pub partition: usize,
    pub code: u32,
    /// ns since the module epoch.
    pub at_ns: i64,
}

/// Bits of [`HmReport::to_handler`].
const TO_HANDLER: u32 = 1;
const INJECTED: u32 = 2;

struct Live {
    stdout: Option<File>,
    stderr: Option<File>,
    out: PartitionOutput,
    err: PartitionOutput,
    /// The module killed it on purpose (restart, idle, shutdown): its exit is not a fault.
    expected_exit: bool,
    exec_checked: bool,
    /// The running program's descriptors (`Started::ended`, `Started::start_status`), to stop
    /// watching them before the backend closes them.
    ended_fd: RawFd,
    start_fd: RawFd,
}

const STDOUT: u64 = 0;
const STDERR: u64 = 1;
const DOORBELL: u64 = 2;
const PIDFD: u64 = 3;
const EXEC: u64 = 4;
const KINDS: u64 = 8;
const WAKE: u64 = u64::MAX;
/// How often pending events are moved to the trace when nothing else wakes the thread: rare,
/// because each wake-up preempts a partition (the queues hold seconds of events).
const DRAIN_MS: i32 = 100;
/// The longest the end of the run waits for one partition's threads to die.
pub const SHUTDOWN_KILL_WAIT: Duration = Duration::from_secs(2);

pub struct Lifecycle<'a> {
    state: &'a RunState,
    launches: Vec<Launch>,
    live: Vec<Live>,
    epoll: OwnedFd,
    /// Written by the run's owner to end the thread.
    pub wake: OwnedFd,
    sink: EventSink,
    console: Box<dyn Write + Send + 'a>,
    hm: HmTables,
    /// Pending injections, latest first.
    injections: Vec<Injection>,
    /// Per partition: an HM action waiting for the partition's next window (see `act_pending`).
    pending: Vec<Option<Action>>,
    /// Per partition: the module's own view of its shared memory (see `shm`).
    guards: Vec<shm::Guard>,
}

fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain eventfd creation; the result is checked and owned.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
    // SAFETY: fd is a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A doorbell for a partition (fd 4 of its program).
pub fn doorbell() -> io::Result<OwnedFd> {
    eventfd()
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor we own; failure only leaves it blocking.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

impl<'a> Lifecycle<'a> {
    pub fn new(
        state: &'a RunState,
        launches: Vec<Launch>,
        sink: EventSink,
        console: Box<dyn Write + Send + 'a>,
        hm: HmTables,
        mut injections: Vec<Injection>,
    ) -> io::Result<Lifecycle<'a>> {
        injections.sort_by_key(|j| std::cmp::Reverse(j.at_ns));
        // SAFETY: epoll_create1 with a valid flag; checked and owned below.
        let ep = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: fresh descriptor.
        let epoll = unsafe { OwnedFd::from_raw_fd(ep) };
        let wake = eventfd()?;
        let live = launches
            .iter()
            .map(|l| {
                Ok(Live {
                    stdout: None,
                    stderr: None,
                    out: PartitionOutput::new(&l.name, l.log.as_deref())?,
                    err: PartitionOutput::new(&l.name, l.log.as_deref())?,
                    expected_exit: false,
                    exec_checked: false,
                    ended_fd: -1,
                    start_fd: -1,
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let pending = vec![None; launches.len()];
        let now = crate::backend::rt::now_ns();
        let guards = launches.iter().map(|_| shm::Guard::new(now)).collect();
        let lc = Lifecycle { state, launches, live, epoll, wake, sink, console, hm, injections, pending, guards };
        lc.watch(lc.wake.as_raw_fd(), WAKE)?;
        for (i, l) in lc.launches.iter().enumerate() {
            lc.watch(l.doorbell.as_raw_fd(), i as u64 * KINDS + DOORBELL)?;
        }
        Ok(lc)
    }

    fn watch(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLHUP) as u32, u64: token };
        // SAFETY: both descriptors are open; `ev` is a valid epoll_event.
        cvt(unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) }).map(|_| ())
    }

    fn unwatch(&self, fd: RawFd) {
        // SAFETY: removing a descriptor from our epoll set; errors are harmless here.
        unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut()) };
    }

    pub fn emit(&mut self, e: Event) {
        self.sink.push(e);
    }

    /// Starts partition `i`'s program, held by its gate: it runs from its next window.
    pub fn start(&mut self, i: usize) -> Result<(), String> {
        let Launch { partition, doorbell, .. } = &mut self.launches[i];
        let ctx = StartContext { control: &self.state.partitions[i].control, doorbell: doorbell.as_fd(), cancel: self.wake.as_fd() };
        let started = partition.start(ctx)?;
        // The previous program's pipes, if still open (see `close_output`).
        self.close_output(i, STDOUT);
        self.close_output(i, STDERR);
        let (stdout, stderr) = (started.stdout.as_raw_fd(), started.stderr.as_raw_fd());
        set_nonblocking(stdout);
        set_nonblocking(stderr);
        // Recorded before they are watched: a later kill or restart unwatches these, even if a
        // watch below fails (the program then stays held until its partition is restarted or
        // the run ends).
        let live = &mut self.live[i];
        live.stdout = Some(started.stdout);
        live.stderr = Some(started.stderr);
        live.ended_fd = started.ended;
        live.start_fd = started.start_status;
        live.expected_exit = false;
        live.exec_checked = false;
        self.watch(stdout, i as u64 * KINDS + STDOUT).map_err(|e| e.to_string())?;
        self.watch(stderr, i as u64 * KINDS + STDERR).map_err(|e| e.to_string())?;
        self.watch(started.ended, i as u64 * KINDS + PIDFD).map_err(|e| e.to_string())?;
        self.watch(started.start_status, i as u64 * KINDS + EXEC).map_err(|e| e.to_string())?;
        self.state.partitions[i].state.store(partition_state::ACTIVE, Ordering::Release);
        Ok(())
    }

    /// Marks a partition that could not start: its windows pass unused.
    pub fn fail(&mut self, i: usize, reason: String) {
        crate::warn_line!(
            "partita: partition {} cannot run: {reason}; the module keeps the other partitions' windows",
            self.launches[i].name
        );
        self.state.partitions[i].state.store(partition_state::DEAD, Ordering::Release);
        let t = self.state.rel(crate::backend::rt::now_ns());
        self.emit(Event::PartitionExit { t, partition: self.launches[i].id, reason });
    }

    /// Runs until the owner writes to `wake`; then stops every partition and drains.
    pub fn run(mut self) -> EventSink {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 32];
        loop {
            // SAFETY: `events` is a valid buffer of 32 entries.
            let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), events.as_mut_ptr(), events.len() as i32, self.timeout_ms()) };
            let mut quit = false;
            for ev in events.iter().take(n.max(0) as usize) {
                let token = ev.u64;
                if token == WAKE {
                    quit = true;
                    continue;
                }
                let (i, kind) = ((token / KINDS) as usize, token % KINDS);
                match kind {
                    STDOUT | STDERR => self.read_output(i, kind),
                    DOORBELL => self.handle_request(i),
                    EXEC => self.check_exec(i),
                    PIDFD => self.reap(i),
                    _ => {}
                }
            }
            self.inject_due();
            for i in 0..self.launches.len() {
                self.drain_hm(i);
            }
            self.act_pending();
            self.drain();
            if quit {
                break;
            }
        }
        self.shutdown();
        self.sink
    }

    fn read_output(&mut self, i: usize, kind: u64) {
        let live = &mut self.live[i];
        let (file, out) = if kind == STDOUT { (&mut live.stdout, &mut live.out) } else { (&mut live.stderr, &mut live.err) };
        let Some(f) = file else { return };
        let mut buf = [0u8; 8192];
        let ended = loop {
            match f.read(&mut buf) {
                Ok(0) => {
                    let _ = out.finish(&mut self.console);
                    break true;
                }
                Ok(n) => {
                    let _ = out.feed(&buf[..n], &mut self.console);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break true,
            }
        };
        if ended {
            self.close_output(i, kind);
        }
    }

    /// Stops watching one of partition `i`'s output pipes, then closes it. Unwatched first:
    /// closing our descriptor does not remove the pipe from the epoll set while another
    /// descriptor of it is open, and one is whenever a partition program is between its clone
    /// and its execve (it holds a copy of the module's descriptor table); its end of file would
    /// then wake this thread at once, for ever (a busy loop at the lifecycle's priority that
    /// held a CPU from the start of a run with a kvm partition, whose stderr pipe ends at once).
    fn close_output(&mut self, i: usize, kind: u64) {
        let live = &mut self.live[i];
        let file = if kind == STDOUT { live.stdout.take() } else { live.stderr.take() };
        if let Some(f) = file {
            self.unwatch(f.as_raw_fd());
        }
    }

    fn check_exec(&mut self, i: usize) {
        if self.live[i].exec_checked || !self.launches[i].partition.is_running() {
            return;
        }
        match self.launches[i].partition.check_start() {
            StartCheck::Started => {
                self.live[i].exec_checked = true;
                self.unwatch(self.live[i].start_fd);
            }
            StartCheck::Failed(reason) => {
                // The backend has killed it; its end is reaped as expected.
                self.live[i].exec_checked = true;
                self.unwatch(self.live[i].start_fd);
                self.live[i].expected_exit = true;
                self.fail(i, reason);
            }
            StartCheck::Pending => {}
        }
    }

    /// A partition program ended.
    fn reap(&mut self, i: usize) {
        if !self.launches[i].partition.is_running() {
            return;
        }
        self.unwatch(self.live[i].ended_fd);
        let Some(ended) = self.launches[i].partition.reap() else { return };
        // Output written just before the end is still shown.
        self.read_output(i, STDOUT);
        self.read_output(i, STDERR);
        let name = self.launches[i].name.clone();
        if self.live[i].expected_exit {
            return;
        }
        // Errors it reported before it ended come first.
        self.drain_hm(i);
        if self.launches[i].partition.is_running() {
            return; // the health monitor already restarted it
        }
        let reason = ended.reason;
        let _ = writeln!(self.console, "partita: partition {name} ended ({reason}); the health monitor decides what follows");
        self.state.partitions[i].state.store(partition_state::DEAD, Ordering::Release);
        let t = self.state.rel(crate::backend::rt::now_ns());
        self.emit(Event::PartitionExit { t, partition: self.launches[i].id, reason: reason.clone() });
        let state = self.system_state(i);
        self.module_error(i, 0, state, ended.code, true, &format!("program {reason}"));
    }

    /// How long the thread may wait: until the next injection, at most [`DRAIN_MS`]; 1 ms
    /// while an HM action waits for a window.
    fn timeout_ms(&self) -> i32 {
        if self.pending.iter().any(Option::is_some) {
            return 1;
        }
        match self.injections.last() {
            Some(j) => {
                let left = j.at_ns - self.state.rel(crate::backend::rt::now_ns());
                ((left.max(0) + 999_999) / 1_000_000).min(DRAIN_MS as i64) as i32
            }
            None => DRAIN_MS,
        }
    }

    /// The HM system state of partition `i` now.
    fn system_state(&self, i: usize) -> u32 {
        let m = self.state.partitions[i].control.block().status.operating_mode.load(Ordering::Acquire);
        if m == mode::NORMAL { system_state::PARTITION_EXECUTION } else { system_state::PARTITION_INIT }
    }

    /// Raises the injections that are due.
    fn inject_due(&mut self) {
        let now = self.state.rel(crate::backend::rt::now_ns());
        while self.injections.last().is_some_and(|j| j.at_ns <= now) {
            let Some(j) = self.injections.pop() else { break };
            let (i, code) = (j.partition, j.code);
            let state = self.system_state(i);
            let running = self.launches[i].partition.is_running();
            if running && state == system_state::PARTITION_EXECUTION && self.hm.is_process_level(state, code) {
                // Its runtime takes it at its next window start: the error handler, if any.
                let block = self.state.partitions[i].control.block();
                block.hm.injected.fetch_or(1 << code, Ordering::AcqRel);
                self.guards[i].note_injected(code);
            } else {
                self.module_error(i, 0, state, code, !running, "injected");
            }
        }
    }

    /// Handles the errors partition `i` reported.
    fn drain_hm(&mut self, i: usize) {
        // Taken all at once (checked): the actions only queue up (`defer`), so no restart
        // re-initializes the ring while these are handled.
        for r in self.take_hm_reports(i) {
            self.report(i, r);
        }
    }

    fn report(&mut self, i: usize, r: HmReport) {
        let source = if r.to_handler & INJECTED != 0 { "injected" } else { "detected" };
        if r.to_handler & TO_HANDLER != 0 {
            self.emit(Event::HmEvent {
                t: r.t_ns,
                partition: self.launches[i].id,
                process: r.process as i64,
                code: code_name(r.code).into(),
                level: "PROCESS".into(),
                action: Action::ErrorHandler.as_str().into(),
                source: source.into(),
            });
            return;
        }
        let state = if r.state == system_state::PARTITION_INIT { r.state } else { system_state::PARTITION_EXECUTION };
        self.module_error(i, r.process, state, r.code, false, source);
    }

    /// Decides and carries out the action for an error of partition `i` (`process` 0: none).
    fn module_error(&mut self, i: usize, process: i32, state: u32, code: u32, no_process: bool, source: &str) {
        let id = self.launches[i].id;
        let d = self.hm.decide(id, state, code, no_process);
        let t = self.state.rel(crate::backend::rt::now_ns());
        self.emit(Event::HmEvent {
            t,
            partition: id,
            process: process as i64,
            code: code_name(code).into(),
            level: level_name(d.level).into(),
            action: d.action.as_str().into(),
            source: source.into(),
        });
        match d.action {
            Action::Ignore | Action::ErrorHandler => {}
            Action::Idle | Action::WarmStart | Action::ColdStart => self.defer(i, d.action),
            Action::Shutdown => {
                let _ = writeln!(
                    self.console,
                    "partita: the health monitor shuts the module down ({} in partition {})",
                    code_name(code),
                    self.launches[i].name
                );
                self.state.module_fault.store(true, Ordering::Release);
                self.state.stop.store(true, Ordering::Release);
            }
            Action::Reset => {
                for p in 0..self.launches.len() {
                    self.defer(p, Action::Reset);
                }
            }
        }
    }

    /// Queues an action on partition `i`'s program. It is carried out inside the partition's
    /// next window: a program is killed and started again while its cgroup is thawed (a frozen
    /// program cannot die nor start), and the other partitions' windows are not touched. A
    /// partition that is not running gets its windows back so that it can be started in them.
    fn defer(&mut self, i: usize, action: Action) {
        // A stronger action replaces a weaker one (a restart over IDLE, a RESET over both).
        let rank = |a: Option<Action>| match a {
            None => 0,
            Some(Action::Idle) => 1,
            Some(Action::WarmStart) => 2,
            Some(Action::ColdStart) => 3,
            Some(_) => 4,
        };
        if rank(Some(action)) < rank(self.pending[i]) {
            return;
        }
        self.pending[i] = Some(action);
        let run = &self.state.partitions[i];
        if action != Action::Idle && run.state.load(Ordering::Acquire) != partition_state::ACTIVE {
            run.state.store(partition_state::ACTIVE, Ordering::Release);
        }
    }

    /// Carries out the queued actions of partitions whose window is open now.
    fn act_pending(&mut self) {
        for i in 0..self.pending.len() {
            let Some(action) = self.pending[i] else { continue };
            let run = &self.state.partitions[i];
            let idle_now = action == Action::Idle && run.state.load(Ordering::Acquire) != partition_state::ACTIVE;
            if run.active_cores.load(Ordering::Acquire) == 0 && !idle_now {
                continue;
            }
            self.pending[i] = None;
            match action {
                Action::Idle => self.idle(i),
                Action::WarmStart => self.restart(i, mode::WARM_START, start_condition::HM_PARTITION_RESTART),
                Action::ColdStart => self.restart(i, mode::COLD_START, start_condition::HM_PARTITION_RESTART),
                _ => self.restart(i, mode::COLD_START, start_condition::HM_MODULE_RESTART),
            }
        }
    }

    fn handle_request(&mut self, i: usize) {
        let mut counter = [0u8; 8];
        // SAFETY: reading the 8-byte eventfd counter into a valid buffer.
        let _ = unsafe { libc::read(self.launches[i].doorbell.as_raw_fd(), counter.as_mut_ptr().cast(), 8) };
        let block = self.state.partitions[i].control.block();
        let seq = block.request.seq.load(Ordering::Acquire);
        if seq == block.request.done.load(Ordering::Acquire) {
            return;
        }
        let kind = block.request.kind.load(Ordering::Acquire);
        let arg = block.request.arg.load(Ordering::Acquire);
        block.request.done.store(seq, Ordering::Release);
        let plan = &self.state.plan;
        match untrusted::request(kind, arg, |id| plan.schedule_index(id).is_some()) {
            Err(g) => self.garbage(i, g, 0),
            Ok(Request::SetMode(m)) => self.set_mode(i, m),
            Ok(Request::SetModuleSchedule(arg)) => {
                let current = self.state.schedule.load(Ordering::Acquire);
                match plan.schedule_index(arg) {
                    // The runtime refuses it with INVALID_CONFIG; a request posted anyway is not obeyed.
                    Some(_) if !plan.schedules[current].may_set_schedule[i] => {
                        crate::warn_line!(
                            "partita: partition {} may not set the module schedule (SetModuleSchedule); ignored",
                            self.launches[i].name
                        )
                    }
                    Some(index) => {
                        self.state.request_schedule(index, crate::backend::rt::now_ns(), crate::scheduler::Margin::CEILING + 1_000_000);
                        for p in &self.state.partitions {
                            p.control.block().schedule.next_id.store(arg, Ordering::Release);
                        }
                    }
                    None => {}
                }
            }
        }
    }

    /// SET_PARTITION_MODE(IDLE | COLD_START | WARM_START): stop the program; restart it or not.
    fn set_mode(&mut self, i: usize, new_mode: u32) {
        match new_mode {
            mode::IDLE => self.idle(i),
            mode::COLD_START | mode::WARM_START => self.restart(i, new_mode, start_condition::PARTITION_RESTART),
            other => crate::warn_line!("partita: partition {} asked for mode {other}; ignored", self.launches[i].name),
        }
    }

    /// Stops partition `i`'s program for good: IDLE mode, its windows pass unused.
    fn idle(&mut self, i: usize) {
        let block = self.state.partitions[i].control.block();
        let from = block.status.operating_mode.load(Ordering::Acquire);
        self.kill(i);
        let t = self.state.rel(crate::backend::rt::now_ns());
        self.emit(Event::ModeChange { t, partition: self.launches[i].id, from: mode_name(from).into(), to: mode_name(mode::IDLE).into() });
        block.status.operating_mode.store(mode::IDLE, Ordering::Release);
        self.state.partitions[i].state.store(partition_state::IDLE, Ordering::Release);
    }

    /// Starts partition `i`'s program again in `new_mode` (COLD_START or WARM_START).
    fn restart(&mut self, i: usize, new_mode: u32, condition: u32) {
        let id = self.launches[i].id;
        let block = self.state.partitions[i].control.block();
        let from = block.status.operating_mode.load(Ordering::Acquire);
        self.kill(i);
        let t = self.state.rel(crate::backend::rt::now_ns());
        self.emit(Event::ModeChange { t, partition: id, from: mode_name(from).into(), to: mode_name(new_mode).into() });
        block.status.operating_mode.store(new_mode, Ordering::Release);
        block.status.start_condition.store(condition, Ordering::Release);
        block.status.restarts.fetch_add(1, Ordering::AcqRel);
        block.trace.init();
        block.hm.reports.init();
        self.guards[i].rings_reset();
        block.hm.injected.store(0, Ordering::Release);
        self.emit(Event::PartitionRestart {
            t,
            partition: id,
            mode: mode_name(new_mode).into(),
            start_condition: start_condition_name(condition).into(),
        });
        if let Err(reason) = self.start(i) {
            // A restart cut short by the module's end is no failure of the partition.
            if !sys::poll_one(self.wake.as_fd(), libc::POLLIN, 0).unwrap_or(false) {
                self.fail(i, reason);
            }
        }
    }

    /// Kills partition `i`'s program and waits until it is gone; its output is drained.
    fn kill(&mut self, i: usize) {
        let running = self.launches[i].partition.is_running();
        if running {
            self.live[i].expected_exit = true;
            self.unwatch(self.live[i].ended_fd);
        }
        self.launches[i].partition.kill();
        if !running {
            return;
        }
        self.read_output(i, STDOUT);
        self.read_output(i, STDERR);
        // Events the program pushed before it died.
        self.drain();
    }

    /// Moves every pending event into the sink.
    fn drain(&mut self) {
        for q in &self.state.core_events {
            while let Some(e) = q.pop() {
                self.sink.push(e);
            }
        }
        for i in 0..self.state.partitions.len() {
            self.drain_trace_ring(i);
            self.check_words(i);
        }
        let _ = self.console.flush();
    }

    fn shutdown(&mut self) {
        for run in &self.state.partitions {
            run.control.block().status.module_running.store(0, Ordering::Release);
        }
        // Every partition demoted and killed first, then each waited for: a dying thread needs
        // its CPU to finish dying, and a partition still running at its real-time priority on
        // that CPU (not yet killed, its window open at the end) would keep it from it until
        // kill_all's timeout.
        for l in &self.launches {
            l.partition.kill_now();
        }
        for i in 0..self.live.len() {
            self.launches[i].partition.kill_all(SHUTDOWN_KILL_WAIT);
            self.kill(i);
        }
        self.drain();
    }
}
