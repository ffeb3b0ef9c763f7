//! `partita run` on real partitions (shell programs, so no APEX runtime is involved): the
//! trace shows every window on every core in order and no overlap; a partition that exits, is
//! killed or cannot start is reported clearly while the others keep their windows.
//! Needs root (cgroups, real-time priorities): skipped with a message otherwise, except with
//! CI=true, where a missing capability fails the test.

mod machine;

use assert_cmd::Command;
use partita_trace::summary::summarize;
use partita_trace::{Event, read_trace};
use std::path::Path;

fn privileged() -> bool {
    partita_testkit::require("root and cgroups", partita_testkit::is_root() && Path::new("/sys/fs/cgroup").is_dir())
}

fn module(dir: &Path, partitions: &[(&str, &str)]) -> std::path::PathBuf {
    let mut xml = String::from("<ARINC_653_Module ModuleName=\"T\" xmlns:pt=\"urn:partita:1\">\n  <pt:Cores Cpus=\"0-1\"/>\n");
    for (i, (name, script)) in partitions.iter().enumerate() {
        let script = script.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
        xml.push_str(&format!(
            "  <Partition PartitionIdentifier=\"{}\" PartitionName=\"{name}\" pt:Executable=\"/bin/sh\" pt:Arguments=\"-c '{script}'\"/>\n",
            i + 1
        ));
    }
    // Partitions 1 and 2 alternate on core 0, partition 3 (if any) runs on core 1.
    xml.push_str("  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"0.04\">\n");
    for (i, _) in partitions.iter().enumerate() {
        let (start, core) = match i {
            0 => ("0", 0),
            1 => ("0.02", 0),
            _ => ("0", 1),
        };
        xml.push_str(&format!(
            "    <Partition_Schedule PartitionIdentifier=\"{}\" PeriodSeconds=\"0.04\" PeriodDurationSeconds=\"0.015\">\n      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"{start}\" WindowDurationSeconds=\"0.015\" pt:Core=\"{core}\"/>\n    </Partition_Schedule>\n",
            i + 1
        ));
    }
    xml.push_str("  </Module_Schedule>\n</ARINC_653_Module>\n");
    let path = dir.join("module.xml");
    std::fs::write(&path, xml).unwrap();
    path
}

struct Outcome {
    stdout: String,
    stderr: String,
    events: Vec<Event>,
}

fn run(config: &Path, frames: u32) -> Outcome {
    let trace = config.with_extension("trace");
    let _machine = machine::machine_lock();
    let out = Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--frames", &frames.to_string(), "--trace", trace.to_str().unwrap()])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let events = read_trace(std::io::BufReader::new(std::fs::File::open(&trace).unwrap())).unwrap();
    Outcome { stdout: String::from_utf8_lossy(&out.stdout).into(), stderr: String::from_utf8_lossy(&out.stderr).into(), events }
}

fn window_starts(events: &[Event], partition: u32) -> Vec<i64> {
    events.iter().filter(|e| matches!(e, Event::WindowStart { partition: p, .. } if *p == partition)).map(Event::t).collect()
}

#[test]
fn windows_follow_the_schedule_on_every_core_without_overlap() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config =
        module(dir.path(), &[("A", "echo hello from A; while :; do :; done"), ("B", "while :; do :; done"), ("C", "while :; do :; done")]);
    let o = run(&config, 25);
    assert!(o.stdout.contains("[A] hello from A"), "{}", o.stdout);
    let s = summarize(&o.events);
    assert!(s.check.ok, "{s}");
    // Every partition got a window in every frame, in the planned order on its core.
    for p in 1..=3 {
        assert_eq!(window_starts(&o.events, p).len(), 25, "partition {p}");
    }
    let mut core0: Vec<(i64, u32)> = o
        .events
        .iter()
        .filter_map(|e| match e {
            Event::WindowStart { core: 0, planned, partition, .. } => Some((*planned, *partition)),
            _ => None,
        })
        .collect();
    core0.sort();
    assert!(core0.windows(2).all(|w| w[0].1 != w[1].1), "A and B alternate on core 0");
    // The busy partitions actually ran, and were stopped at each window end.
    let stops = o.events.iter().filter(|e| matches!(e, Event::PartitionStopped { .. })).count();
    assert_eq!(stops, 75, "{stops} stops for 75 windows");
}

