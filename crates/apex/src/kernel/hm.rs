//! Health monitoring, kernel side: where a detected error goes, the queue of errors waiting for
//! the error handler process, and which process that is. The HM services are in `services::hm`.
//!
//! An error the module's System_HM_Table makes PROCESS level in NORMAL mode (the mask in the
//! control block) goes to the partition's error handler when it has one, unless the error
//! handler itself failed; every other error goes to the module, which picks the action from its
//! tables. `error_detected` is async-signal-safe (the fault handlers call it): lock-free queues,
//! futex wake-ups and write(2) only.

use crate::kernel::critical::NoStop;
use crate::kernel::process;
use crate::kernel::runtime::{Runtime, rt};
use crate::kernel::sys::{self, Futex, Line};
use crate::types::*;
use partita_abi::{self as abi, HmReport, mode, system_state};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

unsafe extern "C" {
    static mut stdout: *mut libc::FILE;
    fn flockfile(stream: *mut libc::FILE);
    fn funlockfile(stream: *mut libc::FILE);
}

/// Bits of [`HmReport::to_handler`] (the module reads them the same way).
const TO_HANDLER: u32 = 1;
const INJECTED: u32 = 2;

/// Errors waiting for the error handler (GET_ERROR_STATUS takes the oldest).
const PENDING: usize = 32;

/// One error for the error handler.
#[derive(Clone, Copy)]
pub struct ErrorStatus {
    pub code: u32,
    pub message: [u8; MAX_ERROR_MESSAGE_SIZE],
    pub length: usize,
    /// 0 when no process failed (the initialization process, an injected error).
    pub failed_process_id: ProcessId,
    /// The faulting address of a memory fault, else 0.
    pub failed_address: usize,
}

struct PendingSlot {
    /// 0 free, 1 being written, 2 ready.
    state: AtomicU32,
    order: AtomicU64,
    status: UnsafeCell<ErrorStatus>,
}

// SAFETY: `status` is written only by the thread that moved `state` from 0 to 1, and read only by
// the error handler after it saw 2 (acquire/release), until it stores 0 again.
unsafe impl Sync for PendingSlot {}

static QUEUE: [PendingSlot; PENDING] = [const {
    PendingSlot {
        state: AtomicU32::new(0),
        order: AtomicU64::new(0),
        status: UnsafeCell::new(ErrorStatus {
            code: 0,
            message: [0; MAX_ERROR_MESSAGE_SIZE],
            length: 0,
            failed_process_id: 0,
            failed_address: 0,
        }),
    }
}; PENDING];
static NEXT_ORDER: AtomicU64 = AtomicU64::new(1);
/// Process slot index + 1 of the error handler; 0: none.
static HANDLER: AtomicU32 = AtomicU32::new(0);

/// The slot index of the error handler process, if one was created.
pub fn handler_index() -> Option<usize> {
    (HANDLER.load(Ordering::Acquire) as usize).checked_sub(1)
}

/// The error handler's concurrency control (CONFIGURE_ERROR_HANDLER): PROCESSES_PAUSE (0, the
/// default) or PROCESSES_SCHEDULED (1).
static CONCURRENCY: AtomicU32 = AtomicU32::new(0);
/// 1 while the error handler runs with PROCESSES_PAUSE in a multi-core partition: every other
/// process parks at its next chance (`pause_holds`) until it ends.
static PAUSED: AtomicU32 = AtomicU32::new(0);

pub fn set_concurrency(c: u32) {
    CONCURRENCY.store(c, Ordering::Release);
}

/// The error handler was released: with PROCESSES_PAUSE on several cores, every other started
/// process is interrupted (the STOP/SUSPEND signal; a process inside the C library parks when
/// the call returns) and parks until [`end_pause`]. On one core the handler, above all the
/// partition's processes, already keeps them from running.
pub fn begin_pause(rt: &Runtime, handler: usize) {
    if CONCURRENCY.load(Ordering::Acquire) != 0 || rt.core_count() < 2 {
        return;
    }
    PAUSED.store(1, Ordering::Release);
    for (j, slot) in rt.processes().iter().enumerate() {
        if j != handler && !slot.is_dormant() {
            sys::signal_thread(slot.thread(), crate::kernel::signals::stop_signal());
        }
    }
}

/// The error handler ended: the paused processes go on. Each one's control word changes (a
/// new change count) before the wake-up, so that a process about to park sees it.
pub fn end_pause(rt: &Runtime) {
    if PAUSED.swap(0, Ordering::AcqRel) == 0 {
        return;
    }
    for slot in rt.processes() {
        slot.ctl.fetch_add(process::CTL_STEP, Ordering::AcqRel);
        sys::futex_wake(&slot.ctl, i32::MAX, Futex::Private);
    }
}

/// Whether process `index` must park now because the error handler runs with PROCESSES_PAUSE.
pub fn pause_holds(index: usize) -> bool {
    PAUSED.load(Ordering::Acquire) != 0 && handler_index() != Some(index)
}

