//! Sampling ports: the source overwrites the channel's one message, every destination reads
//! the latest one. Reads and writes are plain memory operations on the shared mapping (no
//! system call); writers of one partition are serialized by a local lock.

use super::{
    Age, PortDirection, PortTable, SamplingPortId, Updated, Validity, check_create, check_init_mode, check_length, configured, map,
};
use crate::kernel::critical::{NoStop, PiMutex};
use crate::kernel::sys;
use crate::names::Name;
use crate::types::*;
use partita_abi::ports::{KIND_SAMPLING, PortEntry, SampledMessage, SamplingArea, sampling_area_bytes};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

pub struct SamplingPort {
    name: Name,
    direction: PortDirection,
    max: u32,
    refresh_ns: SystemTime,
    area: SamplingArea<'static>,
    write_lock: PiMutex,
    /// Generation of the last message read here (Part 2 UPDATED).
    last_read: AtomicU64,
    /// Validity of the last message read (LAST_MSG_VALIDITY).
    last_validity: AtomicU32,
}

static PORTS: PortTable<SamplingPort> = PortTable::new();

/// SAMPLING_PORT_STATUS_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplingPortStatus {
    pub refresh_period: SystemTime,
    pub max_message_size: i32,
    pub port_direction: PortDirection,
    pub last_msg_validity: Validity,
}

/// SAMPLING_PORT_CURRENT_STATUS_TYPE (Part 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplingPortCurrentStatus {
    pub refresh_period: SystemTime,
    /// When the current message was written (since the module epoch); 0 for an empty port.
    pub time_stamp: SystemTime,
    pub max_message_size: i32,
    pub port_direction: PortDirection,
    pub message_age: Age,
    pub updated: Updated,
}

/// Maps the channel memory of configured port `e` (private memory if it is in no channel).
fn area(e: &PortEntry) -> ApexResult<SamplingArea<'static>> {
    let len = sampling_area_bytes(e.max_message_size);
    let base = if e.data_fd < 0 {
        // SAFETY: a fresh anonymous mapping (zeroed: an empty port nobody else writes).
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0)
        };
        (p != libc::MAP_FAILED).then_some(p.cast::<u8>())
    } else {
        map(e.data_fd, len, e.direction == partita_abi::ports::SOURCE)
    };
    let base = base.ok_or(ErrorReturnCode::InvalidConfig)?;
    // SAFETY: `base` maps `len` = sampling_area_bytes bytes, page-aligned, never unmapped,
    // accessed only through the atomics of the layout.
    Ok(unsafe { SamplingArea::from_raw(base, e.max_message_size) })
}

/// CREATE_SAMPLING_PORT.
pub fn create_sampling_port(
    name: &Name,
    max_message_size: i32,
    direction: PortDirection,
    refresh_period: SystemTime,
) -> ApexResult<SamplingPortId> {
    let e = configured(name, KIND_SAMPLING)?;
    PORTS.add(
        |p| p.name == *name,
        || {
            check_create(e, max_message_size, direction)?;
            // The refresh period is what a destination judges validity by; a source's is not used.
            let refresh_differs = e.refresh_ns >= 0 && refresh_period != e.refresh_ns;
            if refresh_period < 0 && refresh_period != INFINITE_TIME_VALUE || (direction == PortDirection::Destination && refresh_differs) {
                return Err(super::mismatch(e, partita_abi::config_mismatch::REFRESH_PERIOD, refresh_period, e.refresh_ns, " ns"));
            }
            check_init_mode()?;
            Ok(SamplingPort {
                name: *name,
                direction,
                max: e.max_message_size,
                refresh_ns: refresh_period,
                area: area(e)?,
                write_lock: PiMutex::new(),
                last_read: AtomicU64::new(0),
                last_validity: AtomicU32::new(Validity::Invalid as u32),
            })
        },
    )
}

/// WRITE_SAMPLING_MESSAGE: no system call.
pub fn write_sampling_message(id: SamplingPortId, message: &[u8]) -> ApexResult<()> {
    let p = PORTS.get(id)?;
    check_length(message.len(), p.max)?;
    if p.direction != PortDirection::Source {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let _no_stop = NoStop::enter();
    p.write_lock.lock();
    p.area.write(message, sys::now_ns());
    p.write_lock.unlock();
    Ok(())
}

fn destination(id: SamplingPortId) -> ApexResult<&'static SamplingPort> {
    let p = PORTS.get(id)?;
    if p.direction != PortDirection::Destination {
        return Err(ErrorReturnCode::InvalidMode);
    }
    Ok(p)
}

fn validity(p: &SamplingPort, m: &SampledMessage) -> Validity {
    let age = sys::now_ns() - m.written_ns;
    if p.refresh_ns < 0 || age <= p.refresh_ns { Validity::Valid } else { Validity::Invalid }
}

