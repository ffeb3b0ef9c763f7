//! The experiments and their workloads. The registry order is the `bench list` order; an
//! experiment or workload is added by adding it to `all()` or `workloads()`.
//!
//! One file per experiment: its points, its run, its report section and its Rust partition
//! programs (`soak` also has `soak_parts`, `soak_load` and `soak_outside`). What several share
//! has one home each: `partition_programs` (the Rust programs' helpers, `idle`, the numbered
//! messages), `c_workloads` (building and running the C workloads), `soak_check` (the window
//! checks of `soak` and `faults`), `switch_floor` (the host's switch floor beside `pcs`).

pub mod api;
pub mod broker;
pub mod c_workloads;
pub mod coloring;
pub mod faults;
pub mod footprint;
pub mod latency;
pub mod memlat;
pub mod messages;
pub mod native_vs_partition;
pub mod overlap;
pub mod partition_programs;
pub mod pcs;
pub mod release;
pub mod slot_floor;
pub mod slot_loss;
pub mod soak;
pub mod soak_check;
pub mod soak_load;
pub mod soak_outside;
pub mod soak_parts;
pub mod spinlock;
pub mod startup;
pub mod switch_floor;

use crate::experiment::Experiment;
use crate::workload::Workload;

pub fn all() -> Vec<&'static dyn Experiment> {
    vec![
        &pcs::Pcs,
        &latency::Latency,
        &slot_loss::SlotLoss,
        &api::Api,
        &startup::Startup,
        &footprint::Footprint,
        &native_vs_partition::NativeVsPartition,
        &overlap::Overlap,
        &spinlock::Spinlock,
        &release::Release,
        &broker::Broker,
        &memlat::Memlat,
        &coloring::Coloring,
        &soak::Soak,
        &faults::Faults,
        &messages::Messages,
    ]
}

pub fn workloads() -> Vec<&'static Workload> {
    vec![
        &pcs::PCS,
        &latency::LATENCY,
        &slot_loss::COUNT,
        &api::API,
        &partition_programs::IDLE,
        &switch_floor::SWITCH_FLOOR,
        &slot_floor::SLOT_FLOOR,
        &broker::BROKER,
        &soak_parts::TIME,
        &soak_parts::PRODUCER,
        &soak_parts::CONSUMER,
        &soak_parts::FAULTY,
        &soak_parts::TARGET,
        &faults::RESTARTER,
        &faults::SWITCHER,
        &messages::MSG_PRODUCER,
        &messages::MSG_CONSUMER,
    ]
}
