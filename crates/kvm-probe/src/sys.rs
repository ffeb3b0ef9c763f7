//! The few Linux calls the probe needs beyond the rust-vmm crates: shared guest RAM, CPU pinning,
//! futexes, signals and the controller's real-time priority.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::atomic::{AtomicU64, Ordering};

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r) }
}

/// Guest RAM lives in a memfd so that a VM created by another process (the SIGSTOP experiment's
/// child) and the controller see the same pages.
pub fn memfd(name: &str, size: usize) -> io::Result<File> {
    let cname = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: memfd_create with a NUL-terminated name; the result is checked and owned below.
    let fd = cvt(unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) })?;
    // SAFETY: `fd` is a fresh descriptor owned by nobody else.
    let file = unsafe { File::from_raw_fd(fd) };
    file.set_len(size as u64)?;
    Ok(file)
}

/// A read-only view of one `u64` of guest RAM (the guest's counter), mapped from the memfd.
pub struct Counter {
    page: *mut libc::c_void,
    word: *const AtomicU64,
}

// SAFETY: the mapping is owned by the struct and only read atomically.
unsafe impl Send for Counter {}
// SAFETY: as above; concurrent atomic loads are fine.
unsafe impl Sync for Counter {}

impl Counter {
    /// Maps the page at `offset` (page aligned) of `ram` and watches the `u64` at its start.
    pub fn map(ram: &File, offset: u64) -> io::Result<Counter> {
        // SAFETY: a fresh shared mapping of one page of a file we hold; checked below.
        let page = unsafe { libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ, libc::MAP_SHARED, ram.as_raw_fd(), offset as i64) };
        if page == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Counter { page, word: page.cast::<AtomicU64>() })
    }

    /// The counter's current value.
    pub fn get(&self) -> u64 {
        // SAFETY: `word` points into a live, page-aligned mapping owned by `self`.
        unsafe { (*self.word).load(Ordering::SeqCst) }
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the page mapped in `map`.
        unsafe { libc::munmap(self.page, 4096) };
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET stays in bounds for cpu < 1024.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        cvt(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set))?;
    }
    Ok(())
}

/// The calling thread at SCHED_FIFO `priority` until dropped, then SCHED_OTHER again, so that the
/// controller is not delayed by the churn sharing its CPU and no real-time thread outlives a trial
/// (a real-time thread in the kernel's exit path can hold its CPU, see rt::demote_threads).
/// Without the privilege the thread stays as it is.
pub struct Fifo {
    raised: bool,
    /// Not Send: the policy must be reset on the thread that raised itself.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Fifo {
    /// Raises the calling thread; `raised()` says whether it worked.
    pub fn raise(priority: i32) -> Fifo {
        let p = libc::sched_param { sched_priority: priority };
        // SAFETY: sched_setscheduler on the calling thread with a valid parameter block.
        let raised = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } == 0;
        Fifo { raised, _thread: std::marker::PhantomData }
    }

    /// Whether the thread runs at SCHED_FIFO.
    pub fn raised(&self) -> bool {
        self.raised
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        if self.raised {
            let p = libc::sched_param { sched_priority: 0 };
            // SAFETY: as in `raise`; dropped on the thread that raised itself.
            unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &p) };
        }
    }
}

/// Whether the process runs as root (cgroups, real-time priority).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
