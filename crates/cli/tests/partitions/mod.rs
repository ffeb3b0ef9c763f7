//! Helpers of the tests that run C partitions under `partita run`: privilege check, building
//! tests/partitions/NAME.c with the design.md command, and running a module.
#![allow(dead_code)]

use assert_cmd::Command;
use partita_trace::{Event, read_trace};
use std::path::{Path, PathBuf};

/// `(start, end)` of each interval a timecheck-like partition printed in its log ("ran START END"
/// lines, ns since the module epoch).
pub fn ran_intervals(log: &str) -> Vec<(i64, i64)> {
    intervals(log, "ran ")
}

/// The intervals of a partition's log lines "PREFIX START END" (ns).
pub fn intervals(log: &str, prefix: &str) -> Vec<(i64, i64)> {
    log.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(|l| {
            let mut it = l.split_whitespace().map(|v| v.parse::<i64>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect()
}

/// Whether this test may run a module here (partita_testkit decides for every test).
pub fn privileged() -> bool {
    partita_testkit::require_root()
}

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds tests/partitions/NAME.c with the design.md command (the static library that cargo
/// built next to the `partita` binary).
pub fn build(name: &str, dir: &Path) -> PathBuf {
    let libdir = static_library_dir(dir);
    let out = dir.join(name);
    let status = std::process::Command::new("cc")
        .arg("-I")
        .arg(workspace().join("include"))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/partitions/{name}.c")))
        .arg("-L")
        .arg(&libdir)
        .args(["-lpartita_apex", "-lpthread", "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "building {name}");
    out
}

/// A directory with this build's `libpartita_apex.a`: the newest of the copy `cargo build`
/// puts next to the binary and the target/<profile>/deps/libpartita_apex-HASH.a that `cargo
/// test` leaves (the copy next to the binary is stale after a `cargo test` of changed code).
pub fn static_library_dir(scratch: &Path) -> PathBuf {
    let profile = assert_cmd::cargo::cargo_bin!("partita").parent().unwrap().to_path_buf();
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let newest = std::fs::read_dir(profile.join("deps"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("libpartita_apex-") && name.ends_with(".a")
        })
        .chain(Some(profile.join("libpartita_apex.a")).filter(|p| p.is_file()))
        .max_by_key(|p| modified(p))
        .unwrap_or_else(|| panic!("no libpartita_apex.a under {}", profile.display()));
    let dir = scratch.join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&newest, dir.join("libpartita_apex.a")).unwrap();
    dir
}

pub fn run(config: &Path, frames: u32) -> (String, Vec<Event>) {
    let r = run_with(config, frames, &[]);
    assert_eq!(r.status, Some(0), "{}\n{}", r.stdout, r.stderr);
    (r.stdout, r.events)
}

pub struct Ran {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub events: Vec<Event>,
}

/// Runs `config` for `frames` major frames with more arguments (e.g. --inject).
pub fn run_with(config: &Path, frames: u32, extra: &[&str]) -> Ran {
    let dir = config.parent().unwrap();
    let _machine = crate::machine::machine_lock();
    let trace = dir.join("run.trace");
    let out = Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--frames", &frames.to_string(), "--trace", trace.to_str().unwrap(), "--logs"])
        .arg(dir.join("logs"))
        .args(extra)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let events = read_trace(std::io::BufReader::new(std::fs::File::open(&trace).unwrap())).unwrap();
    Ran {
        status: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        events,
    }
}

/// Writes `dir/module.xml`: one partition (`id`, `name`, program `exe` with `args`) with a
/// 10 ms window at the start of every 20 ms major frame, on module core `core` of CPUs 0-1.
pub fn single_partition_module(dir: &Path, name: &str, id: u32, exe: &Path, args: &str, core: u32) -> PathBuf {
    let xml = format!(
        r#"<ARINC_653_Module ModuleName="{name}Module" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"/>
  <Partition PartitionIdentifier="{id}" PartitionName="{name}" pt:Executable="{exe}" pt:Arguments="{args}"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="{id}" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01" pt:Core="{core}"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>
"#,
        exe = exe.display()
    );
    let config = dir.join("module.xml");
    std::fs::write(&config, xml).unwrap();
    config
}

/// A run by [`run_checked`]: the run, how long `partita run` took, and what it left behind.
pub struct Checked {
    pub ran: Ran,
    pub elapsed: std::time::Duration,
    /// Processes and cgroups of the run still there after `partita run` ended (empty: none).
    pub leftovers: Vec<String>,
}

/// Runs `config` like [`run_with`], marking the run's processes with an environment variable
/// (partitions inherit the module's environment, also across an exec of another program), and
/// then, still holding the machine, lists what the run left: processes carrying the mark and
/// cgroups named after the module's pid (`partita-<pid>[-<n>]`) in every hierarchy.
pub fn run_checked(config: &Path, frames: u32, extra: &[&str]) -> Checked {
    run_checked_env(config, frames, extra, &[])
}

/// [`run_checked`] with more environment variables for `partita run` (e.g. `PARTITA_GATE`).
pub fn run_checked_env(config: &Path, frames: u32, extra: &[&str], env: &[(&str, &str)]) -> Checked {
    let dir = config.parent().unwrap();
    let _machine = crate::machine::machine_lock();
    let trace = dir.join("run.trace");
    let mark = format!("PARTITA_TEST_RUN={}", dir.display());
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--frames", &frames.to_string(), "--trace", trace.to_str().unwrap(), "--logs"])
        .arg(dir.join("logs"))
        .args(extra)
        .env("PARTITA_TEST_RUN", dir)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut pipes =
        [child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>), child.stderr.take().map(|p| Box::new(p) as _)];
    let readers: Vec<_> = pipes
        .iter_mut()
        .map(|p| {
            let mut p = p.take().unwrap();
            std::thread::spawn(move || {
                let mut s = String::new();
                let _ = p.read_to_string(&mut s);
                s
            })
        })
        .collect();
    let deadline = started + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let mut out = readers.into_iter().map(|r| r.join().unwrap());
    let (stdout, stderr) = (out.next().unwrap(), out.next().unwrap());
    // A partition killed by the module is gone once `partita run` returns; allow a moment for
    // the kernel to finish reaping (polled, not slept).
    let gone = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut leftovers = loop {
        let left = marked_processes(&mark);
        if left.is_empty() || std::time::Instant::now() > gone {
            break left;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    leftovers.extend(run_cgroups(pid));
    let events = std::fs::File::open(&trace).map(|f| read_trace(std::io::BufReader::new(f)).unwrap()).unwrap_or_default();
    Checked { ran: Ran { status: status.code(), stdout, stderr, events }, elapsed, leftovers }
}

use std::io::Read as _;

/// Processes whose environment holds `mark`.
fn marked_processes(mark: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()) && n != me))
        .filter(|e| std::fs::read(e.path().join("environ")).is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == mark.as_bytes())))
        .map(|e| {
            format!(
                "process {} ({})",
                e.file_name().to_string_lossy(),
                std::fs::read_to_string(e.path().join("comm")).unwrap_or_default().trim()
            )
        })
        .collect()
}

/// Cgroup directories of the run of module `pid`, in the v2 tree and every v1 hierarchy.
fn run_cgroups(pid: u32) -> Vec<String> {
    let base = Path::new("/sys/fs/cgroup");
    let mut roots = vec![base.to_path_buf()];
    roots.extend(std::fs::read_dir(base).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    let prefix = format!("partita-{pid}");
    roots
        .iter()
        .flat_map(|r| std::fs::read_dir(r).into_iter().flatten().flatten())
        .filter(|e| e.file_name().to_str().is_some_and(|n| n == prefix || n.starts_with(&format!("{prefix}-"))))
        .map(|e| format!("cgroup {}", e.path().display()))
        .collect()
}
