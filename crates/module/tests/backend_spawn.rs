//! Starting real partition programs: namespaces, descriptors, frozen start, freezing, memory
//! limits, error reports and clean-up. Tests that need root and cgroups skip with a message,
//! except under `CI=true`, where they fail.

use partita_module::backend::process::{
    self as backend, CgroupSystem, Error, ExecState, ExitStatus, PartitionCgroup, RunCgroups, SpawnSpec, Spawned, StartState,
};
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn privileged(test: &str) -> Option<RunCgroups> {
    let root = partita_testkit::is_root();
    let run =
        if root { CgroupSystem::detect().and_then(|s| RunCgroups::create(&s)).map_err(|e| e.to_string()) } else { Err("not root".into()) };
    match run {
        Ok(run) if run.freezer != backend::FreezerKind::None => Some(run),
        other => {
            let why = other.map(|r| format!("no freezer: {:?}", r.warnings)).unwrap_or_else(|e| e);
            partita_testkit::require(&format!("root and a cgroup freezer for {test} ({why})"), false);
            None
        }
    }
}

/// A memfd and an eventfd standing in for the control block and the doorbell.
fn shared_fds() -> (OwnedFd, OwnedFd) {
    // SAFETY: valid NUL-terminated name and flags; the results are fresh descriptors.
    let memfd = unsafe { libc::memfd_create(c"partita-test-control".as_ptr(), libc::MFD_CLOEXEC) };
    // SAFETY: plain system call.
    let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    assert!(memfd >= 0 && efd >= 0, "memfd/eventfd: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just created and are owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(memfd), OwnedFd::from_raw_fd(efd)) }
}

fn sh<'a>(script: &str, ctl: &'a OwnedFd, bell: &'a OwnedFd, cg: Option<&'a PartitionCgroup>) -> SpawnSpec<'a> {
    let mut spec = SpawnSpec::new("TEST", 7, "/bin/sh", std::env::temp_dir(), ctl.as_fd(), bell.as_fd());
    spec.args = vec![OsString::from("-c"), OsString::from(script)];
    spec.cgroup = cg;
    spec
}

fn read_all(mut f: File) -> String {
    let mut s = String::new();
    f.read_to_string(&mut s).expect("read child output");
    s
}

