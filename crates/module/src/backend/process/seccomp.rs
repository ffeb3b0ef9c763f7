//! The system calls a partition program may not make, enforced by a seccomp filter installed
//! just before `execve`. A forbidden call does not run: the kernel sends SIGSYS
//! (SECCOMP_RET_TRAP), which the partition runtime reports as ILLEGAL_REQUEST to the health
//! monitor, and the call fails with ENOSYS.
//!
//! The deny list ([`DENIED`], one group per reason): what would let a partition act on the
//! machine or on other partitions beyond its ports and its own memory, and kernel facilities
//! that work outside its windows or are attack surface without a use in a partition; on x86-64
//! also every x32 system call. Everything else is allowed: the runtime needs threads, futexes,
//! real-time scheduling, memory mappings and its fds, and `execve` (the filter is installed
//! before the partition's own program is executed; what survives an exec is in
//! docs/isolation.md). crates/cli/tests/run_hostile.rs makes calls of every group from a partition.
//!
//! Leaving the partition's session or process group (setsid, setpgid) fails with EPERM
//! ([`REFUSED`]): the module stops a partition through its process group too.
//!
//! Scheduling changes (sched_setscheduler, sched_setparam, sched_setattr) do not run in the
//! partition either: partitions hold no capability, so they could not take a real-time
//! priority themselves. The filter hands those calls to the module (SECCOMP_RET_USER_NOTIF),
//! whose [`super::sched_broker`] performs them within the partitions' ceiling. `exit_group`
//! goes to the broker too, which demotes the exiting process's threads before letting it run,
//! and so do the calls that send a signal which may end or stop a process ([`SIGNAL_ARG1`],
//! [`SIGNAL_ARG2`]; the signals that cannot, and the runtime's own STOP/SUSPEND signal, stay
//! in the kernel: [`fast_signals`]).
//!
//! Two calls fail without a trap (SECCOMP_RET_ERRNO; no health monitor event, as C libraries
//! make them in ordinary use): `clone` with a namespace flag (EPERM) and `clone3` (ENOSYS).
//! `unshare` and `setns`, the other ways into a new namespace, are denied above.

/// Denied system call numbers of this architecture, by group (docs/isolation.md, `## Threat
/// model`, names the test of each group).
const DENIED: &[libc::c_long] = &[
    // The machine itself: rebooting, replacing or extending the kernel.
    libc::SYS_reboot,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    // The file system view the module gave it: mounts (the classic and the new mount API, which
    // reaches the same kernel code through descriptors), namespaces, another root.
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    // Files by handle bypass the path walk (and so the mount view: the classic container escape).
    libc::SYS_open_by_handle_at,
    // Host-wide state: swap, the system clock the module's windows rely on, host identity,
    // accounting, quotas, the kernel log, watching or blocking every file access (fanotify).
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_quotactl_fd,
    libc::SYS_syslog,
    libc::SYS_fanotify_init,
    libc::SYS_vhangup,
    // Other processes' memory and descriptors (the PID namespace already hides the module and
    // the other partitions; these would still reach a partition's own children and are attack
    // surface without a use in a partition).
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_process_madvise,
    libc::SYS_pidfd_getfd,
    libc::SYS_kcmp,
    // Kernel facilities that run partition-supplied programs or work outside the partition's
    // time and accounting: eBPF, performance counters (also a side channel on the other
    // partitions), userfaultfd (stalls the kernel on the partition's behalf), io_uring (kernel
    // worker threads doing the partition's I/O outside its cgroup's windows, and a large attack
    // surface), the kernel keyring (shared state outside the partition's memory).
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    // x86-64 only: I/O ports, and loading a shared library by an old path (uselib).
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_uselib,
];

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// Calls brokered by the module ([`super::sched_broker`]): the scheduling calls, which it makes
/// itself within the partitions' ceiling, and `exit_group`, before which it moves every thread
/// of the caller to the normal policy (the exit-path hazard of [`super::rt::demote_threads`])
/// and then lets the call run (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
pub(crate) const BROKERED: &[libc::c_long] =
    &[libc::SYS_sched_setscheduler, libc::SYS_sched_setparam, libc::SYS_sched_setattr, libc::SYS_exit_group];

