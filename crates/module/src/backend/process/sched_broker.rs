//! The broker: the module's thread that partitions' exits and signals pass through, and the
//! limit that lets partitions take real-time priorities without CAP_SYS_NICE.
//!
//! A partition with CAP_SYS_NICE could raise a thread to SCHED_FIFO 99 and spin: the core's
//! scheduler thread (also 99) would never run again, and neither would the partitions sharing
//! the core. So partitions hold no capability at all; their program starts with
//! RLIMIT_RTPRIO = [`PARTITION_RT_CEILING`] (soft and hard, set by the module before `execve`:
//! raising it again needs CAP_SYS_RESOURCE), under which the kernel itself grants their
//! `sched_setscheduler`, `sched_setparam` and `sched_setattr` calls: SCHED_FIFO and SCHED_RR at
//! 1..=ceiling, never above it (EPERM), never SCHED_DEADLINE (EPERM: it needs the capability),
//! no negative nice (RLIMIT_NICE is 0), and only for threads of the partition's own uid in its
//! own PID namespace. The calls take no detour: a process that changes its own priority keeps
//! its CPU (when the module made these calls for the partition, the caller slept until the
//! answer and a lower process of its partition ran meanwhile).
//!
//! `exit_group` comes to the broker thread (SECCOMP_RET_USER_NOTIF), for the kernel's exit-path
//! hazard ([`super::rt::demote_threads`]): a process whose threads exit at different real-time
//! priorities on one CPU can hold that CPU for ever in the kernel. The broker, at
//! [`BROKER_PRIORITY`] (above every partition thread, so a busy partition cannot delay the
//! answer), first sets the exiting process's RLIMIT_RTPRIO to 0 (no thread of it can climb back
//! to a real-time priority), then moves every thread of it to SCHED_OTHER, and lets the call run
//! (SECCOMP_USER_NOTIF_FLAG_CONTINUE). An exit is never refused: whatever fails on the way,
//! the answer is CONTINUE. When the broker stops, it answers what is pending first; a call made
//! after its listener is closed fails with ENOSYS (glibc's `_exit` then ends the calling thread
//! with `exit`), and the module kills what is left, demoted (docs/isolation.md).
//!
//! Signals that may end or stop a process come here too, for the same hazard: a process killed
//! by a signal makes no `exit_group`. [`super::exit_signals`] demotes every thread of each
//! process the signal will end or stop, and the call runs as made (CONTINUE).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Highest real-time priority a partition thread may have: below the module's lifecycle and
/// broker threads ([`BROKER_PRIORITY`]), its signal guard and its per-core schedulers, so
/// that no partition, however busy, delays the module. Partition bands (plan.rs) and the
/// APEX timer thread (80) fit below it.
pub const PARTITION_RT_CEILING: i32 = 90;

/// Priority of the broker thread (the same as the lifecycle thread's).
pub const BROKER_PRIORITY: i32 = 95;

/// What the broker let through (for reports and tests).
#[derive(Debug, Default)]
pub struct BrokerCounts {
    /// `exit_group` calls let through after their process's threads were demoted.
    pub exits: AtomicU64,
    /// Signal-sending calls let through (after the demotion of the processes they end or stop).
    pub signals: AtomicU64,
    /// Processes demoted before a signal that ends or stops them.
    pub signal_demotions: AtomicU64,
}

struct Shared {
    incoming: Mutex<Vec<OwnedFd>>,
    wake: OwnedFd,
    stop: AtomicBool,
    counts: BrokerCounts,
}

/// The broker of one run: a thread serving every partition's filter listener.
pub struct SchedBroker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl SchedBroker {
    /// Starts the broker thread (at [`BROKER_PRIORITY`] when allowed; a warning otherwise).
    pub fn start() -> io::Result<SchedBroker> {
        // SAFETY: eventfd with valid flags; checked and owned below.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor owned by nobody else.
        let wake = unsafe { OwnedFd::from_raw_fd(fd) };
        let shared =
            Arc::new(Shared { incoming: Mutex::new(Vec::new()), wake, stop: AtomicBool::new(false), counts: BrokerCounts::default() });
        let s = shared.clone();
        let thread = std::thread::Builder::new().name("partita-sched".into()).spawn(move || {
            if let Err(e) = super::rt::set_current_fifo(BROKER_PRIORITY) {
                eprintln!("partita: warning: the scheduling broker runs without real-time priority: {e}");
            }
            serve(&s);
        })?;
        Ok(SchedBroker { shared, thread: Some(thread) })
    }

