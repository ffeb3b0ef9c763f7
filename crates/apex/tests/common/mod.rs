//! Helpers shared by the integration tests: building C programs of tests/c/ against this
//! build's static library, and running them with a time limit.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub static SERIAL: Mutex<()> = Mutex::new(());

pub const RT_WARNING: &str = "real-time scheduling is not permitted";

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>, from this test executable (target/<profile>/deps/c_programs-HASH).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

pub fn out_dir() -> PathBuf {
    let d = profile_dir().join("apex-c-tests");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A directory holding exactly `libpartita_apex.a` of this build. `cargo test` compiles the
/// static library into target/<profile>/deps/libpartita_apex-HASH.a without copying it to
/// target/<profile>/ (only `cargo build` does), so the newest one is copied here.
pub fn lib_dir() -> PathBuf {
    static ONCE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let deps = profile_dir().join("deps");
        let newest = std::fs::read_dir(&deps)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with("libpartita_apex-") && n.ends_with(".a")
            })
            .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
            .unwrap_or_else(|| panic!("no libpartita_apex-*.a in {}", deps.display()));
        let dir = out_dir().join("lib");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(newest.path(), dir.join("libpartita_apex.a")).unwrap();
        dir
    })
    .clone()
}

pub fn compiler(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_string())
}

pub fn include_dir() -> PathBuf {
    crate_dir().join("../../include")
}

/// Compiles tests/c/<name>.c as C11 with -Wall -Wextra -Werror and links it with the static
/// library.
pub fn build(name: &str) -> PathBuf {
    let src = crate_dir().join("tests/c").join(format!("{name}.c"));
    let bin = out_dir().join(name);
    let out = Command::new(compiler("CC", "cc"))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-O1"])
        .arg("-I")
        .arg(include_dir())
        .arg("-I")
        .arg(crate_dir().join("tests/c"))
        .arg(&src)
        .arg("-L")
        .arg(lib_dir())
        .args(["-lpartita_apex", "-lpthread", "-o"])
        .arg(&bin)
        .output()
        .expect("run the C compiler");
    assert!(out.status.success(), "building {name} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    bin
}

pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(bin: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(bin);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).env_remove("PARTITA_PARTITION");
    cmd.env("PARTITA_STANDALONE_PERIOD", "0.02");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start the test program");
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
    Run { code: status.code(), stdout: String::from_utf8_lossy(&stdout).into(), stderr: String::from_utf8_lossy(&stderr).into() }
}

/// False (after saying why) when real-time scheduling is missing and the test should skip.
pub fn realtime_ok(r: &Run, test: &str) -> bool {
    if !r.stderr.contains(RT_WARNING) {
        return true;
    }
    partita_testkit::require(&format!("real-time scheduling (SCHED_FIFO) for {test}; run as root or with CAP_SYS_NICE"), false)
}

/// Asserts a checking program passed: status 0, a SUMMARY line, no FAIL line.
pub fn assert_passed(r: &Run, what: &str) {
    let report = format!("{what}: status {:?}\n--- stdout\n{}--- stderr\n{}", r.code, r.stdout, r.stderr);
    assert!(!r.stdout.contains("FAIL"), "{report}");
    assert!(r.stdout.contains("SUMMARY"), "{report}");
    assert_eq!(r.code, Some(0), "{report}");
}

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
