//! Deterministic synthetic module configurations of any size, for the `check` benchmark and
//! for tests that need a large valid module.

use std::fmt::Write;

/// A valid module of `partitions` partitions spread round-robin over `cores` cores, with
/// `schedules` module schedules (each shifting the window order), a sampling and a queuing
/// channel per neighbouring pair, memory requirements and HM tables for every partition.
pub fn module_xml(partitions: u32, cores: u32, schedules: u32) -> String {
    assert!(partitions >= 2 && cores >= 1 && schedules >= 1);
    let per_core = partitions.div_ceil(cores);
    // Each partition gets a 1 ms window in each 10*per_core ms period... keep it simple:
    // slot = 1 ms, major frame = 4 periods of per_core slots.
    let slot_us = 1000u64;
    let period_us = slot_us * u64::from(per_core);
    let frame_us = period_us * 4;
    let secs = |us: u64| format!("{}.{:06}", us / 1_000_000, us % 1_000_000);
    let mut x = String::new();
    let _ = writeln!(x, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(x, r#"<!-- generated: {partitions} partitions, {cores} cores, {schedules} schedules -->"#);
    let _ = writeln!(x, r#"<ARINC_653_Module ModuleName="Generated" xmlns:pt="urn:partita:1">"#);
    let _ = writeln!(x, r#"  <pt:Cores Cpus="0-{}"/>"#, cores - 1);
    let _ = writeln!(x, "  <System_HM_Table>\n    <System_State_Entry SystemState=\"1\" Description=\"normal\">");
    for (i, code) in ["DEADLINE_MISSED", "APPLICATION_ERROR", "NUMERIC_ERROR", "MEMORY_VIOLATION"].iter().enumerate() {
        let _ = writeln!(x, r#"      <Error_ID_Level ErrorIdentifier="{}" ErrorLevel="PARTITION" ErrorCode="{code}"/>"#, i + 1);
    }
    let _ = writeln!(x, "    </System_State_Entry>\n  </System_HM_Table>");
    for p in 1..=partitions {
        let crit = ["LEVEL_A", "LEVEL_B", "LEVEL_C", "LEVEL_D", "LEVEL_E"][(p % 5) as usize];
        let _ = writeln!(
            x,
            r#"  <Partition PartitionIdentifier="{p}" PartitionName="P{p}" Criticality="{crit}" SystemPartition="false" EntryPoint="main" pt:Executable="bin/p{p}">"#
        );
        let _ = writeln!(x, r#"    <Sampling_Port Name="s_out" MaxMessageSize="64" Direction="SOURCE" RefreshRateSeconds="0.1"/>"#);
        let _ = writeln!(x, r#"    <Sampling_Port Name="s_in" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.1"/>"#);
        let _ = writeln!(x, r#"    <Queuing_Port Name="q_out" MaxMessageSize="128" Direction="SOURCE" MaxNbMessages="8"/>"#);
        let _ = writeln!(x, r#"    <Queuing_Port Name="q_in" MaxMessageSize="128" Direction="DESTINATION" MaxNbMessages="8"/>"#);
        let _ = writeln!(x, r#"    <Process Name="main_loop" StackSize="65536"/>"#);
        let _ = writeln!(x, "  </Partition>");
        let _ = writeln!(x, r#"  <Partition_Memory PartitionIdentifier="{p}" PartitionName="P{p}">"#);
        let _ = writeln!(
            x,
            r#"    <Memory_Requirements RegionName="data" Type="DATA" SizeBytes="0x100000" Access="READ_WRITE" pt:Colors="0-7"/>"#
        );
        let _ = writeln!(x, "  </Partition_Memory>");
    }
    for s in 0..schedules {
        let _ = writeln!(
            x,
            r#"  <Module_Schedule ScheduleIdentifier="{}" ScheduleName="mode{}" MajorFrameSeconds="{}"{}>"#,
            s + 1,
            s + 1,
            secs(frame_us),
            if s == 0 { r#" InitialModuleSchedule="true""# } else { "" }
        );
        for p in 1..=partitions {
            let core = (p - 1) % cores;
            let slot = (((p - 1) / cores) + s) % per_core;
            let _ = writeln!(
                x,
                r#"    <Partition_Schedule PartitionIdentifier="{p}" PartitionName="P{p}" PeriodSeconds="{}" PeriodDurationSeconds="{}">"#,
                secs(period_us),
                secs(slot_us)
            );
            for k in 0..4u64 {
                let start = k * period_us + u64::from(slot) * slot_us;
                let _ = writeln!(
                    x,
                    r#"      <Window_Schedule WindowIdentifier="{}" WindowStartSeconds="{}" WindowDurationSeconds="{}" PartitionPeriodStart="true" pt:Core="{core}"/>"#,
                    k + 1,
                    secs(start),
                    secs(slot_us)
                );
            }
            let _ = writeln!(x, "    </Partition_Schedule>");
        }
        let _ = writeln!(x, "  </Module_Schedule>");
    }
    for p in 1..=partitions {
        let _ = writeln!(x, r#"  <Partition_HM_Table PartitionIdentifier="{p}" PartitionName="P{p}">"#);
        let _ = writeln!(x, r#"    <System_State_Entry SystemState="1">"#);
        for (i, action) in ["IGNORE", "IDLE", "WARM_START", "COLD_START"].iter().enumerate() {
            let _ = writeln!(x, r#"      <Error_ID_Action ErrorIdentifier="{}" Action="{action}"/>"#, i + 1);
        }
        let _ = writeln!(x, "    </System_State_Entry>\n  </Partition_HM_Table>");
    }
    let _ = writeln!(x, "  <Connection_Table>");
    for p in 1..=partitions {
        let next = p % partitions + 1;
        for (c, (out, inp)) in [("s_out", "s_in"), ("q_out", "q_in")].iter().enumerate() {
            let _ = writeln!(x, r#"    <Channel ChannelIdentifier="{}" ChannelName="c{p}_{c}">"#, 2 * p + c as u32 - 1);
            let _ = writeln!(
                x,
                r#"      <Source><Standard_Partition PartitionIdentifier="{p}" PartitionName="P{p}" PortName="{out}"/></Source>"#
            );
            let _ = writeln!(
                x,
                r#"      <Destination><Standard_Partition PartitionIdentifier="{next}" PartitionName="P{next}" PortName="{inp}"/></Destination>"#
            );
            let _ = writeln!(x, "    </Channel>");
        }
    }
    let _ = writeln!(x, "  </Connection_Table>\n</ARINC_653_Module>");
    x
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_modules_are_valid() {
        for (p, c, s) in [(64, 4, 3), (2, 1, 1), (7, 3, 2)] {
            let xml = super::module_xml(p, c, s);
            let checked = crate::check_text(&xml, std::path::Path::new("/nonexistent"));
            let errors: Vec<String> = checked.errors().map(|d| d.render("gen")).collect();
            assert!(errors.is_empty(), "{p}/{c}/{s}: {errors:#?}");
            let m = checked.module.unwrap();
            assert_eq!((m.partitions.len(), m.cores.len(), m.schedules.len()), (p as usize, c as usize, s as usize));
        }
    }
}
