//! The `a653rs` traits as implemented by `Partita`, in this test process run as a standalone
//! partition: the partition is an `a653rs` `Partition` started with `run()` on a helper thread
//! (its start function is the initialization process; `run` goes NORMAL and never returns);
//! a process created and started through a653rs' API does a time query, a buffer round trip,
//! blackboard, semaphore, event and mutex calls, raises an application error that the error
//! handler (created through a653rs) receives, and reports back through a channel. Return
//! codes of error cases are checked through both the prelude (`Error`) and the bindings
//! (`ErrorReturnCode`). Runs without real-time priorities too (no order is asserted).

use a653rs::bindings::{ApexBufferP1, ApexErrorP4, ApexProcessP1 as _, EmptyIndicator, ErrorReturnCode, MutexState, ProcessState};
use a653rs::prelude::*;
use core::str::FromStr;
use core::time::Duration;
use partita_apex::{Partita, a653rs};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex as StdMutex, OnceLock};

struct Objects {
    buffer: Buffer<Partita>,
    board: Blackboard<Partita>,
    sem: Semaphore<Partita>,
    event: Event<Partita>,
    mutex: Mutex<Partita>,
    worker: Process<Partita>,
    handled: Event<Partita>,
}

/// What the error handler saw: code, message, failed process.
type Seen = (ErrorCode, Vec<u8>, ProcessId);
static SEEN: StdMutex<Option<Seen>> = StdMutex::new(None);

extern "C" fn error_handler() {
    if let Ok(s) = Partita::error_status() {
        *SEEN.lock().unwrap() = Some((s.error_code, s.message[..s.length as usize].to_vec(), s.failed_process_id));
    }
    if let Some(o) = OBJECTS.get() {
        o.handled.set();
    }
}

static OBJECTS: OnceLock<Objects> = OnceLock::new();
static DONE: StdMutex<Option<Sender<Result<(), String>>>> = StdMutex::new(None);

fn name(s: &str) -> Name {
    Name::from_str(s).unwrap()
}

fn expect<T: std::fmt::Debug, E: std::fmt::Debug + PartialEq>(what: &str, got: Result<T, E>, want: E) -> Result<(), String> {
    match got {
        Err(e) if e == want => Ok(()),
        other => Err(format!("{what}: got {other:?}, want Err({want:?})")),
    }
}

fn check(what: &str, ok: bool) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what.to_string()) }
}

fn ms(n: u64) -> SystemTime {
    SystemTime::Normal(Duration::from_millis(n))
}

