//! Queuing ports: a bounded FIFO of messages from one source partition to one destination.
//! A partition's sender finding the queue full waits (or gets NOT_AVAILABLE / TIMED_OUT), as
//! the standard asks; a source that cannot wait (a UDP link of the module) loses the message
//! and notes the overflow, which the next receive reports as INVALID_CONFIG with its message.
//! Processes of this partition waiting on a port are in its wait queue (`waitq`, FIFO or
//! PRIORITY): they sleep on the channel's shared futex word (the other partition changes and
//! wakes it), and whoever finds the channel ready serves them in the queue's order, handing
//! each its message (or taking each one's message) directly.

use super::{PortDirection, PortTable, QueuingPortId, check_create, check_init_mode, check_length, configured, map};
use crate::QueuingDiscipline;
use crate::kernel::critical::Critical;
use crate::kernel::process;
use crate::kernel::runtime::{Runtime, rt};
use crate::kernel::sys::{self, Futex};
use crate::kernel::waitq::{self, Outcome, SATISFIED, WaitOn, WaitQueue};
use crate::names::Name;
use crate::types::*;
use partita_abi::ports::{CONSUMER_PAGE_BYTES, KIND_QUEUING, Popped, PortEntry, QueuingArea, SOURCE, queuing_area_bytes};
use std::sync::atomic::{AtomicU32, Ordering};

pub struct QueuingPort {
    name: Name,
    direction: PortDirection,
    max: u32,
    depth: u32,
    area: QueuingArea<'static>,
    waiters: WaitQueue,
}

static PORTS: PortTable<QueuingPort> = PortTable::new();

/// Wake-up result of a waiting receiver handed a message that follows an overflow.
const SATISFIED_AFTER_OVERFLOW: u32 = SATISFIED + 1;

/// What RECEIVE_QUEUING_MESSAGE delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceivedMessage {
    pub length: usize,
    /// Messages were lost to a full queue since the previous receive: the standard's
    /// RETURN_CODE is then INVALID_CONFIG, with this message delivered all the same.
    pub overflowed: bool,
}

impl ReceivedMessage {
    /// The return code the standard gives this receive.
    pub fn return_code(&self) -> ApexResult<()> {
        if self.overflowed { Err(ErrorReturnCode::InvalidConfig) } else { Ok(()) }
    }
}

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
                return Err(super::mismatch(
                    e,
                    partita_abi::config_mismatch::MAX_NB_MESSAGES,
                    max_nb_message.into(),
                    e.max_nb_messages.into(),
                    "",
                ));
            }
            check_init_mode()?;
            Ok(QueuingPort {
                name: *name,
                direction,
                max: e.max_message_size,
                depth: e.max_nb_messages,
                area: area(e)?,
                waiters: WaitQueue::new(discipline),
            })
        },
    )
}

impl QueuingPort {
    /// Appends a message and wakes the destination if it waits (runtime lock held: one
    /// sender of this partition at a time).
    fn push(&self, _c: &Critical<'_>, msg: &[u8]) -> bool {
        let sent = self.area.push(msg);
        if sent && self.area.consumer.receiver_waiting.load(Ordering::SeqCst) != 0 {
            sys::futex_wake(&self.area.header.head, i32::MAX, Futex::Shared);
        }
        sent
    }

    /// Takes the oldest message and wakes the source if it waits for room.
    fn pop(&self, _c: &Critical<'_>, buf: &mut [u8]) -> Option<Popped> {
        let got = self.area.pop(buf);
        if got.is_some() && self.area.header.sender_waiting.load(Ordering::SeqCst) != 0 {
            sys::futex_wake(&self.area.consumer.tail, i32::MAX, Futex::Shared);
        }
        got
    }

    /// The word this partition's waiters sleep on, and the flag that tells the other side.
    fn wait_words(&self) -> (&AtomicU32, &AtomicU32) {
        match self.direction {
            PortDirection::Destination => (&self.area.header.head, &self.area.consumer.receiver_waiting),
            PortDirection::Source => (&self.area.consumer.tail, &self.area.header.sender_waiting),
        }
    }

