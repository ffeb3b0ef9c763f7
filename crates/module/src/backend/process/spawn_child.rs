//! The child side of [`super::spawn`]: `clone3` (or `clone` where seccomp hides `clone3`)
//! and the code the child runs before `execve`. The child either shares the module's memory
//! until `execve` ([`clone_child_on`], from a partition's spawner thread: backend/spawner.rs) or
//! is a copy of a possibly multi-threaded process ([`clone_child`]), so it only makes raw
//! system calls on data prepared by the parent: no allocation, no locks, no write to memory
//! but its own stack (and the C library's `errno`).

use super::sys;
use std::ffi::{CString, c_char};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};

const CLONE_PIDFD: u64 = 0x1000;
const CLONE_VM: u64 = libc::CLONE_VM as u64;
const CLONE_CHILD_CLEARTID: u64 = libc::CLONE_CHILD_CLEARTID as u64;
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
const NAMESPACES: u64 = (libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC) as u64;

/// Where the child is when it reports; the status pipe carries `(stage, errno)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Stage {
    Ready = 0,
    MountRoot,
    MountShm,
    MountProc,
    Confine,
    Affinity,
    Chdir,
    Fds,
    Gate,
    Seccomp,
    Exec,
    Dev,
    ReadOnly,
    Tmp,
    DataDir,
    Bind,
    Limits,
    Identity,
    Session,
}

pub(crate) const STAGES: [&str; 19] = [
    "ready",
    "making / a slave mount in the new mount namespace",
    "mounting a tmpfs on /dev/shm",
    "mounting proc on /proc",
    "hiding cgroupfs, making /sys and /proc/sys read-only, dropping capabilities",
    "setting the CPU affinity",
    "changing to the working directory",
    "setting up file descriptors 0-4 and the port descriptors",
    "waiting for release",
    "installing the system call filter",
    "execve",
    "building the partition's /dev",
    "making the host's file tree read-only",
    "mounting a private tmpfs on /tmp",
    "binding the partition's data directory",
    "a <pt:Mount> bind mount",
    "setting RLIMIT_NOFILE (pt:MaxOpenFiles)",
    "switching to the partition's uid and gid and dropping every privilege",
    "leaving the module's session and process group (setsid)",
];

/// `struct clone_args` (version 2, with `cgroup`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Everything the child needs, prepared by the parent.
pub(crate) struct ChildCtx {
    program: CString,
    _args: Vec<CString>,
    _env: Vec<CString>,
    argv: Vec<*const c_char>,
    envp: Vec<*const c_char>,
    workdir: CString,
    cpus: Option<libc::cpu_set_t>,
    pub(crate) namespaces: bool,
    /// SCHED_FIFO priority the program starts at (None: the normal policy).
    pub(crate) rt_priority: Option<i32>,
    /// Signal the program gets when the module thread that started it dies
    /// (`PR_SET_PDEATHSIG`; see [`super::spawn::SpawnSpec::death_signal`]).
    pub(crate) death_signal: i32,
    /// Sources of fds 0, 1, ...: /dev/null, stdout, stderr, control, doorbell, then the ports.
    fds: Vec<RawFd>,
    /// Descriptors the program keeps at their numbers (`SpawnSpec::inherited`).
    pub(crate) inherited: Vec<RawFd>,
    status: RawFd,
    gate: RawFd,
    /// The system call filter (`seccomp`), installed just before execve.
    seccomp: Vec<libc::sock_filter>,
    /// The partition's identity, file view and limits (None: runs as the module's user and
    /// sees the host's files, as the backend's own tests do).
    pub(crate) confine: Option<super::confine::ChildConfine>,
    /// The program, opened by the module (close-on-exec): a confined partition executes it
    /// through this descriptor, so its directories need not be searchable by the partition's
    /// uid nor visible in its view (-1: by path only).
    pub(crate) program_fd: RawFd,
}

// SAFETY: the raw pointers of a ChildCtx (argv, envp) point into the heap buffers of the
// CStrings it owns, which move with it and are never shared; the spawner thread
// (backend/spawner.rs) takes a context by value and gives it back.
unsafe impl Send for ChildCtx {}

