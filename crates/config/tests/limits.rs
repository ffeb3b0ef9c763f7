//! The per-partition limits and bind mounts of the `urn:partita:1` extension: `pt:MaxTasks`,
//! `pt:MaxOpenFiles` and `<pt:Mount>` (docs/configuration.md), with errors naming the
//! attribute, its value and the line.

use partita_config::check_text;
use partita_config::diag::{Diagnostic, Severity};
use partita_config::model::{DEFAULT_MAX_OPEN_FILES, DEFAULT_MAX_TASKS};
use std::path::Path;

fn module(attrs: &str, children: &str) -> String {
    format!(
        r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="A" pt:Executable="a" {attrs}>
    {children}
  </Partition>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>
"#
    )
}

fn diagnostics(xml: &str, severity: Severity) -> Vec<Diagnostic> {
    check_text(xml, Path::new("/nonexistent")).diagnostics.into_iter().filter(|d| d.severity == severity).collect()
}

/// One error, on the line holding `at`, whose message has every word of `words`.
#[track_caller]
fn one_error(xml: &str, at: &str, words: &[&str]) {
    let errors = diagnostics(xml, Severity::Error);
    assert_eq!(errors.len(), 1, "expected one error, got {errors:#?}");
    let line = xml.lines().position(|l| l.contains(at)).unwrap() as u32 + 1;
    assert_eq!(errors[0].line, line, "{:?}", errors[0]);
    for w in words {
        assert!(errors[0].message.contains(w), "message {:?} lacks {w:?}", errors[0].message);
    }
}

#[test]
fn limits_are_parsed_and_default_when_absent() {
    let xml = module(r#"pt:MaxTasks="64" pt:MaxOpenFiles="0x100""#, "");
    let checked = check_text(&xml, Path::new("/nonexistent"));
    assert!(diagnostics(&xml, Severity::Error).is_empty());
    let p = &checked.module.unwrap().partitions[0];
    assert_eq!(p.max_tasks.as_ref().unwrap().value, 64);
    assert_eq!(p.max_open_files.as_ref().unwrap().value, 256);
    let plain = check_text(&module("", ""), Path::new("/nonexistent")).module.unwrap();
    assert!(plain.partitions[0].max_tasks.is_none() && plain.partitions[0].max_open_files.is_none());
    assert_eq!((DEFAULT_MAX_TASKS, DEFAULT_MAX_OPEN_FILES), (512, 1024));
}

#[test]
fn bad_limits_name_the_attribute_and_value() {
    for (attr, value) in [
        ("MaxTasks", "0"),
        ("MaxTasks", "-5"),
        ("MaxTasks", "4194305"),
        ("MaxTasks", "many"),
        ("MaxOpenFiles", "0"),
        ("MaxOpenFiles", "-1"),
        ("MaxOpenFiles", "99999999999"),
        ("MaxOpenFiles", "1.5"),
    ] {
        let xml = module(&format!(r#"pt:{attr}="{value}""#), "");
        one_error(&xml, "pt:Executable", &[&format!("pt:{attr}=\"{value}\""), "<Partition>", "whole number from 1 to"]);
    }
}

#[test]
fn mounts_are_parsed() {
    let xml =
        module("", r#"<pt:Mount Source="/usr/share" Target="/srv/share"/><pt:Mount Source="/var/tmp" Target="/tmp/x" Writable="true"/>"#);
    assert!(diagnostics(&xml, Severity::Error).is_empty(), "{:#?}", diagnostics(&xml, Severity::Error));
    let m = check_text(&xml, Path::new("/nonexistent")).module.unwrap();
    let mounts = &m.partitions[0].mounts;
    assert_eq!(mounts.len(), 2);
    assert_eq!((mounts[0].source.value.as_str(), mounts[0].target.value.as_str(), mounts[0].writable), ("/usr/share", "/srv/share", false));
    assert_eq!((mounts[1].target.value.as_str(), mounts[1].writable), ("/tmp/x", true));
}

#[test]
fn bad_mounts_are_errors_naming_the_element() {
    for (mount, words) in [
        (r#"<pt:Mount Source="usr" Target="/srv"/>"#, &["Source=\"usr\"", "not an absolute path"][..]),
        (r#"<pt:Mount Source="/usr" Target="srv"/>"#, &["Target=\"srv\"", "not an absolute path"]),
        (r#"<pt:Mount Source="/usr/../etc" Target="/srv"/>"#, &["..", "Source"]),
        (r#"<pt:Mount Source="/usr" Target="/proc/x"/>"#, &["Target=\"/proc/x\"", "inside /proc"]),
        (r#"<pt:Mount Source="/usr" Target="/sys"/>"#, &["inside /sys"]),
        (r#"<pt:Mount Source="/usr" Target="/dev/sda"/>"#, &["inside /dev"]),
        (r#"<pt:Mount Source="/usr" Target="/run/partita/1/A"/>"#, &["inside /run/partita"]),
        (r#"<pt:Mount Source="/usr" Target="/"/>"#, &["whole file view"]),
        (r#"<pt:Mount Target="/srv"/>"#, &["Source"]),
        (r#"<pt:Mount Source="/usr" Target="/srv" Writable="maybe"/>"#, &["Writable=\"maybe\""]),
    ] {
        let xml = module("", mount);
        one_error(&xml, "pt:Mount", words);
    }
    let twice = module("", "<pt:Mount Source=\"/usr\" Target=\"/srv\"/>\n    <pt:Mount Source=\"/etc\" Target=\"/srv\"/>");
    one_error(&twice, "Source=\"/etc\"", &["already mounted at line 3"]);
}

#[test]
fn a_missing_mount_source_is_a_warning_at_check_time() {
    let xml = module("", r#"<pt:Mount Source="/no/such/partita/source" Target="/srv"/>"#);
    assert!(diagnostics(&xml, Severity::Error).is_empty());
    let w = diagnostics(&xml, Severity::Warning);
    assert!(w.iter().any(|d| d.message.contains("/no/such/partita/source") && d.message.contains("does not exist")), "{w:#?}");
}
