//! `partita-bench`: the characterization bench of Partita (design.md §6): experiments that
//! reproduce the set-ups of the papers in shared/seeds, their workloads, statistics, the SQLite
//! result store and the HTML report. `docs/bench.md` explains how to run and extend it.

pub mod conditions;
pub mod experiment;
pub mod experiments;
pub mod machine;
pub mod model;
pub mod module_run;
pub mod module_xml;
pub mod published;
pub mod report;
pub mod runner;
pub mod stats;
pub mod store;
pub mod workload;

pub use experiment::{Backend, Experiment, Metric, Params, PointResult, RunContext, Unit, find, params, registry};
