//! The C ABI of the intra-partition communication objects (buffers, blackboards, semaphores,
//! events, mutexes); outputs are written only on success, LENGTH also on failure (0).
#![allow(non_snake_case)]

use super::types::*;
use super::{name, put, rc};
use crate::kernel::runtime::rt;
use crate::kernel::waitq::Discipline;
use crate::services::objects::{blackboard, buffer, event, mutex, semaphore};
use crate::types::*;
use libc::c_char;
use partita_abi::mode;

/// The discipline, or the error CREATE_* returns for an invalid one (INVALID_MODE first, as
/// for every CREATE_* in NORMAL mode).
fn discipline(d: u32) -> ApexResult<Discipline> {
    Discipline::from_u32(d).ok_or(if rt().mode() == mode::NORMAL { ErrorReturnCode::InvalidMode } else { ErrorReturnCode::InvalidParam })
}

fn put_id(p: *mut i32, r: &ApexResult<i32>) {
    if let Ok(id) = r {
        put(p, *id);
    }
}

// ---------------------------------------------------------------- buffers

/// # Safety
/// `buffer_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CREATE_BUFFER(
    buffer_name: *const c_char,
    max_message_size: i32,
    max_nb_message: i32,
    queuing_discipline: u32,
    buffer_id: *mut i32,
    return_code: *mut u32,
) {
    // SAFETY: forwarded contract.
    let n = unsafe { name(buffer_name) };
    let r = discipline(queuing_discipline).and_then(|d| buffer::create_buffer(n, max_message_size, max_nb_message, d));
    put_id(buffer_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// `message_addr` is readable for `length` bytes; `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn SEND_BUFFER(buffer_id: i32, message_addr: *const u8, length: i32, time_out: i64, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    rc(return_code, &unsafe { buffer::send_raw(buffer_id, message_addr, length, time_out) });
}

/// # Safety
/// `message_addr` is writable for the buffer's MAX_MESSAGE_SIZE; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RECEIVE_BUFFER(buffer_id: i32, time_out: i64, message_addr: *mut u8, length: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = unsafe { buffer::receive_raw(buffer_id, time_out, message_addr) };
    put(length, r.map_or(0, |n| n as i32));
    rc(return_code, &r);
}

