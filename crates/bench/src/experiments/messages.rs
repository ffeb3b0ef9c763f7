//! `messages`: message integrity at scale (issue 10, Deliver 8). 10^7 numbered, checksummed
//! queuing messages (`--quick`: 10^6) and as many sampling messages as the producers write
//! meanwhile, on two channels across the cores in both directions, through windows that overlap
//! and windows that do not, while both receivers restart themselves every half second. Counts
//! lost (beyond counted overflow), duplicated, reordered and torn messages.

use super::partition_programs::{MAX_MESSAGE, arg, check_message, message, run_one};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::machine_lock;
use crate::module_run::{Launch, Watcher, run_watched};
use crate::module_xml::{ModuleXml, Scheduled};
use crate::workload::Workload;
use partita_apex::{
    Name, OperatingMode, PortDirection, QueuingDiscipline, Updated, create_queuing_port, create_sampling_port, get_partition_status,
    get_time, periodic_wait, read_updated_sampling_message, receive_queuing_message, send_queuing_message, set_partition_mode,
    write_sampling_message,
};
use partita_trace::Event;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU64, Ordering};

pub struct Messages;

const MAF_NS: i64 = 10_000_000;

/// (name, workload, core, window start ms, end ms, budget us). Channel A: ProdA (core 0) to
/// ConsA (core 1), windows overlapping 2 ms of 4; channel B: ProdB (core 1) to ConsB (core 0),
/// overlapping 2 ms.
const PARTITIONS: [(&str, &str, u32, f64, f64); 4] = [
    ("ProdA", "msg-producer", 0, 0.0, 4.0),
    ("ConsB", "msg-consumer", 0, 4.0, 8.0),
    ("ConsA", "msg-consumer", 1, 2.0, 6.0),
    ("ProdB", "msg-producer", 1, 6.0, 9.0),
];

/// Receiver restarts: every this many of its periods.
const RESTART_EVERY: u64 = 50;

fn module_xml(programs: &crate::workload::Programs, per_channel: u64) -> String {
    let mut m = ModuleXml::new("Messages", "0-1");
    for (i, (name, workload, _, a, b)) in PARTITIONS.iter().enumerate() {
        // Work until half a millisecond before the window ends (the rest is the flush and the wait).
        let budget = format!("{}", ((b - a) * 1000.0 - 500.0) as i64);
        let first = if workload.ends_with("producer") { per_channel.to_string() } else { RESTART_EVERY.to_string() };
        let attrs = programs.xml_attributes(workload, &[&first, &budget]);
        let dir = if workload.ends_with("producer") { "SOURCE" } else { "DESTINATION" };
        let ports = format!(
            "    <Sampling_Port Name=\"s\" MaxMessageSize=\"64\" Direction=\"{dir}\"/>\n    \
             <Queuing_Port Name=\"q\" MaxMessageSize=\"64\" Direction=\"{dir}\" MaxNbMessages=\"{}\"/>\n",
            DEPTH
        );
        m.partition(i as u32 + 1, name, &attrs, &ports);
    }
    let scheduled: Vec<Scheduled> = PARTITIONS
        .iter()
        .enumerate()
        .map(|(i, (_, _, core, a, b))| Scheduled::one_window(i as u32 + 1, MAF_NS, (a * 1e6) as i64, ((b - a) * 1e6) as i64, *core))
        .collect();
    m.schedule(1, "messages", MAF_NS, false, &scheduled);
    m.channels(&[(1, (1, "q"), (3, "q")), (2, (1, "s"), (3, "s")), (3, (4, "q"), (2, "q")), (4, (4, "s"), (2, "s"))]).finish()
}

/// One queuing channel as the receiver's runs of numbers show it, over all its incarnations.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Stitch {
    /// The next number expected.
    pub expected: u64,
    /// Numbers never received (yet), as inclusive ranges.
    pub gaps: Vec<(u64, u64)>,
    pub received: u64,
    pub duplicated: u64,
    pub reordered: u64,
}

