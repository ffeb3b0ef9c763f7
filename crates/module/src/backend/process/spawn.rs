//! Starting a partition program.
//!
//! The child is created with `clone3` straight into the partition's v2 cgroup
//! (`CLONE_INTO_CGROUP`), in new PID, IPC and mount namespaces, with a pidfd (`CLONE_PIDFD`);
//! cloned by the partition's spawner thread, it shares the module's memory until its `execve`
//! instead of copying it (`CLONE_VM`: backend/spawner.rs). Before `execve` it makes `/` a slave
//! mount, mounts a fresh tmpfs on `/dev/shm` and a new proc on `/proc`, sets its CPUs, working
//! directory, fds 0..=4 (and 5.. for ports) and signal state, reports "ready" and waits on a
//! gate pipe. The parent moves it into the v1 hierarchies (hybrid machines, without a
//! spawner), then either sends it SIGSTOP ([`SpawnSpec::start_stopped`], the signal gate) or
//! freezes its cgroup, and opens the gate: the program's `execve` and first instruction happen
//! only once the module releases the partition. Without either the gate stays closed until
//! [`PartitionProcess::release`].
//!
//! The program is PID 1 of its namespace: a PID 1 without handlers ignores SIGTERM, so the
//! module stops partitions with SIGKILL or `cgroup.kill`.

use super::cgroup::{CoreCgroup, PartitionCgroup};
use super::spawn_child::{self, ChildCtx, STAGES, Stage};
use super::spawner::Spawner;
use super::{Error, Result, degrade, sys};
use std::ffi::{CString, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything needed to start one partition program.
pub struct SpawnSpec<'a> {
    /// Partition name (for messages).
    pub name: &'a str,
    /// Value of `PARTITA_PARTITION`.
    pub partition_id: u32,
    /// The program; relative paths are taken from `workdir`.
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Working directory of the program (the configuration file's directory).
    pub workdir: PathBuf,
    /// Control block memfd, becomes fd 3.
    pub control: BorrowedFd<'a>,
    /// Doorbell eventfd, becomes fd 4.
    pub doorbell: BorrowedFd<'a>,
    /// Port descriptors (`partita_abi::ports`), become fds 5, 6, ...
    pub extra_fds: Vec<BorrowedFd<'a>>,
    /// Host CPUs the program may run on (empty: inherit).
    pub cpus: Vec<usize>,
    /// The partition's cgroup (None: no cgroup, the start is gated only).
    pub cgroup: Option<&'a PartitionCgroup>,
    /// New PID, IPC and mount namespaces (degrades with a warning if refused, unless CI=true).
    pub namespaces: bool,
    /// SCHED_FIFO priority the program starts at (None: the normal policy).
    pub rt_priority: Option<i32>,
    /// Signal the program gets if the module thread that started it dies without stopping it
    /// (`PR_SET_PDEATHSIG`): SIGSTOP when a guardian process cleans up after a dead module
    /// (it demotes the partition's threads first), SIGKILL (the default) otherwise.
    pub death_signal: i32,
    /// Extra environment variables (the module's environment is inherited).
    pub env: Vec<(OsString, OsString)>,
    /// Descriptors the program inherits at numbers it learns from environment variable
    /// `.0` (space-separated, in order, -1 for None): the per-core placement files.
    pub inherited: Option<(&'static str, Vec<Option<BorrowedFd<'a>>>)>,
    /// Per-core gating: the program's main thread goes into this core's cgroup and the
    /// partition's own cgroup is thawed (the core cgroups gate it).
    pub main_core: Option<&'a CoreCgroup>,
    /// The thread to clone the program from, placed in the partition's v1 cgroups (no
    /// `cgroup.procs` move into them: backend/spawner.rs).
    pub spawner: Option<&'a Spawner>,
    /// Readable once the module ends: stop waiting for the child's setup. A program started
    /// late in its partition's last window is frozen mid-setup when the window closes, and no
    /// window thaws it again; without this the run's end waited the 10 s setup timeout.
    pub cancel: Option<BorrowedFd<'a>>,
    /// Its identity, file view and limits (None: the module's identity and the host's files).
    /// With it, the program runs in its data directory rather than `workdir`.
    pub confine: Option<&'a super::Confinement>,
    /// Start it stopped ([`StartState::Stopped`], for the signal gate) rather than in its
    /// frozen cgroup: no cgroup freeze write on the start path.
    pub start_stopped: bool,
    /// Serves the listener of the program's system call filter: its scheduling calls and its
    /// exit_group arrive there. None: the listener is closed at once, and those calls fail
    /// with ENOSYS (an exit then ends only the calling thread: glibc's `_exit` falls back to
    /// `exit`). Never kept without a server: an exit_group would wait for an answer for ever.
    pub broker: Option<&'a super::sched_broker::SchedBroker>,
    /// A multi-core partition's doors at the brokers: its listener is served behind them.
    pub broker_doors: Option<&'a std::sync::Arc<super::sched_broker::BrokerDoors>>,
}

impl<'a> SpawnSpec<'a> {
    pub fn new(
        name: &'a str,
        partition_id: u32,
        program: impl Into<PathBuf>,
        workdir: impl Into<PathBuf>,
        control: BorrowedFd<'a>,
        doorbell: BorrowedFd<'a>,
    ) -> Self {
        SpawnSpec {
            name,
            partition_id,
            program: program.into(),
            args: Vec::new(),
            workdir: workdir.into(),
            control,
            doorbell,
            extra_fds: Vec::new(),
            cpus: Vec::new(),
            cgroup: None,
            namespaces: true,
            rt_priority: None,
            death_signal: libc::SIGKILL,
            env: Vec::new(),
            inherited: None,
            main_core: None,
            spawner: None,
            cancel: None,
            confine: None,
            start_stopped: false,
            broker: None,
            broker_doors: None,
        }
    }
}

/// How the program waits for its first window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartState {
    /// Its cgroup is frozen (and the gate open): thawing the cgroup starts the program.
    Frozen,
    /// No freezer: it waits before `execve` until [`PartitionProcess::release`].
    Gated,
    /// Stopped by SIGSTOP at its gate, before `execve` (and the gate open): SIGCONT starts
    /// the program.
    Stopped,
}

