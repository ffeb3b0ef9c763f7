//! [`KvmBackend`] and [`KvmPartition`]: a partition as a KVM virtual machine inside
//! `partita run`. `prepare` creates the VM, its RAM (one memory slot, for the whole run) and one
//! vCPU per module core the partition has windows on; `start` loads the guest image into RAM,
//! resets the vCPUs' registers and starts one thread per vCPU, pinned to its core and parked
//! until the scheduler releases it. A restart is a kill and a start: same VM, same slot, same
//! vCPUs, RAM emptied in place and the image loaded again.

use super::elf::{self, Image};
use super::gate::KvmGate;
use super::vcpu::{self, Flow, Park, VcpuControl};
use super::vm::{self, FAULT_RECORD_ADDR, IMAGE_BASE, PROGRESS_ADDR, Vm};
use super::{CONSOLE_PORT, EXIT_PORT, FAULT_PORT, STACK_MIN};
use crate::backend::interface::{Backend, Ended, Partition, Prepared, StartCheck, StartContext, Started};
use crate::backend::rt;
use crate::plan::Plan;
use kvm_ioctls::{Kvm, VcpuExit, VcpuFd};
use partita_abi::error_code;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The kvm backend of one run.
pub struct KvmBackend {
    kvm: Kvm,
    /// Whether vCPU threads get their real-time priority (the capability probe's answer).
    fifo: bool,
    /// `PARTITA_KVM_RECORD=DIR`: each vCPU thread writes its park and resume records there.
    record_dir: Option<PathBuf>,
    /// What a stop raises a vCPU thread to (`VcpuControl::set_priorities`).
    stop_priority: i32,
}

impl KvmBackend {
    /// Opens /dev/kvm for the run; the error says why it is unusable. `stop_priority`: what a
    /// stop raises a vCPU thread to (the partitions' ceiling: above every partition thread,
    /// below the module's).
    pub fn new(fifo: bool, stop_priority: i32) -> Result<KvmBackend, String> {
        let kvm = super::open_kvm()?;
        vcpu::install_kick_handler().map_err(|e| format!("cannot install the vCPU kick signal handler: {e}"))?;
        let record_dir = std::env::var_os("PARTITA_KVM_RECORD").map(PathBuf::from);
        Ok(KvmBackend { kvm, fifo, record_dir, stop_priority })
    }
}

impl Backend for KvmBackend {
    fn prepare(&mut self, plan: &Plan, index: usize) -> Result<Prepared, String> {
        let p = &plan.partitions[index];
        let err = |e: String| format!("partition {} (kvm): {e}", p.name);
        if let Some((core, _)) = p.served_by_priority {
            return Err(err(format!(
                "served by priority on FIXED_PRIORITY core {core}: the kvm backend runs partitions in windows only (so far)"
            )));
        }
        let size = if p.memory_bytes == 0 { super::DEFAULT_RAM } else { p.memory_bytes.min(vm::MAX_RAM as u64 + 1) as usize };
        let ram = memfd(&format!("partita-kvm-{}", p.name)).map_err(|e| err(format!("guest RAM: {e}")))?;
        let (vm, _) = Vm::create(&self.kvm, ram, size).map_err(|e| err(format!("cannot create the VM: {e}")))?;
        // Checked now, so that a bad image is refused before the run starts (and again at each start).
        elf::load(&p.executable, IMAGE_BASE, image_limit(&vm))?;
        let cpuid =
            self.kvm.get_supported_cpuid(kvm_bindings::KVM_MAX_CPUID_ENTRIES).map_err(|e| err(format!("KVM_GET_SUPPORTED_CPUID: {e}")))?;
        let mut vcpus = Vec::new();
        for (k, &core) in p.cores.iter().enumerate() {
            let fd = vm.fd.create_vcpu(k as u64).map_err(|e| err(format!("KVM_CREATE_VCPU {k}: {e}")))?;
            fd.set_cpuid2(&cpuid).map_err(|e| err(format!("KVM_SET_CPUID2 {k}: {e}")))?;
            let ctl = Arc::new(VcpuControl::default());
            if self.fifo {
                ctl.set_priorities(p.rt_band.0 as i32, self.stop_priority);
            }
            vcpus.push(VcpuSlot { ctl, fd: Some(fd), cpu: plan.cores[core as usize].cpu as usize, core: core as usize });
        }
        let controls: Vec<(usize, Arc<VcpuControl>)> = vcpus.iter().map(|v| (v.core, v.ctl.clone())).collect();
        let gate = Arc::new(KvmGate::new(plan.cores.len(), &controls));
        let partition = KvmPartition {
            name: p.name.clone(),
            image: p.executable.clone(),
            vm: Arc::new(vm),
            vcpus,
            // As a process partition's main thread: the base of its band (the outgoing partition's
            // threads, preempted at the boundary, then run before the incoming one's at the
            // same level, so a kicked vCPU acknowledges its stop at once).
            priority: self.fifo.then_some(p.rt_band.0 as i32),
            record_dir: self.record_dir.clone(),
            running: None,
        };
        Ok(Prepared { gate, partition: Box::new(partition) })
    }
}