impl Stitch {
    /// Accounts a run `a..=b` of consecutive numbers received in order.
    pub fn run(&mut self, a: u64, b: u64) {
        if b < a {
            return;
        }
        self.received += b - a + 1;
        if a < self.expected {
            // Earlier numbers: those in a gap arrive late (reordered), the others twice.
            let late_end = b.min(self.expected - 1);
            let mut late = 0;
            let mut gaps = Vec::new();
            for &(g0, g1) in &self.gaps {
                let (o0, o1) = (g0.max(a), g1.min(late_end));
                if o0 > o1 {
                    gaps.push((g0, g1));
                    continue;
                }
                late += o1 - o0 + 1;
                if g0 < o0 {
                    gaps.push((g0, o0 - 1));
                }
                if o1 < g1 {
                    gaps.push((o1 + 1, g1));
                }
            }
            self.gaps = gaps;
            self.reordered += late;
            self.duplicated += late_end - a + 1 - late;
            if b < self.expected {
                return;
            }
            self.expected = b + 1;
            return;
        }
        if a > self.expected {
            self.gaps.push((self.expected, a - 1));
        }
        self.expected = b + 1;
    }

    pub fn lost(&self) -> u64 {
        self.gaps.iter().map(|(a, b)| b - a + 1).sum()
    }
}

/// Everything counted over a run.
#[derive(Default)]
struct Tally {
    q: BTreeMap<String, Stitch>,
    /// Receiver -> (key -> sum) of `torn`, `overflowed` and the sampling counts.
    sums: BTreeMap<String, BTreeMap<String, u64>>,
    /// Producer -> (channel -> (key -> latest value)).
    sent: BTreeMap<String, BTreeMap<String, BTreeMap<String, u64>>>,
    names: BTreeMap<u32, String>,
    restarts: BTreeMap<String, u64>,
    lines: u64,
}

impl Tally {
    fn line(&mut self, line: &str) {
        let Some((name, rest)) = line.strip_prefix('[').and_then(|l| l.split_once("] ")) else { return };
        self.lines += 1;
        let words: Vec<&str> = rest.split_whitespace().collect();
        let pairs = |from: usize| -> Vec<(String, u64)> {
            words[from.min(words.len())..].chunks(2).filter_map(|kv| Some((kv.first()?.to_string(), kv.get(1)?.parse().ok()?))).collect()
        };
        match words.as_slice() {
            ["got", "q", rest @ ..] => {
                let stitch = self.q.entry(name.to_string()).or_default();
                let mut i = 0;
                while i < rest.len() {
                    if let Some((a, b)) = rest[i].split_once('-').and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))) {
                        stitch.run(a, b);
                        i += 1;
                    } else if let Some(v) = rest.get(i + 1).and_then(|v| v.parse::<u64>().ok()) {
                        *self.sums.entry(name.to_string()).or_default().entry(format!("q_{}", rest[i])).or_default() += v;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
            }
            ["got", "s", ..] => {
                for (k, v) in pairs(2) {
                    *self.sums.entry(name.to_string()).or_default().entry(format!("s_{k}")).or_default() += v;
                }
            }
            ["chan", chan, ..] => {
                let fields = pairs(2).into_iter().collect();
                self.sent.entry(name.to_string()).or_default().insert(chan.to_string(), fields);
            }
            _ => {}
        }
    }

    fn feed(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::ModuleStart { partitions, .. } => self.names.extend(partitions.iter().map(|p| (p.id, p.name.clone()))),
                Event::PartitionRestart { partition, .. } => {
                    let n = self.names.get(partition).cloned().unwrap_or_default();
                    *self.restarts.entry(n).or_default() += 1;
                }
                _ => {}
            }
        }
    }

    fn received(&self) -> u64 {
        self.q.values().map(|s| s.received).sum()
    }

    fn sum(&self, key: &str) -> u64 {
        self.sums.values().filter_map(|m| m.get(key)).sum()
    }

    fn sent(&self, chan: &str, key: &str) -> u64 {
        self.sent.values().filter_map(|c| c.get(chan)?.get(key)).sum()
    }
}

struct MsgWatch<'a, 'b> {
    tally: Tally,
    ctx: &'a RunContext<'b>,
    messages: u64,
    per_channel: u64,
    last_shown: std::time::Instant,
}

impl Watcher for MsgWatch<'_, '_> {
    fn line(&mut self, line: &str) {
        self.tally.line(line);
    }
    fn events(&mut self, events: &[Event]) {
        self.tally.feed(events);
    }
    /// Every number of both channels arrived.
    fn done(&mut self) -> bool {
        if self.last_shown.elapsed().as_secs() >= 5 {
            self.ctx.progress(&format!("{} of {} received", self.tally.received(), self.messages));
            self.last_shown = std::time::Instant::now();
        }
        self.tally.q.len() == 2 && self.tally.q.values().all(|s| s.expected >= self.per_channel)
    }
}

