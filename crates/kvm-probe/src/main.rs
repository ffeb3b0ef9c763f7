//! `partita-kvm-probe`: measures VM start-up and vCPU stop/release on this host (docs/kvm.md).
//!
//! `partita-kvm-probe [--trials N] [--mem-mib N] [--vcpu-fifo]`; takes the machine lock
//! (/tmp/partita-test-module.lock) itself, like `partita bench`.

use std::process::ExitCode;
use std::time::Duration;

use partita_kvm_probe::startup;
use partita_kvm_probe::stop::{self, Mechanism, Options};

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> Result<T, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args.get(i + 1).and_then(|v| v.parse().ok()).ok_or(format!("{name} needs a number")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--sigstop-child") {
        let (Some(ram), Some(Ok(mib)), Some(Ok(cpu)), Some(policy)) =
            (args.get(2), args.get(3).map(|a| a.parse()), args.get(4).map(|a| a.parse()), args.get(5))
        else {
            eprintln!("usage: --sigstop-child RAM MIB CPU fifo|other");
            return ExitCode::from(2);
        };
        let err = stop::sigstop_child(ram, mib, cpu, policy == "fifo").unwrap_err();
        eprintln!("kvm-probe child: {err}");
        return ExitCode::FAILURE;
    }
    match run(&args) {
        Ok(clean) => {
            if clean {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("kvm-probe: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<bool, String> {
    let trials: usize = arg(args, "--trials", 200)?;
    let mem_mib: usize = arg(args, "--mem-mib", 16)?;
    let vcpu_fifo = args.iter().any(|a| a == "--vcpu-fifo");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/tmp/partita-test-module.lock")
        .map_err(|e| e.to_string())?;
    lock.lock().map_err(|e| e.to_string())?;
    let kvm = kvm_ioctls::Kvm::new().map_err(|e| format!("/dev/kvm: {e}"))?;
    let e = |e: std::io::Error| e.to_string();
    let policy = if vcpu_fifo { "SCHED_FIFO 1" } else { "SCHED_OTHER" };
    println!("kvm-probe: {trials} trials, {mem_mib} MiB guest RAM, vCPU on CPU 1 ({policy}), controller on CPU 0 (SCHED_FIFO 10)");
    let s = startup::measure_startup(&kvm, mem_mib, trials, 1).map_err(e)?;
    println!("KVM_CREATE_VM              {}", s.create_vm);
    println!("RAM + image set-up         {}", s.memory);
    println!("  of it, the memory slot   {}", s.slot);
    println!("vCPU + registers set-up    {}", s.vcpu);
    println!("first KVM_RUN to first out {}", s.first_run);
    println!("create to first out, total {}", s.total);
    let io = startup::measure_io_exit(&kvm, mem_mib, trials.max(200) * 10, 1).map_err(e)?;
    println!("port-I/O exit round trip   {io}");
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut clean = true;
    for churn in [false, true] {
        for m in Mechanism::ALL {
            let opts =
                Options { mem_mib, trials, vcpu_cpu: 1, ctl_cpu: 0, hold: Duration::from_micros(300), churn, vcpu_fifo, exe: exe.clone() };
            let r = stop::measure(m, &opts).map_err(|err| format!("{}: {err}", m.name()))?;
            let tag = match r.churn_rounds {
                Some(n) => format!(", under churn ({n} rounds)"),
                None => String::new(),
            };
            println!("\n{}{tag}{}", m.name(), if r.controller_fifo { "" } else { " (controller not SCHED_FIFO)" });
            println!("  stop (request -> confirmed)   {}  (longest: trial {})", r.stop, r.worst_stop_trial);
            println!("  release (-> guest runs)       {}", r.release);
            println!("  counter moved after confirm:  {} of {} trials", r.moved_after_confirm, r.stop.n);
            clean &= r.moved_after_confirm == 0;
        }
    }
    Ok(clean)
}
