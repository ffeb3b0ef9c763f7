//! XML -> Module model. Reports malformed XML, missing attributes and malformed values as
//! diagnostics and keeps going, so that one run shows every problem of the file.

use crate::diag::{Diagnostics, Rule, Span};
use crate::model::*;
use crate::source::LineIndex;
use crate::time::Nanos;
use roxmltree::{Document, Node, ParsingOptions};
use std::path::Path;

/// Namespace of Partita's extensions (any prefix may be bound to it).
pub const EXT_NS: &str = "urn:partita:1";

/// At most this many XML nodes; a real module has a few thousand.
const NODES_LIMIT: u32 = 4_000_000;

/// Parses `text`; returns `None` only when there is no usable module (malformed XML or a
/// wrong root element), with the reason in `diags`.
pub fn parse(text: &str, base_dir: &Path, diags: &mut Diagnostics) -> Option<Module> {
    let lines = LineIndex::new(text);
    let options = ParsingOptions { allow_dtd: false, nodes_limit: NODES_LIMIT, ..ParsingOptions::default() };
    let doc = match Document::parse_with_options(text, options) {
        Ok(doc) => doc,
        Err(e) => {
            let pos = e.pos();
            // roxmltree reports some errors at 1:1; point where the problem is instead.
            let span = match &e {
                roxmltree::Error::UnclosedRootNode | roxmltree::Error::NoRootNode => lines.span(text.trim_end().len()),
                roxmltree::Error::DtdDetected => lines.span(text.find("<!DOCTYPE").unwrap_or(0)),
                _ => Span { line: pos.row, column: pos.col },
            };
            let message = match e {
                roxmltree::Error::DtdDetected => "a DTD is not allowed in a module configuration".to_string(),
                roxmltree::Error::NodesLimitReached => format!("more than {NODES_LIMIT} XML nodes; this is not a module configuration"),
                roxmltree::Error::UnclosedRootNode => "malformed XML: the file ends before </ARINC_653_Module> (truncated?)".to_string(),
                other => format!("malformed XML: {other}"),
            };
            diags.error(Rule::XmlMalformed, span, message);
            return None;
        }
    };
    let root = doc.root_element();
    let mut cx = Cx { lines, diags, std_ns: root.tag_name().namespace() };
    if cx.is_ext(root) || root.tag_name().name() != "ARINC_653_Module" {
        cx.diags.error(
            Rule::UnknownElement,
            cx.span(root),
            format!("the root element is <{}>; a module configuration starts with <ARINC_653_Module>", root.tag_name().name()),
        );
        return None;
    }
    Some(cx.module(root, base_dir))
}

struct Cx<'t, 'd> {
    lines: LineIndex<'t>,
    diags: &'d mut Diagnostics,
    /// Namespace of the standard elements: the root's (usually none).
    std_ns: Option<&'t str>,
}

/// Which attribute to read: its namespace (None = standard), name and whether it must be there.
struct AttrName<'a> {
    ns: Option<&'a str>,
    name: &'a str,
    required: bool,
}

/// Attributes an element may carry: standard (no namespace) and extension (`urn:partita:1`).
struct Allowed<'s> {
    std: &'s [&'s str],
    ext: &'s [&'s str],
}

impl Cx<'_, '_> {
    fn span(&self, node: Node) -> Span {
        self.lines.span(node.range().start)
    }

    fn is_ext(&self, node: Node) -> bool {
        node.tag_name().namespace() == Some(EXT_NS)
    }

