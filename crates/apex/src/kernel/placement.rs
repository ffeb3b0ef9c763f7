//! Per-core thread placement, when the module stops and releases a multi-core partition per
//! core (`partita_abi::ENV_THREAD_PLACEMENT`): every thread must sit in the cgroup of the core
//! it is pinned to. The runtime moves a thread to core i through a cgroup that stays frozen,
//! then onto core i's CPU, then into core i's cgroup, so that at no point it can run on a CPU
//! or in a window that is not core i's. The module opened the cgroup files before hiding
//! cgroupfs from the partition; the kernel checks a migration against the opener's rights.

use partita_abi::ENV_THREAD_PLACEMENT;
use std::sync::Mutex;

pub struct Placement {
    /// `cgroup.threads` of the frozen staging cgroup.
    staging: i32,
    /// Per partition core: its `cgroup.threads`, and its v1 cpuset `tasks` (-1: none).
    cores: Vec<(i32, i32)>,
    /// The same for the cgroup on all the partition's CPUs, when its windows are the same on
    /// every core (see `partita_abi::ENV_THREAD_PLACEMENT`).
    shared: Option<(i32, i32)>,
    /// Threads created by the runtime: pthread handle and kernel thread id.
    tids: Mutex<Vec<(libc::pthread_t, i32)>>,
}

impl Placement {
    /// The placement descriptors the module passed, if it gates this partition per core.
    pub fn from_env(core_count: usize) -> Option<Placement> {
        let value = std::env::var(ENV_THREAD_PLACEMENT).ok()?;
        let fds: Vec<i32> = value.split_whitespace().map(|v| v.parse().unwrap_or(-1)).collect();
        let with_shared = fds.len() == 3 + 2 * core_count;
        if !(fds.len() == 1 + 2 * core_count || with_shared) || fds[0] < 0 || fds[1..].chunks(2).any(|c| c[0] < 0) {
            eprintln!("partita-apex: warning: malformed {ENV_THREAD_PLACEMENT}={value:?}; threads stay where they start");
            return None;
        }
        for &fd in fds.iter().filter(|&&fd| fd >= 0) {
            // SAFETY: F_SETFD on a descriptor number; a bad one only fails. Programs this
            // partition may execute must not inherit them.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
        let pairs: Vec<(i32, i32)> = fds[1..].chunks(2).map(|c| (c[0], c[1])).collect();
        let shared = with_shared.then(|| pairs[core_count]);
        Some(Placement { staging: fds[0], cores: pairs[..core_count].to_vec(), shared, tids: Mutex::new(Vec::new()) })
    }

    /// Whether processes without a core preference may run on any of the partition's cores.
    pub fn has_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// Moves thread `tid` onto partition core `core` (host CPU `cpu`).
    pub fn move_to(&self, tid: i32, core: usize, cpu: u32) -> Result<(), i32> {
        let &pair = self.cores.get(core).ok_or(libc::EINVAL)?;
        self.move_into(tid, pair, &[cpu])
    }

    /// Moves thread `tid` into the shared cgroup, free on all the partition's CPUs `cpus`.
    pub fn move_to_shared(&self, tid: i32, cpus: &[u32]) -> Result<(), i32> {
        let pair = self.shared.ok_or(libc::EINVAL)?;
        self.move_into(tid, pair, cpus)
    }

    fn move_into(&self, tid: i32, (threads, tasks): (i32, i32), cpus: &[u32]) -> Result<(), i32> {
        write_tid(self.staging, tid)?;
        if tasks >= 0 {
            write_tid(tasks, tid)?;
        }
        let set = crate::kernel::sys::cpu_set(cpus);
        // SAFETY: sched_setaffinity on a thread id of this process with a valid cpu_set_t.
        if unsafe { libc::sched_setaffinity(tid, size_of::<libc::cpu_set_t>(), &set) } != 0 {
            return Err(crate::kernel::sys::errno());
        }
        write_tid(threads, tid)
    }

    pub fn remember(&self, thread: libc::pthread_t, tid: i32) {
        self.tids.lock().unwrap_or_else(|e| e.into_inner()).push((thread, tid));
    }

    pub fn tid_of(&self, thread: libc::pthread_t) -> Option<i32> {
        self.tids.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(t, _)| *t == thread).map(|&(_, tid)| tid)
    }
}

/// Writes a thread id to a cgroup file (one write, as the kernel wants).
fn write_tid(fd: i32, tid: i32) -> Result<(), i32> {
    let text = tid.to_string();
    // SAFETY: writing a valid buffer of the given length to a descriptor.
    let n = unsafe { libc::write(fd, text.as_ptr().cast(), text.len()) };
    if n == text.len() as isize { Ok(()) } else { Err(crate::kernel::sys::errno()) }
}