/// The highest address the image may reach: the stack needs [`STACK_MIN`] above it.
fn image_limit(vm: &Vm) -> u64 {
    (vm.size as u64).saturating_sub(STACK_MIN)
}

fn memfd(name: &str) -> io::Result<File> {
    let cname = std::ffi::CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: memfd_create with a NUL-terminated name; the result is checked and owned below.
    let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd with valid flags; the result is checked and owned below.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn signal_eventfd(fd: RawFd) {
    let one: u64 = 1;
    // SAFETY: writing the 8-byte counter to an eventfd that outlives the call (the caller holds it).
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}

/// A pipe: (read end, write end), the write end non-blocking (a guest whose console nobody
/// reads loses bytes rather than blocking its vCPU thread).
fn pipe() -> io::Result<(File, File)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors, owned below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the fresh descriptors from pipe2.
    let (r, w) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on our own descriptor.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    Ok((r, w))
}

struct VcpuSlot {
    ctl: Arc<VcpuControl>,
    /// Held here while no thread runs it.
    fd: Option<VcpuFd>,
    cpu: usize,
    core: usize,
}

/// One started guest.
struct Running {
    threads: Vec<Option<JoinHandle<VcpuFd>>>,
    /// Held open while the lifecycle thread watches them (`Started::ended`, `start_status`).
    _ended: Arc<OwnedFd>,
    _start: OwnedFd,
    outcome: Arc<Mutex<Option<Ended>>>,
}

pub struct KvmPartition {
    name: String,
    image: PathBuf,
    vm: Arc<Vm>,
    vcpus: Vec<VcpuSlot>,
    priority: Option<i32>,
    record_dir: Option<PathBuf>,
    running: Option<Running>,
}

impl KvmPartition {
    /// Empties RAM, loads the image (the stack's guard page right above it, unmapped) and
    /// resets every vCPU's registers.
    fn load(&mut self) -> Result<Image, String> {
        let image = elf::load(&self.image, IMAGE_BASE, image_limit(&self.vm))?;
        let err = |e: io::Error| format!("guest image {}: cannot load it: {e}", self.image.display());
        self.vm.clear().map_err(err)?;
        self.vm.write_boot_tables(Some(guard_page(&image))).map_err(err)?;
        for s in &image.segments {
            self.vm.write("segment", &s.data, s.addr).map_err(err)?;
        }
        let stack = self.vm.size as u64;
        for (k, v) in self.vcpus.iter().enumerate() {
            let fd = v.fd.as_ref().ok_or_else(|| format!("vCPU {k} was lost (its thread panicked)"))?;
            vm::set_long_mode(fd, image.entry, stack, k as u64).map_err(|e| format!("vCPU {k}: {e}"))?;
        }
        Ok(image)
    }

    /// Tells every vCPU thread to end and takes the vCPUs back.
    fn stop_threads(&mut self) -> Option<Running> {
        let mut run = self.running.take()?;
        for v in &self.vcpus {
            v.ctl.quit();
        }
        for (v, t) in self.vcpus.iter_mut().zip(run.threads.iter_mut()) {
            if let Some(t) = t.take() {
                v.fd = t.join().ok();
            }
        }
        Some(run)
    }
}