    fn attr<'a>(&self, node: Node<'a, 'a>, ns: Option<&str>, name: &str) -> Option<(&'a str, Span)> {
        node.attributes().find(|a| a.name() == name && a.namespace() == ns).map(|a| (a.value(), self.lines.span(a.range().start)))
    }

    /// The element's name as messages show it (`pt:` for extensions, whatever the file's prefix).
    fn element_name(node: Node) -> String {
        let prefix = if node.tag_name().namespace() == Some(EXT_NS) { "pt:" } else { "" };
        format!("{prefix}{}", node.tag_name().name())
    }

    /// Warns about attributes the element does not take (a misspelling is otherwise silent).
    fn check_attributes(&mut self, node: Node, allowed: Allowed) {
        for a in node.attributes() {
            let known = match a.namespace() {
                None => allowed.std.contains(&a.name()),
                Some(EXT_NS) => allowed.ext.contains(&a.name()),
                Some(_) => true, // xsi:, other tools' namespaces
            };
            if !known {
                let span = self.lines.span(a.range().start);
                let ext = if a.namespace() == Some(EXT_NS) { "pt:" } else { "" };
                self.diags.warning(
                    Rule::UnknownAttribute,
                    span,
                    format!("<{}> does not take attribute {ext}{}; it is ignored", Self::element_name(node), a.name()),
                );
            }
        }
    }

    /// Child elements, warning about the ones not in `known` (standard or extension names).
    fn children<'a>(&mut self, node: Node<'a, 'a>, known_std: &[&str], known_ext: &[&str]) -> Vec<Node<'a, 'a>> {
        let mut out = Vec::new();
        for c in node.children().filter(|c| c.is_element()) {
            let name = c.tag_name().name();
            let ok = match c.tag_name().namespace() {
                Some(EXT_NS) => known_ext.contains(&name),
                ns if ns == self.std_ns => known_std.contains(&name),
                // Elements of other tools' namespaces are theirs.
                _ => continue,
            };
            if ok {
                out.push(c);
            } else {
                let span = self.span(c);
                self.diags.warning(
                    Rule::UnknownElement,
                    span,
                    format!("<{}> is not expected inside <{}>; it is ignored", Self::element_name(c), Self::element_name(node)),
                );
            }
        }
        out
    }

    fn missing(&mut self, node: Node, name: &str, hint: &str) {
        let span = self.span(node);
        self.diags.error(Rule::MissingAttribute, span, format!("<{}> needs attribute {name}{hint}", Self::element_name(node)));
    }

    fn string(&mut self, node: Node, name: &str, required: bool) -> Option<Spanned<String>> {
        match self.attr(node, None, name) {
            Some((v, span)) => Some(Spanned::new(v.to_string(), span)),
            None => {
                if required {
                    self.missing(node, name, "");
                }
                None
            }
        }
    }

    fn ext_string(&mut self, node: Node, name: &str) -> Option<Spanned<String>> {
        self.attr(node, Some(EXT_NS), name).map(|(v, span)| Spanned::new(v.to_string(), span))
    }

    /// Parses an attribute with `conv`; a bad value is reported with `expected` and gives `None`.
    fn value<T>(
        &mut self,
        node: Node,
        AttrName { ns, name, required }: AttrName,
        rule: Rule,
        expected: &str,
        conv: impl Fn(&str) -> Option<T>,
    ) -> Option<Spanned<T>> {
        let Some((text, span)) = self.attr(node, ns, name) else {
            if required {
                self.missing(node, name, &format!(" ({expected})"));
            }
            return None;
        };
        match conv(text.trim()) {
            Some(v) => Some(Spanned::new(v, span)),
            None => {
                let prefix = if ns.is_some() { "pt:" } else { "" };
                self.diags.error(rule, span, format!("{prefix}{name}=\"{text}\" of <{}> is not {expected}", Self::element_name(node)));
                None
            }
        }
    }

    fn u32(&mut self, node: Node, name: &str, required: bool) -> Option<Spanned<u32>> {
        self.value(node, AttrName { ns: None, name, required }, Rule::NumberMalformed, "a non-negative integer", |s| {
            parse_int(s).and_then(|v| u32::try_from(v).ok())
        })
    }

    fn u64(&mut self, node: Node, name: &str, required: bool) -> Option<Spanned<u64>> {
        self.value(node, AttrName { ns: None, name, required }, Rule::NumberMalformed, "a non-negative integer", parse_int)
    }

    fn bool(&mut self, node: Node, name: &str) -> Option<Spanned<bool>> {
        self.value(node, AttrName { ns: None, name, required: false }, Rule::InvalidValue, "true or false", |s| match s {
            "1" => Some(true),
            "0" => Some(false),
            _ if s.eq_ignore_ascii_case("true") => Some(true),
            _ if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        })
    }

    fn seconds(&mut self, node: Node, name: &str, required: bool) -> Option<Spanned<Nanos>> {
        let (text, span) = match self.attr(node, None, name) {
            Some(a) => a,
            None => {
                if required {
                    self.missing(node, name, " (seconds, for example 0.02)");
                }
                return None;
            }
        };
        match Nanos::parse_seconds(text) {
            Ok(n) if n.0 >= 0 => Some(Spanned::new(n, span)),
            Ok(_) => {
                self.diags.error(Rule::NumberMalformed, span, format!("{name}=\"{text}\" of <{}> is negative", Self::element_name(node)));
                None
            }
            Err(e) => {
                self.diags.error(Rule::NumberMalformed, span, format!("{name}=\"{text}\" of <{}> {e}", Self::element_name(node)));
                None
            }
        }
    }

    fn keyword<T: Copy>(
        &mut self,
        node: Node,
        ns: Option<&str>,
        name: &str,
        required: bool,
        rule: Rule,
        choices: &[(&str, T)],
    ) -> Option<Spanned<T>> {
        let expected = format!("one of {}", choices.iter().map(|c| c.0).collect::<Vec<_>>().join(", "));
        self.value(node, AttrName { ns, name, required }, rule, &expected, |s| {
            choices.iter().find(|c| c.0.eq_ignore_ascii_case(s)).map(|c| c.1)
        })
    }

    fn partition_ref(&mut self, node: Node) -> PartitionRef {
        let id = self.u32(node, "PartitionIdentifier", false);
        let name = self.string(node, "PartitionName", false);
        if id.is_none() && name.is_none() && self.attr(node, None, "PartitionIdentifier").is_none() {
            self.missing(node, "PartitionIdentifier", " (or PartitionName)");
        }
        PartitionRef { span: self.span(node), id, name }
    }

    fn module(&mut self, root: Node, base_dir: &Path) -> Module {
        self.check_attributes(root, Allowed { std: &["ModuleName", "ModuleVersion", "ModuleId"], ext: &[] });
        let name = self.string(root, "ModuleName", true).unwrap_or_else(|| Spanned::new(String::new(), self.span(root)));
        let mut module = Module {
            span: self.span(root),
            name,
            version: self.string(root, "ModuleVersion", false),
            id: self.u32(root, "ModuleId", false),
            cores: Vec::new(),
            cores_declared: None,
            partitions: Vec::new(),
            memory: Vec::new(),
            schedules: Vec::new(),
            system_hm: None,
            module_hm: None,
            partition_hm: Vec::new(),
            channels: Vec::new(),
            base_dir: base_dir.to_path_buf(),
        };
        let children = self.children(
            root,
            &[
                "System_HM_Table",
                "Module_HM_Table",
                "Partition",
                "Partition_Memory",
                "Module_Schedule",
                "Partition_HM_Table",
                "Connection_Table",
            ],
            &["Cores"],
        );
        let mut unnumbered = Vec::new();
        for c in children {
            match (self.is_ext(c), c.tag_name().name()) {
                (true, _) => {
                    if let Some(first) = module.cores_declared {
                        let span = self.span(c);
                        self.diags.error(
                            Rule::Duplicate,
                            span,
                            format!("a second <pt:Cores>; the cores are already described at line {}", first.line),
                        );
                    } else {
                        module.cores_declared = Some(self.span(c));
                        module.cores = self.cores(c);
                    }
                }
                (false, "Partition") => module.partitions.extend(self.partition(c)),
                (false, "Partition_Memory") => module.memory.push(self.partition_memory(c)),
                (false, "Module_Schedule") => {
                    let index = module.schedules.len() as u32;
                    let (schedule, id_written) = self.module_schedule(c, index);
                    if !id_written {
                        unnumbered.push(module.schedules.len());
                    }
                    module.schedules.push(schedule);
                }
                (false, "System_HM_Table") => {
                    let table = self.system_hm(c);
                    self.only_one(&module.system_hm.as_ref().map(|t| t.span), c);
                    module.system_hm.get_or_insert(table);
                }
                (false, "Module_HM_Table") => {
                    let table = self.module_hm(c);
                    self.only_one(&module.module_hm.as_ref().map(|t| t.span), c);
                    module.module_hm.get_or_insert(table);
                }
                (false, "Partition_HM_Table") => module.partition_hm.push(self.partition_hm(c)),
                (false, "Connection_Table") => {
                    self.check_attributes(c, Allowed { std: &[], ext: &[] });
                    for ch in self.children(c, &["Channel"], &[]) {
                        module.channels.extend(self.channel(ch));
                    }
                }
                _ => {}
            }
        }
        Self::number_schedules(&mut module, &unnumbered);
        module
    }

    /// Schedules without ScheduleIdentifier get the smallest identifiers no schedule uses.
    fn number_schedules(module: &mut Module, unnumbered: &[usize]) {
        let mut used: Vec<u32> =
            module.schedules.iter().enumerate().filter(|(i, _)| !unnumbered.contains(i)).map(|(_, s)| s.id.value).collect();
        let mut next = 1;
        for &i in unnumbered {
            while used.contains(&next) {
                next += 1;
            }
            used.push(next);
            let s = &mut module.schedules[i];
            s.id.value = next;
            if s.name.value.starts_with("schedule-") && s.name.span == s.span {
                s.name.value = format!("schedule-{next}");
            }
        }
    }

    fn only_one(&mut self, first: &Option<Span>, node: Node) {
        if let Some(first) = first {
            let span = self.span(node);
            self.diags.error(
                Rule::Duplicate,
                span,
                format!("a second <{}>; the first is at line {}; merge them", Self::element_name(node), first.line),
            );
        }
    }

    fn cores(&mut self, node: Node) -> Vec<Core> {
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

    fn partition(&mut self, node: Node) -> Option<Partition> {
        self.check_attributes(
            node,
            Allowed {
                std: &["PartitionIdentifier", "PartitionName", "Criticality", "SystemPartition", "EntryPoint"],
                ext: &["Executable", "Backend", "Arguments"],
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
        let mut sampling_ports = Vec::new();
        let mut queuing_ports = Vec::new();
        let mut processes = Vec::new();
        let mut malformed_ports = Vec::new();
        let directions = [("SOURCE", Direction::Source), ("DESTINATION", Direction::Destination)];
        for c in self.children(node, &["Sampling_Port", "Queuing_Port", "Process"], &[]) {
            let span = self.span(c);
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
            malformed_ports,
        })
    }

    fn partition_memory(&mut self, node: Node) -> PartitionMemory {
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
    fn module_schedule(&mut self, node: Node, index: u32) -> (ModuleSchedule, bool) {
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

    fn partition_schedule(&mut self, node: Node) -> Option<PartitionSchedule> {
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

    fn system_hm(&mut self, node: Node) -> SystemHmTable {
        self.check_attributes(node, Allowed { std: &[], ext: &[] });
        let mut states = Vec::new();
        for s in self.children(node, &["System_State_Entry"], &[]) {
            self.check_attributes(s, Allowed { std: &["SystemState", "Description"], ext: &[] });
            let state = self.u32(s, "SystemState", true).unwrap_or(Spanned::new(0, self.span(s)));
            let mut errors = Vec::new();
            for e in self.children(s, &["Error_ID_Level"], &[]) {
                self.check_attributes(e, Allowed { std: &["ErrorIdentifier", "Description", "ErrorLevel", "ErrorCode"], ext: &[] });
                let error_id = self.u32(e, "ErrorIdentifier", true);
                let level = self.keyword(
                    e,
                    None,
                    "ErrorLevel",
                    true,
                    Rule::InvalidValue,
                    &[("MODULE", ErrorLevel::Module), ("PARTITION", ErrorLevel::Partition), ("PROCESS", ErrorLevel::Process)],
                );
                let code = self.keyword(e, None, "ErrorCode", false, Rule::HmUnknownErrorCode, &ErrorCode::ALL);
                if let (Some(error_id), Some(level)) = (error_id, level) {
                    errors.push(ErrorIdLevel {
                        span: self.span(e),
                        error_id,
                        description: self.string(e, "Description", false).map(|d| d.value),
                        level,
                        code,
                    });
                }
            }
            states.push(SystemStateLevels {
                span: self.span(s),
                state,
                description: self.string(s, "Description", false).map(|d| d.value),
                errors,
            });
        }
        SystemHmTable { span: self.span(node), states }
    }

    fn action_states<A: Copy>(&mut self, node: Node, actions: &[(&str, A)]) -> Vec<SystemStateActions<A>> {
        let mut states = Vec::new();
        for s in self.children(node, &["System_State_Entry"], &[]) {
            self.check_attributes(s, Allowed { std: &["SystemState", "Description"], ext: &[] });
            let state = self.u32(s, "SystemState", true).unwrap_or(Spanned::new(0, self.span(s)));
            let mut list = Vec::new();
            for e in self.children(s, &["Error_ID_Action"], &[]) {
                self.check_attributes(e, Allowed { std: &["ErrorIdentifier", "Description", "Action", "ErrorCode"], ext: &[] });
                let error_id = self.u32(e, "ErrorIdentifier", true);
                let action = self.keyword(e, None, "Action", true, Rule::HmUnknownAction, actions);
                let code = self.keyword(e, None, "ErrorCode", false, Rule::HmUnknownErrorCode, &ErrorCode::ALL);
                if let (Some(error_id), Some(action)) = (error_id, action) {
                    list.push(ErrorIdAction {
                        span: self.span(e),
                        error_id,
                        description: self.string(e, "Description", false).map(|d| d.value),
                        action,
                        code,
                    });
                }
            }
            states.push(SystemStateActions {
                span: self.span(s),
                state,
                description: self.string(s, "Description", false).map(|d| d.value),
                actions: list,
            });
        }
        states
    }

    fn module_hm(&mut self, node: Node) -> ModuleHmTable {
        self.check_attributes(node, Allowed { std: &["ModuleCallback"], ext: &[] });
        let states = self
            .action_states(node, &[("IGNORE", ModuleAction::Ignore), ("SHUTDOWN", ModuleAction::Shutdown), ("RESET", ModuleAction::Reset)]);
        ModuleHmTable { span: self.span(node), callback: self.string(node, "ModuleCallback", false).map(|c| c.value), states }
    }

    fn partition_hm(&mut self, node: Node) -> PartitionHmTable {
        self.check_attributes(node, Allowed { std: &["PartitionIdentifier", "PartitionName", "PartitionCallback"], ext: &[] });
        let partition = self.partition_ref(node);
        let states = self.action_states(
            node,
            &[
                ("IGNORE", PartitionAction::Ignore),
                ("IDLE", PartitionAction::Idle),
                ("WARM_START", PartitionAction::WarmStart),
                ("COLD_START", PartitionAction::ColdStart),
            ],
        );
        PartitionHmTable {
            span: self.span(node),
            partition,
            callback: self.string(node, "PartitionCallback", false).map(|c| c.value),
            states,
        }
    }

    fn channel(&mut self, node: Node) -> Option<Channel> {
        self.check_attributes(node, Allowed { std: &["ChannelIdentifier", "ChannelName"], ext: &[] });
        let id = self.u32(node, "ChannelIdentifier", true);
        let name = self.string(node, "ChannelName", false);
        let mut source = None;
        let mut destinations = Vec::new();
        let mut destination_elements = 0;
        let mut source_elements = 0;
        for side in self.children(node, &["Source", "Destination"], &[]) {
            self.check_attributes(side, Allowed { std: &[], ext: &[] });
            let elements = self.children(side, &["Standard_Partition", "Pseudo_Partition"], &[]);
            if side.tag_name().name() == "Source" {
                source_elements += elements.len();
            } else {
                destination_elements += elements.len();
            }
            let ends: Vec<ChannelEnd> = elements.into_iter().filter_map(|e| self.channel_end(e)).collect();
            if side.tag_name().name() == "Source" {
                if source.is_some() || ends.len() > 1 {
                    let span = ends.get(1).map_or(self.span(side), ChannelEnd::span);
                    self.diags.error(Rule::Duplicate, span, "a channel has exactly one source; split it into several channels");
                }
                if source.is_none() {
                    source = ends.into_iter().next();
                }
            } else {
                destinations.extend(ends);
            }
        }
        // An end that is present but malformed was reported already.
        if source_elements == 0 {
            let span = self.span(node);
            self.diags.error(Rule::MissingAttribute, span, format!("channel {} has no <Source>", id.as_ref().map_or(0, |i| i.value)));
        }
        if destination_elements == 0 {
            let span = self.span(node);
            self.diags.error(Rule::MissingAttribute, span, format!("channel {} has no <Destination>", id.as_ref().map_or(0, |i| i.value)));
        }
        Some(Channel { span: self.span(node), id: id?, name, source, destinations })
    }

    fn channel_end(&mut self, node: Node) -> Option<ChannelEnd> {
        let span = self.span(node);
        if node.tag_name().name() == "Standard_Partition" {
            self.check_attributes(node, Allowed { std: &["PartitionIdentifier", "PartitionName", "PortName"], ext: &[] });
            let partition = self.partition_ref(node);
            let port = self.string(node, "PortName", true)?;
            Some(ChannelEnd::Standard { span, partition, port })
        } else {
            self.check_attributes(node, Allowed { std: &["Name", "PhysicalAddress", "Procedure"], ext: &[] });
            let name = self.string(node, "Name", false);
            let address = self.value(
                node,
                AttrName { ns: None, name: "PhysicalAddress", required: true },
                Rule::InvalidValue,
                "a UDP address of the form udp:HOST:PORT",
                parse_udp,
            )?;
            let procedure = self.string(node, "Procedure", false).map(|p| p.value);
            Some(ChannelEnd::Pseudo { span, name, address, procedure })
        }
    }
}

/// Decimal or 0x-hexadecimal unsigned integer.
fn parse_int(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        None => None,
    }
}

/// `0-3,6,8-9` -> [0,1,2,3,6,8,9]; at most 4096 entries, no repeats.
pub fn parse_index_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let v = part.parse::<u32>().ok()?;
                (v, v)
            }
        };
        if lo > hi || (hi - lo) as usize + out.len() >= 4096 {
            return None;
        }
        for v in lo..=hi {
            if out.contains(&v) {
                return None;
            }
            out.push(v);
        }
    }
    Some(out)
}

