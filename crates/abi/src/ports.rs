//! Shared memory of sampling and queuing ports (channels between partitions).
//!
//! The module gives each partition a *port directory* on fd [`PORTS_FD`] (a sealed, read-only
//! memfd holding one [`PortDirectory`]) and, for each of its ports, the memfds of that port's
//! channel on fds from [`PORT_FD_BASE`] up, as the directory entry says. A partition holds
//! descriptors only for its own ends:
//! - a sampling channel has one data memfd: read-write for the source, read-only for every
//!   destination (a [`SamplingHeader`] then two message slots);
//! - a queuing channel has a data memfd (read-write for the source, read-only for the
//!   destination: a [`QueuingHeader`] then `max_nb_messages` slots) and a consumer page
//!   (read-write for the destination, read-only for the source: a [`ConsumerPage`]).
//!
//! Sampling messages use two slots and a published generation, so a reader never waits for a
//! writer (not even one frozen at its window end in the middle of a write) and neither side
//! makes a system call. Queuing ports are a single-producer, single-consumer ring; a blocked
//! receiver waits on `QueuingHeader::head`, a blocked sender on `ConsumerPage::tail` (futexes
//! on the shared mappings, so the other partition's wake reaches them).

use core::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering, fence};

use crate::NAME_LEN;
use crate::untrusted::{self, Garbage};

/// File descriptor of the port directory in a partition program.
pub const PORTS_FD: i32 = 5;
/// First file descriptor of the channel memfds in a partition program.
pub const PORT_FD_BASE: i32 = 6;
/// `b"PTPORTS1"` read as a little-endian u64.
pub const PORTS_MAGIC: u64 = u64::from_le_bytes(*b"PTPORTS1");
/// Ports per partition (sampling and queuing together).
pub const MAX_PORTS: usize = 64;

pub const KIND_SAMPLING: u32 = 1;
pub const KIND_QUEUING: u32 = 2;
/// PORT_DIRECTION_TYPE values.
pub const SOURCE: u32 = 0;
pub const DESTINATION: u32 = 1;

/// One configured port of the partition.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortEntry {
    pub name: [u8; NAME_LEN],
    pub kind: u32,
    pub direction: u32,
    pub max_message_size: u32,
    /// Queuing ports: the queue depth (0 for sampling ports).
    pub max_nb_messages: u32,
    /// Sampling ports: the configured refresh period in ns (-1: not given).
    pub refresh_ns: i64,
    /// The channel data memfd in the partition program (-1: the port is in no channel).
    pub data_fd: i32,
    /// Queuing ports: the consumer page memfd (-1 otherwise).
    pub consumer_fd: i32,
    pub channel_id: u32,
    /// The line of the port's element in the module's configuration (0: not known), named by
    /// the runtime's diagnostics when a CREATE does not match the configuration.
    pub config_line: u32,
}

impl PortEntry {
    pub const EMPTY: PortEntry = PortEntry {
        name: [0; NAME_LEN],
        kind: 0,
        direction: 0,
        max_message_size: 0,
        max_nb_messages: 0,
        refresh_ns: -1,
        data_fd: -1,
        consumer_fd: -1,
        channel_id: 0,
        config_line: 0,
    };
}

#[repr(C)]
pub struct PortDirectory {
    pub magic: u64,
    pub version: u32,
    pub count: u32,
    pub entries: [PortEntry; MAX_PORTS],
}

/// A sampling read retries at most this often (a correct writer needs two tries at most
/// unless it writes faster than the reader copies).
const MAX_READ_ATTEMPTS: u32 = 10_000;

/// Words of message data needed for `max` bytes.
pub const fn words(max: u32) -> usize {
    (max as usize).div_ceil(8)
}

/// Header of a sampling channel's data area, followed by two [`SamplingSlot`]s.
#[repr(C)]
pub struct SamplingHeader {
    /// Number of messages written so far; the latest is in slot `published % 2`. 0: empty.
    pub published: AtomicU64,
    pub max_message_size: u32,
    pub _pad: u32,
}

