//! Smoke runs (--quick) of the workload experiments: native-vs-partition, overlap, spinlock,
//! release, memlat, coloring. They assert that samples were produced and stored, not how fast.
//! The bench takes the machine lock itself. Runs need root (skipped with a message otherwise;
//! a failure with CI=true).

mod machine;
mod partitions;

use assert_cmd::Command;
use partitions::privileged;
use serde_json::Value;
use std::path::Path;

/// `partita bench EXP --quick --json --backend B`: its JSON lines (one per point).
fn quick(exp: &str, backend: &str, db: &Path) -> Vec<Value> {
    quick_with(exp, backend, db, &[])
}

fn quick_with(exp: &str, backend: &str, db: &Path, extra: &[&str]) -> Vec<Value> {
    let out = Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["bench", exp, "--quick", "--json", "--backend", backend, "--db"])
        .arg(db)
        .args(extra)
        // The bench waits for the machine lock (another test's module) before it starts.
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "partita bench {exp} --quick failed or did not end within 600 s:\n{stderr}");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!lines.is_empty(), "{stderr}");
    assert!(lines.iter().all(|v| v["experiment"] == exp && v["backend"] == backend));
    lines
}

/// Samples of `metric` at every point.
fn per_point(lines: &[Value], metric: &str) -> Vec<u64> {
    lines.iter().map(|v| v["metrics"][metric]["n"].as_u64().unwrap_or(0)).collect()
}

#[test]
fn list_names_the_workload_experiments() {
    let out = Command::new(assert_cmd::cargo::cargo_bin!("partita")).args(["bench", "list"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["native-vs-partition", "overlap", "spinlock", "release", "memlat", "coloring"] {
        assert!(text.lines().any(|l| l.starts_with(&format!("{name} "))), "{name} missing:\n{text}");
    }
}

#[test]
fn native_vs_partition_scores_both_ways_and_times_a_users_command() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The command sleeps 50 ms: every timed run lasting at least that long shows the command
    // itself ran (a partition sees the host's files read-only, so it cannot leave a marker file).
    let cmd = "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; sleep 0.05";
    let lines = quick_with("native-vs-partition", "process", &dir.path().join("r.db"), &["--workload-cmd", cmd]);
    for m in ["native_score", "partition_score", "noise_pct"] {
        assert!(per_point(&lines, m).iter().all(|n| *n > 0), "{m}");
    }
    // Each point gives the loss, or, when the native baseline came out slower than the
    // partitioned run beyond its own noise, the loss as rejected (a measurement problem).
    for v in &lines {
        let has = |m: &str| v["metrics"][m]["n"].as_u64().unwrap_or(0) > 0;
        assert!(has("loss_pct") != has("rejected_loss_pct"), "loss_pct xor rejected_loss_pct: {v}");
    }
    // The command runs at the -O0 points: 3 times per core, natively and in partitions.
    let o0: Vec<&Value> = lines.iter().filter(|v| v["params"]["flags"] == "O0").collect();
    assert!(!o0.is_empty());
    for v in &lines {
        if v["params"]["cores"] == 2 {
            assert_eq!(v["metrics"]["partition_score.core1"]["n"].as_u64(), Some(3), "{v}");
        }
    }
    for v in o0 {
        let cores = v["params"]["cores"].as_u64().unwrap();
        for m in ["cmd_native_ns", "cmd_partition_ns"] {
            assert_eq!(v["metrics"][m]["n"].as_u64(), Some(3 * cores), "{v}");
            assert!(v["metrics"][m]["min"].as_f64().unwrap() >= 50e6, "the command itself ran each time ({m}): {v}");
        }
    }
}

#[test]
fn overlap_times_the_payload_in_every_scenario() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lines = quick("overlap", "process", &dir.path().join("r.db"));
    assert_eq!(lines.len(), 5);
    assert!(per_point(&lines, "exec_ns").iter().all(|n| *n >= 20));
    assert!(per_point(&lines, "isolated_ns").iter().all(|n| *n >= 20));
}

#[test]
fn spinlock_counts_every_iteration_in_partitions_and_natively() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for backend in ["process", "native"] {
        let lines = quick("spinlock", backend, &dir.path().join("r.db"));
        for v in &lines {
            let partitions = v["params"]["partitions"].as_u64().unwrap();
            assert_eq!(v["metrics"]["counter"]["max"].as_f64(), Some(partitions as f64 * 10_000.0), "{v}");
            assert_eq!(v["metrics"]["partition_ns"]["n"].as_u64(), Some(partitions));
        }
    }
}

#[test]
fn release_measures_every_task() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lines = quick("release", "process", &dir.path().join("r.db"));
    for task in ["GnC", "NavReader", "SwmReader", "AdtReader", "VdoStrming"] {
        for m in ["relo_ns", "e_ns", "r_ns"] {
            assert!(per_point(&lines, &format!("{m}.{task}"))[0] >= 20, "{m}.{task}");
        }
    }
}

#[test]
fn memlat_and_coloring_give_samples_at_every_point() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lines = quick("memlat", "native", &dir.path().join("r.db"));
    assert!(per_point(&lines, "load_ns").iter().all(|n| *n >= 3));
    let lines = quick("coloring", "native", &dir.path().join("r.db"));
    assert_eq!(lines.len(), 18);
    assert!(per_point(&lines, "test_ns").iter().all(|n| *n >= 50));
}
