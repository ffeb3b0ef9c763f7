//! Diagnostics: every problem found in a configuration, with its position, so that
//! one run reports all of them in the `FILE:LINE:COL: error: TEXT` form.

use serde::Serialize;
use std::fmt;

/// A 1-based line and column in the (decoded) configuration text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct Span {
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// Stable identifier of the rule a diagnostic comes from (documented in
/// docs/configuration.md; tests and `--json` consumers match on it, never on text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    XmlMalformed,
    Encoding,
    NumberMalformed,
    MissingAttribute,
    InvalidValue,
    UnknownElement,
    UnknownAttribute,
    Duplicate,
    UnknownReference,
    WindowOutsideFrame,
    WindowOverlap,
    PeriodNotCovered,
    FrameNotMultiple,
    ChannelUnknown,
    ChannelDirection,
    ChannelSizeMismatch,
    ChannelKindMismatch,
    ChannelMultipleDestinations,
    PortUnconnected,
    HmUnknownAction,
    HmUnknownErrorCode,
    HmNeverApplies,
    HmStateOnly,
    PortAboveSystemLimit,
    NotApplied,
    CoreOutOfRange,
    FixedPriorityWithWindows,
    MissingExecutable,
    ExecutableNotFound,
    PartitionNotScheduled,
    NoSchedule,
    InitialSchedule,
}

impl Rule {
    pub fn code(self) -> &'static str {
        match self {
            Rule::XmlMalformed => "xml-malformed",
            Rule::Encoding => "encoding",
            Rule::NumberMalformed => "number-malformed",
            Rule::MissingAttribute => "missing-attribute",
            Rule::InvalidValue => "invalid-value",
            Rule::UnknownElement => "unknown-element",
            Rule::UnknownAttribute => "unknown-attribute",
            Rule::Duplicate => "duplicate",
            Rule::UnknownReference => "unknown-reference",
            Rule::WindowOutsideFrame => "window-outside-frame",
            Rule::WindowOverlap => "window-overlap",
            Rule::PeriodNotCovered => "period-not-covered",
            Rule::FrameNotMultiple => "frame-not-multiple",
            Rule::ChannelUnknown => "channel-unknown",
            Rule::ChannelDirection => "channel-direction",
            Rule::ChannelSizeMismatch => "channel-size-mismatch",
            Rule::ChannelKindMismatch => "channel-kind-mismatch",
            Rule::ChannelMultipleDestinations => "channel-multiple-destinations",
            Rule::PortUnconnected => "port-unconnected",
            Rule::HmUnknownAction => "hm-unknown-action",
            Rule::HmUnknownErrorCode => "hm-unknown-error-code",
            Rule::HmNeverApplies => "hm-never-applies",
            Rule::HmStateOnly => "hm-state-only",
            Rule::PortAboveSystemLimit => "port-above-system-limit",
            Rule::NotApplied => "not-applied",
            Rule::CoreOutOfRange => "core-out-of-range",
            Rule::FixedPriorityWithWindows => "fixed-priority-with-windows",
            Rule::MissingExecutable => "missing-executable",
            Rule::ExecutableNotFound => "executable-not-found",
            Rule::PartitionNotScheduled => "partition-not-scheduled",
            Rule::NoSchedule => "no-schedule",
            Rule::InitialSchedule => "initial-schedule",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    #[serde(serialize_with = "serialize_rule")]
    pub rule: Rule,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

fn serialize_rule<S: serde::Serializer>(rule: &Rule, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(rule.code())
}

impl Diagnostic {
    pub fn span(&self) -> Span {
        Span { line: self.line, column: self.column }
    }

    /// `FILE:LINE:COL: error: TEXT`
    pub fn render(&self, file: &str) -> String {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        format!("{file}:{}:{}: {kind}: {}", self.line, self.column, self.message)
    }
}

/// Collects diagnostics in the order they are found; sorted by position before output.
#[derive(Debug, Default, Clone)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn error(&mut self, rule: Rule, at: Span, message: impl Into<String>) {
        self.push(Severity::Error, rule, at, message.into());
    }

    pub fn warning(&mut self, rule: Rule, at: Span, message: impl Into<String>) {
        self.push(Severity::Warning, rule, at, message.into());
    }

    fn push(&mut self, severity: Severity, rule: Rule, at: Span, message: String) {
        self.items.push(Diagnostic { severity, rule, line: at.line, column: at.column, message });
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.severity == Severity::Error).count()
    }

    /// All diagnostics, by position, errors before warnings at the same position.
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items.sort_by_key(|a| (a.line, a.column, a.severity));
        self.items.dedup();
        self.items
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }
}
