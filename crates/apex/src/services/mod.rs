//! The APEX services, built on the process kernel (see the crate documentation for the layering).

pub mod control;
pub mod hm;
pub mod objects;
pub mod partition;
pub mod ports;
pub mod process;
pub mod schedule;
pub mod time;
