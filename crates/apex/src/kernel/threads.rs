//! Creation of the partition's threads with an explicit SCHED_FIFO priority and CPU affinity.
//! When real-time scheduling is not permitted (EPERM), the runtime degrades to SCHED_OTHER with
//! one warning on stderr and keeps going.

use crate::kernel::placement::Placement;
use crate::kernel::runtime::Runtime;
use crate::kernel::sys::{self, Futex};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Inaccessible area below each thread's stack.
const GUARD_SIZE: usize = 64 << 10;

pub type StartRoutine = extern "C" fn(*mut libc::c_void) -> *mut libc::c_void;

static WARNED: AtomicBool = AtomicBool::new(false);

/// Records that SCHED_FIFO is unavailable and says so once.
pub fn no_realtime(rt: &Runtime, err: i32) {
    rt.rt_allowed.store(false, Ordering::Relaxed);
    if !WARNED.swap(true, Ordering::Relaxed) {
        let why = std::io::Error::from_raw_os_error(err);
        eprintln!(
            "partita-apex: warning: real-time scheduling is not permitted ({why}); processes run under SCHED_OTHER, \
             so ARINC priority preemption is NOT enforced (run as root or with CAP_SYS_NICE)"
        );
    }
}

/// Applies SCHED_FIFO `prio` to thread `t` if real-time scheduling is available.
pub fn set_priority(rt: &Runtime, t: libc::pthread_t, prio: i32) {
    if !rt.rt_allowed.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = sys::set_fifo_priority(t, prio)
        && e == libc::EPERM
    {
        no_realtime(rt, e);
    }
}

/// Creates a thread at SCHED_FIFO `prio`, pinned to `cpus`, with at least `stack` bytes of
/// stack. Returns the thread or the error number of pthread_create. Gated per core (see
/// `placement`), a thread runs on one core, the one of `cpus` if it names one CPU; with several
/// it goes to the shared cgroup on all the partition's CPUs when the partition has one, else it
/// stays on the creator's core.
pub fn spawn(
    rt: &Runtime,
    start: StartRoutine,
    arg: *mut libc::c_void,
    prio: i32,
    cpus: &[u32],
    stack: usize,
) -> Result<libc::pthread_t, i32> {
    match &rt.placement {
        Some(placement) => spawn_placed(rt, placement, start, arg, prio, cpus, stack),
        None => spawn_pinned(rt, start, arg, prio, cpus, stack),
    }
}

/// What a placed thread and its creator share until the thread is in its core's cgroup.
struct Handshake {
    start: StartRoutine,
    arg: usize,
    tid: AtomicU32,
    placed: AtomicU32,
}

/// Starts the thread on the creator's core (where it may run now), learns its thread id,
/// moves it to its core and only then lets it run its start routine.
fn spawn_placed(
    rt: &Runtime,
    placement: &Placement,
    start: StartRoutine,
    arg: *mut libc::c_void,
    prio: i32,
    cpus: &[u32],
    stack: usize,
) -> Result<libc::pthread_t, i32> {
    let here = rt.current_core_index().unwrap_or(0);
    let shared = cpus.len() > 1 && placement.has_shared();
    let target = match cpus {
        [cpu] => rt.host_cpus.iter().position(|c| c == cpu).unwrap_or(here),
        _ => here,
    };
    let shake = Arc::new(Handshake { start, arg: arg as usize, tid: AtomicU32::new(0), placed: AtomicU32::new(0) });
    let raw = Arc::into_raw(shake.clone()) as *mut libc::c_void;
    let t = match spawn_pinned(rt, placed_start, raw, prio, &[rt.host_cpus[here]], stack) {
        Ok(t) => t,
        Err(e) => {
            // SAFETY: the thread was not created, so the reference given to it is ours again.
            drop(unsafe { Arc::from_raw(raw as *const Handshake) });
            return Err(e);
        }
    };
    while shake.tid.load(Ordering::Acquire) == 0 {
        sys::futex_wait(&shake.tid, 0, None, Futex::Private);
    }
    let tid = shake.tid.load(Ordering::Acquire) as i32;
    let moved = if shared {
        placement.move_to_shared(tid, &rt.host_cpus)
    } else if target != here {
        placement.move_to(tid, target, rt.host_cpus[target])
    } else {
        Ok(())
    };
    if let Err(e) = moved {
        eprintln!("partita-apex: warning: cannot move a thread to core {target}: {}", std::io::Error::from_raw_os_error(e));
    }
    placement.remember(t, tid);
    shake.placed.store(1, Ordering::Release);
    sys::futex_wake(&shake.placed, 1, Futex::Private);
    Ok(t)
}