/// Calls that send a signal, with the signal number in their second argument (`kill`, `tkill`,
/// `rt_sigqueueinfo`, `pidfd_send_signal`) or third (`tgkill`, `rt_tgsigqueueinfo`). A signal
/// that can end or stop a process goes to the broker ([`super::sched_broker`]), which demotes the
/// target's threads unless the target catches or ignores it, then lets the call run: a process
/// killed by a signal makes no `exit_group` the filter could hand over.
pub(crate) const SIGNAL_ARG1: &[libc::c_long] = &[libc::SYS_kill, libc::SYS_tkill, libc::SYS_rt_sigqueueinfo, libc::SYS_pidfd_send_signal];
pub(crate) const SIGNAL_ARG2: &[libc::c_long] = &[libc::SYS_tgkill, libc::SYS_rt_tgsigqueueinfo];

/// Signal numbers sent without the broker: 0 (a check that the target exists), those whose
/// default action is to do nothing or to continue (SIGCHLD, SIGCONT, SIGURG, SIGWINCH), and the
/// partition runtime's STOP/SUSPEND signal, SIGRTMAX-2 (crates/apex `signals.rs`, caught by
/// every process of the runtime: the runtime sends it at every STOP and SUSPEND, so it must
/// cost nothing more). The filter cannot read which signals a process catches (its handlers
/// are not in `struct seccomp_data`): every other signal goes to the broker, which reads them.
pub(crate) fn fast_signals() -> [u32; 6] {
    [(libc::SIGRTMAX() - 2) as u32, 0, libc::SIGCHLD as u32, libc::SIGCONT as u32, libc::SIGURG as u32, libc::SIGWINCH as u32]
}

/// The `clone` flags that create namespaces: a partition may start processes and threads, but
/// not leave its namespaces (a new user namespace would hand it every capability over the
/// mounts, network and IPC objects it creates there). CLONE_NEWTIME (0x80) has no place in
/// `clone`'s flags (that byte is the exit signal there): it exists only for `clone3` and
/// `unshare`, both refused. The kernel reads only the low 32 bits of `clone`'s flags.
pub(crate) const CLONE_NAMESPACES: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

/// Calls that fail with EPERM (no SIGSYS, no health-monitor event: programs and libraries
/// that try them, e.g. a daemon detaching itself, can cope with a refusal): leaving the
/// partition's session and process group. The module stops a partition with a SIGSTOP to
/// that group as well as to each of its threads (crate::signal_gate): a process forked after
/// the module read the partition's thread list is reached through its group.
pub(crate) const REFUSED: &[libc::c_long] = &[libc::SYS_setsid, libc::SYS_setpgid];

const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
const SECCOMP_RET_TRAP: u32 = 0x0003_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
/// Offsets in `struct seccomp_data`: the call number, the architecture, and the low 32 bits
/// of the first, second and third arguments (`clone`'s flags; the signal numbers, an `int`
/// for the kernel, of which only the low half counts).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = if cfg!(target_endian = "little") { 16 } else { 20 };
const ARG1_LOW: u32 = ARG0_LOW + 8;
const ARG2_LOW: u32 = ARG0_LOW + 16;

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter { code: code as u16, jt: 0, jf: 0, k }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code: code as u16, jt, jf, k }
}

