//! The memory limit without the kernel's OOM killer: a partition that reaches its limit is
//! demoted, then killed, by the module.
//!
//! The OOM killer sends SIGKILL to a process of the cgroup with its threads at their priorities:
//! a process whose threads die at several real-time priorities on one CPU can hold that CPU for
//! ever in the kernel's exit path ([`super::rt::demote_threads`]). So where the memory limit is
//! a cgroup v1 one (this is the case on hybrid machines), the guard turns the OOM killer off for
//! the partition (`memory.oom_control` = 1: a task that faults at the limit waits in the kernel,
//! killable, instead of a task being killed) and registers an eventfd for the cgroup's OOM
//! notification (`cgroup.event_control`). One thread of the module waits on those eventfds; at a
//! notification with `under_oom 1` it prints why, then [`PartitionCgroup::kill_now`]: every
//! thread to SCHED_OTHER, then SIGKILL. The lifecycle thread sees the program end by a SIGKILL
//! it did not send, the memory violation (`hm::code_of_exit`), and applies the partition's
//! health-monitor action, as it did after the kernel's kill.
//!
//! The OOM killer is turned off only once the notification is registered: a partition whose
//! guard could not be set up keeps the kernel's kill (the residual risk in docs/isolation.md).
//! Allocations made in a system call at the limit fail (ENOMEM) rather than wait. On a machine
//! with only cgroup v2 (`memory.max`) nothing changes yet: see docs/isolation.md, "Exits".

use super::cgroup::{MemoryLimitKind, PartitionCgroup};
use super::sys;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One partition's OOM notification.
struct Watch {
    name: String,
    limit: u64,
    event: OwnedFd,
    /// `memory.oom_control`, open (for `under_oom`).
    control: File,
    cgroup: Weak<PartitionCgroup>,
    /// When the guard last killed the partition while it was at its limit: until `under_oom`
    /// clears, the kill is repeated every [`RECHECK_MS`] (a process forked meanwhile).
    killed_at: Option<Instant>,
}

const RECHECK_MS: i32 = 100;

struct Shared {
    incoming: Mutex<Vec<Watch>>,
    wake: OwnedFd,
    stop: AtomicBool,
    kills: AtomicU64,
}

/// The guard of one run: a thread waiting on every watched partition's OOM notification.
pub struct OomGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd with valid flags; checked, then owned.
    let fd = sys::cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
    // SAFETY: a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn kick(fd: RawFd) {
    let one: u64 = 1;
    // SAFETY: writing the 8-byte counter to our eventfd.
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}

impl OomGuard {
    /// Starts the thread (at `priority`, SCHED_FIFO, when given and allowed: a busy real-time
    /// partition elsewhere must not delay the kill).
    pub fn start(priority: Option<i32>) -> io::Result<OomGuard> {
        let shared =
            Arc::new(Shared { incoming: Mutex::new(Vec::new()), wake: eventfd()?, stop: AtomicBool::new(false), kills: AtomicU64::new(0) });
        let s = shared.clone();
        let thread = std::thread::Builder::new().name("partita-oom".into()).spawn(move || {
            if let Some(p) = priority
                && let Err(e) = super::rt::set_current_fifo(p)
            {
                crate::warn_line!("partita: warning: the memory limit guard runs without real-time priority: {e}");
            }
            serve(&s);
        })?;
        Ok(OomGuard { shared, thread: Some(thread) })
    }

