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
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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

/// A partition of a test module: name, program, arguments (XML-escaped here).
struct Part {
    name: String,
    exe: String,
    args: String,
}

/// A partition running `script` with /bin/sh.
fn sh(name: &str, script: &str) -> Part {
    Part { name: name.into(), exe: "/bin/sh".into(), args: format!("-c '{script}'") }
}

/// A module on CPU 1 only (module core 0): `partitions` share a `frame_ms` major frame in equal
/// windows; `tables` is inserted before the partitions.
fn module(dir: &Path, frame_ms: u32, tables: &str, partitions: &[Part]) -> PathBuf {
    let mut xml = format!("<ARINC_653_Module ModuleName=\"Leaks\" xmlns:pt=\"urn:partita:1\">\n  <pt:Cores Cpus=\"1\"/>\n{tables}");
    for (i, p) in partitions.iter().enumerate() {
        xml.push_str(&format!(
            "  <Partition PartitionIdentifier=\"{}\" PartitionName=\"{}\" pt:Executable=\"{}\" pt:Arguments=\"{}\"/>\n",
            i + 1,
            p.name,
            escape(&p.exe),
            escape(&p.args)
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
    let config = module(dir.path(), 20, "", &[sh("A", &script), sh("B", &script)]);
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

/// Over a thousand restarts of a partition whose program exits at once, in one run (ended by
/// SIGTERM once there were enough): the module's
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
    // 5 ms windows in a 10 ms frame: at most one restart per frame (about 10 s for 1000).
    let parts = [sh("Calm", &format!("sleep 1000; : {marker}")), sh("Faulty", &format!("exit 3; : {marker}"))];
    let config = module(dir.path(), 10, RESTART_TABLES, &parts);
    let trace = dir.path().join("run.trace");
    let _machine = machine::machine_lock();
    let before = Snapshot::take();
    let mut child = partita()
        .args(["run", config.to_str().unwrap(), "--duration", "90s", "--trace", trace.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // The module says on stdout each time the program ends: the run goes on until it has
    // ended 1050 times (how long that takes depends on the machine's load), then SIGTERM.
    let ended = Arc::new(AtomicUsize::new(0));
    let stdout = child.stdout.take().unwrap();
    let counter = ended.clone();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains("partition Faulty ended") {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    let started = Instant::now();
    let mut samples = Vec::new();
    // A sample every 500 ms from 1 s on.
    while ended.load(Ordering::Relaxed) < 1050 && started.elapsed() < Duration::from_secs(80) {
        std::thread::sleep(Duration::from_millis(500));
        samples.push(Sample {
            at_ms: started.elapsed().as_millis(),
            fds: host::fd_count(&pid.to_string()),
            threads: host::thread_count(pid),
            cgroups: run_cgroup_dirs(pid).len(),
        });
    }
    // SAFETY: kill(2) to our own child, which we have not reaped yet.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGTERM) }, 0);
    let signalled = Instant::now();
    let out = child.wait_with_output().unwrap();
    let ending = signalled.elapsed();
    reader.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // A restart cut by the end (its program frozen mid-setup) used to hold the end for 10 s.
    assert!(ending < Duration::from_secs(5), "the run took {ending:?} to end after SIGTERM\n{stderr}");
    samples.retain(|s| s.at_ms >= 1000 && s.threads > 0);
    let t = restarts(&trace);
    eprintln!("{} restarts in {:?}; samples {samples:?}", t.len(), started.elapsed());
    assert!(t.len() >= 1000, "{} restarts\n{stderr}", t.len());
    let (first, last) = (samples.first().copied().unwrap(), samples.last().copied().unwrap());
    assert!(samples.len() >= 10 && last.at_ms - first.at_ms >= 5000, "{samples:?}");
    // Restarts between the first and last samples: most of them (the module epoch is within
    // a second of the spawn, so the trace times are compared with a 1 s margin).
    let between = t.iter().filter(|&&t| t > (first.at_ms as i64 + 1000) * 1_000_000 && t < (last.at_ms as i64 - 1000) * 1_000_000).count();
    assert!(between >= 500, "only {between} restarts between the samples {first:?} and {last:?}");
    // Flat: a sample may catch a restart half done (its pipes and pidfd open, or the old
    // program's closed and the new one's not yet), so the floors of the first and last samples
    // are compared; a leak of one item per restart would raise the later floor by hundreds.
    let floor = |s: &[Sample], f: fn(&Sample) -> usize| s.iter().map(f).min().unwrap();
    let (early, late) = (&samples[..5], &samples[samples.len() - 5..]);
    for (what, f) in [
        ("descriptors", (|s: &Sample| s.fds) as fn(&Sample) -> usize),
        ("threads", |s: &Sample| s.threads),
        ("cgroup directories", |s: &Sample| s.cgroups),
    ] {
        let (start, end) = (floor(early, f), floor(late, f));
        // One restart in progress holds a few descriptors (pipes, pidfd, doorbell): a late floor
        // caught mid-restart in all five samples, against an early one that was not, is up to
        // that much higher (seen in CI: 40 -> 45, flat at 45 for 10 s); a leak is hundreds.
        assert!(end <= start + 8, "{what} grew from {start} to {end}: {samples:?}");
        let top = samples.iter().map(f).max().unwrap();
        assert!(top <= start + 32, "{what} reached {top} (from {start}): {samples:?}");
    }
    assert!(first.cgroups > 0, "no cgroup directory seen: {samples:?}");
    settle("after the restarts", Duration::from_secs(10), || left_of(pid, &marker, false));
    let left = before.leftovers(&Snapshot::take());
    assert!(left.is_empty(), "{left:#?}");
}

/// The partition actions, one partition each (in this order) in system state 1; in state 2
/// the order is reversed, so that a table looked up in the wrong state shows.
const ACTIONS: [&str; 4] = ["IGNORE", "IDLE", "WARM_START", "COLD_START"];

/// HM tables for [`every_hm_action_in_both_system_states_leaves_nothing_behind`]: in states 1
/// and 2, NUMERIC_ERROR is PARTITION level (the partition's action from [`ACTIONS`]),
/// HARDWARE_FAULT, STACK_OVERFLOW and POWER_FAILURE are MODULE level (IGNORE, RESET, SHUTDOWN).
fn coverage_tables() -> String {
    let mut xml = String::from("  <System_HM_Table>\n");
    for state in [1, 2] {
        xml.push_str(&format!(
            "    <System_State_Entry SystemState=\"{state}\">\n      <Error_ID_Level ErrorIdentifier=\"1\" ErrorLevel=\"PARTITION\" ErrorCode=\"NUMERIC_ERROR\"/>\n      <Error_ID_Level ErrorIdentifier=\"2\" ErrorLevel=\"MODULE\" ErrorCode=\"HARDWARE_FAULT\"/>\n      <Error_ID_Level ErrorIdentifier=\"3\" ErrorLevel=\"MODULE\" ErrorCode=\"STACK_OVERFLOW\"/>\n      <Error_ID_Level ErrorIdentifier=\"4\" ErrorLevel=\"MODULE\" ErrorCode=\"POWER_FAILURE\"/>\n    </System_State_Entry>\n"
        ));
    }
    xml.push_str("  </System_HM_Table>\n  <Module_HM_Table>\n");
    for state in [1, 2] {
        xml.push_str(&format!(
            "    <System_State_Entry SystemState=\"{state}\">\n      <Error_ID_Action ErrorIdentifier=\"2\" Action=\"IGNORE\"/>\n      <Error_ID_Action ErrorIdentifier=\"3\" Action=\"RESET\"/>\n      <Error_ID_Action ErrorIdentifier=\"4\" Action=\"SHUTDOWN\"/>\n    </System_State_Entry>\n"
        ));
    }
    xml.push_str("  </Module_HM_Table>\n");
    for (i, action) in ACTIONS.iter().enumerate() {
        let reversed = ACTIONS[ACTIONS.len() - 1 - i];
        xml.push_str(&format!(
            "  <Partition_HM_Table PartitionIdentifier=\"{id}\" PartitionName=\"P{id}\">\n    <System_State_Entry SystemState=\"1\"><Error_ID_Action ErrorIdentifier=\"1\" Action=\"{action}\"/></System_State_Entry>\n    <System_State_Entry SystemState=\"2\"><Error_ID_Action ErrorIdentifier=\"1\" Action=\"{reversed}\"/></System_State_Entry>\n  </Partition_HM_Table>\n",
            id = i + 1
        ));
    }
    xml
}

/// Every partition action (IGNORE, IDLE, WARM_START, COLD_START) and module action (IGNORE,
/// RESET, SHUTDOWN) in system state 1 (shell programs, which never leave COLD_START) and in
/// state 2 (tests/partitions/hm.c, NORMAL), from injected errors: each is the table's
/// decision for that state and is carried out, the module shuts down with status 1, and
/// nothing of either run is left.
#[test]
fn every_hm_action_in_both_system_states_leaves_nothing_behind() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !partitions::privileged() {
        return;
    }
    host::become_subreaper();
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("partita-hm-marker-{}", std::process::id());
    let hm = partitions::build("hm", dir.path()).display().to_string();
    let _machine = machine::machine_lock();
    let before = Snapshot::take();
    for state in [1, 2] {
        let parts: Vec<Part> = (1..=ACTIONS.len())
            .map(|id| match state {
                1 => sh(&format!("P{id}"), &format!("sleep 1000; : {marker}")),
                _ => Part { name: format!("P{id}"), exe: hm.clone(), args: format!("none nohandler {marker}") },
            })
            .collect();
        let config = module(dir.path(), 20, &coverage_tables(), &parts);
        let mut inject: Vec<String> = (1..=ACTIONS.len()).map(|id| format!("P{id}:NUMERIC_ERROR@300ms")).collect();
        inject.extend(["P1:HARDWARE_FAULT@700ms".into(), "P2:STACK_OVERFLOW@900ms".into(), "P3:POWER_FAILURE@1500ms".into()]);
        let args: Vec<&str> = inject.iter().flat_map(|j| ["--inject", j.as_str()]).collect();
        let trace = dir.path().join("run.trace");
        let child = partita()
            .args(["run", config.to_str().unwrap(), "--frames", "250", "--trace", trace.to_str().unwrap()])
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let ran = child.wait_with_output().unwrap();
        let r = partitions::Ran {
            status: ran.status.code(),
            stdout: String::from_utf8_lossy(&ran.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&ran.stderr).into_owned(),
            events: read_trace(std::io::BufReader::new(std::fs::File::open(&trace).unwrap())).unwrap(),
        };
        let hm_event = |id: u32, code: &str| {
            r.events.iter().find_map(|e| match e {
                Event::HmEvent { partition, code: c, level, action, .. } if *partition == id && c == code => {
                    Some((level.as_str(), action.as_str()))
                }
                _ => None,
            })
        };
        let restarts = |id: u32| -> Vec<(&str, &str)> {
            r.events
                .iter()
                .filter_map(|e| match e {
                    Event::PartitionRestart { partition, mode, start_condition, .. } if *partition == id => {
                        Some((mode.as_str(), start_condition.as_str()))
                    }
                    _ => None,
                })
                .collect()
        };
        let out = format!("state {state}:\n{}\n{}", r.stdout, r.stderr);
        assert_eq!(r.status, Some(1), "SHUTDOWN: {out}");
        for (i, action) in ACTIONS.iter().enumerate() {
            let id = i as u32 + 1;
            let action = if state == 1 { *action } else { ACTIONS[ACTIONS.len() - 1 - i] };
            assert_eq!(hm_event(id, "NUMERIC_ERROR"), Some(("PARTITION", action)), "P{id}: {out}");
            let mut expected = match action {
                "WARM_START" | "COLD_START" => vec![(action, "HM_PARTITION_RESTART")],
                _ => vec![],
            };
            // RESET: every partition, the idle one too.
            expected.push(("COLD_START", "HM_MODULE_RESTART"));
            assert_eq!(restarts(id), expected, "P{id}: {out}");
            let idled = r.events.iter().any(|e| matches!(e, Event::ModeChange { partition, to, .. } if *partition == id && to == "IDLE"));
            assert_eq!(idled, action == "IDLE", "P{id}: {out}");
        }
        assert_eq!(hm_event(1, "HARDWARE_FAULT"), Some(("MODULE", "IGNORE")), "{out}");
        assert_eq!(hm_event(2, "STACK_OVERFLOW"), Some(("MODULE", "RESET")), "{out}");
        assert_eq!(hm_event(3, "POWER_FAILURE"), Some(("MODULE", "SHUTDOWN")), "{out}");
        assert!(r.events.iter().any(|e| matches!(e, Event::ModuleStop { reason, .. } if reason == "health monitor shutdown")), "{out}");
        settle(&format!("state {state}"), Duration::from_secs(10), || left_of(pid, &marker, false));
    }
    let left = before.leftovers(&Snapshot::take());
    assert!(left.is_empty(), "{left:#?}");
}
