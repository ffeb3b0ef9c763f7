//! The kvm backend (`pt:Backend="kvm"`: a partition as a KVM virtual machine) is not
//! implemented yet (issue 12): `partita run` refuses such partitions here, before it creates
//! anything, with a message naming the first one.

use partita_config::model::{Backend, Module};

/// Refuses a module with a kvm partition.
pub fn refuse(module: &Module) -> Result<(), String> {
    match module.partitions.iter().find(|p| p.backend.value != Backend::Process) {
        Some(p) => Err(format!("partition {} \"{}\" asks for the kvm backend, which is not implemented yet", p.id.value, p.name.value)),
        None => Ok(()),
    }
}
