//! C ABI of the sampling and queuing port services. A message buffer passed to a read or
//! receive holds the port's maximum message size (the standard's contract); one passed to a
//! write or send holds LENGTH bytes.

use super::{name, put, rc};
use crate::QueuingDiscipline;
use crate::services::ports::*;
use crate::types::*;
use libc::c_char;

#[repr(C)]
pub struct SamplingPortStatusC {
    pub refresh_period: i64,
    pub max_message_size: i32,
    pub port_direction: u32,
    pub last_msg_validity: u32,
}

#[repr(C)]
pub struct SamplingPortCurrentStatusC {
    pub refresh_period: i64,
    pub time_stamp: i64,
    pub max_message_size: i32,
    pub port_direction: u32,
    pub message_age: u32,
    pub updated: u32,
}

#[repr(C)]
pub struct QueuingPortStatusC {
    pub nb_message: i32,
    pub max_nb_message: i32,
    pub max_message_size: i32,
    pub port_direction: u32,
    pub waiting_processes: i32,
}

/// The caller's message of `len` bytes, after the standard's checks against the port's
/// maximum `max` (longer: INVALID_CONFIG; 0 or negative: INVALID_PARAM).
fn message_in<'a>(addr: *const u8, len: i32, max: i32) -> ApexResult<&'a [u8]> {
    if len > max {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    if len <= 0 || addr.is_null() {
        return Err(ErrorReturnCode::InvalidParam);
    }
    // SAFETY: MESSAGE_ADDR points to LENGTH readable bytes (caller's contract); 0 < len <= max.
    Ok(unsafe { std::slice::from_raw_parts(addr, len as usize) })
}

/// The caller's receive buffer of the port's maximum size.
fn buffer_out<'a>(addr: *mut u8, max: i32) -> ApexResult<&'a mut [u8]> {
    if addr.is_null() || max <= 0 {
        return Err(ErrorReturnCode::InvalidParam);
    }
    // SAFETY: MESSAGE_ADDR points to a writable buffer of the port's maximum message size
    // (the standard's contract for reads).
    Ok(unsafe { std::slice::from_raw_parts_mut(addr, max as usize) })
}

fn sampling_max(id: i32) -> ApexResult<i32> {
    get_sampling_port_status(id).map(|s| s.max_message_size)
}

fn direction(v: u32) -> Option<PortDirection> {
    PortDirection::from_u32(v)
}

// ---------------------------------------------------------------- sampling ports

/// # Safety
/// Pointers are null or valid for their types; the name as for `Name::from_c`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CREATE_SAMPLING_PORT(
    sampling_port_name: *const c_char,
    max_message_size: i32,
    port_direction: u32,
    refresh_period: i64,
    sampling_port_id: *mut i32,
    return_code: *mut u32,
) {
    // SAFETY: forwarded contract.
    let n = unsafe { name(sampling_port_name) };
    let r = match direction(port_direction) {
        Some(d) => create_sampling_port(&n, max_message_size, d, refresh_period),
        None => Err(ErrorReturnCode::InvalidConfig),
    };
    if let Ok(id) = r {
        put(sampling_port_id, id);
    }
    rc(return_code, &r);
}

/// # Safety
/// `message_addr` points to `length` readable bytes; `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn WRITE_SAMPLING_MESSAGE(sampling_port_id: i32, message_addr: *const u8, length: i32, return_code: *mut u32) {
    let r = sampling_max(sampling_port_id)
        .and_then(|max| message_in(message_addr, length, max))
        .and_then(|m| write_sampling_message(sampling_port_id, m));
    rc(return_code, &r);
}

