//! Measurements 2 and 3: stopping a vCPU whose guest spins with interrupts off, from another
//! thread, and releasing it again, by three mechanisms, optionally under host cgroup churn.
//!
//! Each trial: wait until the guest's counter moves; request the stop and wait for the mechanism's
//! own confirmation (stop latency); read the counter, hold the vCPU stopped for a while and read it
//! again (it must not have moved: the guest executed nothing after the confirmation); release and
//! wait until the counter moves again (release latency).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kvm_ioctls::{Kvm, VcpuExit};
use partita_module::backend::kvm::vcpu::{self, Flow, VcpuControl};

use crate::cgroup::{Churn, VcpuCgroup};
use crate::stats::Stats;
use crate::sys::{self, Counter};
use crate::vm::{COUNTER_ADDR, Entry, Guest, PORT_STARTED};

/// How a vCPU is stopped and released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// `cgroup.freeze` of a threaded cgroup holding only the vCPU thread; confirmed by
    /// `frozen 1` in `cgroup.events`; released by writing 0.
    Freezer,
    /// `immediate_exit` set and a signal to the vCPU thread; KVM_RUN returns EINTR and the thread
    /// parks on a futex, which confirms; released by a futex wake.
    ImmediateExit,
    /// SIGSTOP to the VM's process (a single-threaded child: a SIGSTOP stops a whole thread
    /// group); confirmed by `waitid(WSTOPPED)`; released by SIGCONT.
    SigStop,
}

impl Mechanism {
    /// All mechanisms, in report order.
    pub const ALL: [Mechanism; 3] = [Mechanism::Freezer, Mechanism::ImmediateExit, Mechanism::SigStop];

    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Freezer => "freezer",
            Mechanism::ImmediateExit => "immediate_exit+signal",
            Mechanism::SigStop => "SIGSTOP/SIGCONT",
        }
    }
}

/// What one series of trials found.
#[derive(Debug)]
pub struct StopReport {
    /// The mechanism measured.
    pub mechanism: Mechanism,
    /// Whether host cgroup churn ran meanwhile (and how many churn rounds it completed).
    pub churn_rounds: Option<u64>,
    /// Request to confirmed stop.
    pub stop: Stats,
    /// Release to the guest's counter moving again.
    pub release: Stats,
    /// Trials in which the counter moved after the confirmed stop (must be 0).
    pub moved_after_confirm: usize,
    /// Index of the trial with the longest stop (is a first-trial effect or not).
    pub worst_stop_trial: usize,
    /// Whether the controller ran at SCHED_FIFO.
    pub controller_fifo: bool,
}

/// Parameters of a series.
#[derive(Clone, Debug)]
pub struct Options {
    /// Guest RAM in MiB.
    pub mem_mib: usize,
    /// Trials per series.
    pub trials: usize,
    /// CPU of the vCPU thread.
    pub vcpu_cpu: usize,
    /// CPU of the controller (and of the churn).
    pub ctl_cpu: usize,
    /// How long each confirmed stop is held while the counter is watched.
    pub hold: Duration,
    /// Whether to run cgroup churn on `ctl_cpu` meanwhile.
    pub churn: bool,
    /// Whether the vCPU thread runs at SCHED_FIFO 1 (as a partition's threads would, on a CPU
    /// the module owns) instead of competing with the host's other work under SCHED_OTHER.
    pub vcpu_fifo: bool,
    /// This crate's binary, run as the SIGSTOP experiment's VM process (`--sigstop-child`).
    pub exe: PathBuf,
}

/// SCHED_FIFO priority of the vCPU thread with [`Options::vcpu_fifo`], below the controller's.
const VCPU_PRIORITY: i32 = 1;
/// SCHED_FIFO priority of the controller.
const CONTROLLER_PRIORITY: i32 = 10;

const DEADLINE: Duration = Duration::from_secs(2);

/// A stopped-and-released vCPU, whatever the mechanism.
trait Gate {
    /// Requests the stop and returns once the mechanism confirms it.
    fn stop(&mut self) -> io::Result<()>;
    /// Releases the vCPU.
    fn release(&mut self) -> io::Result<()>;
}

