//! `partita-apex`: the partition-side runtime of Partita (the APEX library).
//!
//! A partition program runs as a Linux process started by the module (`partita run`); its
//! `main` is the ARINC 653 initialization process. The runtime initializes on the first APEX
//! call: it maps the control block the module passes on fd 3 (or, without `PARTITA_PARTITION` in
//! the environment, runs *standalone* with a private one), starts its deadline monitor and
//! window-start probe threads, and makes ARINC processes out of SCHED_FIFO threads: the distinct
//! ARINC priorities (1..=239) the partition uses are ranked onto its band of Linux levels
//! (11..=73 by default, `kernel::ranks`), and a process runs on one partition core, so the kernel
//! gives exactly the ARINC semantics (priority-preemptive, FIFO among equals, one process at a
//! time per core) while the priorities in use fit the band.
//!
//! The same services exist for Rust (the functions re-exported here, returning
//! `Result<_, ErrorReturnCode>`) and for C (include/ARINC653.h, the static library
//! `libpartita_apex.a`). Services that need no other party (GET_TIME, GET_MY_ID,
//! GET_PARTITION_STATUS, GET_PROCESS_STATUS, GET_PROCESS_ID, GET_MY_PROCESSOR_CORE_ID,
//! GET_MODULE_SCHEDULE_STATUS / _ID) make no system call.
//!
//! STOP and SUSPEND of another process are asynchronous: the target thread gets a signal
//! (`SIGRTMAX - 2`) whose handler parks it (SUSPEND) or jumps back to the top of the process
//! thread (STOP, with `siglongjmp` in a small C trampoline). The request takes effect only
//! where the target holds no lock: the runtime defers it while the target is in one of the
//! runtime's critical sections, and while it is inside the C runtime (libc, the dynamic loader,
//! libgcc_s, libstdc++: code ranges found at start-up). There it takes effect when the call
//! returns into the program, for the wrapped entry points (malloc/calloc/realloc/free, the
//! printf family and the common stdio calls, `c/stop_wrap_*.c`; about 1 ns per call), or else
//! at a signal re-sent every 2 ms that finds the target outside the C runtime (`signals`,
//! `c/stop_guard.c`; docs/porting.md lists what is covered). Limits: the frames of a stopped
//! process are abandoned, so a Rust process body stopped from outside does not run its
//! destructors (memory it owned leaks, a `std::sync::Mutex` it held stays locked); a libc lock
//! held across calls (flockfile) or while libc calls back into the program is not seen. Process entry points are
//! `extern "C" fn()`; a panic in one aborts the program.
//!
//! Standalone knobs (environment): `PARTITA_STANDALONE_PERIOD` (partition period in decimal
//! seconds, default 0.1), `PARTITA_STANDALONE_CPUS` (e.g. `0,1`; default: the CPU the program
//! starts on), `PARTITA_STANDALONE_TRACE=1` (print trace events on stderr),
//! `PARTITA_STANDALONE_PROCESS_LEVEL` (the error codes, comma-separated names such as
//! `NUMERIC_ERROR,DEADLINE_MISSED`, that go to the error handler; default DEADLINE_MISSED and
//! APPLICATION_ERROR).
//!
//! A process that faults (SIGFPE: NUMERIC_ERROR; SIGSEGV/SIGBUS: MEMORY_VIOLATION or
//! STACK_OVERFLOW) raises the error at once, in the same window. When the error goes to the
//! partition's error handler, the process is FAULTED (GET_PROCESS_STATUS) until the handler
//! decides: STOP(FAILED_PROCESS_ID) makes it DORMANT (and START restarts it); otherwise it
//! becomes DORMANT at once and the module's action applies.
//!
//! Layers, bottom up (`tests/layers.rs` enforces the first rule):
//! - `kernel/`: the partition's process kernel: the runtime state and start-up (`runtime`), the
//!   process table, the process threads and their STOP/SUSPEND (`body`, `signals`, `critical`),
//!   faults, release points and deadlines (`dispatch`), wait queues, thread creation and
//!   placement, the monitor threads, trace, and where a detected error goes (`hm`). It never
//!   imports a service: where it must call one back (a process becoming DORMANT gives back the
//!   mutex it owns), the service registers a plain function once (`body::on_dormant_release`).
//! - `services/`: the APEX services built on the kernel: partition, process, control, time, hm,
//!   schedule, the intra-partition objects and the ports.
//! - `names` and `types`: the vocabulary both share. The C face (`ffi`), the a653rs face and the
//!   `log` backend sit on top; the functions re-exported here are the Rust API.

#[cfg(feature = "a653rs")]
mod a653rs_impl;
pub mod ffi;
mod kernel;
#[cfg(feature = "log")]
pub mod logger;
pub mod names;
mod services;
pub mod types;

/// The `a653rs` crate this one implements, for partitions to name the same version.
#[cfg(feature = "a653rs")]
pub use a653rs;
#[cfg(feature = "a653rs")]
pub use a653rs_impl::{Partita, no_failed_address};
pub use kernel::waitq::Discipline as QueuingDiscipline;
pub use names::Name;
pub use services::control::{
    delayed_start, lock_preemption, resume, set_priority, start, stop, stop_self, suspend, suspend_self, unlock_preemption,
};
pub use services::hm::{
    ErrorStatus, configure_error_handler, create_error_handler, get_error_status, raise_application_error, report_application_message,
};
pub use services::objects::blackboard::{
    clear_blackboard, create_blackboard, display_blackboard, get_blackboard_id, get_blackboard_status, read_blackboard,
};
pub use services::objects::buffer::{create_buffer, get_buffer_id, get_buffer_status, receive_buffer, send_buffer};
pub use services::objects::event::{create_event, get_event_id, get_event_status, reset_event, set_event, wait_event};
pub use services::objects::mutex::{
    NO_MUTEX_OWNED, PREEMPTION_LOCK_MUTEX, acquire_mutex, create_mutex, get_mutex_id, get_mutex_status, get_process_mutex_state,
    release_mutex, reset_mutex,
};
pub use services::objects::semaphore::{
    MAX_SEMAPHORE_VALUE, create_semaphore, get_semaphore_id, get_semaphore_status, signal_semaphore, wait_semaphore,
};
pub use services::partition::{get_partition_status, set_partition_mode};
pub use services::ports::{self, *};
pub use services::process::{
    create_process, get_my_id, get_my_index, get_my_processor_core_id, get_process_id, get_process_status, initialize_process_core_affinity,
};
pub use services::schedule::{get_module_schedule_id, get_module_schedule_status, set_module_schedule};
pub use services::time::{get_time, periodic_wait, replenish, timed_wait};
pub use types::*;
