//! Partitions, their ports and memory, cores, and module schedules with their windows.

use super::{Allowed, AttrName, Cx, EXT_NS};
use crate::diag::Rule;
use crate::model::*;
use crate::time::Nanos;
use roxmltree::Node;

use super::values::{parse_index_list, parse_int};

impl Cx<'_, '_> {
    pub(super) fn cores(&mut self, node: Node) -> Vec<Core> {
        self.check_attributes(node, Allowed { std: &["Cpus"], ext: &["Cpus"] });
        let cpus =
            self.attr(node, None, "Cpus").or_else(|| self.attr(node, Some(EXT_NS), "Cpus")).map(|(text, span)| (text.to_string(), span));
        let cpu_list = match cpus {
            Some((text, span)) => match parse_index_list(&text) {
                Some(list) if !list.is_empty() => list,
                _ => {
                    self.diags.error(
                        Rule::NumberMalformed,
                        span,
                        format!("Cpus=\"{text}\" of <pt:Cores> is not a CPU list (for example 0-1 or 0,2-3)"),
                    );
                    vec![0]
                }
            },
            None => {
                self.missing(node, "Cpus", " (the host CPUs of the module cores, for example 0-1)");
                vec![0]
            }
        };
        let mut cores: Vec<Core> = cpu_list
            .iter()
            .enumerate()
            .map(|(i, &cpu)| Core { index: i as u32, cpu, policy: CorePolicy::Cyclic, span: None, priorities: Vec::new() })
            .collect();
        for c in self.children(node, &[], &["Core"]) {
            self.check_attributes(c, Allowed { std: &["Id", "Policy"], ext: &[] });
            let Some(id) = self.u32(c, "Id", true) else { continue };
            let policy = self
                .keyword(
                    c,
                    None,
                    "Policy",
                    false,
                    Rule::InvalidValue,
                    &[("CYCLIC", CorePolicy::Cyclic), ("FIXED_PRIORITY", CorePolicy::FixedPriority)],
                )
                .map_or(CorePolicy::Cyclic, |p| p.value);
            let mut priorities = Vec::new();
            for pp in self.children(c, &[], &["Partition_Priority"]) {
                self.check_attributes(pp, Allowed { std: &["PartitionIdentifier", "Priority"], ext: &[] });
                let partition = self.u32(pp, "PartitionIdentifier", true);
                let priority =
                    self.value(pp, AttrName { ns: None, name: "Priority", required: true }, Rule::NumberMalformed, "an integer", |s| {
                        s.parse::<i32>().ok()
                    });
                if let (Some(partition), Some(priority)) = (partition, priority) {
                    priorities.push(PartitionPriority { span: self.span(pp), partition, priority });
                }
            }
            let span = self.span(c);
            match cores.get_mut(id.value as usize) {
                None => self.diags.error(
                    Rule::CoreOutOfRange,
                    id.span,
                    format!(
                        "<pt:Core Id=\"{}\"> is outside the {} module cores of Cpus (valid ids 0..{})",
                        id.value,
                        cpu_list.len(),
                        cpu_list.len() - 1
                    ),
                ),
                Some(core) if core.span.is_some() => {
                    let first = core.span.map_or(0, |s| s.line);
                    self.diags.error(Rule::Duplicate, span, format!("core {} is described twice (first at line {first})", id.value));
                }
                Some(core) => {
                    core.policy = policy;
                    core.span = Some(span);
                    core.priorities = priorities;
                }
            }
        }
        cores
    }

