//! Inter-module channels: a channel end in another module (`Pseudo_Partition
//! PhysicalAddress="udp:HOST:PORT"`) is served by one module thread. For a pseudo destination,
//! HOST:PORT is where the messages go: the thread sends each new sampling message and every
//! queued message (it is the queue's consumer) as one datagram. For a pseudo source, HOST:PORT
//! is the local address the thread listens on: it writes each accepted datagram into the
//! channel as its source would. Datagrams are sequence-numbered and size-checked
//! (`partita_abi::ports::decode_datagram`); malformed or stale ones are counted and dropped,
//! never delivered, and so is a message that finds the destination queue full: that one is
//! noted in the queue too, so the destination's next receive reports the overflow
//! (INVALID_CONFIG with its message, as ARINC 653 Part 1 asks).

use crate::backend::rt;
use partita_abi::ports::{
    CONSUMER_PAGE_BYTES, DATAGRAM_HEADER, KIND_SAMPLING, QueuingArea, SamplingArea, decode_datagram, encode_datagram_header,
    queuing_area_bytes, sampling_area_bytes,
};
use std::io;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

/// How often outgoing channels are looked at (sampling writes wake nobody).
const POLL_MS: i32 = 1;

/// One channel end in another module, with the descriptors of the channel memory the module
/// needs: the data area (read-write when the module is the source) and, for a queuing
/// channel, the consumer page (read-write when the module is the consumer).
pub struct RemoteEnd {
    pub channel_id: u32,
    pub kind: u32,
    pub max_message_size: u32,
    pub max_nb_messages: u32,
    /// HOST:PORT from the configuration.
    pub address: String,
    /// Messages go to the other module (a pseudo destination); otherwise they come from it.
    pub outgoing: bool,
    pub data: OwnedFd,
    pub consumer: Option<OwnedFd>,
}

/// What happened on one inter-module channel.
#[derive(Default, Debug)]
pub struct Counters {
    pub sent: AtomicU64,
    pub received: AtomicU64,
    pub malformed: AtomicU64,
    pub stale: AtomicU64,
    /// Accepted but the destination queue was full (lost; the destination is told).
    pub dropped: AtomicU64,
}

struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(fd: &OwnedFd, len: usize, writable: bool) -> io::Result<Mapping> {
        let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
        // SAFETY: a new shared mapping of a memfd sized (and sealed) at least `len` by `ports`.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping { ptr: p.cast(), len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping; the views made from it do not outlive `Link`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// A served end: its mappings, socket and progress.
struct Link {
    end: RemoteEnd,
    data: Mapping,
    consumer: Option<Mapping>,
    socket: UdpSocket,
    peer: Option<SocketAddr>,
    /// Outgoing: the last sequence number sent; incoming: the last one accepted.
    sequence: u64,
    counters: Arc<Counters>,
}

// SAFETY: the raw pointers point into shared mappings accessed only through atomics; a Link is
// used by one thread at a time.
unsafe impl Send for Link {}

impl Link {
    fn sampling(&self) -> SamplingArea<'_> {
        // SAFETY: `data` maps sampling_area_bytes(max) bytes for as long as self lives.
        unsafe { SamplingArea::from_raw(self.data.ptr, self.end.max_message_size) }
    }

    fn queuing(&self) -> Option<QueuingArea<'_>> {
        let consumer = self.consumer.as_ref()?;
        // SAFETY: both mappings have the layout's sizes and live as long as self.
        Some(unsafe { QueuingArea::from_raw(self.data.ptr, consumer.ptr, self.end.max_message_size, self.end.max_nb_messages) })
    }

    fn send(&mut self, msg: &[u8], sequence: u64) {
        let Some(peer) = self.peer else { return };
        let mut d = encode_datagram_header(self.end.channel_id, sequence, msg.len() as u32).to_vec();
        d.extend_from_slice(msg);
        if self.socket.send_to(&d, peer).is_ok() {
            self.counters.sent.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Sends what is new in an outgoing channel.
    fn forward(&mut self, buf: &mut [u8]) {
        if self.end.kind == KIND_SAMPLING {
            let Some(m) = self.sampling().read(buf) else { return };
            if m.generation > self.sequence {
                self.sequence = m.generation;
                self.send(&buf[..m.length as usize], m.generation);
            }
            return;
        }
        // At most a queue's worth per call, whatever the source partition keeps writing.
        for _ in 0..self.end.max_nb_messages.max(1) {
            let Some(n) = self.queuing().and_then(|q| q.pop(buf)).map(|m| m.length) else { break };
            self.sequence += 1;
            let seq = self.sequence;
            self.send(&buf[..n as usize], seq);
            if let Some(q) = self.queuing()
                && q.header.sender_waiting.load(Ordering::SeqCst) != 0
            {
                let _ = rt::futex_wake_shared(&q.consumer.tail, i32::MAX);
            }
        }
    }

    /// Takes every pending datagram of an incoming channel.
    fn accept(&mut self, buf: &mut [u8]) {
        while let Ok(n) = self.socket.recv(buf) {
            let Some((sequence, msg)) = decode_datagram(&buf[..n], self.end.channel_id, self.end.max_message_size) else {
                self.counters.malformed.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            if sequence <= self.sequence {
                self.counters.stale.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            self.sequence = sequence;
            if self.end.kind == KIND_SAMPLING {
                self.sampling().write(msg, rt::now_ns());
            } else if let Some(q) = self.queuing() {
                if !q.push(msg) {
                    q.note_overflow();
                    self.counters.dropped.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                if q.consumer.receiver_waiting.load(Ordering::SeqCst) != 0 {
                    let _ = rt::futex_wake_shared(&q.header.head, i32::MAX);
                }
            }
            self.counters.received.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The running UDP thread and the counters of each end.
pub struct UdpLinks {
    ends: Vec<(EndReport, Arc<Counters>)>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What is reported about an end once the run is over.
#[derive(Debug, Clone)]
pub struct EndReport {
    pub channel_id: u32,
    pub address: String,
    pub outgoing: bool,
}

impl UdpLinks {
    /// Binds the incoming ends, maps the channel memory and starts the thread (none when no
    /// channel leaves the module).
    pub fn start(ends: Vec<RemoteEnd>) -> io::Result<UdpLinks> {
        let mut links = Vec::new();
        let mut report = Vec::new();
        for end in ends {
            let resolved = end.address.to_socket_addrs().ok().and_then(|mut a| a.next());
            let addr = resolved.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("cannot resolve {}", end.address)))?;
            let socket =
                if end.outgoing { UdpSocket::bind(if addr.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" })? } else { UdpSocket::bind(addr)? };
            socket.set_nonblocking(true)?;
            let writable_data = !end.outgoing;
            let data_len = if end.kind == KIND_SAMPLING {
                sampling_area_bytes(end.max_message_size)
            } else {
                queuing_area_bytes(end.max_message_size, end.max_nb_messages)
            };
            let data = Mapping::new(&end.data, data_len, writable_data)?;
            let consumer = end.consumer.as_ref().map(|c| Mapping::new(c, CONSUMER_PAGE_BYTES, end.outgoing)).transpose()?;
            let counters = Arc::new(Counters::default());
            report.push((EndReport { channel_id: end.channel_id, address: end.address.clone(), outgoing: end.outgoing }, counters.clone()));
            links.push(Link { peer: end.outgoing.then_some(addr), end, data, consumer, socket, sequence: 0, counters });
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread = if links.is_empty() {
            None
        } else {
            let stop = stop.clone();
            Some(std::thread::Builder::new().name("partita-udp".into()).spawn(move || serve(links, &stop))?)
        };
        Ok(UdpLinks { ends: report, stop, thread })
    }

    /// Stops the thread; the counters stay readable.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// One line per end, for the end of the run.
    pub fn summary(&self) -> Vec<String> {
        self.ends
            .iter()
            .map(|(e, c)| {
                let (dir, n) =
                    if e.outgoing { ("to", c.sent.load(Ordering::Relaxed)) } else { ("from", c.received.load(Ordering::Relaxed)) };
                format!(
                    "channel {} over udp {dir} {}: {} {n}, malformed {}, stale {}, dropped (queue full) {}",
                    e.channel_id,
                    e.address,
                    if e.outgoing { "sent" } else { "received" },
                    c.malformed.load(Ordering::Relaxed),
                    c.stale.load(Ordering::Relaxed),
                    c.dropped.load(Ordering::Relaxed)
                )
            })
            .collect()
    }
}

impl Drop for UdpLinks {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(mut links: Vec<Link>, stop: &AtomicBool) {
    let mut buf = vec![0u8; DATAGRAM_HEADER + 65_536];
    while !stop.load(Ordering::Acquire) {
        let mut fds: Vec<libc::pollfd> = links
            .iter()
            .filter(|l| !l.end.outgoing)
            .map(|l| libc::pollfd { fd: l.socket.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        // SAFETY: polling our own sockets for POLLIN, at most POLL_MS (an empty set just sleeps).
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, POLL_MS) };
        for l in &mut links {
            if l.end.outgoing {
                l.forward(&mut buf);
            } else {
                l.accept(&mut buf);
            }
        }
    }
}
