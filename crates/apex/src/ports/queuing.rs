//! Queuing ports: a bounded FIFO of messages from one source partition to one destination.
//! A message is never lost: a sender finding the queue full waits (or gets NOT_AVAILABLE /
//! TIMED_OUT), as the standard asks. Waiting processes are served in the port's discipline.

use super::wait::WaitQueue;
use super::{PortDirection, PortTable, QueuingDiscipline, QueuingPortId, check_create, check_init_mode, check_length, configured, map};
use crate::critical::{NoStop, PiMutex};
use crate::names::Name;
use crate::process;
use crate::runtime::rt;
use crate::sys::{self, Futex};
use crate::types::*;
use partita_abi::ports::{CONSUMER_PAGE_BYTES, KIND_QUEUING, PortEntry, QueuingArea, SOURCE, queuing_area_bytes};
use std::sync::atomic::Ordering;

pub struct QueuingPort {
    name: Name,
    direction: PortDirection,
    max: u32,
    depth: u32,
    area: QueuingArea<'static>,
    /// Serializes this partition's senders (or receivers) on the ring.
    lock: PiMutex,
    waiters: WaitQueue,
}

static PORTS: PortTable<QueuingPort> = PortTable::new();

/// QUEUING_PORT_STATUS_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuingPortStatus {
    pub nb_message: i32,
    pub max_nb_message: i32,
    pub max_message_size: i32,
    pub port_direction: PortDirection,
    pub waiting_processes: i32,
}

fn anonymous(len: usize) -> Option<*mut u8> {
    // SAFETY: a fresh anonymous shared mapping, zeroed.
    let p =
        unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0) };
    (p != libc::MAP_FAILED).then_some(p.cast())
}

/// Maps the channel memory of configured port `e`: the data area writable for the source,
/// the consumer page writable for the destination (private memory if in no channel).
fn area(e: &PortEntry) -> ApexResult<QueuingArea<'static>> {
    let len = queuing_area_bytes(e.max_message_size, e.max_nb_messages);
    let source = e.direction == SOURCE;
    let (data, consumer) = if e.data_fd < 0 || e.consumer_fd < 0 {
        (anonymous(len), anonymous(CONSUMER_PAGE_BYTES))
    } else {
        (map(e.data_fd, len, source), map(e.consumer_fd, CONSUMER_PAGE_BYTES, !source))
    };
    let (Some(data), Some(consumer)) = (data, consumer) else { return Err(ErrorReturnCode::InvalidConfig) };
    // SAFETY: both mappings have the sizes the layout needs, are page-aligned, never unmapped
    // and accessed only through the layout's atomics.
    Ok(unsafe { QueuingArea::from_raw(data, consumer, e.max_message_size, e.max_nb_messages) })
}

/// CREATE_QUEUING_PORT.
pub fn create_queuing_port(
    name: &Name,
    max_message_size: i32,
    max_nb_message: i32,
    direction: PortDirection,
    discipline: QueuingDiscipline,
) -> ApexResult<QueuingPortId> {
    let e = configured(name, KIND_QUEUING)?;
    PORTS.add(
        |p| p.name == *name,
        || {
            check_create(e, max_message_size, direction)?;
            if max_nb_message <= 0 || max_nb_message as u32 != e.max_nb_messages {
                return Err(ErrorReturnCode::InvalidConfig);
            }
            check_init_mode()?;
            Ok(QueuingPort {
                name: *name,
                direction,
                max: e.max_message_size,
                depth: e.max_nb_messages,
                area: area(e)?,
                lock: PiMutex::new(),
                waiters: WaitQueue::new(discipline),
            })
        },
    )
}

/// The absolute deadline of a TIME_OUT (None: infinite); the caller handled 0.
fn deadline(time_out: SystemTime) -> Option<i64> {
    (time_out >= 0).then(|| sys::now_ns().saturating_add(time_out))
}

