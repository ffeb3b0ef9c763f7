//! `#[repr(C)]` mirrors of the structures of include/ARINC653.h (APEX_INTEGER is 32-bit,
//! SYSTEM_TIME_TYPE 64-bit, enums are C `int`s, NAME_TYPE is `char[30]`).

use crate::names::{MAX_NAME_LENGTH, Name};
use crate::types::*;
use libc::{c_char, c_void};

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ProcessAttributeC {
    pub period: i64,
    pub time_capacity: i64,
    pub entry_point: *mut c_void,
    pub stack_size: u32,
    pub base_priority: i32,
    pub deadline: u32,
    pub name: [c_char; MAX_NAME_LENGTH],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ProcessStatusC {
    pub deadline_time: i64,
    pub current_priority: i32,
    pub process_state: u32,
    pub attributes: ProcessAttributeC,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PartitionStatusC {
    pub period: i64,
    pub duration: i64,
    pub identifier: i32,
    pub lock_level: i32,
    pub operating_mode: u32,
    pub start_condition: u32,
    pub num_assigned_cores: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ScheduleStatusC {
    pub time_of_last_schedule_switch: i64,
    pub current_schedule: i32,
    pub next_schedule: i32,
}

impl ProcessAttributeC {
    /// The Rust attribute, or None for an invalid entry point or deadline kind.
    pub fn to_rust(&self) -> Option<ProcessAttribute> {
        if self.entry_point.is_null() {
            return None;
        }
        let deadline = match self.deadline {
            0 => Deadline::Soft,
            1 => Deadline::Hard,
            _ => return None,
        };
        // SAFETY: a non-null SYSTEM_ADDRESS_TYPE entry point is, per the APEX contract, the
        // address of a function taking no argument.
        let entry_point: EntryPoint = unsafe { std::mem::transmute::<*mut c_void, EntryPoint>(self.entry_point) };
        let bytes = self.name.map(|c| c as u8);
        Some(ProcessAttribute {
            period: self.period,
            time_capacity: self.time_capacity,
            entry_point,
            stack_size: self.stack_size,
            base_priority: self.base_priority,
            deadline,
            name: Name::from_bytes(&bytes),
        })
    }

    pub fn from_rust(a: &ProcessAttribute) -> ProcessAttributeC {
        ProcessAttributeC {
            period: a.period,
            time_capacity: a.time_capacity,
            entry_point: a.entry_point as *mut c_void,
            stack_size: a.stack_size,
            base_priority: a.base_priority,
            deadline: a.deadline as u32,
            name: a.name.to_c(),
        }
    }
}

/// Sizes and field offsets, for the layout test against the C header.
///
/// # Safety
/// `out` is null or has room for `n` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn partita_apex_layout(out: *mut i64, n: usize) -> usize {
    let v: [i64; 10] = [
        size_of::<ProcessAttributeC>() as i64,
        std::mem::offset_of!(ProcessAttributeC, name) as i64,
        size_of::<ProcessStatusC>() as i64,
        std::mem::offset_of!(ProcessStatusC, attributes) as i64,
        size_of::<PartitionStatusC>() as i64,
        std::mem::offset_of!(PartitionStatusC, num_assigned_cores) as i64,
        size_of::<ScheduleStatusC>() as i64,
        std::mem::offset_of!(ScheduleStatusC, next_schedule) as i64,
        std::mem::offset_of!(ProcessAttributeC, stack_size) as i64,
        std::mem::offset_of!(PartitionStatusC, operating_mode) as i64,
    ];
    if !out.is_null() {
        for (i, x) in v.iter().enumerate().take(n) {
            // SAFETY: the caller provides room for `n` values.
            unsafe { *out.add(i) = *x };
        }
    }
    v.len()
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct BufferStatusC {
    pub nb_message: i32,
    pub max_nb_message: i32,
    pub max_message_size: i32,
    pub waiting_processes: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct BlackboardStatusC {
    pub empty_indicator: u32,
    pub max_message_size: i32,
    pub waiting_processes: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct SemaphoreStatusC {
    pub current_value: i32,
    pub maximum_value: i32,
    pub waiting_processes: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct EventStatusC {
    pub event_state: u32,
    pub waiting_processes: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct MutexStatusC {
    pub mutex_owner: i32,
    pub mutex_state: u32,
    pub mutex_priority: i32,
    pub lock_count: i32,
    pub waiting_processes: i32,
}

/// ERROR_STATUS_TYPE.
#[repr(C)]
pub struct ErrorStatusC {
    pub error_code: u32,
    pub message: [u8; MAX_ERROR_MESSAGE_SIZE],
    pub length: i32,
    pub failed_process_id: i32,
    pub failed_address: *mut c_void,
}

impl ErrorStatusC {
    pub fn from_rust(s: &crate::services::hm::ErrorStatus) -> ErrorStatusC {
        ErrorStatusC {
            error_code: s.code,
            message: s.message,
            length: s.length as i32,
            failed_process_id: s.failed_process_id,
            failed_address: s.failed_address as *mut c_void,
        }
    }
}