/// Records process slot `index` as the error handler (CREATE_ERROR_HANDLER).
pub fn set_handler(index: usize) {
    HANDLER.store(index as u32 + 1, Ordering::Release);
}

/// Whether errors wait for the error handler.
pub fn pending() -> bool {
    QUEUE.iter().any(|s| s.state.load(Ordering::Acquire) == 2)
}

fn enqueue(e: &ErrorStatus) -> bool {
    for s in &QUEUE {
        if s.state.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            // SAFETY: winning 0 -> 1 makes this thread the only one touching the slot.
            unsafe { *s.status.get() = *e };
            s.order.store(NEXT_ORDER.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
            s.state.store(2, Ordering::Release);
            return true;
        }
    }
    false
}

/// The oldest error waiting for the error handler (only the handler dequeues).
pub fn dequeue() -> Option<ErrorStatus> {
    let oldest = QUEUE.iter().filter(|s| s.state.load(Ordering::Acquire) == 2).min_by_key(|s| s.order.load(Ordering::Relaxed))?;
    // SAFETY: state 2 means the writer finished; only the error handler dequeues.
    let e = unsafe { *oldest.status.get() };
    oldest.state.store(0, Ordering::Release);
    Some(e)
}

/// Who took an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routed {
    ErrorHandler,
    Module,
}

/// Routes an error detected in this partition (see the module documentation).
/// `failed`: the failed process's slot index (None: the initialization process or none).
pub fn error_detected(code: u32, failed: Option<usize>, message: &[u8], address: usize, injected: bool) -> Routed {
    let rt = rt();
    let normal = rt.mode() == mode::NORMAL;
    let state = if normal { system_state::PARTITION_EXECUTION } else { system_state::PARTITION_INIT };
    let handler = handler_index();
    let process_level = rt.cb.hm.process_level.load(Ordering::Acquire) & (1 << code) != 0;
    let in_handler = handler.is_some() && (failed == handler || process::current_index() == handler);
    let failed_id = failed.map_or(0, process::id_of);
    let mut flags = if injected { INJECTED } else { 0 };
    let mut routed = Routed::Module;
    if normal
        && process_level
        && !in_handler
        && let Some(h) = handler
    {
        let n = message.len().min(MAX_ERROR_MESSAGE_SIZE);
        let mut e =
            ErrorStatus { code, message: [0; MAX_ERROR_MESSAGE_SIZE], length: n, failed_process_id: failed_id, failed_address: address };
        e.message[..n].copy_from_slice(&message[..n]);
        if enqueue(&e) {
            flags |= TO_HANDLER;
            routed = Routed::ErrorHandler;
            wake_handler(rt, h);
        }
    }
    let report = HmReport { t_ns: sys::now_ns() - rt.epoch_ns, code, process: failed_id, state, to_handler: flags };
    if rt.standalone {
        if routed == Routed::Module {
            let mut l = Line::new();
            l.str("partita-apex: health monitor: ")
                .str(abi::error_code::NAMES.get(code as usize).copied().unwrap_or("UNKNOWN"))
                .str(" by ");
            match failed {
                Some(_) => l.str("process ").int(failed_id as i64),
                None => l.str("the initialization process"),
            };
            l.str(": ").bytes(message).str(" (standalone: no module acts on it)\n");
            sys::write_all(2, l.as_bytes());
        }
    } else {
        rt.cb.hm.reports.push(report);
        sys::write_all(abi::DOORBELL_FD, &1u64.to_ne_bytes());
    }
    routed
}

/// Makes the error handler runnable (it is a process that the runtime, not START, releases).
fn wake_handler(rt: &Runtime, h: usize) {
    let slot = &rt.procs[h];
    slot.state.store(process::STARTED, Ordering::Release);
    slot.wake.fetch_add(1, Ordering::Release);
    sys::futex_wake(&slot.wake, 1, Futex::Private);
}

/// Takes the errors the module injected (`partita run --inject`) of PROCESS level; called at
/// each window start.
pub fn take_injected(rt: &Runtime) {
    let bits = rt.cb.hm.injected.swap(0, Ordering::AcqRel);
    for code in 0..abi::error_code::COUNT {
        if bits & (1 << code) != 0 {
            error_detected(code, None, b"injected by partita run --inject", 0, true);
        }
    }
}

/// Writes `bytes` and a newline on stdout in one locked piece, so that lines of different
/// processes do not mix and the order with the program's own printf output is kept.
pub(crate) fn write_line(bytes: &[u8]) {
    let _n = NoStop::enter();
    // SAFETY: `stdout` is the C library's stream, valid for the whole program; the stream lock
    // is held around the writes, and a STOP request is deferred meanwhile.
    unsafe {
        let stream = stdout;
        flockfile(stream);
        libc::fwrite(bytes.as_ptr().cast(), 1, bytes.len(), stream);
        libc::fputc(b'\n' as i32, stream);
        libc::fflush(stream);
        funlockfile(stream);
    }
}