impl ChildCtx {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        program: CString,
        args: Vec<CString>,
        env: Vec<CString>,
        workdir: CString,
        cpus: Option<libc::cpu_set_t>,
        namespaces: bool,
        fds: Vec<RawFd>,
        status: RawFd,
        gate: RawFd,
    ) -> ChildCtx {
        let argv = args.iter().map(|a| a.as_ptr()).chain(std::iter::once(ptr::null())).collect();
        let envp = env.iter().map(|e| e.as_ptr()).chain(std::iter::once(ptr::null())).collect();
        ChildCtx {
            program,
            _args: args,
            _env: env,
            argv,
            envp,
            workdir,
            cpus,
            namespaces,
            rt_priority: None,
            death_signal: libc::SIGKILL,
            fds,
            inherited: Vec::new(),
            status,
            gate,
            seccomp: super::seccomp::filter(),
            confine: None,
            program_fd: -1,
        }
    }
}

/// Starts the child running [`child_main`]. Returns its pid, pidfd, and whether it was
/// created inside the cgroup `cgroup_fd`.
pub(crate) fn clone_child(ctx: &ChildCtx, cgroup_fd: Option<RawFd>) -> io::Result<(i32, OwnedFd, bool)> {
    let flags = CLONE_PIDFD | if ctx.namespaces { NAMESPACES } else { 0 };
    let _mask = BlockSignals::new();
    if let Some(fd) = cgroup_fd {
        match clone3(flags | CLONE_INTO_CGROUP, fd, Some(ctx)) {
            Ok((pid, pidfd)) => return Ok((pid, pidfd, true)),
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => return raw_clone(flags, Some(ctx)).map(|(p, f)| (p, f, false)),
            Err(_) => {} // e.g. a cgroup we may not clone into: move the child in afterwards
        }
    }
    match clone3(flags, -1, Some(ctx)) {
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => raw_clone(flags, Some(ctx)).map(|(p, f)| (p, f, false)),
        r => r.map(|(p, f)| (p, f, false)),
    }
}

/// The stack a child cloned on the module's memory runs on until `execve`, with the word the
/// kernel clears (and wakes) when that child leaves the module's memory
/// (`CLONE_CHILD_CLEARTID`: at its `execve` or its exit).
pub(crate) struct ChildStack {
    /// Base of the mapping: one guard page, then the stack.
    base: *mut libc::c_void,
    len: usize,
    word: Box<AtomicU32>,
}

// SAFETY: the mapping is owned by the ChildStack and only used by the spawner thread that
// holds it and by the child it clones while that thread waits (backend/spawner.rs).
unsafe impl Send for ChildStack {}

/// Room for `child_main` and its mount helpers (a path buffer of PATH_MAX included).
const CHILD_STACK: usize = 256 * 1024;

impl ChildStack {
    pub(crate) fn new() -> io::Result<ChildStack> {
        let page = 4096;
        let len = CHILD_STACK + page;
        // SAFETY: a fresh private anonymous mapping; its first page becomes the guard.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the first page of the mapping just made.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: unmaps the mapping just made, which nothing uses.
            unsafe { libc::munmap(base, len) };
            return Err(e);
        }
        Ok(ChildStack { base, len, word: Box::new(AtomicU32::new(0)) })
    }

    /// Lowest usable address and size (above the guard page).
    fn area(&self) -> (u64, u64) {
        (self.base as u64 + 4096, (self.len - 4096) as u64)
    }

    /// The word the kernel clears when the child leaves the module's memory.
    pub(crate) fn word(&self) -> &AtomicU32 {
        &self.word
    }

    /// Whether a child cloned on this stack may still run on it.
    pub(crate) fn in_use(&self) -> bool {
        self.word.load(Ordering::Acquire) != 0
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: the mapping made by `new`; its owner drops it only once no child runs on it
        // (backend/spawner.rs forgets it otherwise).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// Starts the child running [`child_main`] on the module's memory and on `stack`
/// (`CLONE_VM`): nothing of the module is copied. The caller keeps `ctx` and `stack` untouched
/// until [`ChildStack::in_use`] turns false, and its thread does nothing meanwhile (the child
/// uses its `errno`). Returns its pid, pidfd, and whether it was created inside the cgroup
/// `cgroup_fd`.
pub(crate) fn clone_child_on(ctx: &ChildCtx, cgroup_fd: Option<RawFd>, stack: &ChildStack) -> io::Result<(i32, OwnedFd, bool)> {
    let flags = CLONE_PIDFD | CLONE_VM | CLONE_CHILD_CLEARTID | if ctx.namespaces { NAMESPACES } else { 0 };
    let _mask = BlockSignals::new();
    let r = (|| {
        if let Some(fd) = cgroup_fd {
            match clone3_vm(flags | CLONE_INTO_CGROUP, fd, ctx, stack) {
                Ok((pid, pidfd)) => return Ok((pid, pidfd, true)),
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => return clone_vm_libc(flags, ctx, stack).map(|(p, f)| (p, f, false)),
                Err(_) => {} // e.g. a cgroup we may not clone into: move the child in afterwards
            }
        }
        match clone3_vm(flags, -1, ctx, stack) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => clone_vm_libc(flags, ctx, stack).map(|(p, f)| (p, f, false)),
            r => r.map(|(p, f)| (p, f, false)),
        }
    })();
    if r.is_err() {
        stack.word.store(0, Ordering::Release);
    }
    r
}

