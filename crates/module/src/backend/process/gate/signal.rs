//! [`SignalGroupGate`]: stops and releases a whole partition with signals, without any cgroup
//! write (`PARTITA_GATE=signal`; docs/scheduling.md, `### Signal gate`, has the measurements and
//! what keeps it from being the default yet).
//!
//! Why not the cgroup freezer: a `cgroup.freeze` (or v1 `freezer.state`) write takes the
//! kernel's global `cgroup_mutex`, and under cgroup work elsewhere on the host it blocked for
//! 5-37 ms while the outgoing partition ran on past its window. Signals take no global lock.
//!
//! Why both a group signal and one per thread: a process-wide SIGSTOP is queued for the
//! process and wakes one of its threads, and the group stop starts only when that thread
//! runs; a busy thread of the same process at a higher priority on the same CPU would never
//! let it run. A SIGSTOP sent to each thread (`tkill`) is pending on every thread, so each
//! enters the group stop at its own next return to user mode: none executes another user
//! instruction. The group signal (`kill(-pgid)`) reaches a process forked after the cgroup's
//! thread list was read. Partitions cannot leave their process group (setsid and setpgid fail
//! with EPERM under the partition's seccomp filter, backend/process/seccomp.rs).
//!
//! Why re-send: a partition thread preempted in the middle of `kill(sibling, SIGCONT)` finishes
//! that call before it stops, and a SIGCONT discards a pending SIGSTOP. [`PartitionGate::
//! enforce_stop`] (called by the scheduler shortly after the boundary, and until the stop is
//! confirmed) re-sends SIGSTOP to every thread that is not stopped yet.

use crate::backend::interface::PartitionGate;
use crate::backend::process::PartitionCgroup;
use crate::backend::process::group_stop::{self, is_stopped_state, kill_group, signal_thread, thread_state};
use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

/// What the gate's lock protects: whether the partition should be stopped now, and scratch
/// lists (kept to avoid an allocation per boundary).
#[derive(Default)]
struct State {
    stopping: bool,
    ids: Vec<i32>,
    procs: Vec<i32>,
}

/// See the module documentation.
pub struct SignalGroupGate {
    cgroup: Arc<PartitionCgroup>,
    /// The process group of the current program (its pid: the program's child setup calls
    /// setsid before execve); 0 while no program runs.
    pgid: AtomicI32,
    /// Serializes stops, re-sends and releases: the scheduler threads of a multi-core
    /// partition's cores may act on it at the same instant, and a re-send must never follow a
    /// release.
    state: Mutex<State>,
}

impl SignalGroupGate {
    pub fn new(cgroup: Arc<PartitionCgroup>) -> SignalGroupGate {
        SignalGroupGate { cgroup, pgid: AtomicI32::new(0), state: Mutex::new(State::default()) }
    }

    /// Sets the process group of a newly started program (0: none runs).
    pub fn set_group(&self, pgid: i32) {
        self.pgid.store(pgid, Ordering::Release);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// SIGSTOP to the group and to every thread of the cgroup.
    fn send_stop(&self, st: &mut State) -> io::Result<()> {
        kill_group(self.pgid.load(Ordering::Acquire), libc::SIGSTOP)?;
        self.cgroup.threads_into(&mut st.ids)?;
        for &tid in &st.ids {
            signal_thread(tid, libc::SIGSTOP);
        }
        Ok(())
    }

    /// Whether every thread of the cgroup is stopped; with `resend`, SIGSTOP again to each
    /// one that is not (and to the group). The program's own process (the module's child) is
    /// checked at once through `waitid` (its group-stop flag); only threads of other processes
    /// (a partition's forked children) are read one by one from `/proc/<tid>/stat`.
    fn check(&self, st: &mut State, resend: bool) -> io::Result<bool> {
        let main = self.pgid.load(Ordering::Acquire);
        let mut main_stopped = if main > 0 { group_stop::child_stopped(main) } else { None };
        // An exited program not reaped yet reports no stop: its threads are looked at one by one.
        if main_stopped == Some(false) && thread_state(main)?.is_none_or(|s| matches!(s, b'Z' | b'X')) {
            main_stopped = None;
        }
        if main_stopped == Some(false) {
            if resend {
                self.send_stop(st)?;
            }
            return Ok(false);
        }
        self.cgroup.threads_into(&mut st.ids)?;
        let mut all = true;
        for &tid in &st.ids {
            if main_stopped == Some(true) && group_stop::in_process(main, tid) {
                continue;
            }
            if !thread_state(tid)?.is_none_or(is_stopped_state) {
                if resend {
                    if all {
                        kill_group(main, libc::SIGSTOP)?;
                    }
                    signal_thread(tid, libc::SIGSTOP);
                }
                all = false;
            }
        }
        Ok(all)
    }
}

impl PartitionGate for SignalGroupGate {
    fn request_stop(&self) -> io::Result<()> {
        let mut st = self.lock();
        st.stopping = true;
        self.send_stop(&mut st)
    }

    fn is_stopped(&self) -> io::Result<bool> {
        let mut st = self.lock();
        self.check(&mut st, false)
    }

    fn enforce_stop(&self) -> io::Result<bool> {
        let mut st = self.lock();
        let resend = st.stopping;
        self.check(&mut st, resend)
    }

    fn chased(&self) -> bool {
        true
    }

    fn release(&self) -> io::Result<()> {
        let mut st = self.lock();
        st.stopping = false;
        let pgid = self.pgid.load(Ordering::Acquire);
        kill_group(pgid, libc::SIGCONT)?;
        // Members outside the group (none while the seccomp filter holds; a partition started
        // without one could have left it).
        let State { procs, .. } = &mut *st;
        self.cgroup.procs_into(procs)?;
        for &pid in procs.iter() {
            if pgid <= 0 || group_stop::group_of(pid).is_some_and(|g| g != pgid) {
                signal_thread(pid, libc::SIGCONT);
            }
        }
        Ok(())
    }

    fn mechanism(&self) -> &'static str {
        "sigstop-group"
    }

    fn kill_threads(&self) -> io::Result<usize> {
        self.cgroup.kill_threads()
    }
}
