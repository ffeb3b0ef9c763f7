//! The `partita` command line: exit statuses, message forms, golden `--json` documents, SVG.
//! Regenerate the golden files with `UPDATE_GOLDEN=1 cargo test -p partita --test cli`.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `partita ARGS` run from the workspace root, so paths in outputs are stable.
fn partita(args: &[&str]) -> assert_cmd::assert::Assert {
    Command::new(assert_cmd::cargo::cargo_bin!("partita")).current_dir(workspace()).args(args).assert()
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stdout.clone()).unwrap()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stderr.clone()).unwrap()
}

fn examples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(workspace().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".xml"))
        .map(|n| format!("examples/{n}"))
        .collect();
    v.sort();
    v
}

#[test]
fn check_accepts_every_example_with_a_summary() {
    for ex in examples() {
        let a = partita(&["check", &ex]).code(0);
        let out = stdout(&a);
        assert!(out.starts_with(&format!("{ex}: valid (0 errors")), "{out}");
        for section in ["partitions:", "channels", "schedules:", "major frame"] {
            assert!(out.contains(section), "{ex}: no {section:?} in\n{out}");
        }
    }
}

#[test]
fn check_reports_errors_as_file_line_col_and_exits_1() {
    let a = partita(&["check", "crates/cli/tests/data/two-errors.xml"]).code(1);
    let err = stderr(&a);
    let errors: Vec<&str> = err.lines().filter(|l| l.contains(": error: ")).collect();
    assert_eq!(errors.len(), 2, "{err}");
    assert!(errors[0].starts_with("crates/cli/tests/data/two-errors.xml:"), "{err}");
    // line:col are numbers
    let mut parts = errors[0].split(':');
    parts.next();
    assert!(parts.next().unwrap().parse::<u32>().is_ok() && parts.next().unwrap().parse::<u32>().is_ok());
    assert!(stdout(&a).contains("INVALID (2 errors"));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let a = partita(&["check", "no/such/file.xml"]).code(2);
    assert!(stderr(&a).contains("cannot read no/such/file.xml"));
    partita(&["check"]).code(2);
    partita(&["frobnicate"]).code(2);
    partita(&["schedule", "examples/flight-control.xml", "--synthesize"]).code(2);
}

#[test]
fn non_utf8_and_truncated_files_exit_1_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.xml");
    std::fs::write(&bad, b"<ARINC_653_Module ModuleName=\"\xff\"/>").unwrap();
    let a = partita(&["check", bad.to_str().unwrap()]).code(1);
    assert!(stderr(&a).contains(":1:31: error: invalid UTF-8"), "{}", stderr(&a));
    let full = std::fs::read_to_string(workspace().join("examples/flight-control.xml")).unwrap();
    std::fs::write(&bad, &full[..full.len() / 2]).unwrap();
    let a = partita(&["check", bad.to_str().unwrap()]).code(1);
    assert!(stderr(&a).contains("error: malformed XML"), "{}", stderr(&a));
}

#[test]
fn json_of_an_invalid_file_lists_the_errors() {
    let a = partita(&["check", "--json", "crates/cli/tests/data/two-errors.xml"]).code(1);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(doc["schema"], "partita-check/1");
    assert_eq!(doc["valid"], false);
    assert_eq!(doc["errors"], 2);
    let diags = doc["diagnostics"].as_array().unwrap();
    let rules: Vec<&str> = diags.iter().filter(|d| d["severity"] == "error").map(|d| d["rule"].as_str().unwrap()).collect();
    assert_eq!(rules, ["window-overlap", "hm-unknown-action"]);
    assert!(diags.iter().all(|d| d["line"].as_u64().unwrap() > 0));
}

/// Golden documents must not depend on whether the examples' programs were built (by
/// `partita demo`): executable-not-found warnings are taken out, and the count adjusted.
fn normalize(json: &str) -> String {
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(json) else { return json.to_string() };
    if let Some(diags) = doc.get_mut("diagnostics").and_then(|d| d.as_array_mut()) {
        let before = diags.len();
        diags.retain(|d| d["rule"] != "executable-not-found");
        let removed = (before - diags.len()) as u64;
        if let Some(w) = doc.get_mut("warnings").and_then(|w| w.as_u64()) {
            doc["warnings"] = serde_json::json!(w - removed);
        }
    }
    serde_json::to_string_pretty(&doc).unwrap() + "\n"
}

