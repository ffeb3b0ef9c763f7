//! Cgroup layout detection, freezing (v2 and the v1 fallback), per-core freezing through
//! threaded sub-cgroups, and killing. Tests that need root and cgroups skip with a message,
//! except under `CI=true`, where they fail.

use partita_module::backend::process::{CgroupLayout, CgroupSystem, FreezeWait, FreezerKind, PartitionCgroup, RunCgroups};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const HYBRID_MOUNTS: &str = "\
30 23 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
32 30 0:28 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
33 30 0:29 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
34 30 0:30 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
const HYBRID_OWN: &str = "9:name=systemd:/\n6:freezer:/\n4:memory:/sandbox/abc\n0::/\n";

#[test]
fn detects_hybrid_unified_and_legacy_layouts() {
    let s = CgroupSystem::from_tables(HYBRID_MOUNTS, HYBRID_OWN).unwrap();
    assert_eq!(s.layout, CgroupLayout::Hybrid);
    assert_eq!(s.v2_root.as_deref(), Some(Path::new("/sys/fs/cgroup/unified")));
    assert_eq!(s.v1_memory.as_deref(), Some(Path::new("/sys/fs/cgroup/memory/sandbox/abc")));
    assert_eq!(s.v1_freezer.as_deref(), Some(Path::new("/sys/fs/cgroup/freezer")));

    let unified = "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
    let s = CgroupSystem::from_tables(unified, "0::/user.slice\n").unwrap();
    assert_eq!(s.layout, CgroupLayout::Unified);
    assert_eq!(s.v2_root.as_deref(), Some(Path::new("/sys/fs/cgroup")));
    assert!(s.v1_memory.is_none() && s.v1_freezer.is_none() && s.v1_cpuset.is_none());

    // The v1 cpuset hierarchy of a hybrid machine (partitions are confined to their CPUs there).
    let with_cpuset = format!("{HYBRID_MOUNTS}36 30 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n");
    let s = CgroupSystem::from_tables(&with_cpuset, "3:cpuset:/\n").unwrap();
    assert_eq!(s.v1_cpuset.as_deref(), Some(Path::new("/sys/fs/cgroup/cpuset")));

    let legacy: String = HYBRID_MOUNTS.lines().filter(|l| !l.contains("cgroup2")).map(|l| format!("{l}\n")).collect();
    let s = CgroupSystem::from_tables(&legacy, HYBRID_OWN).unwrap();
    assert_eq!(s.layout, CgroupLayout::Legacy);
    assert!(s.v2_root.is_none());

    // A container's v1 mount whose root is the container's own cgroup.
    let nested = "40 30 0:27 /docker/x /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
    let s = CgroupSystem::from_tables(nested, "4:memory:/docker/x\n").unwrap();
    assert_eq!(s.v1_memory.as_deref(), Some(Path::new("/sys/fs/cgroup/memory")));
    assert!(CgroupSystem::from_tables("1 0 0:1 / / rw - ext4 /dev/vda rw\n", "").is_none());
}

fn privileged(test: &str, sys: impl FnOnce(CgroupSystem) -> CgroupSystem, need: FreezerKind) -> Option<RunCgroups> {
    let root = partita_testkit::is_root();
    let run = if root {
        CgroupSystem::detect().and_then(|s| RunCgroups::create(&sys(s))).map_err(|e| e.to_string())
    } else {
        Err("not root".into())
    };
    match run {
        Ok(run) if run.freezer == need => Some(run),
        other => {
            let why = other.map(|r| format!("freezer is {:?}: {:?}", r.freezer, r.warnings)).unwrap_or_else(|e| e);
            partita_testkit::require(&format!("root and a {need:?} freezer for {test} ({why})"), false);
            None
        }
    }
}

fn busy_child() -> Child {
    Command::new("/bin/sh").args(["-c", "while :; do :; done"]).stdin(Stdio::null()).spawn().expect("spawn /bin/sh")
}

