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

/// Removes the data directories of module `pid` (its guardian, once the module is gone).
pub fn remove_data_of(pid: i32) -> Option<String> {
    let dir = Path::new(DATA_ROOT).join(pid.to_string());
    fs::remove_dir_all(&dir).ok().map(|()| dir.display().to_string())
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
        // Partitions pass through it to their directories, whatever the umask or its creator said.
        let mode = fs::metadata(base).map_err(|e| io("inspecting", base, e))?.permissions().mode();
        if mode & 0o111 != 0o111 {
            fs::set_permissions(base, fs::Permissions::from_mode((mode | 0o111) & 0o7777))
                .map_err(|e| io("setting the mode of", base, e))?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn data_dirs_are_private_and_go_with_the_run() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: handing a directory to another uid needs root");
            return;
        }
        let base = tempfile::tempdir().unwrap();
        // A leftover of a module that is gone, and a file of another user of the directory.
        let stale = base.path().join(i32::MAX.to_string());
        fs::create_dir_all(stale.join("P")).unwrap();
        fs::write(base.path().join("cpu0.lock"), "1").unwrap();
        fs::set_permissions(base.path(), fs::Permissions::from_mode(0o700)).unwrap();
        let dirs = DataDirs::create_in(base.path()).unwrap();
        assert!(!stale.exists(), "the dead module's directories are removed");
        assert!(base.path().join("cpu0.lock").exists(), "other files are not ours");
        assert_eq!(fs::metadata(base.path()).unwrap().permissions().mode() & 0o111, 0o111, "partitions pass through the base");
        assert_eq!(fs::metadata(dirs.root()).unwrap().permissions().mode() & 0o777, 0o711);
        let uid = partition_uid(3).unwrap();
        let p = dirs.partition("P 1", uid, uid).unwrap();
        assert_eq!(p, dirs.root().join("P_1"));
        let meta = fs::metadata(&p).unwrap();
        assert_eq!((meta.uid(), meta.gid(), meta.permissions().mode() & 0o777), (64003, 64003, 0o700));
        fs::write(p.join("file"), "x").unwrap();
        assert_eq!(dirs.partition("P 1", uid, uid).unwrap(), p, "kept across restarts");
        assert!(p.join("file").exists());
        let root = dirs.root().to_path_buf();
        drop(dirs);
        assert!(!root.exists(), "removed with everything in it");
        assert!(base.path().exists(), "the base stays for other runs");
    }

    #[test]
    fn partition_uids_are_unprivileged_and_distinct() {
        assert_eq!(partition_uid(0).unwrap(), PARTITION_ID_BASE);
        assert_eq!(partition_uid(7).unwrap(), 64007);
        assert!(partition_uid(65534 - PARTITION_ID_BASE).is_err(), "nobody");
        assert!(partition_uid(u32::MAX - PARTITION_ID_BASE).is_err(), "(uid_t)-1");
        assert!(partition_uid(u32::MAX).is_err(), "overflow");
    }

    #[test]
    fn bind_targets_in_tmp_are_created_and_others_must_exist() {
        let src = tempfile::tempdir().unwrap();
        let bind = |target: &str| Bind { source: src.path().to_path_buf(), target: target.into(), writable: false };
        assert_eq!(check_bind(&bind("/tmp")).unwrap(), MountPoint::Dir, "the partition's /tmp is a fresh tmpfs");
        assert_eq!(check_bind(&bind("/tmp/a/b")).unwrap(), MountPoint::Dir);
        assert_eq!(check_bind(&bind("/usr")).unwrap(), MountPoint::Exists);
        assert!(check_bind(&bind("/no/such/partita/target")).unwrap_err().to_string().contains("/no/such/partita/target"));
        let missing = Bind { source: "/no/such/partita/source".into(), target: "/usr".into(), writable: false };
        assert!(check_bind(&missing).unwrap_err().to_string().contains("/no/such/partita/source"));
    }
}