fn ticks(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn runs_as_pid_1_with_fds_3_and_4_env_and_private_mounts() {
    let Some(run) = privileged("runs_as_pid_1_with_fds_3_and_4_env_and_private_mounts") else { return };
    let cg = run.partition("ns", None).unwrap();
    let (ctl, bell) = shared_fds();
    let marker = format!("/dev/shm/partita-test-{}", std::process::id());
    std::fs::write(&marker, b"x").unwrap();
    let script = format!(
        "echo pid=$$; echo fds=$(ls /proc/self/fd | tr '\\n' ' '); echo fd3=$(readlink /proc/$$/fd/3); \
         echo id=$PARTITA_PARTITION; echo pwd=$(pwd); echo maxpid=$(ls /proc | grep '^[0-9]' | sort -n | tail -n 1); \
         echo group=$(cut -d' ' -f5,6 /proc/$$/stat); test -e {marker} && echo shm=shared || echo shm=private"
    );
    let spec = sh(&script, &ctl, &bell, Some(&cg));
    let Spawned { mut process, stdout, start, namespaces, .. } = backend::spawn(&spec).unwrap();
    assert!(namespaces, "namespaces expected as root");
    assert_eq!(start, StartState::Frozen);
    cg.thaw().unwrap();
    let out = read_all(stdout);
    std::fs::remove_file(&marker).unwrap();
    assert_eq!(process.wait().unwrap(), ExitStatus::Exited(0), "output: {out}");
    let line = |k: &str| out.lines().find_map(|l| l.strip_prefix(k)).unwrap_or_else(|| panic!("no {k} in {out}")).trim().to_string();
    assert_eq!(line("pid="), "1");
    let fds: Vec<u32> = line("fds=").split_whitespace().map(|f| f.parse().unwrap()).collect();
    assert!((0..=4).all(|f| fds.contains(&f)), "fds 0-4 must be open: {fds:?}");
    assert!(fds.iter().all(|&f| f <= 5), "only fds 0-4 (and ls's own directory) may be open: {fds:?}");
    assert!(line("fd3=").starts_with("/memfd:partita-test-control"), "fd 3 is the control memfd: {out}");
    assert_eq!(line("id="), "7");
    assert_eq!(PathBuf::from(line("pwd=")).canonicalize().unwrap(), std::env::temp_dir().canonicalize().unwrap());
    // Only the namespace's own processes, numbered from 1, are visible.
    assert!(line("maxpid=").parse::<u32>().unwrap() < 20, "the partition must see only its own processes: {out}");
    assert_eq!(line("shm="), "private");
    // Its own process group and session (PID 1 leads both): `kill(0, sig)` reaches no process
    // outside (the module's group would be 0 here, outside the namespace).
    assert_eq!(line("group="), "1 1", "{out}");
}

#[test]
fn starts_frozen_and_runs_nothing_before_thaw() {
    let Some(run) = privileged("starts_frozen_and_runs_nothing_before_thaw") else { return };
    let cg = run.partition("frozen-start", None).unwrap();
    let (ctl, bell) = shared_fds();
    let spec = sh("echo started", &ctl, &bell, Some(&cg));
    let Spawned { mut process, stdout, .. } = backend::spawn(&spec).unwrap();
    assert!(cg.is_frozen().unwrap());
    assert_eq!(process.exec_state(Duration::from_millis(200)).unwrap(), ExecState::Pending, "execve must wait for the thaw");
    let mut p = libc::pollfd { fd: std::os::fd::AsRawFd::as_raw_fd(&stdout), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    assert_eq!(unsafe { libc::poll(&mut p, 1, 200) }, 0, "no output while frozen");
    cg.thaw().unwrap();
    assert_eq!(process.exec_state(Duration::from_secs(20)).unwrap(), ExecState::Started);
    assert_eq!(read_all(stdout).trim(), "started");
    assert_eq!(process.wait().unwrap(), ExitStatus::Exited(0));
}

#[test]
fn freeze_stops_cpu_time_and_thaw_resumes_it() {
    let Some(run) = privileged("freeze_stops_cpu_time_and_thaw_resumes_it") else { return };
    let cg = run.partition("busy", None).unwrap();
    let (ctl, bell) = shared_fds();
    let mut spec = sh("while :; do :; done", &ctl, &bell, Some(&cg));
    spec.cpus = vec![0];
    let spawned = backend::spawn(&spec).unwrap();
    let pid = spawned.process.pid();
    cg.thaw().unwrap();
    let t0 = ticks(pid);
    wait_until("the busy loop to use CPU time", || ticks(pid) > t0 + 5);
    cg.freeze(Duration::from_secs(5)).unwrap();
    let frozen_at = ticks(pid);
    std::thread::sleep(Duration::from_millis(300));
    // One tick of /proc rounding at most; a running program would gain many.
    assert!(ticks(pid) <= frozen_at + 1, "CPU time must not advance while frozen");
    cg.thaw().unwrap();
    wait_until("CPU time to advance after the thaw", || ticks(pid) > frozen_at + 5);
}

#[test]
fn memory_limit_is_enforced_by_the_oom_killer() {
    let Some(run) = privileged("memory_limit_is_enforced_by_the_oom_killer") else { return };
    if run.memory == backend::MemoryLimitKind::None {
        assert!(!backend::strict(), "no memory controller: {:?}", run.warnings);
        eprintln!("skipping: no memory controller ({:?})", run.warnings);
        return;
    }
    let cg = run.partition("hog", Some(32 << 20)).unwrap();
    let (ctl, bell) = shared_fds();
    // The shell keeps the whole 256 MiB command substitution in memory.
    let spec = sh("a=$(head -c 268435456 /dev/zero | tr '\\0' a); echo survived ${#a}", &ctl, &bell, Some(&cg));
    let Spawned { mut process, stdout, .. } = backend::spawn(&spec).unwrap();
    cg.thaw().unwrap();
    let out = read_all(stdout);
    assert_eq!(process.wait().unwrap(), ExitStatus::Signaled(libc::SIGKILL), "output: {out}");
    assert!(!out.contains("survived"));
    if let Some(n) = cg.oom_kills() {
        assert!(n >= 1, "an OOM kill must be counted");
    }
}

/// With the module's memory limit guard (backend/process/oom_guard.rs) watching a v1 limit, the kernel's
/// OOM killer is off: the program waits at its limit until the guard demotes and kills it. The
/// kernel counts no OOM kill, the guard counts one. Skipped where the limit is not a v1 one (the
/// guard does nothing there yet: docs/isolation.md, "Exits").
#[test]
fn memory_limit_guard_kills_instead_of_the_oom_killer() {
    let Some(run) = privileged("memory_limit_guard_kills_instead_of_the_oom_killer") else { return };
    if !matches!(run.memory, backend::MemoryLimitKind::V1 { .. }) {
        eprintln!("skipping: the memory limit is not a cgroup v1 one ({:?})", run.memory);
        return;
    }
    let cg = std::sync::Arc::new(run.partition("guarded-hog", Some(32 << 20)).unwrap());
    let guard = backend::oom_guard::OomGuard::start(None).unwrap();
    assert!(guard.watch(&cg).unwrap(), "a v1 limit is watched");
    let (ctl, bell) = shared_fds();
    let helper = env!("CARGO_BIN_EXE_partita-test-spin-threads");
    let mut spec = SpawnSpec::new("TEST", 7, helper, std::env::temp_dir(), ctl.as_fd(), bell.as_fd());
    spec.args = vec![OsString::from("hog")];
    spec.cgroup = Some(&cg);
    let Spawned { mut process, .. } = backend::spawn(&spec).unwrap();
    cg.thaw().unwrap();
    assert_eq!(wait_for_end(&mut process, "the guarded hog"), ExitStatus::Signaled(libc::SIGKILL));
    assert_eq!(guard.kills(), 1);
    assert_eq!(cg.oom_kills(), Some(0), "the kernel's OOM killer is off");
}

#[test]
fn missing_and_non_executable_programs_are_clear_errors() {
    let (ctl, bell) = shared_fds();
    let spec = SpawnSpec::new("X", 1, "no-such-program", std::env::temp_dir(), ctl.as_fd(), bell.as_fd());
    let err = backend::spawn(&spec).err().expect("must fail");
    assert!(matches!(err, Error::ProgramMissing(_)), "{err}");
    assert!(err.to_string().contains("does not exist"), "{err}");
    let path = std::env::temp_dir().join(format!("partita-not-exec-{}", std::process::id()));
    std::fs::write(&path, b"#!/bin/sh\n").unwrap();
    let spec = SpawnSpec::new("X", 1, &path, std::env::temp_dir(), ctl.as_fd(), bell.as_fd());
    let err = backend::spawn(&spec).err().expect("must fail");
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(err, Error::NotExecutable(_)), "{err}");
}

#[test]
fn exec_failure_reports_the_errno_from_the_child() {
    let (ctl, bell) = shared_fds();
    let path = std::env::temp_dir().join(format!("partita-bad-interp-{}", std::process::id()));
    std::fs::write(&path, b"#!/nonexistent/interpreter\n").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(&mut std::fs::metadata(&path).unwrap().permissions(), 0o755);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut spec = SpawnSpec::new("X", 1, &path, std::env::temp_dir(), ctl.as_fd(), bell.as_fd());
    spec.namespaces = false;
    let mut spawned = backend::spawn(&spec).unwrap();
    assert_eq!(spawned.start, StartState::Gated);
    spawned.process.release().unwrap();
    let err = spawned.process.check_exec(Duration::from_secs(20)).expect_err("exec must fail");
    std::fs::remove_file(&path).unwrap();
    assert_eq!(err.raw_os_error(), Some(libc::ENOENT), "{err}");
    assert!(err.to_string().contains("execve"), "{err}");
    // The child still held its filter's listener (close-on-exec, and the exec failed) with
    // nobody serving it: it ended with `exit`, as an exit_group would have waited for ever.
    assert_eq!(spawned.process.wait().unwrap(), ExitStatus::Exited(127));
}

#[test]
fn cleanup_leaves_no_cgroup_and_no_process() {
    let Some(run) = privileged("cleanup_leaves_no_cgroup_and_no_process") else { return };
    let cg = run.partition("cleanup", Some(64 << 20)).unwrap();
    let dirs: Vec<PathBuf> = cg.paths().iter().map(|p| p.to_path_buf()).collect();
    let run_dir = run.v2_dir().map(|p| p.to_path_buf());
    let (ctl, bell) = shared_fds();
    let spec = sh("sleep 1000 & sleep 1000", &ctl, &bell, Some(&cg));
    let spawned = backend::spawn(&spec).unwrap();
    cg.thaw().unwrap();
    wait_until("both sleeps to start", || cg.pids().unwrap().len() >= 2);
    let pids = cg.pids().unwrap();
    drop(spawned);
    drop(cg);
    drop(run);
    for d in dirs.iter().chain(run_dir.iter()) {
        assert!(!d.exists(), "{} must be removed", d.display());
    }
    for pid in pids {
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "process {pid} must be gone");
    }
}

