//! A thread of the module placed once in one partition's v1 cgroups (memory, cpuset), from
//! which that partition's programs are cloned for the whole run.
//!
//! Why (measured with `perf record -e sched:sched_switch -g`, docs/isolation.md): a child
//! starts in the cgroups of the thread that clones it. Cloned from the lifecycle thread, each
//! (re)started program had to be moved into the v1 hierarchies of a hybrid machine with a
//! `cgroup.procs` write, which holds the global `cgroup_mutex` while it waits in
//! `percpu_down_write(cgroup_threadgroup_rwsem)` for an RCU grace period: up to 21 ms here.
//! Every scheduler's freeze and thaw write (`cgroup_kn_lock_live`) waited for that mutex, on both
//! cores, at every restart. Cloned from a thread that is already in the v1 cgroups, the program
//! is born there (and `CLONE_INTO_CGROUP` puts it in its v2 cgroup): a restart writes no
//! `cgroup.procs` at all. The one move per partition (this thread's own) happens before the run.
//!
//! The thread runs at the lifecycle thread's real-time priority: `clone3(CLONE_INTO_CGROUP)`
//! holds `cgroup_mutex` during the fork, and an ordinary thread preempted there by a busy
//! partition would hold every scheduler's stop write until Linux's fair server ran it (up to
//! ~1 s). It lives in the partition's cpuset, so it runs on the partition's CPUs; a restart
//! happens inside the partition's own window (lifecycle.rs), where it takes nobody's time.

use super::cgroup::{PartitionCgroup, write_file};
use super::spawn_child::{self, ChildCtx};
use super::{Error, Result};
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// A clone to carry out: the child's context (given back with the result) and the v2 cgroup.
struct Job {
    ctx: ChildCtx,
    cgroup_fd: Option<RawFd>,
}

/// The context given back, and what the clone gave: pid, pidfd, cloned into the v2 cgroup.
pub(crate) type Outcome = (ChildCtx, io::Result<(i32, OwnedFd, bool)>);

/// The cloning thread of one partition (see the module documentation).
pub struct Spawner {
    jobs: Option<mpsc::Sender<Job>>,
    results: mpsc::Receiver<Outcome>,
    thread: Option<JoinHandle<()>>,
}

impl Spawner {
    /// Starts the thread and places it in `cgroup`'s v1 memory and cpuset cgroups (at
    /// `priority` when given). None when the partition has no v1 cgroup to inherit (pure v2:
    /// `CLONE_INTO_CGROUP` alone places the child).
    pub fn new(cgroup: &PartitionCgroup, priority: Option<i32>) -> Result<Option<Spawner>> {
        let tasks: Vec<_> = cgroup.v1_inherited_dirs().into_iter().map(|d| d.join("tasks")).collect();
        if tasks.is_empty() {
            return Ok(None);
        }
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (out_tx, out_rx) = mpsc::channel::<Outcome>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<()>>();
        let thread = std::thread::Builder::new()
            .name(format!("partita-spawn-{}", cgroup.name))
            .spawn(move || {
                let placed = (|| {
                    if let Some(p) = priority {
                        super::rt::set_current_fifo(p).map_err(|e| Error::io("giving the spawner thread its real-time priority", e))?;
                    }
                    // SAFETY: gettid has no preconditions.
                    let tid = unsafe { libc::gettid() };
                    tasks.iter().try_for_each(|t| write_file(t, &tid.to_string()))
                })();
                let ok = placed.is_ok();
                let _ = ready_tx.send(placed);
                if !ok {
                    return;
                }
                for job in job_rx {
                    let r = spawn_child::clone_child(&job.ctx, job.cgroup_fd);
                    if out_tx.send((job.ctx, r)).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| Error::io("starting a spawner thread", e))?;
        let mut spawner = Spawner { jobs: Some(job_tx), results: out_rx, thread: Some(thread) };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Some(spawner)),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                spawner.jobs = None;
                Err(Error::io("starting a spawner thread", io::Error::other("the thread ended before it was placed")))
            }
        }
    }

    /// [`spawn_child::clone_child`] on this thread; gives `ctx` back (Err: the thread is
    /// gone, and `ctx` with it).
    pub(crate) fn clone_child(&self, ctx: ChildCtx, cgroup_fd: Option<RawFd>) -> io::Result<Outcome> {
        let gone = || io::Error::other("the partition's spawner thread is gone");
        let jobs = self.jobs.as_ref().ok_or_else(gone)?;
        jobs.send(Job { ctx, cgroup_fd }).map_err(|_| gone())?;
        self.results.recv().map_err(|_| gone())
    }
}

impl Drop for Spawner {
    /// Ends the thread (it must be gone before the partition's cgroups are removed). The
    /// programs it cloned have their parent death signal tied to it: drop it only after them.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