/// A started partition program.
pub struct Spawned {
    pub process: PartitionProcess,
    /// Read ends of the program's stdout and stderr (close-on-exec).
    pub stdout: File,
    pub stderr: File,
    pub start: StartState,
    /// The program runs in its own PID, IPC and mount namespaces.
    pub namespaces: bool,
    /// It was created inside its v2 cgroup (`CLONE_INTO_CGROUP`) rather than moved in.
    pub cloned_into_cgroup: bool,
    /// What degraded and why.
    pub warnings: Vec<String>,
}

/// How a partition program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Exited(i32),
    Signaled(i32),
}

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitStatus::Exited(c) => write!(f, "exited with status {c}"),
            ExitStatus::Signaled(s) => write!(f, "killed by signal {s} ({})", signal_name(*s)),
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// Where the program is between spawn and running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecState {
    /// Not yet at `execve` (frozen or gated).
    Pending,
    /// `execve` succeeded (or the child ended without reporting a failure).
    Started,
    /// `execve` failed with this errno.
    Failed(i32),
}

/// Handle of a partition program: pid, pidfd, gate and exec status.
pub struct PartitionProcess {
    pid: i32,
    pidfd: OwnedFd,
    gate: Option<OwnedFd>,
    status: File,
    program: PathBuf,
    exec: ExecState,
    exit: Option<ExitStatus>,
}

