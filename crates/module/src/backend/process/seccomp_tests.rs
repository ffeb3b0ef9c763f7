//! The filter, run: a small classic-BPF interpreter (the instructions seccomp accepts that the
//! filter uses; anything else fails the test) evaluates [`filter`] for a call number and its
//! arguments, so that each rule is checked by its verdict rather than by the program's layout.

use super::*;

/// `struct seccomp_data`: nr, arch, instruction pointer, six arguments (native byte order).
const DATA_LEN: usize = 64;

fn data(arch: u32, nr: libc::c_long, args: [u64; 6]) -> [u8; DATA_LEN] {
    let mut d = [0u8; DATA_LEN];
    d[0..4].copy_from_slice(&(nr as i32).to_ne_bytes());
    d[4..8].copy_from_slice(&arch.to_ne_bytes());
    d[8..16].copy_from_slice(&0x40_1000u64.to_ne_bytes());
    for (i, a) in args.iter().enumerate() {
        d[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_ne_bytes());
    }
    d
}

/// Runs `prog` on `d` as the kernel would and returns its verdict. Panics on an instruction
/// outside the subset, an unaligned or out-of-range load, a backward or out-of-range jump, or
/// a path that runs off the end.
fn run(prog: &[libc::sock_filter], d: &[u8; DATA_LEN]) -> u32 {
    use libc::{BPF_ABS, BPF_JA, BPF_JEQ, BPF_JGE, BPF_JGT, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W};
    assert!(!prog.is_empty() && prog.len() <= 4096, "seccomp accepts 1..=4096 instructions");
    let mut acc: u32 = 0;
    let mut pc = 0usize;
    loop {
        let i = prog.get(pc).unwrap_or_else(|| panic!("ran off the end at {pc}"));
        let code = u32::from(i.code);
        let next = pc + 1;
        pc = match code {
            c if c == BPF_LD | BPF_W | BPF_ABS => {
                let k = i.k as usize;
                assert!(k.is_multiple_of(4) && k + 4 <= DATA_LEN, "load at {k}");
                acc = u32::from_ne_bytes(d[k..k + 4].try_into().unwrap());
                next
            }
            c if c == BPF_RET | BPF_K => return i.k,
            c if c == BPF_JMP | BPF_JA => next + i.k as usize,
            c if c & 0x07 == BPF_JMP && c & 0x08 == BPF_K => {
                let taken = match c & 0xf0 {
                    op if op == BPF_JEQ => acc == i.k,
                    op if op == BPF_JGT => acc > i.k,
                    op if op == BPF_JGE => acc >= i.k,
                    op if op == BPF_JSET => acc & i.k != 0,
                    op => panic!("jump operation {op:#x} at {pc}"),
                };
                next + usize::from(if taken { i.jt } else { i.jf })
            }
            c => panic!("instruction {c:#x} at {pc} is outside the interpreted subset"),
        };
    }
}

fn verdict(nr: libc::c_long, args: [u64; 6]) -> u32 {
    run(&filter(), &data(AUDIT_ARCH, nr, args))
}

const ERRNO_EPERM: u32 = SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ERRNO_ENOSYS: u32 = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

#[test]
fn every_denied_call_traps() {
    for &nr in DENIED {
        assert_eq!(verdict(nr, [0; 6]), SECCOMP_RET_TRAP, "call {nr}");
        // Whatever its arguments.
        assert_eq!(verdict(nr, [u64::MAX; 6]), SECCOMP_RET_TRAP, "call {nr}");
    }
    for name in ["mount", "unshare", "setns", "pivot_root", "open_tree", "fsopen", "move_mount"] {
        let nr = match name {
            "mount" => libc::SYS_mount,
            "unshare" => libc::SYS_unshare,
            "setns" => libc::SYS_setns,
            "pivot_root" => libc::SYS_pivot_root,
            "open_tree" => libc::SYS_open_tree,
            "fsopen" => libc::SYS_fsopen,
            _ => libc::SYS_move_mount,
        };
        assert_eq!(verdict(nr, [0; 6]), SECCOMP_RET_TRAP, "{name}: namespaces and mounts stay the module's");
    }
}

#[test]
fn scheduling_calls_and_exit_group_go_to_the_broker() {
    for &nr in BROKERED {
        assert_eq!(verdict(nr, [0; 6]), SECCOMP_RET_USER_NOTIF, "call {nr}");
    }
    for nr in [libc::SYS_sched_setscheduler, libc::SYS_sched_setparam, libc::SYS_sched_setattr, libc::SYS_exit_group] {
        assert_eq!(verdict(nr, [1, 2, 3, 0, 0, 0]), SECCOMP_RET_USER_NOTIF, "call {nr}");
    }
    // A thread's own exit is not brokered (it is not the group exit of the hazard).
    assert_eq!(verdict(libc::SYS_exit, [0; 6]), SECCOMP_RET_ALLOW);
}