/// What the worker process checks, in NORMAL mode.
fn worker_scenario() -> Result<(), String> {
    let o = OBJECTS.get().ok_or("objects")?;
    let me = Process::<Partita>::get_self().map_err(|e| format!("GET_MY_ID: {e:?}"))?;
    check("GET_MY_ID is the created process", me.id() == o.worker.id())?;
    check("own state RUNNING", me.status().process_state == ProcessState::Running)?;
    check("GET_MY_INDEX", Process::<Partita>::get_my_index() == Ok(1))?;

    let t1 = Partita::get_time().unwrap_duration();
    Partita::timed_wait(Duration::from_millis(2)).map_err(|e| format!("TIMED_WAIT: {e:?}"))?;
    let t2 = Partita::get_time().unwrap_duration();
    check("TIMED_WAIT waits at least its delay", t2 >= t1 + Duration::from_millis(2))?;

    let mut msg = *b"ping";
    o.buffer.send(&mut msg, ms(0)).map_err(|e| format!("SEND_BUFFER: {e:?}"))?;
    check("one message queued", o.buffer.status().nb_message == 1)?;
    let mut room = [0u8; 16];
    let got = o.buffer.receive(&mut room, ms(0)).map_err(|e| format!("RECEIVE_BUFFER: {e:?}"))?;
    check("buffer round trip", got == b"ping")?;
    expect("RECEIVE_BUFFER on an empty buffer, no wait", o.buffer.receive(&mut room, ms(0)), Error::NotAvailable)?;
    expect("RECEIVE_BUFFER on an empty buffer, 1 ms", o.buffer.receive(&mut room, ms(1)), Error::TimedOut)?;
    // SAFETY: the slice is shorter than MAX_MESSAGE_SIZE; Partita refuses it (INVALID_PARAM)
    // rather than writing past its end, which is what this checks.
    let short = unsafe { o.buffer.receive_unchecked(ms(0), &mut room[..4]) };
    expect("RECEIVE_BUFFER into a slice shorter than MAX_MESSAGE_SIZE", short, Error::InvalidParam)?;

    o.board.display(b"board").map_err(|e| format!("DISPLAY_BLACKBOARD: {e:?}"))?;
    let mut room = [0u8; 8];
    check("blackboard read", o.board.read(ms(0), &mut room).map(|m| m.to_vec()) == Ok(b"board".to_vec()))?;
    check("blackboard occupied", o.board.status().empty_indicator == EmptyIndicator::Occupied)?;
    o.board.clear();
    expect("READ_BLACKBOARD of an empty board", o.board.read(ms(0), &mut room), Error::NotAvailable)?;

    o.sem.wait(ms(0)).map_err(|e| format!("WAIT_SEMAPHORE: {e:?}"))?;
    expect("WAIT_SEMAPHORE at 0, no wait", o.sem.wait(ms(0)), Error::NotAvailable)?;
    o.sem.signal().map_err(|e| format!("SIGNAL_SEMAPHORE: {e:?}"))?;
    expect("SIGNAL_SEMAPHORE at its maximum", o.sem.signal(), Error::NoAction)?;

    o.event.set();
    check("event up", o.event.status().event_state == EventState::Up)?;
    o.event.wait(ms(0)).map_err(|e| format!("WAIT_EVENT: {e:?}"))?;
    o.event.reset();
    expect("WAIT_EVENT down, 1 ms", o.event.wait(ms(1)), Error::TimedOut)?;

    o.mutex.acquire(ms(0)).map_err(|e| format!("ACQUIRE_MUTEX: {e:?}"))?;
    check("mutex owner", o.mutex.status().mutex_owner == me.id() && o.mutex.status().mutex_state == MutexState::Owned)?;
    check("process mutex state", me.get_process_mutex_state() == MutexOwnedStatus::Owned(o.mutex.id()))?;
    o.mutex.release().map_err(|e| format!("RELEASE_MUTEX: {e:?}"))?;
    check("no mutex owned", me.get_process_mutex_state() == MutexOwnedStatus::NoMutexOwned)?;
    expect("RELEASE_MUTEX not owned", o.mutex.release(), Error::InvalidMode)?;
    expect("PERIODIC_WAIT by an aperiodic process", Partita::periodic_wait(), Error::InvalidMode)?;

    expect("GET_ERROR_STATUS outside the handler", Partita::error_status(), Error::InvalidConfig)?;
    let other = <Partita as ApexErrorP4>::raise_application_error(ErrorCode::NumericError, b"x");
    expect("RAISE_APPLICATION_ERROR of another code", other, ErrorReturnCode::InvalidParam)?;
    <Partita as ApexErrorP4Ext>::raise_application_error(b"boom").map_err(|e| format!("RAISE_APPLICATION_ERROR: {e:?}"))?;
    o.handled.wait(SystemTime::Normal(Duration::from_secs(10))).map_err(|e| format!("the handler ran: {e:?}"))?;
    let seen = SEEN.lock().unwrap().clone();
    check(&format!("the handler's error status: {seen:?}"), seen == Some((ErrorCode::ApplicationError, b"boom".to_vec(), me.id())))
}

extern "C" fn worker() {
    let r = worker_scenario();
    if let Some(tx) = DONE.lock().unwrap().take() {
        let _ = tx.send(r);
    }
}

fn attribute(name_: &str, priority: Priority) -> ProcessAttribute {
    ProcessAttribute {
        period: SystemTime::Infinite,
        time_capacity: SystemTime::Infinite,
        entry_point: worker,
        stack_size: 0,
        base_priority: priority,
        deadline: Deadline::Soft,
        name: name(name_),
    }
}