fn golden(name: &str, actual: &str) {
    let actual: &str = &if name.ends_with(".json") { normalize(actual) } else { actual.to_string() };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("no golden file {}; run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(actual, expected, "{name} differs from its golden file (UPDATE_GOLDEN=1 to accept)");
}

#[test]
fn golden_json_of_check_and_schedule() {
    for ex in examples() {
        let stem = Path::new(&ex).file_stem().unwrap().to_str().unwrap().to_string();
        golden(&format!("check-{stem}.json"), &stdout(&partita(&["check", "--json", &ex]).code(0)));
        golden(&format!("schedule-{stem}.json"), &stdout(&partita(&["schedule", "--json", &ex]).code(0)));
    }
    golden("check-two-errors.json", &stdout(&partita(&["check", "--json", "crates/cli/tests/data/two-errors.xml"]).code(1)));
    // Synthesis: the verdict document, and the configuration it writes.
    let out = "target/golden-synthesis-request.xml";
    golden(
        "synthesis-request.json",
        &stdout(&partita(&["schedule", "--synthesize", "crates/cli/tests/data/request.xml", "-o", out, "--json"]).code(0)),
    );
    golden("synthesis-request.xml", &std::fs::read_to_string(workspace().join(out)).unwrap());
    golden(
        "synthesis-overloaded.json",
        &stdout(&partita(&["schedule", "--synthesize", "crates/cli/tests/data/overloaded.xml", "-o", out, "--json"]).code(1)),
    );
}

#[test]
fn schedule_prints_timeline_utilization_and_gaps() {
    let a = partita(&["schedule", "examples/flight-control.xml"]).code(0);
    let out = stdout(&a);
    assert!(out.contains("core 0 (CPU 0, CYCLIC):"), "{out}");
    assert!(out.contains("utilization"), "{out}");
    assert!(out.contains("OFP (partition 1, window 1)"), "{out}");
}

#[test]
fn svg_draws_every_window_with_labels_and_axis() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("fc.svg");
    partita(&["schedule", "examples/two-schedules.xml", "--svg", svg.to_str().unwrap()]).code(0);
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    let json: serde_json::Value = serde_json::from_str(&stdout(&partita(&["schedule", "--json", "examples/two-schedules.xml"]))).unwrap();
    let windows: usize = json["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["cores"].as_array().unwrap())
        .map(|c| c["windows"].as_array().unwrap().len())
        .sum();
    let titled = doc.descendants().filter(|n| n.has_tag_name("rect") && n.children().any(|c| c.has_tag_name("title"))).count();
    assert_eq!(titled, windows, "one rectangle per window");
    let texts: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).collect();
    assert!(texts.iter().any(|t| t.contains("time (ms)")));
    assert!(texts.iter().filter(|t| t.starts_with("core ")).count() >= 2);
    assert!(texts.iter().filter(|t| t.starts_with("Schedule ")).count() == json["schedules"].as_array().unwrap().len());
}

#[test]
fn synthesize_writes_a_configuration_that_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.xml");
    let a = partita(&["schedule", "--synthesize", "crates/cli/tests/data/request.xml", "-o", out.to_str().unwrap()]).code(0);
    assert!(stdout(&a).to_lowercase().contains("schedulable"), "{}", stdout(&a));
    // The request's relative executables resolve from the output's directory only if copied; check validity, not warnings.
    partita(&["check", out.to_str().unwrap()]).code(0);
}

#[test]
fn unschedulable_request_exits_1_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.xml");
    let a = partita(&["schedule", "--synthesize", "crates/cli/tests/data/overloaded.xml", "-o", out.to_str().unwrap()]).code(1);
    assert!(stdout(&a).to_lowercase().contains("not schedulable") || stderr(&a).to_lowercase().contains("not schedulable"));
    assert!(!out.exists());
}

#[test]
fn unusable_synthesis_request_gives_a_json_document_with_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.xml");
    let a = partita(&["schedule", "--synthesize", "crates/cli/tests/data/two-errors.xml", "-o", out.to_str().unwrap(), "--json"]).code(1);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(doc["schedulable"], false);
    let rules: Vec<&str> =
        doc["diagnostics"].as_array().unwrap().iter().filter(|d| d["severity"] == "error").map(|d| d["rule"].as_str().unwrap()).collect();
    assert!(rules.contains(&"window-overlap") && rules.contains(&"hm-unknown-action"), "{rules:?}");
    assert!(!out.exists());
}

/// A reader that goes away (`partita ... | head -1`) ends a printing command quietly, as it
/// does a Unix tool: killed by SIGPIPE, never a panic.
#[test]
fn a_closed_output_pipe_ends_a_printing_command_without_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    // A schedule of many windows prints far more than a pipe holds.
    let config = workspace().join("target/closed-pipe-test.xml");
    let mut xml = String::from(
        "<ARINC_653_Module ModuleName=\"M\" xmlns:pt=\"urn:partita:1\">\n  <Partition PartitionIdentifier=\"1\" PartitionName=\"P\" pt:Executable=\"/bin/true\"/>\n  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"10\">\n    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"10\" PeriodDurationSeconds=\"1\">\n",
    );
    for w in 0..5000 {
        xml.push_str(&format!(
            "      <Window_Schedule WindowIdentifier=\"{w}\" WindowStartSeconds=\"{:.3}\" WindowDurationSeconds=\"0.001\"/>\n",
            w as f64 * 0.002
        ));
    }
    xml.push_str("    </Partition_Schedule>\n  </Module_Schedule>\n</ARINC_653_Module>\n");
    std::fs::write(&config, xml).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["schedule", config.to_str().unwrap(), "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}: {err}", out.status);
}

