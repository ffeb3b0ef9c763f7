//! Blackboards: CREATE_BLACKBOARD, DISPLAY_BLACKBOARD, READ_BLACKBOARD, CLEAR_BLACKBOARD,
//! GET_BLACKBOARD_ID, GET_BLACKBOARD_STATUS. One message that stays until replaced or cleared;
//! readers wait while it is empty, and a display gives the message to all of them.

use super::buffer::MAX_MESSAGE_SIZE;
use super::{Guarded, Table, check_time_out, copy, creating, reserve_storage, wait_for};
use crate::kernel::critical::Critical;
use crate::kernel::runtime::rt;
use crate::kernel::waitq::{Discipline, SATISFIED, WaitQueue};
use crate::names::Name;
use crate::types::*;

struct Board {
    data: Box<[u8]>,
    /// Length of the displayed message; None when empty.
    len: Option<usize>,
}

pub struct Blackboard {
    name: Name,
    max_size: usize,
    /// Readers are all woken together, so the discipline does not matter.
    queue: WaitQueue,
    board: Guarded<Board>,
}

static BLACKBOARDS: Table<Blackboard> = Table::new();

/// CREATE_BLACKBOARD.
pub fn create_blackboard(name: Name, max_message_size: i32) -> ApexResult<i32> {
    let c = creating(&BLACKBOARDS, &name, |b| &b.name)?;
    if !(1..=MAX_MESSAGE_SIZE).contains(&max_message_size) {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let size = max_message_size as usize;
    reserve_storage(size)?;
    let board = Board { data: vec![0; size].into_boxed_slice(), len: None };
    BLACKBOARDS.add(&c, Blackboard { name, max_size: size, queue: WaitQueue::new(Discipline::Fifo), board: Guarded::new(board) })
}

fn lookup(id: i32) -> ApexResult<&'static Blackboard> {
    BLACKBOARDS.get(id).ok_or(ErrorReturnCode::InvalidParam)
}

/// DISPLAY_BLACKBOARD of `len` bytes at `msg`.
///
/// # Safety
/// `msg` is readable for `len` bytes (when `len` is in range).
pub unsafe fn display_raw(id: i32, msg: *const u8, len: i32) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let b = lookup(id)?;
    if len <= 0 || len as usize > b.max_size || msg.is_null() {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let len = len as usize;
    b.board.with(&c, |board| {
        // SAFETY: `msg` readable for `len` <= max_size bytes (caller's contract).
        unsafe { copy(msg, board.data.as_mut_ptr(), len) };
        board.len = Some(len);
    });
    // Every reader gets the message, and they are woken in queue order.
    while let Some(r) = b.queue.first(&c, rt) {
        let rec = &rt.procs[r].wait;
        // SAFETY: a waiting reader's area has room for max_size bytes and stays valid while it
        // is queued.
        unsafe { copy(msg, rec.addr(), len) };
        rec.set_len(len as i64);
        b.queue.wake(&c, rt, r, SATISFIED);
    }
    Ok(())
}

/// READ_BLACKBOARD into `dst` (room for MAX_MESSAGE_SIZE); returns the length.
///
/// # Safety
/// `dst` is writable for the blackboard's maximum message size.
pub unsafe fn read_raw(id: i32, time_out: SystemTime, dst: *mut u8) -> ApexResult<usize> {
    let rt = rt();
    let c = Critical::enter(rt);
    let b = lookup(id)?;
    check_time_out(time_out)?;
    if dst.is_null() {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let got = b.board.with(&c, |board| {
        let len = board.len?;
        // SAFETY: `dst` has room for max_size >= len bytes (caller's contract).
        unsafe { copy(board.data.as_ptr(), dst, len) };
        Some(len)
    });
    if let Some(len) = got {
        return Ok(len);
    }
    let me = wait_for(c, rt, &b.queue, time_out, Some((dst, 0)))?;
    Ok(rt.procs[me].wait.len() as usize)
}

/// DISPLAY_BLACKBOARD.
pub fn display_blackboard(id: i32, message: &[u8]) -> ApexResult<()> {
    let len = i32::try_from(message.len()).map_err(|_| ErrorReturnCode::InvalidParam)?;
    // SAFETY: the slice is readable for its length.
    unsafe { display_raw(id, message.as_ptr(), len) }
}

/// READ_BLACKBOARD: `into` must have room for MAX_MESSAGE_SIZE (else INVALID_PARAM).
pub fn read_blackboard(id: i32, time_out: SystemTime, into: &mut [u8]) -> ApexResult<usize> {
    let b = lookup(id)?;
    if into.len() < b.max_size {
        return Err(ErrorReturnCode::InvalidParam);
    }
    // SAFETY: `into` is writable for at least max_size bytes.
    unsafe { read_raw(id, time_out, into.as_mut_ptr()) }
}

/// CLEAR_BLACKBOARD.
pub fn clear_blackboard(id: i32) -> ApexResult<()> {
    let rt = rt();
    let c = Critical::enter(rt);
    let b = lookup(id)?;
    b.board.with(&c, |board| board.len = None);
    Ok(())
}

/// GET_BLACKBOARD_ID.
pub fn get_blackboard_id(name: &Name) -> ApexResult<i32> {
    let _ = rt();
    BLACKBOARDS.find(name, |b| &b.name)
}

/// GET_BLACKBOARD_STATUS.
pub fn get_blackboard_status(id: i32) -> ApexResult<BlackboardStatus> {
    let rt = rt();
    let c = Critical::enter(rt);
    let b = lookup(id)?;
    let occupied = b.board.with(&c, |board| board.len.is_some());
    Ok(BlackboardStatus { occupied, max_message_size: b.max_size as i32, waiting_processes: b.queue.len() as i32 })
}
