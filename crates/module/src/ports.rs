//! Channel memory: the module creates, for every channel of the configuration, the memfds its
//! ports share (layouts in [`partita_abi::ports`]) and, for every partition, a sealed port
//! directory; each partition program receives descriptors for its own ends only. What a
//! partition only reads it gets through a read-only open file (it cannot map it writable), and
//! the memfds belong to an unprivileged owner with mode 0444, so a partition (root without
//! CAP_DAC_OVERRIDE/CAP_FOWNER) can neither reopen one writable through /proc nor chmod it.
//! Sizes are sealed. The memory lives as long as the run, across partition restarts. A channel
//! end in another module (a Pseudo_Partition) is served by the module's [`udp`] thread.

use crate::backend::sys::cvt;
use partita_abi::ports::{
    CONSUMER_PAGE_BYTES, DESTINATION, KIND_QUEUING, KIND_SAMPLING, MAX_PORTS, PORT_FD_BASE, PORTS_MAGIC, PortDirectory, PortEntry,
    QueuingHeader, SOURCE, queuing_area_bytes, sampling_area_bytes,
};
use partita_abi::{ABI_VERSION, name_bytes};
use partita_config::model::{ChannelEnd, Direction, Module};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

pub mod udp;

/// Owner of the channel memfds: not the partitions' uid (see the module documentation).
const MEMFD_OWNER: u32 = 65534;

/// The descriptors one partition program receives: `fds[0]` becomes fd
/// [`partita_abi::ports::PORTS_FD`], `fds[k]` fd `PORTS_FD + k`.
#[derive(Default)]
pub struct PartitionPorts {
    pub fds: Vec<OwnedFd>,
}

impl PartitionPorts {
    pub fn borrowed(&self) -> Vec<BorrowedFd<'_>> {
        self.fds.iter().map(|f| f.as_fd()).collect()
    }
}

/// A sealed-size memfd of `size` zero bytes, optionally starting with `init`; `seals` are
/// added to the size seals (F_SEAL_WRITE for what nobody writes again).
fn memfd(name: &str, size: usize, init: &[u8], seals: libc::c_int) -> io::Result<OwnedFd> {
    let cname = std::ffi::CString::new(format!("partita-{name}")).unwrap_or_default();
    // SAFETY: memfd_create with a NUL-terminated name; the result is checked and owned.
    let fd = unsafe { OwnedFd::from_raw_fd(cvt(libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING))?) };
    // SAFETY: resizing our own fresh memfd.
    cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) })?;
    if !init.is_empty() {
        // SAFETY: writing `init` (a live slice) at offset 0 of our memfd.
        let n = unsafe { libc::pwrite(fd.as_raw_fd(), init.as_ptr().cast(), init.len(), 0) };
        if n != init.len() as isize {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: fcntl/fchown/fchmod on our own descriptor with valid arguments.
    unsafe {
        cvt(libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL))?;
        // Unprivileged runs (tests) cannot give the file away; the read-only open still holds.
        let _ = libc::fchown(fd.as_raw_fd(), MEMFD_OWNER, MEMFD_OWNER);
        cvt(libc::fchmod(fd.as_raw_fd(), 0o444))?;
    }
    Ok(fd)
}

/// A read-only open file of the same memfd (mapping it writable then fails with EACCES).
fn read_only(fd: &OwnedFd) -> io::Result<OwnedFd> {
    let path = std::ffi::CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("no NUL");
    // SAFETY: opening a NUL-terminated path; the result is checked and owned.
    Ok(unsafe { OwnedFd::from_raw_fd(cvt(libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC))?) })
}

