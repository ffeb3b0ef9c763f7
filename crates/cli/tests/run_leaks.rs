//! No leaks (issue 10, Deliver 9): runs in a row ended normally, by SIGTERM and by SIGKILL, and a
//! thousand partition restarts within one run, leave no process, cgroup, /dev/shm file, mount,
//! /run/partita entry, descriptor or changed real-time throttling behind, and a restarting
//! partition costs the module no descriptors, threads or cgroups per restart. Checked from the
//! outside (tests/host). The test process is a child subreaper, so every orphan of a run (the
//! partition programs of a killed module, their children, any helper process) comes back to it
//! whatever its command line. Needs root (skipped with a message otherwise; a failure with CI=true).

mod host;
mod machine;
mod partitions;

use host::{Snapshot, orphans, run_cgroup_dirs, run_dir_entries, settle};
use partita_trace::{Event, read_trace};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The tests of this binary run one at a time: each looks at the whole process (descriptors,
/// children) and the whole host.
static SERIAL: Mutex<()> = Mutex::new(());

fn partita() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin!("partita"))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A module on CPU 1 only (module core 0): `partitions` (name, shell script) share a
/// `frame_ms` major frame in equal windows; `tables` is inserted before the partitions.
fn module(dir: &Path, frame_ms: u32, tables: &str, partitions: &[(&str, &str)]) -> PathBuf {
    let mut xml = format!("<ARINC_653_Module ModuleName=\"Leaks\" xmlns:pt=\"urn:partita:1\">\n  <pt:Cores Cpus=\"1\"/>\n{tables}");
    for (i, (name, script)) in partitions.iter().enumerate() {
        xml.push_str(&format!(
            "  <Partition PartitionIdentifier=\"{}\" PartitionName=\"{name}\" pt:Executable=\"/bin/sh\" pt:Arguments=\"-c '{}'\"/>\n",
            i + 1,
            escape(script)
        ));
    }
    let frame = f64::from(frame_ms) / 1000.0;
    let window = frame / partitions.len() as f64;
    xml.push_str(&format!("  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"{frame}\">\n"));
    for i in 0..partitions.len() {
        xml.push_str(&format!(
            "    <Partition_Schedule PartitionIdentifier=\"{id}\" PeriodSeconds=\"{frame}\" PeriodDurationSeconds=\"{window}\">\n      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"{start}\" WindowDurationSeconds=\"{window}\" pt:Core=\"0\"/>\n    </Partition_Schedule>\n",
            id = i + 1,
            start = window * i as f64,
        ));
    }
    xml.push_str("  </Module_Schedule>\n</ARINC_653_Module>\n");
    let path = dir.join("module.xml");
    std::fs::write(&path, xml).unwrap();
    path
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Normal,
    Term,
    Kill,
}

/// What is left of the run of module process `pid` (empty when nothing): processes carrying
/// `marker`, orphans, its cgroup directories (unless `killed`: a killed run cannot remove them
/// itself, the next run does) and its /run/partita entries.
fn left_of(pid: u32, marker: &str, killed: bool) -> Vec<String> {
    let mut left: Vec<String> = host::marked(marker).into_iter().map(|p| format!("process {p} carrying the marker")).collect();
    left.extend(orphans(&[]).into_iter().map(|(p, cmd)| format!("orphan process {p}: {cmd}")));
    if !killed {
        left.extend(run_cgroup_dirs(pid).into_iter().map(|d| format!("cgroup {}", d.display())));
    }
    left.extend(run_dir_entries(pid).into_iter().map(|d| format!("{}", d.display())));
    left
}

/// Runs `config` and ends it as `end` says; returns the module's pid once it has exited.
fn run_once(config: &Path, marker: &str, end: End) -> u32 {
    let config = config.to_str().unwrap();
    if end == End::Normal {
        let child = partita().args(["run", config, "--frames", "5"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        return pid;
    }
    let mut cmd = partita();
    cmd.args(["run", config, "--duration", "60s"]);
    if end == End::Kill {
        // Killed, the module cannot restore real-time throttling: it must not lift it.
        cmd.arg("--keep-rt-throttling");
    }
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let started = Instant::now();
    while host::marked(marker).len() < 2 {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            panic!("the run ended ({status}) before its partitions ran: {}", String::from_utf8_lossy(&out.stderr));
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the partitions did not start within 20 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let sig = if end == End::Term { libc::SIGTERM } else { libc::SIGKILL };
    // SAFETY: kill(2) to our own child, which we have not reaped yet.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
    let out = child.wait_with_output().unwrap();
    match end {
        End::Term => assert_eq!(out.status.code(), Some(0), "SIGTERM: {}", String::from_utf8_lossy(&out.stderr)),
        _ => assert_eq!(std::os::unix::process::ExitStatusExt::signal(&out.status), Some(libc::SIGKILL)),
    }
    pid
}

/// 99 runs in a row of a two-partition module, a third each ended normally (5 frames), by
/// SIGTERM and by SIGKILL of `partita run`, each started once the previous one is gone.
/// After each: no process of it (marker, orphans), no cgroup directory (a killed run's go with
/// the next run), no /run/partita entry, real-time throttling as before; after all: none of
/// that from any run, and no new /dev/shm file, mount or descriptor of the test process.
#[test]
fn a_hundred_runs_ended_normally_by_sigterm_and_by_sigkill_leave_nothing_behind() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !partitions::privileged() {
        return;
    }
    host::become_subreaper();
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("partita-leaks-marker-{}", std::process::id());
    // Idle partitions (a busy one killed at its real-time priority can hold its CPU in the
    // kernel's exit path); each has a child of its own, without the marker.
    let script = format!("echo up; sleep 1000; : {marker}");
    let config = module(dir.path(), 20, "", &[("A", &script), ("B", &script)]);
    let _machine = machine::machine_lock();
    // Throttling on, as on a default Debian, so that the runs lift and restore it.
    let _rt = host::RtRuntime::set("950000");
    let before = Snapshot::take();
    let mut pids = Vec::new();
    let mut killed = Vec::new();
    for i in 0..99 {
        // The last run ends by SIGTERM: it also removes the killed runs' cgroups.
        let end = [End::Normal, End::Kill, End::Term][i % 3];
        let pid = run_once(&config, &marker, end);
        pids.push(pid);
        settle(&format!("run {i} ({end:?}, pid {pid})"), Duration::from_secs(10), || left_of(pid, &marker, end == End::Kill));
        // A run removes what killed runs before it left.
        let stale: Vec<PathBuf> = killed.iter().filter(|&&p| p != pid).flat_map(|&p| run_cgroup_dirs(p)).collect();
        assert!(stale.is_empty(), "run {i} left killed runs' cgroups: {stale:?}");
        assert_eq!(host::rt_runtime(), "950000", "run {i} ({end:?}) changed real-time throttling");
        if end == End::Kill {
            killed.push(pid);
        }
    }
    for &pid in &pids {
        let left = run_cgroup_dirs(pid);
        assert!(left.is_empty(), "cgroups of run {pid}: {left:?}");
    }
    let after = Snapshot::take();
    let left = before.leftovers(&after);
    assert!(left.is_empty(), "{left:#?}");
}

/// Counted from the run's trace.
fn restarts(trace: &Path) -> Vec<i64> {
    read_trace(std::io::BufReader::new(std::fs::File::open(trace).unwrap()))
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::PartitionRestart { t, partition: 2, .. } => Some(*t),
            _ => None,
        })
        .collect()
}

