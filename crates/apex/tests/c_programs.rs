//! Builds the C test programs of tests/c/ against the static library with the system C
//! compiler and runs them standalone (no module). Programs print `PASS`/`FAIL` lines and a
//! `SUMMARY` line. Tests that need real-time priorities skip with a message when the library
//! reports that SCHED_FIFO is not permitted, except under CI=true, where they fail.
//!
//! The programs run one at a time (they pin real-time threads to CPUs), and every check is about
//! behaviour and order, never about durations.

mod common;

use common::*;
use std::io::Write;
use std::process::Command;

#[test]
fn return_codes_of_every_error_case() {
    let _s = serial();
    let r = run(&build("errors"), &[], &[]);
    assert_passed(&r, "errors");
    let passed = r.stdout.lines().filter(|l| l.starts_with("PASS")).count();
    assert!(passed >= 140, "only {passed} checks ran:\n{}", r.stdout);
    assert!(r.stdout.contains("hello from the initialization process"), "REPORT_APPLICATION_MESSAGE line missing");
    assert!(r.stderr.contains("health monitor: APPLICATION_ERROR by the initialization process: raised"), "{}", r.stderr);
}

#[test]
fn error_handler_return_codes_and_routing() {
    let _s = serial();
    let r = run(&build("error_handler"), &[], &[]);
    if realtime_ok(&r, "error_handler_return_codes_and_routing") {
        assert_passed(&r, "error_handler");
        assert!(r.stderr.contains("health monitor: NUMERIC_ERROR by process 3"), "{}", r.stderr);
    }
}

/// SIGFPE raises NUMERIC_ERROR to the error handler at once; the faulted process is FAULTED
/// until the handler STOPs it.
#[test]
fn a_division_by_zero_goes_to_the_error_handler_as_a_faulted_process() {
    let _s = serial();
    let r = run(&build("faulted"), &[], &[("PARTITA_STANDALONE_PROCESS_LEVEL", "NUMERIC_ERROR")]);
    if realtime_ok(&r, "a_division_by_zero_goes_to_the_error_handler_as_a_faulted_process") {
        assert_passed(&r, "faulted");
        assert!(r.stdout.contains("PASS the faulted process is FAULTED for the handler"), "{}", r.stdout);
    }
}

/// A mutex owner may not block (INVALID_MODE); SET_PRIORITY makes another process the newest of
/// its new priority.
#[test]
fn mutex_owners_may_not_wait_and_set_priority_queues_last() {
    let _s = serial();
    let r = run(&build("mutexwait"), &[], &[]);
    if realtime_ok(&r, "mutex_owners_may_not_wait_and_set_priority_queues_last") {
        assert_passed(&r, "mutexwait");
        let passed = r.stdout.lines().filter(|l| l.starts_with("PASS")).count();
        assert!(passed >= 25, "only {passed} checks ran:\n{}", r.stdout);
    }
}

#[test]
fn priority_preemption_fifo_and_preemption_lock_order() {
    let _s = serial();
    let r = run(&build("order"), &[], &[]);
    if realtime_ok(&r, "priority_preemption_fifo_and_preemption_lock_order") {
        assert_passed(&r, "order");
    }
}

/// P1-5 priorities 1..=239 on one CPU: each of 1, 63, 64, 100, 150, 200, 239 preempts the lower
/// ones, SET_PRIORITY to a priority new to the partition re-ranks it between the others, a mutex
/// ceiling of 239 holds off a process at 239; 0 and 240 are INVALID_PARAM. The same order holds
/// on the default band and on a band of exactly as many Linux levels as the program uses
/// distinct priorities (11), which is what a FIXED_PRIORITY core gives a partition.
#[test]
fn priorities_1_to_239_preempt_in_order_on_any_band_that_fits() {
    let _s = serial();
    let bin = build("priorities");
    for band in [None, Some("20,11")] {
        let env: Vec<(&str, &str)> = band.map(|b| ("PARTITA_STANDALONE_RT_BAND", b)).into_iter().collect();
        let r = run(&bin, &[], &env);
        if !realtime_ok(&r, "priorities_1_to_239_preempt_in_order_on_any_band_that_fits") {
            return;
        }
        assert_passed(&r, &format!("priorities on band {band:?}"));
        assert!(r.stdout.contains("PASS order"), "band {band:?}:\n{}", r.stdout);
        assert!(!r.stderr.contains("share the lowest level"), "band {band:?} fits, yet:\n{}", r.stderr);
    }
}