/// The start function's checks and creations (COLD_START).
fn start(ctx: &mut StartContext<Partita>) -> Result<(), String> {
    let status = Tested::get_status();
    check("COLD_START at first", status.operating_mode == OperatingMode::ColdStart)?;
    check("a partition period", matches!(status.period, SystemTime::Normal(p) if !p.is_zero()))?;
    check("GET_TIME is finite", matches!(Partita::get_time(), SystemTime::Normal(_)))?;
    expect("GET_MY_ID of the initialization process", Process::<Partita>::get_self(), Error::InvalidMode)?;
    expect("priority 0", ctx.create_process(attribute("BAD", 0)), Error::InvalidParam)?;
    expect("unknown process name", Partita::get_process(name("NOPE")), Error::InvalidConfig)?;
    expect("the bindings' code for an id beyond 32 bits", Partita::get_buffer_status(1 << 40), ErrorReturnCode::InvalidParam)?;
    expect("the bindings' code for an unknown id", Partita::get_process_status(99), ErrorReturnCode::InvalidParam)?;

    let worker = ctx.create_process(attribute("WORKER", 10)).map_err(|e| format!("CREATE_PROCESS: {e:?}"))?;
    expect("duplicate process name", ctx.create_process(attribute("WORKER", 10)), Error::NoAction)?;
    let s = worker.status();
    check("created DORMANT", s.process_state == ProcessState::Dormant)?;
    check("attributes kept", s.attributes.name == name("WORKER") && s.attributes.base_priority == 10)?;
    check("found by name", Partita::get_process(name("WORKER")).map(|p| p.id()) == Ok(worker.id()))?;

    let buffer = ctx.create_buffer(name("B"), 16, 2, QueuingDiscipline::Fifo).map_err(|e| format!("CREATE_BUFFER: {e:?}"))?;
    expect("duplicate buffer", ctx.create_buffer(name("B"), 16, 2, QueuingDiscipline::Fifo), Error::NoAction)?;
    expect("MAX_MESSAGE_SIZE 0", ctx.create_buffer(name("Z"), 0, 2, QueuingDiscipline::Fifo), Error::InvalidParam)?;
    check("buffer by name", Partita::get_buffer(name("B")).map(|b| (b.id(), b.size(), b.range())) == Ok((buffer.id(), 16, 2)))?;
    let board = ctx.create_blackboard(name("K"), 8).map_err(|e| format!("CREATE_BLACKBOARD: {e:?}"))?;
    let sem = ctx.create_semaphore(name("S"), 1, 1, QueuingDiscipline::Priority).map_err(|e| format!("CREATE_SEMAPHORE: {e:?}"))?;
    let event = ctx.create_event(name("E")).map_err(|e| format!("CREATE_EVENT: {e:?}"))?;
    let mutex = ctx.create_mutex(name("M"), 30, QueuingDiscipline::Fifo).map_err(|e| format!("CREATE_MUTEX: {e:?}"))?;
    let pause = ErrorHandlerConcurrencyControl::ProcessesPause;
    expect("CONFIGURE_ERROR_HANDLER without a handler", ctx.configure_error_handler(pause, 0), Error::InvalidConfig)?;
    ctx.set_error_handler(error_handler, 64 * 1024).map_err(|e| format!("CREATE_ERROR_HANDLER: {e:?}"))?;
    expect("a second error handler", ctx.set_error_handler(error_handler, 64 * 1024), Error::NoAction)?;
    ctx.configure_error_handler(pause, 0).map_err(|e| format!("CONFIGURE_ERROR_HANDLER: {e:?}"))?;
    let handled = ctx.create_event(name("HANDLED")).map_err(|e| format!("CREATE_EVENT: {e:?}"))?;
    worker.start().map_err(|e| format!("START: {e:?}"))?;
    check("started, not DORMANT", worker.status().process_state != ProcessState::Dormant)?;
    OBJECTS.set(Objects { buffer, board, sem, event, mutex, worker, handled }).map_err(|_| "started twice")?;
    Ok(())
}

struct Tested;

impl Partition<Partita> for Tested {
    fn cold_start(&self, ctx: &mut StartContext<Partita>) {
        if let Err(e) = start(ctx)
            && let Some(tx) = DONE.lock().unwrap().take()
        {
            let _ = tx.send(Err(format!("start: {e}")));
        }
    }

    fn warm_start(&self, ctx: &mut StartContext<Partita>) {
        self.cold_start(ctx)
    }
}

#[test]
fn an_a653rs_partition_runs_standalone_on_partita() {
    // SAFETY: removed before the runtime reads the environment (on its first use, in the
    // thread below), while no other thread of this binary touches the environment.
    unsafe { std::env::remove_var("PARTITA_PARTITION") };
    let (tx, rx) = channel();
    *DONE.lock().unwrap() = Some(tx);
    std::thread::spawn(|| Tested.run());
    let r = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("the worker process reported");
    r.unwrap();
}
