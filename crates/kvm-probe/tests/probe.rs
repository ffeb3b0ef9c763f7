//! Runs the kvm probe briefly and checks its functional facts, not its timing: guests start and
//! exit on their port, and after every confirmed stop, by each mechanism, the spinning guest executes nothing until it is released (its counter does not
//! move), and runs again after the release.

use std::path::PathBuf;
use std::time::Duration;

use partita_kvm_probe::startup;
use partita_kvm_probe::stop::{self, Mechanism, Options};

/// The KVM handle, or `None` (with a message) where the probe cannot run: /dev/kvm missing
/// (a failure under CI), unusable (nested virtualization off, no access), or no root for cgroups.
fn kvm() -> Option<kvm_ioctls::Kvm> {
    if !partita_testkit::require("/dev/kvm", std::path::Path::new("/dev/kvm").exists()) {
        return None;
    }
    let kvm = match kvm_ioctls::Kvm::new() {
        Ok(kvm) => kvm,
        Err(e) => {
            eprintln!("SKIPPED kvm probe: /dev/kvm is there but unusable: {e}");
            return None;
        }
    };
    partita_testkit::require_root().then_some(kvm)
}

#[test]
fn guests_run_and_no_instruction_executes_after_a_confirmed_stop() {
    let Some(kvm) = kvm() else { return };
    let _machine = partita_testkit::machine_lock();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let vcpu_cpu = 1.min(cpus - 1);

    let s = startup::measure_startup(&kvm, 4, 3, vcpu_cpu).expect("start-up");
    assert_eq!(s.guests_started, 3, "every guest reaches its first port-I/O exit");
    let io = startup::measure_io_exit(&kvm, 4, 50, vcpu_cpu).expect("port-I/O exits");
    assert_eq!(io.n, 50, "the I/O guest exits on its port again and again");

    let exe = PathBuf::from(env!("CARGO_BIN_EXE_partita-kvm-probe"));
    // Without host cgroup churn here: the churn series is a timing measurement (the probe binary,
    // docs/kvm.md), and one early churn series hung in a kernel cgroup write; CI must not wait on it.
    for churn in [false] {
        for m in Mechanism::ALL {
            let opts = Options {
                mem_mib: 4,
                trials: 20,
                vcpu_cpu,
                ctl_cpu: 0,
                hold: Duration::from_millis(1),
                churn,
                vcpu_fifo: false,
                exe: exe.clone(),
            };
            let r = stop::measure(m, &opts).unwrap_or_else(|e| panic!("{} (churn {churn}): {e}", m.name()));
            assert_eq!(r.moved_after_confirm, 0, "{} (churn {churn}): the guest ran after a confirmed stop", m.name());
            assert_eq!(r.release.n, 20, "{} (churn {churn}): the guest runs again after each release", m.name());
            if churn {
                assert!(r.churn_rounds.is_some_and(|n| n > 0), "{}: the churn ran", m.name());
            }
        }
    }
}