/// The `seq` of a slot holding the complete message `generation` (2 * generation, wrapping);
/// `seq` is this minus one (odd) while the source writes it.
pub const fn complete_seq(generation: u64) -> u32 {
    (generation as u32).wrapping_mul(2)
}

/// One message of a sampling channel: `seq` is [`complete_seq`] of the message it holds, odd
/// while the source writes it.
#[repr(C)]
pub struct SamplingSlot {
    pub seq: AtomicU32,
    pub length: AtomicU32,
    /// CLOCK_MONOTONIC when it was written.
    pub written_ns: AtomicI64,
    // followed by `words(max_message_size)` AtomicU64 of data
}

pub const fn sampling_slot_bytes(max: u32) -> usize {
    core::mem::size_of::<SamplingSlot>() + 8 * words(max)
}

/// Size of a sampling channel's data area.
pub const fn sampling_area_bytes(max: u32) -> usize {
    core::mem::size_of::<SamplingHeader>() + 2 * sampling_slot_bytes(max)
}

/// Header of a queuing channel's data area (written by the source only), followed by
/// `max_nb_messages` [`QueuingSlot`]s.
#[repr(C)]
pub struct QueuingHeader {
    /// Messages sent so far (wrapping). Futex word of a waiting receiver.
    pub head: AtomicU32,
    /// Non-zero while a source process waits for room (the receiver then wakes `tail`).
    pub sender_waiting: AtomicU32,
    pub max_message_size: u32,
    pub max_nb_messages: u32,
    /// Messages that found the queue full and were lost (wrapping): a source that cannot wait
    /// (a UDP link) counts them here so the destination learns of the overflow.
    pub overflows: AtomicU32,
    pub _pad: u32,
}

#[repr(C)]
pub struct QueuingSlot {
    pub length: AtomicU32,
    pub _pad: u32,
    // followed by `words(max_message_size)` AtomicU64 of data
}

pub const fn queuing_slot_bytes(max: u32) -> usize {
    core::mem::size_of::<QueuingSlot>() + 8 * words(max)
}

// Slots follow the header and hold AtomicU64 data.
const _: () = assert!(core::mem::size_of::<QueuingHeader>().is_multiple_of(8));

pub const fn queuing_area_bytes(max: u32, depth: u32) -> usize {
    core::mem::size_of::<QueuingHeader>() + depth as usize * queuing_slot_bytes(max)
}

/// The destination's side of a queuing channel (written by the destination only).
#[repr(C)]
pub struct ConsumerPage {
    /// Messages received (or cleared) so far (wrapping). Futex word of a waiting sender.
    pub tail: AtomicU32,
    /// Non-zero while a destination process waits for a message (the source then wakes `head`).
    pub receiver_waiting: AtomicU32,
    /// `QueuingHeader::overflows` as of the last receive that reported an overflow (or clear).
    pub overflows_reported: AtomicU32,
}

pub const CONSUMER_PAGE_BYTES: usize = 4096;

/// Copies `src` into data words (relaxed atomics: the other side may read them concurrently).
pub fn store_words(dst: &[AtomicU64], src: &[u8]) {
    for (w, chunk) in dst.iter().zip(src.chunks(8)) {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        w.store(u64::from_le_bytes(b), Ordering::Relaxed);
    }
}

/// Copies data words out into `dst` (as many bytes as `dst` holds).
pub fn load_words(src: &[AtomicU64], dst: &mut [u8]) {
    for (w, chunk) in src.iter().zip(dst.chunks_mut(8)) {
        let b = w.load(Ordering::Relaxed).to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}

/// A view of a sampling channel's data area.
pub struct SamplingArea<'a> {
    pub header: &'a SamplingHeader,
    slots: [(&'a SamplingSlot, &'a [AtomicU64]); 2],
    max: u32,
}

/// What a sampling read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampledMessage {
    pub length: u32,
    pub written_ns: i64,
    /// The message's number (1 for the first written): tells a new message from one already read.
    pub generation: u64,
}

