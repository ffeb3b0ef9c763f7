//! The C ABI of include/ARINC653.h: each service writes its outputs and RETURN_CODE through the
//! caller's pointers (a null pointer is skipped) and calls the Rust API.
#![allow(non_snake_case)]

mod objects;
mod ports;
pub mod types;

use crate::names::Name;
use crate::services::{control, hm, partition, process, schedule, time};
use crate::types::*;
use libc::c_char;
use types::*;

/// Stores `v` through `p` unless `p` is null.
fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: a non-null output pointer of an APEX service points to a writable object of
        // its type (the caller's contract).
        unsafe { p.write(v) };
    }
}

fn rc<T>(p: *mut u32, r: &ApexResult<T>) {
    put(p, return_code(r));
}

/// # Safety
/// `p` is null or readable up to its first NUL or 30th byte.
unsafe fn name(p: *const c_char) -> Name {
    // SAFETY: forwarded contract.
    unsafe { Name::from_c(p) }
}

fn message<'a>(addr: *const u8, len: i32) -> Result<&'a [u8], ErrorReturnCode> {
    let len = usize::try_from(len).map_err(|_| ErrorReturnCode::InvalidParam)?;
    if len > MAX_ERROR_MESSAGE_SIZE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if len == 0 {
        return Ok(&[]);
    }
    if addr.is_null() {
        return Err(ErrorReturnCode::InvalidParam);
    }
    // SAFETY: the caller passes MESSAGE_ADDR pointing to LENGTH readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(addr, len) })
}

// ---------------------------------------------------------------- processes

