//! Workloads: the programs that run inside partitions (or natively, as the baseline). Each is a
//! function of the `partita` binary, started as `partita bench-partition NAME ARGS...`, so a
//! module configuration names the binary itself as `pt:Executable` and nothing else needs to be
//! built. A workload reports its samples on stdout as `sample METRIC VALUE` lines (see
//! [`report_sample`]), which the experiment reads back from the partition's log.

use std::path::{Path, PathBuf};

/// A partition program.
pub struct Workload {
    pub name: &'static str,
    pub description: &'static str,
    /// Runs the program (it is the partition's initialization process); returns the exit status.
    pub main: fn(&[String]) -> i32,
}

/// Every workload, found by name by `partita bench-partition`.
pub fn workloads() -> Vec<&'static Workload> {
    crate::experiments::workloads()
}

/// Runs workload `name` with `args` (the `bench-partition` subcommand).
pub fn run_workload(name: &str, args: &[String]) -> i32 {
    match workloads().into_iter().find(|w| w.name == name) {
        Some(w) => (w.main)(args),
        None => {
            let names: Vec<&str> = workloads().iter().map(|w| w.name).collect();
            eprintln!("partita: no workload {name:?} (workloads: {})", names.join(", "));
            2
        }
    }
}

/// How to start a workload: the program and the arguments before the workload's name.
#[derive(Debug, Clone, PartialEq)]
pub struct Programs {
    pub exe: PathBuf,
    pub prefix: Vec<String>,
    /// A user's own program (`--workload-cmd`, a shell command) to measure as the workload.
    pub workload_cmd: Option<String>,
}

impl Programs {
    /// The `partita` binary running this code.
    pub fn this_binary() -> Result<Programs, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find the running binary: {e}"))?;
        Ok(Programs { exe, prefix: vec!["bench-partition".into()], workload_cmd: None })
    }

    pub fn with_exe(exe: &Path) -> Programs {
        Programs { exe: exe.to_path_buf(), prefix: vec!["bench-partition".into()], workload_cmd: None }
    }

    /// The module configuration `make` writes for programs at a stand-in executable, checked
    /// as `partita check` would (tests of the experiments' modules; panics with the diagnostics).
    #[cfg(test)]
    pub fn checked_module_xml(make: impl FnOnce(&Programs) -> String) -> String {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("partita");
        std::fs::write(&exe, "").unwrap();
        let xml = make(&Programs::with_exe(&exe));
        let checked = partita_config::check_text(&xml, dir.path());
        assert!(checked.is_valid(), "{xml}\n{:?}", checked.diagnostics);
        xml
    }

    /// All arguments after the program for workload `name`.
    pub fn args(&self, name: &str, args: &[&str]) -> Vec<String> {
        self.prefix.iter().cloned().chain(std::iter::once(name.to_string())).chain(args.iter().map(|s| s.to_string())).collect()
    }

    /// `pt:Executable="..." pt:Arguments="..."` for a partition element running workload `name`.
    pub fn xml_attributes(&self, name: &str, args: &[&str]) -> String {
        let args = self.args(name, args).join(" ");
        format!("pt:Executable=\"{}\" pt:Arguments=\"{}\"", xml_escape(&self.exe.display().to_string()), xml_escape(&args))
    }

    /// A command running workload `name` natively (no module: the APEX runtime runs standalone).
    pub fn native_command(&self, name: &str, args: &[&str]) -> std::process::Command {
        let mut c = std::process::Command::new(&self.exe);
        c.args(self.args(name, args));
        c
    }
}

pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Prints one sample line for the experiment to collect.
pub fn report_sample(metric: &str, value: f64) {
    println!("sample {metric} {value}");
}

/// The `sample METRIC VALUE` lines of a workload's output, as (metric, value). Lines may carry
/// the module's `[NAME] ` prefix.
pub fn parse_samples(output: &str) -> Vec<(String, f64)> {
    output
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = if l.starts_with('[') { l.split_once("] ").map(|x| x.1)? } else { l };
            let mut it = l.strip_prefix("sample ")?.split_whitespace();
            let metric = it.next()?.to_string();
            let v: f64 = it.next()?.parse().ok()?;
            Some((metric, v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_parsed_with_or_without_the_partition_prefix() {
        let out = "hello\nsample pcs_ns 12\n[P1] sample x 1.5\nsample bad\nsample y nan_not\n";
        let got = parse_samples(out);
        assert_eq!(got, vec![("pcs_ns".to_string(), 12.0), ("x".to_string(), 1.5)]);
    }

    #[test]
    fn attributes_name_the_binary_and_the_workload() {
        let p = Programs::with_exe(Path::new("/x/partita"));
        assert_eq!(
            p.xml_attributes("count", &["3", "a\"b"]),
            "pt:Executable=\"/x/partita\" pt:Arguments=\"bench-partition count 3 a&quot;b\""
        );
    }
}