/// Runs one series of `opts.trials` trials of `mechanism`.
pub fn measure(mechanism: Mechanism, opts: &Options) -> io::Result<StopReport> {
    sys::pin_to_cpu(opts.ctl_cpu)?;
    let ram = sys::memfd("partita-kvm-probe", opts.mem_mib << 20)?;
    let counter = Counter::map(&ram, COUNTER_ADDR)?;
    let mut gate: Box<dyn Gate> = match mechanism {
        Mechanism::Freezer => {
            let vcpu = VcpuThread::spawn(&ram, opts)?;
            let cgroup = VcpuCgroup::new(vcpu.tid)?;
            Box::new(FreezerGate { cgroup, _vcpu: vcpu })
        }
        Mechanism::ImmediateExit => Box::new(KickGate { vcpu: VcpuThread::spawn(&ram, opts)? }),
        Mechanism::SigStop => Box::new(SigStopGate::spawn(&opts.exe, &ram, opts)?),
    };
    let churn = if opts.churn { Some(Churn::start(opts.ctl_cpu)?) } else { None };
    let fifo = sys::Fifo::raise(CONTROLLER_PRIORITY);
    let (mut stops, mut releases, mut moved) = (vec![], vec![], 0);
    for i in 0..opts.trials {
        wait_moving(&counter, counter.get())?;
        let t0 = Instant::now();
        gate.stop()?;
        let t1 = Instant::now();
        let c0 = counter.get();
        while t1.elapsed() < opts.hold {
            std::hint::spin_loop();
        }
        let c1 = counter.get();
        moved += usize::from(c1 != c0);
        let t2 = Instant::now();
        gate.release()?;
        wait_moving(&counter, c1)?;
        releases.push(t2.elapsed());
        stops.push(t1 - t0);
        // Pacing (not a condition): lets the churn run between trials, at varying phases.
        std::thread::sleep(Duration::from_micros(500 + 130 * (i as u64 % 11)));
    }
    let controller_fifo = fifo.raised();
    drop(fifo);
    let churn_rounds = churn.map(Churn::finish).transpose()?;
    drop(gate);
    let worst_stop_trial = (0..stops.len()).max_by_key(|&i| stops[i]).unwrap_or(0);
    Ok(StopReport {
        mechanism,
        churn_rounds,
        worst_stop_trial,
        stop: Stats::of(&stops),
        release: Stats::of(&releases),
        moved_after_confirm: moved,
        controller_fifo,
    })
}

/// Waits until the counter differs from `from` (the guest runs).
fn wait_moving(counter: &Counter, from: u64) -> io::Result<()> {
    let start = Instant::now();
    while counter.get() == from {
        if start.elapsed() > DEADLINE {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the guest's counter does not move"));
        }
        std::hint::spin_loop();
    }
    Ok(())
}

/// A vCPU thread of this process running the spinner, under the module's vCPU control
/// (`partita_module::backend::kvm::vcpu`: the kvm backend's stop and release).
struct VcpuThread {
    ctl: Arc<VcpuControl>,
    tid: libc::pid_t,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl VcpuThread {
    fn spawn(ram: &File, opts: &Options) -> io::Result<VcpuThread> {
        vcpu::install_kick_handler()?;
        let ctl = Arc::new(VcpuControl::default());
        // The probe's guest runs from the start (the module's vCPUs wait for their window).
        ctl.release();
        ctl.prepare_thread();
        let (c, ram, cpu, mib, fifo) = (ctl.clone(), ram.try_clone()?, opts.vcpu_cpu, opts.mem_mib, opts.vcpu_fifo);
        let thread = std::thread::Builder::new().name("vcpu".into()).spawn(move || vcpu_main(&c, &ram, mib, cpu, fifo))?;
        let start = Instant::now();
        let tid = loop {
            if let Some(tid) = ctl.tid() {
                break tid;
            }
            if thread.is_finished() || start.elapsed() > DEADLINE {
                return Err(thread
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("vCPU thread panicked")))
                    .err()
                    .unwrap_or_else(|| io::Error::other("vCPU thread did not start")));
            }
            std::thread::yield_now();
        };
        Ok(VcpuThread { ctl, tid, thread: Some(thread) })
    }

    fn join(&mut self) -> io::Result<()> {
        let Some(thread) = self.thread.take() else { return Ok(()) };
        let start = Instant::now();
        while !thread.is_finished() {
            if start.elapsed() > DEADLINE {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "the vCPU thread does not end"));
            }
            self.ctl.quit();
            std::thread::sleep(Duration::from_micros(100));
        }
        thread.join().unwrap_or_else(|_| Err(io::Error::other("vCPU thread panicked")))
    }
}

impl Drop for VcpuThread {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

fn vcpu_main(ctl: &VcpuControl, ram: &File, mib: usize, cpu: usize, fifo: bool) -> io::Result<()> {
    sys::pin_to_cpu(cpu)?;
    // Dropped (the thread back at SCHED_OTHER) before the thread ends.
    let _fifo = fifo.then(|| sys::Fifo::raise(VCPU_PRIORITY));
    let kvm = Kvm::new().map_err(|e| io::Error::other(format!("/dev/kvm: {e}")))?;
    let (mut guest, _) = Guest::create(&kvm, ram, mib, Entry::Spinner)?;
    vcpu::arm_kick(&mut guest.vcpu);
    ctl.thread_started();
    let end = vcpu::run_loop(
        ctl,
        &mut guest.vcpu,
        |exit| match exit {
            VcpuExit::IoOut(PORT_STARTED, _) => Flow::Continue,
            exit => Flow::End(io::Error::other(format!("unexpected exit: {exit:?}"))),
        },
        |e| io::Error::other(format!("KVM_RUN: {e}")),
        |_| {},
    );
    vcpu::disarm_kick();
    ctl.thread_ended();
    end.map_or(Ok(()), Err)
}

struct FreezerGate {
    cgroup: VcpuCgroup,
    _vcpu: VcpuThread,
}

impl Gate for FreezerGate {
    fn stop(&mut self) -> io::Result<()> {
        self.cgroup.set_frozen(true)?;
        let start = Instant::now();
        while !self.cgroup.is_frozen()? {
            if start.elapsed() > DEADLINE {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "cgroup.events never said frozen 1"));
            }
        }
        Ok(())
    }

    fn release(&mut self) -> io::Result<()> {
        self.cgroup.set_frozen(false)
    }
}