#[test]
fn check_shows_the_health_monitor_decisions_and_warns_about_initialization_only_entries() {
    let dir = tempfile::tempdir().unwrap();
    let xml = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="Nav" pt:Executable="/bin/true"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Partition_HM_Table PartitionIdentifier="1" PartitionName="Nav">
    <System_State_Entry SystemState="1">
      <Error_ID_Action ErrorIdentifier="7" Action="COLD_START" ErrorCode="MEMORY_VIOLATION"/>
    </System_State_Entry>
  </Partition_HM_Table>
</ARINC_653_Module>"#;
    let path = dir.path().join("m.xml");
    std::fs::write(&path, xml).unwrap();
    let a = partita(&["check", path.to_str().unwrap()]).code(0);
    let (out, err) = (stdout(&a), stderr(&a));
    assert!(
        err.contains("partition 1 \"Nav\" decides MEMORY_VIOLATION in SystemState 1")
            && err.contains("in NORMAL (SystemState 2) it is decided by default: PARTITION level, action IDLE"),
        "{err}"
    );
    let table = &out[out.find("health monitor").expect("a health monitor section")..];
    let row = |state: &str| {
        let section = &table[table.find(&format!("SystemState {state}")).unwrap()..];
        section.lines().find(|l| l.trim_start().starts_with("MEMORY_VIOLATION")).unwrap().to_string()
    };
    assert!(row("1").contains("COLD_START") && row("1").contains("Partition_HM_Table line 10"), "{}", row("1"));
    assert!(row("2").contains("IDLE") && row("2").contains("action: default"), "{}", row("2"));
    let json = partita(&["check", path.to_str().unwrap(), "--json"]).code(0);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let rows = doc["health_monitor"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["state"] == 1 && r["code"] == "MEMORY_VIOLATION" && r["action_from"]["line"] == 10));
}

/// `partita guest-cc` builds a guest image from a C source with the guest runtime compiled into
/// the binary (run from outside the source tree), and refuses, with the reason, a source that
/// does not compile, an image that `partita run` would refuse, and a compiler that is not there.
#[test]
fn guest_cc_builds_an_image_and_refuses_what_would_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("spin.elf");
    let src = workspace().join("guest/examples/spin.c");
    let cc = |args: &[&std::ffi::OsStr]| {
        Command::new(assert_cmd::cargo::cargo_bin!("partita")).current_dir(dir.path()).arg("guest-cc").args(args).assert()
    };
    let a = cc(&[src.as_os_str(), "-o".as_ref(), out.as_os_str(), "-DSPIN_CLI".as_ref()]).code(0);
    assert!(stdout(&a).contains("entry 0x100000"), "{}", stdout(&a));
    let image = std::fs::read(&out).unwrap();
    assert_eq!(&image[..5], b"\x7fELF\x02", "a 64-bit ELF image");
    // A compile error: the compiler's own message, exit 1.
    let bad = dir.path().join("bad.c");
    std::fs::write(&bad, "int main(void) { return undefined_name; }\n").unwrap();
    let a = cc(&[bad.as_os_str(), "-o".as_ref(), dir.path().join("bad.elf").as_os_str()]).code(1);
    assert!(stderr(&a).contains("undefined_name"), "{}", stderr(&a));
    // Links, but its memory would not fit a guest's RAM: refused by the run's loader, exit 1.
    let big = dir.path().join("big.c");
    std::fs::write(&big, "static volatile char ram[3UL << 29];\nint main(void) { ram[0] = 1; return ram[1]; }\n").unwrap();
    let a = cc(&[big.as_os_str(), "-o".as_ref(), dir.path().join("big.elf").as_os_str()]).code(1);
    assert!(stderr(&a).contains("guest image"), "{}", stderr(&a));
    // No compiler: exit 2, naming it.
    let a = Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .env("CC", "/nonexistent/cc")
        .args(["guest-cc".as_ref(), src.as_os_str(), "-o".as_ref(), dir.path().join("x.elf").as_os_str()])
        .assert()
        .code(2);
    assert!(stderr(&a).contains("/nonexistent/cc"), "{}", stderr(&a));
    // Usage: no output named.
    let a = cc(&[src.as_os_str()]).code(2);
    assert!(stderr(&a).contains("usage: partita guest-cc"), "{}", stderr(&a));
}
