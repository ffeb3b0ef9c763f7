//! The scheduling broker: partitions get real-time priorities without holding CAP_SYS_NICE.
//!
//! A partition with CAP_SYS_NICE could raise a thread to SCHED_FIFO 99 and spin: the core's
//! scheduler thread (also 99) would never run again, and neither would the partitions sharing
//! the core. RLIMIT_RTPRIO cannot replace the capability here (raising it needs
//! CAP_SYS_RESOURCE, and it gives no lower bound), so partitions hold no capability at all and
//! their system call filter ([`super::seccomp`]) hands `sched_setscheduler`, `sched_setparam`
//! and `sched_setattr` to the module (SECCOMP_RET_USER_NOTIF). One broker thread per module CPU,
//! pinned there at [`BROKER_PRIORITY`] (above every partition thread, so a busy partition cannot
//! delay the answer), serves the partitions on that CPU: it receives each call, checks it and
//! makes it itself. A multi-core partition is served by the broker of each of its CPUs while its
//! window there is open ([`BrokerDoors`]). On the caller's CPU, the broker preempts whatever would
//! run there while the caller waits for the answer, so no process of the caller's partition of a
//! lower priority runs in between (with one broker elsewhere, one did: issue 11's deviation),
//! and a partition's calls are served in its own windows, never in another partition's:
//!
//! - the target thread must belong to the calling process (0 = the caller; other ids are
//!   numbers of the partition's PID namespace, translated through `NSpid` in /proc), else ESRCH;
//! - SCHED_OTHER, SCHED_BATCH and SCHED_IDLE are granted (no negative nice: EPERM);
//!   SCHED_FIFO and SCHED_RR only at 1..=[`PARTITION_RT_CEILING`] (above it: EPERM);
//!   SCHED_DEADLINE never (EPERM: a deadline task runs before every real-time thread,
//!   the module's schedulers included);
//! - the arguments behind pointers (`struct sched_param`, `struct sched_attr`) are read from the
//!   caller's memory once, and the call is made with that copy: a sibling thread rewriting them
//!   meanwhile changes nothing. SECCOMP_IOCTL_NOTIF_ID_VALID is checked after reading, so
//!   that the ids and memory read belong to the process still waiting for the answer.
//!
//! The result (or errno) of the module's call is the partition's result.
//!
//! `exit_group` comes here too, for the kernel's exit-path hazard ([`super::rt::demote_threads`]):
//! a process whose threads exit at different real-time priorities on one CPU can hold that CPU
//! for ever in the kernel. The broker moves every thread of the exiting process to SCHED_OTHER,
//! remembers them (their later scheduling requests are refused with EPERM: a sibling may not
//! climb back between the demotion and the kill that exit_group sends it), and lets the call
//! run (SECCOMP_USER_NOTIF_FLAG_CONTINUE). An exit is never refused: whatever fails on the way,
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

const SCHED_RESET_ON_FORK: i32 = 0x4000_0000;
const SCHED_DEADLINE: i32 = 6;
/// `sched_attr.sched_flags` bits (linux/sched.h).
const SCHED_FLAG_RECLAIM: u64 = 0x02;
const SCHED_FLAG_DL_OVERRUN: u64 = 0x04;
const SCHED_FLAG_KEEP_POLICY: u64 = 0x08;
const SCHED_FLAG_KEEP_PARAMS: u64 = 0x10;
/// `struct sched_attr` with the utilization clamps (SCHED_ATTR_SIZE_VER1).
const SCHED_ATTR_SIZE_VER0: u32 = 48;
const SCHED_ATTR_SIZE_VER1: u32 = 56;

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
    util_min: u32,
    util_max: u32,
}

/// How many requests the broker granted and refused (for reports and tests).
#[derive(Debug, Default)]
pub struct BrokerCounts {
    pub granted: AtomicU64,
    pub refused: AtomicU64,
    /// `exit_group` calls let through after their process's threads were demoted.
    pub exits: AtomicU64,
    /// Signal-sending calls let through (after the demotion of the processes they end or stop).
    pub signals: AtomicU64,
    /// Processes demoted before a signal that ends or stops them.
    pub signal_demotions: AtomicU64,
}

struct Shared {
    incoming: Mutex<Vec<Entry>>,
    wake: OwnedFd,
    stop: AtomicBool,
    counts: Arc<BrokerCounts>,
}