/// The epoch is decided once every partition's program is started (held before its first
/// instruction), not from a fixed allowance: the trace's first line says when each start-up
/// step began, all before the epoch and in order, and no window opens before the epoch.
#[test]
fn the_epoch_comes_after_every_program_is_started() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = module(dir.path(), &[("A", "echo A ran"), ("B", "echo B ran"), ("C", "echo C ran")]);
    let o = run(&config, 5);
    let Some(Event::ModuleStart { startup, .. }) = o.events.first() else {
        panic!("the trace must begin with module_start: {:?}", o.events.first())
    };
    assert!(
        startup.run_t < startup.prepare_t && startup.prepare_t < startup.started_t && startup.started_t < 0,
        "start-up steps must be ordered and before the epoch: {startup:?}"
    );
    for p in ["A", "B", "C"] {
        assert!(o.stdout.contains(&format!("[{p}] {p} ran")), "{}", o.stdout);
    }
    let first = o.events.iter().filter(|e| matches!(e, Event::WindowStart { .. })).map(Event::t).min().expect("windows");
    assert!(first >= 0, "a window opened {first} ns before the epoch");
}

#[test]
fn a_partition_that_exits_is_reported_and_the_others_keep_their_windows() {
    if !privileged() {
        return;
    }
    // The shell runs as the partition's own unprivileged uid, with a private /tmp: the program it
    // execs must be outside /tmp (wherever the checkout is: a clone under /tmp is hidden too)
    // and reachable by others.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // A program that dies of a memory fault (PID 1 of its namespace ignores signals sent from
    // inside it, but not a fault).
    let crasher = dir.path().join("crasher");
    std::fs::write(dir.path().join("crasher.c"), "int main(void) { *(volatile int *)0 = 1; return 0; }\n").unwrap();
    let built = std::process::Command::new("cc").arg(dir.path().join("crasher.c")).arg("-o").arg(&crasher).status().unwrap();
    assert!(built.success());
    let config = module(
        dir.path(),
        &[("Quitter", "echo bye; exit 3"), ("Busy", "while :; do :; done"), ("Killed", &format!("exec {}", crasher.display()))],
    );
    let o = run(&config, 20);
    assert!(o.stdout.contains("partition Quitter ended (exited with status 3)"), "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("partition Killed ended (killed by signal 11"), "{}\n{}", o.stdout, o.stderr);
    let exits: Vec<u32> = o
        .events
        .iter()
        .filter_map(|e| match e {
            Event::PartitionExit { partition, .. } => Some(*partition),
            _ => None,
        })
        .collect();
    assert_eq!(exits.len(), 2, "{exits:?}");
    assert_eq!(window_starts(&o.events, 2).len(), 20, "Busy keeps every window");
    assert!(summarize(&o.events).check.ok);
}

#[test]
fn a_missing_program_is_reported_and_the_module_runs_the_rest() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = module(dir.path(), &[("Fine", "while :; do :; done")]);
    let xml = std::fs::read_to_string(&config).unwrap().replace("</ARINC_653_Module>", "");
    // A second partition whose program does not exist, on core 0 after Fine's window.
    let xml = xml.replace(
        "  <Module_Schedule",
        "  <Partition PartitionIdentifier=\"2\" PartitionName=\"Ghost\" pt:Executable=\"no/such/program\"/>\n  <Module_Schedule",
    ).replace(
        "  </Module_Schedule>",
        "    <Partition_Schedule PartitionIdentifier=\"2\" PeriodSeconds=\"0.04\" PeriodDurationSeconds=\"0.01\">\n      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0.02\" WindowDurationSeconds=\"0.01\"/>\n    </Partition_Schedule>\n  </Module_Schedule>\n</ARINC_653_Module>",
    );
    std::fs::write(&config, xml).unwrap();
    let o = run(&config, 10);
    assert!(o.stderr.contains("partition Ghost cannot run:") && o.stderr.contains("no/such/program"), "{}", o.stderr);
    assert_eq!(window_starts(&o.events, 1).len(), 10);
}

#[test]
fn ctrl_c_stops_everything_and_leaves_nothing_behind() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("partita-test-marker-{}", std::process::id());
    let busy = format!("while :; do :; done # {marker}");
    let config = module(dir.path(), &[("A", &busy), ("B", &busy), ("C", &busy)]);
    let _machine = machine::machine_lock();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--duration", "60s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for("the three partitions to run", || pgrep(&marker) >= 3);
    // SAFETY: sending SIGINT to our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("interrupted"), "{stdout}");
    assert_eq!(pgrep(&marker), 0, "partition programs left running");
    let leftovers: Vec<String> = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/freezer"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("partita-{pid}")))
        .collect();
    assert!(leftovers.is_empty(), "cgroups left behind: {leftovers:?}");
}

