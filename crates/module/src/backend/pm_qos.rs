//! CPU wake-up latency requests (PM QoS) for a run.
//!
//! A CPU that idles in a deep state is slow to wake: here (haltpoll idle driver) a timer wake-up
//! at SCHED_FIFO costs ~37 us without a request and ~16 us with one, and a cross-core queuing
//! message waits on the receiving CPU's exit from idle the same way. Every real-time Linux
//! set-up asks for zero wake-up latency (cyclictest holds /dev/cpu_dma_latency while it runs),
//! so a run does too, only on its own CPUs where the kernel offers per-CPU requests:
//!
//! - per CPU: `/sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us`. The kernel reads
//!   `n/a` as "no resume latency acceptable" (zero) and `0` as "no constraint" (sic). The value
//!   found is written back at the end; because the file outlives the process, it is also kept in
//!   `/run/partita/cpuN.pm-qos` (with the run's pid) while the run holds the CPU, so that a run
//!   killed before it could restore it is repaired by its guardian process ([`restore_left_by`])
//!   or by the next run on that CPU;
//! - otherwise `/dev/cpu_dma_latency` (all CPUs): 0 written to a descriptor held for the run;
//!   the kernel drops the request when the descriptor closes, even if the run is killed.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const SYSFS_CPUS: &str = "/sys/devices/system/cpu";
const STATE_DIR: &str = "/run/partita";
const CPU_DMA_LATENCY: &str = "/dev/cpu_dma_latency";
/// What the per-CPU file takes for "zero wake-up latency".
const ZERO_LATENCY: &str = "n/a";

/// A zero wake-up latency request, held until dropped.
#[derive(Debug)]
pub struct LatencyRequest {
    /// Per CPU: (cpu, the file, the value found, the state file that remembers it).
    per_cpu: Vec<(u32, PathBuf, String, PathBuf)>,
    /// The global request, when per-CPU requests are not offered.
    global: Option<File>,
}

impl LatencyRequest {
    /// Requests zero wake-up latency on `cpus` (per CPU where offered, else for all CPUs).
    pub fn hold(cpus: &[u32]) -> io::Result<LatencyRequest> {
        Self::hold_at(Path::new(SYSFS_CPUS), Path::new(STATE_DIR), Path::new(CPU_DMA_LATENCY), cpus, std::process::id())
    }

    fn hold_at(sysfs: &Path, state_dir: &Path, global: &Path, cpus: &[u32], pid: u32) -> io::Result<LatencyRequest> {
        let mut req = LatencyRequest { per_cpu: Vec::new(), global: None };
        let files: Vec<(u32, PathBuf)> = cpus.iter().map(|&c| (c, resume_latency_file(sysfs, c))).collect();
        if files.iter().all(|(_, f)| f.exists()) {
            std::fs::create_dir_all(state_dir)?;
            for (cpu, file) in files {
                let state = state_file(state_dir, cpu);
                // A state file left by a killed run holds the value from before that run.
                let found = match saved_value(&state) {
                    Some(saved) => saved,
                    None => std::fs::read_to_string(&file)?.trim().to_string(),
                };
                std::fs::write(&state, format!("{found}\n{pid}\n"))?;
                // Pushed before the write, so that a failure below still restores this CPU.
                req.per_cpu.push((cpu, file.clone(), found, state));
                std::fs::write(&file, ZERO_LATENCY)?;
            }
        } else {
            let mut f = std::fs::OpenOptions::new().write(true).open(global)?;
            f.write_all(&0i32.to_ne_bytes())?;
            req.global = Some(f);
        }
        Ok(req)
    }

    /// For messages: what is held.
    pub fn describe(&self) -> String {
        if self.global.is_some() {
            format!("{CPU_DMA_LATENCY} (all CPUs)")
        } else {
            let cpus: Vec<String> = self.per_cpu.iter().map(|(c, ..)| c.to_string()).collect();
            format!("CPU {} (per-CPU pm_qos_resume_latency_us)", cpus.join(", "))
        }
    }
}

impl Drop for LatencyRequest {
    fn drop(&mut self) {
        for (cpu, file, found, state) in &self.per_cpu {
            match std::fs::write(file, found) {
                Ok(()) => {
                    let _ = std::fs::remove_file(state);
                }
                Err(e) => eprintln!("partita: warning: cannot restore the wake-up latency request of CPU {cpu} to {found:?}: {e}"),
            }
        }
        // The global request ends when its descriptor closes.
    }
}

fn resume_latency_file(sysfs: &Path, cpu: u32) -> PathBuf {
    sysfs.join(format!("cpu{cpu}/power/pm_qos_resume_latency_us"))
}

