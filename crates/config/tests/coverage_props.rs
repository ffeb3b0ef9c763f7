//! The period-coverage rule against a brute-force count: random windows of one partition,
//! the rule fires exactly when some period [kP, (k+1)P) gets less than the duration, and
//! names the first such period.

use partita_config::check_text;
use proptest::prelude::*;
use std::path::Path;

fn xml(frame_ms: u32, period_ms: u32, duration_ms: u32, windows: &[(u32, u32)]) -> String {
    let mut w = String::new();
    for (i, (start, len)) in windows.iter().enumerate() {
        w.push_str(&format!(
            "<Window_Schedule WindowIdentifier=\"{}\" WindowStartSeconds=\"{}\" WindowDurationSeconds=\"{}\"/>\n",
            i + 1,
            f64::from(*start) / 1000.0,
            f64::from(*len) / 1000.0
        ));
    }
    format!(
        r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
<Partition PartitionIdentifier="1" PartitionName="A" pt:Executable="a"/>
<Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="{}">
<Partition_Schedule PartitionIdentifier="1" PeriodSeconds="{}" PeriodDurationSeconds="{}">
{w}</Partition_Schedule>
</Module_Schedule>
</ARINC_653_Module>"#,
        f64::from(frame_ms) / 1000.0,
        f64::from(period_ms) / 1000.0,
        f64::from(duration_ms) / 1000.0
    )
}

/// Per-millisecond brute force: the first period that gets less than `duration_ms`.
fn first_short_period(frame_ms: u32, period_ms: u32, duration_ms: u32, windows: &[(u32, u32)]) -> Option<u32> {
    let mut covered = vec![false; frame_ms as usize];
    for &(start, len) in windows {
        for t in start..(start + len).min(frame_ms) {
            covered[t as usize] = true;
        }
    }
    (0..frame_ms / period_ms).find(|k| {
        let got = (k * period_ms..(k + 1) * period_ms).filter(|&t| covered[t as usize]).count() as u32;
        got < duration_ms
    })
}

proptest! {
    #[test]
    fn coverage_rule_matches_brute_force(
        periods in 1u32..12,
        period_ms in 1u32..20,
        duration_frac in 0u32..=100,
        raw in proptest::collection::vec((0u32..1000, 1u32..30), 0..8),
    ) {
        let frame_ms = periods * period_ms;
        let duration_ms = period_ms * duration_frac / 100;
        // Windows inside the frame, one core, not overlapping (so only coverage can fail).
        let mut windows: Vec<(u32, u32)> = Vec::new();
        for (s, l) in raw {
            let start = s % frame_ms;
            let len = l.min(frame_ms - start);
            if len > 0 && windows.iter().all(|&(a, b)| start + len <= a || a + b <= start) {
                windows.push((start, len));
            }
        }
        let checked = check_text(&xml(frame_ms, period_ms, duration_ms, &windows), Path::new("/nonexistent"));
        let errors: Vec<_> = checked.errors().collect();
        match first_short_period(frame_ms, period_ms, duration_ms, &windows) {
            None => prop_assert!(errors.is_empty(), "{:#?}", errors),
            Some(k) => {
                prop_assert_eq!(errors.len(), 1, "{:#?}", errors);
                prop_assert_eq!(errors[0].rule.code(), "period-not-covered");
                let needle = format!("in period {k} [");
                prop_assert!(errors[0].message.contains(&needle), "{} lacks {}", errors[0].message, needle);
            }
        }
    }
}
