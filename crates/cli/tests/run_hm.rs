//! The health monitor under `partita run`, with C partitions (tests/partitions/hm.c) that use
//! standard APEX names only: each detected error, each action at each level, the error handler,
//! restarts with HM_PARTITION_RESTART / HM_MODULE_RESTART, SHUTDOWN's exit status, and
//! `--inject`. Needs root (skipped with a message otherwise; a failure with CI=true).

mod partitions;

use partita_trace::Event;
use partita_trace::summary::summarize;
use partitions::{Ran, build, privileged, run_with};
use std::path::Path;

/// A partition of a test module: name, program, arguments, core and window start (ms) of its
/// 5 ms window in the 20 ms major frame.
struct P<'a> {
    name: &'a str,
    exe: &'a Path,
    args: &'a str,
    core: u32,
    start_ms: u32,
}

fn module(dir: &Path, parts: &[P], tables: &str) -> std::path::PathBuf {
    let mut xml = String::from("<ARINC_653_Module ModuleName=\"Hm\" xmlns:pt=\"urn:partita:1\">\n  <pt:Cores Cpus=\"0-1\"/>\n");
    xml.push_str(tables);
    for (i, p) in parts.iter().enumerate() {
        xml.push_str(&format!(
            "  <Partition PartitionIdentifier=\"{}\" PartitionName=\"{}\" pt:Executable=\"{}\" pt:Arguments=\"{}\"/>\n",
            i + 1,
            p.name,
            p.exe.display(),
            p.args
        ));
    }
    xml.push_str("  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"0.02\">\n");
    for (i, p) in parts.iter().enumerate() {
        xml.push_str(&format!(
            "    <Partition_Schedule PartitionIdentifier=\"{}\" PeriodSeconds=\"0.02\" PeriodDurationSeconds=\"0.005\">\n      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0.{:03}\" WindowDurationSeconds=\"0.005\" pt:Core=\"{}\"/>\n    </Partition_Schedule>\n",
            i + 1,
            p.start_ms,
            p.core
        ));
    }
    xml.push_str("  </Module_Schedule>\n");
    xml.push_str("</ARINC_653_Module>\n");
    let path = dir.join("module.xml");
    std::fs::write(&path, xml).unwrap();
    path
}

fn hm_events(r: &Ran, partition: u32) -> Vec<(&str, &str, &str, &str)> {
    r.events
        .iter()
        .filter_map(|e| match e {
            Event::HmEvent { partition: p, code, level, action, source, .. } if *p == partition => {
                Some((code.as_str(), level.as_str(), action.as_str(), source.as_str()))
            }
            _ => None,
        })
        .collect()
}

/// The first HM event of `partition` for `code`: (level, action, source).
fn hm_event<'a>(r: &'a Ran, partition: u32, code: &str) -> Option<(&'a str, &'a str, &'a str)> {
    hm_events(r, partition).into_iter().find(|e| e.0 == code).map(|e| (e.1, e.2, e.3))
}

fn restarts(r: &Ran, partition: u32) -> Vec<(String, String)> {
    r.events
        .iter()
        .filter_map(|e| match e {
            Event::PartitionRestart { partition: p, mode, start_condition, .. } if *p == partition => {
                Some((mode.clone(), start_condition.clone()))
            }
            _ => None,
        })
        .collect()
}

fn lines<'a>(r: &'a Ran, name: &str) -> Vec<&'a str> {
    let prefix = format!("[{name}] ");
    r.stdout.lines().filter_map(|l| l.strip_prefix(prefix.as_str())).collect()
}

const ACCEPTANCE_TABLES: &str = r#"  <System_HM_Table>
    <System_State_Entry SystemState="2" Description="partition execution">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="PROCESS" ErrorCode="APPLICATION_ERROR"/>
      <Error_ID_Level ErrorIdentifier="2" ErrorLevel="PARTITION" ErrorCode="MEMORY_VIOLATION"/>
    </System_State_Entry>
  </System_HM_Table>
  <Partition_HM_Table PartitionIdentifier="3" PartitionName="Faulty">
    <System_State_Entry SystemState="2">
      <Error_ID_Action ErrorIdentifier="2" Action="COLD_START"/>
    </System_State_Entry>
  </Partition_HM_Table>
"#;

