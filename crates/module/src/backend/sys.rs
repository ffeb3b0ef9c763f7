//! Thin wrappers over the few system calls the backend makes that neither std nor libc wrap
//! conveniently. Nothing here allocates, so the spawn path may call them after `clone`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// A negative system call result -> the thread's errno (for `c_int` and `c_long` results alike).
pub(crate) fn cvt<T: Copy + PartialOrd + Default>(r: T) -> io::Result<T> {
    if r < T::default() { Err(io::Error::last_os_error()) } else { Ok(r) }
}

/// Like [`cvt`], retrying on EINTR.
pub(crate) fn retry(mut f: impl FnMut() -> libc::c_long) -> io::Result<libc::c_long> {
    loop {
        match cvt(f()) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            r => return r,
        }
    }
}

pub(crate) fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A pipe whose both ends are close-on-exec.
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } as libc::c_long)?;
    // SAFETY: pipe2 succeeded, so both are fresh descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A close-on-exec duplicate of `fd` numbered at least `min`.
pub(crate) fn dup_at_least(fd: BorrowedFd<'_>, min: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC on a borrowed, open descriptor; the result is a new descriptor.
    let r = cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) } as libc::c_long)?;
    // SAFETY: fcntl returned a fresh descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// `pidfd_send_signal(pidfd, sig, NULL, 0)`.
pub(crate) fn pidfd_send_signal(pidfd: BorrowedFd<'_>, sig: i32) -> io::Result<()> {
    // SAFETY: a valid pidfd, a signal number and a NULL siginfo, as the call allows.
    cvt(unsafe { libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), sig, std::ptr::null::<libc::siginfo_t>(), 0) })?;
    Ok(())
}

/// `pidfd_getfd(pidfd, fd, 0)`: a close-on-exec copy of descriptor `fd` of the process
/// behind `pidfd` (needs ptrace access to it).
pub(crate) fn pidfd_getfd(pidfd: BorrowedFd<'_>, fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: a valid pidfd, a descriptor number and no flags, as the call expects.
    let r = cvt(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) })?;
    // SAFETY: the call returned a fresh descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// Waits (blocking unless `WNOHANG` is in `options`) on the child behind `pidfd`.
/// Returns `None` when `WNOHANG` found nothing to report.
pub(crate) fn waitid_pidfd(pidfd: BorrowedFd<'_>, options: i32) -> io::Result<Option<libc::siginfo_t>> {
    // SAFETY: zeroed siginfo_t is valid; waitid fills it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: P_PIDFD with a valid descriptor and a valid siginfo pointer.
    retry(|| unsafe { libc::waitid(libc::P_PIDFD, pidfd.as_raw_fd() as libc::id_t, &mut info, options) } as libc::c_long)?;
    // SAFETY: reading si_pid of a siginfo filled by waitid (0 when WNOHANG found nothing).
    if unsafe { info.si_pid() } == 0 { Ok(None) } else { Ok(Some(info)) }
}

/// `poll` on one descriptor; true if any of `events` (or an error condition) is reported.
pub(crate) fn poll_one(fd: BorrowedFd<'_>, events: i16, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd { fd: fd.as_raw_fd(), events, revents: 0 };
    // SAFETY: one valid pollfd.
    let n = retry(|| unsafe { libc::poll(&mut p, 1, timeout_ms) } as libc::c_long)?;
    Ok(n > 0)
}

/// Whether a process with this pid exists (in our PID namespace).
pub(crate) fn pid_alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || errno() == libc::EPERM
}