/// `clone3` with a stack: the child starts in [`child_entry`] on `stack`. Needs assembly (the
/// child must not return through the parent's frames); other architectures get ENOSYS and use
/// the C library's `clone`.
fn clone3_vm(flags: u64, cgroup: RawFd, ctx: &ChildCtx, stack: &ChildStack) -> io::Result<(i32, OwnedFd)> {
    let mut pidfd: RawFd = -1;
    let (lowest, size) = stack.area();
    stack.word.store(1, Ordering::Release);
    let args = CloneArgs {
        flags,
        pidfd: &mut pidfd as *mut RawFd as u64,
        child_tid: stack.word.as_ptr() as u64,
        exit_signal: libc::SIGCHLD as u64,
        stack: lowest,
        stack_size: size,
        cgroup: if cgroup >= 0 { cgroup as u64 } else { 0 },
        ..Default::default()
    };
    let r = raw_clone3_with_stack(&args, ctx);
    if r < 0 {
        return Err(io::Error::from_raw_os_error(-r as i32));
    }
    // SAFETY: CLONE_PIDFD stored a fresh descriptor that we now own.
    Ok((r as i32, unsafe { OwnedFd::from_raw_fd(pidfd) }))
}

#[cfg(target_arch = "x86_64")]
fn raw_clone3_with_stack(args: &CloneArgs, ctx: &ChildCtx) -> i64 {
    let entry: extern "C" fn(*const ChildCtx) -> ! = child_entry;
    let ret: i64;
    // SAFETY: the clone3 system call. In the parent it returns the pid or -errno in rax and
    // clobbers rcx and r11 only. The child resumes after `syscall` with rax = 0 on the stack
    // the kernel set from `args` (16-byte aligned top), where it calls `entry(ctx)`, which
    // never returns; it shares this memory, so `ctx` is valid there (the caller keeps it).
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "mov rdi, r13",
            "call r12",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") args as *const CloneArgs,
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") entry,
            in("r13") ctx as *const ChildCtx,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

#[cfg(not(target_arch = "x86_64"))]
fn raw_clone3_with_stack(_args: &CloneArgs, _ctx: &ChildCtx) -> i64 {
    -(libc::ENOSYS as i64)
}

/// The C library's `clone` with a stack, where `clone3` is missing (or hidden by a container's
/// filter): no `CLONE_INTO_CGROUP`.
fn clone_vm_libc(flags: u64, ctx: &ChildCtx, stack: &ChildStack) -> io::Result<(i32, OwnedFd)> {
    extern "C" fn entry(arg: *mut libc::c_void) -> libc::c_int {
        child_entry(arg as *const ChildCtx)
    }
    let mut pidfd: RawFd = -1;
    let (lowest, size) = stack.area();
    stack.word.store(1, Ordering::Release);
    // SAFETY: glibc's clone runs `entry(ctx)` on the given stack top in a child sharing this
    // memory; with CLONE_PIDFD the pidfd is stored through the parent_tid argument, and
    // CLONE_CHILD_CLEARTID clears the stack's word (child_tid) when the child leaves.
    let r = unsafe {
        libc::clone(
            entry,
            (lowest + size) as *mut libc::c_void,
            (flags | libc::SIGCHLD as u64) as libc::c_int,
            ctx as *const ChildCtx as *mut libc::c_void,
            &mut pidfd as *mut RawFd,
            ptr::null_mut::<libc::c_void>(),
            stack.word.as_ptr(),
        )
    };
    let pid = sys::cvt(r)?;
    // SAFETY: CLONE_PIDFD stored a fresh descriptor that we now own.
    Ok((pid, unsafe { OwnedFd::from_raw_fd(pidfd) }))
}

/// Where a child cloned on the module's memory begins.
extern "C" fn child_entry(ctx: *const ChildCtx) -> ! {
    // SAFETY: the parent passes a context it keeps alive and unchanged until this child has
    // left its memory (clone_child_on).
    child_main(unsafe { &*ctx })
}

/// Starts a child in new namespaces that exits at once, and reaps it.
pub(crate) fn probe() -> io::Result<()> {
    let flags = CLONE_PIDFD | NAMESPACES;
    let (_, pidfd) = {
        let _mask = BlockSignals::new();
        match clone3(flags, -1, None) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => raw_clone(flags, None)?,
            r => r?,
        }
    };
    sys::waitid_pidfd(std::os::fd::AsFd::as_fd(&pidfd), libc::WEXITED)?;
    Ok(())
}

