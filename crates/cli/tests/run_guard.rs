//! No partition can take a core (issue 10): a C partition (tests/partitions/schedhog.c) asks
//! for real-time priorities above the partitions' ceiling (refused by the module's scheduling
//! broker) and then spins at its ceiling with several threads, beside a well-behaved
//! partition on the same core, which keeps its windows; the run still ends at --duration, on
//! SIGTERM, and a SIGKILLed run leaves nothing behind (its guardian). Two runs never share a
//! CPU, and a CPU held by a foreign real-time task is refused. Every module here runs on CPU 1
//! only. Needs root (skipped with a message otherwise; a failure with CI=true).

mod machine;
mod partitions;

use partita_trace::summary::summarize;
use partita_trace::{Event, read_trace};
use partitions::{build, privileged, ran_intervals};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

const MS: i64 = 1_000_000;
/// The well-behaved partition's window in the 20 ms frame (the hog has 0-10 ms).
const GOOD_WINDOW: (i64, i64) = (10, 20);

/// A partition: name, program, arguments, windows ((start, end) in ms of the frame).
type PartitionSpec<'a> = (&'a str, &'a Path, &'a str, &'a [(u32, u32)]);

/// `dir/module.xml` on CPU 1 only: the partitions in a frame of `frame_ms`.
fn module(dir: &Path, frame_ms: u32, partitions: &[PartitionSpec<'_>]) -> PathBuf {
    let mut xml = String::from("<ARINC_653_Module ModuleName=\"Guard\" xmlns:pt=\"urn:partita:1\">\n  <pt:Cores Cpus=\"1\"/>\n");
    for (i, (name, exe, args, _)) in partitions.iter().enumerate() {
        xml.push_str(&format!(
            "  <Partition PartitionIdentifier=\"{}\" PartitionName=\"{name}\" pt:Executable=\"{}\" pt:Arguments=\"{args}\"/>\n",
            i + 1,
            exe.display()
        ));
    }
    let s = |ms: u32| format!("{}.{:03}", ms / 1000, ms % 1000);
    xml.push_str(&format!("  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"{}\">\n", s(frame_ms)));
    for (i, (_, _, _, windows)) in partitions.iter().enumerate() {
        let total: u32 = windows.iter().map(|(a, b)| b - a).sum();
        xml.push_str(&format!(
            "    <Partition_Schedule PartitionIdentifier=\"{}\" PeriodSeconds=\"{}\" PeriodDurationSeconds=\"{}\">\n",
            i + 1,
            s(frame_ms),
            s(total)
        ));
        for (w, (a, b)) in windows.iter().enumerate() {
            xml.push_str(&format!(
                "      <Window_Schedule WindowIdentifier=\"{}\" WindowStartSeconds=\"{}\" WindowDurationSeconds=\"{}\" pt:Core=\"0\"/>\n",
                w + 1,
                s(*a),
                s(b - a)
            ));
        }
        xml.push_str("    </Partition_Schedule>\n");
    }
    xml.push_str("  </Module_Schedule>\n</ARINC_653_Module>\n");
    let config = dir.join("module.xml");
    std::fs::write(&config, xml).unwrap();
    config
}

/// The hog (0-10 ms) and the well-behaved timecheck partition (10-20 ms) on CPU 1.
fn hog_and_good(dir: &Path, hog_args: &str) -> PathBuf {
    let hog = build("schedhog", dir);
    let good = build("timecheck", dir);
    module(dir, 20, &[("Hog", &hog, hog_args, &[(0, 10)]), ("Good", &good, "", &[(GOOD_WINDOW.0 as u32, GOOD_WINDOW.1 as u32)])])
}

/// A `partita run` in the background, its output collected line by line.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Running {
    fn start(config: &Path, extra: &[&str]) -> Running {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin!("partita"))
            .arg("run")
            .arg(config)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let (stdout, stderr) = (Arc::new(Mutex::new(String::new())), Arc::new(Mutex::new(String::new())));
        let (out, o) = (child.stdout.take().unwrap(), stdout.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                o.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = tx.send(line);
            }
        });
        let (mut err, e) = (child.stderr.take().unwrap(), stderr.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                e.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Running { child, lines, stdout, stderr }
    }

    /// Waits (at most `timeout`) for a line of stdout equal to `line`.
    fn wait_line(&self, line: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(l) if l == line => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// The exit code if the run ends within `timeout`.
    fn wait_exit(&mut self, timeout: Duration) -> Option<Option<i32>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s.code());
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }

    fn output(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout.lock().unwrap(), self.stderr.lock().unwrap())
    }
}

impl Drop for Running {
    /// A run left behind by a failed assertion ends with SIGTERM (its partitions and cgroups
    /// cleaned up by the run itself), or SIGKILL (its guardian).
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.signal(libc::SIGTERM);
            if self.wait_exit(Duration::from_secs(10)).is_none() {
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
    }
}