/// Blocking is refused to a caller that is not a process or holds the preemption lock.
fn check_may_wait() -> ApexResult<()> {
    match process::current(rt()) {
        Some((_, s)) if s.lock_level.load(Ordering::Acquire) == 0 => Ok(()),
        _ => Err(ErrorReturnCode::InvalidMode),
    }
}

impl QueuingPort {
    fn locked<T>(&self, f: impl FnOnce() -> T) -> T {
        let _n = NoStop::enter();
        self.lock.lock();
        let r = f();
        self.lock.unlock();
        r
    }
}

/// SEND_QUEUING_MESSAGE.
pub fn send_queuing_message(id: QueuingPortId, message: &[u8], time_out: SystemTime) -> ApexResult<()> {
    let p = PORTS.get(id)?;
    check_length(message.len(), p.max)?;
    if p.direction != PortDirection::Source {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let send = || {
        let sent = p.locked(|| p.area.push(message));
        if sent && p.area.consumer.receiver_waiting.load(Ordering::SeqCst) != 0 {
            sys::futex_wake(&p.area.header.head, i32::MAX, Futex::Shared);
        }
        sent.then_some(())
    };
    if p.waiters.is_empty() && send().is_some() {
        return Ok(());
    }
    if time_out == 0 {
        return Err(ErrorReturnCode::NotAvailable);
    }
    check_may_wait()?;
    p.waiters.wait(&p.area.consumer.tail, &p.area.header.sender_waiting, deadline(time_out), send)
}

/// RECEIVE_QUEUING_MESSAGE: the oldest message into `buf` (which should hold the port's
/// maximum message size), returning its length.
pub fn receive_queuing_message(id: QueuingPortId, time_out: SystemTime, buf: &mut [u8]) -> ApexResult<usize> {
    let p = PORTS.get(id)?;
    if p.direction != PortDirection::Destination {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let mut receive = || {
        let got = p.locked(|| p.area.pop(buf));
        if got.is_some() && p.area.header.sender_waiting.load(Ordering::SeqCst) != 0 {
            sys::futex_wake(&p.area.consumer.tail, i32::MAX, Futex::Shared);
        }
        got.map(|n| n as usize)
    };
    if p.waiters.is_empty()
        && let Some(n) = receive()
    {
        return Ok(n);
    }
    if time_out == 0 {
        return Err(ErrorReturnCode::NotAvailable);
    }
    check_may_wait()?;
    p.waiters.wait(&p.area.header.head, &p.area.consumer.receiver_waiting, deadline(time_out), receive)
}

/// GET_QUEUING_PORT_ID.
pub fn get_queuing_port_id(name: &Name) -> ApexResult<QueuingPortId> {
    PORTS.iter().find(|(_, p)| p.name == *name).map(|(id, _)| id).ok_or(ErrorReturnCode::InvalidConfig)
}

/// GET_QUEUING_PORT_STATUS.
pub fn get_queuing_port_status(id: QueuingPortId) -> ApexResult<QueuingPortStatus> {
    let p = PORTS.get(id)?;
    Ok(QueuingPortStatus {
        nb_message: p.area.len() as i32,
        max_nb_message: p.depth as i32,
        max_message_size: p.max as i32,
        port_direction: p.direction,
        waiting_processes: p.waiters.len() as i32,
    })
}

/// CLEAR_QUEUING_PORT: drops the messages of a destination port.
pub fn clear_queuing_port(id: QueuingPortId) -> ApexResult<()> {
    let p = PORTS.get(id)?;
    if p.direction != PortDirection::Destination {
        return Err(ErrorReturnCode::InvalidMode);
    }
    p.locked(|| p.area.clear());
    if p.area.header.sender_waiting.load(Ordering::SeqCst) != 0 {
        sys::futex_wake(&p.area.consumer.tail, i32::MAX, Futex::Shared);
    }
    Ok(())
}
