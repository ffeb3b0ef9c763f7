//! Sampling and queuing ports (ARINC 653 Part 1 §2.3.5, Part 2 sampling extensions). The
//! module passes the partition's port directory and its channel memory (fd 5 and up, see
//! `partita_abi::ports`); a port is mapped at CREATE, read-write only where this partition is
//! the writer. Without a directory (standalone, or no ports configured) every CREATE is
//! INVALID_CONFIG, since no port is configured.

mod queuing;
mod sampling;

pub use queuing::{
    ReceivedMessage, clear_queuing_port, create_queuing_port, get_queuing_port_id, get_queuing_port_status, receive_queuing_message,
    send_queuing_message,
};
pub use sampling::{
    create_sampling_port, get_sampling_port_current_status, get_sampling_port_id, get_sampling_port_status, read_sampling_message,
    read_sampling_message_conditional, read_updated_sampling_message, write_sampling_message,
};

use crate::kernel::runtime::rt;
use crate::kernel::sys;
use crate::names::Name;
use crate::types::*;
use partita_abi::config_mismatch;
use partita_abi::ports::{KIND_SAMPLING, MAX_PORTS, PORTS_FD, PORTS_MAGIC, PortDirectory, PortEntry};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

pub type SamplingPortId = i32;
pub type QueuingPortId = i32;

/// PORT_DIRECTION_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum PortDirection {
    Source = 0,
    Destination = 1,
}

impl PortDirection {
    pub fn from_u32(v: u32) -> Option<PortDirection> {
        match v {
            0 => Some(PortDirection::Source),
            1 => Some(PortDirection::Destination),
            _ => None,
        }
    }
}

/// VALIDITY_TYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Validity {
    Invalid = 0,
    Valid = 1,
}

/// UPDATED_TYPE (Part 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Updated {
    EmptyPort = 0,
    ConsumedMessage = 1,
    NewMessage = 2,
}

/// AGE_TYPE (Part 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Age {
    Stale = 0,
    Fresh = 1,
}

/// The configured ports of this partition, read once from the sealed directory.
fn directory() -> &'static [PortEntry] {
    static DIR: OnceLock<Vec<PortEntry>> = OnceLock::new();
    DIR.get_or_init(|| if rt().standalone { Vec::new() } else { read_directory().unwrap_or_default() })
}

fn read_directory() -> Option<Vec<PortEntry>> {
    let size = std::mem::size_of::<PortDirectory>();
    let base = map(PORTS_FD, size, false)?;
    // SAFETY: `map` checked that the file holds `size` bytes; the directory is sealed against
    // writes, so plain reads are fine; every bit pattern is a valid PortDirectory.
    let dir = unsafe { &*base.cast::<PortDirectory>() };
    let entries = (dir.magic == PORTS_MAGIC).then(|| dir.entries[..(dir.count as usize).min(MAX_PORTS)].to_vec());
    // SAFETY: unmapping what `map` mapped above; `dir` is not used after this.
    unsafe { libc::munmap(base.cast(), size) };
    entries
}

/// Maps `len` bytes of memfd `fd` shared, read-write or read-only; None if the file is
/// smaller than that or cannot be mapped so.
fn map(fd: i32, len: usize, writable: bool) -> Option<*mut u8> {
    // SAFETY: fstat into a zeroed stat on a descriptor number (an invalid one fails cleanly).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if fd < 0 || unsafe { libc::fstat(fd, &mut st) } != 0 || (st.st_size as u64) < len as u64 {
        return None;
    }
    let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
    // SAFETY: a new shared mapping of a file at least `len` bytes long; checked below.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
    (p != libc::MAP_FAILED).then_some(p.cast())
}

/// The configured entry of a port name with the given kind. Not found: INVALID_CONFIG, and the
/// partition's log says why (no such port, or a port of the other kind).
fn configured(name: &Name, kind: u32) -> ApexResult<&'static PortEntry> {
    let same_name = |e: &&PortEntry| partita_abi::name_str(&e.name).as_bytes() == name.as_bytes();
    if let Some(e) = directory().iter().find(|e| e.kind == kind && same_name(e)) {
        return Ok(e);
    }
    let mut l = diagnostic(kind, name);
    if let Some(other) = directory().iter().find(|e| same_name(e)) {
        l.str("the configuration declares it as a ").str(kind_element(other.kind));
        at_line(&mut l, other);
        trace_mismatch(kind, config_mismatch::KIND, other.config_line, 0);
    } else {
        l.str("the configuration declares no port of that name for this partition");
        trace_mismatch(kind, config_mismatch::NAME, 0, 0);
    }
    Err(report(l))
}

/// " (line N)" after a configuration element, when the module said where it is.
fn at_line(l: &mut sys::Line, e: &PortEntry) {
    if e.config_line > 0 {
        l.str(" (line ").int(e.config_line.into()).str(")");
    }
}

/// The CONFIG_MISMATCH trace event of a refused creation: the module turns it into a
/// `config_mismatch` trace event naming the service, the attribute and the configuration line.
fn trace_mismatch(kind: u32, attribute: u32, line: u32, given: i64) {
    let service = if kind == KIND_SAMPLING { config_mismatch::SAMPLING } else { config_mismatch::QUEUING };
    rt().trace(partita_abi::event::CONFIG_MISMATCH, config_mismatch::pack(service, attribute, line), given);
}

