//! The streaming summary (what `partita run` prints) against the whole-trace one (what
//! `partita trace --summary` prints) on a trace long enough to be checked in many pieces.

mod long_trace;

use long_trace::{MAF, trace};
use partita_trace::stream::SummaryBuilder;
use partita_trace::summary::summarize;

#[test]
fn streaming_summary_equals_the_whole_trace_summary() {
    // 3000 frames = 60 s: about 30 pieces of the 1 s margin.
    let events = trace(3000);
    let whole = summarize(&events);
    let mut b = SummaryBuilder::streaming(2 * MAF, 1000);
    events.iter().for_each(|e| b.push(e));
    assert_eq!(b.late_events(), 0);
    let streamed = b.finish();

    // The planted faults are found, the same in both.
    assert_eq!(whole.check.overlaps, 3000 / 97 + 1);
    assert_eq!(whole.check.out_of_window, 3000 / 89 + 1);
    assert_eq!(streamed.check, whole.check);
    assert_eq!((streamed.frames, streamed.frames_counted, streamed.events), (whole.frames, whole.frames_counted, whole.events));
    assert_eq!((streamed.first_t, streamed.last_t), (whole.first_t, whole.last_t));
    assert_eq!(streamed.partitions, whole.partitions);
    assert_eq!(streamed.processes, whole.processes);
    assert_eq!(streamed.totals, whole.totals);
    assert_eq!(streamed.totals.restarts, 60);
    assert_eq!(streamed.restarts, whole.restarts);
    assert_eq!(streamed.mode_changes, whole.mode_changes);
    assert_eq!(streamed.hm_events, whole.hm_events);
    for (s, w) in streamed.cores.iter().zip(&whole.cores) {
        assert_eq!((s.core, s.windows, s.run_intervals), (w.core, w.windows, w.run_intervals));
        for (a, b) in [(&s.lateness, &w.lateness), (&s.pcs, &w.pcs), (&s.end_lateness, &w.end_lateness), (&s.stop, &w.stop)] {
            let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
            // The same samples: the same sketch, up to the running variance's rounding.
            assert_eq!((a.n, a.min, a.max, a.median, a.p99), (b.n, b.min, b.max, b.median, b.p99));
            assert!((a.stddev - b.stddev).abs() <= 1e-6 * b.stddev.max(1.0));
        }
    }
    assert_eq!(streamed.to_string(), whole.to_string());
}

#[test]
fn lists_keep_the_earliest_entries_and_count_all() {
    let events = trace(3000);
    let mut b = SummaryBuilder::streaming(2 * MAF, 7);
    events.iter().for_each(|e| b.push(e));
    let s = b.finish();
    let whole = summarize(&events);
    assert_eq!(s.totals, whole.totals);
    assert_eq!(s.restarts.len(), 7);
    assert_eq!(s.restarts[..], whole.restarts[..7]);
    let text = s.to_string();
    assert!(text.contains("partition restarts: 60\n"), "{text}");
    assert!(text.contains("  ... and 53 more\n"), "{text}");
}
