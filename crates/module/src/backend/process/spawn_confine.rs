//! The child side of [`super::confine`]: the partition's file view (built in its new mount
//! namespace) and its identity and limits (the last steps before it waits for release). Raw
//! system calls only, on data the parent prepared: the child of `clone` may not allocate, and
//! glibc's set*id wrappers would try to synchronise the parent's other threads, which do not
//! exist here.

use super::confine::{ChildConfine, MountPoint};
use super::spawn_child::{ChildCtx, Stage, fail};
use super::sys;
use std::ffi::CStr;
use std::ptr;

// Mount API system calls and flags (asm-generic numbers: the same on x86_64 and aarch64).
const SYS_OPEN_TREE: libc::c_long = 428;
const SYS_MOVE_MOUNT: libc::c_long = 429;
const SYS_MOUNT_SETATTR: libc::c_long = 442;
const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;

/// `struct mount_attr` (version 0).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// The device nodes a partition gets: the harmless character devices of the host, no tty,
/// no disk, no memory.
const DEV_NODES: [&CStr; 5] = [c"/dev/null", c"/dev/zero", c"/dev/full", c"/dev/random", c"/dev/urandom"];

/// Builds the partition's file view, after `/` became a slave mount and before `/proc` and
/// the cgroup/sysfs confinement (`spawn_child::confine`) are mounted:
/// - detached copies of the `<pt:Mount>` sources, while they are still the host's paths;
/// - every mount of the host's tree read-only (recursive `mount_setattr`);
/// - `/dev`: a fresh read-only tmpfs with only [`DEV_NODES`] (bind mounts of the host's
///   nodes, cloned with `open_tree` before the tmpfs hides them), the `fd`/`std*` links and
///   an empty `/dev/shm` for the private tmpfs mounted next.
///
/// # Safety
/// Child of `clone`, before `execve`.
pub(crate) unsafe fn read_only_view(ctx: &ChildCtx, c: &ChildConfine) {
    // SAFETY (whole block): raw system calls on static C strings and stack data.
    unsafe {
        for b in &c.binds {
            let flags = OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint;
            let r = libc::syscall(SYS_OPEN_TREE, libc::AT_FDCWD, b.source.as_ptr(), flags);
            if r < 0 {
                fail(ctx, Stage::Bind, sys::errno());
            }
            b.tree.set(r as i32);
            let set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | if b.writable { 0 } else { MOUNT_ATTR_RDONLY };
            let attr = MountAttr { attr_set: set, attr_clr: 0, propagation: 0, userns_fd: 0 };
            let size = std::mem::size_of::<MountAttr>();
            if libc::syscall(
                SYS_MOUNT_SETATTR,
                r as i32,
                c"".as_ptr(),
                libc::AT_EMPTY_PATH as libc::c_uint,
                &attr as *const MountAttr,
                size,
            ) != 0
            {
                fail(ctx, Stage::Bind, sys::errno());
            }
        }
        let mut nodes = [-1; DEV_NODES.len()];
        for (fd, path) in nodes.iter_mut().zip(DEV_NODES) {
            let flags = OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint;
            let r = libc::syscall(SYS_OPEN_TREE, libc::AT_FDCWD, path.as_ptr(), flags);
            if r < 0 {
                fail(ctx, Stage::Dev, sys::errno());
            }
            *fd = r as i32;
        }
        let ro = MountAttr { attr_set: MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
        let size = std::mem::size_of::<MountAttr>();
        if libc::syscall(SYS_MOUNT_SETATTR, libc::AT_FDCWD, c"/".as_ptr(), AT_RECURSIVE, &ro as *const MountAttr, size) != 0 {
            fail(ctx, Stage::ReadOnly, sys::errno());
        }
        let dev = c"/dev";
        let flags = libc::MS_NOSUID | libc::MS_NOEXEC;
        if libc::mount(c"tmpfs".as_ptr(), dev.as_ptr(), c"tmpfs".as_ptr(), flags, c"mode=0755,size=64k".as_ptr().cast()) != 0 {
            fail(ctx, Stage::Dev, sys::errno());
        }
        for (fd, path) in nodes.into_iter().zip(DEV_NODES) {
            let f = libc::open(path.as_ptr(), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0o666);
            if f < 0 {
                fail(ctx, Stage::Dev, sys::errno());
            }
            libc::close(f);
            if libc::syscall(SYS_MOVE_MOUNT, fd, c"".as_ptr(), libc::AT_FDCWD, path.as_ptr(), MOVE_MOUNT_F_EMPTY_PATH) != 0 {
                fail(ctx, Stage::Dev, sys::errno());
            }
            libc::close(fd);
        }
        for (target, link) in [
            (c"/proc/self/fd", c"/dev/fd"),
            (c"/proc/self/fd/0", c"/dev/stdin"),
            (c"/proc/self/fd/1", c"/dev/stdout"),
            (c"/proc/self/fd/2", c"/dev/stderr"),
        ] {
            if libc::symlink(target.as_ptr(), link.as_ptr()) != 0 {
                fail(ctx, Stage::Dev, sys::errno());
            }
        }
        if libc::mkdir(c"/dev/shm".as_ptr(), 0o1777) != 0 {
            fail(ctx, Stage::Dev, sys::errno());
        }
        let ro = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NOEXEC;
        if libc::mount(ptr::null(), dev.as_ptr(), ptr::null(), ro, ptr::null()) != 0 {
            fail(ctx, Stage::Dev, sys::errno());
        }
    }
}

/// The writable places of the view, mounted over the read-only tree: a private tmpfs on
/// `/tmp`, the partition's data directory (a writable bind of itself), then the configured
/// binds in order (the copies [`read_only_view`] took, read-only unless `Writable`).
///
/// # Safety
/// Child of `clone`, before `execve`, after [`read_only_view`].
pub(crate) unsafe fn writable_places(ctx: &ChildCtx, c: &ChildConfine) {
    // SAFETY (whole block): raw system calls on C strings prepared by the parent.
    unsafe {
        let tmp = c"/tmp";
        let flags = libc::MS_NOSUID | libc::MS_NODEV;
        if libc::mount(c"tmpfs".as_ptr(), tmp.as_ptr(), c"tmpfs".as_ptr(), flags, c"mode=1777".as_ptr().cast()) != 0 {
            fail(ctx, Stage::Tmp, sys::errno());
        }
        if !bind(&c.data_dir, &c.data_dir, true) {
            fail(ctx, Stage::DataDir, sys::errno());
        }
        for b in &c.binds {
            if b.create != MountPoint::Exists {
                make_parents(ctx, &b.target);
            }
            let made = match b.create {
                MountPoint::Exists => 0,
                MountPoint::Dir if libc::mkdir(b.target.as_ptr(), 0o755) != 0 && sys::errno() != libc::EEXIST => -1,
                MountPoint::Dir => 0,
                MountPoint::File => {
                    let f = libc::open(b.target.as_ptr(), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0o644);
                    if f >= 0 { libc::close(f) } else { f }
                }
            };
            let tree = b.tree.get();
            if made != 0
                || libc::syscall(SYS_MOVE_MOUNT, tree, c"".as_ptr(), libc::AT_FDCWD, b.target.as_ptr(), MOVE_MOUNT_F_EMPTY_PATH) != 0
            {
                fail(ctx, Stage::Bind, sys::errno());
            }
            libc::close(tree);
        }
    }
}

/// `mkdir -p` of `path`'s parent directories (in the partition's private `/tmp`), on a stack
/// copy of the path.
///
/// # Safety
/// Child of `clone`.
unsafe fn make_parents(ctx: &ChildCtx, path: &CStr) {
    let bytes = path.to_bytes();
    let mut buf = [0u8; 4096];
    if bytes.len() >= buf.len() {
        fail(ctx, Stage::Bind, libc::ENAMETOOLONG);
    }
    buf[..bytes.len()].copy_from_slice(bytes);
    for i in 1..bytes.len() {
        if buf[i] == b'/' {
            buf[i] = 0;
            // SAFETY: `buf` holds a NUL-terminated prefix of the path.
            if unsafe { libc::mkdir(buf.as_ptr().cast(), 0o755) } != 0 && sys::errno() != libc::EEXIST {
                fail(ctx, Stage::Bind, sys::errno());
            }
            buf[i] = b'/';
        }
    }
}

/// Binds `source` on `target`, then sets its read-only flag (a bind copies the flags of the
/// source's mount, read-only here since the whole tree is). False with errno set on failure.
///
/// # Safety
/// Child of `clone`.
unsafe fn bind(source: &CStr, target: &CStr, writable: bool) -> bool {
    // SAFETY: mount(2) on valid C strings.
    unsafe {
        if libc::mount(source.as_ptr(), target.as_ptr(), ptr::null(), libc::MS_BIND, ptr::null()) != 0 {
            return false;
        }
        let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_NOSUID | libc::MS_NODEV | if writable { 0 } else { libc::MS_RDONLY };
        libc::mount(ptr::null(), target.as_ptr(), ptr::null(), flags, ptr::null()) == 0
    }
}

/// `_LINUX_CAPABILITY_VERSION_3` and its two-word sets.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `CAP_SYS_NICE` from linux/capability.h.
const CAP_SYS_NICE: u32 = 23;

/// Becomes the partition's identity, with its limits, for good: RLIMIT_NOFILE, an empty
/// capability bounding set, no supplementary groups, gid then uid (real, effective, saved:
/// no way back to root), no capability in any set, `no_new_privs` (no set-uid program or file
/// capability can give any back). The parent-death signal, which the kernel clears on a
/// credential change, is set again.
///
/// One exception follows `spawn_child::confine`, the single place that decides it: if that
/// left CAP_SYS_NICE in the bounding set (the runtime's real-time threads), the program keeps
/// exactly that capability through the uid change and `execve`, as an ambient capability.
///
/// # Safety
/// Child of `clone`, after everything that needs root (mounts, real-time priority).
pub(crate) unsafe fn become_partition(ctx: &ChildCtx, c: &ChildConfine) {
    // SAFETY (whole block): raw system calls on stack data.
    unsafe {
        let limit = libc::rlimit { rlim_cur: c.max_open_files, rlim_max: c.max_open_files };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
            fail(ctx, Stage::Limits, sys::errno());
        }
        let nice = libc::prctl(libc::PR_CAPBSET_READ, CAP_SYS_NICE as libc::c_ulong, 0, 0, 0) == 1;
        for cap in 0..=63 {
            if !(nice && cap == CAP_SYS_NICE as libc::c_ulong)
                && libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && sys::errno() != libc::EINVAL
            {
                fail(ctx, Stage::Identity, sys::errno());
            }
        }
        if nice && libc::prctl(libc::PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 {
            fail(ctx, Stage::Identity, sys::errno());
        }
        let (uid, gid) = (c.uid as libc::c_long, c.gid as libc::c_long);
        if libc::syscall(libc::SYS_setgroups, 0 as libc::c_long, ptr::null::<libc::gid_t>()) != 0
            || libc::syscall(libc::SYS_setresgid, gid, gid, gid) != 0
            || libc::syscall(libc::SYS_setresuid, uid, uid, uid) != 0
        {
            fail(ctx, Stage::Identity, sys::errno());
        }
        let header = CapHeader { version: CAPABILITY_VERSION_3, pid: 0 };
        let kept = if nice { 1 << CAP_SYS_NICE } else { 0 };
        let sets =
            [CapData { effective: kept, permitted: kept, inheritable: kept }, CapData { effective: 0, permitted: 0, inheritable: 0 }];
        if libc::syscall(libc::SYS_capset, &header as *const CapHeader, sets.as_ptr()) != 0
            || libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0
            || (nice && libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_RAISE, CAP_SYS_NICE as libc::c_ulong, 0, 0) != 0)
            || libc::prctl(libc::PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_PDEATHSIG, ctx.death_signal as libc::c_ulong, 0, 0, 0) != 0
        {
            fail(ctx, Stage::Identity, sys::errno());
        }
    }
}