/// One broker thread: the CPU it is pinned to (None: not pinned) and what it shares.
struct Server {
    cpu: Option<u32>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// The brokers of one run: a thread per module CPU serving the filter listeners of the
/// partitions on that CPU.
pub struct SchedBroker {
    servers: Vec<Server>,
    counts: Arc<BrokerCounts>,
}

impl SchedBroker {
    /// Starts a broker thread pinned to each of `cpus` (one unpinned thread when empty), at
    /// [`BROKER_PRIORITY`] when allowed (a warning otherwise).
    pub fn start(cpus: &[u32]) -> io::Result<SchedBroker> {
        let counts = Arc::new(BrokerCounts::default());
        let mut broker = SchedBroker { servers: Vec::new(), counts: counts.clone() };
        let placements: Vec<Option<u32>> = if cpus.is_empty() { vec![None] } else { cpus.iter().copied().map(Some).collect() };
        for cpu in placements {
            // SAFETY: eventfd with valid flags; checked and owned below.
            let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a fresh descriptor owned by nobody else.
            let wake = unsafe { OwnedFd::from_raw_fd(fd) };
            let shared = Arc::new(Shared { incoming: Mutex::new(Vec::new()), wake, stop: AtomicBool::new(false), counts: counts.clone() });
            let s = shared.clone();
            let name = cpu.map_or("partita-sched".to_string(), |c| format!("partita-sched{c}"));
            let thread = std::thread::Builder::new().name(name).spawn(move || {
                if let Some(c) = cpu
                    && let Err(e) = super::rt::pin_current_thread(c as usize)
                {
                    crate::warn_line!("partita: warning: the scheduling broker of CPU {c} cannot be pinned there: {e}");
                }
                if let Err(e) = super::rt::set_current_fifo(BROKER_PRIORITY) {
                    crate::warn_line!("partita: warning: the scheduling broker runs without real-time priority: {e}");
                }
                serve(&s);
            })?;
            // Pushed at once: a later failure stops the threads started so far (Drop).
            broker.servers.push(Server { cpu, shared, thread: Some(thread) });
        }
        Ok(broker)
    }

    /// Serves the filter listener of a newly started partition program whose (only) core is on
    /// host CPU `cpu` (by that CPU's broker; the first one when none serves it).
    pub fn add(&self, listener: OwnedFd, cpu: Option<u32>) {
        let server = self.server_of(cpu);
        let entry = Entry { listener: Arc::new(SharedListener::new(listener)), door: None };
        server.shared.incoming.lock().unwrap_or_else(|e| e.into_inner()).push(entry);
        kick(server.shared.wake.as_raw_fd());
    }

    /// The doors of a multi-core partition on host CPUs `cpus` (its cores in order): see
    /// [`BrokerDoors`].
    pub fn doors(&self, cpus: &[u32]) -> Arc<BrokerDoors> {
        Arc::new(BrokerDoors {
            open: cpus.iter().map(|_| AtomicBool::new(false)).collect(),
            servers: cpus.iter().map(|&c| self.server_of(Some(c)).shared.clone()).collect(),
        })
    }

    /// Serves the filter listener of a newly started program of the multi-core partition of
    /// `doors`: by the broker of each of its CPUs while its door there is open.
    pub fn add_behind(&self, listener: OwnedFd, doors: &Arc<BrokerDoors>) {
        let listener = Arc::new(SharedListener::new(listener));
        for (k, server) in doors.servers.iter().enumerate() {
            let entry = Entry { listener: listener.clone(), door: Some((doors.clone(), k)) };
            server.incoming.lock().unwrap_or_else(|e| e.into_inner()).push(entry);
            kick(server.wake.as_raw_fd());
        }
    }

    fn server_of(&self, cpu: Option<u32>) -> &Server {
        self.servers.iter().find(|s| s.cpu.is_some() && s.cpu == cpu).unwrap_or(&self.servers[0])
    }