    pub(super) fn partition(&mut self, node: Node) -> Option<Partition> {
        self.check_attributes(
            node,
            Allowed {
                std: &["PartitionIdentifier", "PartitionName", "Criticality", "SystemPartition", "EntryPoint"],
                ext: &["Executable", "Backend", "Arguments", "MaxTasks", "MaxOpenFiles"],
            },
        );
        let id = self.u32(node, "PartitionIdentifier", true);
        let name = self.string(node, "PartitionName", true);
        let criticality = self.keyword(
            node,
            None,
            "Criticality",
            false,
            Rule::InvalidValue,
            &[
                ("LEVEL_A", Criticality::LevelA),
                ("LEVEL_B", Criticality::LevelB),
                ("LEVEL_C", Criticality::LevelC),
                ("LEVEL_D", Criticality::LevelD),
                ("LEVEL_E", Criticality::LevelE),
                ("A", Criticality::LevelA),
                ("B", Criticality::LevelB),
                ("C", Criticality::LevelC),
                ("D", Criticality::LevelD),
                ("E", Criticality::LevelE),
            ],
        );
        let system_partition = self.bool(node, "SystemPartition").is_some_and(|b| b.value);
        let entry_point = self.string(node, "EntryPoint", false);
        let executable = self.ext_string(node, "Executable");
        let span = self.span(node);
        let backend = self
            .keyword(node, Some(EXT_NS), "Backend", false, Rule::InvalidValue, &[("process", Backend::Process), ("kvm", Backend::Kvm)])
            .unwrap_or(Spanned::new(Backend::Process, span));
        let arguments = self.ext_string(node, "Arguments");
        let max_tasks = self.ext_count(node, "MaxTasks", MAX_TASKS_LIMIT);
        let max_open_files = self.ext_count(node, "MaxOpenFiles", MAX_OPEN_FILES_LIMIT);
        let mut mounts = Vec::new();
        let mut sampling_ports = Vec::new();
        let mut queuing_ports = Vec::new();
        let mut processes = Vec::new();
        let mut malformed_ports = Vec::new();
        let directions = [("SOURCE", Direction::Source), ("DESTINATION", Direction::Destination)];
        for c in self.children(node, &["Sampling_Port", "Queuing_Port", "Process"], &["Mount"]) {
            let span = self.span(c);
            if self.is_ext(c) {
                mounts.extend(self.mount(c));
                continue;
            }
            match c.tag_name().name() {
                "Sampling_Port" => {
                    self.check_attributes(c, Allowed { std: &["Name", "MaxMessageSize", "Direction", "RefreshRateSeconds"], ext: &[] });
                    let name = self.string(c, "Name", true);
                    let size = self.u32(c, "MaxMessageSize", true);
                    let direction = self.keyword(c, None, "Direction", true, Rule::InvalidValue, &directions);
                    let refresh_period = self.seconds(c, "RefreshRateSeconds", false);
                    match (name, size, direction) {
                        (Some(name), Some(max_message_size), Some(direction)) => {
                            sampling_ports.push(SamplingPort { span, name, max_message_size, direction, refresh_period })
                        }
                        (Some(name), ..) => malformed_ports.push(name.value),
                        _ => {}
                    }
                }
                "Queuing_Port" => {
                    self.check_attributes(c, Allowed { std: &["Name", "MaxMessageSize", "Direction", "MaxNbMessages"], ext: &[] });
                    let name = self.string(c, "Name", true);
                    let size = self.u32(c, "MaxMessageSize", true);
                    let direction = self.keyword(c, None, "Direction", true, Rule::InvalidValue, &directions);
                    let count = self.u32(c, "MaxNbMessages", true);
                    match (name, size, direction, count) {
                        (Some(name), Some(max_message_size), Some(direction), Some(max_nb_messages)) => {
                            queuing_ports.push(QueuingPort { span, name, max_message_size, direction, max_nb_messages })
                        }
                        (Some(name), ..) => malformed_ports.push(name.value),
                        _ => {}
                    }
                }
                _ => {
                    self.check_attributes(c, Allowed { std: &["Name", "StackSize"], ext: &[] });
                    let name = self.string(c, "Name", true);
                    let stack_size = self.u64(c, "StackSize", false);
                    if let Some(name) = name {
                        processes.push(ProcessDecl { span, name, stack_size });
                    }
                }
            }
        }
        Some(Partition {
            span,
            id: id?,
            name: name?,
            criticality,
            system_partition,
            entry_point,
            executable,
            backend,
            arguments,
            sampling_ports,
            queuing_ports,
            processes,
            max_tasks,
            max_open_files,
            mounts,
            malformed_ports,
        })
    }

    /// An extension attribute counting something, from 1 to `max`.
    fn ext_count(&mut self, node: Node, name: &str, max: u32) -> Option<Spanned<u32>> {
        let expected = format!("a whole number from 1 to {max}");
        self.value(node, AttrName { ns: Some(EXT_NS), name, required: false }, Rule::InvalidValue, &expected, |s| {
            parse_int(s).filter(|&v| v >= 1 && v <= max as u64).map(|v| v as u32)
        })
    }

    /// `<pt:Mount Source Target Writable>` (paths are checked by validation).
    fn mount(&mut self, node: Node) -> Option<BindMount> {
        self.check_attributes(node, Allowed { std: &["Source", "Target", "Writable"], ext: &[] });
        let source = self.string(node, "Source", true);
        let target = self.string(node, "Target", true);
        let writable = self.bool(node, "Writable").is_some_and(|b| b.value);
        Some(BindMount { span: self.span(node), source: source?, target: target?, writable })
    }