#[test]
fn signals_that_may_end_or_stop_a_process_go_to_the_broker() {
    let stop = (libc::SIGRTMAX() - 2) as u64;
    // (call, index of the signal number among its arguments)
    let calls = [
        (libc::SYS_kill, 1),
        (libc::SYS_tkill, 1),
        (libc::SYS_rt_sigqueueinfo, 1),
        (libc::SYS_pidfd_send_signal, 1),
        (libc::SYS_tgkill, 2),
        (libc::SYS_rt_tgsigqueueinfo, 2),
    ];
    for (nr, at) in calls {
        let with = |sig: u64| {
            let mut args = [1, 1, 1, 0, 0, 0];
            args[at] = sig;
            verdict(nr, args)
        };
        for sig in
            [libc::SIGKILL, libc::SIGSTOP, libc::SIGTERM, libc::SIGABRT, libc::SIGSEGV, libc::SIGUSR1, libc::SIGTSTP, libc::SIGRTMIN()]
        {
            assert_eq!(with(sig as u64), SECCOMP_RET_USER_NOTIF, "call {nr} signal {sig}");
        }
        // Whatever the upper half of the register holds (the kernel reads an int).
        assert_eq!(with(0xffff_ffff_0000_0000 | libc::SIGKILL as u64), SECCOMP_RET_USER_NOTIF, "call {nr}");
        // The runtime's own STOP/SUSPEND signal, the existence check and the harmless ones stay fast.
        for sig in [0, stop, libc::SIGCHLD as u64, libc::SIGCONT as u64, libc::SIGURG as u64, libc::SIGWINCH as u64] {
            assert_eq!(with(sig), SECCOMP_RET_ALLOW, "call {nr} signal {sig}");
        }
        // Only the signal argument counts: a SIGKILL in another one is a pid or an address.
        let mut args = [libc::SIGKILL as u64; 6];
        args[at] = stop;
        assert_eq!(verdict(nr, args), SECCOMP_RET_ALLOW, "call {nr}");
    }
}

#[test]
fn clone_with_a_namespace_flag_fails_with_eperm() {
    let flags = [
        ("CLONE_NEWNS", libc::CLONE_NEWNS),
        ("CLONE_NEWCGROUP", libc::CLONE_NEWCGROUP),
        ("CLONE_NEWUTS", libc::CLONE_NEWUTS),
        ("CLONE_NEWIPC", libc::CLONE_NEWIPC),
        ("CLONE_NEWUSER", libc::CLONE_NEWUSER),
        ("CLONE_NEWPID", libc::CLONE_NEWPID),
        ("CLONE_NEWNET", libc::CLONE_NEWNET),
    ];
    let fork = libc::SIGCHLD as u64;
    for (name, flag) in flags {
        let flag = flag as u32 as u64;
        assert_eq!(verdict(libc::SYS_clone, [flag, 0, 0, 0, 0, 0]), ERRNO_EPERM, "{name}");
        assert_eq!(verdict(libc::SYS_clone, [flag | fork, 0, 0, 0, 0, 0]), ERRNO_EPERM, "{name} with a fork");
        // Bits the kernel ignores (the upper half of the register) change nothing.
        assert_eq!(verdict(libc::SYS_clone, [flag | 0xffff_ffff_0000_0000, 0, 0, 0, 0, 0]), ERRNO_EPERM, "{name}");
        // Only the flags argument counts: the same bits in the others are addresses.
        assert_eq!(verdict(libc::SYS_clone, [fork, flag, flag, flag, flag, flag]), SECCOMP_RET_ALLOW, "{name} elsewhere");
    }
    let all = CLONE_NAMESPACES as u64;
    assert_eq!(verdict(libc::SYS_clone, [all | fork, 0, 0, 0, 0, 0]), ERRNO_EPERM);
}

#[test]
fn leaving_the_session_or_process_group_fails_with_eperm() {
    for &nr in REFUSED {
        assert_eq!(verdict(nr, [0; 6]), ERRNO_EPERM, "call {nr}");
    }
    assert_eq!(verdict(libc::SYS_setsid, [0; 6]), ERRNO_EPERM);
    assert_eq!(verdict(libc::SYS_setpgid, [0, 0, 0, 0, 0, 0]), ERRNO_EPERM);
    // Reading them stays allowed.
    assert_eq!(verdict(libc::SYS_getpgid, [0; 6]), SECCOMP_RET_ALLOW);
    assert_eq!(verdict(libc::SYS_getsid, [0; 6]), SECCOMP_RET_ALLOW);
}

