//! The health monitor's decisions as the configuration defines them: from an error (partition,
//! system state, error code) to its level (System_HM_Table) and action (Partition_HM_Table or
//! Module_HM_Table), with the table entry (or default) that decides each. The module carries the
//! decisions out; `partita check` shows them and warns about entries that never apply, so that
//! both read the tables through this one home.
//!
//! Where the tables are silent, conservative defaults apply:
//! - level: DEADLINE_MISSED and APPLICATION_ERROR are PROCESS level, POWER_FAILURE is MODULE
//!   level, every other error is PARTITION level;
//! - a PROCESS-level error that reaches the module (no error handler) is IGNOREd (it is traced);
//! - a PARTITION-level error sets the partition IDLE (it is stopped, nothing else is touched);
//! - a MODULE-level error SHUTs the module DOWN.
//!
//! Error codes are numbered as in [`ErrorCode::ALL`] (the ABI's numbering), system states are
//! [`PARTITION_INIT`] and [`PARTITION_EXECUTION`].

use crate::diag::Span;
use crate::model::{ErrorCode, ErrorLevel, Module, ModuleAction, PartitionAction, SystemStateActions};
use serde::Serialize;
use std::collections::HashMap;

/// System state 1: the partition is initializing (its initialization process runs).
pub const PARTITION_INIT: u32 = 1;
/// System state 2: the partition is in NORMAL mode (its processes, or its error handler).
pub const PARTITION_EXECUTION: u32 = 2;
/// The system states Partita knows, with what they mean.
pub const STATES: [(u32, &str); 2] = [(PARTITION_INIT, "partition initialization"), (PARTITION_EXECUTION, "partition execution (NORMAL)")];

/// What the health monitor does about one error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Action {
    /// A process-level error given to the partition's error handler (decided by the partition).
    ErrorHandler,
    Ignore,
    Idle,
    WarmStart,
    ColdStart,
    Shutdown,
    Reset,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::ErrorHandler => "ERROR_HANDLER",
            Action::Ignore => "IGNORE",
            Action::Idle => "IDLE",
            Action::WarmStart => "WARM_START",
            Action::ColdStart => "COLD_START",
            Action::Shutdown => "SHUTDOWN",
            Action::Reset => "RESET",
        }
    }
}

pub fn level_name(l: ErrorLevel) -> &'static str {
    match l {
        ErrorLevel::Module => "MODULE",
        ErrorLevel::Partition => "PARTITION",
        ErrorLevel::Process => "PROCESS",
    }
}

/// The number of an error code ([`ErrorCode::ALL`] order, the ABI's).
pub fn code_number(c: ErrorCode) -> u32 {
    ErrorCode::ALL.iter().position(|(_, k)| *k == c).unwrap_or(0) as u32
}

/// The standard name of error code number `code`.
pub fn code_name(code: u32) -> &'static str {
    ErrorCode::ALL.get(code as usize).map_or("UNKNOWN", |(name, _)| name)
}

/// A decision: the error's level and the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub level: ErrorLevel,
    pub action: Action,
}

/// What decided a level or an action: a table entry (its line) or Partita's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Source {
    Entry { table: &'static str, line: u32 },
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Entry { table, line } => write!(f, "{table} line {line}"),
            Source::Default => f.write_str("default"),
        }
    }
}

/// A decision with what decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Explained {
    pub decision: Decision,
    pub level_from: Source,
    pub action_from: Source,
}

/// The three HM tables of a module, indexed for lookups by (state, error code).
#[derive(Debug, Default)]
pub struct HmTables {
    /// (state, code) -> (level, error identifier, entry).
    levels: HashMap<(u32, u32), (ErrorLevel, u32, Span)>,
    /// (partition id, state, error identifier) -> action; also keyed by code as
    /// u32::MAX - code when the entry names an ErrorCode.
    partition: HashMap<(u32, u32, u32), (PartitionAction, Span)>,
    module: HashMap<(u32, u32), (ModuleAction, Span)>,
}

fn by_code(code: u32) -> u32 {
    u32::MAX - code
}

fn index<A: Copy>(states: &[SystemStateActions<A>], mut put: impl FnMut(u32, u32, A, Span)) {
    for s in states {
        for a in &s.actions {
            put(s.state.value, a.error_id.value, a.action.value, a.span);
            if let Some(c) = &a.code {
                put(s.state.value, by_code(code_number(c.value)), a.action.value, a.span);
            }
        }
    }
}

impl HmTables {
    pub fn new(module: &Module) -> HmTables {
        let mut t = HmTables::default();
        if let Some(sys) = &module.system_hm {
            for s in &sys.states {
                for e in &s.errors {
                    if let Some(c) = &e.code {
                        t.levels.insert((s.state.value, code_number(c.value)), (e.level.value, e.error_id.value, e.span));
                    }
                }
            }
        }
        if let Some(m) = &module.module_hm {
            index(&m.states, |state, id, a, span| {
                t.module.insert((state, id), (a, span));
            });
        }
        for table in &module.partition_hm {
            let Some(p) = module.resolve(&table.partition) else { continue };
            let pid = p.id.value;
            index(&table.states, |state, id, a, span| {
                t.partition.insert((pid, state, id), (a, span));
            });
        }
        t
    }

