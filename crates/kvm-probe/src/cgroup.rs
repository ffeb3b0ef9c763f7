//! cgroup v2 pieces of the probe: a threaded cgroup holding only the vCPU thread (for the freezer
//! gate) and the host's cgroup churn (for the stop-under-churn measurement).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

use crate::sys;

/// The cgroup v2 hierarchy on this host (hybrid layout).
pub const UNIFIED: &str = "/sys/fs/cgroup/unified";

fn write_file(path: &PathBuf, text: &str) -> io::Result<()> {
    OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(text.as_bytes())
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Whether a v2 hierarchy with the freezer (`cgroup.freeze`, Linux 5.2) is there.
pub fn freezer_available() -> bool {
    fs::read_to_string(format!("{UNIFIED}/cgroup.controllers")).is_ok() && sys::is_root()
}

/// Removes the probe's cgroups `<prefix><pid>` (with their children) left in `dir` by probe
/// processes that are gone (killed before their clean-up ran).
fn clean_stale(dir: &str, prefix: &str) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let pid = e.file_name().to_str().and_then(|n| n.strip_prefix(prefix)).and_then(|p| p.parse::<u32>().ok());
        let Some(pid) = pid else { continue };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            for child in fs::read_dir(e.path()).into_iter().flatten().flatten().filter(|c| c.path().is_dir()) {
                let _ = fs::remove_dir(child.path());
            }
            let _ = fs::remove_dir(e.path());
        }
    }
}

/// The calling process's v2 cgroup, from `/proc/self/cgroup`.
fn own_cgroup() -> io::Result<PathBuf> {
    let text = fs::read_to_string("/proc/self/cgroup")?;
    let rel = text.lines().find_map(|l| l.strip_prefix("0::")).ok_or_else(|| io::Error::other("no cgroup v2 line"))?;
    Ok(PathBuf::from(UNIFIED).join(rel.trim_start_matches('/')))
}

/// A threaded cgroup `partita-kvm-probe-<pid>/vcpu` holding only the vCPU thread. The whole
/// process moves into `partita-kvm-probe-<pid>` (a threaded subtree must hold all of a process's
/// threads) and back to its own cgroup on drop.
pub struct VcpuCgroup {
    base: PathBuf,
    home: PathBuf,
    freeze: File,
    events: File,
}

impl VcpuCgroup {
    /// Creates the cgroups and moves thread `tid` of this process into `vcpu`.
    pub fn new(tid: libc::pid_t) -> io::Result<VcpuCgroup> {
        clean_stale(UNIFIED, "partita-kvm-probe-");
        let home = own_cgroup()?;
        let base = PathBuf::from(UNIFIED).join(format!("partita-kvm-probe-{}", std::process::id()));
        let vcpu = base.join("vcpu");
        fs::create_dir(&base)?;
        let cg = |base: PathBuf, home: PathBuf| -> io::Result<VcpuCgroup> {
            write_file(&base.join("cgroup.procs"), &std::process::id().to_string())?;
            fs::create_dir(&vcpu)?;
            write_file(&vcpu.join("cgroup.type"), "threaded")?;
            write_file(&vcpu.join("cgroup.threads"), &tid.to_string())?;
            let freeze = OpenOptions::new().write(true).open(vcpu.join("cgroup.freeze"))?;
            let events = File::open(vcpu.join("cgroup.events"))?;
            Ok(VcpuCgroup { base, home, freeze, events })
        };
        match cg(base.clone(), home.clone()) {
            Ok(c) => Ok(c),
            Err(e) => {
                let _ = write_file(&home.join("cgroup.procs"), &std::process::id().to_string());
                let _ = fs::remove_dir(&vcpu);
                let _ = fs::remove_dir(&base);
                Err(e)
            }
        }
    }

    /// Writes `cgroup.freeze`: `true` to freeze, `false` to thaw.
    pub fn set_frozen(&self, frozen: bool) -> io::Result<()> {
        self.freeze.write_at(if frozen { b"1" } else { b"0" }, 0).map(drop)
    }

    /// Whether `cgroup.events` reports `frozen 1`.
    pub fn is_frozen(&mut self) -> io::Result<bool> {
        let mut buf = [0u8; 128];
        self.events.rewind()?;
        let n = self.events.read(&mut buf)?;
        Ok(buf[..n].split(|&b| b == b'\n').any(|l| l == b"frozen 1"))
    }
}