fn state_file(state_dir: &Path, cpu: u32) -> PathBuf {
    state_dir.join(format!("cpu{cpu}.pm-qos"))
}

/// The value a state file keeps (its first line), if any.
fn saved_value(state: &Path) -> Option<String> {
    let text = std::fs::read_to_string(state).ok()?;
    text.lines().next().map(str::trim).filter(|v| !v.is_empty()).map(str::to_string)
}

/// Restores the per-CPU requests that run `pid` (killed) left; returns what it restored. The
/// run's guardian calls this once the module is gone.
pub fn restore_left_by(pid: i32) -> Vec<String> {
    restore_left_by_at(Path::new(SYSFS_CPUS), Path::new(STATE_DIR), pid)
}

fn restore_left_by_at(sysfs: &Path, state_dir: &Path, pid: i32) -> Vec<String> {
    let mut done = Vec::new();
    let Ok(entries) = std::fs::read_dir(state_dir) else { return done };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(cpu) = name.to_str().and_then(|n| n.strip_prefix("cpu")?.strip_suffix(".pm-qos")?.parse::<u32>().ok()) else { continue };
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        let mut lines = text.lines();
        let (Some(value), Some(owner)) = (lines.next(), lines.next()) else { continue };
        if owner.trim().parse::<i32>().ok() == Some(pid) && std::fs::write(resume_latency_file(sysfs, cpu), value.trim()).is_ok() {
            let _ = std::fs::remove_file(e.path());
            done.push(format!("CPU {cpu} wake-up latency request restored to {}", value.trim()));
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_sysfs(dir: &Path, cpus: &[u32], value: &str) {
        for &c in cpus {
            let f = resume_latency_file(dir, c);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, value).unwrap();
        }
    }

    fn value(dir: &Path, cpu: u32) -> String {
        std::fs::read_to_string(resume_latency_file(dir, cpu)).unwrap()
    }

    #[test]
    fn per_cpu_requests_are_held_and_restored() {
        let t = tempfile::tempdir().unwrap();
        let (sysfs, state) = (t.path().join("sys"), t.path().join("run"));
        fake_sysfs(&sysfs, &[0, 1, 2], "0");
        let req = LatencyRequest::hold_at(&sysfs, &state, &t.path().join("nodev"), &[1, 2], 7).unwrap();
        assert_eq!((value(&sysfs, 0), value(&sysfs, 1), value(&sysfs, 2)), ("0".into(), "n/a".into(), "n/a".into()));
        assert_eq!(std::fs::read_to_string(state_file(&state, 1)).unwrap(), "0\n7\n");
        assert!(req.describe().contains("CPU 1, 2"), "{}", req.describe());
        drop(req);
        assert_eq!((value(&sysfs, 1), value(&sysfs, 2)), ("0".into(), "0".into()));
        assert!(!state_file(&state, 1).exists(), "the state file goes with the request");
    }

    #[test]
    fn a_killed_run_is_repaired_from_its_state_file() {
        let t = tempfile::tempdir().unwrap();
        let (sysfs, state) = (t.path().join("sys"), t.path().join("run"));
        fake_sysfs(&sysfs, &[3], "20");
        let req = LatencyRequest::hold_at(&sysfs, &state, &t.path().join("nodev"), &[3], 10).unwrap();
        // Killed: no Drop. The next run must not take "n/a" for the value to restore.
        std::mem::forget(req);
        let next = LatencyRequest::hold_at(&sysfs, &state, &t.path().join("nodev"), &[3], 11).unwrap();
        drop(next);
        assert_eq!(value(&sysfs, 3), "20");
        // And the guardian's repair, after another killed run: only that run's CPUs.
        std::mem::forget(LatencyRequest::hold_at(&sysfs, &state, &t.path().join("nodev"), &[3], 12).unwrap());
        assert_eq!(value(&sysfs, 3), "n/a");
        assert!(restore_left_by_at(&sysfs, &state, 13).is_empty(), "another run's request stays");
        assert_eq!(value(&sysfs, 3), "n/a");
        assert_eq!(restore_left_by_at(&sysfs, &state, 12).len(), 1);
        assert_eq!(value(&sysfs, 3), "20");
    }

    #[test]
    fn without_per_cpu_files_the_global_request_is_written_and_held() {
        let t = tempfile::tempdir().unwrap();
        let global = t.path().join("cpu_dma_latency");
        std::fs::write(&global, "").unwrap();
        let req = LatencyRequest::hold_at(&t.path().join("sys"), &t.path().join("run"), &global, &[0], 1).unwrap();
        assert_eq!(std::fs::read(&global).unwrap(), 0i32.to_ne_bytes());
        assert!(req.describe().contains("cpu_dma_latency"));
    }
}