    pub(super) fn partition_memory(&mut self, node: Node) -> PartitionMemory {
        self.check_attributes(node, Allowed { std: &["PartitionIdentifier", "PartitionName"], ext: &[] });
        let partition = self.partition_ref(node);
        let mut regions = Vec::new();
        for r in self.children(node, &["Memory_Requirements"], &[]) {
            self.check_attributes(r, Allowed { std: &["RegionName", "Type", "SizeBytes", "PhysicalAddress", "Access"], ext: &["Colors"] });
            let size = self.u64(r, "SizeBytes", true);
            let colors = self.value(
                r,
                AttrName { ns: Some(EXT_NS), name: "Colors", required: false },
                Rule::NumberMalformed,
                "a list of cache colors (for example 0-7 or 0,2,4-5)",
                |s| parse_index_list(s).filter(|l| !l.is_empty()),
            );
            let region = MemoryRegion {
                span: self.span(r),
                name: self.string(r, "RegionName", false),
                kind: self.string(r, "Type", false),
                size_bytes: size.unwrap_or(Spanned::new(0, self.span(r))),
                physical_address: self.u64(r, "PhysicalAddress", false),
                access: self.string(r, "Access", false),
                colors,
            };
            regions.push(region);
        }
        PartitionMemory { span: self.span(node), partition, regions }
    }

    /// The schedule, and whether its ScheduleIdentifier was written.
    pub(super) fn module_schedule(&mut self, node: Node, index: u32) -> (ModuleSchedule, bool) {
        self.check_attributes(
            node,
            Allowed { std: &["ScheduleIdentifier", "ScheduleName", "MajorFrameSeconds", "InitialModuleSchedule"], ext: &[] },
        );
        let span = self.span(node);
        let written = self.attr(node, None, "ScheduleIdentifier").is_some();
        let id = self.u32(node, "ScheduleIdentifier", false).unwrap_or(Spanned::new(index + 1, span));
        let name = self.string(node, "ScheduleName", false).unwrap_or_else(|| Spanned::new(format!("schedule-{}", id.value), span));
        let major_frame = self.seconds(node, "MajorFrameSeconds", true).unwrap_or(Spanned::new(Nanos(0), span));
        let initial = self.bool(node, "InitialModuleSchedule");
        let mut partitions = Vec::new();
        for ps in self.children(node, &["Partition_Schedule"], &[]) {
            partitions.extend(self.partition_schedule(ps));
        }
        (ModuleSchedule { span, id, name, major_frame, initial, partitions }, written)
    }

    pub(super) fn partition_schedule(&mut self, node: Node) -> Option<PartitionSchedule> {
        self.check_attributes(
            node,
            Allowed {
                std: &[
                    "PartitionIdentifier",
                    "PartitionName",
                    "PeriodSeconds",
                    "PeriodDurationSeconds",
                    "SetModuleSchedule",
                    "ScheduleChangeAction",
                ],
                ext: &[],
            },
        );
        let partition = self.partition_ref(node);
        let period = self.seconds(node, "PeriodSeconds", true);
        let duration = self.seconds(node, "PeriodDurationSeconds", true);
        let set_module_schedule = self.bool(node, "SetModuleSchedule").is_some_and(|b| b.value);
        let schedule_change_action = self.keyword(
            node,
            None,
            "ScheduleChangeAction",
            false,
            Rule::InvalidValue,
            &[
                ("IGNORE", ScheduleChangeAction::Ignore),
                ("COLD_START", ScheduleChangeAction::ColdStart),
                ("WARM_START", ScheduleChangeAction::WarmStart),
            ],
        );
        let mut windows = Vec::new();
        for (i, w) in self.children(node, &["Window_Schedule"], &[]).into_iter().enumerate() {
            self.check_attributes(
                w,
                Allowed {
                    std: &["WindowIdentifier", "WindowStartSeconds", "WindowDurationSeconds", "PartitionPeriodStart"],
                    ext: &["Core"],
                },
            );
            let span = self.span(w);
            let id = self.u32(w, "WindowIdentifier", false).unwrap_or(Spanned::new(i as u32 + 1, span));
            let start = self.seconds(w, "WindowStartSeconds", true);
            let duration = self.seconds(w, "WindowDurationSeconds", true);
            let period_start = self.bool(w, "PartitionPeriodStart").is_some_and(|b| b.value);
            let core = self
                .value(w, AttrName { ns: Some(EXT_NS), name: "Core", required: false }, Rule::NumberMalformed, "a module core index", |s| {
                    parse_int(s).and_then(|v| u32::try_from(v).ok())
                })
                .unwrap_or(Spanned::new(0, span));
            if let (Some(start), Some(duration)) = (start, duration) {
                windows.push(Window { span, id, start, duration, period_start, core });
            }
        }
        Some(PartitionSchedule {
            span: self.span(node),
            partition,
            period: period?,
            duration: duration?,
            set_module_schedule,
            schedule_change_action,
            windows,
        })
    }
}