fn clone3(flags: u64, cgroup: RawFd, ctx: Option<&ChildCtx>) -> io::Result<(i32, OwnedFd)> {
    let mut pidfd: RawFd = -1;
    let args = CloneArgs {
        flags,
        pidfd: &mut pidfd as *mut RawFd as u64,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: if cgroup >= 0 { cgroup as u64 } else { 0 },
        ..Default::default()
    };
    // SAFETY: clone3 without CLONE_VM duplicates the process like fork: the child gets a
    // copy of this stack and memory and returns 0 here; `args` is a valid clone_args.
    let r = unsafe { libc::syscall(libc::SYS_clone3, &args as *const CloneArgs, std::mem::size_of::<CloneArgs>()) };
    finish(r, pidfd, ctx)
}

fn raw_clone(flags: u64, ctx: Option<&ChildCtx>) -> io::Result<(i32, OwnedFd)> {
    let mut pidfd: RawFd = -1;
    // SAFETY: clone without CLONE_VM and with a NULL stack behaves like fork; with
    // CLONE_PIDFD the pidfd is stored through the parent_tid argument (same position on
    // x86_64 and aarch64).
    let r = unsafe { libc::syscall(libc::SYS_clone, flags | libc::SIGCHLD as u64, 0usize, &mut pidfd as *mut RawFd, 0usize, 0usize) };
    finish(r, pidfd, ctx)
}

fn finish(r: libc::c_long, pidfd: RawFd, ctx: Option<&ChildCtx>) -> io::Result<(i32, OwnedFd)> {
    if r == 0 {
        match ctx {
            Some(ctx) => child_main(ctx),
            // SAFETY: _exit is async-signal-safe and ends the probe child immediately.
            None => unsafe { libc::_exit(0) },
        }
    }
    let pid = sys::cvt(r)? as i32;
    // SAFETY: CLONE_PIDFD stored a fresh descriptor that we now own.
    Ok((pid, unsafe { OwnedFd::from_raw_fd(pidfd) }))
}

/// Blocks every signal in the calling thread while it clones (so that no handler of the
/// module runs in the child), restoring the previous mask on drop.
struct BlockSignals(libc::sigset_t);

impl BlockSignals {
    fn new() -> BlockSignals {
        // SAFETY: sigset_t values are plain data, initialised by sigfillset/pthread_sigmask.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            BlockSignals(old)
        }
    }
}

impl Drop for BlockSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `new`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, ptr::null_mut()) };
    }
}

/// Reports `(stage, errno)` on the status pipe and exits.
pub(crate) fn fail(ctx: &ChildCtx, stage: Stage, errno: i32) -> ! {
    report(ctx, stage, errno);
    exit_child(127)
}

/// Ends the child with `exit`, not `exit_group`: once its filter is installed, `exit_group`
/// waits for the module's broker, which serves the listener only after a successful setup
/// (the child, holding the listener itself, would wait for ever). The child has one thread,
/// so `exit` ends it all the same.
fn exit_child(code: i32) -> ! {
    loop {
        // SAFETY: the exit system call of the calling (only) thread; it does not return.
        unsafe { libc::syscall(libc::SYS_exit, code) };
    }
}

fn report(ctx: &ChildCtx, stage: Stage, errno: i32) {
    let mut rec = [0u8; 8];
    rec[..4].copy_from_slice(&(stage as u32).to_ne_bytes());
    rec[4..].copy_from_slice(&errno.to_ne_bytes());
    // SAFETY: writes 8 bytes from a stack buffer to the status pipe (atomic: < PIPE_BUF).
    unsafe { libc::write(ctx.status, rec.as_ptr().cast(), rec.len()) };
}

