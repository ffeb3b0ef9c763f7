//! Signals that end or stop a partition's process, made safe for the kernel's exit-path hazard
//! ([`super::rt::demote_threads`]): a process killed by a signal makes no `exit_group`, so the
//! scheduling broker never sees its exit. The seccomp filter ([`super::seccomp::SIGNAL_ARG1`],
//! [`super::seccomp::SIGNAL_ARG2`]) hands the broker every signal-sending call whose signal may
//! end or stop a process; here the broker finds the processes the call reaches and moves every
//! thread of those that will not survive it (no handler, not ignored; SIGKILL and SIGSTOP
//! always) to SCHED_OTHER. The broker then lets the call run (SECCOMP_USER_NOTIF_FLAG_CONTINUE):
//! a signal is never refused or changed.
//!
//! The targets are named by ids of the partition's PID namespace; the broker reads the host's
//! /proc, so it maps them: the processes of the caller's namespace are those of its partition
//! cgroup (or, without a v2 tree, of the host) whose `/proc/PID/ns/pid` is the caller's, and the
//! last field of `NStgid` in their status is their id in it. The namespace's init (id 1, the partition program) is skipped: the kernel drops a
//! signal from inside its namespace that it does not catch, SIGKILL and SIGSTOP included.
//! A signal to a process group or to every process (`kill(0 or -PGID or -1, ...)`) demotes every
//! process of the namespace but init that does not catch it (more than the group, never fewer).
//! A task id that names nothing in the partition's own /proc ends nothing: no scan.
//!
//! A process created between the broker's look and the call (a sibling forks meanwhile, and
//! gets the id the call names) is not demoted: the same window as a thread created during an
//! exit_group's demotion, narrowed because the broker serves one request at a time (the new
//! process cannot change a priority through it until this call is answered).
//!
//! Cost: only calls with such a signal come here (the runtime's own STOP/SUSPEND signal and the
//! harmless signals stay in the kernel); `partita bench broker` times one (`signal_brokered`).

use std::fs;
use std::path::PathBuf;
use std::sync::OnceLock;

/// What a signal-sending call reaches, in ids of the caller's PID namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The process of this task id (kill with a positive pid, tkill, rt_sigqueueinfo; tgkill and
    /// rt_tgsigqueueinfo name the process).
    Task(i32),
    /// Every process of the namespace but init, the caller's own included (kill with 0 or a
    /// negative process group: the broker does not tell groups apart).
    Group,
    /// Every process of the namespace but init and the caller (kill with -1).
    AllButCaller,
    /// The process behind this descriptor of the caller (pidfd_send_signal).
    PidFd(i32),
}

/// The signal and target of signal-sending call `nr` with arguments `args`; None for another
/// call or a signal number the kernel refuses (EINVAL, nothing is sent).
pub(crate) fn parse(nr: libc::c_long, args: &[u64; 6]) -> Option<(i32, Target)> {
    let int = |v: u64| v as u32 as i32;
    let (sig, target) = match nr {
        libc::SYS_kill => (
            int(args[1]),
            match int(args[0]) {
                p if p > 0 => Target::Task(p),
                -1 => Target::AllButCaller,
                _ => Target::Group,
            },
        ),
        libc::SYS_tkill | libc::SYS_rt_sigqueueinfo => (int(args[1]), Target::Task(int(args[0]))),
        // The kernel signals thread args[1] only if it belongs to process args[0].
        libc::SYS_tgkill | libc::SYS_rt_tgsigqueueinfo => (int(args[2]), Target::Task(int(args[0]))),
        libc::SYS_pidfd_send_signal => (int(args[1]), Target::PidFd(int(args[0]))),
        _ => return None,
    };
    (1..=64).contains(&sig).then_some((sig, target))
}

/// A process of the caller's namespace: its host id and its id in the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Member {
    host: i32,
    ns: i32,
}

/// Before the signal-sending call of host thread `caller` runs: demotes every thread of each
/// process it will end or stop, and records them in `exiting` (the broker refuses their
/// scheduling requests). Returns how many processes were demoted.
pub(crate) fn before_signal(caller: i32, sig: i32, target: Target, exiting: &mut Vec<i32>) -> usize {
    let Ok(status) = fs::read_to_string(format!("/proc/{caller}/status")) else { return 0 };
    let field =
        |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().last()?.parse::<i32>().ok());
    let Some(caller_tgid) = field("Tgid:") else { return 0 };
    // The caller's process and thread ids in its namespace.
    let (own, own_thread) = (field("NStgid:"), field("NSpid:"));
    let targets: Vec<i32> = match target {
        Target::PidFd(fd) => pidfd_target(caller_tgid, fd).into_iter().filter(|&p| in_namespace_but_init(caller, p)).collect(),
        // The common case first, a process signalling itself (raise, abort: tgkill of its own
        // thread): no scan. The namespace's init is spared by the kernel.
        Target::Task(id) if own == Some(id) || own_thread == Some(id) => {
            if own == Some(1) {
                Vec::new()
            } else {
                vec![caller_tgid]
            }
        }
        // No such task in the namespace: the call fails (ESRCH) and ends nothing.
        Target::Task(id) if !may_exist(caller, id) => return 0,
        Target::Task(id) => members(caller).into_iter().filter(|m| m.ns != 1 && task_of(m, id)).map(|m| m.host).take(1).collect(),
        Target::Group => members(caller).into_iter().filter(|m| m.ns != 1).map(|m| m.host).collect(),
        Target::AllButCaller => members(caller).into_iter().filter(|m| m.ns != 1 && m.host != caller_tgid).map(|m| m.host).collect(),
    };
    let mut demoted = 0;
    for p in targets {
        if will_end_or_stop(p, sig) {
            super::sched_broker::demote_for_exit(p, exiting);
            demoted += 1;
        }
    }
    demoted
}

