//! A fake cgroup v2 file system for unit tests of the layout logic on machines that cannot
//! boot a pure cgroup v2 system (this one is hybrid): a directory tree whose root holds
//! `cgroup.fake`. A directory made below it gets the interface files the kernel would create
//! (`cgroup.controllers` from the parent's `cgroup.subtree_control`), and writes follow the
//! kernel's rules that the layout logic depends on. Untested here: the kernel's own checks
//! (permissions, the no-internal-process rule, what a threaded cgroup may enable).

use super::Result;
use super::cgroup::{CgroupSystem, CpusetKind, FreezerKind, MemoryLimitKind, PidsKind, RunCgroups};
use std::fs;
use std::path::{Path, PathBuf};

const MARKER: &str = "cgroup.fake";

fn is_fake(dir: &Path) -> bool {
    dir.join(MARKER).exists()
}

/// Creates a fake v2 root offering `controllers`.
pub(crate) fn root(controllers: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (file, value) in [(MARKER, ""), ("cgroup.controllers", controllers), ("cgroup.subtree_control", "")] {
        fs::write(dir.path().join(file), value).unwrap();
    }
    dir
}

/// Called after a cgroup directory is made: the kernel's interface files.
pub(crate) fn populate(dir: &Path) {
    let Some(parent) = dir.parent().filter(|p| is_fake(p)) else { return };
    let enabled = fs::read_to_string(parent.join("cgroup.subtree_control")).unwrap_or_default();
    let files = vec![
        (MARKER, String::new()),
        ("cgroup.controllers", enabled.clone()),
        ("cgroup.subtree_control", String::new()),
        ("cgroup.type", "domain".into()),
        ("cgroup.procs", String::new()),
        ("cgroup.threads", String::new()),
        ("cgroup.freeze", "0".into()),
        ("cgroup.events", "populated 0\\nfrozen 0\\n".into()),
        ("cgroup.kill", String::new()),
    ];
    for (file, value) in files {
        fs::write(dir.join(file), value.replace("\\n", "\n")).unwrap();
    }
    controller_files(dir, &enabled);
}

/// The interface files of the controllers `enabled` for `dir` (by its parent), as the kernel
/// adds them when a controller is enabled.
fn controller_files(dir: &Path, enabled: &str) {
    for (ctl, files) in [
        ("memory", &[("memory.max", "max"), ("memory.swap.max", "max")][..]),
        ("cpuset", &[("cpuset.cpus", ""), ("cpuset.mems", "")]),
        ("pids", &[("pids.max", "max")]),
    ] {
        if enabled.split_whitespace().any(|e| e == ctl) {
            for (file, value) in files {
                if !dir.join(file).exists() {
                    fs::write(dir.join(file), value).unwrap();
                }
            }
        }
    }
}

