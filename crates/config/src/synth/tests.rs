//! Unit tests of window synthesis: end to end, the per-core tables and the splicing.

use super::*;
use crate::model::Window;

const DIR: &str = ".";

/// A module with `pt:Cores Cpus="0-{cores-1}"`, the given partitions (id, name, level)
/// and the given Module_Schedule text.
fn request(cores: u32, partitions: &[(u32, &str, &str)], schedules: &str) -> String {
    let mut s = String::from("<?xml version=\"1.0\"?>\n<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">\n");
    s.push_str(&format!("  <pt:Cores Cpus=\"0-{}\"/>\n", cores - 1));
    for (id, name, level) in partitions {
        s.push_str(&format!(
            "  <Partition PartitionIdentifier=\"{id}\" PartitionName=\"{name}\" Criticality=\"{level}\" pt:Executable=\"bin/{name}\"/>\n"
        ));
    }
    s.push_str(schedules);
    s.push_str("</ARINC_653_Module>\n");
    s
}

fn ps(id: u32, name: &str, period: &str, duration: &str) -> String {
    format!(
        "    <Partition_Schedule PartitionIdentifier=\"{id}\" PartitionName=\"{name}\" PeriodSeconds=\"{period}\" PeriodDurationSeconds=\"{duration}\"/>\n"
    )
}

fn schedule(frame: &str, body: &str) -> String {
    format!("  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"{frame}\">\n{body}  </Module_Schedule>\n")
}

fn synth(text: &str) -> Synthesis {
    match synthesize(text, Path::new(DIR)) {
        Ok(s) => s,
        Err(SynthError::NotAModule(d)) => panic!("not a module: {d:#?}"),
    }
}

fn errors(text: &str) -> Vec<Diagnostic> {
    crate::check_text(text, Path::new(DIR)).errors().cloned().collect()
}

fn assert_valid(text: &str) -> Module {
    let checked = crate::check_text(text, Path::new(DIR));
    let errors: Vec<_> = checked.errors().collect();
    assert!(errors.is_empty(), "{errors:#?}\n{text}");
    checked.module.unwrap()
}

/// Windows of partition `id` in the first schedule, as (start, end, core) in ns.
fn windows(m: &Module, id: u32) -> Vec<(i64, i64, u32)> {
    let ps = m.schedules[0].partitions.iter().find(|ps| ps.partition.id.as_ref().unwrap().value == id).unwrap();
    ps.windows.iter().map(|w: &Window| (w.start.value.0, w.end().0, w.core.value)).collect()
}

const MS: i64 = 1_000_000;

#[test]
fn ofp_and_vsp_on_one_core() {
    let body = ps(1, "OFP", "0.02", "0.01125") + &ps(2, "VSP", "0.08", "0.035");
    let text = request(1, &[(1, "OFP", "LEVEL_A"), (2, "VSP", "LEVEL_D")], &schedule("0.08", &body));
    assert!(!errors(&text).is_empty(), "the request itself lacks windows");
    let out = synth(&text);
    assert!(out.schedulable, "{:#?}", out.report);
    let m = assert_valid(&out.xml);
    // 100 % load: OFP first in each of its periods, VSP in the rest.
    let ofp = windows(&m, 1);
    assert_eq!(ofp.len(), 4);
    for (k, w) in ofp.iter().enumerate() {
        let k = k as i64;
        assert_eq!(*w, (k * 20 * MS, k * 20 * MS + 11_250_000, 0));
    }
    assert_eq!(windows(&m, 2).iter().map(|w| w.1 - w.0).sum::<i64>(), 35 * MS);
    let starts: Vec<bool> = m.schedules[0].partitions[1].windows.iter().map(|w| w.period_start).collect();
    assert_eq!(starts, [true, false, false, false]);
    assert_eq!(out.cores.len(), 1);
    assert!((out.cores[0].utilization - 1.0).abs() < 1e-9);
    assert_eq!(out.cores[0].partitions.iter().map(|p| p.id).collect::<Vec<_>>(), [1, 2]);
    assert!(out.report.iter().any(|l| l.contains("verdict: schedulable")));
}

#[test]
fn overloaded_set_is_not_schedulable() {
    // The seed's OFP/VSP budgets with a 12 ms OFP slot: 60 % + 43.75 % on one core.
    let body = ps(1, "OFP", "0.02", "0.012") + &ps(2, "VSP", "0.08", "0.035");
    let text = request(1, &[(1, "OFP", "LEVEL_A"), (2, "VSP", "LEVEL_D")], &schedule("0.08", &body));
    let out = synth(&text);
    assert!(!out.schedulable);
    let all = out.reasons.join("\n");
    assert!(all.contains("partition 2 \"VSP\""), "{all}");
    assert!(all.contains("103.75 %"), "{all}");
    assert!(all.contains("total utilization 103.75 %"), "{all}");
    assert!(out.report.iter().any(|l| l.contains("NOT schedulable")));
    // The more critical partition kept its core and its windows.
    let m = crate::check_text(&out.xml, Path::new(DIR)).module.unwrap();
    assert_eq!(windows(&m, 1).iter().map(|w| w.1 - w.0).sum::<i64>(), 48 * MS);
    assert!(windows(&m, 2).is_empty());
}

#[test]
fn criticality_inversion_is_avoided() {
    // H (LEVEL_A) 12 ms every 40 ms; L (LEVEL_D) 2 ms every 10 ms. Plain EDF runs L at 0,
    // H from 2 ms, and at 10 ms L's earlier deadline preempts H.
    let body = ps(1, "H", "0.04", "0.012") + &ps(2, "L", "0.01", "0.002");
    let text = request(1, &[(1, "H", "LEVEL_A"), (2, "L", "LEVEL_D")], &schedule("0.04", &body));
    let tasks = [SimTask { period: 40 * MS, budget: 12 * MS, crit: 4, id: 1 }, SimTask { period: 10 * MS, budget: 2 * MS, crit: 0, id: 2 }];
    let sim = Sim { tasks: &tasks, blocked: &[], frame: 40 * MS };
    let plain = sim.schedule(false);
    assert!(plain.misses.is_empty());
    assert!(count_inversions(&tasks, &plain.slices) > 0, "plain EDF preempts H: {:?}", plain.slices);

    let out = synth(&text);
    assert!(out.schedulable, "{:#?}", out.report);
    let m = assert_valid(&out.xml);
    let h = windows(&m, 1);
    let l = windows(&m, 2);
    assert_eq!(h, [(2 * MS, 14 * MS, 0)]);
    assert_eq!(l.iter().map(|w| w.0).collect::<Vec<_>>(), [0, 14 * MS, 20 * MS, 30 * MS]);
    // No L window starts while H has begun and not finished its budget of its period.
    for &(start, _, _) in &l {
        let period_start = start / (40 * MS) * 40 * MS;
        let done: i64 = h.iter().map(|&(a, b, _)| (b.min(start) - a.max(period_start)).max(0)).sum();
        assert!(done == 0 || done >= 12 * MS, "L starts at {start} with H at {done}");
    }
    assert!(out.report.iter().any(|l| l.contains("preempting a more critical one: 0 time(s) (plain EDF: 1)")), "{:#?}", out.report);
}

#[test]
fn inversion_is_kept_when_avoiding_it_would_miss() {
    // H needs 20 of 40 ms; letting it finish at 10 ms would make L miss its 20 ms deadline.
    let tasks = [SimTask { period: 40 * MS, budget: 20 * MS, crit: 4, id: 1 }, SimTask { period: 10 * MS, budget: 3 * MS, crit: 0, id: 2 }];
    let sim = Sim { tasks: &tasks, blocked: &[], frame: 40 * MS };
    let table = sim.schedule(true);
    assert!(table.misses.is_empty());
    assert!(table.slices.contains(&(10 * MS, 13 * MS, 1)), "{:?}", table.slices);
}

#[test]
fn avoidance_gives_up_to_plain_edf_past_its_budget() {
    let tasks = [SimTask { period: 40 * MS, budget: 12 * MS, crit: 4, id: 1 }, SimTask { period: 10 * MS, budget: 2 * MS, crit: 0, id: 2 }];
    let sim = Sim { tasks: &tasks, blocked: &[], frame: 40 * MS };
    let starved = sim.schedule_within(true, 0);
    assert_eq!(starved.gave_up_at, Some(10 * MS));
    assert_eq!(starved.slices, sim.schedule(false).slices);
    assert!(sim.schedule(true).gave_up_at.is_none());
}

#[test]
fn avoidance_never_causes_a_miss_at_full_load() {
    // 100 % utilization with several criticalities and blocked time.
    let tasks = [
        SimTask { period: 40 * MS, budget: 14 * MS, crit: 4, id: 1 },
        SimTask { period: 10 * MS, budget: 2 * MS, crit: 0, id: 2 },
        SimTask { period: 20 * MS, budget: 3 * MS, crit: 2, id: 3 },
    ];
    let blocked = [(5 * MS, 7 * MS), (31 * MS, 33 * MS)];
    let sim = Sim { tasks: &tasks, blocked: &blocked, frame: 40 * MS };
    let plain = sim.schedule(false);
    let table = sim.schedule(true);
    assert!(plain.misses.is_empty() && table.misses.is_empty());
    assert!(count_inversions(&tasks, &table.slices) <= count_inversions(&tasks, &plain.slices));
    for &(a, b, _) in &table.slices {
        assert!(blocked.iter().all(|&(x, y)| b <= x || a >= y), "slice [{a}, {b}) in blocked time");
    }
}

#[test]
fn self_closing_elements_comments_and_layout_survive() {
    let text = "<?xml version=\"1.0\"?>\n<!-- head comment -->\n<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">\n\
        \t<Partition PartitionIdentifier=\"1\" PartitionName=\"A\" Criticality=\"LEVEL_B\" pt:Executable=\"a\"/>\n\
        \t<Partition PartitionIdentifier=\"2\" PartitionName=\"B\" Criticality=\"LEVEL_C\" pt:Executable=\"b\"/>\n\
        \t<Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"s\" MajorFrameSeconds=\"0.02\">\n\
        \t\t<!-- keep me -->\n\
        \t\t<Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.004\" />\n\
        \t\t<Partition_Schedule PartitionIdentifier=\"2\" PeriodSeconds=\"0.02\" PeriodDurationSeconds=\"0.005\">\n\
        \t\t\t<!-- B's comment -->\n\
        \t\t</Partition_Schedule>\n\
        \t</Module_Schedule>\n</ARINC_653_Module>\n";
    let out = synth(text);
    assert!(out.schedulable, "{:#?}", out.report);
    let m = assert_valid(&out.xml);
    for kept in
        ["<!-- head comment -->", "\t\t<!-- keep me -->\n", "\t\t\t<!-- B's comment -->\n", "\t</Module_Schedule>\n</ARINC_653_Module>\n"]
    {
        assert!(out.xml.contains(kept), "{kept:?} lost:\n{}", out.xml);
    }
    assert!(out.xml.contains(
        "\t\t<Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.004\">\n\t\t\t<Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0\" WindowDurationSeconds=\"0.004\" PartitionPeriodStart=\"true\" pt:Core=\"0\"/>\n"
    ), "{}", out.xml);
    assert!(
        out.xml.contains(
            "PartitionPeriodStart=\"true\" pt:Core=\"0\"/>\n\t\t</Partition_Schedule>\n\t\t<Partition_Schedule PartitionIdentifier=\"2\""
        ),
        "{}",
        out.xml
    );
    assert!(out.xml.contains("\t\t\t<!-- B's comment -->\n\t\t\t<Window_Schedule WindowIdentifier=\"1\""), "{}", out.xml);
    assert_eq!(windows(&m, 1).len(), 2);
    assert_eq!(windows(&m, 2), [(4 * MS, 9 * MS, 0)]);
    // Everything but the inserted windows and closing tags is the request, byte for byte.
    let stripped: String = out
        .xml
        .lines()
        .filter(|l| !l.contains("<Window_Schedule") && l.trim() != "</Partition_Schedule>")
        .map(|l| l.replace("PeriodDurationSeconds=\"0.004\">", "PeriodDurationSeconds=\"0.004\" />") + "\n")
        .collect();
    let original: String = text.lines().filter(|l| l.trim() != "</Partition_Schedule>").map(|l| format!("{l}\n")).collect();
    assert_eq!(stripped, original);
}

#[test]
fn crlf_and_inline_elements() {
    let text = "<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">\r\n  <Partition PartitionIdentifier=\"1\" PartitionName=\"A\" pt:Executable=\"a\"/>\r\n  <Module_Schedule MajorFrameSeconds=\"0.01\"><Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.001\"></Partition_Schedule></Module_Schedule>\r\n</ARINC_653_Module>\r\n";
    let out = synth(text);
    assert!(out.schedulable, "{:#?}", out.report);
    assert_valid(&out.xml);
    assert!(!out.xml.replace("\r\n", "").contains('\n'), "only CRLF line ends: {:?}", out.xml);
}

#[test]
fn a_document_without_the_extension_prefix_gets_one() {
    let text = "<ARINC_653_Module ModuleName=\"M\">\n  <Partition PartitionIdentifier=\"1\" PartitionName=\"A\"/>\n  <Module_Schedule MajorFrameSeconds=\"0.01\">\n    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.002\"/>\n  </Module_Schedule>\n</ARINC_653_Module>\n";
    let out = synth(text);
    assert!(out.schedulable, "{:#?}", out.report);
    assert!(out.xml.starts_with("<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">"), "{}", out.xml);
    assert!(out.xml.contains("pt:Core=\"0\"/>"));
    assert!(out.report.iter().any(|l| l.contains("no pt:Executable")), "{:#?}", out.report);
    // Only the missing executable is left to fix.
    let errs = errors(&out.xml);
    assert!(!errs.is_empty() && errs.iter().all(|d| d.rule == Rule::MissingExecutable), "{errs:#?}");
    let m = crate::check_text(&out.xml, Path::new(DIR)).module.unwrap();
    assert_eq!(windows(&m, 1), [(0, 2 * MS, 0)]);
}

#[test]
fn a_taken_pt_prefix_is_not_reused() {
    let text = "<ARINC_653_Module xmlns:pt=\"urn:other\" ModuleName=\"M\">\n  <Partition PartitionIdentifier=\"1\" PartitionName=\"A\"/>\n  <Module_Schedule MajorFrameSeconds=\"0.01\">\n    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.002\"/>\n  </Module_Schedule>\n</ARINC_653_Module>\n";
    let out = synth(text);
    assert!(out.xml.starts_with("<ARINC_653_Module xmlns:pt1=\"urn:partita:1\" xmlns:pt=\"urn:other\""), "{}", out.xml);
    assert!(out.xml.contains("pt1:Core=\"0\"/>"));
    assert!(errors(&out.xml).iter().all(|d| d.rule == Rule::MissingExecutable));
}

#[test]
fn the_bound_prefix_and_element_prefix_are_used() {
    let text = "<a:ARINC_653_Module xmlns:a=\"urn:arinc\" xmlns:partita=\"urn:partita:1\" ModuleName=\"M\">\n  <partita:Cores Cpus=\"0-1\"/>\n  <a:Partition PartitionIdentifier=\"1\" PartitionName=\"A\" partita:Executable=\"a\"/>\n  <a:Module_Schedule MajorFrameSeconds=\"0.01\">\n    <a:Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.002\"/>\n  </a:Module_Schedule>\n</a:ARINC_653_Module>\n";
    let out = synth(text);
    assert!(out.schedulable, "{:#?}", out.report);
    assert!(out.xml.contains("<a:Window_Schedule WindowIdentifier=\"1\""), "{}", out.xml);
    assert!(out.xml.contains("partita:Core=\"0\"/>\n    </a:Partition_Schedule>"), "{}", out.xml);
    assert!(!out.xml.contains("xmlns:pt"));
    assert_valid(&out.xml);
}

#[test]
fn two_cores_share_the_load() {
    let body = ps(1, "A", "0.01", "0.004") + &ps(2, "B", "0.02", "0.008") + &ps(3, "C", "0.01", "0.004") + &ps(4, "D", "0.02", "0.008");
    let text = request(2, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B"), (3, "C", "LEVEL_C"), (4, "D", "LEVEL_D")], &schedule("0.02", &body));
    let out = synth(&text);
    assert!(out.schedulable, "{:#?}", out.report);
    let m = assert_valid(&out.xml);
    assert_eq!(out.cores.len(), 2);
    for core in &out.cores {
        assert_eq!(core.partitions.len(), 2, "{:#?}", out.cores);
        assert!((core.utilization - 0.8).abs() < 1e-9);
    }
    // The two most critical partitions are on different cores.
    let core_of = |id| windows(&m, id)[0].2;
    assert_ne!(core_of(1), core_of(2));
    let mut used: Vec<u32> = (1..=4).map(core_of).collect();
    used.sort_unstable();
    assert_eq!(used, [0, 0, 1, 1]);
    let json = serde_json::to_string(&out.cores).unwrap();
    assert!(json.contains("\"criticality\":\"LEVEL_A\""), "{json}");
}

#[test]
fn best_fit_is_tried_when_criticality_order_leaves_a_partition_out() {
    // Worst fit by criticality puts A and B (50 % each) on different cores; C (100 %) then
    // fits nowhere. Packing by utilization puts C alone and A with B.
    let body = ps(1, "A", "0.01", "0.005") + &ps(2, "B", "0.01", "0.005") + &ps(3, "C", "0.01", "0.01");
    let text = request(2, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B"), (3, "C", "LEVEL_C")], &schedule("0.01", &body));
    let out = synth(&text);
    assert!(out.schedulable, "{:#?}", out.report);
    assert_valid(&out.xml);
    assert!(out.report.iter().any(|l| l.contains("best fit")), "{:#?}", out.report);
}

#[test]
fn kept_windows_are_reserved() {
    let body = "    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.003\">\n      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0.002\" WindowDurationSeconds=\"0.003\" PartitionPeriodStart=\"true\"/>\n    </Partition_Schedule>\n".to_string()
        + &ps(2, "B", "0.005", "0.002")
        + &ps(3, "C", "0.01", "0.001");
    let text = request(1, &[(1, "A", "LEVEL_C"), (2, "B", "LEVEL_A"), (3, "C", "LEVEL_B")], &schedule("0.01", &body));
    let out = synth(&text);
    assert!(out.schedulable, "{:#?}", out.report);
    let m = assert_valid(&out.xml);
    assert_eq!(windows(&m, 1), [(2 * MS, 5 * MS, 0)]);
    for id in [2, 3] {
        for (a, b, _) in windows(&m, id) {
            assert!(b <= 2 * MS || a >= 5 * MS, "partition {id} window [{a}, {b}) in kept time");
        }
    }
    assert!(out.cores[0].partitions.iter().any(|p| p.kept && p.id == 1));
    assert!((out.cores[0].utilization - 0.8).abs() < 1e-9, "{:#?}", out.cores);
}

#[test]
fn kept_windows_in_the_way_are_a_reason() {
    // 60 % fits by utilization, but the kept window [0, 4) ms leaves B 1 ms before its 5 ms deadline.
    let body = "    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.004\">\n      <Window_Schedule WindowIdentifier=\"1\" WindowStartSeconds=\"0\" WindowDurationSeconds=\"0.004\" PartitionPeriodStart=\"true\"/>\n    </Partition_Schedule>\n".to_string()
        + &ps(2, "B", "0.005", "0.002");
    let text = request(1, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B")], &schedule("0.01", &body));
    let out = synth(&text);
    assert!(!out.schedulable);
    let all = out.reasons.join("\n");
    assert!(all.contains("kept windows") && all.contains("period 0 [0 s, 0.005 s)") && all.contains("only 0.001 s"), "{all}");
}

#[test]
fn a_frame_that_is_not_a_multiple_is_a_verdict() {
    let body = ps(1, "A", "0.03", "0.001") + &ps(2, "B", "0.02", "0.001");
    let text = request(1, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B")], &schedule("0.04", &body));
    let out = synth(&text);
    assert!(!out.schedulable);
    assert!(out.reasons[0].contains("not a multiple of PeriodSeconds 0.03 of partition 1 \"A\""), "{:#?}", out.reasons);
    assert_eq!(out.xml, text);
}

#[test]
fn unusable_requests_are_errors() {
    let SynthError::NotAModule(d) = synthesize("<ARINC_653_Module><oops></ARINC_653_Module>", Path::new(DIR)).unwrap_err();
    assert_eq!(d[0].rule, Rule::XmlMalformed);
    let body = ps(9, "Z", "0.01", "0.001");
    let text = request(1, &[(1, "A", "LEVEL_A")], &schedule("0.01", &body));
    let SynthError::NotAModule(d) = synthesize(&text, Path::new(DIR)).unwrap_err();
    assert!(d.iter().any(|d| d.rule == Rule::UnknownReference), "{d:#?}");
    assert!(d.iter().all(|d| d.rule != Rule::PeriodNotCovered));
}

#[test]
fn fixed_priority_cores_and_empty_budgets_get_no_windows() {
    let text = "<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"M\">\n  <pt:Cores Cpus=\"0-1\">\n    <pt:Core Id=\"0\" Policy=\"FIXED_PRIORITY\"><pt:Partition_Priority PartitionIdentifier=\"3\" Priority=\"1\"/></pt:Core>\n  </pt:Cores>\n  <Partition PartitionIdentifier=\"1\" PartitionName=\"A\" pt:Executable=\"a\"/>\n  <Partition PartitionIdentifier=\"2\" PartitionName=\"B\" pt:Executable=\"b\"/>\n  <Partition PartitionIdentifier=\"3\" PartitionName=\"C\" pt:Executable=\"c\"/>\n  <Module_Schedule MajorFrameSeconds=\"0.01\">\n    <Partition_Schedule PartitionIdentifier=\"1\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.006\"/>\n    <Partition_Schedule PartitionIdentifier=\"2\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0\"/>\n    <Partition_Schedule PartitionIdentifier=\"3\" PeriodSeconds=\"0.01\" PeriodDurationSeconds=\"0.005\"/>\n  </Module_Schedule>\n</ARINC_653_Module>\n";
    let out = synth(text);
    assert!(out.schedulable, "{:#?}", out.report);
    let m = assert_valid(&out.xml);
    assert_eq!(windows(&m, 1), [(0, 6 * MS, 1)]);
    assert!(windows(&m, 2).is_empty());
    assert!(windows(&m, 3).is_empty());
    assert_eq!(out.cores.iter().map(|c| c.core).collect::<Vec<_>>(), [1]);
    assert!(out.xml.contains("PeriodDurationSeconds=\"0\"/>"), "untouched");
}

#[test]
fn every_schedule_is_synthesized() {
    let one = ps(1, "A", "0.01", "0.002") + &ps(2, "B", "0.02", "0.01");
    let two = ps(1, "A", "0.05", "0.01") + &ps(2, "B", "0.05", "0.04");
    let schedules = schedule("0.02", &one)
        + &schedule("0.05", &two).replace("ScheduleIdentifier=\"1\" ScheduleName=\"s\"", "ScheduleIdentifier=\"2\" ScheduleName=\"t\"");
    let text = request(1, &[(1, "A", "LEVEL_A"), (2, "B", "LEVEL_B")], &schedules);
    let out = synth(&text);
    assert!(out.schedulable, "{:#?}", out.report);
    let m = assert_valid(&out.xml);
    assert_eq!(m.schedules[1].partitions[1].windows.len(), 1);
    assert_eq!(out.cores.iter().map(|c| c.schedule_id).collect::<Vec<_>>(), [1, 2]);
    // Synthesizing the result again changes nothing.
    let again = synth(&out.xml);
    assert!(again.schedulable);
    assert_eq!(again.xml, out.xml);
}

#[test]
fn windows_split_at_period_boundaries() {
    let slices = [(0, 5, 0), (5, 10, 0), (10, 12, 0), (15, 20, 0)];
    let ws = windows_of(&slices, 0, 10, 2);
    assert_eq!(
        ws,
        [
            OutWindow { start: 0, duration: 10, period_start: true, core: 2 },
            OutWindow { start: 10, duration: 2, period_start: true, core: 2 },
            OutWindow { start: 15, duration: 5, period_start: false, core: 2 },
        ]
    );
}