    /// Watches partition `pc`: registers its OOM notification, then turns its OOM killer off.
    /// Ok(false): nothing to do (no v1 memory limit); an error leaves the kernel's OOM killer on.
    pub fn watch(&self, pc: &Arc<PartitionCgroup>) -> io::Result<bool> {
        let (MemoryLimitKind::V1 { .. }, Some(limit)) = pc.memory_limit() else { return Ok(false) };
        let Some(dir) = pc.v1_memory_path() else { return Ok(false) };
        let control = OpenOptions::new().read(true).write(true).open(dir.join("memory.oom_control"))?;
        let event = eventfd()?;
        let registration = format!("{} {}", event.as_raw_fd(), control.as_raw_fd());
        std::fs::write(dir.join("cgroup.event_control"), registration)?;
        control.write_at(b"1", 0)?;
        self.shared.incoming.lock().unwrap_or_else(|e| e.into_inner()).push(Watch {
            name: pc.name.clone(),
            limit,
            event,
            control,
            cgroup: Arc::downgrade(pc),
            killed_at: None,
        });
        kick(self.shared.wake.as_raw_fd());
        Ok(true)
    }

    /// How many partitions the guard killed at their limit.
    pub fn kills(&self) -> u64 {
        self.shared.kills.load(Ordering::Relaxed)
    }
}

impl Drop for OomGuard {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        kick(self.shared.wake.as_raw_fd());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `under_oom 1` in `memory.oom_control`: tasks of the cgroup wait at its limit.
fn under_oom(control: &File) -> Option<bool> {
    let mut buf = [0u8; 256];
    let n = control.read_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    text.lines().find_map(|l| l.strip_prefix("under_oom ")).map(|v| v.trim() == "1")
}

fn serve(s: &Shared) {
    let mut watches: Vec<Watch> = Vec::new();
    loop {
        let mut fds: Vec<libc::pollfd> = std::iter::once(s.wake.as_raw_fd())
            .chain(watches.iter().map(|w| w.event.as_raw_fd()))
            .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
            .collect();
        let timeout = if watches.iter().any(|w| w.killed_at.is_some()) { RECHECK_MS } else { -1 };
        // SAFETY: `fds` is a valid array of pollfd of the given length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if n < 0 {
            continue; // EINTR
        }
        for w in watches.iter_mut() {
            let Some(at) = w.killed_at else { continue };
            match (under_oom(&w.control), w.cgroup.upgrade()) {
                (Some(true), Some(cgroup)) if at.elapsed() >= Duration::from_millis(RECHECK_MS as u64) => {
                    cgroup.kill_now();
                    w.killed_at = Some(Instant::now());
                }
                (Some(true), Some(_)) => {}
                _ => w.killed_at = None,
            }
        }
        let mut counter = 0u64;
        if fds[0].revents != 0 {
            // SAFETY: reading the 8-byte counter of our eventfd into a valid buffer.
            unsafe { libc::read(s.wake.as_raw_fd(), (&mut counter as *mut u64).cast(), 8) };
            watches.extend(std::mem::take(&mut *s.incoming.lock().unwrap_or_else(|e| e.into_inner())));
            if s.stop.load(Ordering::Acquire) {
                return;
            }
        }
        let mut gone = Vec::new();
        for (k, p) in fds.iter().enumerate().skip(1) {
            if p.revents == 0 {
                continue;
            }
            let w = &mut watches[k - 1];
            // SAFETY: reading the 8-byte counter of the watch's eventfd into a valid buffer.
            unsafe { libc::read(w.event.as_raw_fd(), (&mut counter as *mut u64).cast(), 8) };
            // The notification also comes when the cgroup is removed (the run ends).
            let Some(cgroup) = w.cgroup.upgrade() else {
                gone.push(k - 1);
                continue;
            };
            match under_oom(&w.control) {
                Some(true) => {
                    let t0 = Instant::now();
                    // Counted first: whoever waits for the partition's end sees the count.
                    s.kills.fetch_add(1, Ordering::Relaxed);
                    cgroup.kill_now();
                    crate::warn_line!(
                        "partita: partition {} reached its memory limit ({} bytes): its threads were demoted and it was killed ({} us after the notification)",
                        w.name,
                        w.limit,
                        t0.elapsed().as_micros()
                    );
                    w.killed_at = Some(Instant::now());
                }
                Some(false) => {}
                None => gone.push(k - 1),
            }
        }
        for k in gone.into_iter().rev() {
            watches.swap_remove(k);
        }
    }
}
