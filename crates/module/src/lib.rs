//! The module manager: runs a validated configuration — partitions created through a backend,
//! one real-time scheduler thread per module core releasing and stopping them at window
//! boundaries, a lifecycle thread for partition requests, exits and output, and the trace.

/// `eprintln!` that never panics: a closed or full stderr (`partita run ... 2>&1 | head`) must
/// not end a scheduler, lifecycle or broker thread (a scheduler thread that ended that way left
/// the run waiting for it at its end).
#[macro_export]
macro_rules! warn_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod backend;
pub mod control;
pub mod guard;
pub mod hm;
pub mod lifecycle;
pub mod output;
pub mod partition_events;
pub mod plan;
pub mod ports;
pub mod run;
pub mod run_state;
pub mod scheduler;
pub mod signal_guard;
pub mod timeline;