impl PartitionProcess {
    /// Pid in the module's PID namespace.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Becomes readable when the program exits (for the module's poll loop).
    pub fn pidfd(&self) -> BorrowedFd<'_> {
        self.pidfd.as_fd()
    }

    /// Becomes readable when `execve` succeeded (EOF) or failed (a record).
    pub fn exec_status_fd(&self) -> BorrowedFd<'_> {
        self.status.as_fd()
    }

    /// Opens the gate of a [`StartState::Gated`] program (no-op once open).
    pub fn release(&mut self) -> io::Result<()> {
        if let Some(gate) = self.gate.take() {
            let b = [1u8];
            // SAFETY: writing one byte from a valid buffer to the gate pipe we own.
            sys::retry(|| unsafe { libc::write(gate.as_raw_fd(), b.as_ptr().cast(), 1) } as libc::c_long)?;
        }
        Ok(())
    }

    /// Whether `execve` happened yet; waits at most `timeout` for it to be decided.
    pub fn exec_state(&mut self, timeout: Duration) -> io::Result<ExecState> {
        if self.exec != ExecState::Pending {
            return Ok(self.exec);
        }
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        if !sys::poll_one(self.status.as_fd(), libc::POLLIN, ms)? {
            return Ok(ExecState::Pending);
        }
        self.exec = match read_record(&mut self.status)? {
            None => ExecState::Started,
            Some((_, errno)) => ExecState::Failed(errno),
        };
        Ok(self.exec)
    }

    /// Like [`PartitionProcess::exec_state`], as a clear error when `execve` failed.
    pub fn check_exec(&mut self, timeout: Duration) -> Result<ExecState> {
        match self.exec_state(timeout).map_err(|e| Error::io("reading the exec status pipe", e))? {
            ExecState::Failed(errno) => Err(Error::Child {
                program: self.program.clone(),
                stage: STAGES[Stage::Exec as usize],
                source: io::Error::from_raw_os_error(errno),
            }),
            s => Ok(s),
        }
    }

    /// Sends a signal through the pidfd (SIGKILL to stop it for good; SIGSTOP/SIGCONT for
    /// the signal fallback). A program that is already gone is not an error.
    pub fn signal(&self, sig: i32) -> io::Result<()> {
        match sys::pidfd_send_signal(self.pidfd.as_fd(), sig) {
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
            r => r,
        }
    }

    /// SIGKILL, after moving every thread to the normal policy ([`super::rt::demote_threads`]).
    pub fn kill(&self) -> io::Result<()> {
        super::rt::demote_threads(super::rt::threads_of(self.pid));
        self.signal(libc::SIGKILL)
    }

    /// Exit status if the program has ended (reaps it).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.wait_with(libc::WEXITED | libc::WNOHANG)
    }

    /// Blocks until the program ends (reaps it).
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(s) = self.wait_with(libc::WEXITED)? {
                return Ok(s);
            }
        }
    }

    fn wait_with(&mut self, options: i32) -> io::Result<Option<ExitStatus>> {
        if self.exit.is_some() {
            return Ok(self.exit);
        }
        let Some(info) = sys::waitid_pidfd(self.pidfd.as_fd(), options)? else { return Ok(None) };
        // SAFETY: waitid filled a SIGCHLD siginfo, whose status field is valid.
        let status = unsafe { info.si_status() };
        self.exit = Some(if info.si_code == libc::CLD_EXITED { ExitStatus::Exited(status) } else { ExitStatus::Signaled(status) });
        Ok(self.exit)
    }
}

