//! `partita bench` and `partita report`: the command line, a smoke run of each experiment in
//! --quick mode (it produced samples; how fast is for the bench itself to say), and the report
//! rendered by a real headless browser. The bench takes the machine lock
//! (/tmp/partita-test-module.lock) itself around every module it runs, so these tests do not
//! hold it (a second holder in the same test would wait for ever). Runs need root (skipped with
//! a message otherwise; a failure with CI=true).

mod machine;
mod partitions;

use assert_cmd::Command;
use partitions::privileged;
use serde_json::Value;
use std::path::Path;

fn partita() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin!("partita"))
}

#[test]
fn list_names_every_experiment() {
    let out = partita().args(["bench", "list"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["pcs", "latency", "slot-loss", "api", "startup", "footprint", "broker"] {
        assert!(text.lines().any(|l| l.starts_with(&format!("{name} "))), "{name} missing:\n{text}");
    }
}

#[test]
fn the_kvm_backend_and_unknown_experiments_are_refused_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = partita().args(["bench", "pcs", "--backend", "kvm", "--db"]).arg(&db).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the bench has no kvm experiments yet"));
    let out = partita().args(["bench", "nosuch", "--db"]).arg(&db).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no experiment \"nosuch\""));
    let out = partita().args(["bench", "pcs", "--backend", "native", "--db"]).arg(&db).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "pcs has no native baseline");
    let out =
        partita().args(["report", "--db"]).arg(dir.path().join("none.db")).args(["-o"]).arg(dir.path().join("r.html")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Runs `partita bench EXP --quick --json` and returns its JSON lines, checking the schema.
fn quick(exp: &str, backend: &str, db: &Path) -> Vec<Value> {
    let out = partita()
        .args(["bench", exp, "--quick", "--json", "--backend", backend, "--db"])
        .arg(db)
        // The bench waits for the machine lock (another test's module) before it starts.
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "partita bench {exp} --quick failed or did not end within 600 s:\n{stderr}");
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert!(!lines.is_empty(), "no JSON lines\n{stderr}");
    for v in &lines {
        assert_eq!(v["experiment"], exp);
        assert_eq!(v["backend"], backend);
        assert!(v["params"].is_object());
        let metrics = v["metrics"].as_object().unwrap();
        assert!(!metrics.is_empty(), "{v}");
        for (name, m) in metrics {
            assert!(m["n"].as_u64().unwrap() > 0, "{name}: {m}");
            for k in ["min", "median", "mean", "p99", "max", "stddev"] {
                assert!(m[k].is_number(), "{name}.{k}: {m}");
            }
            assert!(m["min"].as_f64() <= m["median"].as_f64() && m["median"].as_f64() <= m["max"].as_f64(), "{name}: {m}");
        }
    }
    lines
}

fn metric_n(lines: &[Value], metric: &str) -> u64 {
    lines.iter().filter_map(|v| v["metrics"][metric]["n"].as_u64()).sum()
}

/// Samples stored for `experiment`; each run row carries its machine.
fn stored_samples(db: &Path, experiment: &str) -> i64 {
    let store = partita_bench::store::Store::open(db).unwrap();
    store
        .runs()
        .unwrap()
        .iter()
        .filter(|r| r.meta.experiment == experiment)
        .inspect(|r| assert!(r.meta.machine.cores > 0 && !r.meta.machine.kernel.is_empty() && !r.meta.timestamp.is_empty()))
        .map(|r| r.point.metrics.values().map(|m| m.samples.len() as i64).sum::<i64>())
        .sum()
}

#[test]
fn pcs_quick_gives_switch_samples() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let lines = quick("pcs", "process", &db);
    assert_eq!(lines.len(), 3);
    for m in ["pcs_ns", "tmro_ns", "dispatch_ns", "ctsw_ns"] {
        assert!(metric_n(&lines, m) > 100, "{m}");
    }
    let json_total: u64 = lines.iter().flat_map(|v| v["metrics"].as_object().unwrap().values().map(|m| m["n"].as_u64().unwrap())).sum();
    assert_eq!(stored_samples(&db, "pcs"), json_total as i64, "every sample is stored");
}

#[test]
fn latency_quick_gives_wakeup_samples_in_a_partition_and_natively() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for backend in ["process", "native"] {
        let lines = quick("latency", backend, &db);
        assert!(metric_n(&lines, "partition_wakeup_ns") >= 1000);
        if std::process::Command::new("cyclictest").arg("--help").output().is_ok() {
            assert!(metric_n(&lines, "cyclictest_ns") >= 1000);
        }
    }
}

#[test]
fn slot_loss_quick_gives_counts_and_the_model() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lines = quick("slot-loss", "process", &dir.path().join("r.db"));
    assert!(metric_n(&lines, "count") >= 3);
    assert!(metric_n(&lines, "model_loss_pct") >= 1);
    assert!(metric_n(&lines, "pcs_ns") > 10);
    // The host's timer-switch floor: one gap per timer expiry (1 s at 100, 10 and 1 ms slots:
    // about 10 + 100 + 1,000; fewer only if the waker never preempted the counter).
    assert!(metric_n(&lines, "timer_switch_floor_ns") >= 900, "{lines:?}");
    assert_eq!(metric_n(&lines, "switch_floor_ratio"), 3);
}

#[test]
fn api_quick_times_every_service_in_a_partition_and_natively() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for backend in ["process", "native"] {
        let lines = quick("api", backend, &db);
        for s in partita_bench::experiments::api::SERVICES {
            assert!(metric_n(&lines, &partita_bench::experiments::api::metric(s)) > 0, "{backend} {s}");
        }
    }
}

#[test]
fn broker_quick_times_brokered_and_direct_calls_in_a_partition_and_natively() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for backend in ["process", "native"] {
        let lines = quick("broker", backend, &db);
        // Every call of the quick mode succeeded (a refused one gives no sample).
        for m in ["clock_read_ns", "direct_ns", "brokered_self_ns", "brokered_tid_ns", "signal_fast_ns", "signal_brokered_ns"] {
            assert_eq!(metric_n(&lines, m), 1000, "{backend} {m}");
        }
    }
}

#[test]
fn startup_quick_times_every_point() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lines = quick("startup", "process", &dir.path().join("r.db"));
    assert_eq!(lines.len(), 3);
    // Each repetition also says where the time before the epoch went.
    for m in ["startup_ns", "launch_ns", "setup_ns", "prepare_ns", "prepare_per_partition_ns", "epoch_margin_ns"] {
        assert!(lines.iter().all(|v| v["metrics"][m]["n"].as_u64() == Some(3)), "{m}: {lines:?}");
    }
}

#[test]
fn footprint_quick_measures_sizes_and_memory() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lines = quick("footprint", "process", &dir.path().join("r.db"));
    for m in ["partita_binary_bytes", "module_rss_bytes", "partition_rss_bytes"] {
        assert!(metric_n(&lines, m) > 0, "{m}");
    }
}