fn ticks(path: &str) -> u64 {
    let stat = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let f: Vec<&str> = stat[stat.rfind(')').expect("comm") + 2..].split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Freezing stops CPU time, thawing resumes it.
fn check_freeze_thaw(cg: &PartitionCgroup, stat: &str, wait: FreezeWait) {
    let t0 = ticks(stat);
    wait_until(&format!("{wait:?}: the child to use CPU time"), || ticks(stat) > t0 + 3);
    cg.freeze_with(wait, Duration::from_secs(10)).unwrap_or_else(|e| panic!("{wait:?}: {e}"));
    assert!(cg.is_frozen().unwrap());
    let frozen = ticks(stat);
    std::thread::sleep(Duration::from_millis(250));
    // /proc reports CPU time in 10 ms ticks scaled from the exact runtime, so one tick may
    // appear by rounding; a task still running would gain about 25 in these 250 ms.
    let after = ticks(stat);
    assert!(after <= frozen + 1, "{wait:?}: CPU time advanced while frozen ({frozen} -> {after} ticks)");
    cg.thaw().unwrap();
    wait_until(&format!("{wait:?}: CPU time to advance after the thaw (events: {:?})", cg.is_frozen()), || ticks(stat) > frozen + 3);
    assert!(!cg.is_frozen().unwrap());
}

#[test]
fn every_wait_mode_freezes_completely_and_kill_all_empties() {
    let Some(run) = privileged("every_wait_mode_freezes_completely_and_kill_all_empties", |s| s, FreezerKind::V2) else { return };
    let cg = run.partition("modes", None).unwrap();
    let mut child = busy_child();
    cg.add_pid(child.id() as i32, false).unwrap();
    let stat = format!("/proc/{}/stat", child.id());
    for wait in [FreezeWait::Poll, FreezeWait::Inotify, FreezeWait::Sleep { us: 20 }, FreezeWait::Spin, FreezeWait::default()] {
        check_freeze_thaw(&cg, &stat, wait);
    }
    cg.request_freeze().unwrap();
    cg.kill_all(Duration::from_secs(10)).unwrap();
    assert!(cg.pids().unwrap().is_empty());
    assert!(child.wait().is_ok());
}

#[test]
fn v1_freezer_fallback_freezes_and_thaws() {
    let force_v1 = |s: CgroupSystem| CgroupSystem { layout: CgroupLayout::Legacy, v2_root: None, ..s };
    let Some(run) = privileged("v1_freezer_fallback_freezes_and_thaws", force_v1, FreezerKind::V1) else { return };
    let cg = run.partition("v1", Some(64 << 20)).unwrap();
    assert_eq!(cg.freezer_kind(), FreezerKind::V1);
    let mut child = busy_child();
    cg.add_pid(child.id() as i32, false).unwrap();
    check_freeze_thaw(&cg, &format!("/proc/{}/stat", child.id()), FreezeWait::default());
    cg.request_freeze().unwrap();
    let dirs: Vec<_> = cg.paths().iter().map(|p| p.to_path_buf()).collect();
    drop(cg);
    assert!(child.wait().is_ok(), "a v1-frozen child must still be killed by the clean-up");
    drop(run);
    assert!(dirs.iter().all(|d| !d.exists()), "{dirs:?} must be removed");
}

/// Run with PARTITA_TEST_HELPER=spin2: two threads named spin-a and spin-b spin forever.
#[test]
fn threaded_core_cgroups_freeze_one_core_while_the_other_runs() {
    let Some(run) = privileged("threaded_core_cgroups_freeze_one_core_while_the_other_runs", |s| s, FreezerKind::V2) else { return };
    let cg = run.partition("multicore", None).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_partita-test-spin-threads")).stdout(Stdio::null()).spawn().unwrap();
    let pid = child.id();
    cg.add_pid(pid as i32, false).unwrap();
    let tid = |name: &str| -> Option<i32> {
        std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten().find_map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            (comm.trim() == name).then(|| t.file_name().to_str()?.parse().ok()).flatten()
        })
    };
    wait_until("the helper's threads", || tid("spin-a").is_some() && tid("spin-b").is_some());
    let (a, b) = (tid("spin-a").unwrap(), tid("spin-b").unwrap());
    let (core0, core1) = (cg.core(0, None).unwrap(), cg.core(1, None).unwrap());
    core0.add_thread(a).unwrap();
    core1.add_thread(b).unwrap();
    assert_eq!(core0.threads().unwrap(), vec![a]);
    let (stat_a, stat_b) = (format!("/proc/{pid}/task/{a}/stat"), format!("/proc/{pid}/task/{b}/stat"));

    core0.request_freeze().unwrap();
    core0.wait_frozen(FreezeWait::default(), Duration::from_secs(10)).unwrap();
    assert!(!cg.is_frozen().unwrap(), "only the core-0 threads are frozen");
    let (fa, fb) = (ticks(&stat_a), ticks(&stat_b));
    wait_until("the core-1 thread to keep running", || ticks(&stat_b) > fb + 10);
    // One tick of /proc rounding at most; a running thread would gain many.
    assert!(ticks(&stat_a) <= fa + 1, "the frozen core-0 thread must not run");
    core0.thaw().unwrap();
    wait_until("the core-0 thread to run again", || ticks(&stat_a) > fa + 3);

    // Freezing the whole partition covers its threaded children.
    cg.freeze(Duration::from_secs(10)).unwrap();
    let (fa, fb) = (ticks(&stat_a), ticks(&stat_b));
    std::thread::sleep(Duration::from_millis(250));
    assert_eq!((ticks(&stat_a), ticks(&stat_b)), (fa, fb));
    drop((core0, core1));
    cg.kill_all(Duration::from_secs(10)).unwrap();
    assert!(child.wait().is_ok());
}
