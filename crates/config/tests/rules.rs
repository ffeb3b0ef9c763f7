//! One test per validation rule: the error's rule, line and the words of its message.

use partita_config::check_text;
use partita_config::diag::{Diagnostic, Severity};
use std::path::Path;

/// A valid two-partition, two-core module; `{..}` placeholders are replaced by the tests.
const BASE: &str = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"><pt:Core Id="1" Policy="CYCLIC"/></pt:Cores>
  <Partition PartitionIdentifier="1" PartitionName="A" Criticality="LEVEL_A" pt:Executable="a">
    <Sampling_Port Name="out" MaxMessageSize="64" Direction="SOURCE" RefreshRateSeconds="0.1"/>
    <Queuing_Port Name="qout" MaxMessageSize="16" Direction="SOURCE" MaxNbMessages="4"/>
  </Partition>
  <Partition PartitionIdentifier="2" PartitionName="B" Criticality="LEVEL_C" pt:Executable="b">
    <Sampling_Port Name="in" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
    <Queuing_Port Name="qin" MaxMessageSize="16" Direction="DESTINATION" MaxNbMessages="4"/>
  </Partition>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.04">
    <Partition_Schedule PartitionIdentifier="1" PartitionName="A" PeriodSeconds="0.02" PeriodDurationSeconds="0.005">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.005" PartitionPeriodStart="true"/>
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.02" WindowDurationSeconds="0.005" PartitionPeriodStart="true"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PartitionName="B" PeriodSeconds="0.04" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0.005" WindowDurationSeconds="0.01" PartitionPeriodStart="true"/>
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0" WindowDurationSeconds="0.01" pt:Core="1"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Connection_Table>
    <Channel ChannelIdentifier="1" ChannelName="data">
      <Source><Standard_Partition PartitionIdentifier="1" PartitionName="A" PortName="out"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PartitionName="B" PortName="in"/></Destination>
    </Channel>
    <Channel ChannelIdentifier="2" ChannelName="cmds">
      <Source><Standard_Partition PartitionIdentifier="1" PartitionName="A" PortName="qout"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PartitionName="B" PortName="qin"/></Destination>
    </Channel>
  </Connection_Table>
  <System_HM_Table>
    <System_State_Entry SystemState="1" Description="normal">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="PARTITION" ErrorCode="DEADLINE_MISSED"/>
    </System_State_Entry>
  </System_HM_Table>
  <Partition_HM_Table PartitionIdentifier="1" PartitionName="A">
    <System_State_Entry SystemState="1">
      <Error_ID_Action ErrorIdentifier="1" Action="COLD_START"/>
    </System_State_Entry>
  </Partition_HM_Table>
</ARINC_653_Module>
"#;

fn errors_of(xml: &str) -> Vec<Diagnostic> {
    check_text(xml, Path::new("/nonexistent")).diagnostics.into_iter().filter(|d| d.severity == Severity::Error).collect()
}

/// Replaces exactly one occurrence of `from` in BASE.
fn edit(from: &str, to: &str) -> String {
    assert_eq!(BASE.matches(from).count(), 1, "{from:?} must occur once in BASE");
    BASE.replacen(from, to, 1)
}

fn line_of(xml: &str, needle: &str) -> u32 {
    xml.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle:?} not in xml")) as u32 + 1
}

/// Asserts one error of `rule` at the line holding `at`, whose message has every word of `words`.
#[track_caller]
fn assert_single(xml: &str, rule: &str, at: &str, words: &[&str]) {
    let errors = errors_of(xml);
    assert_eq!(errors.len(), 1, "expected one error, got {errors:#?}");
    let e = &errors[0];
    assert_eq!(e.rule.code(), rule, "{e:?}");
    assert_eq!(e.line, line_of(xml, at), "{e:?}");
    for w in words {
        assert!(e.message.contains(w), "message {:?} lacks {w:?}", e.message);
    }
}

#[test]
fn base_is_valid() {
    assert!(errors_of(BASE).is_empty(), "{:#?}", errors_of(BASE));
}

