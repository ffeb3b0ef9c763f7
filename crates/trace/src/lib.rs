//! The trace of a module run (design.md §5): JSON Lines, one [`Event`] per line, times in ns of
//! CLOCK_MONOTONIC relative to the module epoch (the start of the first major frame; events
//! before it, such as partition initialization, have negative times). Written by
//! `partita run --trace`, read by `partita trace`.

pub mod event;
pub use event::*;