impl Experiment for Messages {
    fn name(&self) -> &'static str {
        "messages"
    }
    fn reproduces(&self) -> &'static str {
        "issue 10 Deliver 8 (no paper: message integrity at scale)"
    }
    fn description(&self) -> &'static str {
        "One run of a 2-core module (10 ms frame): ProdA (core 0) sends numbered, checksummed messages (9 to 64 bytes) to ConsA \
         (core 1) on a 512-deep queuing channel and writes numbered messages on a sampling channel; ProdB (core 1) does the same \
         to ConsB (core 0). Each pair's windows overlap for half their length (both sides running at once) and not for the \
         other half. Producers send as fast as the queue takes them, keeping a number when the queue is full; the receivers \
         restart themselves (COLD_START) every 50 of their periods after printing what they got. The bench stitches the \
         receivers' runs of numbers over every restart: queuing messages lost (beyond counted overflow: q_overflowed), \
         duplicated, reordered, torn; sampling messages duplicated, reordered or torn within an incarnation (a restarted \
         receiver reads the latest message again by design; overwritten ones are the sampling semantics). Ends when \
         messages queuing messages arrived (10^7; --quick 10^6) or at the seconds limit."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    /// Minutes in full (like `soak`): only by name.
    fn in_all(&self) -> bool {
        false
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let (messages, secs) = if quick { (1_000_000u64, 40u64) } else { (10_000_000, 1800) };
        vec![params([("messages", messages.into()), ("seconds", secs.into())])]
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let messages = p["messages"].as_u64().unwrap_or(200_000).max(2);
        let secs = p["seconds"].as_u64().unwrap_or(30).max(5);
        if !crate::machine::privileged() {
            return Err("running a module needs root (cgroups, real-time priorities)".into());
        }
        if super::c_workloads::cpus() < 2 {
            ctx.note("needs 2 CPUs: skipped");
            return Ok(());
        }
        let per_channel = messages.div_ceil(2);
        let config = ctx.scratch.join("messages.xml");
        std::fs::write(&config, module_xml(ctx.programs, per_channel)).map_err(|e| format!("{}: {e}", config.display()))?;
        let trace = ctx.scratch.join("messages.trace");
        let _machine = machine_lock()?;
        let mut w = MsgWatch { tally: Tally::default(), ctx, messages, per_channel, last_shown: std::time::Instant::now() };
        let ended = run_watched(&Launch::for_duration(&ctx.programs.exe, &config, secs, &trace, &[]), &mut w)?;
        let t = w.tally;
        ctx.sample("run_seconds", Unit::Count, ended.seconds);
        ctx.sample("q_sent", Unit::Count, t.sent("q", "sent") as f64);
        ctx.sample("q_full", Unit::Count, t.sent("q", "full") as f64);
        ctx.sample("q_received", Unit::Count, t.received() as f64);
        ctx.sample("q_lost", Unit::Count, t.q.values().map(Stitch::lost).sum::<u64>() as f64);
        ctx.sample("q_duplicated", Unit::Count, t.q.values().map(|s| s.duplicated).sum::<u64>() as f64);
        ctx.sample("q_reordered", Unit::Count, t.q.values().map(|s| s.reordered).sum::<u64>() as f64);
        ctx.sample("q_torn", Unit::Count, t.sum("q_torn") as f64);
        ctx.sample("q_overflowed", Unit::Count, t.sum("q_overflowed") as f64);
        // Sent but not received when the run ended (in the queue or not yet printed).
        let in_flight = t.sent("q", "sent").saturating_sub(t.q.values().map(|s| s.expected).sum());
        ctx.sample("q_in_flight_at_end", Unit::Count, in_flight as f64);
        ctx.sample("s_sent", Unit::Count, t.sent("s", "sent") as f64);
        for k in ["received", "duplicated", "reordered", "torn"] {
            ctx.sample(&format!("s_{k}"), Unit::Count, t.sum(&format!("s_{k}")) as f64);
        }
        for (name, n) in &t.restarts {
            ctx.sample(&format!("restarts_{name}"), Unit::Count, *n as f64);
        }
        ctx.sample(
            "receiver_restarts",
            Unit::Count,
            t.restarts.iter().filter(|(n, _)| n.starts_with("Cons")).map(|(_, v)| v).sum::<u64>() as f64,
        );
        ctx.sample("output_lines", Unit::Count, t.lines as f64);
        if t.received() < messages {
            ctx.note(format!("{} of {messages} queuing messages arrived within {secs} s", t.received()));
        }
        if ended.overran || !(ended.success || ended.stopped_early) {
            return Err(format!("partita run did not end cleanly:\n{}", ended.stderr_tail));
        }
        Ok(())
    }
}