/// The cgroup directories of module process `pid`'s runs, in every cgroup hierarchy.
fn cgroup_dirs(pid: u32) -> Vec<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let mut dirs = Vec::new();
    for m in mounts.lines().map(|l| l.split_whitespace().collect::<Vec<_>>()).filter(|f| f.len() > 2 && f[2].starts_with("cgroup")) {
        for e in std::fs::read_dir(m[1]).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == format!("partita-{pid}") || name.starts_with(&format!("partita-{pid}-")) {
                dirs.push(e.path());
            }
        }
    }
    dirs
}

/// Every process in the cgroups below `dir`.
fn pids_below(dir: &Path) -> Vec<i32> {
    let mut pids: Vec<i32> = ["cgroup.procs", "tasks"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        .flat_map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect::<Vec<_>>())
        .collect();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            pids.extend(pids_below(&e.path()));
        }
    }
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// A process that exists and is not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

/// Demotes and kills what a failed test left (never a real-time thread killed as such).
fn clean_up(pids: &[i32]) {
    let normal = libc::sched_param { sched_priority: 0 };
    for &pid in pids {
        for t in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
            if let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
                // SAFETY: sched_setscheduler on a thread id with a valid parameter.
                unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &normal) };
            }
        }
        // SAFETY: kill(2) with SIGKILL on a pid the test found in the run's cgroups.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// What the hog prints before it spins: it holds no filter listener, everything above 90 is
/// refused with EPERM (1), 90 granted.
fn assert_ceiling_held(stdout: &str, stderr: &str) {
    for expected in [
        "[Hog] listeners 0",
        "[Hog] fifo99 1",
        "[Hog] fifo91 1",
        "[Hog] deadline 1",
        "[Hog] thread95 1",
        "[Hog] fifo90 0",
        "[Hog] setparam99 1",
        "[Hog] thread90 0",
        "[Hog] now 1 90",
    ] {
        assert!(stdout.lines().any(|l| l == expected), "{expected:?} not in:\n{stdout}\nstderr:\n{stderr}");
    }
}

#[test]
fn a_partition_gets_no_priority_above_its_ceiling_and_spinning_at_it_takes_nothing_from_its_core() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = hog_and_good(dir.path(), "spin 2");
    let trace = dir.path().join("run.trace");
    let _machine = machine::machine_lock();
    let started = Instant::now();
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--duration", "3s", "--trace", trace.to_str().unwrap(), "--logs"])
        .arg(dir.path().join("logs"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(took < Duration::from_secs(30), "a 3 s run took {took:?}");
    assert_ceiling_held(&stdout, &stderr);
    let spinners = stdout.lines().filter(|l| *l == "[Hog] spinner 0").count();
    assert!(stdout.contains("[Hog] spinning") && spinners >= 2, "the hog did not spin at 90 with its threads:\n{stdout}");
    // The well-behaved partition on the same core ran in its windows, and only there: each
    // interval starts inside its window and ends before the module had stopped it. (A stop can
    // complete late when the host delays the scheduler's cgroup.freeze write, for example while
    // other processes create cgroups or move tasks: issue 10, Deliver 3. Such an overrun is
    // bounded by that stop and is not the hog's doing; the hog's doing would show in most
    // windows, which the last bound catches.)
    let events = read_trace(BufReader::new(std::fs::File::open(&trace).unwrap())).unwrap();
    let good_id = 2;
    let stopped: Vec<i64> = events
        .iter()
        .filter_map(|e| match e {
            Event::PartitionStopped { t, partition, .. } if *partition == good_id => Some(*t),
            _ => None,
        })
        .collect();
    let log = std::fs::read_to_string(dir.path().join("logs/Good.log")).unwrap();
    let intervals = ran_intervals(&log);
    assert!(intervals.len() >= 40, "Good ran in only {} intervals in 3 s:\n{log}\n{stdout}", intervals.len());
    let mut overruns = 0;
    for &(start, end) in &intervals {
        let frame = start.div_euclid(20 * MS) * 20 * MS;
        let (open, close) = (frame + GOOD_WINDOW.0 * MS, frame + GOOD_WINDOW.1 * MS);
        assert!(start >= open && start < close, "Good started running at {start} ns, outside its window [{open}, {close}]");
        if end > close {
            overruns += 1;
            let stop = stopped.iter().copied().find(|&t| t >= start);
            assert!(
                stop.is_some_and(|t| end <= t + 50_000),
                "Good ran until {end} ns, after its window [{open}, {close}] and after its stop completed ({stop:?})"
            );
        }
    }
    assert!(overruns * 10 <= intervals.len(), "Good overran {overruns} of {} windows", intervals.len());
    let summary = summarize(&events);
    assert!(summary.check.ok, "{summary}");
}

#[test]
fn sigterm_ends_a_run_whose_partition_spins_at_its_ceiling() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = hog_and_good(dir.path(), "spin 2");
    let _machine = machine::machine_lock();
    let mut run = Running::start(&config, &["--duration", "60s"]);
    assert!(run.wait_line("[Hog] spinning", Duration::from_secs(20)), "{}", run.output());
    let pid = run.child.id();
    assert!(!cgroup_dirs(pid).is_empty(), "the run has no cgroup");
    run.signal(libc::SIGTERM);
    // Far below the 60 s the run would last: a run that does not react to SIGTERM fails here.
    // (Not a timing claim: 2 s failed about 1 run in 4 under stress-ng on this VM.)
    let code = run.wait_exit(Duration::from_secs(10));
    assert_eq!(code, Some(Some(0)), "not ended within 10 s of SIGTERM (its --duration is 60 s), or not cleanly:\n{}", run.output());
    assert!(run.output().contains("interrupted"), "{}", run.output());
    assert_ceiling_held(&run.stdout.lock().unwrap(), &run.stderr.lock().unwrap());
    assert_eq!(cgroup_dirs(pid), Vec::<PathBuf>::new(), "cgroups left behind");
}