/// # Safety
/// `message_addr` holds the port's maximum message size; other pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn READ_SAMPLING_MESSAGE(
    sampling_port_id: i32,
    message_addr: *mut u8,
    length: *mut i32,
    validity: *mut u32,
    return_code: *mut u32,
) {
    let r = sampling_max(sampling_port_id).and_then(|max| {
        let buf = buffer_out(message_addr, max)?;
        read_sampling_message(sampling_port_id, buf)
    });
    let (len, v) = r.map_or((0, Validity::Invalid), |(n, v)| (n as i32, v));
    put(length, len);
    put(validity, v as u32);
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid; the name as for `Name::from_c`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_SAMPLING_PORT_ID(sampling_port_name: *const c_char, sampling_port_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = get_sampling_port_id(&unsafe { name(sampling_port_name) });
    if let Ok(id) = r {
        put(sampling_port_id, id);
    }
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_SAMPLING_PORT_STATUS(sampling_port_id: i32, status: *mut SamplingPortStatusC, return_code: *mut u32) {
    let r = get_sampling_port_status(sampling_port_id);
    if let Ok(s) = &r {
        put(
            status,
            SamplingPortStatusC {
                refresh_period: s.refresh_period,
                max_message_size: s.max_message_size,
                port_direction: s.port_direction as u32,
                last_msg_validity: s.last_msg_validity as u32,
            },
        );
    }
    rc(return_code, &r);
}

/// # Safety
/// `message_addr` holds the port's maximum message size; other pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn READ_UPDATED_SAMPLING_MESSAGE(
    sampling_port_id: i32,
    message_addr: *mut u8,
    length: *mut i32,
    updated: *mut u32,
    return_code: *mut u32,
) {
    let (r, u) = match sampling_max(sampling_port_id).and_then(|max| buffer_out(message_addr, max)) {
        Ok(buf) => read_updated_sampling_message(sampling_port_id, buf),
        Err(e) => (Err(e), Updated::EmptyPort),
    };
    put(length, *r.as_ref().unwrap_or(&0) as i32);
    put(updated, u as u32);
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_SAMPLING_PORT_CURRENT_STATUS(
    sampling_port_id: i32,
    status: *mut SamplingPortCurrentStatusC,
    return_code: *mut u32,
) {
    let r = get_sampling_port_current_status(sampling_port_id);
    if let Ok(s) = &r {
        put(
            status,
            SamplingPortCurrentStatusC {
                refresh_period: s.refresh_period,
                time_stamp: s.time_stamp,
                max_message_size: s.max_message_size,
                port_direction: s.port_direction as u32,
                message_age: s.message_age as u32,
                updated: s.updated as u32,
            },
        );
    }
    rc(return_code, &r);
}

/// # Safety
/// `message_addr` holds the port's maximum message size; other pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn READ_SAMPLING_MESSAGE_CONDITIONAL(
    sampling_port_id: i32,
    ref_time_stamp: i64,
    message_addr: *mut u8,
    length: *mut i32,
    time_stamp: *mut i64,
    return_code: *mut u32,
) {
    let (r, t) = match sampling_max(sampling_port_id).and_then(|max| buffer_out(message_addr, max)) {
        Ok(buf) => read_sampling_message_conditional(sampling_port_id, ref_time_stamp, buf),
        Err(e) => (Err(e), 0),
    };
    put(length, *r.as_ref().unwrap_or(&0) as i32);
    put(time_stamp, t);
    rc(return_code, &r);
}

// ---------------------------------------------------------------- queuing ports

/// # Safety
/// Pointers are null or valid; the name as for `Name::from_c`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CREATE_QUEUING_PORT(
    queuing_port_name: *const c_char,
    max_message_size: i32,
    max_nb_message: i32,
    port_direction: u32,
    queuing_discipline: u32,
    queuing_port_id: *mut i32,
    return_code: *mut u32,
) {
    // SAFETY: forwarded contract.
    let n = unsafe { name(queuing_port_name) };
    let r = match (direction(port_direction), QueuingDiscipline::from_u32(queuing_discipline)) {
        (Some(d), Some(q)) => create_queuing_port(&n, max_message_size, max_nb_message, d, q),
        _ => Err(ErrorReturnCode::InvalidConfig),
    };
    if let Ok(id) = r {
        put(queuing_port_id, id);
    }
    rc(return_code, &r);
}

/// # Safety
/// `message_addr` points to `length` readable bytes; `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn SEND_QUEUING_MESSAGE(
    queuing_port_id: i32,
    message_addr: *const u8,
    length: i32,
    time_out: i64,
    return_code: *mut u32,
) {
    let r = get_queuing_port_status(queuing_port_id)
        .and_then(|s| message_in(message_addr, length, s.max_message_size))
        .and_then(|m| send_queuing_message(queuing_port_id, m, time_out));
    rc(return_code, &r);
}

/// # Safety
/// `message_addr` holds the port's maximum message size; other pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RECEIVE_QUEUING_MESSAGE(
    queuing_port_id: i32,
    time_out: i64,
    message_addr: *mut u8,
    length: *mut i32,
    return_code: *mut u32,
) {
    let r = get_queuing_port_status(queuing_port_id).and_then(|s| {
        let buf = buffer_out(message_addr, s.max_message_size)?;
        receive_queuing_message(queuing_port_id, time_out, buf)
    });
    // After an overflow the message is delivered (LENGTH set) with RETURN_CODE INVALID_CONFIG.
    put(length, r.as_ref().map_or(0, |m| m.length as i32));
    rc(return_code, &r.and_then(|m| m.return_code()));
}

/// # Safety
/// Pointers are null or valid; the name as for `Name::from_c`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_QUEUING_PORT_ID(queuing_port_name: *const c_char, queuing_port_id: *mut i32, return_code: *mut u32) {
    // SAFETY: forwarded contract.
    let r = get_queuing_port_id(&unsafe { name(queuing_port_name) });
    if let Ok(id) = r {
        put(queuing_port_id, id);
    }
    rc(return_code, &r);
}

/// # Safety
/// Pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GET_QUEUING_PORT_STATUS(queuing_port_id: i32, status: *mut QueuingPortStatusC, return_code: *mut u32) {
    let r = get_queuing_port_status(queuing_port_id);
    if let Ok(s) = &r {
        put(
            status,
            QueuingPortStatusC {
                nb_message: s.nb_message,
                max_nb_message: s.max_nb_message,
                max_message_size: s.max_message_size,
                port_direction: s.port_direction as u32,
                waiting_processes: s.waiting_processes,
            },
        );
    }
    rc(return_code, &r);
}

/// # Safety
/// `return_code` is null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CLEAR_QUEUING_PORT(queuing_port_id: i32, return_code: *mut u32) {
    rc(return_code, &clear_queuing_port(queuing_port_id));
}
