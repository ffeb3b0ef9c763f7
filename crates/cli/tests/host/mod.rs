//! What a module run may leave on the host, looked up from the outside: processes (by a marker
//! in their command line, and orphans handed to the test process as a child subreaper), cgroup
//! directories of a run (`partita-<pid>[-<n>]` in every hierarchy, at any depth), /dev/shm
//! files, mounts, /run/partita entries, real-time throttling and the test process's own
//! descriptors. Shared by the tests that check that runs leave nothing behind.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";

pub fn rt_runtime() -> String {
    std::fs::read_to_string(RT_RUNTIME).unwrap().trim().to_string()
}

/// Sets `kernel.sched_rt_runtime_us` for the life of the value and puts back what it found (also
/// when the test panics). The value found is the one before any run lifted it: a killed run
/// leaves -1 and its saved value in /run/partita-rt-runtime.
pub struct RtRuntime {
    original: String,
}

impl RtRuntime {
    pub fn set(value: &str) -> RtRuntime {
        let saved = std::fs::read_to_string("/run/partita-rt-runtime").unwrap_or_default().trim().to_string();
        let original = if saved.is_empty() { rt_runtime() } else { saved };
        std::fs::write(RT_RUNTIME, value).unwrap();
        RtRuntime { original }
    }
}

impl Drop for RtRuntime {
    fn drop(&mut self) {
        let _ = std::fs::write(RT_RUNTIME, &self.original);
    }
}

/// Makes the test process the reaper of every orphan below it: the partition programs of a
/// killed module and any helper process the module starts are handed to the test instead of
/// init, so that [`orphans`] sees them whatever their command line says.
pub fn become_subreaper() {
    // SAFETY: prctl with an integer argument; no memory is passed.
    let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    assert_eq!(r, 0, "PR_SET_CHILD_SUBREAPER: {}", std::io::Error::last_os_error());
}

/// Pids of the processes whose parent is `parent`, with their state letter and command line.
fn children_of(parent: u32) -> Vec<(i32, char, String)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // After the ")" of comm: state, ppid.
        let Some((_, after)) = stat.rsplit_once(')') else { continue };
        let mut fields = after.split_whitespace();
        let state = fields.next().and_then(|s| s.chars().next()).unwrap_or('?');
        if fields.next().and_then(|p| p.parse::<u32>().ok()) != Some(parent) {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline")).map(|c| String::from_utf8_lossy(&c).replace('\0', " ")).unwrap_or_default();
        found.push((pid, state, cmdline));
    }
    found
}

/// Reaps the test process's dead children other than `except` and returns the live ones (pid
/// and command line): with [`become_subreaper`], what is left of runs that ended.
pub fn orphans(except: &[u32]) -> Vec<(i32, String)> {
    let mut live = Vec::new();
    for (pid, state, cmdline) in children_of(std::process::id()) {
        if except.contains(&(pid as u32)) {
            continue;
        }
        if state == 'Z' {
            let mut status = 0;
            // SAFETY: reaping our own dead child; WNOHANG never blocks.
            unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            continue;
        }
        live.push((pid, cmdline));
    }
    live
}

/// Processes with `needle` in their command line.
pub fn marked(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_string_lossy().parse::<i32>().ok()?, e.path())))
        .filter(|(_, p)| std::fs::read(p.join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle)))
        .map(|(pid, _)| pid)
        .collect()
}

/// The cgroup directories of the run of module process `pid` (`partita-<pid>` and
/// `partita-<pid>-<n>`, in the v2 tree and every v1 hierarchy, at any depth: the run creates
/// them below its own cgroup), each with every directory inside it.
pub fn run_cgroup_dirs(pid: u32) -> Vec<PathBuf> {
    let (exact, prefix) = (format!("partita-{pid}"), format!("partita-{pid}-"));
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::from("/sys/fs/cgroup")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.filter_map(|e| e.ok()) {
            // Not following symbolic links (cpu -> cpu,cpuacct): each hierarchy once.
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            if name == exact || name.starts_with(&prefix) {
                collect_dirs(&e.path(), &mut found);
            } else {
                stack.push(e.path());
            }
        }
    }
    found.sort();
    found
}

fn collect_dirs(dir: &Path, into: &mut Vec<PathBuf>) {
    into.push(dir.to_path_buf());
    for e in std::fs::read_dir(dir).into_iter().flatten().filter_map(|e| e.ok()) {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            collect_dirs(&e.path(), into);
        }
    }
}

/// Entries of /run/partita that belong to module process `pid` (a name that is the pid or
/// starts with it and a non-digit).
pub fn run_dir_entries(pid: u32) -> Vec<PathBuf> {
    let p = pid.to_string();
    std::fs::read_dir("/run/partita")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix(&p).is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(|e| e.path())
        .collect()
}

/// Descriptors of process `pid` ("self" for the test process).
pub fn fd_count(pid: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

/// Threads of process `pid`.
pub fn thread_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map(|d| d.count()).unwrap_or(0)
}

/// What a run could leave on the host outside its own processes and cgroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The test process's descriptors (targets, sorted).
    pub fds: Vec<String>,
    pub shm: BTreeSet<String>,
    /// Mount points and file system types of the host's mount namespace.
    pub mounts: BTreeSet<String>,
}

impl Snapshot {
    pub fn take() -> Snapshot {
        let mut fds: Vec<String> = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .map(|t| t.display().to_string())
            // The directory listing itself is one.
            .filter(|t| !t.starts_with("/proc/") || !t.ends_with("/fd"))
            .collect();
        fds.sort();
        let shm =
            std::fs::read_dir("/dev/shm").unwrap().filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let sep = f.iter().position(|x| *x == "-")?;
                Some(format!("{} {}", f.get(4)?, f.get(sep + 1)?))
            })
            .collect();
        Snapshot { fds, shm, mounts }
    }

    /// What `later` has that `self` had not, or differs in (empty: nothing left behind).
    pub fn leftovers(&self, later: &Snapshot) -> Vec<String> {
        let mut found = Vec::new();
        if later.fds.len() != self.fds.len() {
            found.push(format!("test process descriptors: {} before, {} after: {:?}", self.fds.len(), later.fds.len(), later.fds));
        }
        found.extend(later.shm.difference(&self.shm).map(|n| format!("/dev/shm/{n}")));
        found.extend(later.mounts.difference(&self.mounts).map(|m| format!("mount {m}")));
        found
    }
}

/// Polls `check` (a list of what is wrong; empty when all is well) until it is empty; fails
/// with the last list after `limit`.
pub fn settle(what: &str, limit: Duration, mut check: impl FnMut() -> Vec<String>) {
    let deadline = Instant::now() + limit;
    loop {
        let wrong = check();
        if wrong.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: still there after {limit:?}: {wrong:#?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls until `done` holds; fails after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
