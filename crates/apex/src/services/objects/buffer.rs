//! Buffers: CREATE_BUFFER, SEND_BUFFER, RECEIVE_BUFFER, GET_BUFFER_ID, GET_BUFFER_STATUS.
//! A bounded FIFO of messages. Senders wait while it is full, receivers while it is empty (never
//! both), in one queue; a message goes straight to a waiting receiver, and a receiver that makes
//! room moves the first waiting sender's message in.

use super::{Guarded, Table, check_time_out, copy, creating, reserve_storage, wait_for};
use crate::kernel::critical::Critical;
use crate::kernel::runtime::rt;
use crate::kernel::waitq::{Discipline, SATISFIED, WaitQueue};
use crate::names::Name;
use crate::types::*;

/// SYSTEM_LIMIT_MESSAGE_SIZE and SYSTEM_LIMIT_NUMBER_OF_MESSAGES of ARINC653.h.
pub const MAX_MESSAGE_SIZE: i32 = 8192;
pub const MAX_NB_MESSAGE: i32 = 512;

struct Ring {
    data: Box<[u8]>,
    lens: Box<[usize]>,
    head: usize,
    count: usize,
}

pub struct Buffer {
    name: Name,
    max_size: usize,
    queue: WaitQueue,
    ring: Guarded<Ring>,
}

static BUFFERS: Table<Buffer> = Table::new();

impl Ring {
    fn slot(&mut self, i: usize, max: usize) -> &mut [u8] {
        let k = i % self.lens.len();
        &mut self.data[k * max..(k + 1) * max]
    }

    /// # Safety
    /// `src` readable for `len` (<= max) bytes.
    unsafe fn push(&mut self, max: usize, src: *const u8, len: usize) {
        let tail = self.head + self.count;
        let k = tail % self.lens.len();
        // SAFETY: forwarded contract; the ring slot has `max` >= `len` bytes.
        unsafe { copy(src, self.slot(tail, max).as_mut_ptr(), len) };
        self.lens[k] = len;
        self.count += 1;
    }

    /// # Safety
    /// `dst` writable for `max` bytes.
    unsafe fn pop(&mut self, max: usize, dst: *mut u8) -> usize {
        let k = self.head % self.lens.len();
        let len = self.lens[k];
        let head = self.head;
        // SAFETY: forwarded contract.
        unsafe { copy(self.slot(head, max).as_ptr(), dst, len) };
        self.head = (self.head + 1) % self.lens.len();
        self.count -= 1;
        len
    }
}

/// CREATE_BUFFER.
pub fn create_buffer(name: Name, max_message_size: i32, max_nb_message: i32, discipline: Discipline) -> ApexResult<i32> {
    let c = creating(&BUFFERS, &name, |b| &b.name)?;
    if !(1..=MAX_MESSAGE_SIZE).contains(&max_message_size) || !(1..=MAX_NB_MESSAGE).contains(&max_nb_message) {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let (size, n) = (max_message_size as usize, max_nb_message as usize);
    reserve_storage(size * n)?;
    let ring = Ring { data: vec![0; size * n].into_boxed_slice(), lens: vec![0; n].into_boxed_slice(), head: 0, count: 0 };
    BUFFERS.add(&c, Buffer { name, max_size: size, queue: WaitQueue::new(discipline), ring: Guarded::new(ring) })
}

fn lookup(id: i32) -> ApexResult<&'static Buffer> {
    BUFFERS.get(id).ok_or(ErrorReturnCode::InvalidParam)
}