/// Polls `done` until it holds; fails after 20 s.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// How many processes have `needle` in their command line.
fn pgrep(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle)))
        .count()
}

#[test]
fn partitions_die_with_a_killed_module() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("partita-orphan-marker-{}", std::process::id());
    let busy = format!("while :; do :; done # {marker}");
    let config = module(dir.path(), &[("A", &busy), ("B", &busy)]);
    let _machine = machine::machine_lock();
    // Killed, the module cannot restore real-time throttling: leave it alone.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--duration", "60s", "--keep-rt-throttling"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the two partitions to run", || pgrep(&marker) >= 2);
    child.kill().unwrap();
    child.wait().unwrap();
    // The kernel kills them (PR_SET_PDEATHSIG) as the module dies.
    for _ in 0..100 {
        if pgrep(&marker) == 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("partition programs outlived the module");
}

#[test]
fn a_partition_cannot_reach_the_cgroups_kernel_settings_or_mounts() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = "echo cgroup entries $(ls /sys/fs/cgroup | wc -l); \
                  (echo 1 > /proc/sys/kernel/sched_rt_runtime_us) 2>/dev/null && echo sysctl writable || echo sysctl read-only; \
                  mount -t tmpfs none /mnt 2>/dev/null && echo mount allowed || echo mount refused; \
                  grep CapBnd /proc/self/status; \
                  echo pid $$; \
                  while :; do :; done";
    let config = module(dir.path(), &[("Probe", script)]);
    let o = run(&config, 10);
    for expected in ["[Probe] cgroup entries 0", "[Probe] sysctl read-only", "[Probe] mount refused", "[Probe] pid 1"] {
        assert!(o.stdout.contains(expected), "{expected:?} not in:\n{}", o.stdout);
    }
    // No capability is left, not even CAP_SYS_NICE: real-time priorities come from the
    // module's scheduling broker (tests/run_guard.rs).
    assert!(o.stdout.contains("CapBnd:\t0000000000000000"), "{}", o.stdout);
}

/// `--idle-poll`: while the module runs, each module CPU has a spinner pinned to it at the lowest
/// real-time priority, below every partition thread (policy and priority in
/// /proc/PID/task/TID/stat, CPU list in its status), and the partitions keep their windows.
#[test]
fn idle_poll_keeps_a_lowest_priority_spinner_on_each_module_cpu() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = module(dir.path(), &[("A", "while :; do :; done"), ("B", "sleep 60"), ("C", "sleep 60")]);
    let _machine = machine::machine_lock();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--duration", "3s", "--idle-poll"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let expected = [
        ("partita-idle0".to_string(), (libc::SCHED_FIFO, 1), "0".to_string()),
        ("partita-idle1".to_string(), (libc::SCHED_FIFO, 1), "1".to_string()),
    ];
    // The spinners start with the schedulers, then pin themselves and take their priority:
    // look until both are settled or the run ends.
    let tasks = std::path::PathBuf::from(format!("/proc/{}/task", child.id()));
    let mut spinners = Vec::new();
    while spinners != expected && child.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(50));
        spinners = idle_spinners(&tasks);
        spinners.sort();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(spinners, expected);
}

/// The `partita-idle*` threads under /proc/PID/task: (name, (policy, real-time priority), allowed CPUs).
fn idle_spinners(tasks: &Path) -> Vec<(String, (i32, i32), String)> {
    let mut spinners = Vec::new();
    for t in std::fs::read_dir(tasks).into_iter().flatten().filter_map(|e| e.ok()) {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default().trim().to_string();
        if !comm.starts_with("partita-idle") {
            continue;
        }
        let (Ok(stat), Ok(status)) = (std::fs::read_to_string(t.path().join("stat")), std::fs::read_to_string(t.path().join("status")))
        else {
            continue;
        };
        // Fields after the ")" of comm: state is field 3; rt_priority 40, policy 41.
        let after: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
        let (priority, policy): (i32, i32) = (after[40 - 3].parse().unwrap(), after[41 - 3].parse().unwrap());
        let cpus = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_string();
        spinners.push((comm, (policy, priority), cpus));
    }
    spinners
}

const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";

fn rt_runtime() -> String {
    std::fs::read_to_string(RT_RUNTIME).unwrap().trim().to_string()
}

/// Runs `config` with `args` for 2 s, returning the real-time runtime seen while it ran and
/// after, and its stderr.
fn run_watching_rt_runtime(config: &Path, args: &[&str]) -> (Vec<String>, String, String) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--duration", "2s"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    while child.try_wait().unwrap().is_none() {
        seen.push(rt_runtime());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    (seen, rt_runtime(), stderr)
}

