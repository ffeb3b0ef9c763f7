//! The module manager: runs a validated configuration — partitions created through a backend,
//! one real-time scheduler thread per module core releasing and stopping them at window
//! boundaries, a lifecycle thread for partition requests, exits and output, and the trace.

pub mod control;
pub mod plan;
pub mod gate;
pub mod run_state;
pub mod scheduler;
pub mod timeline;
pub mod output;
pub mod partition_events;
