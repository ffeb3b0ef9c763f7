//! A partition sees only its own files, runs as its own unprivileged uid and cannot fork-bomb
//! the host (docs/isolation.md, "Files, identity and limits"): the hostile C partition
//! tests/partitions/snoop.c beside the well-behaved timecheck.c, on CPU 1. Needs root (skipped
//! with a message otherwise; a failure with CI=true).

mod machine;
mod partitions;

use partita_trace::summary::summarize;
use partitions::{Ran, build, privileged, run_with};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Identifier of the hostile partition (it runs as uid 64000 + this).
const SNOOP_ID: u32 = 1;

/// A one-core module on CPU 1, 20 ms frames: `Snoop` (`snoop` with `args`, `extra` inside its
/// element) in [0, 10) ms and the well-behaved `Other` (timecheck) in [10, 20) ms.
fn module(dir: &Path, snoop: &Path, args: &str, attrs: &str, extra: &str) -> PathBuf {
    let timecheck = build("timecheck", dir);
    let xml = format!(
        r#"<ARINC_653_Module ModuleName="Confine" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="1"/>
  <Partition PartitionIdentifier="{SNOOP_ID}" PartitionName="Snoop" pt:Executable="{snoop}" pt:Arguments="{args}" {attrs}>{extra}</Partition>
  <Partition PartitionIdentifier="2" PartitionName="Other" pt:Executable="{timecheck}"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="{SNOOP_ID}" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0.01" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>
"#,
        snoop = snoop.display(),
        timecheck = timecheck.display()
    );
    let config = dir.join("module.xml");
    std::fs::write(&config, xml).unwrap();
    config
}

/// The lines partition `name` printed (without the `[name] ` prefix).
fn lines<'a>(r: &'a Ran, name: &str) -> Vec<&'a str> {
    let prefix = format!("[{name}] ");
    r.stdout.lines().filter_map(|l| l.strip_prefix(prefix.as_str())).collect()
}

/// `Other` kept its windows, seen from its own GET_TIME samples: it ran in at least 80 % of the
/// frames, every interval it ran began inside its window [10, 20) ms of a 20 ms frame, and few
/// ended late. A late end is a stop the module confirmed late (host cgroup activity can block a
/// freeze write: issue 10), which costs the next partition, not `Other`; it is tolerated in at
/// most a tenth of the frames, so that the assertion is about the mechanism on a noisy VM.
fn other_kept_its_windows(dir: &Path, frames: u32) {
    let log = std::fs::read_to_string(dir.join("logs/Other.log")).unwrap();
    let ms = 1_000_000i64;
    let mut ran_in = std::collections::BTreeSet::new();
    let mut late = 0;
    for l in log.lines().filter_map(|l| l.strip_prefix("ran ")) {
        let v: Vec<i64> = l.split_whitespace().map(|v| v.parse().unwrap()).collect();
        let frame = v[0].div_euclid(20 * ms);
        let start = frame * 20 * ms;
        assert!(v[0] >= start + 10 * ms, "Other began running at {} ns, outside its windows ({v:?})", v[0]);
        late += (v[1] > start + 20 * ms) as u32;
        ran_in.insert(frame);
    }
    assert!(ran_in.len() as u32 >= frames * 8 / 10, "Other ran in only {} of {frames} frames:\n{log}", ran_in.len());
    assert!(late <= frames / 10, "Other ran past its window end in {late} of {frames} frames:\n{log}");
}

/// The run's data directories (`/run/partita/<module pid>`) are gone: none is left by a module
/// that no longer exists.
fn no_data_dirs_left() {
    let Ok(entries) = std::fs::read_dir("/run/partita") else { return };
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue }; // not a run's directory
        assert!(Path::new(&format!("/proc/{pid}")).exists(), "{} left behind by a module that is gone", e.path().display());
    }
}

