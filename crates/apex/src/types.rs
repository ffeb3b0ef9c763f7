//! ARINC 653 types of the Rust API, with the standard's values (design.md §4).

use crate::names::Name;
use core::fmt;

/// SYSTEM_TIME_TYPE: signed nanoseconds; [`INFINITE_TIME_VALUE`] (any negative value) is infinite.
pub type SystemTime = i64;
pub const INFINITE_TIME_VALUE: SystemTime = -1;

pub type ProcessId = i32;
pub type Priority = i32;
pub type LockLevel = i32;
pub type StackSize = u32;
pub type ProcessorCoreId = i32;
pub type PartitionId = i32;
pub type ScheduleId = i32;

pub const MIN_PRIORITY_VALUE: Priority = 1;
pub const MAX_PRIORITY_VALUE: Priority = 239;
pub const MAX_LOCK_LEVEL: LockLevel = 16;
/// SYSTEM_LIMIT_NUMBER_OF_PROCESSES: processes per partition.
pub const MAX_NUMBER_OF_PROCESSES: usize = 128;
/// Largest accepted STACK_SIZE (bytes); larger values are INVALID_PARAM. 0 means the default.
pub const MAX_STACK_SIZE: StackSize = 64 << 20;
/// MAX_ERROR_MESSAGE_SIZE: longest REPORT_APPLICATION_MESSAGE / RAISE_APPLICATION_ERROR text.
pub const MAX_ERROR_MESSAGE_SIZE: usize = 128;
/// CORE_AFFINITY_NO_PREFERENCE: a process may run on any core of the partition.
pub const CORE_AFFINITY_NO_PREFERENCE: ProcessorCoreId = -1;

/// RETURN_CODE_TYPE without NO_ERROR (which is `Ok`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ErrorReturnCode {
    NoAction = 1,
    NotAvailable = 2,
    InvalidParam = 3,
    InvalidConfig = 4,
    InvalidMode = 5,
    TimedOut = 6,
}

impl fmt::Display for ErrorReturnCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorReturnCode::NoAction => "NO_ACTION",
            ErrorReturnCode::NotAvailable => "NOT_AVAILABLE",
            ErrorReturnCode::InvalidParam => "INVALID_PARAM",
            ErrorReturnCode::InvalidConfig => "INVALID_CONFIG",
            ErrorReturnCode::InvalidMode => "INVALID_MODE",
            ErrorReturnCode::TimedOut => "TIMED_OUT",
        })
    }
}

impl std::error::Error for ErrorReturnCode {}

pub type ApexResult<T> = Result<T, ErrorReturnCode>;

/// The RETURN_CODE_TYPE value of a result (NO_ERROR = 0).
pub fn return_code<T>(r: &ApexResult<T>) -> u32 {
    match r {
        Ok(_) => 0,
        Err(e) => *e as u32,
    }
}

/// OPERATING_MODE_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum OperatingMode {
    Idle = 0,
    ColdStart = 1,
    WarmStart = 2,
    Normal = 3,
}

impl OperatingMode {
    /// The standard's name (e.g. `COLD_START`).
    pub fn name(self) -> &'static str {
        match self {
            OperatingMode::Idle => "IDLE",
            OperatingMode::ColdStart => "COLD_START",
            OperatingMode::WarmStart => "WARM_START",
            OperatingMode::Normal => "NORMAL",
        }
    }

    pub fn from_u32(v: u32) -> Option<OperatingMode> {
        match v {
            0 => Some(OperatingMode::Idle),
            1 => Some(OperatingMode::ColdStart),
            2 => Some(OperatingMode::WarmStart),
            3 => Some(OperatingMode::Normal),
            _ => None,
        }
    }
}

/// START_CONDITION_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum StartCondition {
    NormalStart = 0,
    PartitionRestart = 1,
    HmModuleRestart = 2,
    HmPartitionRestart = 3,
}

impl StartCondition {
    pub fn from_u32(v: u32) -> StartCondition {
        match v {
            1 => StartCondition::PartitionRestart,
            2 => StartCondition::HmModuleRestart,
            3 => StartCondition::HmPartitionRestart,
            _ => StartCondition::NormalStart,
        }
    }
}

/// PROCESS_STATE_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ProcessState {
    Dormant = 0,
    Ready = 1,
    Running = 2,
    Waiting = 3,
    Faulted = 4,
}

/// DEADLINE_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Deadline {
    Soft = 0,
    Hard = 1,
}

/// A process entry point: a C-ABI function without arguments.
pub type EntryPoint = extern "C" fn();

/// PROCESS_ATTRIBUTE_TYPE.
#[derive(Debug, Clone)]
pub struct ProcessAttribute {
    /// [`INFINITE_TIME_VALUE`] for an aperiodic process.
    pub period: SystemTime,
    /// [`INFINITE_TIME_VALUE`] for no deadline.
    pub time_capacity: SystemTime,
    pub entry_point: EntryPoint,
    pub stack_size: StackSize,
    pub base_priority: Priority,
    pub deadline: Deadline,
    pub name: Name,
}

/// PROCESS_STATUS_TYPE.
#[derive(Debug, Clone)]
pub struct ProcessStatus {
    /// ns since the module epoch; [`INFINITE_TIME_VALUE`] when there is no deadline.
    pub deadline_time: SystemTime,
    pub current_priority: Priority,
    pub process_state: ProcessState,
    pub attributes: ProcessAttribute,
}

/// PARTITION_STATUS_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionStatus {
    pub period: SystemTime,
    pub duration: SystemTime,
    pub identifier: PartitionId,
    pub lock_level: LockLevel,
    pub operating_mode: OperatingMode,
    pub start_condition: StartCondition,
    pub num_assigned_cores: u32,
}

/// SCHEDULE_STATUS_TYPE (ARINC 653 Part 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleStatus {
    /// ns since the module epoch; 0 if the schedule never switched.
    pub time_of_last_schedule_switch: SystemTime,
    pub current_schedule: ScheduleId,
    pub next_schedule: ScheduleId,
}

/// ERROR_CODE_TYPE values (only APPLICATION_ERROR may be raised by an application); the ABI's,
/// with the standard's name for the last one.
pub mod error_code {
    pub use partita_abi::error_code::*;
    pub const POWER_FAIL: u32 = POWER_FAILURE;
}

/// BUFFER_STATUS_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferStatus {
    pub nb_message: i32,
    pub max_nb_message: i32,
    pub max_message_size: i32,
    pub waiting_processes: i32,
}

/// BLACKBOARD_STATUS_TYPE (`occupied` is EMPTY_INDICATOR = OCCUPIED).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlackboardStatus {
    pub occupied: bool,
    pub max_message_size: i32,
    pub waiting_processes: i32,
}

/// SEMAPHORE_STATUS_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SemaphoreStatus {
    pub current_value: i32,
    pub maximum_value: i32,
    pub waiting_processes: i32,
}

/// EVENT_STATUS_TYPE (`up` is EVENT_STATE = UP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventStatus {
    pub up: bool,
    pub waiting_processes: i32,
}

/// MUTEX_STATUS_TYPE (`owner` is NO_MUTEX_OWNED when `owned` is false).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MutexStatus {
    pub owner: ProcessId,
    pub owned: bool,
    pub priority: Priority,
    pub lock_count: i32,
    pub waiting_processes: i32,
}
