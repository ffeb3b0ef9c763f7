//! A thread of the module placed once in one partition's v1 cgroups (memory, cpuset, pids) and
//! on its CPUs, from which that partition's programs are cloned for the whole run, on the
//! module's memory until their `execve` (`CLONE_VM`, as `posix_spawn` does).
//!
//! Why a thread in the cgroups (measured with `perf record -e sched:sched_switch -g`,
//! docs/isolation.md): a child starts in the cgroups of the thread that clones it. Cloned from
//! the lifecycle thread, each (re)started program had to be moved into the v1 hierarchies of a
//! hybrid machine with a `cgroup.procs` write, which holds the global `cgroup_mutex` while it
//! waits in `percpu_down_write(cgroup_threadgroup_rwsem)` for an RCU grace period: up to 21 ms
//! here. Every scheduler's freeze and thaw write (`cgroup_kn_lock_live`) waited for that mutex,
//! on both cores, at every restart. Cloned from a thread that is already in the v1 cgroups, the
//! program is born there (and `CLONE_INTO_CGROUP` puts it in its v2 cgroup): a restart writes no
//! `cgroup.procs` at all. The one move per partition (this thread's own) happens before the run.
//!
//! Why `CLONE_VM` (docs/isolation-measured.md): a fork-like clone copies the module's address
//! space (`dup_mmap` holds the module's `mmap_lock` for writing and makes its private pages
//! copy-on-write), so the scheduler and guard threads of the *other* core waited in page faults
//! during every restart, and their partitions' stops came late. On the module's memory the
//! child copies nothing. It runs on a stack of this thread's (allocated once) and, sharing the
//! module's memory, writes nothing but that stack and the C library's `errno` of this thread
//! (spawn_child.rs: raw system calls on a context prepared before the clone). So this thread
//! does nothing else meanwhile: it keeps the context and the stack alive and waits, signals
//! blocked, until the kernel reports that the child left the module's memory (its `execve` or
//! its exit clears a word and wakes it: `CLONE_CHILD_CLEARTID`).
//!
//! The thread runs at the lifecycle thread's real-time priority: `clone3(CLONE_INTO_CGROUP)`
//! holds `cgroup_mutex` during the clone, and an ordinary thread preempted there by a busy
//! partition would hold every scheduler's stop write until Linux's fair server ran it (up to
//! ~1 s). It runs on the partition's CPUs; a restart happens inside the partition's own window
//! (lifecycle.rs), where it takes nobody's time.

use super::cgroup::{PartitionCgroup, write_file};
use super::spawn_child::{self, ChildCtx, ChildStack};
use super::{Error, Result};
use crate::backend::rt;
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

/// Stack of a spawner thread.
const SPAWNER_STACK: usize = 256 * 1024;

/// A clone to carry out: the child's context and the v2 cgroup.
struct Job {
    ctx: ChildCtx,
    cgroup_fd: Option<RawFd>,
}

/// What a clone gave: pid, pidfd, cloned into the v2 cgroup; or the context given back with
/// the error (the caller may retry it, e.g. without namespaces).
pub(crate) type Outcome = std::result::Result<(i32, OwnedFd, bool), (ChildCtx, io::Error)>;