#[test]
fn a_killed_run_leaves_no_partition_and_no_cgroup() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = hog_and_good(dir.path(), "spin 2");
    let _machine = machine::machine_lock();
    let mut run = Running::start(&config, &["--duration", "60s"]);
    assert!(run.wait_line("[Hog] spinning", Duration::from_secs(20)), "{}", run.output());
    let pid = run.child.id();
    let dirs = cgroup_dirs(pid);
    let pids: Vec<i32> = dirs.iter().flat_map(|d| pids_below(d)).collect();
    assert!(pids.len() >= 2, "partition processes {pids:?} in {dirs:?}");
    run.signal(libc::SIGKILL);
    assert_eq!(run.wait_exit(Duration::from_secs(5)), Some(None), "SIGKILL did not end partita run");
    let deadline = Instant::now() + Duration::from_secs(5);
    let left = loop {
        let procs: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        let cgroups = cgroup_dirs(pid);
        if (procs.is_empty() && cgroups.is_empty()) || Instant::now() >= deadline {
            break (procs, cgroups);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    clean_up(&left.0);
    assert_eq!(left, (vec![], vec![]), "5 s after SIGKILL of the module: partition processes and cgroups left\n{}", run.output());
}

#[test]
fn a_second_run_on_a_cpu_in_use_is_refused_naming_the_cpu_and_the_first_run() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let good = build("timecheck", dir.path());
    let config = module(dir.path(), 20, &[("Good", &good, "", &[(0, 10)])]);
    let _machine = machine::machine_lock();
    let mut first = Running::start(&config, &["--duration", "60s"]);
    let lock = Path::new("/run/partita/cpu1.lock");
    let pid = first.child.id().to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(lock).map(|s| s.trim() != pid).unwrap_or(true) {
        assert!(Instant::now() < deadline, "the first run did not lock CPU 1:\n{}", first.output());
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--duration", "1s"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("CPU 1 ") && stderr.contains(&format!("process {pid}")), "{stderr}");
    first.signal(libc::SIGTERM);
    assert_eq!(first.wait_exit(Duration::from_secs(10)), Some(Some(0)), "{}", first.output());
}

/// A SCHED_FIFO 90 thread spinning on CPU 1 until told to stop (or for 10 s at most), which
/// returns to the normal policy before it ends: never a real-time thread killed as such.
struct ForeignHog {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ForeignHog {
    fn start() -> ForeignHog {
        let (stop, ready) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (s, r) = (stop.clone(), ready.clone());
        let thread = std::thread::spawn(move || {
            // SAFETY: plain scheduling calls on the calling thread with valid arguments.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(1, &mut set);
                assert_eq!(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set), 0);
                let fifo = libc::sched_param { sched_priority: 90 };
                assert_eq!(libc::sched_setscheduler(0, libc::SCHED_FIFO, &fifo), 0);
            }
            r.store(true, Ordering::Release);
            let end = Instant::now() + Duration::from_secs(10);
            while !s.load(Ordering::Acquire) && Instant::now() < end {
                std::hint::spin_loop();
            }
            let normal = libc::sched_param { sched_priority: 0 };
            // SAFETY: as above.
            unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &normal) };
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ready.load(Ordering::Acquire) {
            assert!(Instant::now() < deadline && !thread.is_finished(), "the foreign hog did not start");
            std::thread::sleep(Duration::from_millis(1));
        }
        ForeignHog { stop, thread: Some(thread) }
    }
}

impl Drop for ForeignHog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_cpu_held_by_a_foreign_real_time_task_is_refused_naming_it() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let good = build("timecheck", dir.path());
    let config = module(dir.path(), 20, &[("Good", &good, "", &[(0, 10)])]);
    let _machine = machine::machine_lock();
    let hog = ForeignHog::start();
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--duration", "1s"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    drop(hog);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("CPU 1 is held by another real-time task"), "{stderr}");
}