fn bytes_of<T>(v: &T) -> &[u8] {
    // SAFETY: reading the bytes of a #[repr(C)] value made of integers (no padding bytes are
    // uninitialized: every layout here is padded explicitly).
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// One partition's directory being built.
struct Builder {
    entries: Vec<PortEntry>,
    fds: Vec<OwnedFd>,
}

impl Builder {
    /// Adds a descriptor and returns its number in the partition program.
    fn add_fd(&mut self, fd: OwnedFd) -> i32 {
        self.fds.push(fd);
        PORT_FD_BASE + self.fds.len() as i32 - 1
    }

    fn entry(&mut self, name: &str) -> Option<&mut PortEntry> {
        self.entries.iter_mut().find(|e| partita_abi::name_str(&e.name) == name)
    }
}

/// The channel memory of a module: what each partition program gets, and the channel ends in
/// other modules (served by [`udp`]).
pub struct ChannelMemory {
    /// In the order of the partition ids given to [`create`].
    pub partitions: Vec<PartitionPorts>,
    pub remote: Vec<udp::RemoteEnd>,
}

/// A Pseudo_Partition end: its UDP address.
fn remote_address(end: &ChannelEnd) -> Option<String> {
    match end {
        ChannelEnd::Pseudo { address, .. } => Some(format!("{}:{}", address.value.host, address.value.port)),
        ChannelEnd::Standard { .. } => None,
    }
}

/// Creates the channel memory of `module` and the port descriptors of each partition, in the
/// order of `partition_ids`.
pub fn create(module: &Module, partition_ids: &[u32]) -> io::Result<ChannelMemory> {
    let mut builders: Vec<Builder> = partition_ids
        .iter()
        .map(|&id| {
            let p = module.partition(id);
            let mut entries = Vec::new();
            for s in p.iter().flat_map(|p| &p.sampling_ports) {
                entries.push(PortEntry {
                    name: name_bytes(&s.name.value),
                    kind: KIND_SAMPLING,
                    direction: direction(s.direction.value),
                    max_message_size: s.max_message_size.value,
                    refresh_ns: s.refresh_period.as_ref().map_or(-1, |r| r.value.0),
                    config_line: s.span.line,
                    ..PortEntry::EMPTY
                });
            }
            for q in p.iter().flat_map(|p| &p.queuing_ports) {
                entries.push(PortEntry {
                    name: name_bytes(&q.name.value),
                    kind: KIND_QUEUING,
                    direction: direction(q.direction.value),
                    max_message_size: q.max_message_size.value,
                    max_nb_messages: q.max_nb_messages.value,
                    config_line: q.span.line,
                    ..PortEntry::EMPTY
                });
            }
            Builder { entries, fds: Vec::new() }
        })
        .collect();
    let index_of = |end: &ChannelEnd| match end {
        ChannelEnd::Standard { partition, port, .. } => {
            module.resolve(partition).and_then(|p| partition_ids.iter().position(|&id| id == p.id.value)).map(|i| (i, port.value.clone()))
        }
        ChannelEnd::Pseudo { .. } => None,
    };
    let mut remote = Vec::new();
    for ch in &module.channels {
        let src = ch.source.as_ref().and_then(index_of);
        let src_remote = ch.source.as_ref().and_then(remote_address);
        let dests: Vec<(usize, String)> = ch.destinations.iter().filter_map(index_of).collect();
        let dests_remote: Vec<String> = ch.destinations.iter().filter_map(remote_address).collect();
        // The channel's port attributes, from any of its ends in this module.
        let Some(e) = src.iter().chain(&dests).find_map(|(i, port)| builders[*i].entry(port).copied()) else { continue };
        let tag = format!("ch{}", ch.id.value);
        let end = |address: String, outgoing: bool, data: OwnedFd, consumer: Option<OwnedFd>| udp::RemoteEnd {
            channel_id: ch.id.value,
            kind: e.kind,
            max_message_size: e.max_message_size,
            max_nb_messages: e.max_nb_messages,
            address,
            outgoing,
            data,
            consumer,
        };
        if e.kind == KIND_SAMPLING {
            let data = memfd(&tag, sampling_area_bytes(e.max_message_size), &[], 0)?;
            for (d, port) in &dests {
                let fd = builders[*d].add_fd(read_only(&data)?);
                if let Some(entry) = builders[*d].entry(port) {
                    (entry.data_fd, entry.channel_id) = (fd, ch.id.value);
                }
            }
            for address in dests_remote {
                remote.push(end(address, true, read_only(&data)?, None));
            }
            if let Some(address) = src_remote {
                remote.push(end(address, false, data.try_clone()?, None));
            }
            if let Some((s, port)) = &src {
                let fd = builders[*s].add_fd(data);
                if let Some(entry) = builders[*s].entry(port) {
                    (entry.data_fd, entry.channel_id) = (fd, ch.id.value);
                }
            }
        } else {
            let header = QueuingHeader {
                head: 0.into(),
                sender_waiting: 0.into(),
                max_message_size: e.max_message_size,
                max_nb_messages: e.max_nb_messages,
                overflows: 0.into(),
                _pad: 0,
            };
            let data = memfd(&tag, queuing_area_bytes(e.max_message_size, e.max_nb_messages), bytes_of(&header), 0)?;
            let consumer = memfd(&format!("{tag}-consumer"), CONSUMER_PAGE_BYTES, &[], 0)?;
            // A queuing channel has one destination (validated): here or in another module.
            if let Some((d, port)) = dests.first() {
                let (dfd, cfd) = (builders[*d].add_fd(read_only(&data)?), builders[*d].add_fd(consumer.try_clone()?));
                if let Some(entry) = builders[*d].entry(port) {
                    (entry.data_fd, entry.consumer_fd, entry.channel_id) = (dfd, cfd, ch.id.value);
                }
            } else if let Some(address) = dests_remote.into_iter().next() {
                remote.push(end(address, true, read_only(&data)?, Some(consumer.try_clone()?)));
            }
            if let Some(address) = src_remote {
                remote.push(end(address, false, data.try_clone()?, Some(read_only(&consumer)?)));
            }
            if let Some((s, port)) = &src {
                let (dfd, cfd) = (builders[*s].add_fd(data), builders[*s].add_fd(read_only(&consumer)?));
                if let Some(entry) = builders[*s].entry(port) {
                    (entry.data_fd, entry.consumer_fd, entry.channel_id) = (dfd, cfd, ch.id.value);
                }
            }
        }
    }
    let partitions = builders
        .into_iter()
        .zip(partition_ids)
        .map(|(b, id)| {
            let mut dir =
                Box::new(PortDirectory { magic: PORTS_MAGIC, version: ABI_VERSION, count: 0, entries: [PortEntry::EMPTY; MAX_PORTS] });
            for (slot, e) in dir.entries.iter_mut().zip(&b.entries) {
                *slot = *e;
            }
            dir.count = b.entries.len().min(MAX_PORTS) as u32;
            let fd = memfd(&format!("ports-{id}"), std::mem::size_of::<PortDirectory>(), bytes_of(&*dir), libc::F_SEAL_WRITE)?;
            let mut fds = vec![read_only(&fd)?];
            fds.extend(b.fds);
            Ok(PartitionPorts { fds })
        })
        .collect::<io::Result<Vec<_>>>()?;
    Ok(ChannelMemory { partitions, remote })
}

fn direction(d: Direction) -> u32 {
    match d {
        Direction::Source => SOURCE,
        Direction::Destination => DESTINATION,
    }
}