/// More distinct priorities than the band has levels (9 on 8): the lowest two share the lowest
/// level, and the partition's log and the trace say which, once.
#[test]
fn priorities_beyond_the_band_share_its_lowest_level_and_say_so() {
    let _s = serial();
    let r = run(&build("priorities"), &["overflow"], &[("PARTITA_STANDALONE_RT_BAND", "20,8"), ("PARTITA_STANDALONE_TRACE", "1")]);
    assert_passed(&r, "priorities overflow");
    let said: Vec<&str> = r.stderr.lines().filter(|l| l.contains("share the lowest level")).collect();
    assert_eq!(said.len(), 1, "{}", r.stderr);
    assert!(said[0].contains("9 distinct priorities and its band has 8 Linux levels: priorities 1, 63 share"), "{}", said[0]);
    let traced: Vec<&str> = r.stderr.lines().filter(|l| l.contains("ev=priorities_shared")).collect();
    assert_eq!(traced.len(), 1, "{}", r.stderr);
    assert!(traced[0].ends_with(" a=1 b=63"), "{}", traced[0]);
}

#[test]
fn suspend_resume_stop_really_stop_another_process() {
    let _s = serial();
    let r = run(&build("stopping"), &[], &[]);
    if realtime_ok(&r, "suspend_resume_stop_really_stop_another_process") {
        assert_passed(&r, "stopping");
    }
}

/// 10,000 STOP/START and 10,000 SUSPEND/RESUME of processes looping over malloc/free/printf/
/// snprintf leave no C library lock held (the program hangs or reports FAIL otherwise; it is
/// killed after 60 s, a few times its usual run time).
#[test]
fn stop_and_suspend_inside_the_c_library_leave_no_lock_held() {
    let _s = serial();
    // On the first CPU this test may use (the workers spin at a real-time priority there).
    let cpu = first_cpu().to_string();
    let r = run_for(&build("libcstop"), &[], &[("PARTITA_STANDALONE_CPUS", &cpu)], std::time::Duration::from_secs(60));
    if realtime_ok(&r, "stop_and_suspend_inside_the_c_library_leave_no_lock_held") {
        assert!(r.code.is_some(), "libcstop hung (killed after 60 s): a C library lock was left held\n{}{}", r.stdout, r.stderr);
        assert_passed(&r, "libcstop");
        assert!(r.stdout.contains("PASS 10,000 stops and 10,000 suspends"), "{}", r.stdout);
    }
}

#[test]
fn objects_return_codes_limits_and_message_integrity() {
    let _s = serial();
    let r = run(&build("objects_errors"), &[], &[]);
    assert_passed(&r, "objects_errors");
    let passed = r.stdout.lines().filter(|l| l.starts_with("PASS")).count();
    assert!(passed >= 120, "only {passed} checks ran:\n{}", r.stdout);
}

#[test]
fn objects_block_wake_by_discipline_and_mutex_priority() {
    let _s = serial();
    let r = run(&build("objects"), &[], &[]);
    if realtime_ok(&r, "objects_block_wake_by_discipline_and_mutex_priority") {
        assert_passed(&r, "objects");
        let passed = r.stdout.lines().filter(|l| l.starts_with("PASS")).count();
        assert!(passed >= 40, "only {passed} checks ran:\n{}", r.stdout);
    }
}

/// The first CPU this process may use.
fn first_cpu() -> usize {
    allowed_cpus().first().copied().unwrap_or(0)
}

/// Two CPUs this process may use, if there are two.
fn two_cpus() -> Option<(usize, usize)> {
    let cpus = allowed_cpus();
    (cpus.len() >= 2).then(|| (cpus[0], cpus[1]))
}

/// The CPUs this process may use.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills a zeroed cpu_set_t of the size given.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        set
    };
    // SAFETY: CPU_ISSET reads the set filled above.
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

#[test]
fn suspend_resume_stop_across_cores() {
    let Some((a, b)) = two_cpus() else {
        let _ = writeln!(std::io::stderr(), "SKIPPED suspend_resume_stop_across_cores: fewer than two CPUs");
        return;
    };
    let _s = serial();
    let cpus = format!("{a},{b}");
    let r = run(&build("stopping"), &["multicore"], &[("PARTITA_STANDALONE_CPUS", &cpus)]);
    if realtime_ok(&r, "suspend_resume_stop_across_cores") {
        assert_passed(&r, "stopping multicore");
        assert!(r.stdout.contains("PASS two cores"), "{}", r.stdout);
    }
}

