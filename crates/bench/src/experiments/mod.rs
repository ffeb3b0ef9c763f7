//! The experiments and their workloads. The registry order is the `bench list` order; an
//! experiment or workload is added by adding it to `all()` or `workloads()`.

pub mod api;
pub mod broker;
pub mod c_workloads;
pub mod campaign_parts;
pub mod coloring;
pub mod faults;
pub mod footprint;
pub mod latency;
pub mod memlat;
pub mod messages;
pub mod native_vs_partition;
pub mod overlap;
pub mod pcs;
pub mod programs;
pub mod release;
pub mod sections;
pub mod slot_loss;
pub mod soak;
pub mod soak_check;
pub mod soak_load;
pub mod soak_outside;
pub mod soak_parts;
pub mod soak_report;
pub mod spinlock;
pub mod startup;
pub mod switch_floor;
pub mod workload_sections;

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
        &programs::PCS,
        &programs::LATENCY,
        &programs::COUNT,
        &programs::API,
        &programs::IDLE,
        &switch_floor::SWITCH_FLOOR,
        &broker::BROKER,
        &soak_parts::TIME,
        &soak_parts::PRODUCER,
        &soak_parts::CONSUMER,
        &soak_parts::FAULTY,
        &soak_parts::TARGET,
        &campaign_parts::RESTARTER,
        &campaign_parts::SWITCHER,
        &campaign_parts::MSG_PRODUCER,
        &campaign_parts::MSG_CONSUMER,
    ]
}