    pub fn counts(&self) -> &BrokerCounts {
        &self.counts
    }
}

impl Drop for SchedBroker {
    /// Stops the threads; pending and later calls of partitions still running fail (ENOSYS).
    fn drop(&mut self) {
        for s in &self.servers {
            s.shared.stop.store(true, Ordering::Release);
            kick(s.shared.wake.as_raw_fd());
        }
        for s in &mut self.servers {
            if let Some(t) = s.thread.take() {
                let _ = t.join();
            }
        }
    }
}

fn kick(fd: RawFd) {
    let one: u64 = 1;
    // SAFETY: writing the 8-byte counter to our eventfd.
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}

/// Where a multi-core partition's calls are served: by the broker of each of its CPUs, but
/// only while the partition's window is open on that CPU (its door there). A broker that served
/// the partition's calls at any time (as the first core's broker did) would let the partition,
/// calling from one core, take the time of whichever partition runs on the broker's CPU.
/// While the partition's windows are open on several CPUs, the brokers there all wait for its
/// calls and the first to receive one answers it. The partition's gate opens a door when it
/// releases the partition on that core and closes it when it stops it there.
pub struct BrokerDoors {
    open: Vec<AtomicBool>,
    servers: Vec<Arc<Shared>>,
}

impl BrokerDoors {
    /// The partition's `k`th core was released: its broker there serves the partition's calls.
    pub fn open(&self, k: usize) {
        if let Some(open) = self.open.get(k) {
            open.store(true, Ordering::Release);
            kick(self.servers[k].wake.as_raw_fd());
        }
    }

    /// The partition's `k`th core is being stopped: its broker there stops serving it (at the
    /// latest after the call it is serving).
    pub fn close(&self, k: usize) {
        if let Some(open) = self.open.get(k) {
            open.store(false, Ordering::Release);
        }
    }