/// Called before a cgroup directory is removed: the kernel's files go with it.
pub(crate) fn unpopulate(dir: &Path) {
    if !is_fake(dir) {
        return;
    }
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// A write into the fake tree, with the kernel's semantics; None: not a fake file.
pub(crate) fn write(path: &Path, value: &str) -> Option<Result<()>> {
    let dir = path.parent().filter(|d| is_fake(d))?;
    let file = path.file_name()?.to_str()?;
    let err = |what: &str| {
        Some(Err(super::Error::io(format!("writing {value:?} to {}", path.display()), std::io::Error::other(what.to_string()))))
    };
    match file {
        "cgroup.subtree_control" => {
            let offered = fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
            let mut on: Vec<String> = fs::read_to_string(path).unwrap_or_default().split_whitespace().map(String::from).collect();
            for token in value.split_whitespace() {
                let (add, name) = token.split_at(1);
                if !offered.split_whitespace().any(|c| c == name) {
                    return err("ENOENT: controller not offered");
                }
                on.retain(|c| c != name);
                if add == "+" {
                    on.push(name.to_string());
                }
            }
            fs::write(path, on.join(" ")).unwrap();
            // A child's cgroup.controllers is its parent's cgroup.subtree_control.
            for child in fs::read_dir(dir).unwrap().flatten().filter(|e| is_fake(&e.path())) {
                fs::write(child.path().join("cgroup.controllers"), on.join(" ")).unwrap();
                controller_files(&child.path(), &on.join(" "));
            }
            Some(Ok(()))
        }
        _ if !path.exists() => err("ENOENT"),
        // A cgroup file takes the value written, whatever was there.
        _ => {
            fs::write(path, value).unwrap();
            Some(Ok(()))
        }
    }
}

fn system(root: &Path) -> CgroupSystem {
    let mountinfo = format!("35 24 0:30 / {} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", root.display());
    CgroupSystem::from_tables(&mountinfo, "0::/user.slice/session-1.scope\n").unwrap()
}

fn read(path: PathBuf) -> String {
    fs::read_to_string(path).unwrap().trim().to_string()
}

#[test]
fn pure_v2_enables_memory_and_cpuset_through_subtree_control() {
    let root = root("cpuset cpu io memory pids");
    let sys = system(root.path());
    assert_eq!(sys.layout, super::CgroupLayout::Unified);
    let run = RunCgroups::create_with(&sys, true).unwrap();
    assert_eq!((run.freezer, run.memory, run.cpuset), (FreezerKind::V2, MemoryLimitKind::V2, CpusetKind::V2));
    assert!(run.cgroup_kill && run.warnings.is_empty(), "{:?}", run.warnings);
    assert_eq!(run.pids, PidsKind::V2);
    assert_eq!(read(root.path().join("cgroup.subtree_control")), "memory cpuset pids");
    let dir = run.v2_dir().unwrap().to_path_buf();
    assert_eq!(read(dir.join("cgroup.subtree_control")), "memory cpuset pids");

    // A partition: memory budget, task limit and CPUs in its own v2 cgroup (no v1 hierarchy).
    let mut p = run.partition_on("P 1", Some(64 << 20), &[2, 3]).unwrap();
    run.limit_tasks(&mut p, 64).unwrap();
    let pdir = p.v2_path().unwrap().to_path_buf();
    assert_eq!(pdir, dir.join("P_1"));
    assert_eq!(read(pdir.join("pids.max")), "64");
    assert_eq!((read(pdir.join("memory.max")), read(pdir.join("memory.swap.max"))), ("67108864".into(), "0".into()));
    assert_eq!(read(pdir.join("cpuset.cpus")), "2,3");
    assert_eq!(p.cpuset_kind(), CpusetKind::V2);
    assert_eq!(p.paths(), vec![pdir.as_path()]);

    // Per-core gating: threaded children with their own CPU, cpuset enabled for them (a
    // threaded controller, allowed in a cgroup that has processes), a frozen staging group.
    let core = p.core(1, Some(3)).unwrap();
    assert_eq!(read(pdir.join("core-1/cgroup.type")), "threaded");
    assert_eq!(read(pdir.join("cgroup.subtree_control")), "cpuset");
    assert_eq!(read(pdir.join("core-1/cpuset.cpus")), "3");
    let _staging = p.staging().unwrap();
    assert_eq!(read(pdir.join("staging/cgroup.freeze")), "1");
    assert!(core.placement_files().unwrap().1.is_none(), "no v1 cpuset on a pure v2 system");
}

#[test]
fn pure_v2_without_cpuset_or_memory_degrades_with_warnings() {
    let root = root("cpu io pids");
    let run = RunCgroups::create_with(&system(root.path()), false).unwrap();
    assert_eq!((run.freezer, run.memory, run.cpuset), (FreezerKind::V2, MemoryLimitKind::None, CpusetKind::None));
    assert_eq!(run.warnings.len(), 2, "{:?}", run.warnings);
    assert!(run.warnings.iter().any(|w| w.contains("cpuset")), "{:?}", run.warnings);
    // Strict (CI=true): a missing controller is an error.
    assert!(RunCgroups::create_with(&system(root.path()), true).is_err());
    let p = run.partition_on("P", None, &[1]).unwrap();
    assert_eq!(p.cpuset_kind(), CpusetKind::None);
}

#[test]
fn pure_v2_without_pids_degrades_with_a_warning_and_fails_when_strict() {
    let root = root("cpuset memory");
    let run = RunCgroups::create_with(&system(root.path()), false).unwrap();
    assert_eq!(run.pids, PidsKind::None);
    assert_eq!(run.warnings.len(), 1, "{:?}", run.warnings);
    assert!(run.warnings[0].contains("pt:MaxTasks") && run.warnings[0].contains("pids"), "{:?}", run.warnings);
    let mut p = run.partition_on("P", None, &[]).unwrap();
    run.limit_tasks(&mut p, 64).unwrap(); // nothing to enforce it with: a no-op
    assert!(RunCgroups::create_with(&system(root.path()), true).is_err());
}
