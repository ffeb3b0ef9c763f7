//! The freeze/thaw files of one cgroup, opened once, and the ways to wait for a freeze to
//! complete. docs/scheduling.md has the measurements that chose [`FreezeWait::default`].

use super::sys;
use super::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// How [`super::PartitionCgroup::freeze_with`] waits for `frozen 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreezeWait {
    /// `poll(POLLPRI)` on `cgroup.events`, re-reading it after each notification. Correct,
    /// but the kernel rate-limits `cgroup.events` notifications to one per 10 ms per cgroup,
    /// so a freeze shortly after a thaw can be reported up to 10 ms late.
    Poll,
    /// An inotify `IN_MODIFY` watch on `cgroup.events`: same rate limit, plus a workqueue hop.
    Inotify,
    /// Re-read `cgroup.events` after each relative sleep of `us` microseconds. The sleep lets
    /// the outgoing tasks (on the waiter's own CPU) reach their freeze point.
    Sleep { us: u32 },
    /// Re-read continuously. Only when the partition's tasks run on other CPUs than the
    /// waiter: on the same CPU a higher-priority spinner keeps them from ever freezing.
    Spin,
}

impl Default for FreezeWait {
    /// Sleeps of 20 us: immune to the rate limit, and long enough for the frozen tasks to
    /// reach their freeze point when the waiter shares their CPU (2 us sleeps were measured
    /// to livelock there; 10 us took 15 us per freeze).
    fn default() -> Self {
        FreezeWait::Sleep { us: 20 }
    }
}

#[derive(Debug)]
pub(crate) enum Freezer {
    /// `threads`: the cgroup's `cgroup.threads`, for [`Freezer::signal_threads`]; `procs`:
    /// its `cgroup.procs` (None where it cannot be opened), for the signal gate.
    V2 {
        freeze: File,
        events: File,
        inotify: Option<OwnedFd>,
        threads: File,
        procs: Option<File>,
    },
    /// `tasks`: the cgroup's thread list; `procs`: its `cgroup.procs`.
    V1 {
        state: File,
        tasks: File,
        procs: Option<File>,
    },
    None,
}

impl Freezer {
    pub(crate) fn open_v2(dir: &Path) -> Result<Freezer> {
        let freeze = open(&dir.join("cgroup.freeze"), true)?;
        let events_path = dir.join("cgroup.events");
        let events = open(&events_path, false)?;
        let threads = open(&dir.join("cgroup.threads"), false)?;
        let procs = open(&dir.join("cgroup.procs"), false).ok();
        Ok(Freezer::V2 { freeze, events, inotify: watch(&events_path).ok(), threads, procs })
    }

    pub(crate) fn open_v1(dir: &Path) -> Result<Freezer> {
        let path = dir.join("freezer.state");
        let state =
            OpenOptions::new().read(true).write(true).open(&path).map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        Ok(Freezer::V1 { state, tasks: open(&dir.join("tasks"), false)?, procs: open(&dir.join("cgroup.procs"), false).ok() })
    }

    pub(crate) fn kind(&self) -> super::FreezerKind {
        match self {
            Freezer::V2 { .. } => super::FreezerKind::V2,
            Freezer::V1 { .. } => super::FreezerKind::V1,
            Freezer::None => super::FreezerKind::None,
        }
    }

    /// One write: start freezing (`true`) or thaw.
    pub(crate) fn request(&self, frozen: bool) -> io::Result<()> {
        match self {
            Freezer::V2 { freeze, .. } => freeze.write_at(if frozen { b"1" } else { b"0" }, 0).map(drop),
            Freezer::V1 { state, .. } => state.write_at(if frozen { b"FROZEN" } else { b"THAWED" }, 0).map(drop),
            Freezer::None => Err(io::Error::new(io::ErrorKind::Unsupported, "no freezer for this partition")),
        }
    }

    /// Sends `sig` to every thread of the cgroup (`tkill`); returns how many. For the core
    /// guard (guard.rs): a SIGSTOP needs no cgroup lock, so it holds a partition whose freeze
    /// write is blocked. The list is read through a descriptor opened in advance (no path
    /// lookup); reading it takes only the kernel's css_set spinlock, not `cgroup_mutex`.
    pub(crate) fn signal_threads(&self, sig: i32) -> io::Result<usize> {
        let mut count = 0;
        for tid in self.threads()? {
            // SAFETY: tkill with a thread id read from the cgroup and a valid signal; a thread
            // that has exited meanwhile gives ESRCH, which is fine.
            if unsafe { libc::syscall(libc::SYS_tkill, tid, sig) } == 0 {
                count += 1;
            }
        }
        Ok(count)
    }