impl Drop for PartitionProcess {
    /// Kills and reaps the program (bounded: a v1-frozen task only dies once thawed, which
    /// the cgroup's clean-up does).
    fn drop(&mut self) {
        if self.exit.is_some() {
            return;
        }
        let _ = self.kill();
        for _ in 0..200 {
            if !matches!(self.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Starts a partition program; see the module documentation for the sequence.
pub fn spawn(spec: &SpawnSpec<'_>) -> Result<Spawned> {
    let strict = super::strict();
    let program = if spec.program.is_absolute() { spec.program.clone() } else { spec.workdir.join(&spec.program) };
    check_program(&program)?;
    let mut warnings = Vec::new();

    let cstr = |s: &[u8], what: &str| CString::new(s).map_err(|_| Error::Unsupported(format!("{what} contains a NUL byte")));
    let path_c = cstr(program.as_os_str().as_bytes(), "program path")?;
    let mut args = vec![cstr(spec.program.as_os_str().as_bytes(), "program path")?];
    for a in &spec.args {
        args.push(cstr(a.as_bytes(), "an argument")?);
    }
    // Child-side descriptors, all numbered above the targets of dup2 (0..=4, then the ports) so
    // that it cannot clobber them; inherited ones keep these numbers in the program.
    let floor = 10.max(6 + spec.extra_fds.len() as i32);
    let high = |fd: BorrowedFd<'_>| sys::dup_at_least(fd, floor).map_err(|e| Error::io("duplicating a descriptor", e));
    let mut inherited = Vec::new();
    let mut inherited_env = String::new();
    for fd in spec.inherited.iter().flat_map(|(_, fds)| fds) {
        let n = match fd {
            Some(fd) => {
                let dup = high(*fd)?;
                let n = dup.as_raw_fd();
                inherited.push(dup);
                n
            }
            None => -1,
        };
        inherited_env.push_str(&format!("{}{n}", if inherited_env.is_empty() { "" } else { " " }));
    }
    let mut env = Vec::new();
    // Confined, the program's home, temporary files and working directory are its data directory.
    let mut spec_env = spec.env.clone();
    if let Some(c) = spec.confine {
        for k in ["HOME", "TMPDIR", "PWD"] {
            spec_env.retain(|(e, _)| e.as_os_str() != k);
            spec_env.push((k.into(), c.data_dir.clone().into()));
        }
    }
    let spec_env = &spec_env;
    if let Some((name, _)) = spec.inherited {
        env.push(cstr(format!("{name}={inherited_env}").as_bytes(), "an environment variable")?);
    }
    let overridden = |k: &OsString| k.as_os_str() == partita_abi::ENV_PARTITION || spec_env.iter().any(|(e, _)| e == k);
    for (k, v) in std::env::vars_os().filter(|(k, _)| !overridden(k)).chain(spec_env.iter().cloned()) {
        env.push(cstr(&[k.as_bytes(), b"=", v.as_bytes()].concat(), "an environment variable")?);
    }
    env.push(cstr(format!("{}={}", partita_abi::ENV_PARTITION, spec.partition_id).as_bytes(), "the partition id")?);
    let cwd = spec.confine.map_or(&spec.workdir, |c| &c.data_dir);
    let workdir = cstr(cwd.as_os_str().as_bytes(), "working directory")?;
    let confine = spec.confine.map(|c| c.prepare()).transpose()?;
    let cpus = if spec.cpus.is_empty() { None } else { Some(super::rt::cpu_set(&spec.cpus).map_err(|e| Error::io("CPU set", e))?) };

    let pipe = |what: &str| sys::pipe().map_err(|e| Error::io(format!("creating the {what} pipe"), e));
    let (out_r, out_w) = pipe("stdout")?;
    let (err_r, err_w) = pipe("stderr")?;
    let (status_r, status_w) = pipe("status")?;
    let (gate_r, gate_w) = pipe("gate")?;
    let devnull = File::open("/dev/null").map_err(|e| Error::io("opening /dev/null", e))?;
    let mut child_fds = vec![high(devnull.as_fd())?, high(out_w.as_fd())?, high(err_w.as_fd())?, high(spec.control)?, high(spec.doorbell)?];
    for &fd in &spec.extra_fds {
        child_fds.push(high(fd)?);
    }
    let (status_hi, gate_hi) = (high(status_w.as_fd())?, high(gate_r.as_fd())?);
    drop((out_w, err_w, status_w, gate_r, devnull));

    let mut ctx = ChildCtx::new(
        path_c,
        args,
        env,
        workdir,
        cpus,
        spec.namespaces,
        child_fds.iter().map(|f| f.as_raw_fd()).collect(),
        status_hi.as_raw_fd(),
        gate_hi.as_raw_fd(),
    );
    ctx.rt_priority = spec.rt_priority;
    ctx.confine = confine;
    let program_file = match spec.confine {
        Some(_) => Some(high(File::open(&program).map_err(|e| Error::io(format!("opening {}", program.display()), e))?.as_fd())?),
        None => None,
    };
    ctx.program_fd = program_file.as_ref().map_or(-1, |f| f.as_raw_fd());
    ctx.death_signal = spec.death_signal;
    ctx.inherited = inherited.iter().map(|f| f.as_raw_fd()).collect();
    let cgroup_fd = spec.cgroup.and_then(|c| c.v2_dir_fd()).map(|f| f.as_raw_fd());
    let starting = || format!("starting partition {}", spec.name);
    let namespaces = ctx.namespaces;
    let (pid, pidfd, into_cgroup, namespaces) = match clone_in(spec.spawner, ctx, cgroup_fd).map_err(|e| Error::io(starting(), e))? {
        Ok((pid, pidfd, into)) => (pid, pidfd, into, namespaces),
        Err((mut ctx, e))
            if spec.namespaces && matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES | libc::EINVAL | libc::ENOSPC)) =>
        {
            degrade(strict, &mut warnings, &format!("new PID/IPC/mount namespaces for partition {}", spec.name), Error::io("clone", e))?;
            ctx.namespaces = false;
            let (pid, pidfd, into) =
                clone_in(spec.spawner, ctx, cgroup_fd).map_err(|e| Error::io(starting(), e))?.map_err(|(_, e)| Error::io(starting(), e))?;
            (pid, pidfd, into, false)
        }
        Err((_, e)) => return Err(Error::io(starting(), e)),
    };
    drop(child_fds);
    drop(inherited);
    drop((status_hi, gate_hi, program_file));
    let mut process = PartitionProcess {
        pid,
        pidfd,
        gate: Some(gate_w),
        status: File::from(status_r),
        program: program.clone(),
        exec: ExecState::Pending,
        exit: None,
    };

    if let Some(cg) = spec.cgroup {
        cg.add_pid_except(pid, into_cgroup, spec.spawner.is_some())?;
    }
    // Setup report: "ready" or the stage that failed.
    match wait_setup(process.status.as_fd(), spec.cancel).map_err(|e| Error::io("waiting for the child", e))? {
        Setup::Reported => {}
        // The child is killed and reaped as `process` drops.
        Setup::Cancelled => {
            return Err(Error::Timeout { what: format!("the module ended before partition {} finished its setup", spec.name) });
        }
        Setup::TimedOut => return Err(Error::Timeout { what: format!("partition {} did not finish its setup within 10 s", spec.name) }),
    }
    let listener = match read_record(&mut process.status).map_err(|e| Error::io("reading the status pipe", e))? {
        Some((stage, listener)) if stage == Stage::Ready as u32 => listener,
        Some((stage, errno)) => {
            let _ = process.wait();
            let stage = STAGES.get(stage as usize).copied().unwrap_or("setup");
            return Err(Error::Child { program, stage, source: io::Error::from_raw_os_error(errno) });
        }
        None => {
            let status = process.wait().map_err(|e| Error::io("reaping the child", e))?;
            return Err(Error::Child { program, stage: "setup", source: io::Error::other(format!("child {status} before exec")) });
        }
    };
    // The child waits at its gate with the listener open: take a copy of it.
    let listener = sys::pidfd_getfd(process.pidfd.as_fd(), listener)
        .map_err(|e| Error::io(format!("taking the system call filter listener (fd {listener}) of partition {}", spec.name), e))?;
    // Before its first instruction (it waits at its gate): its first brokered call has a server.
    match (spec.broker, spec.broker_doors) {
        (Some(b), Some(doors)) => b.add_behind(listener, doors),
        (Some(b), None) => b.add(listener, spec.cpus.first().map(|&c| c as u32)),
        _ => {}
    }
    let mut start = StartState::Gated;
    if spec.start_stopped {
        // Sent from the module's PID namespace, so it reaches the PID 1 of the partition's
        // (which could not stop itself: its own SIGSTOP is ignored). The child waits in
        // `read` on its gate: the signal is pending before the gate opens, and it stops before
        // it returns to user mode, whichever of the two wakes it.
        process.signal(libc::SIGSTOP).map_err(|e| Error::io(format!("stopping partition {}", spec.name), e))?;
        process.release().map_err(|e| Error::io("opening the gate", e))?;
        start = StartState::Stopped;
    } else if let Some(cg) = spec.cgroup.filter(|c| c.freezer_kind() != super::FreezerKind::None) {
        freeze_unless_cancelled(cg, spec.cancel)?;
        process.release().map_err(|e| Error::io("opening the gate", e))?;
        start = StartState::Frozen;
        if let Some(core) = spec.main_core {
            core.add_thread(pid)?;
            cg.thaw().map_err(|e| Error::io(format!("thawing partition {}", spec.name), e))?;
        }
    }
    Ok(Spawned {
        process,
        stdout: File::from(out_r),
        stderr: File::from(err_r),
        start,
        namespaces,
        cloned_into_cgroup: into_cgroup,
        warnings,
    })
}

/// Clones the child on `spawner`'s thread when given (on the module's memory, which keeps
/// `ctx` until the child has left it), else on this one (a copy of the module); gives `ctx`
/// back when the clone failed.
fn clone_in(spawner: Option<&Spawner>, ctx: ChildCtx, cgroup_fd: Option<i32>) -> io::Result<super::spawner::Outcome> {
    match spawner {
        Some(s) => s.clone_child(ctx, cgroup_fd),
        None => Ok(spawn_child::clone_child(&ctx, cgroup_fd).map_err(|e| (ctx, e))),
    }
}

/// Freezes the partition's cgroup (at most 5 s), giving up when `cancel` becomes readable: at
/// the module's end a freeze begun in the last window can stay incomplete (seen: the run ended
/// 5 s late, "did not report frozen within 5s").
fn freeze_unless_cancelled(cg: &PartitionCgroup, cancel: Option<BorrowedFd<'_>>) -> Result<()> {
    let Some(cancel) = cancel else { return cg.freeze(Duration::from_secs(5)) };
    cg.request_freeze().map_err(|e| Error::io(format!("freezing partition {}", cg.name), e))?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match cg.wait_frozen(super::FreezeWait::default(), Duration::from_millis(50)) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() != io::ErrorKind::TimedOut => {
                return Err(Error::io(format!("waiting for partition {} to freeze", cg.name), e));
            }
            Err(_) if sys::poll_one(cancel, libc::POLLIN, 0).unwrap_or(false) => {
                return Err(Error::Timeout { what: format!("the module ended before partition {} was frozen", cg.name) });
            }
            Err(_) if std::time::Instant::now() >= deadline => {
                return Err(Error::Timeout { what: format!("partition {} did not report frozen within 5s", cg.name) });
            }
            Err(_) => {}
        }
    }
}

