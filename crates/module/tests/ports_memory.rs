//! The channel memory the module hands out (no privileges needed): each partition gets its
//! sealed directory and descriptors for its own ends only, read-only where it only reads, and
//! what one partition writes the others see through their own descriptors.

use partita_abi::ports::{
    DESTINATION, KIND_QUEUING, KIND_SAMPLING, PORT_FD_BASE, PORTS_MAGIC, PortDirectory, PortEntry, SOURCE, SamplingArea,
};
use partita_config::check_text;
use partita_module::ports::{PartitionPorts, create};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

const MODULE: &str = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="A" pt:Executable="a">
    <Sampling_Port Name="out" MaxMessageSize="16" Direction="SOURCE"/>
    <Queuing_Port Name="cmd" MaxMessageSize="8" Direction="DESTINATION" MaxNbMessages="4"/>
  </Partition>
  <Partition PartitionIdentifier="2" PartitionName="B" pt:Executable="b">
    <Sampling_Port Name="in" MaxMessageSize="16" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
    <Queuing_Port Name="cmd" MaxMessageSize="8" Direction="SOURCE" MaxNbMessages="4"/>
  </Partition>
  <Partition PartitionIdentifier="3" PartitionName="C" pt:Executable="c"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.005">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.005"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="2" PeriodSeconds="0.02" PeriodDurationSeconds="0.005">
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.005" WindowDurationSeconds="0.005"/>
    </Partition_Schedule>
    <Partition_Schedule PartitionIdentifier="3" PeriodSeconds="0.02" PeriodDurationSeconds="0.005">
      <Window_Schedule WindowIdentifier="3" WindowStartSeconds="0.01" WindowDurationSeconds="0.005"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Connection_Table>
    <Channel ChannelIdentifier="1"><Source><Standard_Partition PartitionIdentifier="1" PortName="out"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="2" PortName="in"/></Destination></Channel>
    <Channel ChannelIdentifier="2"><Source><Standard_Partition PartitionIdentifier="2" PortName="cmd"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="1" PortName="cmd"/></Destination></Channel>
  </Connection_Table>
</ARINC_653_Module>
"#;

fn access_mode(fd: &OwnedFd) -> i32 {
    // SAFETY: F_GETFL on an open descriptor.
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) & libc::O_ACCMODE }
}

fn map(fd: &OwnedFd, len: usize, prot: i32) -> Option<*mut u8> {
    // SAFETY: a new shared mapping of a memfd at least `len` long; failure is checked.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
    (p != libc::MAP_FAILED).then_some(p.cast())
}

/// A partition's directory, as its program sees it on fd 5.
fn directory(p: &PartitionPorts) -> &'static PortDirectory {
    let ptr = map(&p.fds[0], std::mem::size_of::<PortDirectory>(), libc::PROT_READ).unwrap();
    // SAFETY: the mapping holds a PortDirectory (checked size), plain integers, never unmapped.
    unsafe { &*ptr.cast::<PortDirectory>() }
}

/// The descriptor that becomes fd `n` in the partition program.
fn fd(p: &PartitionPorts, n: i32) -> &OwnedFd {
    &p.fds[(n - PORT_FD_BASE + 1) as usize]
}

fn entry<'a>(d: &'a PortDirectory, name: &str) -> &'a PortEntry {
    d.entries[..d.count as usize].iter().find(|e| partita_abi::name_str(&e.name) == name).unwrap()
}

#[test]
fn partitions_get_their_own_ends_read_only_where_they_read() {
    let checked = check_text(MODULE, Path::new("/nonexistent"));
    assert!(checked.is_valid(), "{:#?}", checked.diagnostics);
    let memory = create(checked.module.as_ref().unwrap(), &[1, 2, 3]).unwrap();
    assert!(memory.remote.is_empty());
    let [a, b, c] = &memory.partitions[..] else { panic!("three partitions") };
    // Directory + sampling data + queuing data + consumer page for A and B; C only a directory.
    assert_eq!((a.fds.len(), b.fds.len(), c.fds.len()), (4, 4, 1));
    for p in [a, b, c] {
        assert_eq!(access_mode(&p.fds[0]), libc::O_RDONLY, "the directory is read-only");
    }
    let dir = directory(a);
    assert_eq!((dir.magic, dir.count), (PORTS_MAGIC, 2));
    let (out, cmd) = (entry(dir, "out"), entry(dir, "cmd"));
    assert_eq!((out.kind, out.direction, out.channel_id), (KIND_SAMPLING, SOURCE, 1));
    assert_eq!((cmd.kind, cmd.direction, cmd.max_nb_messages), (KIND_QUEUING, DESTINATION, 4));
    // A writes its sampling channel; it owns the only writable descriptor of it.
    let a_out = fd(a, out.data_fd);
    assert_eq!(access_mode(a_out), libc::O_RDWR);
    // A reads its queue's data (written by B) and writes the consumer page; B the reverse.
    assert_eq!((access_mode(fd(a, cmd.data_fd)), access_mode(fd(a, cmd.consumer_fd))), (libc::O_RDONLY, libc::O_RDWR));
    let b_cmd = entry(directory(b), "cmd");
    assert_eq!((access_mode(fd(b, b_cmd.data_fd)), access_mode(fd(b, b_cmd.consumer_fd))), (libc::O_RDWR, libc::O_RDONLY));
    // Neither the directory nor B's end of A's sampling channel can be mapped writable.
    assert!(map(&a.fds[0], std::mem::size_of::<PortDirectory>(), libc::PROT_READ | libc::PROT_WRITE).is_none());
    let len = partita_abi::ports::sampling_area_bytes(16);
    let b_in = fd(b, entry(directory(b), "in").data_fd);
    assert_eq!(access_mode(b_in), libc::O_RDONLY);
    assert!(map(b_in, len, libc::PROT_READ | libc::PROT_WRITE).is_none(), "a destination cannot map its channel writable");
    // What A writes, B reads.
    let w = map(a_out, len, libc::PROT_READ | libc::PROT_WRITE).unwrap();
    let r = map(b_in, len, libc::PROT_READ).unwrap();
    // SAFETY: both map sampling_area_bytes(16) bytes of the same memfd, page-aligned.
    let (writer, reader) = unsafe { (SamplingArea::from_raw(w, 16), SamplingArea::from_raw(r, 16)) };
    writer.write(b"attitude", 5);
    let mut buf = [0u8; 16];
    assert_eq!(reader.read(&mut buf).map(|m| m.length), Some(8));
    assert_eq!(&buf[..8], b"attitude");
}
