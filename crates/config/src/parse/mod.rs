//! XML -> Module model. Reports malformed XML, missing attributes and malformed values as
//! diagnostics and keeps going, so that one run shows every problem of the file.

use crate::diag::{Diagnostics, Rule, Span};
use crate::model::*;
use crate::source::LineIndex;

mod elements;
mod tables;
mod values;

use crate::time::Nanos;
use roxmltree::{Document, Node, ParsingOptions};
use std::path::Path;
pub use values::parse_index_list;
use values::parse_int;

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
                roxmltree::Error::UnclosedRootNode | roxmltree::Error::NoRootNode | roxmltree::Error::UnexpectedEndOfStream => {
                    lines.span(text.trim_end().len())
                }
                roxmltree::Error::DtdDetected => lines.span(text.find("<!DOCTYPE").unwrap_or(0)),
                _ => Span { line: pos.row, column: pos.col },
            };
            let message = match e {
                roxmltree::Error::DtdDetected => "a DTD is not allowed in a module configuration".to_string(),
                roxmltree::Error::NodesLimitReached => format!("more than {NODES_LIMIT} XML nodes; this is not a module configuration"),
                roxmltree::Error::UnclosedRootNode | roxmltree::Error::UnexpectedEndOfStream => {
                    "malformed XML: the file ends before </ARINC_653_Module> (truncated?)".to_string()
                }
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
}