#[test]
fn stale_run_hierarchies_are_removed() {
    let Some(run) = privileged("stale_run_hierarchies_are_removed") else { return };
    let Some(root) = run.v2_dir().and_then(|d| d.parent()).map(|p| p.to_path_buf()) else { return };
    // A pid that cannot be alive: above the kernel's pid_max limit.
    let stale = root.join("partita-2147483000");
    std::fs::create_dir_all(stale.join("P1")).unwrap();
    let sys = CgroupSystem::detect().unwrap();
    drop(run);
    let again = RunCgroups::create(&sys).unwrap();
    assert!(!stale.exists(), "stale hierarchy {} must be removed", stale.display());
    drop(again);
}

#[test]
fn signal_gate_stops_before_exec_and_stops_a_running_program() {
    let Some(run) = privileged("signal_gate_stops_before_exec_and_stops_a_running_program") else { return };
    let cg = run.partition("signals", None).unwrap();
    let (ctl, bell) = shared_fds();
    let mut spec = sh("echo started; while :; do :; done", &ctl, &bell, Some(&cg));
    spec.cpus = vec![0];
    let Spawned { mut process, stdout, .. } = backend::spawn(&spec).unwrap();
    let gate = backend::SignalGate::new(&process).unwrap();
    backend::frozen_to_stopped(&gate, &cg).unwrap();
    assert!(!cg.is_frozen().unwrap());
    assert!(gate.is_stopped().unwrap());
    assert_eq!(process.exec_state(Duration::from_millis(200)).unwrap(), ExecState::Pending, "stopped before execve");
    gate.release().unwrap();
    assert_eq!(process.exec_state(Duration::from_secs(20)).unwrap(), ExecState::Started);
    let mut line = [0u8; 8];
    let mut out = stdout;
    out.read_exact(&mut line).unwrap();
    assert_eq!(&line, b"started\n");
    let pid = process.pid();
    let t0 = ticks(pid);
    wait_until("the busy loop to run", || ticks(pid) > t0 + 3);
    assert_eq!(gate.stop().unwrap(), backend::Stopped::Stopped);
    let stopped_at = ticks(pid);
    std::thread::sleep(Duration::from_millis(250));
    assert!(ticks(pid) <= stopped_at + 1, "CPU time must not advance while stopped");
    gate.release().unwrap();
    wait_until("CPU time to advance after SIGCONT", || ticks(pid) > stopped_at + 3);
    process.kill().unwrap();
    assert_eq!(gate.stop().unwrap(), backend::Stopped::Exited, "an exit is reported, not waited for forever");
    assert_eq!(process.wait().unwrap(), ExitStatus::Signaled(libc::SIGKILL));
}

