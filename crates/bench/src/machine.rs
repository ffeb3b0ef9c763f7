//! What a result was measured on: host name, CPU model, kernel, core count, git revision.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    pub machine: String,
    pub cpu_model: String,
    pub kernel: String,
    pub cores: i64,
    pub git_revision: String,
}

impl MachineInfo {
    /// This machine now; unknown pieces read "unknown".
    pub fn current() -> MachineInfo {
        let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into());
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        MachineInfo {
            machine: read("/proc/sys/kernel/hostname"),
            cpu_model,
            kernel: read("/proc/sys/kernel/osrelease"),
            cores: std::thread::available_parallelism().map(|n| n.get() as i64).unwrap_or(1),
            git_revision: git_revision(),
        }
    }
}

/// `git describe`-like revision of the working directory's checkout (or the source tree this
/// binary was built from), with `-dirty` when it has uncommitted changes.
fn git_revision() -> String {
    let git = |dir: &str, args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    for dir in [".", env!("CARGO_MANIFEST_DIR")] {
        if let Some(rev) = git(dir, &["rev-parse", "--short=12", "HEAD"]) {
            let dirty = git(dir, &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            return if dirty { format!("{rev}-dirty") } else { rev };
        }
    }
    "unknown".into()
}

/// Now as UTC RFC 3339 (seconds).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Whether this process may run modules (cgroups, real-time priorities).
pub fn privileged() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_now_is_rfc3339() {
        let s = super::utc_now();
        assert_eq!(s.len(), 20, "{s}");
        assert!(s.starts_with("20") && s.ends_with('Z') && &s[10..11] == "T", "{s}");
    }
}
