//! A partition written in Rust against the `partita_apex` API: `main` is the initialization
//! process; it checks a few return codes, creates a periodic and an aperiodic process and goes
//! NORMAL. The periodic process reports three releases, then ends the program. Run standalone:
//! `PARTITA_STANDALONE_PERIOD=0.02 cargo run -p partita-apex --example rust_partition`.

use partita_apex::{
    Deadline, ErrorReturnCode, INFINITE_TIME_VALUE, Name, OperatingMode, ProcessAttribute, ProcessState, create_process, get_my_id,
    get_partition_status, get_process_id, get_process_status, get_time, periodic_wait, report_application_message, set_partition_mode,
    start, timed_wait,
};

fn expect<T: std::fmt::Debug>(what: &str, got: Result<T, ErrorReturnCode>, want: Result<(), ErrorReturnCode>) {
    let ok = match (&got, want) {
        (Ok(_), Ok(())) => true,
        (Err(e), Err(w)) => *e == w,
        _ => false,
    };
    println!("{} {what}: {got:?}", if ok { "PASS" } else { "FAIL" });
    if !ok {
        std::process::exit(1);
    }
}

extern "C" fn periodic() {
    for k in 0..3 {
        let t = get_time();
        report_application_message(format!("release {k} at {t} ns").as_bytes()).unwrap();
        periodic_wait().unwrap();
    }
    let me = get_my_id().unwrap();
    let status = get_process_status(me).unwrap();
    expect("own status", Ok::<_, ErrorReturnCode>(status.process_state), Ok(()));
    assert_eq!(status.process_state, ProcessState::Running);
    println!("SUMMARY rust partition done");
    std::process::exit(0);
}

extern "C" fn background() {
    loop {
        let _ = timed_wait(1_000_000_000);
    }
}

fn attribute(name: &str, entry: extern "C" fn(), period: i64, priority: i32) -> ProcessAttribute {
    ProcessAttribute {
        period,
        time_capacity: if period > 0 { period } else { INFINITE_TIME_VALUE },
        entry_point: entry,
        stack_size: 0,
        base_priority: priority,
        deadline: Deadline::Soft,
        name: Name::from(name),
    }
}

fn main() {
    let status = get_partition_status();
    println!("partition {} in {:?}, period {} ns", status.identifier, status.operating_mode, status.period);
    expect("GET_MY_ID from main", get_my_id(), Err(ErrorReturnCode::InvalidMode));
    let p = create_process(&attribute("PERIODIC", periodic, status.period, 20));
    expect("create periodic", p, Ok(()));
    let b = create_process(&attribute("BACKGROUND", background, INFINITE_TIME_VALUE, 1));
    expect("create background", b, Ok(()));
    expect("duplicate name", create_process(&attribute("PERIODIC", periodic, status.period, 20)), Err(ErrorReturnCode::NoAction));
    expect("unknown name", get_process_id(&Name::from("NOPE")), Err(ErrorReturnCode::InvalidConfig));
    expect("start periodic", start(p.unwrap()), Ok(()));
    expect("start background", start(b.unwrap()), Ok(()));
    expect("WARM_START from COLD_START", set_partition_mode(OperatingMode::WarmStart as u32), Err(ErrorReturnCode::InvalidMode));
    let r = set_partition_mode(OperatingMode::Normal as u32);
    println!("FAIL set_partition_mode(NORMAL) returned {r:?}");
    std::process::exit(1);
}