impl<'a> SamplingArea<'a> {
    /// # Safety
    /// `base` points to a mapping of at least `sampling_area_bytes(max)` bytes, 8-aligned,
    /// that lives for `'a` and is only accessed through atomics.
    pub unsafe fn from_raw(base: *const u8, max: u32) -> SamplingArea<'a> {
        let slot = |i: usize| {
            // SAFETY: inside the mapping by the size contract; alignment 8 holds because every
            // part's size is a multiple of 8.
            unsafe {
                let p = base.add(core::mem::size_of::<SamplingHeader>() + i * sampling_slot_bytes(max));
                let data = p.add(core::mem::size_of::<SamplingSlot>()).cast::<AtomicU64>();
                (&*p.cast::<SamplingSlot>(), core::slice::from_raw_parts(data, words(max)))
            }
        };
        // SAFETY: the header is at the start of the mapping (see the contract).
        let header = unsafe { &*base.cast::<SamplingHeader>() };
        SamplingArea { header, slots: [slot(0), slot(1)], max }
    }

    /// Source side, one writer at a time (the caller serializes its own processes). Writes
    /// the slot readers are not directed to, then publishes it.
    pub fn write(&self, msg: &[u8], now_ns: i64) {
        let len = msg.len().min(self.max as usize);
        let next = self.header.published.load(Ordering::Relaxed).wrapping_add(1);
        let (slot, data) = self.slots[(next % 2) as usize];
        // Odd while writing (whatever a writer that died in the middle of a write left), then
        // 2 * generation: the seq names the message the slot holds, not just "some message".
        let complete = complete_seq(next);
        slot.seq.store(complete.wrapping_sub(1), Ordering::Relaxed);
        fence(Ordering::Release);
        store_words(data, &msg[..len]);
        slot.length.store(len as u32, Ordering::Relaxed);
        slot.written_ns.store(now_ns, Ordering::Relaxed);
        slot.seq.store(complete, Ordering::Release);
        self.header.published.store(next, Ordering::Release);
    }

    /// Destination side: the latest message copied into `buf` (at most its length), or None
    /// if nothing was written yet. Never waits for the writer: a slot rewritten while it is
    /// read is read again from the newly published one. A source that breaks the protocol
    /// (a published slot that stays odd, keeps changing or holds another generation) reads as
    /// empty rather than hang.
    pub fn read(&self, buf: &mut [u8]) -> Option<SampledMessage> {
        for _ in 0..MAX_READ_ATTEMPTS {
            let generation = self.header.published.load(Ordering::Acquire);
            if generation == 0 {
                return None;
            }
            let (slot, data) = self.slots[(generation % 2) as usize];
            // The slot must hold exactly this generation before and after the copy: a writer
            // that lapped the reader (rewrote the slot with generation + 2 meanwhile) would
            // otherwise hand out the newer data labelled with the older generation, and a
            // later read would look older than this one.
            let complete = complete_seq(generation);
            if slot.seq.load(Ordering::Acquire) != complete {
                core::hint::spin_loop();
                continue;
            }
            // A length above the maximum (never written by a correct source) reads as empty.
            let Ok(length) = untrusted::message_length("sampling_port", slot.length.load(Ordering::Relaxed), self.max) else {
                return None;
            };
            let written_ns = slot.written_ns.load(Ordering::Relaxed);
            let n = (length as usize).min(buf.len());
            load_words(data, &mut buf[..n]);
            fence(Ordering::Acquire);
            if slot.seq.load(Ordering::Relaxed) == complete {
                return Some(SampledMessage { length, written_ns, generation });
            }
        }
        None
    }

    /// The latest message's header only (no data copied).
    pub fn peek(&self) -> Option<SampledMessage> {
        self.read(&mut [])
    }
}

/// A message taken from a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Popped {
    pub length: u32,
    /// Messages were lost to a full queue since the previous one was taken (ARINC 653 Part 1:
    /// the receive returns this message with INVALID_CONFIG).
    pub overflowed: bool,
}