/// Reads the latest message into `buf` and marks it read.
fn take(p: &SamplingPort, buf: &mut [u8]) -> Option<SampledMessage> {
    let m = p.area.read(buf)?;
    p.last_read.fetch_max(m.generation, Ordering::AcqRel);
    p.last_validity.store(validity(p, &m) as u32, Ordering::Release);
    Some(m)
}

/// READ_SAMPLING_MESSAGE: the latest message and whether it is younger than the refresh
/// period; NO_ACTION if nothing was written yet. No system call. `buf` should hold the port's
/// maximum message size (a shorter one gets the message's beginning).
pub fn read_sampling_message(id: SamplingPortId, buf: &mut [u8]) -> ApexResult<(usize, Validity)> {
    let p = destination(id)?;
    let m = take(p, buf).ok_or(ErrorReturnCode::NoAction)?;
    Ok((m.length as usize, validity(p, &m)))
}

/// READ_UPDATED_SAMPLING_MESSAGE (Part 2): copies the message only if it was not read here
/// before. EMPTY_PORT and CONSUMED_MESSAGE come with NO_ACTION and no copy.
pub fn read_updated_sampling_message(id: SamplingPortId, buf: &mut [u8]) -> (ApexResult<usize>, Updated) {
    let p = match destination(id) {
        Ok(p) => p,
        Err(e) => return (Err(e), Updated::EmptyPort),
    };
    match p.area.peek() {
        None => (Err(ErrorReturnCode::NoAction), Updated::EmptyPort),
        Some(m) if m.generation <= p.last_read.load(Ordering::Acquire) => (Err(ErrorReturnCode::NoAction), Updated::ConsumedMessage),
        Some(_) => match take(p, buf) {
            Some(m) => (Ok(m.length as usize), Updated::NewMessage),
            None => (Err(ErrorReturnCode::NoAction), Updated::EmptyPort),
        },
    }
}

/// READ_SAMPLING_MESSAGE_CONDITIONAL (Part 2): copies the message only if it was written at
/// or after `ref_time_stamp`; otherwise NOT_AVAILABLE (with the message's time stamp).
/// Returns the length (0 when nothing is copied) and the message's time stamp.
pub fn read_sampling_message_conditional(
    id: SamplingPortId,
    ref_time_stamp: SystemTime,
    buf: &mut [u8],
) -> (ApexResult<usize>, SystemTime) {
    let p = match destination(id) {
        Ok(p) => p,
        Err(e) => return (Err(e), 0),
    };
    let epoch = crate::kernel::runtime::rt().epoch_ns;
    match p.area.peek() {
        None => (Err(ErrorReturnCode::NotAvailable), 0),
        Some(m) if m.written_ns - epoch < ref_time_stamp => (Err(ErrorReturnCode::NotAvailable), m.written_ns - epoch),
        Some(_) => match take(p, buf) {
            Some(m) if m.written_ns - epoch >= ref_time_stamp => (Ok(m.length as usize), m.written_ns - epoch),
            // Replaced meanwhile by an even newer message, which qualifies too.
            Some(m) => (Ok(m.length as usize), m.written_ns - epoch),
            None => (Err(ErrorReturnCode::NotAvailable), 0),
        },
    }
}

/// GET_SAMPLING_PORT_ID.
pub fn get_sampling_port_id(name: &Name) -> ApexResult<SamplingPortId> {
    PORTS.iter().find(|(_, p)| p.name == *name).map(|(id, _)| id).ok_or(ErrorReturnCode::InvalidConfig)
}

/// GET_SAMPLING_PORT_STATUS.
pub fn get_sampling_port_status(id: SamplingPortId) -> ApexResult<SamplingPortStatus> {
    let p = PORTS.get(id)?;
    let last = if p.last_validity.load(Ordering::Acquire) == Validity::Valid as u32 { Validity::Valid } else { Validity::Invalid };
    Ok(SamplingPortStatus {
        refresh_period: p.refresh_ns,
        max_message_size: p.max as i32,
        port_direction: p.direction,
        last_msg_validity: last,
    })
}

/// GET_SAMPLING_PORT_CURRENT_STATUS (Part 2): the current message's age and whether it was
/// read here, without reading it.
pub fn get_sampling_port_current_status(id: SamplingPortId) -> ApexResult<SamplingPortCurrentStatus> {
    let p = PORTS.get(id)?;
    let mut s = SamplingPortCurrentStatus {
        refresh_period: p.refresh_ns,
        time_stamp: 0,
        max_message_size: p.max as i32,
        port_direction: p.direction,
        message_age: Age::Stale,
        updated: Updated::EmptyPort,
    };
    if let Some(m) = p.area.peek() {
        s.time_stamp = m.written_ns - crate::kernel::runtime::rt().epoch_ns;
        s.message_age = if validity(p, &m) == Validity::Valid { Age::Fresh } else { Age::Stale };
        s.updated = if m.generation <= p.last_read.load(Ordering::Acquire) { Updated::ConsumedMessage } else { Updated::NewMessage };
    }
    Ok(s)
}