#[test]
fn processes_and_threads_are_still_created() {
    let fork = libc::SIGCHLD as u64;
    // glibc's fork, vfork-style posix_spawn and pthread_create flags.
    let fork_flags = fork | (libc::CLONE_CHILD_SETTID | libc::CLONE_CHILD_CLEARTID) as u64;
    let spawn_flags = fork | (libc::CLONE_VM | libc::CLONE_VFORK) as u64;
    let thread_flags = (libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_THREAD
        | libc::CLONE_SYSVSEM
        | libc::CLONE_SETTLS
        | libc::CLONE_PARENT_SETTID
        | libc::CLONE_CHILD_CLEARTID) as u64;
    for flags in [0, fork, fork_flags, spawn_flags, thread_flags, thread_flags | 0xffff_ffff_0000_0000] {
        assert_eq!(verdict(libc::SYS_clone, [flags, 0x7000_0000, 0, 0, 0, 0]), SECCOMP_RET_ALLOW, "flags {flags:#x}");
    }
    // clone3: ENOSYS whatever its arguments (glibc then uses clone).
    assert_eq!(verdict(libc::SYS_clone3, [0; 6]), ERRNO_ENOSYS);
    assert_eq!(verdict(libc::SYS_clone3, [0x7000_0000, 88, 0, 0, 0, 0]), ERRNO_ENOSYS);
    #[cfg(target_arch = "x86_64")]
    for nr in [libc::SYS_fork, libc::SYS_vfork] {
        assert_eq!(verdict(nr, [0; 6]), SECCOMP_RET_ALLOW, "call {nr}");
    }
}

#[test]
fn everything_else_is_allowed() {
    let special: Vec<libc::c_long> = DENIED
        .iter()
        .chain(BROKERED)
        .chain(REFUSED)
        .chain(SIGNAL_ARG1)
        .chain(SIGNAL_ARG2)
        .copied()
        .chain([libc::SYS_clone, libc::SYS_clone3])
        .collect();
    let mut allowed = 0;
    for nr in 0..512 {
        if !special.contains(&nr) {
            assert_eq!(verdict(nr, [u64::MAX; 6]), SECCOMP_RET_ALLOW, "call {nr}");
            allowed += 1;
        }
    }
    assert!(allowed > 300);
    for nr in [libc::SYS_read, libc::SYS_write, libc::SYS_futex, libc::SYS_mmap, libc::SYS_execve, libc::SYS_exit] {
        assert_eq!(verdict(nr, [0; 6]), SECCOMP_RET_ALLOW, "call {nr}");
    }
}

#[test]
fn other_conventions_are_refused() {
    // Another architecture's numbers: the process is killed, whatever the call.
    for nr in [libc::SYS_read, libc::SYS_clone, libc::SYS_exit_group] {
        assert_eq!(run(&filter(), &data(0x4000_0003 /* AUDIT_ARCH_I386 */, nr, [0; 6])), SECCOMP_RET_KILL_PROCESS);
    }
    // x32 calls (bit 30) trap, even those allowed in the native numbering.
    #[cfg(target_arch = "x86_64")]
    for nr in [libc::SYS_read, libc::SYS_clone, libc::SYS_clone3, libc::SYS_exit_group] {
        assert_eq!(verdict(nr | 0x4000_0000, [0; 6]), SECCOMP_RET_TRAP, "x32 call {nr}");
    }
}

#[test]
fn the_interpreter_rejects_what_it_does_not_know() {
    // A load past struct seccomp_data, and an instruction outside the subset (BPF_LDX).
    let past = [stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 64), stmt(libc::BPF_RET | libc::BPF_K, 0)];
    assert!(std::panic::catch_unwind(|| run(&past, &data(AUDIT_ARCH, 0, [0; 6]))).is_err());
    let ldx = [stmt(libc::BPF_LDX | libc::BPF_W | libc::BPF_ABS, 0), stmt(libc::BPF_RET | libc::BPF_K, 0)];
    assert!(std::panic::catch_unwind(|| run(&ldx, &data(AUDIT_ARCH, 0, [0; 6]))).is_err());
    let off_end = [jump(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, 0, 5, 0), stmt(libc::BPF_RET | libc::BPF_K, 0)];
    assert!(std::panic::catch_unwind(|| run(&off_end, &data(AUDIT_ARCH, 0, [0; 6]))).is_err());
}