impl Partition for KvmPartition {
    fn start(&mut self, _ctx: StartContext<'_>) -> Result<Started, String> {
        if self.running.is_some() {
            return Err("already running".into());
        }
        let guard = guard_page(&self.load()?);
        let io = |e: io::Error| format!("kvm partition {}: {e}", self.name);
        let (stdout, console) = pipe().map_err(io)?;
        let (stderr, _) = pipe().map_err(io)?;
        let (ended, start) = (Arc::new(eventfd().map_err(io)?), eventfd().map_err(io)?);
        let console = Arc::new(console);
        let outcome = Arc::new(Mutex::new(None));
        let mut threads = Vec::new();
        for (k, v) in self.vcpus.iter_mut().enumerate() {
            let Some(fd) = v.fd.take() else { continue };
            let record = match &self.record_dir {
                Some(dir) => {
                    Some(File::options().create(true).append(true).open(dir.join(format!("{}.vcpu{k}.txt", self.name))).map_err(io)?)
                }
                None => None,
            };
            let t = VcpuThread {
                ctl: v.ctl.clone(),
                cpu: v.cpu,
                priority: self.priority,
                vm: self.vm.clone(),
                console: console.clone(),
                outcome: outcome.clone(),
                ended: ended.clone(),
                boots: k == 0,
                record,
                name: self.name.clone(),
                guard,
            };
            v.ctl.prepare_thread();
            let spawned = std::thread::Builder::new().name(format!("partita-vcpu{k}")).spawn(move || t.run(fd));
            match spawned {
                Ok(h) => threads.push(Some(h)),
                Err(e) => {
                    self.running = Some(Running { threads, _ended: ended, _start: start, outcome });
                    self.stop_threads();
                    return Err(format!("cannot start vCPU thread {k}: {e}"));
                }
            }
        }
        signal_eventfd(start.as_raw_fd());
        let started = Started { stdout, stderr, ended: ended.as_raw_fd(), start_status: start.as_raw_fd() };
        self.running = Some(Running { threads, _ended: ended, _start: start, outcome });
        Ok(started)
    }

    fn is_running(&self) -> bool {
        self.running.is_some()
    }

    fn check_start(&mut self) -> StartCheck {
        if self.running.is_some() { StartCheck::Started } else { StartCheck::Pending }
    }

    fn reap(&mut self) -> Option<Ended> {
        let run = self.stop_threads()?;
        let ended = run.outcome.lock().unwrap_or_else(|e| e.into_inner()).take();
        Some(ended.unwrap_or_else(|| Ended { reason: "its vCPU threads ended".into(), code: error_code::HARDWARE_FAULT }))
    }

    fn kill(&mut self) {
        self.stop_threads();
    }

    fn kill_now(&self) {
        for v in &self.vcpus {
            v.ctl.quit();
        }
    }

