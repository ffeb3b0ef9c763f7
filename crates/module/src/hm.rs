//! The health monitor's decisions: from an error (partition, system state, error code) to its
//! level (System_HM_Table) and the action (Partition_HM_Table or Module_HM_Table). Carrying the
//! action out is the lifecycle thread's job (`lifecycle`), because it owns the partitions'
//! programs.
//!
//! Where the tables are silent, conservative defaults apply:
//! - level: DEADLINE_MISSED and APPLICATION_ERROR are PROCESS level, POWER_FAILURE is MODULE
//!   level, every other error is PARTITION level;
//! - a PROCESS-level error that reaches the module (no error handler) is IGNOREd (it is traced);
//! - a PARTITION-level error sets the partition IDLE (it is stopped, nothing else is touched);
//! - a MODULE-level error SHUTs the module DOWN.

use partita_abi::{error_code, system_state};
use partita_config::model::{ErrorCode, ErrorLevel, Module, ModuleAction, PartitionAction, SystemStateActions};
use std::collections::HashMap;

/// What the health monitor does about one error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The standard name of an ABI error code ("POWER_FAILURE" as in the configuration).
pub fn code_name(code: u32) -> &'static str {
    ErrorCode::ALL.get(code as usize).map_or("UNKNOWN", |(name, _)| name)
}

/// The ABI error code of a name, as given to `--inject`.
pub fn code_by_name(name: &str) -> Option<u32> {
    ErrorCode::ALL.iter().position(|(n, _)| *n == name).map(|i| i as u32)
}

fn abi_code(c: ErrorCode) -> u32 {
    ErrorCode::ALL.iter().position(|(_, k)| *k == c).unwrap_or(0) as u32
}

/// A decision: the error's level and the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub level: ErrorLevel,
    pub action: Action,
}

/// The three HM tables of a module, indexed for lookups by (state, error code).
#[derive(Debug, Default)]
pub struct HmTables {
    /// (state, code) -> (level, error identifier).
    levels: HashMap<(u32, u32), (ErrorLevel, u32)>,
    /// (partition id, state, error identifier) -> action; also keyed by code as
    /// u32::MAX - code when the entry names an ErrorCode.
    partition: HashMap<(u32, u32, u32), PartitionAction>,
    module: HashMap<(u32, u32), ModuleAction>,
}

fn by_code(code: u32) -> u32 {
    u32::MAX - code
}

fn index<A: Copy>(states: &[SystemStateActions<A>], mut put: impl FnMut(u32, u32, A)) {
    for s in states {
        for a in &s.actions {
            put(s.state.value, a.error_id.value, a.action.value);
            if let Some(c) = &a.code {
                put(s.state.value, by_code(abi_code(c.value)), a.action.value);
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
                        t.levels.insert((s.state.value, abi_code(c.value)), (e.level.value, e.error_id.value));
                    }
                }
            }
        }
        if let Some(m) = &module.module_hm {
            index(&m.states, |state, id, a| {
                t.module.insert((state, id), a);
            });
        }
        for table in &module.partition_hm {
            let Some(p) = module.resolve(&table.partition) else { continue };
            let pid = p.id.value;
            index(&table.states, |state, id, a| {
                t.partition.insert((pid, state, id), a);
            });
        }
        t
    }

    /// The level of `code` in `state` (System_HM_Table, else the default) and its identifier.
    fn level(&self, state: u32, code: u32) -> (ErrorLevel, Option<u32>) {
        match self.levels.get(&(state, code)) {
            Some(&(level, id)) => (level, Some(id)),
            None => (default_level(code), None),
        }
    }

    /// Error codes that are PROCESS level in PARTITION_EXECUTION, as a bit mask (for the
    /// partitions' runtime, which routes those to the error handler).
    pub fn process_level_mask(&self) -> u32 {
        (0..error_code::COUNT)
            .filter(|&c| self.level(system_state::PARTITION_EXECUTION, c).0 == ErrorLevel::Process)
            .fold(0, |m, c| m | 1 << c)
    }

    pub fn is_process_level(&self, state: u32, code: u32) -> bool {
        self.level(state, code).0 == ErrorLevel::Process
    }

    /// The decision for an error of `partition` that reached the module. `no_process`: the
    /// error cannot be a process's (the program ended), so PROCESS level counts as PARTITION.
    pub fn decide(&self, partition: u32, state: u32, code: u32, no_process: bool) -> Decision {
        let (mut level, id) = self.level(state, code);
        if no_process && level == ErrorLevel::Process {
            level = ErrorLevel::Partition;
        }
        let action = match level {
            ErrorLevel::Module => {
                let found = id.and_then(|id| self.module.get(&(state, id))).or_else(|| self.module.get(&(state, by_code(code))));
                match found {
                    Some(ModuleAction::Ignore) => Action::Ignore,
                    Some(ModuleAction::Reset) => Action::Reset,
                    Some(ModuleAction::Shutdown) | None => Action::Shutdown,
                }
            }
            ErrorLevel::Partition | ErrorLevel::Process => {
                let found = id
                    .and_then(|id| self.partition.get(&(partition, state, id)))
                    .or_else(|| self.partition.get(&(partition, state, by_code(code))));
                match found {
                    Some(PartitionAction::Ignore) => Action::Ignore,
                    Some(PartitionAction::Idle) => Action::Idle,
                    Some(PartitionAction::WarmStart) => Action::WarmStart,
                    Some(PartitionAction::ColdStart) => Action::ColdStart,
                    None if level == ErrorLevel::Process => Action::Ignore,
                    None => Action::Idle,
                }
            }
        };
        Decision { level, action }
    }
}