/// A view of a queuing channel: the data area and the consumer page.
pub struct QueuingArea<'a> {
    // (`base` is the data area, reached only through atomics in `slot`.)
    pub header: &'a QueuingHeader,
    pub consumer: &'a ConsumerPage,
    base: *const u8,
    max: u32,
    depth: u32,
}

// SAFETY: `base` points into a mapping shared between processes that is only accessed through
// atomics, so sharing the view between threads is as safe as sharing the header references.
unsafe impl Send for QueuingArea<'_> {}
// SAFETY: as above.
unsafe impl Sync for QueuingArea<'_> {}

impl<'a> QueuingArea<'a> {
    /// # Safety
    /// `data` points to a mapping of at least `queuing_area_bytes(max, depth)` bytes and
    /// `consumer` to one of [`CONSUMER_PAGE_BYTES`], both 8-aligned, living for `'a` and only
    /// accessed through atomics.
    pub unsafe fn from_raw(data: *const u8, consumer: *const u8, max: u32, depth: u32) -> QueuingArea<'a> {
        // SAFETY: per the contract.
        unsafe {
            QueuingArea {
                header: &*data.cast::<QueuingHeader>(),
                consumer: &*consumer.cast::<ConsumerPage>(),
                base: data,
                max,
                depth: depth.max(1),
            }
        }
    }

    fn slot(&self, n: u32) -> (&'a QueuingSlot, &'a [AtomicU64]) {
        let i = (n % self.depth) as usize;
        // SAFETY: slot i < depth lies inside the mapping (from_raw's contract), 8-aligned.
        unsafe {
            let p = self.base.add(core::mem::size_of::<QueuingHeader>() + i * queuing_slot_bytes(self.max));
            let data = p.add(core::mem::size_of::<QueuingSlot>()).cast::<AtomicU64>();
            (&*p.cast::<QueuingSlot>(), core::slice::from_raw_parts(data, words(self.max)))
        }
    }

    /// Messages in the queue, as the destination or the source sees it (never above depth,
    /// whatever a misbehaving peer wrote).
    pub fn len(&self) -> u32 {
        let head = self.header.head.load(Ordering::Acquire);
        let tail = self.consumer.tail.load(Ordering::Acquire);
        head.wrapping_sub(tail).min(self.depth)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Source side (one sender at a time): appends `msg`, false when the queue is full.
    pub fn push(&self, msg: &[u8]) -> bool {
        let head = self.header.head.load(Ordering::Relaxed);
        let tail = self.consumer.tail.load(Ordering::Acquire);
        if head.wrapping_sub(tail) >= self.depth {
            return false;
        }
        let (slot, data) = self.slot(head);
        let len = msg.len().min(self.max as usize);
        store_words(data, &msg[..len]);
        slot.length.store(len as u32, Ordering::Relaxed);
        self.header.head.store(head.wrapping_add(1), Ordering::Release);
        true
    }

    /// Source side: a message found the queue full and is lost (for a source that cannot
    /// wait for room); the destination's next [`QueuingArea::pop`] reports it.
    pub fn note_overflow(&self) {
        self.header.overflows.fetch_add(1, Ordering::Release);
    }

    /// Destination side: whether messages were lost since the overflow last reported, marking
    /// them reported.
    fn take_overflow(&self) -> bool {
        let noted = self.header.overflows.load(Ordering::Acquire);
        self.consumer.overflows_reported.swap(noted, Ordering::AcqRel) != noted
    }

    /// Destination side (one receiver at a time): takes the oldest message into `buf`; None
    /// when empty. A source that breaks the protocol (a head more than the depth ahead or
    /// behind) reads as empty: stale slots are never delivered as messages.
    pub fn pop(&self, buf: &mut [u8]) -> Option<Popped> {
        match self.pop_checked(buf) {
            Ok(m) => m,
            Err(g) if g.field == "length" => self.pop_checked(buf).ok().flatten(),
            Err(_) => None,
        }
    }

    /// [`QueuingArea::pop`] for a reader that reports garbage: a head out of range is
    /// refused (nothing taken); a slot whose length exceeds the port's maximum is consumed
    /// (so that the queue moves on) and refused.
    pub fn pop_checked(&self, buf: &mut [u8]) -> Result<Option<Popped>, Garbage> {
        let tail = self.consumer.tail.load(Ordering::Relaxed);
        let head = self.header.head.load(Ordering::Acquire);
        if untrusted::queue_fill(head, tail, self.depth)? == 0 {
            return Ok(None);
        }
        let (slot, data) = self.slot(tail);
        let raw_length = slot.length.load(Ordering::Relaxed);
        let checked = untrusted::message_length("queuing_port", raw_length, self.max);
        let length = checked.unwrap_or(0);
        let n = (length as usize).min(buf.len());
        load_words(data, &mut buf[..n]);
        let overflowed = self.take_overflow();
        self.consumer.tail.store(tail.wrapping_add(1), Ordering::Release);
        checked?;
        Ok(Some(Popped { length, overflowed }))
    }

    /// Destination side: drops every queued message, and the overflow not yet reported with
    /// them (the next message received arrived after the clear).
    pub fn clear(&self) {
        self.take_overflow();
        let head = self.header.head.load(Ordering::Acquire);
        self.consumer.tail.store(head, Ordering::Release);
    }
}