#[test]
fn periodic_releases_on_the_grid_and_missed_deadlines_in_the_trace() {
    let _s = serial();
    let r = run(&build("periodic"), &[], &[("PARTITA_STANDALONE_TRACE", "1")]);
    if !realtime_ok(&r, "periodic_releases_on_the_grid_and_missed_deadlines_in_the_trace") {
        return;
    }
    assert_passed(&r, "periodic");
    let late = r.stdout.lines().find_map(|l| l.strip_prefix("LATE ")).expect("LATE id line").trim().to_string();
    let missed: Vec<&str> = r.stderr.lines().filter(|l| l.contains("ev=deadline_missed")).collect();
    assert!(missed.iter().any(|l| l.contains(&format!(" a={late} "))), "no deadline_missed event for process {late}:\n{}", r.stderr);
    assert!(missed.iter().all(|l| l.contains(&format!(" a={late} "))), "unexpected misses:\n{missed:?}");
    assert_eq!(missed.len(), 1, "a missed deadline is reported once: {missed:?}");
    assert!(r.stderr.contains("ev=mode_change a=1 b=3"), "mode change COLD_START -> NORMAL not traced");
    assert!(r.stderr.contains("ev=process_release"), "no release traced");
}

#[test]
fn set_partition_mode_normal_does_not_return() {
    let _s = serial();
    let r = run(&build("modes"), &[], &[]);
    assert_passed(&r, "modes");
    assert!(r.stdout.contains("worker ran"));
}

#[test]
fn set_partition_mode_idle_ends_a_standalone_program() {
    let _s = serial();
    let r = run(&build("modes"), &["idle"], &[]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);
    assert!(r.stdout.contains("worker ran"));
    assert!(r.stderr.contains("SET_PARTITION_MODE(IDLE)"), "{}", r.stderr);
}

#[test]
fn query_services_make_no_system_call() {
    let _s = serial();
    let bin = build("nosyscall");
    let r = run(&bin, &[], &[]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("ok: 13 services x 10000 calls without a system call"), "{}", r.stdout);
    // The harness does catch a runtime system call (TIMED_WAIT's futex).
    let c = run(&bin, &["control"], &[]);
    assert_eq!(c.code, Some(3), "{}{}", c.stdout, c.stderr);
    assert!(c.stdout.contains("FAIL system call 202 made under seccomp"), "{}", c.stdout);
}

const APP: &str = r#"
#include <ARINC653.h>
#include <stdio.h>
int main(void) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE t;
    PROCESS_ID_TYPE id;
    GET_TIME(&t, &rc);
    GET_PROCESS_ID("none", &id, &rc);
    printf("linked: GET_PROCESS_ID rc %d\n", (int)rc);
    return rc == INVALID_CONFIG ? 0 : 1;
}
"#;

#[test]
fn the_design_build_command_links_the_static_library() {
    let _s = serial();
    let dir = out_dir();
    let src = dir.join("app.c");
    std::fs::write(&src, APP).unwrap();
    let bin = dir.join("app");
    // Exactly design.md §4: cc -I include app.c -L target/release -lpartita_apex -lpthread -o app
    let out = Command::new(compiler("CC", "cc"))
        .arg("-I")
        .arg(include_dir())
        .arg(&src)
        .arg("-L")
        .arg(lib_dir())
        .args(["-lpartita_apex", "-lpthread", "-o"])
        .arg(&bin)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = run(&bin, &[], &[("LD_LIBRARY_PATH", "/nonexistent")]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("linked: GET_PROCESS_ID rc 4"));
    let dynamic = std::fs::read(&bin).unwrap();
    assert!(
        !dynamic.windows(b"libpartita_apex.so".len()).any(|w| w == b"libpartita_apex.so"),
        "the program depends on libpartita_apex.so: a stale shared library in {}?",
        lib_dir().display()
    );
}

#[test]
fn the_header_compiles_as_strict_c11_and_as_cxx() {
    let _s = serial();
    let dir = out_dir();
    let c = dir.join("header.c");
    std::fs::write(&c, "#include <ARINC653.h>\nint main(void) { return NO_ERROR; }\n").unwrap();
    let out = Command::new(compiler("CC", "cc"))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only", "-I"])
        .arg(include_dir())
        .arg(&c)
        .output()
        .unwrap();
    assert!(out.status.success(), "C11: {}", String::from_utf8_lossy(&out.stderr));

    let cpp = dir.join("header.cpp");
    std::fs::write(
        &cpp,
        "#include <ARINC653.h>\n#include <cstdio>\nstatic void body() {}\nint main() {\n  RETURN_CODE_TYPE rc;\n  \
         PROCESS_ID_TYPE id;\n  PROCESS_ATTRIBUTE_TYPE a = {};\n  a.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)body;\n  a.BASE_PRIORITY = MAX_PRIORITY_VALUE;\n  \
         GET_PROCESS_ID(\"P1\", &id, &rc);\n  REPORT_APPLICATION_MESSAGE(\"from C++\", 8, &rc);\n  \
         std::printf(\"rc %d prio %d\\n\", (int)rc, (int)a.BASE_PRIORITY);\n  return (int)rc;\n}\n",
    )
    .unwrap();
    let bin = dir.join("header_cxx");
    let out = Command::new(compiler("CXX", "c++"))
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(include_dir())
        .arg(&cpp)
        .arg("-L")
        .arg(lib_dir())
        .args(["-lpartita_apex", "-lpthread", "-o"])
        .arg(&bin)
        .output()
        .unwrap();
    assert!(out.status.success(), "C++: {}", String::from_utf8_lossy(&out.stderr));
    let r = run(&bin, &[], &[]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("from C++"));
}