    fn is_open(&self, k: usize) -> bool {
        self.open.get(k).is_some_and(|o| o.load(Ordering::Acquire))
    }
}

/// One partition program's filter listener (shared by the processes it forks) and what the
/// brokers serving it know.
struct SharedListener {
    fd: OwnedFd,
    state: Mutex<Listener>,
}

impl SharedListener {
    fn new(fd: OwnedFd) -> SharedListener {
        SharedListener { fd, state: Mutex::new(Listener { exiting: Vec::new(), ids: Vec::new() }) }
    }
}

/// The threads of a partition program's processes that are exiting, and the ids seen.
struct Listener {
    /// Host thread ids demoted for an exit_group: no scheduling request of theirs is granted.
    exiting: Vec<i32>,
    /// Thread ids seen in the partition's PID namespace and on the host, `(ns, host)`: a hint
    /// for [`own_thread`], checked against /proc on every use.
    ids: Vec<(i32, i32)>,
}

/// A listener as one broker serves it: always, or behind the door of one core.
struct Entry {
    listener: Arc<SharedListener>,
    door: Option<(Arc<BrokerDoors>, usize)>,
}

impl Entry {
    fn open(&self) -> bool {
        self.door.as_ref().is_none_or(|(d, k)| d.is_open(*k))
    }
}

fn serve(s: &Shared) {
    let mut entries: Vec<Entry> = Vec::new();
    loop {
        // Only the listeners this broker serves now (a multi-core partition's while its door
        // here is open): a closed one's calls wait, and cannot wake this CPU.
        let serving: Vec<usize> = (0..entries.len()).filter(|&k| entries[k].open()).collect();
        let mut fds: Vec<libc::pollfd> = std::iter::once(s.wake.as_raw_fd())
            .chain(serving.iter().map(|&k| entries[k].listener.fd.as_raw_fd()))
            .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
            .collect();
        // SAFETY: `fds` is a valid array of pollfd of the given length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            continue; // EINTR
        }
        let mut gone = Vec::new();
        for (p, &k) in fds.iter().skip(1).zip(&serving) {
            if p.revents & libc::POLLIN != 0 {
                serve_one(&entries[k], &s.counts);
            } else if p.revents != 0 {
                // POLLHUP: every task using the filter has exited.
                gone.push(k);
            }
        }
        gone.sort_unstable();
        for k in gone.into_iter().rev() {
            entries.swap_remove(k);
        }
        if fds[0].revents != 0 {
            let mut v = 0u64;
            // SAFETY: reading the 8-byte counter of our eventfd into a valid buffer.
            unsafe { libc::read(s.wake.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
            entries.extend(std::mem::take(&mut *s.incoming.lock().unwrap_or_else(|e| e.into_inner())));
            if s.stop.load(Ordering::Acquire) {
                drain(&entries, &s.counts);
                return;
            }
        }
    }
}

/// Before the listeners close (the broker stops): answers every call already waiting, so that
/// no exit_group made before the stop fails. Bounded: each listener is read until it has
/// nothing pending, at most [`DRAIN_LIMIT`] calls each.
fn drain(entries: &[Entry], counts: &BrokerCounts) {
    for e in entries {
        for _ in 0..DRAIN_LIMIT {
            let mut p = libc::pollfd { fd: e.listener.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd, no wait.
            if unsafe { libc::poll(&mut p, 1, 0) } != 1 || p.revents & libc::POLLIN == 0 {
                break;
            }
            serve_one(e, counts);
        }
    }
}

/// At most this many calls per listener are answered while the broker stops (a partition
/// cannot keep it from stopping by calling without end).
const DRAIN_LIMIT: usize = 64;

/// Receives one notification on `e`'s listener, decides and answers it.
fn serve_one(e: &Entry, counts: &BrokerCounts) {
    if let Some(req) = receive(&e.listener) {
        answer(&e.listener, req, counts);
    }
}

/// One notification of `shared`'s listener; None when there was nothing to receive (another
/// broker took the call, or the caller went away).
fn receive(shared: &SharedListener) -> Option<libc::seccomp_notif> {
    // SAFETY: an all-zero seccomp_notif is valid (and required by the RECV ioctl).
    let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: RECV fills the seccomp_notif we pass.
    if unsafe { libc::ioctl(shared.fd.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut req) } != 0 {
        return None; // ENOENT: taken by another broker, or the caller went away (killed)
    }
    Some(req)
}

/// Decides call `req` of `shared`'s listener and answers it.
fn answer(shared: &SharedListener, req: libc::seccomp_notif, counts: &BrokerCounts) {
    let listener = shared.fd.as_raw_fd();
    let mut guard = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    let l = &mut *guard;
    if req.data.nr as libc::c_long == libc::SYS_exit_group {
        demote_for_exit(req.pid as i32, &mut l.exiting);
        counts.exits.fetch_add(1, Ordering::Relaxed);
        let resp = libc::seccomp_notif_resp { id: req.id, val: 0, error: 0, flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32 };
        // SAFETY: SEND reads the seccomp_notif_resp we pass; failure (the caller is gone) is harmless.
        unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
        return;
    }
    if let Some((sig, target)) = super::exit_signals::parse(req.data.nr as libc::c_long, &req.data.args) {
        let demoted = super::exit_signals::before_signal(req.pid as i32, sig, target, &mut l.exiting);
        counts.signals.fetch_add(1, Ordering::Relaxed);
        counts.signal_demotions.fetch_add(demoted as u64, Ordering::Relaxed);
        let resp = libc::seccomp_notif_resp { id: req.id, val: 0, error: 0, flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32 };
        // SAFETY: SEND reads the seccomp_notif_resp we pass; failure (the caller is gone) is harmless.
        unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
        return;
    }
    let decision = if l.exiting.contains(&(req.pid as i32)) { Err(libc::EPERM) } else { decide(listener, &req, l) };
    let (val, error) = match decision {
        Ok(v) => {
            counts.granted.fetch_add(1, Ordering::Relaxed);
            (v, 0)
        }
        Err(errno) => {
            counts.refused.fetch_add(1, Ordering::Relaxed);
            (0, -errno)
        }
    };
    let resp = libc::seccomp_notif_resp { id: req.id, val, error, flags: 0 };
    // SAFETY: SEND reads the seccomp_notif_resp we pass; failure (the caller is gone) is harmless.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
}

/// The caller is still waiting for notification `id` (its pid and memory are the caller's).
fn still_valid(listener: RawFd, id: u64) -> Result<(), i32> {
    // SAFETY: ID_VALID reads the u64 we pass.
    if unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) } == 0 { Ok(()) } else { Err(libc::ESRCH) }
}

/// Moves every thread of `caller`'s process to SCHED_OTHER before its exit_group runs, and
/// records them in `exiting` (after forgetting the threads of earlier exits that are gone).
/// The thread list is read again after each pass, so that threads created meanwhile (at the
/// policy of a real-time creator) are demoted too; a few passes at most.
pub(super) fn demote_for_exit(caller: i32, exiting: &mut Vec<i32>) {
    exiting.retain(|&t| super::sys::pid_alive(t));
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
        done.push(caller);
    }
    exiting.extend(done);
}

