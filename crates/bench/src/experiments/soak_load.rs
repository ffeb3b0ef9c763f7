//! The host load of the `soak` experiment, started before the module and stopped when the
//! [`HostLoad`] is dropped (also on an error or a panic): stress-ng's cpu, vm and io stressors
//! at nice 19 (they get the time the partitions leave), and a cgroup churn thread that creates
//! and removes cgroups and moves a sleeping process between two cgroups of the v2 hierarchy
//! (cgroup work on the host can block the module's own freeze writes: issue 10).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The v2 hierarchy: `/sys/fs/cgroup/unified` on a hybrid host, else `/sys/fs/cgroup`.
fn cgroup2_root() -> Option<PathBuf> {
    ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"].iter().map(PathBuf::from).find(|p| p.join("cgroup.procs").is_file())
}

/// Host load while alive.
pub struct HostLoad {
    stress: Option<Child>,
    churn: Option<std::thread::JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    /// cgroup moves and mkdir/rmdir pairs done by the churn thread.
    pub churn_ops: Arc<AtomicU64>,
    /// What could not be started (stress-ng missing, no cgroup v2): notes for the report.
    pub missing: Vec<String>,
}

impl HostLoad {
    /// Starts the load (stress-ng, the cgroup churn, or both); what cannot start is noted in
    /// `missing`, never an error.
    pub fn start(stress: bool, churn_cgroups: bool) -> HostLoad {
        let mut load = HostLoad {
            stress: None,
            churn: None,
            stop: Arc::new(AtomicBool::new(false)),
            churn_ops: Arc::new(AtomicU64::new(0)),
            missing: Vec::new(),
        };
        if stress {
            match Command::new("nice")
                .args(["-n", "19", "stress-ng", "--cpu", "2", "--vm", "1", "--vm-bytes", "256M", "--io", "1", "--quiet"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
            {
                Ok(child) => load.stress = Some(child),
                Err(e) => load.missing.push(format!("no stress-ng load ({e}; apt-get install stress-ng)")),
            }
        }
        match cgroup2_root() {
            _ if !churn_cgroups => {}
            Some(root) => {
                sweep_stale_churn(&root);
                let dir = root.join(format!("{CHURN_PREFIX}{}", std::process::id()));
                let (stop, ops) = (load.stop.clone(), load.churn_ops.clone());
                load.churn = std::thread::Builder::new().name("soak-churn".into()).spawn(move || churn(&dir, &stop, &ops)).ok();
            }
            None => load.missing.push("no cgroup v2 hierarchy: no cgroup churn".into()),
        }
        load
    }

    /// Whether stress-ng still runs.
    pub fn stress_running(&mut self) -> bool {
        self.stress.as_mut().is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl HostLoad {
    /// Stops everything (stress-ng's whole process group, the churn thread, which removes its
    /// cgroups); the counters stay readable. Dropping does the same.
    pub fn stop_now(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(mut c) = self.stress.take() {
            // stress-ng's workers are in its process group (process_group(0) above).
            // SAFETY: kill(2) on a process group id we created; no memory is involved.
            unsafe { libc::kill(-(c.id() as i32), libc::SIGTERM) };
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while matches!(c.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            // SAFETY: as above.
            unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
            let _ = c.wait();
        }
        if let Some(h) = self.churn.take() {
            let _ = h.join();
        }
    }
}

impl Drop for HostLoad {
    fn drop(&mut self) {
        self.stop_now();
    }
}

fn write(path: &Path, text: &str) -> bool {
    std::fs::OpenOptions::new().write(true).open(path).and_then(|mut f| f.write_all(text.as_bytes())).is_ok()
}

/// Prefix of the churn's cgroup, followed by the bench's pid.
const CHURN_PREFIX: &str = "partita-soak-churn-";

/// Removes the churn cgroups of benches that are gone (a killed bench cannot remove its own):
/// `ROOT/partita-soak-churn-PID` whose PID does not exist, with its children.
fn sweep_stale_churn(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(CHURN_PREFIX)).and_then(|p| p.parse::<i32>().ok()) else { continue };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            let dir = e.path();
            for child in ["a", "b", "c"] {
                let _ = std::fs::remove_dir(dir.join(child));
            }
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

/// Until `stop`: moves a sleeping child between `dir/a` and `dir/b` and creates and removes
/// `dir/c`, about a thousand operations a second; then removes everything it made.
fn churn(dir: &Path, stop: &AtomicBool, ops: &AtomicU64) {
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    if std::fs::create_dir_all(&a).is_err() || std::fs::create_dir_all(&b).is_err() {
        let _ = std::fs::remove_dir(&a);
        let _ = std::fs::remove_dir(dir);
        return;
    }
    let mut sleeper = Command::new("sleep");
    sleeper.arg("1000000").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: prctl(PR_SET_PDEATHSIG) in the child before exec is async-signal-safe; the
    // sleeper dies with the bench, even a killed one.
    unsafe {
        sleeper.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        })
    };
    let sleeper = sleeper.spawn();
    if let Ok(mut sleeper) = sleeper {
        let pid = sleeper.id().to_string();
        let mut i = 0u64;
        while !stop.load(Ordering::Acquire) {
            let target = if i.is_multiple_of(2) { &a } else { &b };
            if write(&target.join("cgroup.procs"), &pid) {
                ops.fetch_add(1, Ordering::Relaxed);
            }
            if std::fs::create_dir(&c).is_ok() && std::fs::remove_dir(&c).is_ok() {
                ops.fetch_add(1, Ordering::Relaxed);
            }
            i += 1;
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = sleeper.kill();
        let _ = sleeper.wait();
    }
    // A killed process leaves its cgroup a moment after wait() returns.
    for _ in 0..100 {
        let _ = std::fs::remove_dir(&c);
        let gone = [&a, &b].iter().all(|d| !d.exists() || std::fs::remove_dir(d).is_ok());
        if gone && std::fs::remove_dir(dir).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gone_bench_s_churn_directory_is_swept_and_a_live_one_kept() {
        let root = tempfile::tempdir().unwrap();
        // pid_max is at most 2^22: this pid exists nowhere.
        let gone = root.path().join(format!("{CHURN_PREFIX}{}", 1 << 23));
        let live = root.path().join(format!("{CHURN_PREFIX}{}", std::process::id()));
        let other = root.path().join("unrelated-1");
        for d in [gone.join("a"), gone.join("b"), live.join("a"), other.clone()] {
            std::fs::create_dir_all(d).unwrap();
        }
        sweep_stale_churn(root.path());
        assert!(!gone.exists(), "the gone bench's directory is left");
        assert!(live.join("a").exists() && other.exists(), "a live bench's or an unrelated directory was removed");
    }
}
