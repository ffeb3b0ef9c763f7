//! What a partition program may see and be (parent side): its own unprivileged identity, a
//! read-only view of the host's files with a private writable data directory, and the
//! resource limits of its configuration. The child applies it before `execve`
//! (`spawn_confine.rs`); docs/isolation.md, "Files, identity and limits".

use super::{Error, Result};
use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Partition identifier N runs as uid and gid `PARTITION_ID_BASE + N`: above the ranges
/// distributions hand out to people (1000..60000) and to systemd's dynamic users
/// (61184..65519 stops short of it only for small identifiers, so the band starts at 64000
/// where no package creates accounts), distinct per partition so that one partition cannot
/// signal, trace or read another's files.
pub const PARTITION_ID_BASE: u32 = 64000;

/// Where the run's data directories go: `<DATA_ROOT>/<module pid>/<partition name>`.
pub const DATA_ROOT: &str = "/run/partita";

/// The uid (= gid) partition `id` runs as, or an error naming the identifier when it would not
/// be a valid, unprivileged id (the kernel reserves `u32::MAX`; 65534 is "nobody").
pub fn partition_uid(id: u32) -> Result<u32> {
    match PARTITION_ID_BASE.checked_add(id) {
        Some(uid) if uid != u32::MAX && uid != 65534 => Ok(uid),
        _ => Err(Error::Unsupported(format!(
            "PartitionIdentifier {id} gives no usable uid ({PARTITION_ID_BASE} + identifier must stay below {} and not be 65534)",
            u32::MAX
        ))),
    }
}

/// A host path bound into the partition's view (`<pt:Mount>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    pub source: PathBuf,
    pub target: PathBuf,
    pub writable: bool,
}

/// How one partition program is confined.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// uid and gid it runs as (real, effective and saved), no supplementary groups.
    pub uid: u32,
    pub gid: u32,
    /// Its private writable directory: working directory, `$HOME` and `$TMPDIR`.
    pub data_dir: PathBuf,
    /// Extra bind mounts, applied in order after the read-only view is in place.
    pub mounts: Vec<Bind>,
    /// RLIMIT_NOFILE (soft and hard).
    pub max_open_files: u32,
}

/// The data directories of one run: `/run/partita/<module pid>` (mode 0711: partitions can
/// reach their own directory but not list the others), removed with everything in it when
/// dropped (the run ends normally, on SIGTERM and Ctrl-C alike). `/run/partita` itself stays:
/// other runs, and other users of that directory, may be using it at the same moment.
#[derive(Debug)]
pub struct DataDirs {
    root: PathBuf,
}

impl DataDirs {
    /// Creates this run's directory (removing a leftover of a dead module with our pid).
    pub fn create() -> Result<DataDirs> {
        Self::create_in(Path::new(DATA_ROOT))
    }

    /// [`DataDirs::create`] below another base (tests).
    pub fn create_in(base: &Path) -> Result<DataDirs> {
        let io = |what: &str, p: &Path, e: io::Error| Error::io(format!("{what} {}", p.display()), e);
        fs::DirBuilder::new().recursive(true).mode(0o755).create(base).map_err(|e| io("creating", base, e))?;
        clean_stale(base);
        let root = base.join(std::process::id().to_string());
        let _ = fs::remove_dir_all(&root);
        fs::DirBuilder::new().mode(0o711).create(&root).map_err(|e| io("creating", &root, e))?;
        fs::set_permissions(&root, fs::Permissions::from_mode(0o711)).map_err(|e| io("setting the mode of", &root, e))?;
        Ok(DataDirs { root })
    }

    /// This run's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates (or empties nothing: keeps across restarts) partition `name`'s directory,
    /// owned by `uid:gid`, mode 0700.
    pub fn partition(&self, name: &str, uid: u32, gid: u32) -> Result<PathBuf> {
        let leaf: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
        let leaf = if leaf.is_empty() || leaf.starts_with('.') { format!("p_{leaf}") } else { leaf };
        let dir = self.root.join(leaf);
        let io = |what: &str, e: io::Error| Error::io(format!("{what} the data directory {} of partition {name}", dir.display()), e);
        match fs::DirBuilder::new().mode(0o700).create(&dir) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(io("creating", e)),
            _ => {}
        }
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).map_err(|e| io("setting the mode of", e))?;
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).map_err(|e| io("handing over", e))?;
        Ok(dir)
    }
}

impl Drop for DataDirs {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.root)
            && e.kind() != io::ErrorKind::NotFound
        {
            eprintln!("partita: cannot remove the partitions' data directories {}: {e}", self.root.display());
        }
    }
}

/// Removes the data directories of modules that are gone (killed by SIGKILL).
fn clean_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else { return };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if pid != std::process::id() as i32 && !super::sys::pid_alive(pid) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// Kind of mount point the child creates for a bind whose target is missing (only inside
/// the partition's private `/tmp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountPoint {
    Exists,
    Dir,
    File,
}

/// A [`Bind`] prepared for the child (C strings; no allocation after clone).
pub(crate) struct ChildBind {
    pub(crate) source: CString,
    pub(crate) target: CString,
    pub(crate) writable: bool,
    pub(crate) create: MountPoint,
    /// The child's detached copy of the source (`open_tree`), taken before its own mounts
    /// (its private `/tmp`, ...) can hide the host path.
    pub(crate) tree: std::cell::Cell<i32>,
}

/// [`Confinement`] prepared for the child.
pub(crate) struct ChildConfine {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) data_dir: CString,
    pub(crate) binds: Vec<ChildBind>,
    pub(crate) max_open_files: u64,
}

fn cstring(p: &Path, what: &str) -> Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| Error::Unsupported(format!("{what} {} contains a NUL byte", p.display())))
}

/// Whether bind `b` can be made: its source exists, its target exists or lies in the
/// partition's private `/tmp` (where the child creates it: the rest of the view is read-only).
pub fn check_bind(b: &Bind) -> Result<MountPoint> {
    let meta = fs::metadata(&b.source).map_err(|e| Error::io(format!("source {}", b.source.display()), e))?;
    if b.target.starts_with("/tmp") {
        // The partition's /tmp is a fresh tmpfs: the host's paths there do not exist in it.
        Ok(if meta.is_dir() { MountPoint::Dir } else { MountPoint::File })
    } else if b.target.exists() {
        Ok(MountPoint::Exists)
    } else {
        let why = "it does not exist, and the partition's view is read-only (only targets in /tmp are created)";
        Err(Error::io(format!("target {}", b.target.display()), io::Error::new(io::ErrorKind::NotFound, why)))
    }
}

impl Confinement {
    /// Checks the binds against the host (sources exist; targets exist or lie in `/tmp`) and
    /// prepares the child's copy.
    pub(crate) fn prepare(&self) -> Result<ChildConfine> {
        let mut binds = Vec::new();
        for b in &self.mounts {
            let create = check_bind(b)?;
            binds.push(ChildBind {
                source: cstring(&b.source, "bind mount source")?,
                target: cstring(&b.target, "bind mount target")?,
                writable: b.writable,
                create,
                tree: std::cell::Cell::new(-1),
            });
        }
        Ok(ChildConfine {
            uid: self.uid,
            gid: self.gid,
            data_dir: cstring(&self.data_dir, "data directory")?,
            binds,
            max_open_files: self.max_open_files as u64,
        })
    }
}