/// A program that exits at once is an ILLEGAL_REQUEST of its partition in system state 1 (it
/// never reaches NORMAL), restarted COLD_START by its table: once in each of its windows.
const RESTART_TABLES: &str = r#"  <System_HM_Table>
    <System_State_Entry SystemState="1">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="PARTITION" ErrorCode="ILLEGAL_REQUEST"/>
    </System_State_Entry>
  </System_HM_Table>
  <Partition_HM_Table PartitionIdentifier="2" PartitionName="Faulty">
    <System_State_Entry SystemState="1"><Error_ID_Action ErrorIdentifier="1" Action="COLD_START"/></System_State_Entry>
  </Partition_HM_Table>
"#;

/// One sample of the module process while it runs.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at_ms: u128,
    fds: usize,
    threads: usize,
    cgroups: usize,
}

/// Over a thousand restarts of a partition whose program exits at once, in one run: the module's
/// descriptors, threads and cgroup directories stay flat (sampled through the run) and after the
/// run nothing is left.
#[test]
fn a_thousand_restarts_leave_the_module_flat_and_nothing_behind() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !partitions::privileged() {
        return;
    }
    host::become_subreaper();
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("partita-restart-marker-{}", std::process::id());
    // 5 ms windows in a 10 ms frame: one restart per frame.
    let config =
        module(dir.path(), 10, RESTART_TABLES, &[("Calm", &format!("sleep 1000; : {marker}")), ("Faulty", &format!("exit 3; : {marker}"))]);
    let trace = dir.path().join("run.trace");
    let _machine = machine::machine_lock();
    let before = Snapshot::take();
    let child = partita()
        .args(["run", config.to_str().unwrap(), "--duration", "14s", "--trace", trace.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let started = Instant::now();
    let mut samples = Vec::new();
    // A sample every 500 ms from 1 s on, while the run lasts.
    while started.elapsed() < Duration::from_millis(13_000) {
        std::thread::sleep(Duration::from_millis(500));
        if started.elapsed() < Duration::from_secs(1) {
            continue;
        }
        let s = Sample {
            at_ms: started.elapsed().as_millis(),
            fds: host::fd_count(&pid.to_string()),
            threads: host::thread_count(pid),
            cgroups: run_cgroup_dirs(pid).len(),
        };
        if s.threads == 0 {
            break; // it ended
        }
        samples.push(s);
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let t = restarts(&trace);
    eprintln!("{} restarts in {:?}; samples {samples:?}", t.len(), started.elapsed());
    assert!(t.len() >= 1000, "{} restarts\n{stderr}", t.len());
    let (first, last) = (samples.first().copied().unwrap(), samples.last().copied().unwrap());
    assert!(samples.len() >= 10 && last.at_ms - first.at_ms >= 8000, "{samples:?}");
    // Restarts between the first and last samples: most of them (the module epoch is within
    // a second of the spawn, so the trace times are compared with a 1 s margin).
    let between = t.iter().filter(|&&t| t > (first.at_ms as i64 + 1000) * 1_000_000 && t < (last.at_ms as i64 - 1000) * 1_000_000).count();
    assert!(between >= 500, "only {between} restarts between the samples {first:?} and {last:?}");
    // Flat: a restart may be half done when a sample is taken (its pipes and pidfd open).
    for s in &samples {
        assert!(s.fds <= first.fds + 8, "descriptors grew: {samples:?}");
        assert!(s.threads <= first.threads + 2, "threads grew: {samples:?}");
        assert!(s.cgroups <= first.cgroups + 2, "cgroup directories grew: {samples:?}");
    }
    assert!(first.cgroups > 0, "no cgroup directory seen: {samples:?}");
    settle("after the restarts", Duration::from_secs(10), || left_of(pid, &marker, false));
    let left = before.leftovers(&Snapshot::take());
    assert!(left.is_empty(), "{left:#?}");
}