extern "C" fn placed_start(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: `arg` is the Arc reference `spawn_placed` gave this thread.
    let shake = unsafe { Arc::from_raw(arg as *const Handshake) };
    // SAFETY: gettid has no preconditions.
    shake.tid.store(unsafe { libc::gettid() } as u32, Ordering::Release);
    sys::futex_wake(&shake.tid, 1, Futex::Private);
    while shake.placed.load(Ordering::Acquire) == 0 {
        sys::futex_wait(&shake.placed, 0, None, Futex::Private);
    }
    let (start, arg) = (shake.start, shake.arg as *mut libc::c_void);
    drop(shake);
    start(arg)
}

fn spawn_pinned(
    rt: &Runtime,
    start: StartRoutine,
    arg: *mut libc::c_void,
    prio: i32,
    cpus: &[u32],
    stack: usize,
) -> Result<libc::pthread_t, i32> {
    let mut use_rt = rt.rt_allowed.load(Ordering::Relaxed);
    let mut use_cpus = !cpus.is_empty();
    loop {
        match try_spawn(start, arg, use_rt.then_some(prio), use_cpus.then_some(cpus), stack) {
            Ok(t) => return Ok(t),
            Err(libc::EPERM) if use_rt => {
                no_realtime(rt, libc::EPERM);
                use_rt = false;
            }
            Err(libc::EINVAL) if use_cpus => {
                eprintln!("partita-apex: warning: cannot pin a thread to CPUs {cpus:?}; it runs unpinned");
                use_cpus = false;
            }
            Err(e) => return Err(e),
        }
    }
}

fn try_spawn(
    start: StartRoutine,
    arg: *mut libc::c_void,
    prio: Option<i32>,
    cpus: Option<&[u32]>,
    stack: usize,
) -> Result<libc::pthread_t, i32> {
    // SAFETY: the attribute object is initialized before use and destroyed on every path; the
    // cpu set and sched_param outlive the calls that read them.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        let page = 4096;
        let stack = stack.max(libc::PTHREAD_STACK_MIN).div_ceil(page) * page;
        libc::pthread_attr_setstacksize(&mut attr, stack);
        // A guard area large enough that an overflowing frame lands in it, where the fault
        // handler recognizes a STACK_OVERFLOW (`faults`).
        libc::pthread_attr_setguardsize(&mut attr, GUARD_SIZE);
        if let Some(p) = prio {
            libc::pthread_attr_setinheritsched(&mut attr, libc::PTHREAD_EXPLICIT_SCHED);
            libc::pthread_attr_setschedpolicy(&mut attr, libc::SCHED_FIFO);
            let param = libc::sched_param { sched_priority: p };
            libc::pthread_attr_setschedparam(&mut attr, &param);
        } else {
            // Do not inherit a real-time policy from the creator either.
            libc::pthread_attr_setinheritsched(&mut attr, libc::PTHREAD_EXPLICIT_SCHED);
            libc::pthread_attr_setschedpolicy(&mut attr, libc::SCHED_OTHER);
            let param = libc::sched_param { sched_priority: 0 };
            libc::pthread_attr_setschedparam(&mut attr, &param);
        }
        if let Some(c) = cpus {
            let set = sys::cpu_set(c);
            libc::pthread_attr_setaffinity_np(&mut attr, size_of::<libc::cpu_set_t>(), &set);
        }
        let mut t: libc::pthread_t = 0;
        let r = libc::pthread_create(&mut t, &attr, start, arg);
        libc::pthread_attr_destroy(&mut attr);
        if r == 0 { Ok(t) } else { Err(r) }
    }
}
