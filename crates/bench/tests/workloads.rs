//! Self-checks of the C workloads (crates/bench/workloads), built at run time as the
//! experiments build them: the kernels compute the same known checksums at -O0..-O3, the
//! memory kernels run, the spin-lock stress keeps the shared counter exact under contention
//! with both locks, and the coloring program times its Test routine.

use partita_bench::experiments::c_workloads::{build_wl, parse_lines, run_native};
use partita_bench::experiments::coloring::build_coloring;
use std::path::PathBuf;

/// The test binary stands in for `partita`: the APEX static library is found beside it
/// (target/<profile>/deps/libpartita_apex-HASH.a, built as this crate's dependency).
fn this_binary() -> PathBuf {
    std::env::current_exe().unwrap()
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn check_of(out: &str, kernel: &str) -> String {
    let lines: Vec<_> = parse_lines(out).into_iter().filter(|l| l.kernel == kernel).collect();
    assert_eq!(lines.len(), 1, "{out}");
    lines[0].fields["check"].clone()
}

#[test]
fn kernels_give_their_known_checksums_at_every_optimization_level() {
    let dir = tempfile::tempdir().unwrap();
    for level in 0..=3 {
        let exe = build_wl(&this_binary(), dir.path(), level).unwrap();
        let out = run_native(&exe, &args(&["dskernel", "--n", "10", "--reps", "1"]), None).unwrap();
        assert_eq!(check_of(&out, "dskernel"), "0xdff5", "data-structure kernel CRC at -O{level}");
        let out = run_native(&exe, &args(&["intmix", "--n", "1000", "--reps", "1"]), None).unwrap();
        assert_eq!(check_of(&out, "intmix"), "0x7d6b73e0", "integer mix checksum at -O{level}");
    }
}

#[test]
fn memory_kernels_run_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_wl(&this_binary(), dir.path(), 2).unwrap();
    let out = run_native(&exe, &args(&["chase", "--size", "65536", "--n", "10000", "--reps", "2"]), None).unwrap();
    let loads: Vec<f64> = parse_lines(&out).iter().filter_map(|l| l.num("ns_per_load")).collect();
    assert_eq!(loads.len(), 2);
    assert!(loads.iter().all(|v| *v > 0.0), "{out}");
    let out = run_native(&exe, &args(&["memcopy", "--size", "1048576", "--n", "4"]), None).unwrap();
    assert!(out.contains("wl done"), "{out}");
    let out = run_native(&exe, &args(&["payload", "--size", "1048576", "--n", "1000", "--reps", "2"]), None).unwrap();
    let sums: Vec<f64> = parse_lines(&out).iter().filter_map(|l| l.num("sum")).collect();
    assert_eq!(sums, vec![1000.0, 2000.0], "each line is written once per pass: {out}");
}

#[test]
fn both_locks_keep_the_shared_counter_exact_under_contention() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_wl(&this_binary(), dir.path(), 2).unwrap();
    for lock in ["busy", "block"] {
        let shm = dir.path().join(format!("{lock}.shared"));
        std::fs::write(&shm, vec![0u8; 8192]).unwrap();
        let outs: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|who| {
                    let a = args(&["spin", "--shm", shm.to_str().unwrap(), "--lock", lock, "--n", "20000", "--who", &who.to_string()]);
                    let exe = &exe;
                    s.spawn(move || run_native(exe, &a, None).unwrap())
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(outs.iter().map(|o| parse_lines(o).iter().filter(|l| l.kernel == "spin").count()).sum::<usize>(), 4);
        let shared = std::fs::read(&shm).unwrap();
        let counter = u64::from_le_bytes(shared[64..72].try_into().unwrap());
        assert_eq!(counter, 4 * 20000, "{lock} lock");
        assert_eq!(u32::from_le_bytes(shared[0..4].try_into().unwrap()), 0, "{lock} lock left free");
    }
}

#[test]
fn the_coloring_test_routine_is_timed_every_period() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_coloring(dir.path()).unwrap();
    for kind in ["instr", "data"] {
        let out =
            run_native(&exe, &args(&["test", "--kind", kind, "--period-us", "200", "--n", "20", "--internal", "--colored"]), None).unwrap();
        let lines = parse_lines(&out);
        let colors = lines.iter().find(|l| l.kernel == "coloring").and_then(|l| l.num("colors")).unwrap();
        assert!(colors >= 1.0, "{out}");
        assert_eq!(lines.iter().filter(|l| l.kernel == "test" && l.num("ns").is_some()).count(), 20, "{out}");
    }
}