enum Setup {
    Reported,
    Cancelled,
    TimedOut,
}

/// Waits (at most 10 s) for the child's setup report on `status`, or for `cancel`.
fn wait_setup(status: BorrowedFd<'_>, cancel: Option<BorrowedFd<'_>>) -> io::Result<Setup> {
    let Some(cancel) = cancel else {
        return Ok(if sys::poll_one(status, libc::POLLIN, 10_000)? { Setup::Reported } else { Setup::TimedOut });
    };
    let mut fds = [
        libc::pollfd { fd: status.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: cancel.as_raw_fd(), events: libc::POLLIN, revents: 0 },
    ];
    // SAFETY: two valid pollfds in a live array.
    let n = sys::retry(|| unsafe { libc::poll(fds.as_mut_ptr(), 2, 10_000) } as libc::c_long)?;
    Ok(if fds[0].revents != 0 {
        Setup::Reported
    } else if n > 0 {
        Setup::Cancelled
    } else {
        Setup::TimedOut
    })
}

/// Clear errors for a missing or non-executable program, before any process exists.
fn check_program(program: &Path) -> Result<()> {
    let meta = match std::fs::metadata(program) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Error::ProgramMissing(program.to_path_buf())),
        Err(e) => return Err(Error::io(format!("inspecting {}", program.display()), e)),
    };
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(Error::NotExecutable(program.to_path_buf()));
    }
    let c = CString::new(program.as_os_str().as_bytes()).map_err(|_| Error::NotExecutable(program.to_path_buf()))?;
    // SAFETY: valid NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        return Err(Error::NotExecutable(program.to_path_buf()));
    }
    Ok(())
}

/// One status record (stage, errno), or None at EOF.
fn read_record(f: &mut File) -> io::Result<Option<(u32, i32)>> {
    let mut buf = [0u8; 8];
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "short status record")),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let stage = u32::from_ne_bytes(buf[..4].try_into().expect("4 bytes"));
    let errno = i32::from_ne_bytes(buf[4..].try_into().expect("4 bytes"));
    Ok(Some((stage, errno)))
}

/// Whether new PID, IPC and mount namespaces can be created (a child is started and reaped).
pub fn probe_namespaces() -> io::Result<()> {
    spawn_child::probe()
}