    /// Serves the filter listener of a newly started partition program.
    pub fn add(&self, listener: OwnedFd) {
        self.shared.incoming.lock().unwrap_or_else(|e| e.into_inner()).push(listener);
        kick(self.shared.wake.as_raw_fd());
    }

    pub fn counts(&self) -> &BrokerCounts {
        &self.shared.counts
    }
}

impl Drop for SchedBroker {
    /// Stops the thread; pending and later calls of partitions still running fail (ENOSYS).
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        kick(self.shared.wake.as_raw_fd());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn kick(fd: RawFd) {
    let one: u64 = 1;
    // SAFETY: writing the 8-byte counter to our eventfd.
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}

/// One partition program's filter listener (shared by the processes it forks).
struct Listener {
    fd: OwnedFd,
}

fn serve(s: &Shared) {
    let mut listeners: Vec<Listener> = Vec::new();
    loop {
        let mut fds: Vec<libc::pollfd> = std::iter::once(s.wake.as_raw_fd())
            .chain(listeners.iter().map(|l| l.fd.as_raw_fd()))
            .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
            .collect();
        // SAFETY: `fds` is a valid array of pollfd of the given length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            continue; // EINTR
        }
        if fds[0].revents != 0 {
            let mut v = 0u64;
            // SAFETY: reading the 8-byte counter of our eventfd into a valid buffer.
            unsafe { libc::read(s.wake.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
            let incoming = std::mem::take(&mut *s.incoming.lock().unwrap_or_else(|e| e.into_inner()));
            listeners.extend(incoming.into_iter().map(|fd| Listener { fd }));
            if s.stop.load(Ordering::Acquire) {
                drain(&mut listeners, &s.counts);
                return;
            }
        }
        let mut gone = Vec::new();
        for (k, p) in fds.iter().enumerate().skip(1) {
            if p.revents & libc::POLLIN != 0 {
                serve_one(&mut listeners[k - 1], &s.counts);
            } else if p.revents != 0 {
                // POLLHUP: every task using the filter has exited.
                gone.push(k - 1);
            }
        }
        for k in gone.into_iter().rev() {
            listeners.swap_remove(k);
        }
    }
}

/// Before the listeners close (the broker stops): answers every call already waiting, so that
/// no exit_group made before the stop fails. Bounded: each listener is read until it has
/// nothing pending, at most [`DRAIN_LIMIT`] calls each.
fn drain(listeners: &mut [Listener], counts: &BrokerCounts) {
    for l in listeners {
        for _ in 0..DRAIN_LIMIT {
            let mut p = libc::pollfd { fd: l.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd, no wait.
            if unsafe { libc::poll(&mut p, 1, 0) } != 1 || p.revents & libc::POLLIN == 0 {
                break;
            }
            serve_one(l, counts);
        }
    }
}

/// At most this many calls per listener are answered while the broker stops (a partition
/// cannot keep it from stopping by calling without end).
const DRAIN_LIMIT: usize = 64;

/// Receives one notification on `l`, decides and answers it.
fn serve_one(l: &mut Listener, counts: &BrokerCounts) {
    let listener = l.fd.as_raw_fd();
    // SAFETY: an all-zero seccomp_notif is valid (and required by the RECV ioctl).
    let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: RECV fills the seccomp_notif we pass.
    if unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut req) } != 0 {
        return; // ENOENT: the caller went away (killed) meanwhile
    }
    if req.data.nr as libc::c_long == libc::SYS_exit_group {
        demote_for_exit(req.pid as i32);
        counts.exits.fetch_add(1, Ordering::Relaxed);
        let resp = libc::seccomp_notif_resp { id: req.id, val: 0, error: 0, flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32 };
        // SAFETY: SEND reads the seccomp_notif_resp we pass; failure (the caller is gone) is harmless.
        unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
        return;
    }
    if let Some((sig, target)) = super::exit_signals::parse(req.data.nr as libc::c_long, &req.data.args) {
        let demoted = super::exit_signals::before_signal(req.pid as i32, sig, target);
        counts.signals.fetch_add(1, Ordering::Relaxed);
        counts.signal_demotions.fetch_add(demoted as u64, Ordering::Relaxed);
        let resp = libc::seccomp_notif_resp { id: req.id, val: 0, error: 0, flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32 };
        // SAFETY: SEND reads the seccomp_notif_resp we pass; failure (the caller is gone) is harmless.
        unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
        return;
    }
    // Nothing else is handed to the broker (seccomp.rs `BROKERED`): refuse what cannot come.
    let resp = libc::seccomp_notif_resp { id: req.id, val: 0, error: -libc::ENOSYS, flags: 0 };
    // SAFETY: SEND reads the seccomp_notif_resp we pass; failure (the caller is gone) is harmless.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
}

/// Moves every thread of `caller`'s process to SCHED_OTHER before its exit_group runs, after
/// setting its RLIMIT_RTPRIO to 0 so that none of them can take a real-time priority again
/// (a sibling climbing back between the demotion and the kill that exit_group sends it). The
/// thread list is read again after each pass, so that threads created meanwhile (at the policy
/// of a real-time creator) are demoted too; a few passes at most.
pub(super) fn demote_for_exit(caller: i32) {
    super::rt::forbid_real_time(caller);
    let mut done: Vec<i32> = Vec::new();
    for _ in 0..4 {
        // /proc/<tid>/task lists the threads of the whole group, whichever thread calls.
        let fresh: Vec<i32> = super::rt::threads_of(caller).into_iter().filter(|t| !done.contains(t)).collect();
        if fresh.is_empty() {
            break;
        }
        super::rt::demote_threads(fresh.iter().copied());
        done.extend(fresh);
    }
    if done.is_empty() {
        // /proc unreadable: the caller at least.
        super::rt::demote_threads([caller]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs in a child process of its own (the test binary's threads and limits stay as they
    /// were): threads at SCHED_BATCH (no privilege needed) stand in for real-time ones.
    #[test]
    fn an_exit_demotes_every_thread_of_the_process_and_forbids_real_time() {
        // SAFETY: the child only runs the closure below and leaves with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork: {}", io::Error::last_os_error());
        if pid == 0 {
            let code = std::panic::catch_unwind(exit_demotes_every_thread).map_or(1, |r| r);
            // SAFETY: ends the forked child at once.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status), "child status {status:#x}");
        let why = ["", "the child panicked", "the threads did not reach SCHED_BATCH", "a thread was not demoted", "RLIMIT_RTPRIO is not 0"];
        let code = libc::WEXITSTATUS(status);
        assert_eq!(code, 0, "{}", why.get(code as usize).unwrap_or(&"?"));
    }

    /// The body of the test above, in the forked child: 0 when every check holds, else the
    /// number of the first that failed (it prints nothing: a lock another thread of the test
    /// binary held at the fork could hang the child).
    fn exit_demotes_every_thread() -> i32 {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let done_rx = Arc::new(Mutex::new(done_rx));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (tx, done_rx) = (tx.clone(), done_rx.clone());
                std::thread::spawn(move || {
                    let p = libc::sched_param { sched_priority: 0 };
                    // SAFETY: the calling thread (0) to SCHED_BATCH with a valid parameter.
                    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &p) };
                    // SAFETY: gettid has no preconditions.
                    tx.send((r, unsafe { libc::gettid() })).unwrap();
                    let _ = done_rx.lock().unwrap().recv();
                })
            })
            .collect();
        let got: Vec<(i32, i32)> = (0..2).map(|_| rx.recv().unwrap()).collect();
        let tids: Vec<i32> = got.iter().map(|g| g.1).collect();
        // SAFETY: plain query of a thread's policy.
        let policy = |t: i32| unsafe { libc::sched_getscheduler(t) };
        let mut failed = 0;
        if !got.iter().all(|g| g.0 == 0) || !tids.iter().all(|&t| policy(t) == libc::SCHED_BATCH) {
            failed = 2;
        }
        // Whichever thread calls: /proc/<tid>/task is the whole group.
        demote_for_exit(tids[0]);
        if failed == 0 && !tids.iter().all(|&t| policy(t) == libc::SCHED_OTHER) {
            failed = 3;
        }
        let mut lim = libc::rlimit { rlim_cur: 1, rlim_max: 1 };
        // SAFETY: reads this process's limit into a valid rlimit.
        unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut lim) };
        if failed == 0 && (lim.rlim_cur != 0 || lim.rlim_max != 0) {
            failed = 4;
        }
        drop(done_tx);
        for t in threads {
            let _ = t.join();
        }
        failed
    }
}