/// The header defines every constant and type of P1-5 a partition may name (tests/c/constants.c
/// names each one), with the values P1-5 gives.
#[test]
fn the_header_defines_every_p1_5_constant_and_type() {
    let _s = serial();
    let r = run(&build("constants"), &[], &[]);
    assert_passed(&r, "constants");
    assert!(r.stdout.contains("PASS MAIN_PROCESS_ID"), "{}", r.stdout);
}

/// Builds a one-file C program against the header and the static library.
fn build_source(name: &str, source: &str) -> std::process::Output {
    let dir = out_dir();
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    Command::new(compiler("CC", "cc"))
        .arg("-I")
        .arg(include_dir())
        .arg(&src)
        .arg("-L")
        .arg(lib_dir())
        .args(["-lpartita_apex", "-lpthread", "-o"])
        .arg(dir.join(name))
        .output()
        .unwrap()
}

/// Every service the header declares is defined by the library: a program that takes the
/// address of each one links (a missing definition is an "undefined reference").
#[test]
fn every_declared_service_links() {
    let _s = serial();
    let header = std::fs::read_to_string(include_dir().join("ARINC653.h")).unwrap();
    let services: Vec<&str> = header
        .lines()
        .filter_map(|l| l.strip_prefix("extern void "))
        .filter_map(|l| l.split('(').next())
        .map(str::trim)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))
        .collect();
    assert!(services.len() > 60, "the header declares {} services: {services:?}", services.len());
    let mut source = String::from("#include <ARINC653.h>\n#include <stdio.h>\nint main(void) {\n  void *all[] = {\n");
    for s in &services {
        source.push_str(&format!("    (void *)&{s},\n"));
    }
    source.push_str("  };\n  printf(\"%zu\\n\", sizeof all / sizeof all[0]);\n  return 0;\n}\n");
    let out = build_source("every_service", &source);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "not every declared service links:\n{err}");
}

/// Standalone, no port is configured: every CREATE is INVALID_CONFIG (and ids stay unknown).
#[test]
fn standalone_programs_have_no_configured_ports() {
    let _s = serial();
    let out = build_source(
        "standalone_ports",
        r#"#include <ARINC653.h>
#include <stdio.h>
int main(void) {
    SAMPLING_PORT_ID_TYPE s; QUEUING_PORT_ID_TYPE q; RETURN_CODE_TYPE a, b, c, d;
    APEX_BYTE m[8] = {0};
    CREATE_SAMPLING_PORT("S", 8, SOURCE, 1000000, &s, &a);
    CREATE_QUEUING_PORT("Q", 8, 4, DESTINATION, FIFO, &q, &b);
    WRITE_SAMPLING_MESSAGE(1, m, 8, &c);
    SEND_QUEUING_MESSAGE(1, m, 8, 0, &d);
    printf("create %d %d unknown ids %d %d\n", (int)a, (int)b, (int)c, (int)d);
    return 0;
}
"#,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = run(&out_dir().join("standalone_ports"), &[], &[]);
    // INVALID_CONFIG = 4, INVALID_PARAM = 3.
    assert!(r.stdout.contains("create 4 4 unknown ids 3 3"), "{}{}", r.stdout, r.stderr);
}

#[test]
fn a_rust_partition_uses_the_rust_api() {
    let _s = serial();
    let bin = profile_dir().join("examples/rust_partition");
    assert!(bin.exists(), "cargo builds examples for tests: {} missing", bin.display());
    let r = run(&bin, &[], &[]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);
    for k in 0..3 {
        assert!(r.stdout.contains(&format!("release {k} at ")), "{}", r.stdout);
    }
    assert!(r.stdout.contains("SUMMARY rust partition done"));
}
