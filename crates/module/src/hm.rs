//! The health monitor on the module's side: the decisions come from the configuration's tables
//! (`partita_config::hm`, the one home of the rules and defaults, shared with `partita check`);
//! here are the ABI's names for error codes and the error a partition program's end stands for.
//! Carrying an action out is the lifecycle thread's job (`lifecycle`), because it owns the
//! partitions' programs.

use partita_abi::error_code;
pub use partita_config::hm::{Action, Decision, HmTables, code_name, level_name};
use partita_config::model::ErrorCode;

/// The ABI error code of a name, as given to `--inject`.
pub fn code_by_name(name: &str) -> Option<u32> {
    ErrorCode::ALL.iter().position(|(n, _)| *n == name).map(|i| i as u32)
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

/// The fault signal a program's exit status stands for: the partition runtime's last resort
/// (crates/apex `kernel/faults.rs`) ends a process that faulted beyond repair with
/// `exit_group(128 + signal)` rather than by the signal itself (docs/isolation.md, "Exits"), so
/// that the module's broker demotes its threads first. Other statuses: None.
pub fn fault_of_exit_status(code: i32) -> Option<i32> {
    let sig = code - 128;
    [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGSYS, libc::SIGILL, libc::SIGABRT].contains(&sig).then_some(sig)
}

#[cfg(test)]
mod tests {
    use super::*;
    use partita_abi::system_state::{PARTITION_EXECUTION as RUN, PARTITION_INIT as INIT};
    use partita_config::model::ErrorLevel;

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

    #[test]
    fn the_runtime_last_resort_status_is_its_fault() {
        assert_eq!(fault_of_exit_status(128 + libc::SIGSEGV), Some(libc::SIGSEGV));
        assert_eq!(code_of_exit(fault_of_exit_status(128 + libc::SIGABRT)), error_code::APPLICATION_ERROR);
        assert_eq!(code_of_exit(fault_of_exit_status(128 + libc::SIGFPE)), error_code::NUMERIC_ERROR);
        // Not a fault signal (SIGKILL, SIGTERM), or an ordinary status: a program that exits.
        for code in [0, 1, 127, 128, 128 + libc::SIGKILL, 128 + libc::SIGTERM, 255] {
            assert_eq!(fault_of_exit_status(code), None, "{code}");
        }
    }
}