/// SEND_BUFFER of `len` bytes at `msg`.
///
/// # Safety
/// `msg` is readable for `len` bytes (when `len` is in range).
pub unsafe fn send_raw(id: i32, msg: *const u8, len: i32, time_out: SystemTime) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let b = lookup(id)?;
    if len <= 0 || len as usize > b.max_size || msg.is_null() {
        return Err(ErrorReturnCode::InvalidParam);
    }
    check_time_out(time_out)?;
    let len = len as usize;
    if let Some(r) = b.ring.with(&c, |ring| if ring.count == 0 { b.queue.first(&c, rt) } else { None }) {
        // A receiver waits (so the buffer is empty): the message goes to it.
        let rec = &rt.procs[r].wait;
        // SAFETY: the waiting receiver's area has room for MAX_MESSAGE_SIZE bytes and stays
        // valid while it is queued (a STOP takes it out under this lock first).
        unsafe { copy(msg, rec.addr(), len) };
        rec.set_len(len as i64);
        b.queue.wake(&c, rt, r, SATISFIED);
        return Ok(());
    }
    // SAFETY: `msg` is readable for `len` <= max bytes (caller's contract).
    let pushed = b.ring.with(&c, |ring| (ring.count < ring.lens.len()).then(|| unsafe { ring.push(b.max_size, msg, len) }));
    if pushed.is_some() {
        return Ok(());
    }
    wait_for(c, rt, &b.queue, time_out, Some((msg as *mut u8, len as i64))).map(|_| ())
}

/// RECEIVE_BUFFER into `dst` (room for the buffer's MAX_MESSAGE_SIZE); returns the length.
///
/// # Safety
/// `dst` is writable for the buffer's maximum message size.
pub unsafe fn receive_raw(id: i32, time_out: SystemTime, dst: *mut u8) -> ApexResult<usize> {
    let rt = rt();
    let c = Critical::enter(rt);
    let b = lookup(id)?;
    check_time_out(time_out)?;
    if dst.is_null() {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let got = b.ring.with(&c, |ring| {
        if ring.count == 0 {
            return None;
        }
        // SAFETY: `dst` has room for max_size bytes (caller's contract).
        let len = unsafe { ring.pop(b.max_size, dst) };
        // Room now: the first waiting sender's message comes in.
        if let Some(s) = b.queue.first(&c, rt) {
            let rec = &rt.procs[s].wait;
            // SAFETY: a waiting sender's message stays valid while it is queued.
            unsafe { ring.push(b.max_size, rec.addr(), rec.len() as usize) };
            b.queue.wake(&c, rt, s, SATISFIED);
        }
        Some(len)
    });
    if let Some(len) = got {
        return Ok(len);
    }
    let me = wait_for(c, rt, &b.queue, time_out, Some((dst, 0)))?;
    Ok(rt.procs[me].wait.len() as usize)
}

/// SEND_BUFFER.
pub fn send_buffer(id: i32, message: &[u8], time_out: SystemTime) -> ApexResult<()> {
    let len = i32::try_from(message.len()).map_err(|_| ErrorReturnCode::InvalidParam)?;
    // SAFETY: the slice is readable for its length.
    unsafe { send_raw(id, message.as_ptr(), len, time_out) }
}

/// RECEIVE_BUFFER: `into` must have room for the buffer's MAX_MESSAGE_SIZE (else INVALID_PARAM).
pub fn receive_buffer(id: i32, time_out: SystemTime, into: &mut [u8]) -> ApexResult<usize> {
    let b = lookup(id)?;
    if into.len() < b.max_size {
        return Err(ErrorReturnCode::InvalidParam);
    }
    // SAFETY: `into` is writable for at least max_size bytes.
    unsafe { receive_raw(id, time_out, into.as_mut_ptr()) }
}

/// GET_BUFFER_ID.
pub fn get_buffer_id(name: &Name) -> ApexResult<i32> {
    let _ = rt();
    BUFFERS.find(name, |b| &b.name)
}

/// GET_BUFFER_STATUS.
pub fn get_buffer_status(id: i32) -> ApexResult<BufferStatus> {
    let rt = rt();
    let c = Critical::enter(rt);
    let b = lookup(id)?;
    let (nb, max_nb) = b.ring.with(&c, |r| (r.count, r.lens.len()));
    Ok(BufferStatus {
        nb_message: nb as i32,
        max_nb_message: max_nb as i32,
        max_message_size: b.max_size as i32,
        waiting_processes: b.queue.len() as i32,
    })
}