#[test]
fn without_privileges_namespaces_degrade_with_a_warning_or_fail_under_ci() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("skipping without_privileges_namespaces_degrade_with_a_warning_or_fail_under_ci: runs only unprivileged");
        return;
    }
    let (ctl, bell) = shared_fds();
    let spec = sh("echo $$", &ctl, &bell, None);
    match backend::spawn(&spec) {
        Err(e) => {
            assert!(backend::strict(), "outside CI a missing privilege degrades: {e}");
            assert!(matches!(e, Error::MissingCapability { .. }), "{e}");
        }
        Ok(Spawned { mut process, stdout, namespaces, warnings, start, .. }) => {
            assert!(!backend::strict(), "CI=true must refuse to degrade");
            assert!(!namespaces && warnings.iter().any(|w| w.contains("namespaces")), "{warnings:?}");
            assert_eq!(start, StartState::Gated);
            process.release().unwrap();
            assert_ne!(read_all(stdout).trim(), "1");
            assert_eq!(process.wait().unwrap(), ExitStatus::Exited(0));
        }
    }
}

/// Waits for `process` to end (polling, 20 s deadline); kills it and fails the test otherwise.
fn wait_for_end(process: &mut backend::PartitionProcess, what: &str) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = process.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = process.kill();
            panic!("{what}: the program did not end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn exit_group_goes_through_the_broker_and_ends_every_thread() {
    let Some(run) = privileged("exit_group_goes_through_the_broker_and_ends_every_thread") else { return };
    let cg = run.partition("exit-group", None).unwrap();
    let (ctl, bell) = shared_fds();
    let broker = backend::sched_broker::SchedBroker::start(&[]).unwrap();
    let helper = env!("CARGO_BIN_EXE_partita-test-spin-threads");
    let mut spec = SpawnSpec::new("TEST", 7, helper, std::env::temp_dir(), ctl.as_fd(), bell.as_fd());
    spec.args = vec![OsString::from("exit"), OsString::from("3")];
    spec.cgroup = Some(&cg);
    spec.broker = Some(&broker);
    let Spawned { mut process, .. } = backend::spawn(&spec).unwrap();
    cg.thaw().unwrap();
    // The whole process ended (an exit_group refused with ENOSYS would have ended only the
    // main thread: glibc's _exit falls back to exit), with its code, and the broker saw it.
    assert_eq!(wait_for_end(&mut process, "exit_group under the broker"), ExitStatus::Exited(3));
    assert_eq!(broker.counts().exits.load(std::sync::atomic::Ordering::Relaxed), 1);
    assert_eq!(broker.counts().granted.load(std::sync::atomic::Ordering::Relaxed), 0);
}