/// The configuration element of a port kind.
fn kind_element(kind: u32) -> &'static str {
    if kind == KIND_SAMPLING { "<Sampling_Port>" } else { "<Queuing_Port>" }
}

/// The start of a diagnostic line about creating port `name`.
fn diagnostic(kind: u32, name: &Name) -> sys::Line {
    let mut l = sys::Line::new();
    let service = if kind == KIND_SAMPLING { "CREATE_SAMPLING_PORT" } else { "CREATE_QUEUING_PORT" };
    l.str("partita-apex: ").str(service).str(" \"").bytes(name.as_bytes()).str("\": INVALID_CONFIG: ");
    l
}

/// Writes a diagnostic line on the partition's stderr (its log); INVALID_CONFIG.
fn report(mut l: sys::Line) -> ErrorReturnCode {
    l.str("\n");
    sys::write_all(2, l.as_bytes());
    ErrorReturnCode::InvalidConfig
}

/// INVALID_CONFIG because attribute `attribute` of the port's element differs: the log names
/// the element, the attribute, the value given and the configured one.
/// `unit` follows each value (e.g. " ns").
fn mismatch(e: &PortEntry, attribute: u32, given: i64, configured: i64, unit: &str) -> ErrorReturnCode {
    let name = Name::from_bytes(partita_abi::name_str(&e.name).as_bytes());
    let mut l = diagnostic(e.kind, &name);
    let what = if attribute == config_mismatch::DIRECTION {
        "Direction (0 SOURCE, 1 DESTINATION)"
    } else {
        config_mismatch::attribute_name(attribute)
    };
    l.str(what).str(" ").int(given).str(unit).str(" given, but ").str(kind_element(e.kind)).str(" Name=\"").bytes(name.as_bytes());
    l.str("\"");
    at_line(&mut l, e);
    l.str(" of the configuration has ").int(configured).str(unit);
    trace_mismatch(e.kind, attribute, e.config_line, given);
    report(l)
}

/// Created ports of one kind: ids are 1-based indices, looked up without a lock.
struct PortTable<T: 'static> {
    slots: [OnceLock<T>; MAX_PORTS],
    count: AtomicU32,
    create: std::sync::Mutex<()>,
}

impl<T: 'static> PortTable<T> {
    const fn new() -> PortTable<T> {
        PortTable { slots: [const { OnceLock::new() }; MAX_PORTS], count: AtomicU32::new(0), create: std::sync::Mutex::new(()) }
    }

    fn get(&'static self, id: i32) -> ApexResult<&'static T> {
        let i = usize::try_from(id).ok().and_then(|i| i.checked_sub(1)).ok_or(ErrorReturnCode::InvalidParam)?;
        self.slots.get(i).and_then(OnceLock::get).ok_or(ErrorReturnCode::InvalidParam)
    }

    fn iter(&'static self) -> impl Iterator<Item = (i32, &'static T)> {
        let n = (self.count.load(Ordering::Acquire) as usize).min(MAX_PORTS);
        self.slots[..n].iter().enumerate().filter_map(|(i, s)| s.get().map(|p| (i as i32 + 1, p)))
    }

    /// Adds a port made by `make` (under the creation lock, so a name is created once).
    fn add(&'static self, exists: impl Fn(&T) -> bool, make: impl FnOnce() -> ApexResult<T>) -> ApexResult<i32> {
        let _g = self.create.lock().unwrap_or_else(|e| e.into_inner());
        if self.iter().any(|(_, p)| exists(p)) {
            return Err(ErrorReturnCode::NoAction);
        }
        let n = self.count.load(Ordering::Acquire) as usize;
        if n >= MAX_PORTS {
            return Err(ErrorReturnCode::InvalidConfig);
        }
        let port = make()?;
        let _ = self.slots[n].set(port);
        self.count.store(n as u32 + 1, Ordering::Release);
        Ok(n as i32 + 1)
    }
}

/// The checks every CREATE shares, in the standard's order after the name and NO_ACTION
/// checks: size, direction, then the operating mode.
fn check_create(e: &PortEntry, max_message_size: i32, direction: PortDirection) -> ApexResult<()> {
    if max_message_size <= 0 || max_message_size as u32 != e.max_message_size {
        return Err(mismatch(e, config_mismatch::MAX_MESSAGE_SIZE, max_message_size.into(), e.max_message_size.into(), ""));
    }
    if direction as u32 != e.direction {
        // 0 = SOURCE, 1 = DESTINATION, as PORT_DIRECTION_TYPE and the ABI number them.
        return Err(mismatch(e, config_mismatch::DIRECTION, direction as i64, e.direction.into(), ""));
    }
    Ok(())
}

fn check_init_mode() -> ApexResult<()> {
    if rt().mode() == partita_abi::mode::NORMAL { Err(ErrorReturnCode::InvalidMode) } else { Ok(()) }
}

/// A message to send: length 0 is INVALID_PARAM, longer than the port's maximum INVALID_CONFIG.
fn check_length(len: usize, max: u32) -> ApexResult<()> {
    if len == 0 {
        return Err(ErrorReturnCode::InvalidParam);
    }
    if len > max as usize {
        return Err(ErrorReturnCode::InvalidConfig);
    }
    Ok(())
}