/// The cloning thread of one partition (see the module documentation).
pub struct Spawner {
    jobs: Option<mpsc::Sender<Job>>,
    results: mpsc::Receiver<Outcome>,
    /// Set on drop: a thread still waiting for a child to leave the module's memory gives up
    /// and leaves the stack mapped (never reused) rather than wait for ever.
    closing: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Spawner {
    /// Starts the thread, on `cpus` (when given) and at `priority` (when given), and places it
    /// in `cgroup`'s v1 cgroups (none on pure cgroup v2: `CLONE_INTO_CGROUP` alone places the
    /// child).
    pub fn new(cgroup: &PartitionCgroup, cpus: &[usize], priority: Option<i32>) -> Result<Spawner> {
        let tasks: Vec<_> = cgroup.v1_inherited_dirs().into_iter().map(|d| d.join("tasks")).collect();
        let cpus = cpus.to_vec();
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (out_tx, out_rx) = mpsc::channel::<Outcome>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<()>>();
        let closing = Arc::new(AtomicBool::new(false));
        let closing_thread = closing.clone();
        // A small stack: the thread only clones (the child runs on a stack of its own), and
        // the run's mlockall faults in every page of every thread's stack (2 MiB by default,
        // 16 partitions' worth took 12 ms of the start-up).
        let thread = std::thread::Builder::new()
            .name(format!("partita-spawn-{}", cgroup.name))
            .stack_size(SPAWNER_STACK)
            .spawn(move || {
                block_all_signals();
                let placed = (|| {
                    if !cpus.is_empty() {
                        rt::pin_current_thread_to(&cpus).map_err(|e| Error::io("placing the spawner thread on the partition's CPUs", e))?;
                    }
                    if let Some(p) = priority {
                        rt::set_current_fifo(p).map_err(|e| Error::io("giving the spawner thread its real-time priority", e))?;
                    }
                    // SAFETY: gettid has no preconditions.
                    let tid = unsafe { libc::gettid() };
                    tasks.iter().try_for_each(|t| write_file(t, &tid.to_string()))?;
                    ChildStack::new().map_err(|e| Error::io("mapping the spawner's child stack", e))
                })();
                let stack = match placed {
                    Ok(stack) => {
                        let _ = ready_tx.send(Ok(()));
                        stack
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                serve(stack, job_rx, out_tx, &closing_thread);
            })
            .map_err(|e| Error::io("starting a spawner thread", e))?;
        let mut spawner = Spawner { jobs: Some(job_tx), results: out_rx, closing, thread: Some(thread) };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(spawner),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                spawner.jobs = None;
                Err(Error::io("starting a spawner thread", io::Error::other("the thread ended before it was placed")))
            }
        }
    }

    /// Clones the child of `ctx` on this thread, on the module's memory. On success the
    /// context stays with the thread until the child has left the module's memory; on
    /// failure it comes back with the error.
    pub(crate) fn clone_child(&self, ctx: ChildCtx, cgroup_fd: Option<RawFd>) -> io::Result<Outcome> {
        let gone = || io::Error::other("the partition's spawner thread is gone");
        let jobs = self.jobs.as_ref().ok_or_else(gone)?;
        jobs.send(Job { ctx, cgroup_fd }).map_err(|_| gone())?;
        self.results.recv().map_err(|_| gone())
    }
}

/// The thread's loop: one clone at a time, each followed by the wait for the child to leave
/// the module's memory (module documentation).
fn serve(stack: ChildStack, jobs: mpsc::Receiver<Job>, out: mpsc::Sender<Outcome>, closing: &AtomicBool) {
    for Job { ctx, cgroup_fd } in jobs {
        match spawn_child::clone_child_on(&ctx, cgroup_fd, &stack) {
            Ok(r) => {
                let sent = out.send(Ok(r)).is_ok();
                if !wait_child_left(&stack, closing) {
                    // Dropped while the child may still run on the stack and read its context:
                    // neither is freed, ever.
                    std::mem::forget(ctx);
                    std::mem::forget(stack);
                    return;
                }
                // Only now: the child read its context until it left.
                drop(ctx);
                if !sent {
                    return;
                }
            }
            Err(e) => {
                let _ = out.send(Err((ctx, e)));
            }
        }
    }
}

/// Waits until the child cloned on `stack` has left the module's memory. False: `closing`
/// was set first (the child may still run on the stack).
fn wait_child_left(stack: &ChildStack, closing: &AtomicBool) -> bool {
    while stack.in_use() {
        if closing.load(Ordering::Acquire) {
            return false;
        }
        let _ = rt::futex_wait_shared(stack.word(), stack.word().load(Ordering::Acquire), Some(Duration::from_millis(100)));
    }
    true
}

/// Blocks every signal in the calling thread for good: no handler of the module may run on
/// this thread while a child shares its `errno` (module documentation).
fn block_all_signals() {
    // SAFETY: sigset_t is plain data, initialised by sigfillset; pthread_sigmask on the
    // calling thread.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
    }
}

impl Drop for Spawner {
    /// Ends the thread (it must be gone before the partition's cgroups are removed). The
    /// programs it cloned have their parent death signal tied to it: drop it only after them.
    fn drop(&mut self) {
        self.jobs = None;
        self.closing.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
