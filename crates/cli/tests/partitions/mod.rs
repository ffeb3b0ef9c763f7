//! Helpers of the tests that run C partitions under `partita run`: privilege check, building
//! tests/partitions/NAME.c with the design.md command, and running a module.
#![allow(dead_code)]

use assert_cmd::Command;
use partita_trace::{Event, read_trace};
use std::path::{Path, PathBuf};

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
