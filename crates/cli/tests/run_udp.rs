//! Inter-module channels: two `partita run` modules, each in its own network namespace joined
//! by a veth pair, exchange a queuing and a sampling channel over UDP (Pseudo_Partition ends).
//! Every message arrives once and in order; malformed and stale datagrams sent straight to the
//! receiving module are counted and never delivered; a destination queue that overflows says
//! so on its next receive. Needs root and `ip`/`nsenter` (skipped with a message otherwise; a
//! failure with CI=true).

mod machine;
mod partitions;
use partitions::{build, privileged};
use std::path::Path;
use std::process::{Command, Output};

/// Two network namespaces joined by a veth pair, removed on drop.
struct Link {
    a: String,
    b: String,
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip").args(args).status().is_ok_and(|s| s.success())
}

impl Link {
    fn new(tag: u32, addr_a: &str, addr_b: &str) -> Option<Link> {
        let (a, b) = (format!("ptudpA{tag}"), format!("ptudpB{tag}"));
        let (va, vb) = (format!("pta{tag}"), format!("ptb{tag}"));
        let link = Link { a: a.clone(), b: b.clone() };
        let ok = ip(&["netns", "add", &a])
            && ip(&["netns", "add", &b])
            && ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb])
            && ip(&["link", "set", &va, "netns", &a])
            && ip(&["link", "set", &vb, "netns", &b])
            && ip(&["-n", &a, "addr", "add", &format!("{addr_a}/24"), "dev", &va])
            && ip(&["-n", &b, "addr", "add", &format!("{addr_b}/24"), "dev", &vb])
            && ip(&["-n", &a, "link", "set", &va, "up"])
            && ip(&["-n", &b, "link", "set", &vb, "up"])
            && ip(&["-n", &a, "link", "set", "lo", "up"])
            && ip(&["-n", &b, "link", "set", "lo", "up"]);
        ok.then_some(link)
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth pair, and with it the other end.
        ip(&["netns", "del", &self.a]);
        ip(&["netns", "del", &self.b]);
    }
}

