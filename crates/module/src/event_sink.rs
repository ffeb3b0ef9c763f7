//! Where the run's events go: the trace file and the run summary, both written by a consumer
//! thread of their own at `SCHED_OTHER`. The lifecycle thread (real-time, on the module's CPUs)
//! only hands each event over; the summary's timeline check (about once a second, over a few
//! seconds of events) and the file writes no longer take time from a partition at real-time
//! priority (docs/trace.md).

use crate::backend::rt;
use partita_trace::Event;
use partita_trace::stream::SummaryBuilder;
use partita_trace::summary::TraceSummary;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

/// Events in flight between the lifecycle thread and the consumer. A full channel makes the
/// lifecycle thread wait (nothing is dropped): with partitions busy at real-time priority the
/// consumer still runs in the time real-time throttling leaves to normal threads.
const IN_FLIGHT: usize = 1 << 16;

/// The producer side, owned by whoever drains events (the lifecycle thread, then `run`).
pub struct EventSink {
    tx: Option<SyncSender<Event>>,
    consumer: Option<JoinHandle<Consumed>>,
    /// Times the channel was full and the producer had to wait.
    pub waited: u64,
}

/// What the consumer leaves when the sink is finished.
struct Consumed {
    summary: TraceSummary,
    /// The trace file's last flush failed (a failed write during the run only stops the trace,
    /// with a warning).
    write_error: Option<io::Error>,
}

impl EventSink {
    /// Starts the consumer: `file` (if any) gets every event as a JSON line, `summary` every
    /// event.
    pub fn start(file: Option<BufWriter<File>>, summary: SummaryBuilder) -> io::Result<EventSink> {
        let (tx, rx) = sync_channel(IN_FLIGHT);
        let consumer = std::thread::Builder::new().name("partita-events".into()).spawn(move || consume(rx, file, summary))?;
        Ok(EventSink { tx: Some(tx), consumer: Some(consumer), waited: 0 })
    }

    pub fn push(&mut self, e: Event) {
        let Some(tx) = &self.tx else { return };
        match tx.try_send(e) {
            Ok(()) => {}
            Err(TrySendError::Full(e)) => {
                self.waited += 1;
                let _ = tx.send(e);
            }
            Err(TrySendError::Disconnected(_)) => {}
        }
    }

    /// Ends the consumer once it has every event: the summary, and the error of the trace's
    /// last flush if it failed.
    pub fn finish(mut self) -> (TraceSummary, Option<io::Error>) {
        drop(self.tx.take());
        let c = self.consumer.take().expect("a sink is finished once").join().expect("the event consumer does not panic");
        (c.summary, c.write_error)
    }
}

fn consume(rx: Receiver<Event>, mut file: Option<BufWriter<File>>, mut summary: SummaryBuilder) -> Consumed {
    // Created by a thread that may run at real-time priority: this one must not.
    if let Err(e) = rt::set_current_normal() {
        eprintln!("partita: warning: the trace consumer cannot leave real-time priority: {e}");
    }
    for e in rx {
        if let Some(f) = &mut file
            && let Err(err) = e.write_line(f)
        {
            eprintln!("partita: cannot write the trace: {err}; it stops here");
            file = None;
        }
        summary.push(&e);
    }
    let write_error = file.as_mut().and_then(|f| f.flush().err());
    Consumed { summary: summary.finish(), write_error }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_reaches_the_file_and_the_summary_in_order_even_past_the_channel() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.trace");
        let file = BufWriter::new(File::create(&path).unwrap());
        let mut sink = EventSink::start(Some(file), SummaryBuilder::streaming(1_000_000_000, 10)).unwrap();
        let n = IN_FLIGHT as i64 * 3;
        for t in 0..n {
            sink.push(Event::ScheduleChange { t, from: 1, to: 2 });
        }
        let (summary, err) = sink.finish();
        assert!(err.is_none());
        assert_eq!(summary.events as i64, n, "the summary saw every event");
        let events = partita_trace::read_trace(io::BufReader::new(File::open(&path).unwrap())).unwrap();
        assert_eq!(events.len() as i64, n);
        assert!(events.iter().enumerate().all(|(i, e)| e.t() == i as i64), "events out of order");
    }
}