fn parse_udp(s: &str) -> Option<PseudoAddress> {
    let rest = s.strip_prefix("udp:")?;
    let (host, port) = rest.rsplit_once(':')?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    let port: u16 = port.parse().ok().filter(|&p| p != 0)?;
    if host.is_empty() || host.contains(char::is_whitespace) {
        return None;
    }
    Some(PseudoAddress { host: host.to_string(), port })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_lists() {
        assert_eq!(parse_index_list("0-3,6"), Some(vec![0, 1, 2, 3, 6]));
        assert_eq!(parse_index_list("1"), Some(vec![1]));
        assert_eq!(parse_index_list("3-1"), None);
        assert_eq!(parse_index_list("0,0"), None);
        assert_eq!(parse_index_list("0-100000"), None);
        assert_eq!(parse_index_list("a"), None);
    }

    #[test]
    fn udp_addresses() {
        assert_eq!(parse_udp("udp:10.0.0.2:47001"), Some(PseudoAddress { host: "10.0.0.2".into(), port: 47001 }));
        assert_eq!(parse_udp("udp:[::1]:5"), Some(PseudoAddress { host: "::1".into(), port: 5 }));
        assert_eq!(parse_udp("tcp:host:5"), None);
        assert_eq!(parse_udp("udp:host:0"), None);
        assert_eq!(parse_udp("udp:host"), None);
    }

    #[test]
    fn integers() {
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int(" 42 "), Some(42));
        assert_eq!(parse_int("-1"), None);
        assert_eq!(parse_int("1.5"), None);
    }
}
