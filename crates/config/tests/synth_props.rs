//! Properties of window synthesis on random partition sets: what it calls schedulable is a
//! valid configuration that gives every partition its duration in every period (checked
//! here from the parsed output, independently of the validator), and on one core every set
//! with utilization at most 100 % is schedulable (EDF is optimal there).

use partita_config::check_text;
use partita_config::model::Module;
use partita_config::synth::synthesize;
use proptest::prelude::*;
use std::path::Path;

const US: i64 = 1_000;
const MS: i64 = 1_000_000;

/// Harmonic-ish period sets (ms) and their least common multiple.
const PERIOD_SETS: [(&[i64], i64); 2] = [(&[5, 10, 20, 40], 40), (&[10, 20, 25, 50, 100], 100)];
const LEVELS: [&str; 5] = ["LEVEL_A", "LEVEL_B", "LEVEL_C", "LEVEL_D", "LEVEL_E"];

#[derive(Debug, Clone)]
struct Part {
    period: i64,
    duration: i64,
    level: usize,
}

#[derive(Debug, Clone)]
struct Request {
    cores: u32,
    frame: i64,
    parts: Vec<Part>,
    /// A partition that keeps windows `[kP, kP + d)` on core 0: (P, d).
    kept: Option<(i64, i64)>,
}

impl Request {
    fn demand(&self) -> i64 {
        self.parts.iter().map(|p| p.duration * (self.frame / p.period)).sum::<i64>() + self.kept.map_or(0, |(p, d)| d * (self.frame / p))
    }

    fn xml(&self) -> String {
        let mut s =
            String::from("<?xml version=\"1.0\"?>\n<!-- generated -->\n<ARINC_653_Module xmlns:pt=\"urn:partita:1\" ModuleName=\"Gen\">\n");
        s.push_str(&format!("  <pt:Cores Cpus=\"0-{}\"/>\n", self.cores - 1));
        for (i, p) in self.parts.iter().enumerate() {
            s.push_str(&format!(
                "  <Partition PartitionIdentifier=\"{}\" PartitionName=\"P{}\" Criticality=\"{}\" pt:Executable=\"bin/p\"/>\n",
                i + 1,
                i + 1,
                LEVELS[p.level]
            ));
        }
        if self.kept.is_some() {
            s.push_str("  <Partition PartitionIdentifier=\"100\" PartitionName=\"K\" Criticality=\"LEVEL_B\" pt:Executable=\"bin/k\"/>\n");
        }
        s.push_str(&format!(
            "  <Module_Schedule ScheduleIdentifier=\"1\" ScheduleName=\"gen\" MajorFrameSeconds=\"{}\">\n",
            secs(self.frame)
        ));
        for (i, p) in self.parts.iter().enumerate() {
            s.push_str(&format!(
                "    <Partition_Schedule PartitionIdentifier=\"{}\" PeriodSeconds=\"{}\" PeriodDurationSeconds=\"{}\"/>\n",
                i + 1,
                secs(p.period),
                secs(p.duration)
            ));
        }
        if let Some((period, d)) = self.kept {
            s.push_str(&format!(
                "    <Partition_Schedule PartitionIdentifier=\"100\" PeriodSeconds=\"{}\" PeriodDurationSeconds=\"{}\">\n",
                secs(period),
                secs(d)
            ));
            for k in 0..self.frame / period {
                s.push_str(&format!(
                    "      <Window_Schedule WindowIdentifier=\"{}\" WindowStartSeconds=\"{}\" WindowDurationSeconds=\"{}\" PartitionPeriodStart=\"true\" pt:Core=\"0\"/>\n",
                    k + 1,
                    secs(k * period),
                    secs(d)
                ));
            }
            s.push_str("    </Partition_Schedule>\n");
        }
        s.push_str("  </Module_Schedule>\n</ARINC_653_Module>\n");
        s
    }
}

