//! The system calls of the signal gate (gate/signal.rs): signals to a process group and to
//! single threads, the cgroup's id lists read without allocating per id, and whether a thread
//! is stopped. docs/scheduling.md (`### Signal gate`) explains why each is needed and what it
//! costs.

use super::sys;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Sends `sig` to every process of group `pgid` (a group that is gone is not an error).
pub fn kill_group(pgid: i32, sig: i32) -> io::Result<()> {
    if pgid <= 0 {
        return Ok(());
    }
    // SAFETY: kill(2) with a negative pid (a process group) and a valid signal.
    match sys::cvt(unsafe { libc::kill(-pgid, sig) } as libc::c_long) {
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        r => r.map(drop),
    }
}

/// Sends `sig` to thread `tid` alone (`tkill`); false if it is gone.
pub fn signal_thread(tid: i32, sig: i32) -> bool {
    // SAFETY: tkill with a thread id and a valid signal; a vanished id gives ESRCH.
    unsafe { libc::syscall(libc::SYS_tkill, tid, sig) == 0 }
}

/// Whether child `pid` of this process is stopped as a whole (every thread of it has entered
/// the group stop, and no SIGCONT came since): `waitid(WSTOPPED | WNOHANG | WNOWAIT)`, which
/// reads the kernel's group-stop flag without consuming the report. None: not a child of this
/// process (or gone). About 1 us, against ~7 us per thread for `/proc/<tid>/stat`.
pub fn child_stopped(pid: i32) -> Option<bool> {
    // SAFETY: siginfo_t is plain data; waitid fills it (or leaves si_pid 0 with WNOHANG).
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid on one pid with a valid siginfo buffer; WNOWAIT leaves the child as it is.
    let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WSTOPPED | libc::WNOHANG | libc::WNOWAIT) };
    if r != 0 {
        return None;
    }
    // SAFETY: waitid filled a SIGCHLD siginfo (or left it zeroed), whose pid field is valid.
    let reported = unsafe { info.si_pid() } != 0;
    Some(reported && info.si_code == libc::CLD_STOPPED)
}

/// Whether thread `tid` belongs to process `tgid` (`tgkill` with signal 0: nothing is sent).
pub fn in_process(tgid: i32, tid: i32) -> bool {
    // SAFETY: tgkill with signal 0 only checks that the thread exists in that thread group.
    unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid, 0) == 0 }
}

/// The process group of `pid` (None: it is gone).
pub fn group_of(pid: i32) -> Option<i32> {
    // SAFETY: getpgid(2) on a pid; no memory is passed.
    let g = unsafe { libc::getpgid(pid) };
    (g > 0).then_some(g)
}

/// Reads the ids (one per line) of a cgroup's `cgroup.threads`, `tasks` or `cgroup.procs`,
/// opened in advance, into `out` (cleared first). A 4 KiB stack buffer read by offset: no path
/// lookup, no allocation beyond `out`'s growth.
pub fn read_ids(file: &File, out: &mut Vec<i32>) -> io::Result<()> {
    out.clear();
    let mut buf = [0u8; 4096];
    let mut offset = 0u64;
    let (mut value, mut digits) = (0i64, false);
    loop {
        let n = file.read_at(&mut buf, offset)?;
        if n == 0 {
            break;
        }
        offset += n as u64;
        for &b in &buf[..n] {
            if b.is_ascii_digit() {
                value = value * 10 + i64::from(b - b'0');
                digits = true;
            } else {
                if digits && value <= i64::from(i32::MAX) {
                    out.push(value as i32);
                }
                (value, digits) = (0, false);
            }
        }
    }
    if digits && value <= i64::from(i32::MAX) {
        out.push(value as i32);
    }
    Ok(())
}

/// The scheduling state letter of thread `tid` (`/proc/<tid>/stat`, third field); None when
/// the thread is gone.
pub fn thread_state(tid: i32) -> io::Result<Option<u8>> {
    let mut path = [0u8; 32];
    let len = proc_stat_path(tid, &mut path);
    // SAFETY: `path` is NUL-terminated (proc_stat_path leaves the rest zero); O_RDONLY open.
    let fd = unsafe { libc::open(path[..=len].as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH)) { Ok(None) } else { Err(e) };
    }
    let mut buf = [0u8; 512];
    // SAFETY: reading into a stack buffer of its length from the descriptor opened above.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    // SAFETY: closing the descriptor opened above, used by nothing else.
    unsafe { libc::close(fd) };
    if n <= 0 {
        return Ok(None);
    }
    Ok(state_letter(&buf[..n as usize]))
}

/// The state letter of a `/proc/<tid>/stat` line: after the last `)` (the command name may
/// contain any character) and one space.
fn state_letter(stat: &[u8]) -> Option<u8> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat.get(close + 2).copied()
}

/// Whether a state letter means the thread runs no user code until a SIGCONT (`T` stopped,
/// `t` traced) or ever again (`Z`, `X`).
pub fn is_stopped_state(state: u8) -> bool {
    matches!(state, b'T' | b't' | b'Z' | b'X')
}

/// Writes `/proc/<tid>/stat` into `out`; returns the index of its terminating NUL.
fn proc_stat_path(tid: i32, out: &mut [u8; 32]) -> usize {
    let mut i = 0;
    for &b in b"/proc/" {
        out[i] = b;
        i += 1;
    }
    let mut digits = [0u8; 12];
    let (mut v, mut d) = (tid.unsigned_abs(), 0);
    loop {
        digits[d] = b'0' + (v % 10) as u8;
        d += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    while d > 0 {
        d -= 1;
        out[i] = digits[d];
        i += 1;
    }
    for &b in b"/stat" {
        out[i] = b;
        i += 1;
    }
    out[i] = 0;
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn ids_are_read_across_buffer_boundaries() {
        let mut f = tempfile::tempfile().unwrap();
        let ids: Vec<i32> = (0..3000).map(|i| 100_000 + i * 7).collect();
        for id in &ids {
            writeln!(f, "{id}").unwrap();
        }
        let mut out = Vec::new();
        read_ids(&f, &mut out).unwrap();
        assert_eq!(out, ids);
    }

    #[test]
    fn the_state_letter_follows_the_last_parenthesis() {
        assert_eq!(state_letter(b"42 (a) b) c) T 1 2"), Some(b'T'));
        assert_eq!(state_letter(b"42 (x) R 1"), Some(b'R'));
        assert_eq!(state_letter(b"42 (x"), None);
    }

    #[test]
    fn this_thread_is_running_and_a_missing_one_is_gone() {
        // SAFETY: gettid has no arguments.
        let tid = unsafe { libc::gettid() };
        assert_eq!(thread_state(tid).unwrap(), Some(b'R'));
        let mut p = [0u8; 32];
        let n = proc_stat_path(1234567, &mut p);
        assert_eq!(&p[..n], b"/proc/1234567/stat");
        assert_eq!(thread_state(i32::MAX).unwrap(), None);
    }
}