/// Whether process `pid` neither catches nor ignores `sig` (so that it ends or stops the
/// process; the filter sends no signal whose default action is to do nothing). Unreadable
/// status: assumed to end it (a demotion too many is harmless).
pub(crate) fn will_end_or_stop(pid: i32, sig: i32) -> bool {
    if sig == libc::SIGKILL || sig == libc::SIGSTOP {
        return true;
    }
    let bit = 1u64 << (sig - 1);
    let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else { return true };
    let mask =
        |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| u64::from_str_radix(v.trim(), 16).ok()).unwrap_or(0);
    (mask("SigCgt:") | mask("SigIgn:")) & bit == 0
}

/// Whether task `id` may exist in `caller`'s PID namespace: one lookup in the partition's own
/// /proc (mounted for its namespace by the module's child, `spawn_child.rs`; the partition may
/// not mount or unmount), so that a call naming no task (`kill` of every pid, an attack of
/// run_hostile.rs) costs no scan of the host's /proc. Only a clear "no such entry" says no.
fn may_exist(caller: i32, id: i32) -> bool {
    match fs::symlink_metadata(format!("/proc/{caller}/root/proc/{id}")) {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// The last (innermost namespace's) value of field `name` of /proc/PID/status.
fn last_field(pid: i32, name: &str) -> Option<i32> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix(name))?.split_whitespace().last()?.parse().ok()
}

/// The processes of `caller`'s PID namespace (not of namespaces nested in it: none in a
/// partition, which may not create one). The candidates are the processes of the caller's
/// partition cgroup ([`partition_procs`]: a handful), or every process of the host when that
/// cannot be read (about 1 ms for the host's hundred processes here: the broker runs at a
/// priority above every partition, so the cheap way matters); each is checked by its
/// `/proc/PID/ns/pid`.
fn members(caller: i32) -> Vec<Member> {
    let Ok(ns) = fs::read_link(format!("/proc/{caller}/ns/pid")) else { return Vec::new() };
    let candidates = partition_procs(caller).unwrap_or_else(|| {
        fs::read_dir("/proc").map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()).collect()).unwrap_or_default()
    });
    candidates
        .into_iter()
        .filter(|p| fs::read_link(format!("/proc/{p}/ns/pid")).is_ok_and(|l| l == ns))
        .filter_map(|host| Some(Member { host, ns: last_field(host, "NStgid:")? }))
        .collect()
}

/// The processes of the partition cgroup of `caller` (`partita-RUN/PARTITION` below the cgroup
/// v2 mount, with every directory below it: per-core cgroups), or None without a v2 tree or
/// outside a run's cgroup. Every process of a partition's namespace is there: the namespace
/// begins with the partition program, which the module started in that cgroup, and partitions
/// cannot reach the cgroup file system.
fn partition_procs(caller: i32) -> Option<Vec<i32>> {
    static V2_ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    let root = V2_ROOT.get_or_init(|| super::cgroup::CgroupSystem::detect().ok().and_then(|s| s.v2_root)).as_ref()?;
    let text = fs::read_to_string(format!("/proc/{caller}/cgroup")).ok()?;
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mut parts = path.trim_start_matches('/').split('/');
    let (run, partition) = (parts.next()?, parts.next()?);
    if !run.starts_with("partita-") || partition.is_empty() {
        return None;
    }
    let dir = root.join(run).join(partition);
    let mut pids = super::cgroup::read_pids(&dir.join("cgroup.procs")).ok()?;
    // Below: per-core cgroups (threaded ones refuse `cgroup.procs`: their processes are listed
    // by the partition's directory already).
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                pids.extend(super::cgroup::read_pids(&e.path().join("cgroup.procs")).unwrap_or_default());
                stack.push(e.path());
            }
        }
    }
    pids.sort_unstable();
    pids.dedup();
    Some(pids)
}

fn in_namespace_but_init(caller: i32, pid: i32) -> bool {
    members(caller).iter().any(|m| m.host == pid && m.ns != 1)
}