// The partition programs of `messages` (`partita bench-partition NAME ARGS`), written against
// the `partita_apex` Rust API (no C compiler needed); the messages are the numbered, checksummed
// ones of partition_programs.rs.

/// `msg-producer COUNT BUDGET_US`: each period, for BUDGET_US, sends numbered, checksummed
/// messages on queuing port `q` (a full queue keeps the number for the next try: nothing is
/// skipped) and writes its own numbered messages on sampling port `s`, until COUNT queuing
/// messages are sent. Prints `chan q sent N full F` and `chan s sent N` every [`FLUSH_EVERY`]
/// periods.
pub static MSG_PRODUCER: Workload = Workload {
    name: "msg-producer",
    description: "sends COUNT numbered, checksummed queuing messages and writes sampling messages, BUDGET_US per period",
    main: producer_main,
};
/// `msg-consumer RESTART_EVERY BUDGET_US`: each period, for BUDGET_US, drains `q` and reads
/// `s`; every [`FLUSH_EVERY`] periods prints what it received since the last line: `got q`
/// and the runs of consecutive numbers (`A-B`), torn and overflow counts, and `got s` with
/// the sampling counts. Every RESTART_EVERY periods it prints its last line and restarts
/// itself (SET_PARTITION_MODE COLD_START): the queue outlives the receiver, so the bench
/// stitches the runs of every incarnation together (a receiver keeps no memory over a restart).
pub static MSG_CONSUMER: Workload = Workload {
    name: "msg-consumer",
    description: "receives queuing and sampling messages and prints the runs of numbers it got; restarts every RESTART_EVERY periods",
    main: consumer_main,
};

/// Periods between two `chan` / `got` lines.
pub const FLUSH_EVERY: u64 = 10;
/// Queue depth of the message channels.
pub const DEPTH: i32 = 512;
static SEND_COUNT: AtomicI64 = AtomicI64::new(0);
static BUDGET_NS: AtomicI64 = AtomicI64::new(0);
static Q: AtomicI32 = AtomicI32::new(0);
static S: AtomicI32 = AtomicI32::new(0);
fn ports(direction: PortDirection) -> Result<(), String> {
    let q = create_queuing_port(&Name::from("q"), MAX_MESSAGE as i32, DEPTH, direction, QueuingDiscipline::Fifo);
    let s = create_sampling_port(&Name::from("s"), MAX_MESSAGE as i32, direction, 1_000_000_000);
    match (q, s) {
        (Ok(q), Ok(s)) => {
            Q.store(q, Ordering::Relaxed);
            S.store(s, Ordering::Relaxed);
            Ok(())
        }
        (q, s) => Err(format!("ports: {q:?} {s:?}")),
    }
}

extern "C" fn producer_process() {
    let (q, s) = (Q.load(Ordering::Relaxed), S.load(Ordering::Relaxed));
    let (count, budget) = (SEND_COUNT.load(Ordering::Relaxed) as u64, BUDGET_NS.load(Ordering::Relaxed));
    let mut buf = [0u8; MAX_MESSAGE];
    let (mut sent, mut full, mut written, mut periods) = (0u64, 0u64, 0u64, 0u64);
    loop {
        let start = get_time();
        while sent < count && get_time() - start < budget {
            let len = message(sent as u32, &mut buf);
            match send_queuing_message(q, &buf[..len], 0) {
                Ok(()) => sent += 1,
                Err(_) => full += 1,
            }
            let len = message(written as u32, &mut buf);
            if write_sampling_message(s, &buf[..len]).is_ok() {
                written += 1;
            }
        }
        periods += 1;
        if periods.is_multiple_of(FLUSH_EVERY) {
            println!("chan q sent {sent} full {full}");
            println!("chan s sent {written}");
        }
        let _ = periodic_wait();
    }
}