/// Inter-module channels: one UDP datagram per message, a [`DATAGRAM_HEADER`]-byte header
/// (little-endian: magic, channel id, sequence number, message length, 0) then the message.
/// The receiving module drops (and counts) a datagram whose size, magic, channel or length is
/// wrong (malformed) or whose sequence number is not above the last one accepted (stale).
pub const UDP_MAGIC: u32 = u32::from_le_bytes(*b"PTU1");
pub const DATAGRAM_HEADER: usize = 24;

pub fn encode_datagram_header(channel_id: u32, sequence: u64, length: u32) -> [u8; DATAGRAM_HEADER] {
    let mut h = [0u8; DATAGRAM_HEADER];
    h[0..4].copy_from_slice(&UDP_MAGIC.to_le_bytes());
    h[4..8].copy_from_slice(&channel_id.to_le_bytes());
    h[8..16].copy_from_slice(&sequence.to_le_bytes());
    h[16..20].copy_from_slice(&length.to_le_bytes());
    h
}

/// The sequence number and message of a well-formed datagram of `channel_id` (a message of
/// 1..=`max` bytes), or None.
pub fn decode_datagram(d: &[u8], channel_id: u32, max: u32) -> Option<(u64, &[u8])> {
    let word = |r: core::ops::Range<usize>| d.get(r).map(|b| b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)));
    if d.len() < DATAGRAM_HEADER || word(0..4)? != u64::from(UDP_MAGIC) || word(4..8)? != u64::from(channel_id) || word(20..24)? != 0 {
        return None;
    }
    let length = word(16..20)?;
    if length == 0 || length > u64::from(max) || d.len() != DATAGRAM_HEADER + length as usize {
        return None;
    }
    Some((word(8..16)?, &d[DATAGRAM_HEADER..]))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn buffer(bytes: usize) -> Vec<u64> {
        vec![0u64; bytes.div_ceil(8)]
    }

    #[test]
    fn sampling_keeps_the_latest_message() {
        let mem = buffer(sampling_area_bytes(20));
        // SAFETY: a zeroed, 8-aligned buffer of the right size, alive for the test.
        let area = unsafe { SamplingArea::from_raw(mem.as_ptr().cast(), 20) };
        assert_eq!(area.peek(), None);
        area.write(b"first message", 5);
        area.write(b"second", 7);
        let mut buf = [0u8; 20];
        let m = area.read(&mut buf).unwrap();
        assert_eq!((m.length, m.written_ns, m.generation), (6, 7, 2));
        assert_eq!(&buf[..6], b"second");
    }

    #[test]
    fn a_write_interrupted_midway_does_not_block_readers() {
        let mem = buffer(sampling_area_bytes(8));
        // SAFETY: a zeroed, 8-aligned buffer of the right size, alive for the test.
        let area = unsafe { SamplingArea::from_raw(mem.as_ptr().cast(), 8) };
        area.write(b"one", 1);
        // A writer that died in the middle of its next write left that slot odd.
        let (slot, _) = area.slots[0];
        slot.seq.store(1, Ordering::Relaxed);
        assert_eq!(area.peek().map(|m| m.length), Some(3), "the published message is still read");
        area.write(b"three", 3);
        assert_eq!(area.peek().map(|m| (m.length, m.generation)), Some((5, 2)));
        // A source that leaves the published slot odd makes the port read as empty, not hang.
        let (published, _) = area.slots[0];
        published.seq.store(7, Ordering::Relaxed);
        assert_eq!(area.peek(), None);
    }

    #[test]
    fn sampling_readers_see_whole_messages_while_the_writer_runs() {
        let mem = buffer(sampling_area_bytes(64));
        let addr = mem.as_ptr() as usize;
        std::thread::scope(|s| {
            s.spawn(move || {
                // SAFETY: the buffer outlives the scope.
                let area = unsafe { SamplingArea::from_raw(addr as *const u8, 64) };
                for i in 1..=200_000u64 {
                    area.write(&[(i % 251) as u8; 64], i as i64);
                }
            });
            // SAFETY: as above.
            let area = unsafe { SamplingArea::from_raw(addr as *const u8, 64) };
            let mut last = 0;
            while last < 200_000 {
                let mut buf = [0u8; 64];
                if let Some(m) = area.read(&mut buf) {
                    assert!(buf.iter().all(|&b| b == buf[0]), "torn message {buf:?}");
                    assert_eq!(buf[0] as i64, m.written_ns % 251);
                    assert!(m.generation >= last);
                    last = m.generation;
                }
            }
        });
    }

    /// A reader slowed inside its copy (the writer laps it: it rewrites the same slot two
    /// generations later meanwhile) must never return the newer data labelled with the older
    /// generation, which would make a later read look older (a duplicate or a reordering).
    #[test]
    fn a_writer_lapping_a_slow_reader_never_mislabels_a_message() {
        const MAX: u32 = 256;
        const WRITES: u64 = 300_000;
        let mem = buffer(sampling_area_bytes(MAX));
        let addr = mem.as_ptr() as usize;
        let payload = |g: u64| {
            let mut b = [0u8; MAX as usize];
            for (i, chunk) in b.chunks_mut(8).enumerate() {
                chunk.copy_from_slice(&(g.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64).to_le_bytes());
            }
            b
        };
        let done = AtomicU32::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: the buffer outlives the scope.
                let area = unsafe { SamplingArea::from_raw(addr as *const u8, MAX) };
                for g in 1..=WRITES {
                    area.write(&payload(g), g as i64);
                }
                done.store(1, Ordering::Release);
            });
            // SAFETY: as above.
            let area = unsafe { SamplingArea::from_raw(addr as *const u8, MAX) };
            let (mut last, mut reads) = (0u64, 0u64);
            while done.load(Ordering::Acquire) == 0 || reads < 1000 {
                let mut buf = [0u8; MAX as usize];
                if let Some(m) = area.read(&mut buf) {
                    reads += 1;
                    assert_eq!(m.written_ns as u64, m.generation, "header of another generation");
                    assert!(buf == payload(m.generation), "payload of another generation than {}", m.generation);
                    // The same message read again, or a strictly newer one.
                    assert!(m.generation >= last, "generation {} after {last}", m.generation);
                    last = m.generation;
                }
            }
        });
    }

    #[test]
    fn datagrams_round_trip_and_malformed_ones_are_refused() {
        let mut d = encode_datagram_header(7, 42, 5).to_vec();
        d.extend_from_slice(b"hello");
        assert_eq!(decode_datagram(&d, 7, 64), Some((42, &b"hello"[..])));
        assert_eq!(decode_datagram(&d, 8, 64), None, "other channel");
        assert_eq!(decode_datagram(&d, 7, 4), None, "longer than the port's maximum");
        assert_eq!(decode_datagram(&d[..d.len() - 1], 7, 64), None, "truncated");
        assert_eq!(decode_datagram(&d[..3], 7, 64), None, "shorter than a header");
        let mut bad = d.clone();
        bad[0] ^= 1;
        assert_eq!(decode_datagram(&bad, 7, 64), None, "magic");
        let empty = encode_datagram_header(7, 43, 0);
        assert_eq!(decode_datagram(&empty, 7, 64), None, "empty message");
    }

    #[test]
    fn queue_is_fifo_bounded_and_clearable() {
        let data = buffer(queuing_area_bytes(16, 3));
        let consumer = buffer(CONSUMER_PAGE_BYTES);
        // SAFETY: zeroed, aligned, right sizes, alive for the test.
        let q = unsafe { QueuingArea::from_raw(data.as_ptr().cast(), consumer.as_ptr().cast(), 16, 3) };
        assert!(q.push(b"a") && q.push(b"bb") && q.push(b"ccc"));
        assert!(!q.push(b"d"), "full");
        assert_eq!(q.len(), 3);
        let mut buf = [0u8; 16];
        assert_eq!(q.pop(&mut buf).map(|m| m.length), Some(1));
        assert_eq!(&buf[..1], b"a");
        assert!(q.push(b"dddd"));
        assert_eq!(q.pop(&mut buf).map(|m| m.length), Some(2));
        q.clear();
        assert!(q.is_empty());
        assert_eq!(q.pop(&mut buf), None);
    }

    #[test]
    fn an_overflow_is_reported_once_by_the_next_pop() {
        let data = buffer(queuing_area_bytes(8, 2));
        let consumer = buffer(CONSUMER_PAGE_BYTES);
        // SAFETY: zeroed, aligned, right sizes, alive for the test.
        let q = unsafe { QueuingArea::from_raw(data.as_ptr().cast(), consumer.as_ptr().cast(), 8, 2) };
        assert!(q.push(b"one") && q.push(b"two"));
        assert!(!q.push(b"three"));
        q.note_overflow();
        assert!(!q.push(b"four"));
        q.note_overflow();
        let mut buf = [0u8; 8];
        assert_eq!(q.pop(&mut buf), Some(Popped { length: 3, overflowed: true }), "the message is delivered with the overflow");
        assert_eq!(&buf[..3], b"one");
        assert_eq!(q.pop(&mut buf), Some(Popped { length: 3, overflowed: false }), "reported once for both losses");
        assert_eq!(&buf[..3], b"two");
        assert!(q.push(b"five"));
        assert_eq!(q.pop(&mut buf), Some(Popped { length: 4, overflowed: false }));
        assert_eq!(q.pop(&mut buf), None);
    }

    #[test]
    fn clearing_a_queue_drops_its_pending_overflow() {
        let data = buffer(queuing_area_bytes(8, 1));
        let consumer = buffer(CONSUMER_PAGE_BYTES);
        // SAFETY: zeroed, aligned, right sizes, alive for the test.
        let q = unsafe { QueuingArea::from_raw(data.as_ptr().cast(), consumer.as_ptr().cast(), 8, 1) };
        assert!(q.push(b"a"));
        q.note_overflow();
        q.clear();
        assert!(q.push(b"b"));
        let mut buf = [0u8; 8];
        assert_eq!(q.pop(&mut buf), Some(Popped { length: 1, overflowed: false }));
    }

    #[test]
    fn a_source_head_out_of_range_delivers_nothing_and_loses_nothing() {
        let data = buffer(queuing_area_bytes(8, 4));
        let consumer = buffer(CONSUMER_PAGE_BYTES);
        // SAFETY: zeroed, aligned, right sizes, alive for the test.
        let q = unsafe { QueuingArea::from_raw(data.as_ptr().cast(), consumer.as_ptr().cast(), 8, 4) };
        assert!(q.push(b"one") && q.push(b"two"));
        let mut buf = [0u8; 8];
        for garbage in [5, 7, u32::MAX] {
            q.header.head.store(garbage, Ordering::Relaxed);
            assert_eq!(q.pop_checked(&mut buf).unwrap_err().field, "head", "head {garbage}");
            assert_eq!(q.pop(&mut buf), None, "stale slots are not delivered as messages");
            assert_eq!(q.consumer.tail.load(Ordering::Relaxed), 0, "nothing taken");
        }
        // The source comes back to its senses: the queued messages are all there, in order.
        q.header.head.store(2, Ordering::Relaxed);
        assert_eq!(q.pop(&mut buf).map(|m| m.length), Some(3));
        assert_eq!(&buf[..3], b"one");
        assert_eq!(q.pop(&mut buf).map(|m| m.length), Some(3));
        assert_eq!(&buf[..3], b"two");
    }

    #[test]
    fn a_length_above_the_maximum_is_refused_and_the_queue_moves_on() {
        let data = buffer(queuing_area_bytes(8, 4));
        let consumer = buffer(CONSUMER_PAGE_BYTES);
        // SAFETY: zeroed, aligned, right sizes, alive for the test.
        let q = unsafe { QueuingArea::from_raw(data.as_ptr().cast(), consumer.as_ptr().cast(), 8, 4) };
        assert!(q.push(b"bad") && q.push(b"good"));
        let (slot, _) = q.slot(0);
        slot.length.store(9999, Ordering::Relaxed);
        let mut buf = [0u8; 8];
        assert_eq!(q.pop_checked(&mut buf).unwrap_err().field, "length");
        assert_eq!(q.pop_checked(&mut buf), Ok(Some(Popped { length: 4, overflowed: false })));
        assert_eq!(&buf[..4], b"good");
        // The destination's own pop skips such a message too.
        assert!(q.push(b"bad") && q.push(b"next"));
        q.slot(2).0.length.store(u32::MAX, Ordering::Relaxed);
        assert_eq!(q.pop(&mut buf).map(|m| m.length), Some(4));
        assert_eq!(&buf[..4], b"next");
    }

    #[test]
    fn a_destination_tail_out_of_range_makes_the_queue_full_not_overwritten() {
        let data = buffer(queuing_area_bytes(8, 2));
        let consumer = buffer(CONSUMER_PAGE_BYTES);
        // SAFETY: zeroed, aligned, right sizes, alive for the test.
        let q = unsafe { QueuingArea::from_raw(data.as_ptr().cast(), consumer.as_ptr().cast(), 8, 2) };
        assert!(q.push(b"kept"));
        q.consumer.tail.store(5, Ordering::Relaxed);
        assert!(!q.push(b"over"), "no room is assumed, nothing is overwritten");
        assert_eq!(q.len(), 2, "never above the depth");
        q.consumer.tail.store(0, Ordering::Relaxed);
        let mut buf = [0u8; 8];
        assert_eq!(q.pop(&mut buf).map(|m| m.length), Some(4));
        assert_eq!(&buf[..4], b"kept");
    }

    #[test]
    fn a_sampling_length_above_the_maximum_reads_as_empty() {
        let mem = buffer(sampling_area_bytes(8));
        // SAFETY: a zeroed, 8-aligned buffer of the right size, alive for the test.
        let area = unsafe { SamplingArea::from_raw(mem.as_ptr().cast(), 8) };
        area.write(b"ok", 1);
        let (slot, _) = area.slots[1];
        slot.length.store(1000, Ordering::Relaxed);
        assert_eq!(area.peek(), None);
    }

    #[test]
    fn the_overflow_count_survives_wrapping() {
        let data = buffer(queuing_area_bytes(8, 1));
        let consumer = buffer(CONSUMER_PAGE_BYTES);
        // SAFETY: zeroed, aligned, right sizes, alive for the test.
        let q = unsafe { QueuingArea::from_raw(data.as_ptr().cast(), consumer.as_ptr().cast(), 8, 1) };
        q.header.overflows.store(u32::MAX, Ordering::Relaxed);
        q.consumer.overflows_reported.store(u32::MAX, Ordering::Relaxed);
        assert!(q.push(b"a"));
        q.note_overflow();
        let mut buf = [0u8; 8];
        assert_eq!(q.pop(&mut buf).map(|m| m.overflowed), Some(true));
    }
}