#[test]
fn the_handler_gets_the_application_error_and_a_memory_violation_restarts_the_partition_cold() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spin = build("timecheck", dir.path());
    let hm = build("hm", dir.path());
    let parts = [
        P { name: "Producer", exe: &spin, args: "", core: 0, start_ms: 0 },
        P { name: "Consumer", exe: &spin, args: "", core: 1, start_ms: 5 },
        P { name: "Faulty", exe: &hm, args: "raise_segv handler", core: 0, start_ms: 10 },
    ];
    let config = module(dir.path(), &parts, ACCEPTANCE_TABLES);
    let frames = 40;
    let r = run_with(&config, frames, &[]);
    assert_eq!(r.status, Some(0), "{}\n{}", r.stdout, r.stderr);
    let faulty = lines(&r, "Faulty");
    assert!(faulty.contains(&"handler: code 1 length 19 process 2 message sensor out of range"), "{}", r.stdout);
    assert!(faulty.contains(&"start condition 3 mode 1"), "HM_PARTITION_RESTART, COLD_START:\n{}", r.stdout);
    assert_eq!(hm_event(&r, 3, "APPLICATION_ERROR"), Some(("PROCESS", "ERROR_HANDLER", "detected")));
    assert_eq!(hm_event(&r, 3, "MEMORY_VIOLATION"), Some(("PARTITION", "COLD_START", "detected")));
    assert_eq!(restarts(&r, 3)[0], ("COLD_START".to_string(), "HM_PARTITION_RESTART".to_string()));
    // The others kept every window and ran only inside them.
    let s = summarize(&r.events);
    assert!(s.check.ok, "{s}");
    for id in [1, 2] {
        let p = s.partitions.iter().find(|p| p.id == id).unwrap();
        assert!(p.windows as u32 >= frames - 1 && p.windows_running as u32 >= frames / 2, "{s}");
        assert_eq!(p.restarts + p.exits + p.hm_events, 0, "{s}");
    }
    assert!(s.to_string().contains("MEMORY_VIOLATION (PARTITION, detected) -> COLD_START"), "{s}");
}

const DETECTED_TABLES: &str = r#"  <System_HM_Table>
    <System_State_Entry SystemState="2">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="PARTITION" ErrorCode="NUMERIC_ERROR"/>
      <Error_ID_Level ErrorIdentifier="2" ErrorLevel="PARTITION" ErrorCode="STACK_OVERFLOW"/>
      <Error_ID_Level ErrorIdentifier="3" ErrorLevel="PARTITION" ErrorCode="ILLEGAL_REQUEST"/>
    </System_State_Entry>
  </System_HM_Table>
  <Partition_HM_Table PartitionIdentifier="1" PartitionName="Fpe">
    <System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="1" Action="WARM_START"/></System_State_Entry>
  </Partition_HM_Table>
  <Partition_HM_Table PartitionIdentifier="2" PartitionName="Stack">
    <System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="2" Action="IDLE"/></System_State_Entry>
  </Partition_HM_Table>
  <Partition_HM_Table PartitionIdentifier="3" PartitionName="Sys">
    <System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="3" Action="IGNORE"/></System_State_Entry>
  </Partition_HM_Table>
  <Partition_HM_Table PartitionIdentifier="4" PartitionName="Exit">
    <System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="3" Action="COLD_START"/></System_State_Entry>
  </Partition_HM_Table>
"#;

#[test]
fn each_detected_error_takes_its_partition_action() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let hm = build("hm", dir.path());
    let parts = [
        P { name: "Fpe", exe: &hm, args: "fpe", core: 0, start_ms: 0 },
        P { name: "Stack", exe: &hm, args: "stack", core: 0, start_ms: 5 },
        P { name: "Sys", exe: &hm, args: "syscall", core: 0, start_ms: 10 },
        P { name: "Exit", exe: &hm, args: "exit", core: 0, start_ms: 15 },
        P { name: "Late", exe: &hm, args: "deadline", core: 1, start_ms: 0 },
        P { name: "Segv", exe: &hm, args: "segv", core: 1, start_ms: 5 },
    ];
    let config = module(dir.path(), &parts, DETECTED_TABLES);
    let r = run_with(&config, 50, &[]);
    assert_eq!(r.status, Some(0), "{}\n{}", r.stdout, r.stderr);
    let out = &r.stdout;
    // NUMERIC_ERROR -> WARM_START: restarted with HM_PARTITION_RESTART (3) in WARM_START (2).
    assert_eq!(hm_event(&r, 1, "NUMERIC_ERROR"), Some(("PARTITION", "WARM_START", "detected")), "{out}");
    assert_eq!(restarts(&r, 1).first(), Some(&("WARM_START".to_string(), "HM_PARTITION_RESTART".to_string())));
    assert!(lines(&r, "Fpe").contains(&"start condition 3 mode 2"), "{out}");
    // STACK_OVERFLOW (a fault in the guard page) -> IDLE.
    assert_eq!(hm_event(&r, 2, "STACK_OVERFLOW"), Some(("PARTITION", "IDLE", "detected")), "{out}");
    assert!(r.events.iter().any(|e| matches!(e, Event::ModeChange { partition: 2, to, .. } if to == "IDLE")));
    // ILLEGAL_REQUEST (reboot(2) trapped by the seccomp filter) -> IGNORE: the call failed
    // with ENOSYS and the partition goes on.
    assert_eq!(hm_event(&r, 3, "ILLEGAL_REQUEST"), Some(("PARTITION", "IGNORE", "detected")), "{out}");
    let sys = lines(&r, "Sys");
    assert!(sys.contains(&"reboot returned -1 errno 38") && sys.contains(&"alive 10"), "{out}");
    // The program ended: ILLEGAL_REQUEST at partition level -> COLD_START.
    let exit = hm_event(&r, 4, "ILLEGAL_REQUEST").expect(out);
    assert_eq!((exit.0, exit.1), ("PARTITION", "COLD_START"), "{out}");
    assert!(exit.2.contains("exited with status 3"), "{exit:?}");
    assert!(lines(&r, "Exit").contains(&"start condition 3 mode 1"), "{out}");
    // DEADLINE_MISSED: process level, no error handler, no table entry -> IGNORE.
    assert_eq!(hm_event(&r, 5, "DEADLINE_MISSED"), Some(("PROCESS", "IGNORE", "detected")), "{out}");
    // MEMORY_VIOLATION with no tables at all: partition level, IDLE by default.
    assert_eq!(hm_event(&r, 6, "MEMORY_VIOLATION"), Some(("PARTITION", "IDLE", "detected")), "{out}");
    let s = summarize(&r.events);
    assert!(s.check.ok, "{s}");
}