struct KickGate {
    vcpu: VcpuThread,
}

impl Gate for KickGate {
    fn stop(&mut self) -> io::Result<()> {
        let ctl = &self.vcpu.ctl;
        ctl.request_stop()?;
        let start = Instant::now();
        while !ctl.is_stopped() {
            if start.elapsed() > DEADLINE || self.vcpu.thread.as_ref().is_none_or(|t| t.is_finished()) {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "the vCPU thread did not park"));
            }
            std::hint::spin_loop();
        }
        Ok(())
    }

    fn release(&mut self) -> io::Result<()> {
        self.vcpu.ctl.release();
        Ok(())
    }
}

/// The VM in a child process of its own, so that SIGSTOP stops the vCPU and nothing else.
struct SigStopGate {
    child: Child,
}

impl SigStopGate {
    fn spawn(exe: &Path, ram: &File, opts: &Options) -> io::Result<SigStopGate> {
        let ram_path = format!("/proc/{}/fd/{}", std::process::id(), ram.as_raw_fd());
        let child = Command::new(exe)
            .args([
                "--sigstop-child",
                &ram_path,
                &opts.mem_mib.to_string(),
                &opts.vcpu_cpu.to_string(),
                if opts.vcpu_fifo { "fifo" } else { "other" },
            ])
            .stdin(Stdio::null())
            .spawn()?;
        Ok(SigStopGate { child })
    }

    fn pid(&self) -> libc::pid_t {
        self.child.id() as libc::pid_t
    }
}

impl Gate for SigStopGate {
    fn stop(&mut self) -> io::Result<()> {
        // SAFETY: kill of our own child, which has not been reaped (we hold its Child).
        if unsafe { libc::kill(self.pid(), libc::SIGSTOP) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // Polled, so that a VM process that died (it never stops) is an error, not a hang.
        let start = Instant::now();
        loop {
            // SAFETY: a zeroed siginfo_t is a valid output buffer for waitid.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let flags = libc::WSTOPPED | libc::WEXITED | libc::WNOWAIT | libc::WNOHANG;
            // SAFETY: waitid on our own child with a valid siginfo_t buffer.
            if unsafe { libc::waitid(libc::P_PID, self.pid() as libc::id_t, &mut info, flags) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: si_pid is valid for the SIGCHLD-style records waitid fills in (0: none yet).
            if unsafe { info.si_pid() } != 0 {
                if info.si_code != libc::CLD_STOPPED {
                    return Err(io::Error::other(format!("the VM process ended (si_code {})", info.si_code)));
                }
                // Consumes the stop report, so that the next poll waits for the next stop.
                // SAFETY: as above, without WNOWAIT.
                unsafe { libc::waitid(libc::P_PID, self.pid() as libc::id_t, &mut info, libc::WSTOPPED | libc::WNOHANG) };
                return Ok(());
            }
            if start.elapsed() > DEADLINE {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "the VM process did not stop"));
            }
            std::hint::spin_loop();
        }
    }

    fn release(&mut self) -> io::Result<()> {
        // SAFETY: as in `stop`.
        if unsafe { libc::kill(self.pid(), libc::SIGCONT) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for SigStopGate {
    fn drop(&mut self) {
        let p = libc::sched_param { sched_priority: 0 };
        // SAFETY: our unreaped child; back at SCHED_OTHER before it is killed (a real-time
        // task in the kernel's exit path can hold its CPU: rt::demote_threads).
        unsafe { libc::sched_setscheduler(self.pid(), libc::SCHED_OTHER, &p) };
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The SIGSTOP experiment's VM process: creates the spinner VM on the RAM at `ram_path` and runs
/// it on `cpu` (at SCHED_FIFO 1 with `fifo`; the parent demotes it before killing it) until killed.
pub fn sigstop_child(ram_path: &str, mem_mib: usize, cpu: usize, fifo: bool) -> io::Result<()> {
    sys::pin_to_cpu(cpu)?;
    if fifo {
        std::mem::forget(sys::Fifo::raise(VCPU_PRIORITY));
    }
    let ram = File::options().read(true).write(true).open(ram_path)?;
    let kvm = Kvm::new().map_err(|e| io::Error::other(format!("/dev/kvm: {e}")))?;
    let (mut guest, _) = Guest::create(&kvm, &ram, mem_mib, Entry::Spinner)?;
    loop {
        match guest.vcpu.run() {
            Ok(VcpuExit::IoOut(PORT_STARTED, _)) => {}
            Ok(exit) => return Err(io::Error::other(format!("unexpected exit: {exit:?}"))),
            Err(e) if e.errno() == libc::EINTR => {}
            Err(e) => return Err(io::Error::other(format!("KVM_RUN: {e}"))),
        }
    }
}