fn decide(listener: RawFd, req: &libc::seccomp_notif, l: &mut Listener) -> Result<i64, i32> {
    let caller = req.pid as i32;
    let args = req.data.args;
    let target_ns = args[0] as i32;
    if target_ns < 0 {
        return Err(libc::EINVAL);
    }
    let target = if target_ns == 0 { caller } else { own_thread(caller, target_ns, &mut l.ids).ok_or(libc::ESRCH)? };
    if l.exiting.contains(&target) {
        return Err(libc::EPERM);
    }
    still_valid(listener, req.id)?;
    let nr = req.data.nr as libc::c_long;
    let r = if nr == libc::SYS_sched_setscheduler {
        let policy = args[1] as i32;
        let param: libc::sched_param = read_remote(caller, args[2])?;
        still_valid(listener, req.id)?;
        check(policy & !SCHED_RESET_ON_FORK, param.sched_priority, 0)?;
        // SAFETY: a thread id, a policy and a valid sched_param.
        unsafe { libc::sched_setscheduler(target, policy, &param) as libc::c_long }
    } else if nr == libc::SYS_sched_setparam {
        let param: libc::sched_param = read_remote(caller, args[1])?;
        still_valid(listener, req.id)?;
        // SAFETY: plain query of a thread's policy.
        let current = unsafe { libc::sched_getscheduler(target) };
        if current < 0 {
            return Err(errno());
        }
        check(current & !SCHED_RESET_ON_FORK, param.sched_priority, 0)?;
        // SAFETY: a thread id and a valid sched_param.
        unsafe { libc::sched_setparam(target, &param) as libc::c_long }
    } else if nr == libc::SYS_sched_setattr {
        let mut attr = read_attr(caller, args[1])?;
        still_valid(listener, req.id)?;
        if attr.flags & (SCHED_FLAG_RECLAIM | SCHED_FLAG_DL_OVERRUN) != 0 {
            return Err(libc::EPERM);
        }
        let (mut policy, mut priority) = (attr.policy as i32, attr.priority as i32);
        if attr.flags & (SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_KEEP_PARAMS) != 0 {
            // SAFETY: plain queries of a thread's policy and parameter.
            let (current, mut p) = (unsafe { libc::sched_getscheduler(target) }, libc::sched_param { sched_priority: 0 });
            // SAFETY: as above, into a valid sched_param.
            if current < 0 || unsafe { libc::sched_getparam(target, &mut p) } != 0 {
                return Err(errno());
            }
            if attr.flags & SCHED_FLAG_KEEP_POLICY != 0 {
                policy = current & !SCHED_RESET_ON_FORK;
            }
            if attr.flags & SCHED_FLAG_KEEP_PARAMS != 0 {
                priority = p.sched_priority;
            }
        }
        check(policy, priority, attr.nice)?;
        attr.size = attr.size.min(SCHED_ATTR_SIZE_VER1);
        // SAFETY: a thread id, a valid sched_attr of `attr.size` bytes and the caller's flags.
        unsafe { libc::syscall(libc::SYS_sched_setattr, target, &attr as *const SchedAttr, args[2] as u32) }
    } else {
        return Err(libc::ENOSYS);
    };
    if r < 0 { Err(errno()) } else { Ok(r as i64) }
}