/// A signal that ends the process goes through the broker (the seccomp filter hands it over),
/// which demotes every thread of the target first and then lets the call run: with SIGTERM
/// blocked, the program sees its threads (SCHED_BATCH before) at SCHED_OTHER before it unblocks
/// the signal and dies of it; SIGKILL ends it as sent. In its own PID namespace the program is
/// the namespace's init: the kernel drops its SIGTERM to itself, and the broker demotes nothing
/// (the program then exits with 1).
#[test]
fn a_signal_that_ends_a_process_goes_through_the_broker() {
    let Some(run) = privileged("a_signal_that_ends_a_process_goes_through_the_broker") else { return };
    let cases = [
        ("sigterm", false, ExitStatus::Signaled(libc::SIGTERM), 1),
        ("sigkill", false, ExitStatus::Signaled(libc::SIGKILL), 1),
        ("sigterm", true, ExitStatus::Exited(1), 0),
    ];
    for (k, (sig, namespaces, end, demoted)) in cases.into_iter().enumerate() {
        let cg = run.partition(&format!("signal-{k}"), None).unwrap();
        let (ctl, bell) = shared_fds();
        let broker = backend::sched_broker::SchedBroker::start(&[]).unwrap();
        let helper = env!("CARGO_BIN_EXE_partita-test-spin-threads");
        let mut spec = SpawnSpec::new("TEST", 7, helper, std::env::temp_dir(), ctl.as_fd(), bell.as_fd());
        spec.args = vec![OsString::from("signal"), OsString::from(sig)];
        spec.cgroup = Some(&cg);
        spec.broker = Some(&broker);
        spec.namespaces = namespaces;
        let Spawned { mut process, .. } = backend::spawn(&spec).unwrap();
        cg.thaw().unwrap();
        let what = format!("{sig}, namespaces {namespaces}");
        assert_eq!(wait_for_end(&mut process, &what), end, "{what}");
        let counts = broker.counts();
        assert_eq!(counts.signals.load(std::sync::atomic::Ordering::Relaxed), 1, "{what}");
        assert_eq!(counts.signal_demotions.load(std::sync::atomic::Ordering::Relaxed), demoted, "{what}");
    }
}

/// `kcmp(KCMP_VM)`: 0 when both processes use the same address space.
fn same_memory(a: i32, b: i32) -> bool {
    const KCMP_VM: libc::c_long = 1;
    // SAFETY: plain system call on two pids; no memory is passed.
    let r = unsafe { libc::syscall(libc::SYS_kcmp, a as libc::c_long, b as libc::c_long, KCMP_VM, 0usize, 0usize) };
    assert!(r >= 0, "kcmp: {}", std::io::Error::last_os_error());
    r == 0
}

