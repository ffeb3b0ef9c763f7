//! The decoders of partition-writable memory (`partita_abi::untrusted`) on the stable
//! toolchain: every file of the fuzzing corpus (fuzz/corpus/untrusted, so that a crash found
//! once stays fixed), many random byte patterns (no panic, nothing refused let through), and
//! valid values, which decode to themselves.

use partita_abi::untrusted::{self, Request, RingSlot};
use partita_abi::{HmReport, TraceEvent, error_code, event, mode, request, system_state};
use proptest::prelude::*;
use std::path::Path;

#[test]
fn every_corpus_file_runs_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/untrusted");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        untrusted::fuzz_one(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 8, "corpus {} has {n} files", dir.display());
}

#[test]
fn fixed_patterns_run_clean() {
    for byte in [0u8, 0xff, 0x7f, 0x80, 1] {
        for len in [0, 1, 7, 64, 200, 1000, 4000] {
            untrusted::fuzz_one(&vec![byte; len]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..1200)) {
        untrusted::fuzz_one(&data);
    }

    #[test]
    fn valid_trace_events_decode_to_themselves(
        now in 0i64..1 << 50,
        back in 0i64..1 << 40,
        kind in 1u32..=11,
        core in 0u32..16,
        process in 0i64..1000,
        m in (0u32..4, 0u32..4),
        shared in (1i64..=239, 0i64..239),
        mismatch in (1u32..=2, 1u32..=6, any::<u32>()),
        b in any::<i64>(),
    ) {
        let (a, b) = match kind {
            event::MODE_CHANGE => (i64::from(m.0), i64::from(m.1)),
            event::PRIORITIES_SHARED => (shared.0, (shared.0 + shared.1).min(239)),
            event::CONFIG_MISMATCH => (partita_abi::config_mismatch::pack(mismatch.0, mismatch.1, mismatch.2), b),
            _ => (process, b),
        };
        let e = TraceEvent { t_ns: now - back, kind, core, a, b };
        prop_assert_eq!(untrusted::trace_event(e, 1 << core, now), Ok(e));
        // The same event from a core the partition does not have is refused.
        prop_assert!(untrusted::trace_event(e, !(1u32 << core) & 0xffff, now).is_err());
    }

    #[test]
    fn shared_priorities_out_of_1_to_239_or_out_of_order_are_refused(now in 1i64..1 << 50, a in 1i64..=239, over in 1i64..1000) {
        let e = |a, b| TraceEvent { t_ns: now, kind: event::PRIORITIES_SHARED, core: 0, a, b };
        prop_assert!(untrusted::trace_event(e(a, a), 1, now).is_ok());
        prop_assert!(untrusted::trace_event(e(0, a), 1, now).is_err());
        prop_assert!(untrusted::trace_event(e(a, 239 + over), 1, now).is_err());
        prop_assert!(untrusted::trace_event(e(a, a - over), 1, now).is_err());
    }

    #[test]
    fn valid_hm_reports_decode_to_themselves(
        now in 0i64..1 << 50,
        back in 0i64..1 << 40,
        code in 0..error_code::COUNT,
        process in 0i32..1000,
        exec in any::<bool>(),
        flags in 0u32..4,
    ) {
        let state = if exec { system_state::PARTITION_EXECUTION } else { system_state::PARTITION_INIT };
        let r = HmReport { t_ns: now - back, code, process, state, to_handler: flags };
        prop_assert_eq!(untrusted::hm_report(r, now), Ok(r));
        let unknown = HmReport { code: code + error_code::COUNT, ..r };
        prop_assert!(untrusted::hm_report(unknown, now).is_err());
    }

    #[test]
    fn ring_positions_of_a_correct_ring_are_accepted(tail in any::<u64>(), fill in 0u64..=8, ready in any::<bool>()) {
        let tail = tail.min(u64::MAX - 16);
        let seq = if ready && fill > 0 { tail + 1 } else { tail };
        let want = if ready && fill > 0 { RingSlot::Ready } else { RingSlot::Empty };
        prop_assert_eq!(untrusted::ring_slot("r", tail, tail, tail + fill, seq, 8), Ok(want));
        prop_assert!(untrusted::ring_slot("r", tail, tail, tail + 9, seq, 8).is_err());
    }

    #[test]
    fn queues_within_their_depth_are_accepted(tail in any::<u32>(), n in 0u32..=16, depth in 1u32..=16) {
        let head = tail.wrapping_add(n);
        let got = untrusted::queue_fill(head, tail, depth);
        if n <= depth { prop_assert_eq!(got, Ok(n)) } else { prop_assert!(got.is_err()) }
    }

    #[test]
    fn valid_requests_decode_to_themselves(m in 0u32..3, id in any::<u32>()) {
        prop_assert_eq!(untrusted::request(request::SET_MODE, m, |_| false), Ok(Request::SetMode(m)));
        prop_assert_eq!(untrusted::request(request::SET_MODULE_SCHEDULE, id, |x| x == id), Ok(Request::SetModuleSchedule(id)));
        prop_assert!(untrusted::request(request::SET_MODE, mode::NORMAL, |_| true).is_err());
    }

    #[test]
    fn probes_after_their_window_start_are_accepted(planned in 0i64..1 << 50, late in 0i64..1 << 30, after in 0i64..1 << 30) {
        prop_assert_eq!(untrusted::probe(planned, planned, planned + late, planned + late + after), Ok(Some(planned + late)));
    }
}