    fn kill_all(&self, timeout: Duration) {
        let Some(run) = &self.running else { return };
        self.kill_now();
        let start = Instant::now();
        while run.threads.iter().flatten().any(|t| !t.is_finished()) && start.elapsed() < timeout {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// What one vCPU thread runs with.
struct VcpuThread {
    ctl: Arc<VcpuControl>,
    cpu: usize,
    priority: Option<i32>,
    vm: Arc<Vm>,
    console: Arc<File>,
    outcome: Arc<Mutex<Option<Ended>>>,
    ended: Arc<OwnedFd>,
    /// vCPU 0 runs the guest from its entry; the others wait (starting them is a vCPU service
    /// of a later delivery).
    boots: bool,
    record: Option<File>,
    name: String,
    /// The stack's guard page (a page fault there is a STACK_OVERFLOW).
    guard: u64,
}

/// The stack's guard page of a loaded image: the 4 KiB page right above its highest segment
/// (the stack grows down from the top of RAM towards it).
fn guard_page(image: &Image) -> u64 {
    image.end.div_ceil(4096) * 4096
}

impl VcpuThread {
    fn run(mut self, mut fd: VcpuFd) -> VcpuFd {
        self.ctl.thread_started();
        if let Err(e) = rt::pin_current_thread(self.cpu) {
            eprintln!("partita: warning: partition {}: cannot pin a vCPU thread to CPU {}: {e}", self.name, self.cpu);
        }
        if let Some(p) = self.priority
            && let Err(e) = rt::set_current_fifo(p)
        {
            eprintln!("partita: warning: partition {}: a vCPU thread runs without real-time priority: {e}", self.name);
        }
        vcpu::arm_kick(&mut fd);
        let end = if self.boots {
            let (vm, mut record) = (self.vm.clone(), self.record.take());
            let mut parked: Option<(i64, u64)> = None;
            vcpu::run_loop(
                &self.ctl,
                &mut fd,
                |exit| on_exit(exit, &self.console, &self.vm, self.guard),
                |e| Ended { reason: format!("KVM_RUN failed: {e}"), code: error_code::HARDWARE_FAULT },
                |park| {
                    let Some(file) = record.as_mut() else { return };
                    let (t, progress) = (rt::now_ns(), vm.read_u64(PROGRESS_ADDR));
                    match park {
                        // Written at the resume, inside the partition's own window.
                        Park::Parked => parked = Some((t, progress)),
                        Park::Resumed => {
                            let mut line = String::new();
                            if let Some((pt, pp)) = parked.take() {
                                line.push_str(&format!("parked {pt} {pp}\n"));
                            }
                            line.push_str(&format!("resumed {t} {progress}\n"));
                            let _ = file.write_all(line.as_bytes());
                        }
                    }
                },
            )
        } else {
            self.ctl.idle();
            None
        };
        vcpu::disarm_kick();
        // Back at the normal policy before the thread ends (a real-time thread in the kernel's
        // exit path can hold its CPU: rt::demote_threads).
        let _ = rt::set_current_normal();
        self.ctl.thread_ended();
        if let Some(end) = end {
            self.outcome.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(end);
            signal_eventfd(self.ended.as_raw_fd());
        }
        fd
    }
}

/// The health-monitor error and the name of CPU exception `vector` in a guest: arithmetic
/// errors are NUMERIC_ERROR, an invalid opcode ILLEGAL_REQUEST, faults on memory access
/// MEMORY_VIOLATION, the rest HARDWARE_FAULT.
pub fn exception_error(vector: u64) -> (u32, &'static str) {
    match vector {
        0 => (error_code::NUMERIC_ERROR, "divide error"),
        4 => (error_code::NUMERIC_ERROR, "overflow"),
        16 => (error_code::NUMERIC_ERROR, "x87 floating-point error"),
        19 => (error_code::NUMERIC_ERROR, "SIMD floating-point error"),
        6 => (error_code::ILLEGAL_REQUEST, "invalid opcode"),
        3 => (error_code::ILLEGAL_REQUEST, "breakpoint"),
        5 => (error_code::MEMORY_VIOLATION, "bound range exceeded"),
        11 => (error_code::MEMORY_VIOLATION, "segment not present"),
        12 => (error_code::MEMORY_VIOLATION, "stack-segment fault"),
        13 => (error_code::MEMORY_VIOLATION, "general protection fault"),
        14 => (error_code::MEMORY_VIOLATION, "page fault"),
        17 => (error_code::MEMORY_VIOLATION, "alignment check"),
        8 => (error_code::HARDWARE_FAULT, "double fault"),
        18 => (error_code::HARDWARE_FAULT, "machine check"),
        _ => (error_code::HARDWARE_FAULT, "CPU exception"),
    }
}

/// What a guest's exit means: console output, its end, or a partition fault.
fn on_exit(exit: VcpuExit<'_>, console: &File, vm: &Vm, guard: u64) -> Flow<Ended> {
    let fault = |reason: String, code: u32| Flow::End(Ended { reason, code });
    match exit {
        VcpuExit::IoOut(CONSOLE_PORT, data) => {
            let _ = (&*console).write(data);
            Flow::Continue
        }
        VcpuExit::IoOut(EXIT_PORT, data) => {
            let mut b = [0u8; 4];
            let n = data.len().min(4);
            b[..n].copy_from_slice(&data[..n]);
            // A partition may not end (as a process partition that exits: ILLEGAL_REQUEST).
            fault(format!("exited with status {}", u32::from_le_bytes(b)), error_code::ILLEGAL_REQUEST)
        }
        VcpuExit::IoOut(FAULT_PORT, _) => {
            // The guest wrote the record: its values are only quoted, the vector only mapped.
            let [vector, error, rip, cr2] = [0, 8, 16, 24].map(|o| vm.read_u64(FAULT_RECORD_ADDR + o));
            if vector == 14 && (guard..guard + 4096).contains(&cr2) {
                return fault(
                    format!("stack overflow (page fault at 0x{cr2:x}, in the guard page below the stack) at rip 0x{rip:x}"),
                    error_code::STACK_OVERFLOW,
                );
            }
            let (code, name) = exception_error(vector);
            let address = if vector == 14 { format!(", address 0x{cr2:x}") } else { String::new() };
            fault(format!("{name} (vector {vector}, error code 0x{error:x}) at rip 0x{rip:x}{address}"), code)
        }
        VcpuExit::IoOut(port, _) => {
            fault(format!("wrote to I/O port 0x{port:x}, which is not a Partita port"), error_code::ILLEGAL_REQUEST)
        }
        VcpuExit::IoIn(port, _) => {
            fault(format!("read from I/O port 0x{port:x}, which is not a Partita port"), error_code::ILLEGAL_REQUEST)
        }
        VcpuExit::Hlt => fault("halted (hlt): a guest with no interrupt source never runs again".into(), error_code::ILLEGAL_REQUEST),
        VcpuExit::Shutdown => fault("shut down (a triple fault: an exception the guest did not handle)".into(), error_code::HARDWARE_FAULT),
        VcpuExit::MmioRead(addr, _) | VcpuExit::MmioWrite(addr, _) => {
            fault(format!("accessed guest-physical 0x{addr:x}, outside its memory"), error_code::MEMORY_VIOLATION)
        }
        other => fault(format!("stopped with an unexpected VM exit ({other:?})"), error_code::HARDWARE_FAULT),
    }
}
