//! The HM services: REPORT_APPLICATION_MESSAGE, RAISE_APPLICATION_ERROR, CREATE_ERROR_HANDLER,
//! GET_ERROR_STATUS, CONFIGURE_ERROR_HANDLER. Where an error goes (the error handler or the
//! module) is the kernel's (`kernel::hm`).

pub use crate::kernel::hm::ErrorStatus;
use crate::kernel::runtime::rt;
use crate::kernel::{hm, process, threads};
use crate::names::Name;
use crate::services;
use crate::types::*;
use partita_abi::mode;

/// REPORT_APPLICATION_MESSAGE: one line on stdout (the module shows it live).
pub fn report_application_message(message: &[u8]) -> ApexResult<()> {
    if message.len() > MAX_ERROR_MESSAGE_SIZE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let _ = rt();
    hm::write_line(message);
    Ok(())
}

/// RAISE_APPLICATION_ERROR: only APPLICATION_ERROR may be raised.
pub fn raise_application_error(error_code: u32, message: &[u8]) -> ApexResult<()> {
    if error_code != error_code::APPLICATION_ERROR || message.len() > MAX_ERROR_MESSAGE_SIZE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let _ = rt();
    // A request that comes meanwhile (a STOP, the error handler's PROCESSES_PAUSE, which this
    // very call may release) takes effect when the call ends, not at the C library's re-send
    // timer (the report goes through libc calls, where the signal handler only defers).
    let _no_stop = crate::kernel::critical::NoStop::enter();
    hm::error_detected(error_code, process::current_index(), message, 0, false);
    Ok(())
}

/// The error handler's name in the process table.
const HANDLER_NAME: &[u8] = b"ERROR_HANDLER";

/// CREATE_ERROR_HANDLER: a process above every other, released by the runtime when an error
/// arrives for it (its entry point runs until it returns or calls STOP_SELF).
pub fn create_error_handler(entry: EntryPoint, stack_size: StackSize) -> ApexResult<()> {
    let rt = rt();
    if rt.mode() == mode::NORMAL {
        return Err(ErrorReturnCode::InvalidMode);
    }
    if hm::handler_index().is_some() {
        return Err(ErrorReturnCode::NoAction);
    }
    if stack_size > MAX_STACK_SIZE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let attr = ProcessAttribute {
        period: INFINITE_TIME_VALUE,
        time_capacity: INFINITE_TIME_VALUE,
        entry_point: entry,
        stack_size,
        base_priority: MAX_PRIORITY_VALUE,
        deadline: Deadline::Soft,
        name: Name::from_bytes(HANDLER_NAME),
    };
    let id = services::process::create_process(&attr)
        .map_err(|e| if e == ErrorReturnCode::NoAction { ErrorReturnCode::InvalidConfig } else { e })?;
    let index = id as usize - 1;
    threads::set_priority(rt, rt.procs[index].thread(), rt.lock_rt_priority());
    hm::set_handler(index);
    Ok(())
}

/// GET_ERROR_STATUS: the oldest error waiting for the handler (the handler only).
pub fn get_error_status() -> ApexResult<ErrorStatus> {
    let _ = rt();
    if hm::handler_index().is_none() || process::current_index() != hm::handler_index() {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    hm::dequeue().ok_or(ErrorReturnCode::NoAction)
}

/// CONFIGURE_ERROR_HANDLER (Part 1, multi-core): the handler runs on `core`. With
/// PROCESSES_PAUSE (the default) every other process of the partition, on any core, is paused
/// while the handler runs (`kernel::hm::begin_pause`); with PROCESSES_SCHEDULED the processes
/// on other cores go on (on the handler's core it preempts them all either way).
pub fn configure_error_handler(concurrency: u32, core: ProcessorCoreId) -> ApexResult<()> {
    let rt = rt();
    let Some(h) = hm::handler_index() else { return Err(ErrorReturnCode::InvalidConfig) };
    if rt.mode() == mode::NORMAL {
        return Err(ErrorReturnCode::InvalidMode);
    }
    if concurrency > 1 {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if core < 0 || core as usize >= rt.core_count() {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    services::process::initialize_process_core_affinity(process::id_of(h), core)?;
    hm::set_concurrency(concurrency);
    Ok(())
}
