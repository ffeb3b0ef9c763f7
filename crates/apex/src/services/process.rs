//! Process services: CREATE_PROCESS, the queries (which make no system call) and core
//! affinity. The process table and the process threads are the kernel's (`kernel::process`,
//! `kernel::body`); state changes are in `control`.

use crate::kernel::critical::Critical;
use crate::kernel::process::{self, FAULTED, ProcessConfig, current, current_index, id_of, lookup};
use crate::kernel::runtime::{NO_DEADLINE, rt};
use crate::kernel::sys;
use crate::names::Name;
use crate::types::*;
use partita_abi::mode;
use std::sync::atomic::Ordering;

/// CREATE_PROCESS.
pub fn create_process(attr: &ProcessAttribute) -> ApexResult<ProcessId> {
    let rt = rt();
    // Checked first, so that a process calling CREATE_PROCESS gets INVALID_MODE whatever the
    // attributes (the standard lists it last; it is the one a running partition can hit).
    if rt.mode() == mode::NORMAL {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let c = Critical::enter(rt);
    if rt.count.load(Ordering::Relaxed) as usize >= MAX_NUMBER_OF_PROCESSES {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    if rt.processes().iter().any(|s| s.config().name == attr.name) {
        return Err(ErrorReturnCode::NoAction);
    }
    if attr.stack_size > MAX_STACK_SIZE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if !(MIN_PRIORITY_VALUE..=MAX_PRIORITY_VALUE).contains(&attr.base_priority) {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if attr.period != INFINITE_TIME_VALUE && attr.period <= 0 {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let partition_period = rt.schedule().period_ns;
    if attr.period > 0 && partition_period > 0 && attr.period % partition_period != 0 {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    if attr.time_capacity != INFINITE_TIME_VALUE && attr.time_capacity <= 0 {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if attr.period > 0 && attr.time_capacity > attr.period {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let config = ProcessConfig {
        name: attr.name,
        period: attr.period,
        time_capacity: attr.time_capacity,
        entry: attr.entry_point,
        stack_size: attr.stack_size,
        base_priority: attr.base_priority,
        deadline: attr.deadline,
    };
    let index = process::create(&c, rt, config).map_err(|_| ErrorReturnCode::InvalidConfig)?;
    Ok(id_of(index))
}

/// GET_PROCESS_ID: no system call.
pub fn get_process_id(name: &Name) -> ApexResult<ProcessId> {
    let rt = rt();
    rt.processes().iter().position(|s| s.config().name == *name).map(id_of).ok_or(ErrorReturnCode::InvalidConfig)
}

/// GET_MY_ID: no system call. The initialization process (main) has no id: INVALID_MODE.
pub fn get_my_id() -> ApexResult<ProcessId> {
    let _ = rt();
    current_index().map(id_of).ok_or(ErrorReturnCode::InvalidMode)
}

/// GET_MY_INDEX: the process index (creation order, from 1, equal to the process id here).
pub fn get_my_index() -> ApexResult<ProcessId> {
    get_my_id()
}

/// GET_PROCESS_STATUS: no system call.
pub fn get_process_status(id: ProcessId) -> ApexResult<ProcessStatus> {
    let rt = rt();
    let (i, slot) = lookup(rt, id).ok_or(ErrorReturnCode::InvalidParam)?;
    let cfg = slot.config();
    let dormant = slot.is_dormant();
    let state = if dormant {
        ProcessState::Dormant
    } else if slot.state.load(Ordering::Acquire) == FAULTED {
        ProcessState::Faulted
    } else if slot.is_suspended() || slot.waiting.load(Ordering::Acquire) != 0 {
        ProcessState::Waiting
    } else if current_index() == Some(i) || process::runs_elsewhere(rt, i) {
        ProcessState::Running
    } else {
        ProcessState::Ready
    };
    let d = slot.deadline_ns.load(Ordering::Acquire);
    let deadline_time = if dormant || d == NO_DEADLINE { INFINITE_TIME_VALUE } else { d - rt.epoch_ns };
    Ok(ProcessStatus {
        deadline_time,
        current_priority: slot.current_priority.load(Ordering::Acquire),
        process_state: state,
        attributes: ProcessAttribute {
            period: cfg.period,
            time_capacity: cfg.time_capacity,
            entry_point: cfg.entry,
            stack_size: cfg.stack_size,
            base_priority: cfg.base_priority,
            deadline: cfg.deadline,
            name: cfg.name,
        },
    })
}

/// GET_MY_PROCESSOR_CORE_ID: the partition core the caller runs on (no system call).
pub fn get_my_processor_core_id() -> ProcessorCoreId {
    let rt = rt();
    if let Some(i) = rt.current_core_index() {
        return i as ProcessorCoreId;
    }
    match current(rt) {
        Some((_, s)) => s.core.load(Ordering::Relaxed).max(0),
        None => 0,
    }
}

/// INITIALIZE_PROCESS_CORE_AFFINITY (COLD_START / WARM_START only).
pub fn initialize_process_core_affinity(id: ProcessId, core: ProcessorCoreId) -> ApexResult<()> {
    let rt = rt();
    let _c = Critical::enter(rt);
    let (_, slot) = lookup(rt, id).ok_or(ErrorReturnCode::InvalidParam)?;
    let cpus: Vec<u32> = match core {
        CORE_AFFINITY_NO_PREFERENCE => rt.host_cpus.clone(),
        c if c >= 0 && (c as usize) < rt.core_count() => vec![rt.host_cpus[c as usize]],
        _ => return Err(ErrorReturnCode::InvalidConfig),
    };
    if rt.mode() == mode::NORMAL {
        return Err(ErrorReturnCode::InvalidMode);
    }
    // Gated per core, a process runs on one core, or without a preference in the shared
    // cgroup when the partition has one (the same windows on all its cores), else on the first.
    let placed = rt.placement.as_ref().map(|p| {
        let target = usize::try_from(core).unwrap_or(0);
        p.tid_of(slot.thread()).ok_or(libc::ESRCH).and_then(|tid| {
            if core == CORE_AFFINITY_NO_PREFERENCE && p.has_shared() {
                p.move_to_shared(tid, &cpus)
            } else {
                p.move_to(tid, target, rt.host_cpus[target])
            }
        })
    });
    if let Err(e) = placed.unwrap_or_else(|| sys::set_affinity(slot.thread(), &cpus)) {
        eprintln!("partita-apex: warning: cannot pin process {id} to CPUs {cpus:?}: {}", std::io::Error::from_raw_os_error(e));
    }
    slot.core.store(core, Ordering::Release);
    Ok(())
}