    /// The level of `code` in `state` (System_HM_Table, else the default), its identifier and
    /// what decided it.
    fn level(&self, state: u32, code: u32) -> (ErrorLevel, Option<u32>, Source) {
        match self.levels.get(&(state, code)) {
            Some(&(level, id, span)) => (level, Some(id), Source::Entry { table: "System_HM_Table", line: span.line }),
            None => (default_level(code), None, Source::Default),
        }
    }

    /// Error codes that are PROCESS level in PARTITION_EXECUTION, as a bit mask (for the
    /// partitions' runtime, which routes those to the error handler).
    pub fn process_level_mask(&self) -> u32 {
        (0..ErrorCode::ALL.len() as u32).filter(|&c| self.level(PARTITION_EXECUTION, c).0 == ErrorLevel::Process).fold(0, |m, c| m | 1 << c)
    }

    pub fn is_process_level(&self, state: u32, code: u32) -> bool {
        self.level(state, code).0 == ErrorLevel::Process
    }

    /// The decision for an error of `partition` that reached the module. `no_process`: the
    /// error cannot be a process's (the program ended), so PROCESS level counts as PARTITION.
    pub fn decide(&self, partition: u32, state: u32, code: u32, no_process: bool) -> Decision {
        self.explain(partition, state, code, no_process).decision
    }

    /// [`HmTables::decide`], with the entries (or defaults) that decide the level and the action.
    pub fn explain(&self, partition: u32, state: u32, code: u32, no_process: bool) -> Explained {
        let (mut level, id, level_from) = self.level(state, code);
        if no_process && level == ErrorLevel::Process {
            level = ErrorLevel::Partition;
        }
        let (action, action_from) = match level {
            ErrorLevel::Module => {
                let found = id.and_then(|id| self.module.get(&(state, id))).or_else(|| self.module.get(&(state, by_code(code))));
                let action = match found.map(|f| f.0) {
                    Some(ModuleAction::Ignore) => Action::Ignore,
                    Some(ModuleAction::Reset) => Action::Reset,
                    Some(ModuleAction::Shutdown) | None => Action::Shutdown,
                };
                (action, found.map_or(Source::Default, |f| Source::Entry { table: "Module_HM_Table", line: f.1.line }))
            }
            ErrorLevel::Partition | ErrorLevel::Process => {
                let found = id
                    .and_then(|id| self.partition.get(&(partition, state, id)))
                    .or_else(|| self.partition.get(&(partition, state, by_code(code))));
                let action = match found.map(|f| f.0) {
                    Some(PartitionAction::Ignore) => Action::Ignore,
                    Some(PartitionAction::Idle) => Action::Idle,
                    Some(PartitionAction::WarmStart) => Action::WarmStart,
                    Some(PartitionAction::ColdStart) => Action::ColdStart,
                    None if level == ErrorLevel::Process => Action::Ignore,
                    None => Action::Idle,
                };
                (action, found.map_or(Source::Default, |f| Source::Entry { table: "Partition_HM_Table", line: f.1.line }))
            }
        };
        Explained { decision: Decision { level, action }, level_from, action_from }
    }
}

fn default_level(code: u32) -> ErrorLevel {
    match ErrorCode::ALL.get(code as usize).map(|(_, c)| *c) {
        Some(ErrorCode::DeadlineMissed | ErrorCode::ApplicationError) => ErrorLevel::Process,
        Some(ErrorCode::PowerFailure) => ErrorLevel::Module,
        _ => ErrorLevel::Partition,
    }
}

/// One row of a module's decision table (`partita check`).
#[derive(Debug, Clone, Serialize)]
pub struct DecisionRow {
    pub partition: u32,
    pub partition_name: String,
    pub state: u32,
    pub code: &'static str,
    pub level: &'static str,
    /// The action when no error handler takes the error (PROCESS level: the partition's error
    /// handler, where it has one, decides instead).
    pub action: &'static str,
    pub level_from: Source,
    pub action_from: Source,
}

/// For every partition, system state and error code: the decision and what decides it.
pub fn decision_table(module: &Module) -> Vec<DecisionRow> {
    let tables = HmTables::new(module);
    let mut rows = Vec::new();
    for p in &module.partitions {
        for (state, _) in STATES {
            for (code, (name, _)) in ErrorCode::ALL.iter().enumerate() {
                let e = tables.explain(p.id.value, state, code as u32, false);
                rows.push(DecisionRow {
                    partition: p.id.value,
                    partition_name: p.name.value.clone(),
                    state,
                    code: name,
                    level: level_name(e.decision.level),
                    action: e.decision.action.as_str(),
                    level_from: e.level_from,
                    action_from: e.action_from,
                });
            }
        }
    }
    rows
}