/// Whether task `id` of the namespace is process `m` or one of its threads.
fn task_of(m: &Member, id: i32) -> bool {
    if m.ns == id {
        return true;
    }
    let Ok(tasks) = fs::read_dir(format!("/proc/{}/task", m.host)) else { return false };
    tasks.flatten().filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()).any(|t| {
        fs::read_to_string(format!("/proc/{}/task/{t}/status", m.host))
            .ok()
            .and_then(|s| s.lines().find_map(|l| l.strip_prefix("NSpid:"))?.split_whitespace().last()?.parse::<i32>().ok())
            == Some(id)
    })
}

/// The host id of the process behind pidfd `fd` of process `tgid` (its fdinfo, read through the
/// host's /proc, gives the host's id).
fn pidfd_target(tgid: i32, fd: i32) -> Option<i32> {
    let info = fs::read_to_string(format!("/proc/{tgid}/fdinfo/{fd}")).ok()?;
    let pid: i32 = info.lines().find_map(|l| l.strip_prefix("Pid:"))?.trim().parse().ok()?;
    (pid > 0).then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_names_its_signal_and_target() {
        let a = |x: [i64; 3]| [x[0] as u64, x[1] as u64, x[2] as u64, 0, 0, 0];
        assert_eq!(parse(libc::SYS_kill, &a([7, 9, 0])), Some((9, Target::Task(7))));
        assert_eq!(parse(libc::SYS_kill, &a([0, 9, 0])), Some((9, Target::Group)));
        assert_eq!(parse(libc::SYS_kill, &a([-5, 9, 0])), Some((9, Target::Group)));
        assert_eq!(parse(libc::SYS_kill, &a([-1, 15, 0])), Some((15, Target::AllButCaller)));
        assert_eq!(parse(libc::SYS_tkill, &a([8, 9, 0])), Some((9, Target::Task(8))));
        assert_eq!(parse(libc::SYS_tgkill, &a([7, 8, 6])), Some((6, Target::Task(7))));
        assert_eq!(parse(libc::SYS_rt_sigqueueinfo, &a([7, 10, 0])), Some((10, Target::Task(7))));
        assert_eq!(parse(libc::SYS_rt_tgsigqueueinfo, &a([7, 8, 10])), Some((10, Target::Task(7))));
        assert_eq!(parse(libc::SYS_pidfd_send_signal, &a([3, 9, 0])), Some((9, Target::PidFd(3))));
        // The kernel reads ints: the upper halves do not count.
        assert_eq!(parse(libc::SYS_kill, &[0xffff_ffff_0000_0007, 0xffff_ffff_0000_0009, 0, 0, 0, 0]), Some((9, Target::Task(7))));
        // Invalid numbers send nothing; other calls are not signals.
        assert_eq!(parse(libc::SYS_kill, &a([7, 65, 0])), None);
        assert_eq!(parse(libc::SYS_kill, &a([7, -9, 0])), None);
        assert_eq!(parse(libc::SYS_getpid, &a([7, 9, 0])), None);
    }

    #[test]
    fn caught_and_ignored_signals_do_not_end_a_process() {
        let me = std::process::id() as i32;
        assert!(will_end_or_stop(me, libc::SIGKILL));
        assert!(will_end_or_stop(me, libc::SIGSTOP));
        // SAFETY: setting SIGUSR2 to ignored and SIGHUP to the default, on this test process;
        // neither is sent.
        unsafe {
            libc::signal(libc::SIGUSR2, libc::SIG_IGN);
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
        }
        assert!(!will_end_or_stop(me, libc::SIGUSR2));
        assert!(will_end_or_stop(me, libc::SIGHUP));
    }

    #[test]
    fn the_members_come_from_the_partition_cgroup() {
        if !partita_testkit::require_root() {
            return;
        }
        let sys = super::super::cgroup::CgroupSystem::detect().unwrap();
        if sys.v2_root.is_none() {
            crate::warn_line!("skipping: no cgroup v2 tree (members come from the host's /proc)");
            return;
        }
        let run = super::super::cgroup::RunCgroups::create(&sys).unwrap();
        let pc = run.partition("members", None).unwrap();
        let mut child = std::process::Command::new("sleep").arg("100").spawn().unwrap();
        let pid = child.id() as i32;
        pc.add_pid(pid, false).unwrap();
        let procs = partition_procs(pid);
        // No PID namespace here: the host's processes share the child's, yet only the cgroup's
        // are candidates.
        let ms = members(pid);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(procs, Some(vec![pid]));
        assert_eq!(ms, vec![Member { host: pid, ns: pid }]);
        // The test process is in no run's cgroup: no partition, the host's /proc instead.
        assert_eq!(partition_procs(std::process::id() as i32), None);
    }

    #[test]
    fn a_process_signalling_itself_is_found_without_a_namespace() {
        // The test process is in the host's namespace: its own pid names it, and it is a member.
        let me = std::process::id() as i32;
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let ms = members(tid);
        let m = ms.iter().find(|m| m.host == me).copied().expect("the test process is in its own namespace");
        assert_eq!(m.ns, me);
        assert!(task_of(&m, tid));
        assert!(!task_of(&m, i32::MAX));
    }
}