    /// The threads of the cgroup, read through the descriptor opened in advance.
    pub(crate) fn threads(&self) -> io::Result<Vec<i32>> {
        let file = match self {
            Freezer::V2 { threads, .. } => threads,
            Freezer::V1 { tasks, .. } => tasks,
            Freezer::None => return Ok(Vec::new()),
        };
        let mut buf = vec![0u8; 64 * 1024];
        let mut len = 0;
        loop {
            let n = file.read_at(&mut buf[len..], len as u64)?;
            len += n;
            if n == 0 || len == buf.len() {
                break;
            }
        }
        Ok(buf[..len].split(|&b| b == b'\n').filter_map(|l| std::str::from_utf8(l).ok()?.trim().parse::<i32>().ok()).collect())
    }

    /// The thread ids (`Some(true)`) or process ids (`Some(false)`) of the cgroup, read into
    /// `out` through the descriptors opened in advance (see [`super::group_stop::read_ids`]).
    pub(crate) fn ids_into(&self, threads: bool, out: &mut Vec<i32>) -> io::Result<()> {
        let file = match (self, threads) {
            (Freezer::V2 { threads, .. }, true) => Some(threads),
            (Freezer::V1 { tasks, .. }, true) => Some(tasks),
            (Freezer::V2 { procs, .. } | Freezer::V1 { procs, .. }, false) => procs.as_ref(),
            (Freezer::None, _) => None,
        };
        match file {
            Some(f) => super::group_stop::read_ids(f, out),
            None => {
                out.clear();
                Ok(())
            }
        }
    }

    /// One read: is the freeze complete?
    pub(crate) fn is_frozen(&self) -> io::Result<bool> {
        let mut buf = [0u8; 128];
        match self {
            Freezer::V2 { events, .. } => {
                let n = events.read_at(&mut buf, 0)?;
                Ok(buf[..n].windows(8).any(|w| w == b"frozen 1"))
            }
            Freezer::V1 { state, .. } => {
                let n = state.read_at(&mut buf, 0)?;
                Ok(buf[..n].starts_with(b"FROZEN"))
            }
            Freezer::None => Err(io::Error::new(io::ErrorKind::Unsupported, "no freezer for this partition")),
        }
    }

    pub(crate) fn wait_frozen(&self, wait: FreezeWait, timeout: Duration) -> io::Result<()> {
        let deadline = Instant::now() + timeout;
        let wait = match (self, wait) {
            (Freezer::V1 { .. }, FreezeWait::Poll | FreezeWait::Inotify) | (Freezer::V2 { inotify: None, .. }, FreezeWait::Inotify) => {
                FreezeWait::Sleep { us: 20 }
            }
            (_, w) => w,
        };
        loop {
            if self.is_frozen()? {
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "cgroup did not report frozen"));
            }
            let left = deadline - now;
            match (self, wait) {
                (Freezer::V2 { events, .. }, FreezeWait::Poll) => {
                    ppoll(events.as_fd().as_raw_fd(), libc::POLLPRI, left)?;
                }
                (Freezer::V2 { inotify: Some(fd), .. }, FreezeWait::Inotify) => {
                    if ppoll(fd.as_raw_fd(), libc::POLLIN, left)? {
                        drain(fd);
                    }
                }
                (_, FreezeWait::Sleep { us }) => super::rt::sleep_for_ns(i64::from(us) * 1000),
                _ => std::hint::spin_loop(),
            }
        }
    }
}

fn open(path: &Path, write: bool) -> Result<File> {
    OpenOptions::new().read(!write).write(write).open(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))
}

/// An inotify instance watching `path` for modification.
fn watch(path: &Path) -> io::Result<OwnedFd> {
    // SAFETY: plain system call; flags are valid.
    let fd = sys::cvt(unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) } as libc::c_long)? as i32;
    // SAFETY: inotify_init1 returned a fresh descriptor that we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(io::Error::other)?;
    // SAFETY: valid inotify descriptor and NUL-terminated path.
    sys::cvt(unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), libc::IN_MODIFY) } as libc::c_long)?;
    Ok(fd)
}

fn drain(fd: &OwnedFd) {
    let mut buf = [0u8; 512];
    // SAFETY: reading into a stack buffer of the given length from a non-blocking descriptor.
    while unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
}

/// `ppoll` with a sub-millisecond timeout; true if an event was reported.
fn ppoll(fd: i32, events: i16, timeout: Duration) -> io::Result<bool> {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as libc::c_long };
    // SAFETY: one valid pollfd, a valid timespec, no signal mask change.
    let n = sys::retry(|| unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) } as libc::c_long)?;
    Ok(n > 0)
}
