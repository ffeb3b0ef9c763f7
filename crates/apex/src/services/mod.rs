//! The APEX services, built on the process kernel (see the crate documentation for the layering).

pub mod control;
pub mod objects;
pub mod partition;
pub mod ports;
pub mod schedule;
pub mod time;