/// Seconds as a decimal string, written here rather than with the crate's formatter.
fn secs(ns: i64) -> String {
    let text = format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn request() -> impl Strategy<Value = Request> {
    (1u32..=3, 0usize..PERIOD_SETS.len(), 200i64..=1300, proptest::collection::vec((0usize..5, 1i64..=100, 0usize..5), 1..=12), 0u8..4)
        .prop_map(|(cores, set, target_permille, raw, kept_pick)| {
            let (periods, frame_ms) = PERIOD_SETS[set];
            let weights: i64 = raw.iter().map(|r| r.1).sum();
            // Total utilization about `target_permille / 1000` per core, split by weight;
            // durations in whole microseconds.
            let parts = raw
                .iter()
                .map(|&(pi, w, level)| {
                    let period = periods[pi % periods.len()] * MS;
                    let us = period / US * i64::from(cores) * target_permille * w / (1000 * weights);
                    Part { period, duration: (us * US).min(period), level }
                })
                .collect();
            // One time in four, a partition keeps 1 ms windows at the start of its periods.
            let kept = (kept_pick == 0).then(|| (periods[periods.len() - 1] * MS, MS));
            Request { cores, frame: frame_ms * MS, parts, kept }
        })
}

/// (start, end, core, period_start) of partition `id`'s windows.
fn windows_of(m: &Module, id: u32) -> Vec<(i64, i64, u32, bool)> {
    let ps =
        m.schedules[0].partitions.iter().find(|ps| ps.partition.id.as_ref().map(|i| i.value) == Some(id)).expect("partition schedule kept");
    let mut v: Vec<_> =
        ps.windows.iter().map(|w| (w.start.value.0, w.start.value.0 + w.duration.value.0, w.core.value, w.period_start)).collect();
    v.sort_unstable();
    v
}

fn check_output(req: &Request, xml: &str) -> Result<(), TestCaseError> {
    let checked = check_text(xml, Path::new("."));
    let errors: Vec<_> = checked.errors().collect();
    prop_assert!(errors.is_empty(), "errors {errors:#?}\n{xml}");
    let m = checked.module.expect("valid output has a model");
    let mut per_core: Vec<Vec<(i64, i64)>> = vec![Vec::new(); req.cores as usize];
    for (i, part) in req.parts.iter().enumerate() {
        let ws = windows_of(&m, i as u32 + 1);
        if part.duration == 0 {
            prop_assert!(ws.is_empty());
            continue;
        }
        // Inside the frame, on a declared core, disjoint.
        for w in &ws {
            prop_assert!(0 <= w.0 && w.0 < w.1 && w.1 <= req.frame, "window {w:?}");
            prop_assert!(w.2 < req.cores, "window {w:?}");
            per_core[w.2 as usize].push((w.0, w.1));
        }
        for pair in ws.windows(2) {
            prop_assert!(pair[0].1 <= pair[1].0, "windows {pair:?} of P{} overlap", i + 1);
        }
        // The duration in every period, and one period-start window at its beginning.
        for k in 0..req.frame / part.period {
            let (lo, hi) = (k * part.period, (k + 1) * part.period);
            let got: i64 = ws.iter().map(|w| (w.1.min(hi) - w.0.max(lo)).max(0)).sum();
            prop_assert!(got >= part.duration, "P{} gets {got} of {} in [{lo}, {hi})", i + 1, part.duration);
            let inside: Vec<_> = ws.iter().filter(|w| w.0 >= lo && w.0 < hi).collect();
            prop_assert!(inside.first().is_some_and(|w| w.3), "P{} period {k}: first window not a period start", i + 1);
            prop_assert_eq!(inside.iter().filter(|w| w.3).count(), 1);
        }
    }
    if req.kept.is_some() {
        for w in windows_of(&m, 100) {
            per_core[w.2 as usize].push((w.0, w.1));
        }
    }
    for (core, mut v) in per_core.into_iter().enumerate() {
        v.sort_unstable();
        for pair in v.windows(2) {
            prop_assert!(pair[0].1 <= pair[1].0, "core {core}: windows {pair:?} overlap");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn synthesis_is_sound(req in request()) {
        let text = req.xml();
        let out = synthesize(&text, Path::new(".")).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(out.schedulable, out.reasons.is_empty());
        if out.schedulable {
            check_output(&req, &out.xml)?;
            // A complete configuration is left as it is.
            let again = synthesize(&out.xml, Path::new(".")).map_err(|e| TestCaseError::fail(format!("{e}")))?;
            prop_assert!(again.schedulable);
            prop_assert_eq!(&again.xml, &out.xml);
        }
        // More work than the cores have time for can never be scheduled.
        if req.demand() > i64::from(req.cores) * req.frame {
            prop_assert!(!out.schedulable, "demand {} over {} core(s) called schedulable", req.demand(), req.cores);
        }
        // EDF on one core: utilization <= 100 % is enough.
        if req.cores == 1 && req.kept.is_none() && req.demand() <= req.frame {
            prop_assert!(out.schedulable, "utilization {} <= 1 not schedulable: {:#?}", req.demand() as f64 / req.frame as f64, out.report);
        }
        // Deterministic.
        let twice = synthesize(&text, Path::new(".")).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(twice.xml, out.xml);
        prop_assert_eq!(twice.report, out.report);
    }
}

/// A request damaged by a few random edits: cuts, and insertions of XML-ish fragments.
fn damaged() -> impl Strategy<Value = String> {
    let fragment = prop::sample::select(vec![
        "<",
        ">",
        "/>",
        "\"",
        "=",
        "0",
        "0.0",
        "-1",
        "9",
        // Huge frames: validation and synthesis must stay bounded.
        "1e9",
        "<!--",
        "-->",
        "pt:",
        "xmlns:pt=\"x\" ",
        " ",
        "\n",
        "&",
    ]);
    (request(), proptest::collection::vec((any::<prop::sample::Index>(), 0usize..8, prop::option::of(fragment)), 1..4)).prop_map(
        |(req, edits)| {
            let mut text = req.xml();
            for (at, cut, insert) in edits {
                let start = at.index(text.len() + 1);
                let end = (start + cut).min(text.len());
                text.replace_range(start..end, insert.unwrap_or(""));
            }
            text
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Damaged requests end in diagnostics or a verdict, never a panic; what is called
    /// schedulable is still a valid configuration.
    #[test]
    fn damaged_requests_do_not_panic(text in damaged()) {
        match synthesize(&text, Path::new(".")) {
            Err(partita_config::synth::SynthError::NotAModule(d)) => prop_assert!(!d.is_empty()),
            Ok(out) if out.schedulable => {
                let checked = check_text(&out.xml, Path::new("."));
                let errors: Vec<_> = checked.errors().filter(|d| d.rule != partita_config::diag::Rule::MissingExecutable).collect();
                prop_assert!(errors.is_empty(), "{errors:#?}\n{}", out.xml);
            }
            Ok(_) => {}
        }
    }
}
