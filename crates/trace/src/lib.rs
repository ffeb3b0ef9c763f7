//! The trace of a module run (design.md §5): JSON Lines, one [`Event`] per line, times in ns of
//! CLOCK_MONOTONIC relative to the module epoch (the start of the first major frame; events
//! before it, such as partition initialization, have negative times). Written by
//! `partita run --trace`, read by `partita trace`.
//!
//! - [`stats`]: sample statistics (min, median, mean, p99, max, stddev, jitter);
//! - [`sketch`]: the same in fixed memory for streams of any length (exact up to 4096 samples);
//! - [`timeline`]: windows and run intervals per core, and the overlap / out-of-window checks;
//! - [`summary`]: the run summary ([`summary::summarize`]);
//! - [`stream`]: the run summary built event by event in bounded memory (`partita run`);
//! - [`perfetto`]: export to the Chrome/Perfetto JSON trace format.

pub mod event;
pub mod perfetto;
pub mod sketch;
pub mod stats;
pub mod stream;
pub mod summary;
pub mod timeline;
pub use event::*;
