//! The clock both sides of the ABI use: CLOCK_MONOTONIC in nanoseconds. GET_TIME, window
//! boundaries, deadlines and trace timestamps are all on this one time base, so partitions and
//! the module compare times directly.

/// CLOCK_MONOTONIC in nanoseconds. Served by the vDSO (no system call while the clocksource is
/// `tsc`, as on the machines Partita targets).
#[inline]
pub fn now_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC is always supported.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}
