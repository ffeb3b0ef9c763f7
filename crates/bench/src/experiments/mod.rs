//! The experiments and their workloads. The registry order is the `bench list` order.

use crate::experiment::Experiment;
use crate::workload::Workload;

pub fn all() -> Vec<&'static dyn Experiment> {
    vec![]
}

pub fn workloads() -> Vec<&'static Workload> {
    vec![]
}