#[test]
fn malformed_xml() {
    let xml = edit(r#"<Queuing_Port Name="qin""#, r#"<Queuing_Port Name="qin"#);
    let e = errors_of(&xml);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].rule.code(), "xml-malformed");
    assert!(e[0].message.starts_with("malformed XML"));
    assert_eq!(e[0].line, line_of(&xml, r#"Name="qin"#));
}

#[test]
fn malformed_number() {
    let xml = edit(r#"MaxMessageSize="64" Direction="DESTINATION""#, r#"MaxMessageSize="6x4" Direction="DESTINATION""#);
    assert_single(&xml, "number-malformed", "6x4", &["MaxMessageSize=\"6x4\"", "Sampling_Port", "non-negative integer"]);
}

#[test]
fn malformed_time() {
    let xml = edit(r#"MajorFrameSeconds="0.04""#, r#"MajorFrameSeconds="40ms""#);
    let e = errors_of(&xml);
    assert!(e.iter().any(|d| d.rule.code() == "number-malformed" && d.message.contains("40ms") && d.message.contains("decimal")), "{e:#?}");
}

#[test]
fn missing_attribute() {
    let xml = edit(
        r#"<Queuing_Port Name="qin" MaxMessageSize="16" Direction="DESTINATION" MaxNbMessages="4"/>"#,
        r#"<Queuing_Port Name="qin" MaxMessageSize="16" Direction="DESTINATION"/>"#,
    );
    assert_single(&xml, "missing-attribute", r#"Name="qin""#, &["MaxNbMessages"]);
}

#[test]
fn invalid_keyword() {
    let xml = edit(r#"Criticality="LEVEL_C""#, r#"Criticality="LEVEL_Z""#);
    assert_single(&xml, "invalid-value", "LEVEL_Z", &["Criticality", "LEVEL_Z", "LEVEL_A"]);
}

#[test]
fn duplicate_partition_identifier() {
    let xml = edit(r#"<Partition PartitionIdentifier="2" PartitionName="B""#, r#"<Partition PartitionIdentifier="1" PartitionName="B""#);
    let e = errors_of(&xml);
    let dup: Vec<_> = e.iter().filter(|d| d.rule.code() == "duplicate").collect();
    assert_eq!(dup.len(), 1, "{e:#?}");
    assert_eq!(dup[0].line, line_of(&xml, r#"PartitionName="B" Criticality"#));
    assert!(dup[0].message.contains("PartitionIdentifier 1") && dup[0].message.contains("line 3"), "{}", dup[0].message);
}

#[test]
fn duplicate_partition_name() {
    let xml = edit(r#"PartitionIdentifier="2" PartitionName="B" Criticality"#, r#"PartitionIdentifier="2" PartitionName="A" Criticality"#);
    let e = errors_of(&xml);
    let dup: Vec<_> = e.iter().filter(|d| d.rule.code() == "duplicate").collect();
    assert_eq!(dup.len(), 1, "{e:#?}");
    assert!(dup[0].message.contains("PartitionName \"A\""));
}

#[test]
fn unknown_partition_reference() {
    let xml = edit(
        r#"<Partition_Schedule PartitionIdentifier="2" PartitionName="B""#,
        r#"<Partition_Schedule PartitionIdentifier="9" PartitionName="B""#,
    );
    let e = errors_of(&xml);
    assert!(
        e.iter().any(|d| d.rule.code() == "unknown-reference"
            && d.message.contains("PartitionIdentifier 9")
            && d.message.contains("known: 1, 2")),
        "{e:#?}"
    );
}

#[test]
fn identifier_and_name_disagree() {
    let xml = edit(
        r#"<Partition_Schedule PartitionIdentifier="2" PartitionName="B""#,
        r#"<Partition_Schedule PartitionIdentifier="2" PartitionName="A""#,
    );
    let e = errors_of(&xml);
    assert!(e.iter().any(|d| d.rule.code() == "unknown-reference" && d.message.contains("do not agree")), "{e:#?}");
}

#[test]
fn window_outside_major_frame() {
    let xml =
        edit(r#"WindowStartSeconds="0.02" WindowDurationSeconds="0.005""#, r#"WindowStartSeconds="0.038" WindowDurationSeconds="0.005""#);
    let e = errors_of(&xml);
    let w: Vec<_> = e.iter().filter(|d| d.rule.code() == "window-outside-frame").collect();
    assert_eq!(w.len(), 1, "{e:#?}");
    assert_eq!(w[0].line, line_of(&xml, "0.038"));
    assert!(
        w[0].message.contains("window 2 of partition 1 \"A\"") && w[0].message.contains("43 ms") && w[0].message.contains("40 ms"),
        "{}",
        w[0].message
    );
}

#[test]
fn overlapping_windows_on_one_core() {
    let xml =
        edit(r#"WindowStartSeconds="0.005" WindowDurationSeconds="0.01""#, r#"WindowStartSeconds="0.004" WindowDurationSeconds="0.01""#);
    let e = errors_of(&xml);
    let w: Vec<_> = e.iter().filter(|d| d.rule.code() == "window-overlap").collect();
    assert_eq!(w.len(), 1, "{e:#?}");
    assert_eq!(w[0].line, line_of(&xml, r#"WindowStartSeconds="0.004""#));
    assert!(w[0].message.contains("on core 0") && w[0].message.contains("partition 2 \"B\"") && w[0].message.contains("partition 1 \"A\""));
}

#[test]
fn windows_at_the_same_time_on_two_cores_are_a_multicore_partition() {
    // B already runs on core 1 at [0,10) while A runs on core 0 at [0,5): no overlap error.
    assert!(errors_of(BASE).iter().all(|d| d.rule.code() != "window-overlap"));
}

#[test]
fn period_not_covered() {
    let xml =
        edit(r#"WindowStartSeconds="0.02" WindowDurationSeconds="0.005""#, r#"WindowStartSeconds="0.02" WindowDurationSeconds="0.004""#);
    assert_single(
        &xml,
        "period-not-covered",
        r#"<Partition_Schedule PartitionIdentifier="1""#,
        &["partition 1 \"A\"", "4 ms", "period 1 [20 ms, 40 ms)", "5 ms"],
    );
}

#[test]
fn major_frame_not_a_multiple_of_period() {
    let xml = edit(r#"PeriodSeconds="0.02" PeriodDurationSeconds="0.005""#, r#"PeriodSeconds="0.03" PeriodDurationSeconds="0.005""#);
    assert_single(&xml, "frame-not-multiple", r#"<Partition_Schedule PartitionIdentifier="1""#, &["0.04", "0.03", "partition 1"]);
}

#[test]
fn channel_unknown_port() {
    let xml = edit(r#"PortName="in""#, r#"PortName="inn""#);
    let e = errors_of(&xml);
    let c: Vec<_> = e.iter().filter(|d| d.rule.code() == "channel-unknown").collect();
    assert_eq!(c.len(), 1, "{e:#?}");
    assert_eq!(c[0].line, line_of(&xml, r#"PortName="inn""#));
    assert!(c[0].message.contains("\"inn\"") && c[0].message.contains("its ports are in, qin"));
}

#[test]
fn channel_unknown_partition() {
    let xml = edit(
        r#"<Destination><Standard_Partition PartitionIdentifier="2" PartitionName="B" PortName="in"/>"#,
        r#"<Destination><Standard_Partition PartitionIdentifier="7" PortName="in"/>"#,
    );
    assert_single(&xml, "channel-unknown", r#"PartitionIdentifier="7""#, &["channel 1", "PartitionIdentifier 7"]);
}

#[test]
fn channel_against_direction() {
    let xml = edit(
        r#"<Sampling_Port Name="in" MaxMessageSize="64" Direction="DESTINATION""#,
        r#"<Sampling_Port Name="in" MaxMessageSize="64" Direction="SOURCE""#,
    );
    assert_single(&xml, "channel-direction", r#"PortName="in""#, &["\"in\"", "destination", "SOURCE"]);
}

#[test]
fn channel_size_mismatch() {
    let xml = edit(r#"<Sampling_Port Name="in" MaxMessageSize="64""#, r#"<Sampling_Port Name="in" MaxMessageSize="32""#);
    assert_single(&xml, "channel-size-mismatch", r#"PortName="in""#, &["32", "64", "make them equal"]);
}

#[test]
fn channel_kind_mismatch() {
    let xml = edit(r#"PortName="in""#, r#"PortName="qin""#);
    let e = errors_of(&xml);
    assert!(
        e.iter().any(|d| d.rule.code() == "channel-kind-mismatch"
            && d.line == line_of(&xml, r#"PortName="qin"/></Destination>"#)
            && d.message.contains("sampling source to queuing port")),
        "{e:#?}"
    );
}

#[test]
fn queuing_channel_with_two_destinations() {
    let xml = edit(
        r#"<Destination><Standard_Partition PartitionIdentifier="2" PartitionName="B" PortName="qin"/></Destination>"#,
        "<Destination><Standard_Partition PartitionIdentifier=\"2\" PartitionName=\"B\" PortName=\"qin\"/>\n        <Pseudo_Partition Name=\"remote\" PhysicalAddress=\"udp:10.0.0.2:4000\"/></Destination>",
    );
    assert_single(&xml, "channel-multiple-destinations", "Pseudo_Partition", &["queuing channel 2", "exactly one"]);
}

#[test]
fn unknown_hm_action() {
    let xml = edit(r#"Action="COLD_START""#, r#"Action="REBOOT""#);
    assert_single(&xml, "hm-unknown-action", "REBOOT", &["REBOOT", "IGNORE, IDLE, WARM_START, COLD_START"]);
}

#[test]
fn module_action_in_partition_table_is_unknown() {
    let xml = edit(r#"Action="COLD_START""#, r#"Action="SHUTDOWN""#);
    assert_single(&xml, "hm-unknown-action", "SHUTDOWN", &["SHUTDOWN"]);
}

#[test]
fn unknown_hm_error_code() {
    let xml = edit(r#"ErrorCode="DEADLINE_MISSED""#, r#"ErrorCode="DIVIDE_BY_ZERO""#);
    assert_single(&xml, "hm-unknown-error-code", "DIVIDE_BY_ZERO", &["DIVIDE_BY_ZERO", "NUMERIC_ERROR"]);
}

#[test]
fn core_outside_declared_cores() {
    let xml = edit(r#"pt:Core="1"/>"#, r#"pt:Core="2"/>"#);
    assert_single(&xml, "core-out-of-range", r#"pt:Core="2""#, &["pt:Core 2", "2 core(s)"]);
}

#[test]
fn fixed_priority_core_with_windows() {
    let xml = edit(
        r#"<pt:Core Id="1" Policy="CYCLIC"/>"#,
        r#"<pt:Core Id="1" Policy="FIXED_PRIORITY"><pt:Partition_Priority PartitionIdentifier="2" Priority="3"/></pt:Core>"#,
    );
    assert_single(&xml, "fixed-priority-with-windows", r#"pt:Core="1""#, &["core 1", "FIXED_PRIORITY"]);
}

#[test]
fn missing_executable() {
    let xml = edit(r#"Criticality="LEVEL_C" pt:Executable="b""#, r#"Criticality="LEVEL_C""#);
    assert_single(&xml, "missing-executable", r#"PartitionName="B" Criticality"#, &["partition 2 \"B\"", "pt:Executable"]);
}

#[test]
fn missing_executable_file_is_only_a_warning() {
    let checked = check_text(BASE, Path::new("/nonexistent"));
    assert!(checked.is_valid());
    assert!(checked.warnings().any(|w| w.rule.code() == "executable-not-found" && w.message.contains("does not exist yet")));
}

#[test]
fn partition_absent_from_a_schedule_is_a_warning() {
    let xml = BASE.replace("</Module_Schedule>", "</Module_Schedule>\n  <Module_Schedule ScheduleIdentifier=\"2\" ScheduleName=\"startup\" MajorFrameSeconds=\"0.1\">\n    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.1\" PeriodDurationSeconds=\"0.1\">\n      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0\" WindowDurationSeconds=\"0.1\"/>\n    </Partition_Schedule>\n  </Module_Schedule>");
    let checked = check_text(&xml, Path::new("/nonexistent"));
    assert!(checked.is_valid(), "{:#?}", checked.diagnostics);
    assert!(checked.warnings().any(|w| w.rule.code() == "partition-not-scheduled"
        && w.message.contains("partition 2 \"B\"")
        && w.message.contains("\"startup\"")));
}

#[test]
fn two_initial_schedules() {
    let xml = BASE.replace(r#"MajorFrameSeconds="0.04">"#, r#"MajorFrameSeconds="0.04" InitialModuleSchedule="true">"#).replace(
        "</Module_Schedule>",
        "</Module_Schedule>\n  <Module_Schedule ScheduleIdentifier=\"2\" ScheduleName=\"other\" MajorFrameSeconds=\"0.04\" InitialModuleSchedule=\"true\"/>",
    );
    let e = errors_of(&xml);
    assert!(e.iter().any(|d| d.rule.code() == "initial-schedule" && d.line == line_of(&xml, "\"other\"")), "{e:#?}");
}

#[test]
fn two_errors_are_both_reported() {
    let xml = edit(r#"Action="COLD_START""#, r#"Action="REBOOT""#).replacen(r#"PortName="in""#, r#"PortName="inn""#, 1);
    let rules: Vec<&str> = errors_of(&xml).iter().map(|d| d.rule.code()).collect();
    assert_eq!(rules, ["channel-unknown", "hm-unknown-action"]);
}

#[test]
fn rendered_form_is_file_line_column() {
    let xml = edit(r#"Action="COLD_START""#, r#"Action="REBOOT""#);
    let e = &errors_of(&xml)[0];
    let text = e.render("m.xml");
    assert!(text.starts_with(&format!("m.xml:{}:{}: error: ", e.line, e.column)), "{text}");
}

#[test]
fn any_extension_prefix_works() {
    let xml = BASE.replace("xmlns:pt=", "xmlns:ext=").replace("pt:", "ext:");
    assert!(errors_of(&xml).is_empty());
    // Without the namespace, pt:Executable is not Partita's attribute.
    let unbound = BASE.replace(r#" xmlns:pt="urn:partita:1""#, r#" xmlns:pt="urn:other""#);
    assert!(errors_of(&unbound).iter().any(|d| d.rule.code() == "missing-executable"));
}

#[test]
fn major_frame_that_no_period_divides_is_reported_on_the_frame() {
    let xml = edit(r#"MajorFrameSeconds="0.04""#, r#"MajorFrameSeconds="0.03""#);
    assert_single(&xml, "frame-not-multiple", "<Module_Schedule", &["MajorFrameSeconds 0.03", "0.02, 0.04", "common multiple"]);
}

#[test]
fn truncated_file_is_reported_at_its_end() {
    let cut = &BASE[..BASE.find("<Connection_Table>").unwrap()];
    let e = errors_of(cut);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].rule.code(), "xml-malformed");
    assert_eq!(e[0].line, cut.trim_end().lines().count() as u32, "{e:?}");
    assert!(e[0].message.contains("truncated"));
}

#[test]
fn a_dtd_is_reported_where_it_is() {
    let xml = format!("<?xml version=\"1.0\"?>\n<!DOCTYPE x>\n{BASE}");
    let e = errors_of(&xml);
    assert_eq!((e[0].rule.code(), e[0].line), ("xml-malformed", 2), "{e:?}");
}

#[test]
fn elements_of_other_namespaces_are_not_partita_elements() {
    let xml = edit("<Connection_Table>", "<foo:Partition xmlns:foo=\"urn:other\" PartitionIdentifier=\"1\"/>\n  <Connection_Table>");
    let checked = check_text(&xml, Path::new("/nonexistent"));
    assert!(checked.is_valid(), "{:#?}", checked.diagnostics);
    assert_eq!(checked.module.unwrap().partitions.len(), 2);
}

#[test]
fn extension_names_in_messages_use_pt_whatever_the_prefix() {
    let xml = edit(r#"<pt:Core Id="1" Policy="CYCLIC"/>"#, r#"<pt:Core Id="1" Policy="ROUND_ROBIN"/>"#)
        .replace("xmlns:pt=", "xmlns:q=")
        .replace("pt:", "q:");
    let e = errors_of(&xml);
    assert!(e.iter().any(|d| d.message.contains("of <pt:Core>") && d.message.contains("ROUND_ROBIN")), "{e:#?}");
}

#[test]
fn unnumbered_schedules_get_unused_identifiers() {
    let xml = edit(r#"ScheduleIdentifier="1" ScheduleName="s""#, r#"ScheduleIdentifier="2" ScheduleName="s""#)
        .replace("</Module_Schedule>", "</Module_Schedule>\n  <Module_Schedule MajorFrameSeconds=\"0.04\"/>");
    let checked = check_text(&xml, Path::new("/nonexistent"));
    let ids: Vec<u32> = checked.module.as_ref().unwrap().schedules.iter().map(|s| s.id.value).collect();
    assert_eq!(ids, [2, 1]);
    assert!(checked.errors().all(|d| d.rule.code() != "duplicate"), "{:#?}", checked.diagnostics);
}

#[test]
fn a_file_cut_inside_a_tag_is_reported_at_its_end() {
    let cut = &BASE[..BASE.find("MaxNbMessages=\"4\"/>\n  </Partition>\n  <Partition").unwrap() + 5];
    let e = errors_of(cut);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!((e[0].rule.code(), e[0].line), ("xml-malformed", cut.lines().count() as u32), "{e:?}");
    assert!(e[0].message.contains("truncated"), "{}", e[0].message);
}