/// Real-time throttling would stop busy partitions and the scheduler 50 ms each second: `run`
/// lifts it while the module runs and restores the value it found; `--keep-rt-throttling`
/// leaves it and warns.
#[test]
fn run_lifts_real_time_throttling_while_it_runs_and_restores_it() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = module(dir.path(), &[("A", "sleep 60"), ("B", "sleep 60"), ("C", "sleep 60")]);
    let _machine = machine::machine_lock();
    // The value before any run lifted it: a killed run leaves -1 and its saved value behind.
    let saved = std::fs::read_to_string("/run/partita-rt-runtime").unwrap_or_default().trim().to_string();
    let original = if saved.is_empty() { rt_runtime() } else { saved };
    // Throttling on as on a default Debian (put back as found at the end).
    std::fs::write(RT_RUNTIME, "950000").unwrap();
    let (seen, after, stderr) = run_watching_rt_runtime(&config, &[]);
    let (kept_seen, kept_after, kept_stderr) = run_watching_rt_runtime(&config, &["--keep-rt-throttling"]);
    std::fs::write(RT_RUNTIME, &original).unwrap();
    assert!(seen.iter().any(|v| v == "-1"), "never lifted: {seen:?}\n{stderr}");
    assert_eq!(after, "950000", "{stderr}");
    assert!(stderr.contains("real-time throttling lifted for the run"), "{stderr}");
    assert!(kept_seen.iter().all(|v| v == "950000"), "{kept_seen:?}");
    assert_eq!(kept_after, "950000");
    assert!(kept_stderr.contains("Linux real-time throttling"), "{kept_stderr}");
}

fn resume_latency(cpu: u32) -> String {
    std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/power/pm_qos_resume_latency_us")).unwrap().trim().to_string()
}

/// Starts `partita run` of `config` for `secs` seconds with `args`; samples both CPUs' resume
/// latency requests until it ends or until `stop` says so (then the run is SIGKILLed).
fn run_watching_latency(config: &Path, secs: u32, args: &[&str], mut stop: impl FnMut(&[String]) -> bool) -> (Vec<[String; 2]>, String) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--duration", &format!("{secs}s")])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    while child.try_wait().unwrap().is_none() {
        let now = [resume_latency(0), resume_latency(1)];
        let killed = stop(&now);
        seen.push(now);
        if killed {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (seen, String::from_utf8_lossy(&out.stderr).to_string())
}

/// A CPU that idles deeply wakes slowly: `run` asks for zero wake-up latency on its CPUs (per
/// CPU, "n/a" in sysfs) while the module runs, and gives back the value it found, also when it
/// is killed (its guardian does); `--keep-cpu-latency` leaves it alone.
#[test]
fn run_requests_zero_wake_up_latency_on_its_cpus_and_gives_it_back() {
    if !privileged() {
        return;
    }
    let per_cpu = std::path::Path::new("/sys/devices/system/cpu/cpu1/power/pm_qos_resume_latency_us").exists();
    if !partita_testkit::require("per-CPU PM QoS files (pm_qos_resume_latency_us)", per_cpu) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = module(dir.path(), &[("A", "sleep 60"), ("B", "sleep 60"), ("C", "sleep 60")]);
    let _machine = machine::machine_lock();
    let found = [resume_latency(0), resume_latency(1)];
    assert!(found.iter().all(|v| v != "n/a"), "a request is already held: {found:?} (a run still going, or a killed run not cleaned up)");

    let (seen, stderr) = run_watching_latency(&config, 2, &[], |_| false);
    assert!(seen.iter().any(|s| s[0] == "n/a" && s[1] == "n/a"), "never requested on both CPUs: {seen:?}\n{stderr}");
    assert!(stderr.contains("zero CPU wake-up latency requested for the run on CPU 0, 1"), "{stderr}");
    assert_eq!([resume_latency(0), resume_latency(1)], found, "not given back: {stderr}");

    let (kept, stderr) = run_watching_latency(&config, 1, &["--keep-cpu-latency"], |_| false);
    assert!(kept.iter().all(|s| *s == found), "{kept:?}\n{stderr}");

    // Killed while it holds the request: the guardian gives it back.
    let (seen, stderr) = run_watching_latency(&config, 30, &[], |s| s[0] == "n/a" && s[1] == "n/a");
    assert!(seen.last().is_some_and(|s| s[0] == "n/a"), "{seen:?}\n{stderr}");
    wait_for("the guardian to give the request back", || [resume_latency(0), resume_latency(1)] == found);
}
