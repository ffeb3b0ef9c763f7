//! The health monitor as `partita check` explains it: what decides each error, and warnings
//! about table entries that never apply or cover the initialization state only.

use partita_config::check_text;
use partita_config::diag::Severity;
use partita_config::hm::{self, HmTables, Source};
use partita_config::model::ErrorCode;
use std::path::Path;

/// One partition; `{SYS}` and `{PART}` are the System_HM_Table and Partition_HM_Table bodies.
const BASE: &str = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="Nav" pt:Executable="/bin/true">
    <Sampling_Port Name="big" MaxMessageSize="{SIZE}" Direction="SOURCE" RefreshRateSeconds="0.1"/>
  </Partition>
  <Partition_Memory PartitionIdentifier="1">
    <Memory_Requirements RegionName="data" Type="DATA" SizeBytes="0x100000" Access="READ_WRITE"{COLORS}/>
  </Partition_Memory>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
  <System_HM_Table>{SYS}</System_HM_Table>
  <Partition_HM_Table PartitionIdentifier="1" PartitionName="Nav">{PART}</Partition_HM_Table>
</ARINC_653_Module>"#;

fn config(sys: &str, part: &str, size: u32, colors: bool) -> String {
    BASE.replace("{SYS}", sys)
        .replace("{PART}", part)
        .replace("{SIZE}", &size.to_string())
        .replace("{COLORS}", if colors { r#" pt:Colors="0-3""# } else { "" })
}

fn warnings(xml: &str, rule: &str) -> Vec<String> {
    let checked = check_text(xml, Path::new("/tmp"));
    assert!(checked.is_valid(), "{:?}", checked.diagnostics);
    checked.diagnostics.iter().filter(|d| d.severity == Severity::Warning && d.rule.code() == rule).map(|d| d.message.clone()).collect()
}

const MV_IN_STATE_1: &str = r#"<System_State_Entry SystemState="1"><Error_ID_Action ErrorIdentifier="7" Action="COLD_START" ErrorCode="MEMORY_VIOLATION"/></System_State_Entry>"#;

#[test]
fn an_error_decided_in_initialization_only_warns_with_the_action_of_normal() {
    let w = warnings(&config("", MV_IN_STATE_1, 64, false), "hm-state-only");
    assert_eq!(w.len(), 1, "{w:?}");
    for words in ["partition 1 \"Nav\"", "MEMORY_VIOLATION", "SystemState 1", "NORMAL", "PARTITION level, action IDLE"] {
        assert!(w[0].contains(words), "{words:?} missing from: {}", w[0]);
    }
    // Deciding it in both states is silent.
    let both = MV_IN_STATE_1.to_string() + &MV_IN_STATE_1.replace("SystemState=\"1\"", "SystemState=\"2\"");
    assert!(warnings(&config("", &both, 64, false), "hm-state-only").is_empty());
}

#[test]
fn entries_that_never_apply_are_named() {
    // A level without ErrorCode, an action whose identifier has no coded level, a state 3.
    let sys = r#"<System_State_Entry SystemState="2"><Error_ID_Level ErrorIdentifier="4" ErrorLevel="PARTITION"/></System_State_Entry>"#;
    let part = r#"<System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="4" Action="COLD_START"/></System_State_Entry>
                  <System_State_Entry SystemState="3"><Error_ID_Action ErrorIdentifier="5" Action="IDLE" ErrorCode="NUMERIC_ERROR"/></System_State_Entry>"#;
    let w = warnings(&config(sys, part, 64, false), "hm-never-applies");
    assert!(w.iter().any(|m| m.contains("ErrorIdentifier 4 of System_HM_Table") && m.contains("no ErrorCode")), "{w:?}");
    assert!(
        w.iter().any(|m| m.contains("ErrorIdentifier 4 of the Partition_HM_Table of partition 1 \"Nav\"") && m.contains("decides nothing")),
        "{w:?}"
    );
    assert!(w.iter().any(|m| m.contains("SystemState 3") && m.contains("no meaning")), "{w:?}");
    // Coded entries in known states are silent.
    assert!(warnings(&config("", MV_IN_STATE_1, 64, false), "hm-never-applies").is_empty());
}

#[test]
fn explain_names_the_entry_or_the_default() {
    let xml = config(
        r#"<System_State_Entry SystemState="2"><Error_ID_Level ErrorIdentifier="9" ErrorLevel="PARTITION" ErrorCode="NUMERIC_ERROR"/></System_State_Entry>"#,
        r#"<System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="9" Action="WARM_START"/></System_State_Entry>"#,
        64,
        false,
    );
    let checked = check_text(&xml, Path::new("/tmp"));
    let t = HmTables::new(checked.module.as_ref().unwrap());
    let numeric = hm::code_number(ErrorCode::NumericError);
    let e = t.explain(1, hm::PARTITION_EXECUTION, numeric, false);
    assert_eq!(e.decision.action, hm::Action::WarmStart);
    let line_of = |needle: &str| xml.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1;
    assert_eq!(e.level_from, Source::Entry { table: "System_HM_Table", line: line_of("Error_ID_Level") });
    assert_eq!(e.action_from, Source::Entry { table: "Partition_HM_Table", line: line_of("Error_ID_Action") });
    let init = t.explain(1, hm::PARTITION_INIT, numeric, false);
    assert_eq!((init.level_from, init.action_from), (Source::Default, Source::Default));
    assert_eq!(init.decision.action, hm::Action::Idle);
    // The table `partita check` prints has a row per partition, state and code.
    let rows = hm::decision_table(checked.module.as_ref().unwrap());
    assert_eq!(rows.len(), hm::STATES.len() * ErrorCode::ALL.len());
    assert!(rows.iter().any(|r| r.state == 2 && r.code == "NUMERIC_ERROR" && r.action == "WARM_START"));
}

#[test]
fn ports_above_the_standard_limit_and_unapplied_colors_warn() {
    let w = warnings(&config("", "", 8193, false), "port-above-system-limit");
    assert!(w.len() == 1 && w[0].contains("\"big\"") && w[0].contains("8193"), "{w:?}");
    assert!(warnings(&config("", "", 8192, false), "port-above-system-limit").is_empty());
    let c = warnings(&config("", "", 64, true), "not-applied");
    assert!(c.len() == 1 && c[0].contains("pt:Colors"), "{c:?}");
    assert!(warnings(&config("", "", 64, false), "not-applied").is_empty());
}