fn producer_main(args: &[String]) -> i32 {
    SEND_COUNT.store(arg(args, 0, 1000), Ordering::Relaxed);
    BUDGET_NS.store(arg(args, 1, 3000) * 1000, Ordering::Relaxed);
    match ports(PortDirection::Source) {
        Ok(()) => run_one("PRODUCE", producer_process, get_partition_status().period),
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

/// What a receiver got since its last line: runs of consecutive queuing numbers and counts.
#[derive(Debug, Default)]
struct Got {
    runs: Vec<(u32, u32)>,
    q_torn: u64,
    q_overflowed: u64,
    s_received: u64,
    s_duplicated: u64,
    s_reordered: u64,
    s_torn: u64,
    s_last: Option<u32>,
}

impl Got {
    fn queued(&mut self, seq: Option<u32>, overflowed: bool) {
        self.q_overflowed += overflowed as u64;
        let Some(seq) = seq else {
            self.q_torn += 1;
            return;
        };
        match self.runs.last_mut() {
            Some(r) if r.1.wrapping_add(1) == seq => r.1 = seq,
            _ => self.runs.push((seq, seq)),
        }
    }

    /// A new sampling message (per incarnation: a restarted receiver reads the latest again).
    fn sampled(&mut self, seq: Option<u32>) {
        let Some(seq) = seq else {
            self.s_torn += 1;
            return;
        };
        self.s_received += 1;
        match self.s_last {
            Some(l) if seq == l => self.s_duplicated += 1,
            Some(l) if seq < l => self.s_reordered += 1,
            _ => self.s_last = Some(seq),
        }
    }

    /// The `got` lines; the counts start again (the last sampling number is kept).
    fn flush(&mut self) {
        let mut line = String::from("got q");
        for (a, b) in self.runs.drain(..) {
            let _ = write!(line, " {a}-{b}");
        }
        let _ = write!(line, " torn {} overflowed {}", self.q_torn, self.q_overflowed);
        println!("{line}");
        println!("got s received {} duplicated {} reordered {} torn {}", self.s_received, self.s_duplicated, self.s_reordered, self.s_torn);
        *self = Got { s_last: self.s_last, ..Got::default() };
    }
}

static PERIODS_LEFT: AtomicU64 = AtomicU64::new(0);

extern "C" fn consumer_process() {
    let (q, s) = (Q.load(Ordering::Relaxed), S.load(Ordering::Relaxed));
    let budget = BUDGET_NS.load(Ordering::Relaxed);
    let mut buf = [0u8; MAX_MESSAGE];
    let mut got = Got::default();
    let mut periods = 0u64;
    loop {
        let start = get_time();
        while get_time() - start < budget {
            while let Ok(m) = receive_queuing_message(q, 0, &mut buf) {
                got.queued(check_message(&buf[..m.length.min(MAX_MESSAGE)]), m.overflowed);
            }
            if let (Ok(len), Updated::NewMessage) = read_updated_sampling_message(s, &mut buf) {
                got.sampled(check_message(&buf[..len.min(MAX_MESSAGE)]));
            }
        }
        periods += 1;
        let restart = PERIODS_LEFT.load(Ordering::Relaxed) == periods;
        if restart || periods.is_multiple_of(FLUSH_EVERY) {
            got.flush();
        }
        if restart {
            // Nothing received is left unprinted: the restart loses no message of the count.
            let _ = set_partition_mode(OperatingMode::ColdStart as u32);
        }
        let _ = periodic_wait();
    }
}

fn consumer_main(args: &[String]) -> i32 {
    PERIODS_LEFT.store(arg(args, 0, 0).max(0) as u64, Ordering::Relaxed);
    BUDGET_NS.store(arg(args, 1, 3000) * 1000, Ordering::Relaxed);
    match ports(PortDirection::Destination) {
        Ok(()) => run_one("CONSUME", consumer_process, get_partition_status().period),
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Programs;

    #[test]
    fn the_messages_module_is_valid() {
        Programs::checked_module_xml(|p| module_xml(p, 1000));
    }

    #[test]
    fn stitching_counts_gaps_late_and_repeated_numbers() {
        let mut s = Stitch::default();
        s.run(0, 9);
        s.run(10, 19);
        assert_eq!((s.lost(), s.duplicated, s.reordered), (0, 0, 0));
        s.run(25, 30);
        assert_eq!(s.lost(), 5, "20..=24 missing");
        s.run(21, 22);
        assert_eq!((s.lost(), s.reordered, s.duplicated), (3, 2, 0));
        s.run(28, 31);
        assert_eq!((s.duplicated, s.expected), (3, 32));
        assert_eq!(s.received, 10 + 10 + 6 + 2 + 4);
    }

    #[test]
    fn a_receiver_records_runs_of_consecutive_numbers() {
        let mut g = Got::default();
        for s in [Some(4), Some(5), Some(6), Some(9), None, Some(10), Some(2)] {
            g.queued(s, false);
        }
        assert_eq!(g.runs, [(4, 6), (9, 10), (2, 2)]);
        assert_eq!(g.q_torn, 1);
        for s in [Some(1), Some(3), Some(3), Some(2), None] {
            g.sampled(s);
        }
        assert_eq!((g.s_received, g.s_duplicated, g.s_reordered, g.s_torn), (4, 1, 1, 1));
    }
}
