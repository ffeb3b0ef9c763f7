//! The partition side of the module contract (crates/abi), against a fake module: a control
//! block in a memfd on fd 3, an eventfd doorbell on fd 4, `PARTITA_PARTITION` set. Checks what
//! the partition reads (status, schedules), what it writes (trace events with the module core,
//! requests and the doorbell, probe running times) and that it ends when the module stops.

mod common;

use common::*;
use partita_abi::{self as abi, ControlBlock, ScheduleEntry, ScheduleSnapshot, TraceEvent, event, mode};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use partita_abi::clock::now_ns;

const PERIOD: i64 = 20_000_000;

/// A fresh control block in a memfd, mapped shared; returns the fd and the mapping.
fn control_block(cpu: u32) -> (i32, &'static ControlBlock) {
    let size = size_of::<ControlBlock>();
    // SAFETY: plain system calls with valid arguments; results are checked.
    let (fd, p) = unsafe {
        let fd = libc::memfd_create(c"partita-test-cb".as_ptr(), 0);
        assert!(fd >= 0);
        assert_eq!(libc::ftruncate(fd, size as i64), 0);
        let p = libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0);
        assert_ne!(p, libc::MAP_FAILED);
        (fd, p as *mut ControlBlock)
    };
    // SAFETY: the mapping is zeroed (fresh memfd), large enough, never unmapped, and not shared
    // with anyone yet: this is the only reference while it is filled in.
    let cb: &'static mut ControlBlock = unsafe { &mut *p };
    let epoch = now_ns();
    cb.magic = abi::ABI_MAGIC;
    cb.version = abi::ABI_VERSION;
    cb.size = size as u32;
    cb.partition_id = 5;
    cb.criticality = 0;
    cb.core_count = 1;
    cb.name = abi::name_bytes("P5");
    cb.host_cpus[0] = cpu;
    cb.module_cores[0] = 3;
    cb.epoch_ns = epoch;
    cb.status.operating_mode.store(mode::COLD_START, Ordering::Relaxed);
    cb.status.start_condition.store(abi::start_condition::PARTITION_RESTART, Ordering::Relaxed);
    cb.status.module_running.store(1, Ordering::Relaxed);
    cb.schedule_count = 2;
    let entry = |id, name| ScheduleEntry {
        id,
        flags: abi::schedule_flags::MAY_SET_SCHEDULE,
        name: abi::name_bytes(name),
        major_frame_ns: 2 * PERIOD,
        period_ns: PERIOD,
        duration_ns: PERIOD / 2,
    };
    cb.schedules[0] = entry(3, "first");
    cb.schedules[1] = entry(7, "second");
    cb.schedule.publish(&ScheduleSnapshot {
        current_id: 3,
        next_id: 3,
        started_ns: epoch,
        time_of_last_switch_ns: epoch,
        period_ns: PERIOD,
        duration_ns: PERIOD / 2,
    });
    cb.trace.init();
    cb.hm.reports.init();
    (fd, cb)
}

/// The module's side of a window start: planned instant, wake count, FUTEX_WAKE (shared).
fn window_start(cb: &ControlBlock) -> i64 {
    let p = &cb.probes[0];
    let planned = now_ns();
    p.planned_ns.store(planned, Ordering::Release);
    p.wake.fetch_add(1, Ordering::Release);
    // SAFETY: FUTEX_WAKE on a valid u32 of a shared mapping (no private flag: the waiter is in
    // another process).
    unsafe { libc::syscall(libc::SYS_futex, p.wake.as_ptr(), libc::FUTEX_WAKE, i32::MAX) };
    planned
}

fn first_cpu() -> u32 {
    // SAFETY: sched_getaffinity fills a zeroed cpu_set_t of the size given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set);
        (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &set)).unwrap_or(0) as u32
    }
}

#[test]
fn a_partition_under_a_fake_module() {
    let _s = serial();
    let bin = build("module");
    let (cb_fd, cb) = control_block(first_cpu());
    // SAFETY: creating an eventfd; checked.
    let bell = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK) };
    assert!(bell >= 0);

    let mut cmd = Command::new(&bin);
    cmd.env(abi::ENV_PARTITION, "5").stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls (dup2) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(cb_fd, abi::CONTROL_FD) < 0 || libc::dup2(bell, abi::DOORBELL_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();

    let mut events: Vec<TraceEvent> = Vec::new();
    let mut requests: Vec<(u32, u32)> = Vec::new();
    let mut probes: Vec<(i64, i64)> = Vec::new();
    let mut pending_probe: Option<i64> = None;
    let mut stopping = false;
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            break None;
        }
        while let Some(e) = cb.trace.pop() {
            if e.kind == event::MODE_CHANGE && pending_probe.is_none() {
                pending_probe = Some(window_start(cb));
            }
            events.push(e);
        }
        if let Some(planned) = pending_probe {
            let running = cb.probes[0].running_ns.load(Ordering::Acquire);
            if running != 0 {
                probes.push((planned, running));
                pending_probe = None;
            }
        }
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into a valid buffer from our non-blocking eventfd.
        if unsafe { libc::read(bell, buf.as_mut_ptr().cast(), 8) } == 8 {
            let r = &cb.request;
            let seq = r.seq.load(Ordering::Acquire);
            requests.push((r.kind.load(Ordering::Relaxed), r.arg.load(Ordering::Relaxed)));
            r.done.store(seq, Ordering::Release);
            if requests.last() == Some(&(abi::request::SET_MODE, mode::COLD_START)) && !stopping {
                // Shut down: the partition ends at its next probe wake.
                stopping = true;
                cb.status.module_running.store(0, Ordering::Release);
                window_start(cb);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = format!("status {status:?}\n--- stdout\n{stdout}--- stderr\n{stderr}--- events\n{events:#?}\n{requests:?}");

    assert_eq!(status.and_then(|s| s.code()), Some(0), "{report}");
    assert!(!stdout.contains("FAIL"), "{report}");
    assert!(!stderr.contains("standalone"), "ran standalone: {report}");
    assert!(stdout.contains("status id=5 period=20000000 duration=10000000 mode=1 start=1 cores=1"), "{report}");
    assert!(stdout.contains("release 2"), "{report}");
    assert_eq!(requests, vec![(abi::request::SET_MODULE_SCHEDULE, 7), (abi::request::SET_MODE, mode::COLD_START)], "{report}");
    let kinds: Vec<u32> = events.iter().map(|e| e.kind).collect();
    assert!(events.iter().any(|e| e.kind == event::PROCESS_CREATE && e.a == 1 && e.b == 10), "{report}");
    assert!(events.iter().any(|e| e.kind == event::MODE_CHANGE && e.a == 1 && e.b == 3), "{report}");
    assert!(kinds.contains(&event::PROCESS_START), "{report}");
    assert!(kinds.iter().filter(|&&k| k == event::PROCESS_RELEASE).count() >= 3, "{report}");
    assert!(events.iter().all(|e| e.core == 3), "events carry the module core index: {report}");
    assert!(kinds.contains(&event::PROCESS_DISPATCH), "first dispatch after a window start: {report}");
    assert!(!probes.is_empty(), "the probe thread never ran: {report}");
    for (planned, running) in probes {
        assert!(running >= planned, "probe ran before the planned instant: {planned} {running}");
    }
    // SAFETY: closing our descriptors.
    unsafe {
        libc::close(cb_fd);
        libc::close(bell);
    }
}
