//! Splicing the synthesized `<Window_Schedule>` elements into the request's original text.

use super::OutWindow;
use crate::diag::Span;
use crate::parse::EXT_NS;
use crate::source::LineIndex;
use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

/// The qualified name of the element whose start tag begins at `at` (just after `<`).
fn qname_at(text: &str, at: usize) -> &str {
    let rest = &text[at + 1..];
    let end = rest.find(|c: char| c.is_whitespace() || c == '/' || c == '>').unwrap_or(rest.len());
    &rest[..end]
}

/// The whitespace from the start of the line to `at`, if only whitespace precedes `at` there.
fn indent_before(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..at];
    before.chars().all(|c| c == ' ' || c == '\t').then_some(before)
}

/// A prefix bound nowhere in the document, for `urn:partita:1`.
fn fresh_prefix(doc: &roxmltree::Document) -> String {
    let used: HashSet<&str> =
        doc.descendants().filter(|n| n.is_element()).flat_map(|n| n.namespaces().filter_map(|ns| ns.name())).collect();
    std::iter::once("pt".to_string()).chain((1..).map(|i| format!("pt{i}"))).find(|p| !used.contains(p.as_str())).unwrap_or_default()
}

pub(super) fn splice(text: &str, doc: &roxmltree::Document, windows: &HashMap<Span, Vec<OutWindow>>) -> String {
    let lines = LineIndex::new(text);
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut added_prefix: Option<String> = None;
    for node in doc.descendants().filter(|n| n.is_element() && n.tag_name().name() == "Partition_Schedule") {
        let range = node.range();
        let Some(ws) = windows.get(&lines.span(range.start)) else { continue };
        if ws.is_empty() {
            continue;
        }
        let bound = node.namespaces().find(|ns| ns.uri() == EXT_NS && ns.name().is_some_and(|n| !n.is_empty())).and_then(|ns| ns.name());
        let ext = match bound {
            Some(p) => p.to_string(),
            None => added_prefix.get_or_insert_with(|| fresh_prefix(doc)).clone(),
        };
        let qname = qname_at(text, range.start);
        let window_name = match qname.split_once(':') {
            Some((prefix, _)) => format!("{prefix}:Window_Schedule"),
            None => "Window_Schedule".to_string(),
        };
        let indent = indent_before(text, range.start);
        let parent_indent = node.parent_element().and_then(|p| indent_before(text, p.range().start));
        let step = match (parent_indent, indent) {
            (Some(p), Some(c)) if c.len() > p.len() && c.starts_with(p) => c[p.len()..].to_string(),
            (_, Some(c)) if c.contains('\t') => "\t".to_string(),
            _ => "  ".to_string(),
        };
        let indent = indent.unwrap_or("");
        let inner = format!("{indent}{step}");
        let elements: Vec<String> = ws
            .iter()
            .enumerate()
            .map(|(i, w)| {
                format!(
                    "<{window_name} WindowIdentifier=\"{}\" WindowStartSeconds=\"{}\" WindowDurationSeconds=\"{}\" PartitionPeriodStart=\"{}\" {ext}:Core=\"{}\"/>",
                    i + 1,
                    Nanos(w.start).to_seconds_string(),
                    Nanos(w.duration).to_seconds_string(),
                    w.period_start,
                    w.core
                )
            })
            .collect();
        let element_text = &text[range.clone()];
        if element_text.ends_with("/>") {
            // <Partition_Schedule .../>  ->  <Partition_Schedule ...> windows </Partition_Schedule>
            let close = range.end - 2;
            let from = text[..close].trim_end().len().max(range.start + 1);
            let mut s = String::from(">");
            for e in &elements {
                s.push_str(&format!("{nl}{inner}{e}"));
            }
            s.push_str(&format!("{nl}{indent}</{qname}>"));
            edits.push((from, range.end, s));
        } else {
            let Some(rel) = element_text.rfind("</") else { continue };
            let close = range.start + rel;
            let line_start = text[..close].rfind('\n').map_or(0, |i| i + 1);
            let own_line = line_start > range.start && text[line_start..close].chars().all(|c| c == ' ' || c == '\t');
            let mut s = String::new();
            if own_line {
                for e in &elements {
                    s.push_str(&format!("{inner}{e}{nl}"));
                }
                edits.push((line_start, line_start, s));
            } else {
                for e in &elements {
                    s.push_str(&format!("{nl}{inner}{e}"));
                }
                s.push_str(&format!("{nl}{indent}"));
                edits.push((close, close, s));
            }
        }
    }
    if let Some(prefix) = added_prefix {
        let root = doc.root_element().range().start;
        let at = root + 1 + qname_at(text, root).len();
        edits.push((at, at, format!(" xmlns:{prefix}=\"{EXT_NS}\"")));
    }
    edits.sort_by_key(|e| Reverse(e.0));
    let mut out = text.to_string();
    for (from, to, with) in edits {
        out.replace_range(from..to, &with);
    }
    out
}
