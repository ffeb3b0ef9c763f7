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
//! whose [`super::sched_broker`] performs them within the partitions' ceiling.

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

/// Calls brokered by the module ([`super::sched_broker`]).
pub(crate) const BROKERED: &[libc::c_long] = &[libc::SYS_sched_setscheduler, libc::SYS_sched_setparam, libc::SYS_sched_setattr];

/// Calls that fail with EPERM (no SIGSYS, no health-monitor event: programs and libraries
/// that try them, e.g. a daemon detaching itself, can cope with a refusal): leaving the
/// partition's session and process group. The module stops a partition with a SIGSTOP to
/// that group as well as to each of its threads (crate::signal_gate): a process forked after
/// the module read the partition's thread list is reached through its group.
pub(crate) const REFUSED: &[libc::c_long] = &[libc::SYS_setsid, libc::SYS_setpgid];

const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
const SECCOMP_RET_TRAP: u32 = 0x0003_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter { code: code as u16, jt: 0, jf: 0, k }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code: code as u16, jt, jf, k }
}

/// The BPF program (built by the parent: the child between clone and exec does not allocate).
pub(crate) fn filter() -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
    let n = DENIED.len() as u32;
    let b = BROKERED.len() as u32;
    let r = REFUSED.len() as u32;
    let mut f = vec![
        stmt(BPF_LD | BPF_W | BPF_ABS, ARCH),
        // Another architecture's calling convention (numbers differ): refuse outright.
        jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH, 1, 0),
        stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        stmt(BPF_LD | BPF_W | BPF_ABS, NR),
    ];
    // x32 system calls (bit 30) are an alternate entry into the same kernel code.
    let x32 = cfg!(target_arch = "x86_64");
    if x32 {
        f.push(jump(BPF_JMP | BPF_JGE | BPF_K, 0x4000_0000, (n + b + r) as u8 + 3, 0));
    }
    // After the comparisons: ALLOW, ERRNO(EPERM), USER_NOTIF, TRAP.
    for (i, &nr) in DENIED.iter().enumerate() {
        // Jump over the remaining comparisons, the ALLOW, the ERRNO and the USER_NOTIF to the TRAP.
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr as u32, (n + b + r - i as u32 + 2) as u8, 0));
    }
    for (i, &nr) in BROKERED.iter().enumerate() {
        // Jump over the remaining comparisons, the ALLOW and the ERRNO to the USER_NOTIF.
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr as u32, (b + r - i as u32 + 1) as u8, 0));
    }
    for (i, &nr) in REFUSED.iter().enumerate() {
        // Jump over the remaining comparisons and the ALLOW to the ERRNO.
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr as u32, (r - i as u32) as u8, 0));
    }
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::EPERM as u32));
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
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
mod tests {
    use super::*;

    #[test]
    fn every_denied_call_jumps_to_the_trap() {
        let f = filter();
        assert!(f.len() < 255, "jump offsets are 8-bit");
        let trap = f.len() - 1;
        assert_eq!(f[trap].k, SECCOMP_RET_TRAP);
        assert_eq!(f[trap - 1].k, SECCOMP_RET_USER_NOTIF);
        assert_eq!(f[trap - 2].k, SECCOMP_RET_ERRNO | libc::EPERM as u32);
        assert_eq!(f[trap - 3].k, SECCOMP_RET_ALLOW);
        let first =
            f.iter().position(|i| i.k == DENIED[0] as u32 && i.code == (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16).unwrap();
        for (i, &nr) in DENIED.iter().enumerate() {
            let at = first + i;
            assert_eq!(f[at].k, nr as u32);
            assert_eq!(at + 1 + f[at].jt as usize, trap, "{nr}");
        }
        let first = first + DENIED.len();
        for (i, &nr) in BROKERED.iter().enumerate() {
            let at = first + i;
            assert_eq!(f[at].k, nr as u32);
            assert_eq!(at + 1 + f[at].jt as usize, trap - 1, "scheduling call {nr} goes to the module");
        }
        let first = first + BROKERED.len();
        for (i, &nr) in REFUSED.iter().enumerate() {
            let at = first + i;
            assert_eq!(f[at].k, nr as u32);
            assert_eq!(at + 1 + f[at].jt as usize, trap - 2, "call {nr} fails with EPERM");
        }
        // Everything else is allowed: the fall-through of the last comparison.
        assert_eq!(first + REFUSED.len(), trap - 3);
        #[cfg(target_arch = "x86_64")]
        {
            let x32 = f.iter().position(|i| i.code == (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16).unwrap();
            assert_eq!(x32 + 1 + f[x32].jt as usize, trap, "x32 calls trap");
        }
    }
}