    /// Serves waiting processes in the queue's order while the channel allows: a receiver gets
    /// the oldest message into its buffer, a sender's message goes into the queue.
    fn serve(&self, c: &Critical<'_>, rt: &Runtime) {
        while let Some(i) = self.waiters.first(c, rt) {
            let rec = &rt.procs[i].wait;
            // SAFETY: a waiter's record points to its buffer (receive: writable, send: readable)
            // of `len` bytes, valid while it is in the queue.
            let area = unsafe { std::slice::from_raw_parts_mut(rec.addr(), rec.len().max(0) as usize) };
            let result = match self.direction {
                PortDirection::Destination => self.pop(c, area).map(|m| {
                    rec.set_len(i64::from(m.length));
                    if m.overflowed { SATISFIED_AFTER_OVERFLOW } else { SATISFIED }
                }),
                PortDirection::Source => self.push(c, area).then_some(SATISFIED),
            };
            let Some(result) = result else { break };
            self.waiters.wake(c, rt, i, result);
        }
        if self.waiters.is_empty() {
            self.wait_words().1.store(0, Ordering::SeqCst);
        }
    }

    /// Waits in the port's queue until served (Ok: the message received, or the length of the
    /// one sent), per the standard's rules for a resource that is not available.
    fn wait(&'static self, c: Critical<'_>, rt: &Runtime, time_out: SystemTime, data: (*mut u8, usize)) -> ApexResult<ReceivedMessage> {
        if time_out == 0 {
            return Err(ErrorReturnCode::NotAvailable);
        }
        let (index, slot) = process::current(rt).ok_or(ErrorReturnCode::InvalidMode)?;
        if crate::services::objects::mutex::may_not_wait(index, slot) {
            return Err(ErrorReturnCode::InvalidMode);
        }
        let deadline = match time_out {
            INFINITE_TIME_VALUE => None,
            t => Some(sys::now_ns().checked_add(t).ok_or(ErrorReturnCode::InvalidParam)?),
        };
        slot.wait.set_data(data.0, data.1 as i64);
        self.waiters.enqueue(&c, rt, index);
        let (word, flag) = self.wait_words();
        let served = |result: u32| ReceivedMessage { length: slot.wait.len() as usize, overflowed: result == SATISFIED_AFTER_OVERFLOW };
        let mut c = c;
        loop {
            flag.store(1, Ordering::SeqCst);
            let seen = word.load(Ordering::SeqCst);
            self.serve(&c, rt);
            if !slot.wait.is_queued() {
                return Ok(served(slot.wait.result()));
            }
            match waitq::block(c, rt, index, deadline, WaitOn::Word { word, seen, kind: Futex::Shared }) {
                Outcome::Woken(result) => return Ok(served(result)),
                Outcome::TimedOut => {
                    let c = Critical::enter(rt);
                    if self.waiters.is_empty() {
                        flag.store(0, Ordering::SeqCst);
                    }
                    drop(c);
                    return Err(ErrorReturnCode::TimedOut);
                }
                Outcome::Changed => c = Critical::enter(rt),
            }
        }
    }
}

/// INVALID_PARAM for a TIME_OUT below INFINITE_TIME_VALUE.
fn check_time_out(time_out: SystemTime) -> ApexResult<()> {
    if time_out < INFINITE_TIME_VALUE { Err(ErrorReturnCode::InvalidParam) } else { Ok(()) }
}

/// SEND_QUEUING_MESSAGE.
pub fn send_queuing_message(id: QueuingPortId, message: &[u8], time_out: SystemTime) -> ApexResult<()> {
    let p = PORTS.get(id)?;
    check_length(message.len(), p.max)?;
    check_time_out(time_out)?;
    if p.direction != PortDirection::Source {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let rt = rt();
    let c = Critical::enter(rt);
    if p.waiters.is_empty() && p.push(&c, message) {
        return Ok(());
    }
    p.wait(c, rt, time_out, (message.as_ptr().cast_mut(), message.len())).map(|_| ())
}

/// RECEIVE_QUEUING_MESSAGE: the oldest message into `buf` (which should hold the port's
/// maximum message size), with its length and whether an overflow precedes it.
pub fn receive_queuing_message(id: QueuingPortId, time_out: SystemTime, buf: &mut [u8]) -> ApexResult<ReceivedMessage> {
    let p = PORTS.get(id)?;
    check_time_out(time_out)?;
    if p.direction != PortDirection::Destination {
        return Err(ErrorReturnCode::InvalidMode);
    }
    let rt = rt();
    let c = Critical::enter(rt);
    if p.waiters.is_empty()
        && let Some(m) = p.pop(&c, buf)
    {
        return Ok(ReceivedMessage { length: m.length as usize, overflowed: m.overflowed });
    }
    p.wait(c, rt, time_out, (buf.as_mut_ptr(), buf.len()))
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
    let _c = Critical::enter(rt());
    p.area.clear();
    if p.area.header.sender_waiting.load(Ordering::SeqCst) != 0 {
        sys::futex_wake(&p.area.consumer.tail, i32::MAX, Futex::Shared);
    }
    Ok(())
}
