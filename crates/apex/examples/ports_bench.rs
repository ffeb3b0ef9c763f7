//! Port benchmark, a partition program for `ports_bench.xml` (one program, role in argv):
//! - `sampling`: median cost of WRITE_SAMPLING_MESSAGE + READ_SAMPLING_MESSAGE of 64 bytes on
//!   a channel from the partition to itself (no other party, no system call);
//! - `ping` (core 0) / `pong` (core 1), both in their windows at the same time: ping sends a
//!   queuing message carrying its send time every 0.5 ms while its window runs; pong, blocked
//!   in RECEIVE_QUEUING_MESSAGE, takes the difference on arrival (send to delivered, across
//!   cores, including the receiver's wake-up). `pong busy` adds a lowest-priority busy process
//!   to Pong, so that its core does not go idle (on a virtual machine, waking an idle virtual
//!   CPU costs tens of microseconds by itself).
//!
//! ```text
//! cargo build --release -p partita -p partita-apex --example ports_bench
//! sudo target/release/partita run crates/apex/examples/ports_bench.xml --frames 300
//! sudo target/release/partita run crates/apex/examples/ports_bench.xml --frames 300 --idle-poll
//! sudo target/release/partita run crates/apex/examples/ports_bench_busy.xml --frames 300
//! ```

use partita_apex::{
    Deadline, INFINITE_TIME_VALUE, Name, OperatingMode, PortDirection, ProcessAttribute, QueuingDiscipline, create_process,
    create_queuing_port, create_sampling_port, get_time, read_sampling_message, receive_queuing_message, send_queuing_message,
    set_partition_mode, start, timed_wait, write_sampling_message,
};
use std::sync::OnceLock;

const MS: i64 = 1_000_000;
/// Window of ping and pong in each 20 ms frame (they overlap exactly, on two cores).
const WINDOW: (i64, i64) = (0, 15 * MS);
static IDS: OnceLock<(i32, i32)> = OnceLock::new();

fn stats(what: &str, mut v: Vec<i64>) {
    v.sort_unstable();
    if v.is_empty() {
        println!("{what}: no samples");
        return;
    }
    let q = |p: f64| v[((v.len() - 1) as f64 * p) as usize] as f64;
    println!(
        "{what}: n={} min {:.3} median {:.3} p99 {:.3} max {:.3} us",
        v.len(),
        q(0.0) / 1e3,
        q(0.5) / 1e3,
        q(0.99) / 1e3,
        q(1.0) / 1e3
    );
}

extern "C" fn sampling() {
    let (src, dst) = *IDS.get().expect("ports created");
    let msg = [7u8; 64];
    let mut buf = [0u8; 64];
    let mut samples = Vec::with_capacity(20_000);
    for _ in 0..20_000 {
        let batch = 100;
        let t0 = get_time();
        for _ in 0..batch {
            write_sampling_message(src, &msg).expect("write");
            read_sampling_message(dst, &mut buf).expect("read");
        }
        let t1 = get_time();
        // Batches interrupted by a window end are left out (they measure the frozen time).
        if t1 - t0 < 100_000 {
            samples.push((t1 - t0) / batch);
        }
    }
    stats("sampling write+read 64 B (per pair)", samples);
    park()
}

fn in_window(t: i64) -> bool {
    let phase = t.rem_euclid(20 * MS);
    phase >= WINDOW.0 + MS && phase < WINDOW.1 - MS
}

extern "C" fn ping() {
    let (q, _) = *IDS.get().expect("port created");
    loop {
        let now = get_time();
        if in_window(now) {
            send_queuing_message(q, &now.to_le_bytes(), 0).ok();
        }
        timed_wait(MS / 2).ok();
    }
}

extern "C" fn pong() {
    let (q, _) = *IDS.get().expect("port created");
    let mut buf = [0u8; 8];
    let mut samples = Vec::new();
    while samples.len() < 10_000 {
        receive_queuing_message(q, INFINITE_TIME_VALUE, &mut buf).expect("receive");
        let arrived = get_time();
        let sent = i64::from_le_bytes(buf);
        // Both in their windows: sent and delivered in the same window.
        if in_window(sent) && arrived - sent < 5 * MS && in_window(arrived) {
            samples.push(arrived - sent);
        }
        if samples.len() % 2_000 == 0 && !samples.is_empty() {
            stats("queuing send -> delivered, core 0 -> core 1", samples.clone());
        }
    }
    park()
}

/// Background work of lower priority (`pong busy`): keeps the receiver's core running, so a
/// wake-up is a preemption rather than the exit of an idle (halted) virtual CPU.
extern "C" fn background() {
    loop {
        std::hint::black_box(get_time());
    }
}

fn park() -> ! {
    loop {
        timed_wait(1_000 * MS).ok();
    }
}

fn process(name: &str, entry: extern "C" fn(), priority: i32) {
    let attr = ProcessAttribute {
        period: INFINITE_TIME_VALUE,
        time_capacity: INFINITE_TIME_VALUE,
        entry_point: entry,
        stack_size: 0,
        base_priority: priority,
        deadline: Deadline::Soft,
        name: Name::from(name),
    };
    start(create_process(&attr).expect("CREATE_PROCESS")).expect("START");
}

fn main() {
    let role = std::env::args().nth(1).unwrap_or_default();
    let ids = match role.as_str() {
        "sampling" => {
            let src = create_sampling_port(&Name::from("s_out"), 64, PortDirection::Source, INFINITE_TIME_VALUE).expect("s_out");
            let dst = create_sampling_port(&Name::from("s_in"), 64, PortDirection::Destination, INFINITE_TIME_VALUE).expect("s_in");
            process("sampling", sampling, 10);
            (src, dst)
        }
        "ping" | "pong" => {
            let dir = if role == "ping" { PortDirection::Source } else { PortDirection::Destination };
            let q = create_queuing_port(&Name::from("q"), 8, 64, dir, QueuingDiscipline::Fifo).expect("q");
            process(&role, if role == "ping" { ping } else { pong }, 10);
            if std::env::args().nth(2).as_deref() == Some("busy") {
                process("background", background, 1);
            }
            (q, 0)
        }
        _ => {
            eprintln!("usage: ports_bench sampling|ping|pong");
            std::process::exit(2);
        }
    };
    let _ = IDS.set(ids);
    set_partition_mode(OperatingMode::Normal as u32).expect("NORMAL");
}
