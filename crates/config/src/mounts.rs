//! Validation of `<pt:Mount>` (bind mounts into a partition's file view). The source's
//! existence is only warned about here: it is checked again, as an error, when the module
//! starts (the configuration may be checked on another machine).

use crate::diag::{Diagnostics, Rule};
use crate::model::{BindMount, Partition};
use std::collections::HashMap;
use std::path::{Component, Path};

/// Where the module puts the partitions' private data directories (`<module pid>/<name>`);
/// a bind mount may not cover them.
pub const DATA_ROOT: &str = "/run/partita";

/// Directories the module itself mounts in every partition (kernel views and devices): a bind
/// mount over or inside them would undo their confinement.
const RESERVED: [&str; 4] = ["/proc", "/sys", "/dev", DATA_ROOT];

/// Checks the mounts of partition `p` (`who` describes it in messages).
pub(crate) fn check(p: &Partition, who: &str, d: &mut Diagnostics) {
    let mut targets: HashMap<&str, u32> = HashMap::new();
    for m in &p.mounts {
        for (what, path) in [("Source", &m.source), ("Target", &m.target)] {
            if let Err(why) = plain_absolute(&path.value) {
                d.error(Rule::InvalidValue, path.span, format!("{what}=\"{}\" of <pt:Mount> in {who} {why}", path.value));
            }
        }
        let target = Path::new(&m.target.value);
        if target == Path::new("/") {
            d.error(Rule::InvalidValue, m.target.span, format!("Target=\"/\" of <pt:Mount> in {who} would replace the whole file view"));
        }
        if let Some(r) = RESERVED.iter().find(|r| target.starts_with(r)) {
            d.error(
                Rule::InvalidValue,
                m.target.span,
                format!(
                    "Target=\"{}\" of <pt:Mount> in {who} is inside {r}, which the module mounts itself; choose another path",
                    m.target.value
                ),
            );
        }
        if let Some(first) = targets.insert(m.target.value.trim_end_matches('/'), m.span.line) {
            d.error(
                Rule::Duplicate,
                m.target.span,
                format!("Target=\"{}\" of <pt:Mount> in {who} is already mounted at line {first}", m.target.value),
            );
        }
        if plain_absolute(&m.source.value).is_ok() && !Path::new(&m.source.value).exists() {
            d.warning(
                Rule::InvalidValue,
                m.source.span,
                format!(
                    "Source=\"{}\" of <pt:Mount> in {who} does not exist (yet); the module refuses to start without it",
                    m.source.value
                ),
            );
        }
    }
}

/// An absolute path without `.` or `..` components (what the module mounts is what you read).
pub fn plain_absolute(path: &str) -> Result<(), &'static str> {
    if !path.starts_with('/') {
        return Err("is not an absolute path");
    }
    if path.contains('\0') {
        return Err("contains a NUL byte");
    }
    if Path::new(path).components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)) || path.split('/').any(|c| c == ".") {
        return Err("contains . or .. components");
    }
    Ok(())
}

/// Whether a mount declared at `m` lies inside `/tmp`, where the partition's private tmpfs lets
/// the module create the mount point.
pub fn target_in_tmp(m: &BindMount) -> bool {
    Path::new(&m.target.value).starts_with("/tmp")
}