/// Takes from the partition what would let it escape its windows or reach other partitions
/// even as root: the cgroup trees (thaw itself, freeze others) behind an empty read-only tmpfs,
/// `/sys` and `/proc/sys` (global kernel settings, such as real-time throttling) read-only,
/// and every capability out of the bounding set, so that the program, root or not, cannot undo
/// any of it. Not even CAP_SYS_NICE: with it a partition could take a core at the schedulers'
/// priority; its real-time threads get their priorities from the module's
/// [`super::sched_broker`], within the partitions' ceiling.
///
/// # Safety
/// The most descriptors [`close_all_but_own`] keeps above the program's; with more it closes
/// nothing (they all close at execve anyway).
const KEEP_MAX: usize = 64;

/// In the child, once its program's descriptors are in place: closes every descriptor but the
/// program's (0..n), the inherited ones, the status and gate pipes and the program (the seccomp
/// listener comes after). Raw system calls on a stack array only.
///
/// # Safety
/// Called in the child between `clone` and `execve`, when no other thread uses its descriptor table.
unsafe fn close_all_but_own(ctx: &ChildCtx) {
    let first = ctx.fds.len() as RawFd;
    let mut keep = [0 as RawFd; KEEP_MAX];
    let mut n = 0;
    for fd in ctx.inherited.iter().copied().chain([ctx.status, ctx.gate, ctx.program_fd]) {
        if fd < first {
            continue;
        }
        if n == KEEP_MAX {
            return;
        }
        // Insertion in order.
        let mut k = n;
        while k > 0 && keep[k - 1] > fd {
            keep[k] = keep[k - 1];
            k -= 1;
        }
        keep[k] = fd;
        n += 1;
    }
    let mut next = first as u32;
    for &fd in &keep[..n] {
        let fd = fd as u32;
        if fd > next {
            // SAFETY: closes descriptors of this child only (its table is its own since clone).
            unsafe { libc::syscall(libc::SYS_close_range, next, fd - 1, 0u32) };
        }
        next = next.max(fd + 1);
    }
    // SAFETY: as above. Without close_range (before Linux 5.9) they stay, close-on-exec.
    unsafe { libc::syscall(libc::SYS_close_range, next, u32::MAX, 0u32) };
}

/// Called in the child between `clone` and `execve` (raw system calls only).
unsafe fn confine(ctx: &ChildCtx) {
    // SAFETY: plain mount/prctl system calls on static C strings.
    unsafe {
        let ro = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        let cgroup = c"/sys/fs/cgroup";
        if libc::mount(c"none".as_ptr(), cgroup.as_ptr(), c"tmpfs".as_ptr(), ro, c"size=4k,mode=0555".as_ptr().cast()) != 0
            && sys::errno() != libc::ENOENT
        {
            fail(ctx, Stage::Confine, sys::errno());
        }
        for dir in [c"/sys", c"/proc/sys", c"/proc/sysrq-trigger"] {
            if libc::mount(dir.as_ptr(), dir.as_ptr(), ptr::null(), libc::MS_BIND, ptr::null()) != 0
                || libc::mount(ptr::null(), dir.as_ptr(), ptr::null(), libc::MS_BIND | libc::MS_REMOUNT | ro, ptr::null()) != 0
            {
                let e = sys::errno();
                if e != libc::ENOENT {
                    fail(ctx, Stage::Confine, e);
                }
            }
        }
        for cap in 0..=63 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && sys::errno() != libc::EINVAL {
                fail(ctx, Stage::Confine, sys::errno());
            }
        }
    }
}