/// `partita run` inside network namespace `ns` (nsenter switches only the network namespace;
/// `ip netns exec` would also remount /sys and hide the cgroups).
fn run_in(ns: &str, config: &Path, frames: u32) -> std::process::Child {
    Command::new("nsenter")
        .arg(format!("--net=/run/netns/{ns}"))
        .arg(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["run", config.to_str().unwrap(), "--frames", &frames.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn module(name: &str, cpu: u32, partition: &str, args: &str, exe: &Path, ports: &str, channels: &str) -> String {
    format!(
        r#"<ARINC_653_Module ModuleName="{name}" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="{cpu}"/>
  <Partition PartitionIdentifier="1" PartitionName="{partition}" pt:Executable="{exe}" pt:Arguments="{args}">
{ports}
  </Partition>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.01">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.01"/>
    </Partition_Schedule>
  </Module_Schedule>
  <Connection_Table>
{channels}
  </Connection_Table>
</ARINC_653_Module>
"#,
        exe = exe.display()
    )
}

fn text(o: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Two network namespaces, A's and B's addresses and the tag that names them (test `n` of this
/// binary gets its own: the tests run in parallel), or None (and a message) if they cannot be
/// made.
fn namespaces(n: u32) -> Option<(Link, String, String, u32)> {
    if !privileged() {
        return None;
    }
    let tag = std::process::id() % 5_000 * 2 + n;
    let net = format!("10.{}.{}", 200 + tag % 50, tag % 250);
    let (addr_a, addr_b) = (format!("{net}.1"), format!("{net}.2"));
    let link = Link::new(tag, &addr_a, &addr_b);
    if !partita_testkit::require("network namespaces (ip netns, veth)", link.is_some()) {
        return None;
    }
    let link = link.unwrap();
    Some((link, addr_a, addr_b, tag))
}

/// Runs module B (in namespace B) and, once its partition printed `ready`, module A; both
/// must exit 0. Returns A's and B's output.
fn run_pair(link: &Link, config_a: &Path, frames_a: u32, config_b: &Path, frames_b: u32, ready: &str) -> (String, String) {
    // Both modules hold the machine (the other tests' modules wait), and B listens before A
    // sends: B starts first, A once B's partition has created its ports, and B runs longer.
    let _machine = machine::machine_lock();
    let mut b = run_in(&link.b, config_b, frames_b);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let b_stdout = b.stdout.take().unwrap();
    let ready_line = ready.to_string();
    let b_lines = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(b_stdout)).map_while(Result::ok) {
            if line == ready_line {
                let _ = ready_tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let ready = ready_rx.recv_timeout(std::time::Duration::from_secs(30));
    let a = run_in(&link.a, config_a, frames_a).wait_with_output().unwrap();
    let b = b.wait_with_output().unwrap();
    let out_b = format!("{}\n{}", b_lines.join().unwrap(), String::from_utf8_lossy(&b.stderr));
    assert!(ready.is_ok(), "module B's partition never got ready:\n{out_b}");
    let out_a = text(&a);
    assert_eq!(a.status.code(), Some(0), "{out_a}");
    assert_eq!(b.status.code(), Some(0), "{out_b}");
    (out_a, out_b)
}

#[test]
fn two_modules_exchange_channels_over_udp_and_drop_bad_datagrams() {
    let Some((link, _, addr_b, tag)) = namespaces(0) else { return };
    let dir = tempfile::tempdir().unwrap();
    let exe = build("ports", dir.path());
    let (port_q, port_s) = (47_100 + (tag % 400) as u16 * 2, 47_101 + (tag % 400) as u16 * 2);
    let tx = module(
        "UdpA",
        0,
        "Tx",
        &format!("udptx {addr_b} {port_q}"),
        &exe,
        r#"    <Sampling_Port Name="counter" MaxMessageSize="64" Direction="SOURCE"/>
    <Queuing_Port Name="q" MaxMessageSize="64" Direction="SOURCE" MaxNbMessages="16"/>"#,
        &format!(
            r#"    <Channel ChannelIdentifier="1"><Source><Standard_Partition PartitionIdentifier="1" PortName="q"/></Source>
      <Destination><Pseudo_Partition Name="B" PhysicalAddress="udp:{addr_b}:{port_q}"/></Destination></Channel>
    <Channel ChannelIdentifier="2"><Source><Standard_Partition PartitionIdentifier="1" PortName="counter"/></Source>
      <Destination><Pseudo_Partition Name="B" PhysicalAddress="udp:{addr_b}:{port_s}"/></Destination></Channel>"#
        ),
    );
    let rx = module(
        "UdpB",
        1,
        "Rx",
        "udprx",
        &exe,
        r#"    <Sampling_Port Name="counter" MaxMessageSize="64" Direction="DESTINATION" RefreshRateSeconds="0.1"/>
    <Queuing_Port Name="q" MaxMessageSize="64" Direction="DESTINATION" MaxNbMessages="64"/>"#,
        &format!(
            r#"    <Channel ChannelIdentifier="1"><Source><Pseudo_Partition Name="A" PhysicalAddress="udp:{addr_b}:{port_q}"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="1" PortName="q"/></Destination></Channel>
    <Channel ChannelIdentifier="2"><Source><Pseudo_Partition Name="A" PhysicalAddress="udp:{addr_b}:{port_s}"/></Source>
      <Destination><Standard_Partition PartitionIdentifier="1" PortName="counter"/></Destination></Channel>"#
        ),
    );
    let (config_a, config_b) = (dir.path().join("a.xml"), dir.path().join("b.xml"));
    std::fs::write(&config_a, tx).unwrap();
    std::fs::write(&config_b, rx).unwrap();
    let (out_a, out_b) = run_pair(&link, &config_a, 120, &config_b, 400, "[Rx] rx ready");
    assert!(out_a.contains("[Tx] tx done 300"), "{out_a}");
    assert!(out_b.contains("[Rx] rx done 300 bad 0 torn 0"), "{out_b}\n--- A:\n{out_a}");
    assert!(out_b.contains("[Rx] rx extra 0 samples seen"), "{out_b}");
    assert!(out_a.contains(&format!("channel 1 over udp to {addr_b}:{port_q}: sent 300, malformed 0, stale 0")), "{out_a}");
    // udptx's garbage: one stale, four malformed; none delivered ("rx extra 0" above).
    assert!(
        out_b.contains(&format!("channel 1 over udp from {addr_b}:{port_q}: received 300, malformed 4, stale 1, dropped (queue full) 0")),
        "{out_b}"
    );
}

#[test]
fn a_destination_queue_that_overflowed_says_so_on_the_next_receive() {
    let Some((link, addr_a, addr_b, tag)) = namespaces(1) else { return };
    let dir = tempfile::tempdir().unwrap();
    let exe = build("udp_overflow", dir.path());
    let port = |k: u16| 47_900 + (tag % 250) as u16 * 3 + k;
    // Channel 1 carries the queue, 2 the sender's count and 3 (back) the receiver's "drained";
    // each listens on its destination module's address.
    let channels = [
        (1, "q", true, format!("{addr_b}:{}", port(0))),
        (2, "sent", true, format!("{addr_b}:{}", port(1))),
        (3, "drained", false, format!("{addr_a}:{}", port(2))),
    ];
    // The Connection_Table of module A (`in_a`) or B: a channel end is the module's partition
    // port or, for the other module's end, the UDP address.
    let table = |in_a: bool| {
        channels
            .iter()
            .map(|(id, name, from_a, address)| {
                let end = |here: bool| {
                    if here {
                        format!(r#"<Standard_Partition PartitionIdentifier="1" PortName="{name}"/>"#)
                    } else {
                        format!(r#"<Pseudo_Partition Name="other" PhysicalAddress="udp:{address}"/>"#)
                    }
                };
                let (source, destination) = (end(*from_a == in_a), end(*from_a != in_a));
                format!(
                    r#"    <Channel ChannelIdentifier="{id}"><Source>{source}</Source><Destination>{destination}</Destination></Channel>"#
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let tx = module(
        "UdpA",
        0,
        "Tx",
        "sender",
        &exe,
        r#"    <Sampling_Port Name="sent" MaxMessageSize="4" Direction="SOURCE"/>
    <Sampling_Port Name="drained" MaxMessageSize="4" Direction="DESTINATION" RefreshRateSeconds="1"/>
    <Queuing_Port Name="q" MaxMessageSize="16" Direction="SOURCE" MaxNbMessages="8"/>"#,
        &table(true),
    );
    let rx = module(
        "UdpB",
        1,
        "Rx",
        "receiver",
        &exe,
        r#"    <Sampling_Port Name="sent" MaxMessageSize="4" Direction="DESTINATION" RefreshRateSeconds="1"/>
    <Sampling_Port Name="drained" MaxMessageSize="4" Direction="SOURCE"/>
    <Queuing_Port Name="q" MaxMessageSize="16" Direction="DESTINATION" MaxNbMessages="8"/>"#,
        &table(false),
    );
    let (config_a, config_b) = (dir.path().join("a.xml"), dir.path().join("b.xml"));
    std::fs::write(&config_a, tx).unwrap();
    std::fs::write(&config_b, rx).unwrap();
    let (out_a, out_b) = run_pair(&link, &config_a, 150, &config_b, 250, "[Rx] receiver ready");
    let report = format!("{out_b}\n--- A:\n{out_a}");
    assert!(out_a.contains("[Tx] sender done 40") && out_a.contains("[Tx] sender done 80"), "{report}");
    assert!(out_a.contains(&format!("channel 1 over udp to {addr_b}:{}: sent 80, malformed 0, stale 0", port(0))), "{report}");
    assert!(!out_b.contains("FAIL"), "{report}");
    // Burst 1: the first receive after the overflow is INVALID_CONFIG (4) with the oldest
    // message intact; later ones NO_ERROR, in order and intact.
    assert!(out_b.contains("[Rx] receiver first rc 4 seq 0 ok 1"), "{report}");
    // Burst 2: handed to the waiting process, the oldest message comes with INVALID_CONFIG;
    // the receive that handed it gets the next one with NO_ERROR.
    assert!(out_b.contains("[Rx] waiter rc 4 seq 40 ok 1"), "{report}");
    assert!(out_b.contains("[Rx] receiver second rc 0 seq 41 ok 1"), "{report}");
    let delivered: Vec<u64> = out_b
        .lines()
        .filter_map(|l| l.strip_prefix("[Rx] receiver done got "))
        .map(|rest| {
            rest.strip_suffix(" later_invalid 0 bad 0")
                .unwrap_or_else(|| panic!("every later receive NO_ERROR, in order and intact:\n{report}"))
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(delivered.len(), 2, "{report}");
    assert!(delivered.iter().all(|n| (8..40).contains(n)), "a full queue's worth delivered, some lost: {delivered:?}\n{report}");
    // What the partition received is what the module accepted; the rest it counted as dropped.
    let got: u64 = delivered.iter().sum();
    assert!(
        out_b.contains(&format!(
            "channel 1 over udp from {addr_b}:{}: received {got}, malformed 0, stale 0, dropped (queue full) {}",
            port(0),
            80 - got
        )),
        "{report}"
    );
}