#[test]
fn a_partition_sees_only_its_own_files_and_runs_unprivileged() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let snoop = build("snoop", dir.path());
    let tag = format!("{}-{}", std::process::id(), std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos());
    // Bind sources: the partition's uid reaches the bound directories themselves (their host
    // parents are not part of its view).
    let (ro, rw) = (dir.path().join("ro"), dir.path().join("rw"));
    std::fs::create_dir(&ro).unwrap();
    std::fs::create_dir(&rw).unwrap();
    std::fs::write(ro.join("data"), "bound read-only\n").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&rw, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mounts = format!(
        r#"<pt:Mount Source="{}" Target="/tmp/ro"/><pt:Mount Source="{}" Target="/tmp/rw" Writable="true"/>"#,
        ro.display(),
        rw.display()
    );
    let config = module(dir.path(), &snoop, &format!("files {tag} /tmp/ro /tmp/rw"), r#"pt:MaxOpenFiles="100""#, &mounts);
    let frames = 50;
    let r = run_with(&config, frames, &[]);
    assert_eq!(r.status, Some(0), "{}\n{}", r.stdout, r.stderr);
    let out = lines(&r, "Snoop");
    let said = |line: &str| assert!(out.contains(&line), "{line:?} not in:\n{}\n{}", r.stdout, r.stderr);
    // EROFS: the host's tree is read-only in its view; /tmp is its own tmpfs.
    for d in ["/etc", "/usr"] {
        said(&format!("create {d} refused {}", libc::EROFS));
    }
    // /root (mode 0700) is closed to its uid before it is read-only.
    assert!(out.iter().any(|l| l.starts_with("create /root refused ")), "{}", r.stdout);
    said("create /tmp ALLOWED");
    for d in ["/etc", "/root", "/tmp", "/usr"] {
        let host = Path::new(d).join(format!("partita-snoop-{tag}"));
        assert!(!host.exists(), "{} was created on the host", host.display());
    }
    said("create cwd ALLOWED");
    let uid = 64000 + SNOOP_ID;
    said(&format!("uid {uid} euid {uid} gid {uid} egid {uid} groups 0"));
    said(&format!("other-dir refused {}", libc::EACCES));
    said(&format!("other-create refused {}", libc::EACCES));
    said(&format!("setuid0 refused {}", libc::EPERM));
    said("ro-read bound read-only");
    said(&format!("ro-write refused {}", libc::EROFS));
    said("rw-write ALLOWED");
    said("nofile 100 100");
    said("dev-null ok");
    said("dev-tty absent");
    said("done");
    assert!(!ro.join("new").exists());
    assert_eq!(std::fs::read_to_string(rw.join("written")).unwrap(), "snoop\n");
    // Its working directory was its private data directory, gone after the run.
    let cwd = out.iter().find_map(|l| l.strip_prefix("cwd ")).unwrap();
    assert!(cwd.starts_with("/run/partita/") && cwd.ends_with("/Snoop"), "{cwd}");
    assert!(!Path::new(cwd).exists(), "{cwd} left behind");
    assert!(!Path::new(cwd).parent().unwrap().exists(), "the run's data directories were left behind");
    no_data_dirs_left();
    other_kept_its_windows(dir.path(), frames);
}

#[test]
fn a_fork_bomb_stops_at_max_tasks_and_harms_nobody() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A unique program name, to find any process of it left on the host afterwards.
    let name = format!("fb{}", std::process::id());
    let snoop = dir.path().join(&name);
    std::fs::rename(build("snoop", dir.path()), &snoop).unwrap();
    let config = module(dir.path(), &snoop, "fork", r#"pt:MaxTasks="64""#, "");
    let frames = 100;
    let r = run_with(&config, frames, &[]);
    assert_eq!(r.status, Some(0), "{}\n{}", r.stdout, r.stderr);
    let out = lines(&r, "Snoop");
    let stopped = out.iter().find_map(|l| l.strip_prefix("fork stopped after ")).unwrap_or_else(|| panic!("{}\n{}", r.stdout, r.stderr));
    let (count, errno) = stopped.split_once(" errno ").unwrap();
    let count: u32 = count.parse().unwrap();
    assert_eq!(errno.parse::<i32>().unwrap(), libc::EAGAIN, "{stopped}");
    // The program and its runtime's threads count too: fewer than 64 children.
    assert!((1..64).contains(&count), "{count} children with pt:MaxTasks=64");
    other_kept_its_windows(dir.path(), frames);
    let s = summarize(&r.events);
    let other = s.partitions.iter().find(|p| p.id == 2).unwrap();
    assert!(other.windows as u32 >= frames - 1 && other.windows_running as u32 >= frames * 8 / 10, "{s}");
    assert_eq!(other.restarts + other.exits + other.hm_events, 0, "{s}");
    // 100 frames of 20 ms: the run ends on time, by the module's clock (its last trace event).
    let end = r.events.iter().find_map(|e| match e {
        partita_trace::Event::ModuleStop { t, frames: done, reason } => Some((*t, *done, reason.clone())),
        _ => None,
    });
    let (t, done, reason) = end.unwrap_or_else(|| panic!("no module_stop in the trace:\n{}", r.stderr));
    assert!(done >= frames as u64 && reason == "completed", "stopped after {done} frames: {reason}\n{}", r.stderr);
    assert!(t < 5_000_000_000, "the module stopped {t} ns after its epoch, for 2 s of frames");
    let left: Vec<_> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "processes of the fork bomb left on the host: {left:?}");
    no_data_dirs_left();
}

#[test]
fn sigterm_removes_the_data_directories() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = module(dir.path(), &build("timecheck", dir.path()), "", "", "");
    let _machine = machine::machine_lock();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--duration", "60s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let data = PathBuf::from(format!("/run/partita/{}", child.id()));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(data.join("Snoop").is_dir() && data.join("Other").is_dir()) {
        assert!(Instant::now() < deadline, "no data directories in {} after 30 s", data.display());
        assert!(child.try_wait().unwrap().is_none(), "partita run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the pid of our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "partita run did not end within 30 s of SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.code().is_some(), "partita run was killed: {status:?}");
    assert!(!data.exists(), "{} left behind after SIGTERM", data.display());
}