/// The child, between `clone` and `execve`. Only raw system calls on prepared data.
fn child_main(ctx: &ChildCtx) -> ! {
    // SAFETY (whole block): each call is a plain system call wrapper on descriptors, C
    // strings and structures prepared by the parent before clone; nothing allocates.
    unsafe {
        // If the module dies (even by SIGKILL), the partition stops with it: no partition may
        // run on without its scheduler. SIGSTOP when a guardian process kills it afterwards
        // at the normal policy (SIGKILL at a real-time priority can hold a CPU for ever in
        // the kernel's exit path, see rt::demote_threads), SIGKILL without one. Sent from the
        // parent's namespace, so it reaches the PID 1 of the partition's namespace too.
        libc::prctl(libc::PR_SET_PDEATHSIG, ctx.death_signal as libc::c_ulong, 0, 0, 0);
        // Its own session and process group: `kill(0, sig)` signals the caller's process group
        // with no PID namespace check, so a partition left in the module's group would reach
        // the module and whatever started it (run_hostile.rs' `kill_group`).
        if libc::setsid() < 0 {
            fail(ctx, Stage::Session, sys::errno());
        }
        for sig in 1..65 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        if ctx.namespaces {
            if libc::mount(ptr::null(), c"/".as_ptr(), ptr::null(), libc::MS_REC | libc::MS_SLAVE, ptr::null()) != 0 {
                fail(ctx, Stage::MountRoot, sys::errno());
            }
            if let Some(c) = &ctx.confine {
                super::spawn_confine::read_only_view(ctx, c);
            }
            let (tmpfs, shm, mode) = (c"tmpfs", c"/dev/shm", c"mode=1777");
            if libc::mount(tmpfs.as_ptr(), shm.as_ptr(), tmpfs.as_ptr(), libc::MS_NOSUID | libc::MS_NODEV, mode.as_ptr().cast()) != 0
                && sys::errno() != libc::ENOENT
            {
                fail(ctx, Stage::MountShm, sys::errno());
            }
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if libc::mount(c"proc".as_ptr(), c"/proc".as_ptr(), c"proc".as_ptr(), flags, ptr::null()) != 0 {
                fail(ctx, Stage::MountProc, sys::errno());
            }
            confine(ctx);
            if let Some(c) = &ctx.confine {
                super::spawn_confine::writable_places(ctx, c);
            }
        }
        if let Some(set) = &ctx.cpus
            && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0
        {
            fail(ctx, Stage::Affinity, sys::errno());
        }
        // The program's first instruction already runs at its real-time priority, so that a
        // busy real-time partition sharing the core cannot starve its initialization. Refused
        // (no privilege): it starts at the normal policy, as the capability probe reported.
        if let Some(prio) = ctx.rt_priority {
            let param = libc::sched_param { sched_priority: prio };
            libc::sched_setscheduler(0, libc::SCHED_FIFO, &param);
        }
        if libc::chdir(ctx.workdir.as_ptr()) != 0 {
            fail(ctx, Stage::Chdir, sys::errno());
        }
        for (target, &source) in ctx.fds.iter().enumerate() {
            if libc::dup2(source, target as RawFd) < 0 {
                fail(ctx, Stage::Fds, sys::errno());
            }
        }
        // Everything above them closes at execve (the status and gate pipes stay usable until then).
        let first_closed = ctx.fds.len() as u32;
        if libc::syscall(libc::SYS_close_range, first_closed, u32::MAX, CLOSE_RANGE_CLOEXEC) != 0 {
            for fd in first_closed as RawFd..4096 {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        for &fd in &ctx.inherited {
            if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                fail(ctx, Stage::Fds, sys::errno());
            }
        }
        if let Some(c) = &ctx.confine {
            super::spawn_confine::become_partition(ctx, c);
        }
        // The child is about to wait for its first window, which may be a major frame away:
        // it keeps only what it still needs, not copies of the module's other descriptors
        // (they would keep other partitions' pipes open meanwhile: lifecycle.rs, `close_output`).
        close_all_but_own(ctx);
        // The filter goes in before the gate (nothing the child does from here on is filtered
        // out) so that the module can take its listener (close-on-exec: the program never
        // holds it) with pidfd_getfd while the child waits; "ready" carries its number.
        let listener = match super::seccomp::install(&ctx.seccomp) {
            Ok(fd) => fd,
            Err(errno) => fail(ctx, Stage::Seccomp, errno),
        };
        report(ctx, Stage::Ready, listener);
        let mut b = 0u8;
        loop {
            match libc::read(ctx.gate, (&mut b as *mut u8).cast(), 1) {
                1 => break,
                0 => exit_child(0), // the module went away before releasing us
                _ if sys::errno() == libc::EINTR => continue,
                _ => fail(ctx, Stage::Gate, sys::errno()),
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, ptr::null_mut());
        if ctx.program_fd >= 0 {
            let (fd, empty) = (ctx.program_fd, c"".as_ptr());
            libc::syscall(libc::SYS_execveat, fd, empty, ctx.argv.as_ptr(), ctx.envp.as_ptr(), libc::AT_EMPTY_PATH);
            // ENOENT: a script, whose interpreter cannot open a close-on-exec descriptor; by path then.
            if sys::errno() != libc::ENOENT {
                fail(ctx, Stage::Exec, sys::errno());
            }
        }
        libc::execve(ctx.program.as_ptr(), ctx.argv.as_ptr(), ctx.envp.as_ptr());
        fail(ctx, Stage::Exec, sys::errno())
    }
}
