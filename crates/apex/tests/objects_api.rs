//! The objects through the Rust API, in this test process run as a standalone partition: error
//! codes of the Rust-only cases (slices), wake-up order of a PRIORITY semaphore by current
//! priority, buffer hand-off and blackboard broadcast to waiting processes. The initialization
//! process is a helper thread that goes NORMAL (and never returns); processes report back through
//! a channel. Needs real-time priorities for the orders (skips without, fails under CI=true).

use partita_apex::*;
use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

static LOG: Mutex<String> = Mutex::new(String::new());
static DONE: Mutex<Option<Sender<Result<(), String>>>> = Mutex::new(None);
static IDS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn id(k: usize) -> i32 {
    IDS.lock().unwrap()[k]
}

fn note(c: char) {
    LOG.lock().unwrap().push(c);
}

fn take_log() -> String {
    std::mem::take(&mut *LOG.lock().unwrap())
}

// ids: 0 semaphore, 1 buffer, 2 blackboard
extern "C" fn waiter_a() {
    if wait_semaphore(id(0), INFINITE_TIME_VALUE).is_ok() {
        note('A');
    }
}
extern "C" fn waiter_b() {
    if wait_semaphore(id(0), INFINITE_TIME_VALUE).is_ok() {
        note('B');
    }
}
extern "C" fn receiver() {
    let mut m = [0u8; 16];
    let n = receive_buffer(id(1), 1_000_000_000, &mut m).unwrap();
    LOG.lock().unwrap().push_str(std::str::from_utf8(&m[..n]).unwrap());
}
extern "C" fn reader() {
    let mut m = [0u8; 8];
    let n = read_blackboard(id(2), INFINITE_TIME_VALUE, &mut m).unwrap();
    LOG.lock().unwrap().push_str(std::str::from_utf8(&m[..n]).unwrap());
}

fn check(what: &str, ok: bool) -> Result<(), String> {
    if ok { Ok(()) } else { Err(format!("{what}: log {:?}", LOG.lock().unwrap())) }
}

fn scenario() -> Result<(), String> {
    let (a, b, r, k) = (id(3), id(4), id(5), id(6));
    // A (20) then B (30) wait; raising A to 40 puts it first in the PRIORITY queue.
    start(a).unwrap();
    start(b).unwrap();
    check("both wait", get_semaphore_status(id(0)).unwrap().waiting_processes == 2)?;
    check("WAITING", get_process_status(a).unwrap().process_state == ProcessState::Waiting)?;
    set_priority(a, 40).unwrap();
    signal_semaphore(id(0)).unwrap();
    signal_semaphore(id(0)).unwrap();
    check("PRIORITY order by current priority", take_log() == "AB")?;
    start(r).unwrap();
    send_buffer(id(1), b"to you", 0).unwrap();
    check("buffer hand-off", take_log() == "to you")?;
    start(k).unwrap();
    display_blackboard(id(2), b"board").unwrap();
    check("blackboard to its reader", take_log() == "board")?;
    check("too long for the board", display_blackboard(id(2), b"123456789") == Err(ErrorReturnCode::InvalidParam))
}

extern "C" fn controller() {
    let r = scenario();
    if let Some(tx) = DONE.lock().unwrap().take() {
        let _ = tx.send(r);
    }
}

fn aperiodic(name: &str, entry: extern "C" fn(), priority: i32) -> i32 {
    create_process(&ProcessAttribute {
        period: INFINITE_TIME_VALUE,
        time_capacity: INFINITE_TIME_VALUE,
        entry_point: entry,
        stack_size: 0,
        base_priority: priority,
        deadline: Deadline::Soft,
        name: Name::from(name),
    })
    .unwrap()
}

fn init() -> Result<(), String> {
    let sem = create_semaphore(Name::from("S"), 0, 5, QueuingDiscipline::Priority).unwrap();
    let buf = create_buffer(Name::from("B"), 16, 2, QueuingDiscipline::Fifo).unwrap();
    let board = create_blackboard(Name::from("K"), 8).unwrap();
    let e =
        |got: ApexResult<()>, want: ErrorReturnCode, what: &str| if got == Err(want) { Ok(()) } else { Err(format!("{what}: {got:?}")) };
    e(create_semaphore(Name::from("S"), 0, 5, QueuingDiscipline::Fifo).map(|_| ()), ErrorReturnCode::NoAction, "duplicate")?;
    e(receive_buffer(buf, 0, &mut [0u8; 8]).map(|_| ()), ErrorReturnCode::InvalidParam, "receive slice shorter than MAX_MESSAGE_SIZE")?;
    e(read_blackboard(board, 0, &mut [0u8; 4]).map(|_| ()), ErrorReturnCode::InvalidParam, "read slice too short")?;
    e(receive_buffer(buf, 0, &mut [0u8; 16]).map(|_| ()), ErrorReturnCode::NotAvailable, "empty buffer")?;
    e(send_buffer(buf, &[], 0), ErrorReturnCode::InvalidParam, "empty message")?;
    e(get_semaphore_id(&Name::from("nope")).map(|_| ()), ErrorReturnCode::InvalidConfig, "unknown name")?;
    let procs = [aperiodic("A", waiter_a, 20), aperiodic("B", waiter_b, 30), aperiodic("R", receiver, 30), aperiodic("K", reader, 30)];
    IDS.lock().unwrap().extend([sem, buf, board]);
    IDS.lock().unwrap().extend(procs);
    let c = aperiodic("controller", controller, 5);
    start(c).unwrap();
    Ok(())
}

fn realtime_permitted() -> bool {
    // SAFETY: querying and restoring the calling thread's own scheduling parameters.
    unsafe {
        let me = libc::pthread_self();
        let param = libc::sched_param { sched_priority: 1 };
        if libc::pthread_setschedparam(me, libc::SCHED_FIFO, &param) != 0 {
            return false;
        }
        let normal = libc::sched_param { sched_priority: 0 };
        libc::pthread_setschedparam(me, libc::SCHED_OTHER, &normal);
    }
    true
}

#[test]
fn objects_through_the_rust_api() {
    if !partita_testkit::require("real-time scheduling (SCHED_FIFO)", realtime_permitted()) {
        return;
    }
    // SAFETY: set before the runtime reads the environment (on its first use, below), while
    // this test is the only thread of the binary touching the environment.
    unsafe { std::env::remove_var("PARTITA_PARTITION") };
    let (tx, rx) = channel();
    *DONE.lock().unwrap() = Some(tx.clone());
    std::thread::spawn(move || {
        if let Err(e) = init() {
            let _ = tx.send(Err(e));
            return;
        }
        let _ = set_partition_mode(OperatingMode::Normal as u32); // does not return
    });
    let r = rx.recv_timeout(Duration::from_secs(30)).expect("the controller process reported");
    r.unwrap();
}
