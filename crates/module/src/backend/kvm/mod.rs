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

#[cfg(test)]
mod tests {
    use super::*;

    fn module(file: &str) -> Module {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/tests/data/valid").join(file);
        let checked = partita_config::check_file(&path).expect("configuration");
        checked.module.expect("module")
    }

    #[test]
    fn a_kvm_partition_is_refused_by_name() {
        let err = refuse(&module("kvm-backend.xml")).expect_err("a kvm partition must be refused");
        assert_eq!(err, "partition 1 \"Guest\" asks for the kvm backend, which is not implemented yet");
    }

    #[test]
    fn process_partitions_pass() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fixed-priority.xml");
        let checked = partita_config::check_file(&path).expect("configuration");
        assert_eq!(refuse(checked.module.as_ref().expect("module")), Ok(()));
    }
}