fn default_level(code: u32) -> ErrorLevel {
    match code {
        error_code::DEADLINE_MISSED | error_code::APPLICATION_ERROR => ErrorLevel::Process,
        error_code::POWER_FAILURE => ErrorLevel::Module,
        _ => ErrorLevel::Partition,
    }
}

/// The error a partition program's end stands for, when the runtime did not report it first:
/// a fault signal is its error; SIGKILL not sent by the module is most likely the memory
/// cgroup's OOM killer (MEMORY_VIOLATION); a program that exits (a partition may not end) or
/// dies of SIGSYS made an ILLEGAL_REQUEST; any other signal (abort, ...) is an APPLICATION_ERROR.
pub fn code_of_exit(signal: Option<i32>) -> u32 {
    match signal {
        None => error_code::ILLEGAL_REQUEST,
        Some(libc::SIGSEGV | libc::SIGBUS | libc::SIGKILL) => error_code::MEMORY_VIOLATION,
        Some(libc::SIGFPE) => error_code::NUMERIC_ERROR,
        Some(libc::SIGSYS | libc::SIGILL) => error_code::ILLEGAL_REQUEST,
        Some(_) => error_code::APPLICATION_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partita_abi::system_state::{PARTITION_EXECUTION as RUN, PARTITION_INIT as INIT};

    fn tables(xml: &str) -> HmTables {
        let checked = partita_config::check_text(xml, std::path::Path::new("/tmp"));
        HmTables::new(checked.module.as_ref().expect("module"))
    }

    #[test]
    fn configuration_codes_number_as_the_abi_does() {
        for (value, name) in partita_abi::error_code::NAMES.iter().enumerate() {
            assert_eq!(code_by_name(name), Some(value as u32), "{name}");
            assert_eq!(code_name(value as u32), *name);
        }
    }

    const XML: &str = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <System_HM_Table>
    <System_State_Entry SystemState="2">
      <Error_ID_Level ErrorIdentifier="1" ErrorLevel="MODULE" ErrorCode="HARDWARE_FAULT"/>
      <Error_ID_Level ErrorIdentifier="2" ErrorLevel="PROCESS" ErrorCode="NUMERIC_ERROR"/>
      <Error_ID_Level ErrorIdentifier="3" ErrorLevel="PARTITION" ErrorCode="MEMORY_VIOLATION"/>
    </System_State_Entry>
  </System_HM_Table>
  <Module_HM_Table>
    <System_State_Entry SystemState="2"><Error_ID_Action ErrorIdentifier="1" Action="RESET"/></System_State_Entry>
  </Module_HM_Table>
  <Partition PartitionIdentifier="1" PartitionName="P" pt:Executable="/bin/true"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Partition_HM_Table PartitionIdentifier="1" PartitionName="P">
    <System_State_Entry SystemState="2">
      <Error_ID_Action ErrorIdentifier="2" Action="WARM_START"/>
      <Error_ID_Action ErrorIdentifier="3" Action="COLD_START"/>
    </System_State_Entry>
  </Partition_HM_Table>
</ARINC_653_Module>"#;

    #[test]
    fn tables_give_levels_and_actions_per_state() {
        let t = tables(XML);
        let d = |state, code| t.decide(1, state, code, false);
        assert_eq!(d(RUN, error_code::HARDWARE_FAULT), Decision { level: ErrorLevel::Module, action: Action::Reset });
        assert_eq!(d(RUN, error_code::NUMERIC_ERROR), Decision { level: ErrorLevel::Process, action: Action::WarmStart });
        assert_eq!(d(RUN, error_code::MEMORY_VIOLATION), Decision { level: ErrorLevel::Partition, action: Action::ColdStart });
        // Another state: the tables are silent, the defaults apply.
        assert_eq!(d(INIT, error_code::MEMORY_VIOLATION), Decision { level: ErrorLevel::Partition, action: Action::Idle });
        assert_eq!(d(INIT, error_code::HARDWARE_FAULT), Decision { level: ErrorLevel::Partition, action: Action::Idle });
        assert_eq!(d(RUN, error_code::DEADLINE_MISSED), Decision { level: ErrorLevel::Process, action: Action::Ignore });
        assert_eq!(d(RUN, error_code::POWER_FAILURE), Decision { level: ErrorLevel::Module, action: Action::Shutdown });
        // A program that ended has no process to blame.
        assert_eq!(t.decide(1, RUN, error_code::NUMERIC_ERROR, true).level, ErrorLevel::Partition);
        let mask = t.process_level_mask();
        assert_eq!(mask, 1 << error_code::DEADLINE_MISSED | 1 << error_code::APPLICATION_ERROR | 1 << error_code::NUMERIC_ERROR);
    }

    #[test]
    fn names_round_trip() {
        for c in 0..error_code::COUNT {
            assert_eq!(code_by_name(code_name(c)), Some(c));
        }
        assert_eq!(code_by_name("POWER_FAIL"), None);
        assert_eq!(code_of_exit(Some(libc::SIGFPE)), error_code::NUMERIC_ERROR);
        assert_eq!(code_of_exit(None), error_code::ILLEGAL_REQUEST);
    }
}