impl Drop for VcpuCgroup {
    fn drop(&mut self) {
        let _ = self.set_frozen(false);
        let _ = write_file(&self.home.join("cgroup.procs"), &std::process::id().to_string());
        let _ = fs::remove_dir(self.base.join("vcpu"));
        let _ = fs::remove_dir(&self.base);
    }
}

/// The v1 cpuset hierarchy of this host's hybrid layout (used by the churn when present).
pub const CPUSET_V1: &str = "/sys/fs/cgroup/cpuset";

/// Host cgroup churn on one CPU until dropped: a loop creating two v2 cgroups, moving a `sleep`
/// process into one, then the other, back to their parent, and removing them; then the same
/// with one v1 cpuset (the module's own placement on hybrid hosts uses v1 cpusets, whose moves
/// wait for RCU). Each step takes the kernel's global `cgroup_mutex`, which the freezer's writes
/// need too.
pub struct Churn {
    stop: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    thread: Option<JoinHandle<io::Result<()>>>,
    child: Child,
    base: PathBuf,
    v1: Option<PathBuf>,
}

impl Churn {
    /// Starts the churn thread, pinned to `cpu`.
    pub fn start(cpu: usize) -> io::Result<Churn> {
        clean_stale(UNIFIED, "partita-kvm-churn-");
        clean_stale(CPUSET_V1, "partita-kvm-churn-");
        let base = PathBuf::from(UNIFIED).join(format!("partita-kvm-churn-{}", std::process::id()));
        fs::create_dir(&base)?;
        let v1 = PathBuf::from(CPUSET_V1).join(format!("partita-kvm-churn-{}", std::process::id()));
        let v1 = match fs::create_dir(&v1) {
            Ok(()) => {
                write_file(&v1.join("cpuset.cpus"), &cpu.to_string())?;
                write_file(&v1.join("cpuset.mems"), "0")?;
                Some(v1)
            }
            Err(_) => None,
        };
        let mut sleep = Command::new("sleep");
        sleep.arg("3600").stdin(Stdio::null());
        // SAFETY: prctl is async-signal-safe; the `sleep` dies with the thread that started it
        // even if the probe is killed before its clean-up.
        unsafe {
            sleep.pre_exec(
                || if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == 0 { Ok(()) } else { Err(io::Error::last_os_error()) },
            );
        }
        let child = sleep.spawn()?;
        let (stop, rounds) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
        let (s, r, b, pid, v1b) = (stop.clone(), rounds.clone(), base.clone(), child.id().to_string(), v1.clone());
        let thread = std::thread::spawn(move || -> io::Result<()> {
            sys::pin_to_cpu(cpu)?;
            let (a, bb) = (b.join("a"), b.join("b"));
            while !s.load(Ordering::Relaxed) {
                fs::create_dir(&a)?;
                fs::create_dir(&bb)?;
                write_file(&a.join("cgroup.procs"), &pid)?;
                write_file(&bb.join("cgroup.procs"), &pid)?;
                write_file(&b.join("cgroup.procs"), &pid)?;
                fs::remove_dir(&a)?;
                fs::remove_dir(&bb)?;
                if let Some(v1) = &v1b {
                    let c = v1.join("c");
                    fs::create_dir(&c)?;
                    write_file(&c.join("cpuset.cpus"), &cpu.to_string())?;
                    write_file(&c.join("cpuset.mems"), "0")?;
                    write_file(&c.join("tasks"), &pid)?;
                    write_file(&v1.join("tasks"), &pid)?;
                    fs::remove_dir(&c)?;
                }
                r.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        });
        Ok(Churn { stop, rounds, thread: Some(thread), child, base, v1 })
    }

    /// Churn rounds completed so far.
    pub fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::Relaxed)
    }

    /// Stops the churn and reports an error the loop met.
    pub fn finish(mut self) -> io::Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        let r = self.thread.take().map(|t| t.join().unwrap_or_else(|_| Err(io::Error::other("churn thread panicked"))));
        r.unwrap_or(Ok(()))?;
        Ok(self.rounds())
    }
}

impl Drop for Churn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir(self.base.join("a"));
        let _ = fs::remove_dir(self.base.join("b"));
        let _ = fs::remove_dir(&self.base);
        if let Some(v1) = &self.v1 {
            let _ = fs::remove_dir(v1.join("c"));
            let _ = fs::remove_dir(v1);
        }
    }
}
