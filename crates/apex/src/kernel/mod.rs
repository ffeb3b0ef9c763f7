//! The partition's process kernel (see the crate documentation for the layering).

pub mod body;
pub mod critical;
pub mod dispatch;
pub mod faults;
pub mod hm;
pub mod levels;
pub mod monitor;
pub mod placement;
pub mod process;
pub mod ranks;
pub mod runtime;
pub mod signals;
pub mod sys;
pub mod threads;
pub mod trace;
pub mod waitq;