const MODULE_TABLES: &str = r#"  <System_HM_Table>
    <System_State_Entry SystemState="2">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="MODULE" ErrorCode="HARDWARE_FAULT"/>
    </System_State_Entry>
  </System_HM_Table>
  <Module_HM_Table>
    <System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="1" Action="RESET"/></System_State_Entry>
  </Module_HM_Table>
"#;

#[test]
fn injected_errors_reach_the_handler_idle_reset_and_shut_the_module_down() {
    if !privileged() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let hm = build("hm", dir.path());
    let parts = [
        P { name: "A", exe: &hm, args: "none handler", core: 0, start_ms: 0 },
        P { name: "B", exe: &hm, args: "none", core: 1, start_ms: 5 },
    ];
    let config = module(dir.path(), &parts, MODULE_TABLES);
    let inject = ["A:APPLICATION_ERROR@300ms", "B:MEMORY_VIOLATION@400ms", "A:HARDWARE_FAULT@600ms", "B:POWER_FAILURE@1s"];
    let args: Vec<&str> = inject.iter().flat_map(|j| ["--inject", j]).collect();
    let r = run_with(&config, 200, &args);
    // POWER_FAILURE: module level by default, SHUTDOWN: exit status 1 well before 200 frames.
    assert_eq!(r.status, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.events
            .iter()
            .any(|e| matches!(e, Event::ModuleStop { reason, frames, .. } if reason == "health monitor shutdown" && *frames < 100)),
        "{:?}",
        r.events.last()
    );
    assert_eq!(hm_event(&r, 1, "APPLICATION_ERROR"), Some(("PROCESS", "ERROR_HANDLER", "injected")));
    assert_eq!(hm_event(&r, 1, "HARDWARE_FAULT"), Some(("MODULE", "RESET", "injected")));
    assert!(lines(&r, "A").iter().any(|l| l.starts_with("handler: code 1 length 32 process 0 message injected")), "{}", r.stdout);
    assert_eq!(hm_event(&r, 2, "MEMORY_VIOLATION"), Some(("PARTITION", "IDLE", "injected")));
    assert_eq!(hm_event(&r, 2, "POWER_FAILURE"), Some(("MODULE", "SHUTDOWN", "injected")));
    // RESET restarts every partition (B too, which was IDLE) with HM_MODULE_RESTART.
    for id in [1, 2] {
        assert_eq!(restarts(&r, id), [("COLD_START".to_string(), "HM_MODULE_RESTART".to_string())], "partition {id}");
    }
    assert!(lines(&r, "B").contains(&"start condition 2 mode 1"), "{}", r.stdout);
    assert!(summarize(&r.events).check.ok);
}

#[test]
fn bad_injections_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let exe = Path::new("/bin/true");
    let config = module(dir.path(), &[P { name: "A", exe, args: "", core: 0, start_ms: 0 }], "");
    for (inject, says) in [
        ("A:SEGFAULT@1s", "unknown error code"),
        ("A:MEMORY_VIOLATION", "expected PARTITION:ERROR_CODE@TIME"),
        ("A:MEMORY_VIOLATION@soon", "bad time"),
        ("Nobody:MEMORY_VIOLATION@1s", "does not declare"),
    ] {
        let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("partita"))
            .args(["run", config.to_str().unwrap(), "--frames", "1", "--inject", inject])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{inject}: {stderr}");
        assert!(stderr.contains(says), "{inject}: {stderr}");
    }
}