/// # Safety
/// `buffer_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_BUFFER_ID(buffer_name: *const c_char, buffer_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = buffer::get_buffer_id(&unsafe { name(buffer_name) });
    put_id(buffer_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_BUFFER_STATUS(buffer_id: i32, buffer_status: *mut BufferStatusC, return_code: *mut u32) {
    let r = buffer::get_buffer_status(buffer_id);
    if let Ok(s) = &r {
        put(
            buffer_status,
            BufferStatusC {
                nb_message: s.nb_message,
                max_nb_message: s.max_nb_message,
                max_message_size: s.max_message_size,
                waiting_processes: s.waiting_processes,
            },
        );
    }
    rc(return_code, &r);
}

// ---------------------------------------------------------------- blackboards

/// # Safety
/// `blackboard_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CREATE_BLACKBOARD(
    blackboard_name: *const c_char,
    max_message_size: i32,
    blackboard_id: *mut i32,
    return_code: *mut u32,
) {
    // SAFETY: forwarded contract.
    let r = blackboard::create_blackboard(unsafe { name(blackboard_name) }, max_message_size);
    put_id(blackboard_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// `message_addr` is readable for `length` bytes; `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn DISPLAY_BLACKBOARD(blackboard_id: i32, message_addr: *const u8, length: i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    rc(return_code, &unsafe { blackboard::display_raw(blackboard_id, message_addr, length) });
}

/// # Safety
/// `message_addr` is writable for the blackboard's MAX_MESSAGE_SIZE; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn READ_BLACKBOARD(
    blackboard_id: i32,
    time_out: i64,
    message_addr: *mut u8,
    length: *mut i32,
    return_code: *mut u32,
) {
    // SAFETY: forwarded contract.
    let r = unsafe { blackboard::read_raw(blackboard_id, time_out, message_addr) };
    put(length, r.map_or(0, |n| n as i32));
    rc(return_code, &r);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CLEAR_BLACKBOARD(blackboard_id: i32, return_code: *mut u32) {
    rc(return_code, &blackboard::clear_blackboard(blackboard_id));
}

/// # Safety
/// `blackboard_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_BLACKBOARD_ID(blackboard_name: *const c_char, blackboard_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = blackboard::get_blackboard_id(&unsafe { name(blackboard_name) });
    put_id(blackboard_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_BLACKBOARD_STATUS(blackboard_id: i32, blackboard_status: *mut BlackboardStatusC, return_code: *mut u32) {
    let r = blackboard::get_blackboard_status(blackboard_id);
    if let Ok(s) = &r {
        put(
            blackboard_status,
            BlackboardStatusC {
                empty_indicator: u32::from(s.occupied),
                max_message_size: s.max_message_size,
                waiting_processes: s.waiting_processes,
            },
        );
    }
    rc(return_code, &r);
}

// ---------------------------------------------------------------- semaphores

/// # Safety
/// `semaphore_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CREATE_SEMAPHORE(
    semaphore_name: *const c_char,
    current_value: i32,
    maximum_value: i32,
    queuing_discipline: u32,
    semaphore_id: *mut i32,
    return_code: *mut u32,
) {
    // SAFETY: forwarded contract.
    let n = unsafe { name(semaphore_name) };
    let r = discipline(queuing_discipline).and_then(|d| semaphore::create_semaphore(n, current_value, maximum_value, d));
    put_id(semaphore_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn WAIT_SEMAPHORE(semaphore_id: i32, time_out: i64, return_code: *mut u32) {
    rc(return_code, &semaphore::wait_semaphore(semaphore_id, time_out));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn SIGNAL_SEMAPHORE(semaphore_id: i32, return_code: *mut u32) {
    rc(return_code, &semaphore::signal_semaphore(semaphore_id));
}

/// # Safety
/// `semaphore_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_SEMAPHORE_ID(semaphore_name: *const c_char, semaphore_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = semaphore::get_semaphore_id(&unsafe { name(semaphore_name) });
    put_id(semaphore_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_SEMAPHORE_STATUS(semaphore_id: i32, semaphore_status: *mut SemaphoreStatusC, return_code: *mut u32) {
    let r = semaphore::get_semaphore_status(semaphore_id);
    if let Ok(s) = &r {
        put(
            semaphore_status,
            SemaphoreStatusC { current_value: s.current_value, maximum_value: s.maximum_value, waiting_processes: s.waiting_processes },
        );
    }
    rc(return_code, &r);
}

// ---------------------------------------------------------------- events

/// # Safety
/// `event_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CREATE_EVENT(event_name: *const c_char, event_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = event::create_event(unsafe { name(event_name) });
    put_id(event_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn SET_EVENT(event_id: i32, return_code: *mut u32) {
    rc(return_code, &event::set_event(event_id));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RESET_EVENT(event_id: i32, return_code: *mut u32) {
    rc(return_code, &event::reset_event(event_id));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn WAIT_EVENT(event_id: i32, time_out: i64, return_code: *mut u32) {
    rc(return_code, &event::wait_event(event_id, time_out));
}

/// # Safety
/// `event_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_EVENT_ID(event_name: *const c_char, event_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = event::get_event_id(&unsafe { name(event_name) });
    put_id(event_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_EVENT_STATUS(event_id: i32, event_status: *mut EventStatusC, return_code: *mut u32) {
    let r = event::get_event_status(event_id);
    if let Ok(s) = &r {
        put(event_status, EventStatusC { event_state: u32::from(s.up), waiting_processes: s.waiting_processes });
    }
    rc(return_code, &r);
}

// ---------------------------------------------------------------- mutexes

/// # Safety
/// `mutex_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CREATE_MUTEX(
    mutex_name: *const c_char,
    mutex_priority: i32,
    queuing_discipline: u32,
    mutex_id: *mut i32,
    return_code: *mut u32,
) {
    // SAFETY: forwarded contract.
    let n = unsafe { name(mutex_name) };
    let r = discipline(queuing_discipline).and_then(|d| mutex::create_mutex(n, mutex_priority, d));
    put_id(mutex_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ACQUIRE_MUTEX(mutex_id: i32, time_out: i64, return_code: *mut u32) {
    rc(return_code, &mutex::acquire_mutex(mutex_id, time_out));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RELEASE_MUTEX(mutex_id: i32, return_code: *mut u32) {
    rc(return_code, &mutex::release_mutex(mutex_id));
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RESET_MUTEX(mutex_id: i32, process_id: i32, return_code: *mut u32) {
    rc(return_code, &mutex::reset_mutex(mutex_id, process_id));
}

/// # Safety
/// `mutex_name` is null or readable up to NUL or 30 bytes; other pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_MUTEX_ID(mutex_name: *const c_char, mutex_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = mutex::get_mutex_id(&unsafe { name(mutex_name) });
    put_id(mutex_id, &r);
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_MUTEX_STATUS(mutex_id: i32, mutex_status: *mut MutexStatusC, return_code: *mut u32) {
    let r = mutex::get_mutex_status(mutex_id);
    if let Ok(s) = &r {
        put(
            mutex_status,
            MutexStatusC {
                mutex_owner: s.owner,
                mutex_state: u32::from(s.owned),
                mutex_priority: s.priority,
                lock_count: s.lock_count,
                waiting_processes: s.waiting_processes,
            },
        );
    }
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_PROCESS_MUTEX_STATE(process_id: i32, mutex_id: *mut i32, return_code: *mut u32) {
    let r = mutex::get_process_mutex_state(process_id);
    put_id(mutex_id, &r);
    rc(return_code, &r);
}