/// A program started from a partition's spawner thread runs on the module's memory until its
/// `execve` (nothing of the module is copied: backend/spawner.rs) and on its own after it; the
/// same spawner starts the next program once the first has gone, also after a failed exec.
#[test]
fn a_spawner_starts_programs_on_the_module_memory_until_execve() {
    let Some(run) = privileged("a_spawner_starts_programs_on_the_module_memory_until_execve") else { return };
    let cg = run.partition("vm-spawn", None).unwrap();
    let spawner = backend::Spawner::new(&cg, &[0], None).unwrap();
    let (ctl, bell) = shared_fds();
    let me = std::process::id() as i32;
    for round in 0..3 {
        let mut spec = sh(&format!("echo round {round}"), &ctl, &bell, Some(&cg));
        spec.spawner = Some(&spawner);
        let Spawned { mut process, stdout, start, namespaces, .. } = backend::spawn(&spec).unwrap();
        assert!(namespaces, "namespaces expected as root");
        assert_eq!(start, StartState::Frozen);
        assert!(same_memory(me, process.pid()), "round {round}: before execve the child must share the module's memory");
        cg.thaw().unwrap();
        assert_eq!(process.exec_state(Duration::from_secs(20)).unwrap(), ExecState::Started);
        assert_eq!(read_all(stdout).trim(), format!("round {round}"));
        assert_eq!(process.wait().unwrap(), ExitStatus::Exited(0));
    }
    // A failed exec ends the child on the module's memory; the spawner still serves.
    let path = std::env::temp_dir().join(format!("partita-vm-bad-interp-{}", std::process::id()));
    std::fs::write(&path, b"#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut spec = SpawnSpec::new("X", 1, &path, std::env::temp_dir(), ctl.as_fd(), bell.as_fd());
    spec.cgroup = Some(&cg);
    spec.spawner = Some(&spawner);
    let mut spawned = backend::spawn(&spec).unwrap();
    cg.thaw().unwrap();
    let err = spawned.process.check_exec(Duration::from_secs(20)).expect_err("exec must fail");
    std::fs::remove_file(&path).unwrap();
    assert_eq!(err.raw_os_error(), Some(libc::ENOENT), "{err}");
    assert_eq!(spawned.process.wait().unwrap(), ExitStatus::Exited(127));
    let mut spec = sh("echo after", &ctl, &bell, Some(&cg));
    spec.spawner = Some(&spawner);
    let Spawned { mut process, stdout, .. } = backend::spawn(&spec).unwrap();
    cg.thaw().unwrap();
    assert_eq!(read_all(stdout).trim(), "after");
    assert_eq!(process.wait().unwrap(), ExitStatus::Exited(0));
}

/// A child waiting for its first window holds none of the module's other descriptors, only the
/// program's, its status and gate pipes and its seccomp listener: copies would keep another
/// partition's pipes open while it waits, so the module would see no end of file there.
#[test]
fn a_waiting_child_holds_none_of_the_module_descriptors() {
    let Some(run) = privileged("a_waiting_child_holds_none_of_the_module_descriptors") else { return };
    let cg = run.partition("fd-spawn", None).unwrap();
    let spawner = backend::Spawner::new(&cg, &[0], None).unwrap();
    let (ctl, bell) = shared_fds();
    // Another partition's output pipe, as the module holds it.
    let mut ends = [0; 2];
    // SAFETY: `ends` has room for the two descriptors.
    assert_eq!(unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both were just created and are owned by nobody else.
    let other = unsafe { [OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])] };
    let pipe = std::fs::read_link(format!("/proc/self/fd/{}", ends[0])).unwrap();
    for (how, spawner) in [("spawner thread", Some(&spawner)), ("fork-like clone", None)] {
        let mut spec = sh("exit 0", &ctl, &bell, Some(&cg));
        spec.spawner = spawner;
        let Spawned { mut process, start, .. } = backend::spawn(&spec).unwrap();
        assert_eq!(start, StartState::Frozen);
        let held: Vec<PathBuf> = std::fs::read_dir(format!("/proc/{}/fd", process.pid()))
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .collect();
        assert!(!held.contains(&pipe), "{how}: the waiting child holds another partition's pipe: {held:?}");
        // 0-4 (null, stdout, stderr, control, doorbell), status, gate, seccomp listener.
        assert!(held.len() <= 8, "{how}: the waiting child holds {} descriptors: {held:?}", held.len());
        cg.thaw().unwrap();
        assert_eq!(process.wait().unwrap(), ExitStatus::Exited(0));
    }
    drop(other);
}