/// What a partition may ask for: the normal policies (not a negative nice), real-time ones at
/// 1..=[`PARTITION_RT_CEILING`], never SCHED_DEADLINE.
pub fn check(policy: i32, priority: i32, nice: i32) -> Result<(), i32> {
    match policy {
        libc::SCHED_OTHER | libc::SCHED_BATCH | libc::SCHED_IDLE if nice < 0 => Err(libc::EPERM),
        libc::SCHED_OTHER | libc::SCHED_BATCH | libc::SCHED_IDLE => Ok(()),
        libc::SCHED_FIFO | libc::SCHED_RR if priority < 1 => Err(libc::EINVAL),
        libc::SCHED_FIFO | libc::SCHED_RR if priority > PARTITION_RT_CEILING => Err(libc::EPERM),
        libc::SCHED_FIFO | libc::SCHED_RR => Ok(()),
        SCHED_DEADLINE => Err(libc::EPERM),
        _ => Err(libc::EINVAL),
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// The host id of the thread of `caller`'s process whose id in its own PID namespace is
/// `ns_tid` (the last `NSpid` field); None if the process has no such thread.
///
/// In a PID namespace the ids differ, and finding the thread means reading the status of each
/// thread of the process (some 15 us each: this dominated a brokered call by thread id). `ids`
/// keeps the pairs seen: a known pair costs one status read, of that thread under the caller's
/// `task` directory, which checks both that it is still the caller's and that its namespace id
/// is still `ns_tid`. A stale pair (the thread ended, its host id reused) fails that check and
/// the threads are read again. At most [`IDS_KEPT`] pairs.
fn own_thread(caller: i32, ns_tid: i32, ids: &mut Vec<(i32, i32)>) -> Option<i32> {
    let innermost = |tid: &str| -> Option<i32> {
        let status = std::fs::read_to_string(format!("/proc/{caller}/task/{tid}/status")).ok()?;
        status.lines().find_map(|l| l.strip_prefix("NSpid:"))?.split_whitespace().last()?.parse().ok()
    };
    if let Some(&(_, host)) = ids.iter().find(|(ns, _)| *ns == ns_tid)
        && innermost(&host.to_string()) == Some(ns_tid)
    {
        return Some(host);
    }
    // Without a PID namespace the ids are the same: one lookup.
    if innermost(&ns_tid.to_string()) == Some(ns_tid) {
        return Some(ns_tid);
    }
    ids.retain(|(ns, _)| *ns != ns_tid);
    let mut found = None;
    for e in std::fs::read_dir(format!("/proc/{caller}/task")).ok()?.flatten() {
        let name = e.file_name();
        let (Some(tid), Some(host)) = (name.to_str(), name.to_str().and_then(|t| t.parse::<i32>().ok())) else { continue };
        let Some(ns) = innermost(tid) else { continue };
        if ids.len() >= IDS_KEPT {
            ids.clear();
        }
        ids.retain(|&(n, _)| n != ns);
        ids.push((ns, host));
        if ns == ns_tid {
            found = Some(host);
        }
    }
    found
}

/// Bound of [`own_thread`]'s pairs per partition program.
const IDS_KEPT: usize = 256;

/// Reads a `T` at `addr` of process `pid` (EFAULT if it cannot be read whole).
fn read_remote<T: Copy>(pid: i32, addr: u64) -> Result<T, i32> {
    let mut v = std::mem::MaybeUninit::<T>::zeroed();
    read_bytes(pid, addr, v.as_mut_ptr().cast(), std::mem::size_of::<T>())?;
    // SAFETY: zero-initialised, then filled; T is a plain C structure (any bytes are valid).
    Ok(unsafe { v.assume_init() })
}

fn read_bytes(pid: i32, addr: u64, buf: *mut u8, len: usize) -> Result<(), i32> {
    if addr == 0 {
        return Err(libc::EINVAL);
    }
    let local = libc::iovec { iov_base: buf.cast(), iov_len: len };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: len };
    // SAFETY: one local iovec over `len` writable bytes at `buf`; the remote one is only read
    // by the kernel, which checks it.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n == len as isize { Ok(()) } else { Err(libc::EFAULT) }
}

/// Reads a `struct sched_attr` as the kernel does: its `size` first (0 = the first version),
/// then that many bytes (at most the version the broker knows; a larger one must only add
/// zeros, as the kernel requires, else E2BIG).
fn read_attr(pid: i32, addr: u64) -> Result<SchedAttr, i32> {
    let size: u32 = read_remote(pid, addr)?;
    let size = if size == 0 { SCHED_ATTR_SIZE_VER0 } else { size };
    if !(SCHED_ATTR_SIZE_VER0..=4096).contains(&size) {
        return Err(libc::E2BIG);
    }
    let mut attr = SchedAttr::default();
    let known = size.min(SCHED_ATTR_SIZE_VER1) as usize;
    read_bytes(pid, addr, (&mut attr as *mut SchedAttr).cast(), known)?;
    if size as usize > known {
        let mut tail = vec![0u8; size as usize - known];
        read_bytes(pid, addr + known as u64, tail.as_mut_ptr(), tail.len())?;
        if tail.iter().any(|&b| b != 0) {
            return Err(libc::E2BIG);
        }
    }
    attr.size = size;
    Ok(attr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_and_the_policies() {
        for p in [libc::SCHED_OTHER, libc::SCHED_BATCH, libc::SCHED_IDLE] {
            assert_eq!(check(p, 0, 0), Ok(()));
            assert_eq!(check(p, 0, 5), Ok(()));
            assert_eq!(check(p, 0, -1), Err(libc::EPERM), "a negative nice needs CAP_SYS_NICE");
        }
        for p in [libc::SCHED_FIFO, libc::SCHED_RR] {
            assert_eq!(check(p, 1, 0), Ok(()));
            assert_eq!(check(p, PARTITION_RT_CEILING, 0), Ok(()));
            assert_eq!(check(p, PARTITION_RT_CEILING + 1, 0), Err(libc::EPERM));
            assert_eq!(check(p, 99, 0), Err(libc::EPERM));
            assert_eq!(check(p, 0, 0), Err(libc::EINVAL));
        }
        assert_eq!(check(SCHED_DEADLINE, 0, 0), Err(libc::EPERM));
        assert_eq!(check(42, 0, 0), Err(libc::EINVAL));
    }

    #[test]
    fn own_threads_are_found_by_their_namespace_id() {
        let me = std::process::id() as i32;
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let mut ids = Vec::new();
        assert_eq!(own_thread(me, tid, &mut ids), Some(tid));
        assert_eq!(own_thread(me, i32::MAX, &mut ids), None);
        // A stale hint (another thread's host id, or one that is gone) is checked, not believed.
        let mut ids = vec![(tid, 1), (i32::MAX, tid)];
        assert_eq!(own_thread(me, tid, &mut ids), Some(tid));
        assert_eq!(own_thread(me, i32::MAX, &mut ids), None);
        assert!(!ids.contains(&(i32::MAX, tid)), "the stale pair is dropped: {ids:?}");
    }

    #[test]
    fn an_exit_demotes_every_thread_of_the_process_and_remembers_them() {
        // Threads of this process at SCHED_BATCH (no privilege needed) stand in for real-time ones.
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let done_rx = Arc::new(Mutex::new(done_rx));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (tx, done_rx) = (tx.clone(), done_rx.clone());
                std::thread::spawn(move || {
                    let p = libc::sched_param { sched_priority: 0 };
                    // SAFETY: the calling thread (0) to SCHED_BATCH with a valid parameter.
                    assert_eq!(unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &p) }, 0);
                    // SAFETY: gettid has no preconditions.
                    tx.send(unsafe { libc::gettid() }).unwrap();
                    let _ = done_rx.lock().unwrap().recv();
                })
            })
            .collect();
        let tids: Vec<i32> = (0..2).map(|_| rx.recv().unwrap()).collect();
        // SAFETY: plain query of a thread's policy.
        let policy = |t: i32| unsafe { libc::sched_getscheduler(t) };
        assert!(tids.iter().all(|&t| policy(t) == libc::SCHED_BATCH));
        // A dead thread of an earlier exit is forgotten.
        let mut exiting = vec![i32::MAX - 1];
        // Whichever thread calls: /proc/<tid>/task is the whole group.
        demote_for_exit(tids[0], &mut exiting);
        for &t in &tids {
            assert_eq!(policy(t), libc::SCHED_OTHER, "thread {t}");
            assert!(exiting.contains(&t), "thread {t} is remembered");
        }
        // SAFETY: gettid has no preconditions.
        assert!(exiting.contains(&unsafe { libc::gettid() }), "the test's own thread is in the group too");
        assert!(!exiting.contains(&(i32::MAX - 1)));
        drop(done_tx);
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn remote_reads_check_their_length() {
        let v: libc::sched_param = libc::sched_param { sched_priority: 42 };
        let me = std::process::id() as i32;
        let got: libc::sched_param = read_remote(me, &v as *const _ as u64).unwrap();
        assert_eq!(got.sched_priority, 42);
        assert_eq!(read_remote::<libc::sched_param>(me, 0).err(), Some(libc::EINVAL));
        assert_eq!(read_remote::<libc::sched_param>(me, 8).err(), Some(libc::EFAULT));
    }
}