/// The BPF program (built by the parent: the child between clone and exec does not allocate).
///
/// Layout: the architecture check, the call number, one comparison per special call (each
/// jumping forward to its verdict in the tail on a match), then the tail:
/// ALLOW (the fall-through), the `clone` flag check, EPERM, ENOSYS, USER_NOTIF, TRAP, and the
/// signal check (load the signal number, ALLOW for a [`fast_signals`] one, else USER_NOTIF).
///
/// - `clone` with a namespace flag ([`CLONE_NAMESPACES`]) fails with EPERM, the kernel's own
///   answer to an unprivileged caller; other `clone`s (fork, threads) run.
/// - `clone3` fails with ENOSYS: its flags lie behind a pointer the filter cannot read, and
///   glibc (pthread_create, fork, posix_spawn) falls back to `clone` on ENOSYS. Neither is an
///   ILLEGAL_REQUEST: C libraries probe clone3 as a matter of course.
pub(crate) fn filter() -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_JA, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W};
    let x32 = cfg!(target_arch = "x86_64");
    let header = 4;
    let comparisons = usize::from(x32) + DENIED.len() + BROKERED.len() + REFUSED.len() + SIGNAL_ARG1.len() + SIGNAL_ARG2.len() + 2;
    let tail = header + comparisons;
    let (allow, clone_check, eperm, enosys, notify, trap) = (tail, tail + 1, tail + 4, tail + 5, tail + 6, tail + 7);
    let (signal_arg2, signal_arg1) = (tail + 8, tail + 10);
    let fast = fast_signals();
    // Forward offset from the instruction at `at` to `target`.
    let to = |at: usize, target: usize| -> u8 { u8::try_from(target - at - 1).expect("jump offsets are 8-bit") };
    let mut f = vec![
        stmt(BPF_LD | BPF_W | BPF_ABS, ARCH),
        // Another architecture's calling convention (numbers differ): refuse outright.
        jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH, 1, 0),
        stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        stmt(BPF_LD | BPF_W | BPF_ABS, NR),
    ];
    // x32 system calls (bit 30) are an alternate entry into the same kernel code.
    if x32 {
        f.push(jump(BPF_JMP | BPF_JGE | BPF_K, 0x4000_0000, to(f.len(), trap), 0));
    }
    for &nr in DENIED {
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr as u32, to(f.len(), trap), 0));
    }
    for &nr in BROKERED {
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr as u32, to(f.len(), notify), 0));
    }
    for &nr in REFUSED {
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr as u32, to(f.len(), eperm), 0));
    }
    for &nr in SIGNAL_ARG1 {
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr as u32, to(f.len(), signal_arg1), 0));
    }
    for &nr in SIGNAL_ARG2 {
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr as u32, to(f.len(), signal_arg2), 0));
    }
    f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, libc::SYS_clone3 as u32, to(f.len(), enosys), 0));
    f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, libc::SYS_clone as u32, to(f.len(), clone_check), 0));
    debug_assert_eq!(f.len(), allow);
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    f.push(stmt(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW));
    f.push(jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_NAMESPACES, to(f.len(), eperm), 0));
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::EPERM as u32));
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
    debug_assert_eq!(f.len(), trap + 1);
    // The signal check: the number, then one comparison per fast signal (to the ALLOW after
    // them), else USER_NOTIF.
    f.push(stmt(BPF_LD | BPF_W | BPF_ABS, ARG2_LOW));
    f.push(stmt(BPF_JMP | BPF_JA, 1));
    debug_assert_eq!(f.len(), signal_arg1);
    f.push(stmt(BPF_LD | BPF_W | BPF_ABS, ARG1_LOW));
    let fast_allow = f.len() + fast.len() + 1;
    for s in fast {
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, s, to(f.len(), fast_allow), 0));
    }
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    f
}

/// Installs `filter` on the calling thread (child side: system calls only) and returns the
/// descriptor of its notification listener (close-on-exec: the program never holds it, or it
/// could answer its own requests). Without CAP_SYS_ADMIN the kernel needs no_new_privs first.
///
/// # Safety
/// `filter` must stay alive during the call.
pub(crate) unsafe fn install(filter: &[libc::sock_filter]) -> Result<i32, i32> {
    let prog = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr() as *mut libc::sock_filter };
    // SAFETY: seccomp(SET_MODE_FILTER, NEW_LISTENER) with a valid sock_fprog pointing to
    // `filter`, alive for the call.
    unsafe {
        let set = |p: &libc::sock_fprog| {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                p as *const libc::sock_fprog,
            )
        };
        let fd = set(&prog);
        if fd >= 0 {
            return Ok(fd as i32);
        }
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        let fd = set(&prog);
        if fd >= 0 { Ok(fd as i32) } else { Err(*libc::__errno_location()) }
    }
}

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;
