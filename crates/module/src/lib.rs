//! The module manager: runs a validated configuration — partitions created through a backend,
//! one real-time scheduler thread per module core releasing and stopping them at window
//! boundaries, a lifecycle thread for partition requests, exits and output, and the trace.

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