/// # Safety
/// Pointers are null or valid for their types.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CREATE_PROCESS(attributes: *const ProcessAttributeC, process_id: *mut i32, return_code: *mut u32) {
    // SAFETY: non-null ATTRIBUTES points to a PROCESS_ATTRIBUTE_TYPE (caller's contract).
    let attr = unsafe { attributes.as_ref() }.and_then(ProcessAttributeC::to_rust);
    let r = match attr {
        Some(a) => process::create_process(&a),
        None if crate::kernel::runtime::rt().mode() == partita_abi::mode::NORMAL => Err(ErrorReturnCode::InvalidMode),
        None => Err(ErrorReturnCode::InvalidParam),
    };
    if let Ok(id) = r {
        put(process_id, id);
    }
    rc(return_code, &r);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn START(process_id: i32, return_code: *mut u32) {
    rc(return_code, &control::start(process_id));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn DELAYED_START(process_id: i32, delay_time: i64, return_code: *mut u32) {
    rc(return_code, &control::delayed_start(process_id, delay_time));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn STOP(process_id: i32, return_code: *mut u32) {
    rc(return_code, &control::stop(process_id));
}

#[unsafe(no_mangle)]
pub extern "C" fn STOP_SELF() {
    control::stop_self()
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn SUSPEND(process_id: i32, return_code: *mut u32) {
    rc(return_code, &control::suspend(process_id));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn SUSPEND_SELF(time_out: i64, return_code: *mut u32) {
    rc(return_code, &control::suspend_self(time_out));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RESUME(process_id: i32, return_code: *mut u32) {
    rc(return_code, &control::resume(process_id));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn SET_PRIORITY(process_id: i32, priority: i32, return_code: *mut u32) {
    rc(return_code, &control::set_priority(process_id, priority));
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn LOCK_PREEMPTION(lock_level: *mut i32, return_code: *mut u32) {
    let r = control::lock_preemption();
    put(lock_level, r.unwrap_or_else(|_| control::lock_level()));
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn UNLOCK_PREEMPTION(lock_level: *mut i32, return_code: *mut u32) {
    let r = control::unlock_preemption();
    put(lock_level, r.unwrap_or_else(|_| control::lock_level()));
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_MY_ID(process_id: *mut i32, return_code: *mut u32) {
    let r = process::get_my_id();
    if let Ok(id) = r {
        put(process_id, id);
    }
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_MY_INDEX(process_index: *mut i32, return_code: *mut u32) {
    let r = process::get_my_index();
    if let Ok(i) = r {
        put(process_index, i);
    }
    rc(return_code, &r);
}

/// # Safety
/// `process_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_PROCESS_ID(process_name: *const c_char, process_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = process::get_process_id(&unsafe { name(process_name) });
    if let Ok(id) = r {
        put(process_id, id);
    }
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_PROCESS_STATUS(process_id: i32, process_status: *mut ProcessStatusC, return_code: *mut u32) {
    let r = process::get_process_status(process_id);
    if let Ok(s) = &r {
        put(
            process_status,
            ProcessStatusC {
                deadline_time: s.deadline_time,
                current_priority: s.current_priority,
                process_state: s.process_state as u32,
                attributes: ProcessAttributeC::from_rust(&s.attributes),
            },
        );
    }
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_MY_PROCESSOR_CORE_ID(core_id: *mut i32, return_code: *mut u32) {
    put(core_id, process::get_my_processor_core_id());
    put(return_code, 0);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn INITIALIZE_PROCESS_CORE_AFFINITY(process_id: i32, core_id: i32, return_code: *mut u32) {
    rc(return_code, &process::initialize_process_core_affinity(process_id, core_id));
}

// ---------------------------------------------------------------- time

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_TIME(system_time: *mut i64, return_code: *mut u32) {
    put(system_time, time::get_time());
    put(return_code, 0);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TIMED_WAIT(delay_time: i64, return_code: *mut u32) {
    rc(return_code, &time::timed_wait(delay_time));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PERIODIC_WAIT(return_code: *mut u32) {
    rc(return_code, &time::periodic_wait());
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn REPLENISH(budget_time: i64, return_code: *mut u32) {
    rc(return_code, &time::replenish(budget_time));
}

// ---------------------------------------------------------------- partition

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_PARTITION_STATUS(partition_status: *mut PartitionStatusC, return_code: *mut u32) {
    let s = partition::get_partition_status();
    put(
        partition_status,
        PartitionStatusC {
            period: s.period,
            duration: s.duration,
            identifier: s.identifier,
            lock_level: s.lock_level,
            operating_mode: s.operating_mode as u32,
            start_condition: s.start_condition as u32,
            num_assigned_cores: s.num_assigned_cores,
        },
    );
    put(return_code, 0);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn SET_PARTITION_MODE(operating_mode: u32, return_code: *mut u32) {
    rc(return_code, &partition::set_partition_mode(operating_mode));
}

// ---------------------------------------------------------------- module schedules (Part 2)

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn SET_MODULE_SCHEDULE(schedule_id: i32, return_code: *mut u32) {
    rc(return_code, &schedule::set_module_schedule(schedule_id));
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_MODULE_SCHEDULE_STATUS(schedule_status: *mut ScheduleStatusC, return_code: *mut u32) {
    let s = schedule::get_module_schedule_status();
    put(
        schedule_status,
        ScheduleStatusC {
            time_of_last_schedule_switch: s.time_of_last_schedule_switch,
            current_schedule: s.current_schedule,
            next_schedule: s.next_schedule,
        },
    );
    put(return_code, 0);
}

/// # Safety
/// `schedule_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_MODULE_SCHEDULE_ID(schedule_name: *const c_char, schedule_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = schedule::get_module_schedule_id(&unsafe { name(schedule_name) });
    if let Ok(id) = r {
        put(schedule_id, id);
    }
    rc(return_code, &r);
}

// ---------------------------------------------------------------- health monitoring

/// # Safety
/// `message_addr` points to `length` readable bytes; `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn REPORT_APPLICATION_MESSAGE(message_addr: *const u8, length: i32, return_code: *mut u32) {
    let r = message(message_addr, length).and_then(hm::report_application_message);
    rc(return_code, &r);
}

/// # Safety
/// `message_addr` points to `length` readable bytes; `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RAISE_APPLICATION_ERROR(error_code: u32, message_addr: *const u8, length: i32, return_code: *mut u32) {
    let r = message(message_addr, length).and_then(|m| hm::raise_application_error(error_code, m));
    rc(return_code, &r);
}

/// # Safety
/// `entry_point` is null or an `extern "C" fn()`; `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CREATE_ERROR_HANDLER(entry_point: *mut libc::c_void, stack_size: u32, return_code: *mut u32) {
    let r = if entry_point.is_null() {
        if crate::kernel::runtime::rt().mode() == partita_abi::mode::NORMAL {
            Err(ErrorReturnCode::InvalidMode)
        } else {
            Err(ErrorReturnCode::InvalidParam)
        }
    } else {
        // SAFETY: a non-null ENTRY_POINT is the address of a C function without arguments.
        let entry: EntryPoint = unsafe { std::mem::transmute::<*mut libc::c_void, EntryPoint>(entry_point) };
        hm::create_error_handler(entry, stack_size)
    };
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid for their types.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_ERROR_STATUS(error_status: *mut ErrorStatusC, return_code: *mut u32) {
    let r = hm::get_error_status();
    if let Ok(s) = &r {
        put(error_status, ErrorStatusC::from_rust(s));
    }
    rc(return_code, &r);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CONFIGURE_ERROR_HANDLER(concurrency_control: u32, processor_core_id: i32, return_code: *mut u32) {
    rc(return_code, &hm::configure_error_handler(concurrency_control, processor_core_id));
}
