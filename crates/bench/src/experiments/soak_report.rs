//! The report section of `soak`: the verdict figures first (what the acceptance of issue 10
//! asks), then the module's memory and descriptors over time (a leak is a rising line), the
//! lateness and PCS distributions per core, every metric's statistics and the notes.

use crate::experiment::Experiment;
use crate::report::svg::{Axes, Series, cdf_chart, line_chart};
use crate::report::{ExperimentData, chart, notes, params_label, section_head, stats_table, table};

/// The figures of the verdict table, in order: (metric, what it is).
const VERDICT: [(&str, &str); 17] = [
    ("windows_planned", "windows planned"),
    ("windows_started", "windows started"),
    ("overlaps", "overlaps (trace)"),
    ("trace_out_of_window", "runs outside windows (trace)"),
    ("samples_checked", "own-clock run intervals checked"),
    ("samples_outside", "of them outside their planned windows"),
    ("samples_outside_enforced", "of them outside the windows as enforced (isolation)"),
    ("restarts", "partition restarts"),
    ("chan_q_sent", "queuing: sent"),
    ("chan_q_received", "queuing: received"),
    ("chan_q_lost", "queuing: lost"),
    ("chan_q_duplicated", "queuing: duplicated"),
    ("chan_q_reordered", "queuing: reordered"),
    ("chan_q_torn", "queuing: torn"),
    ("chan_s_torn", "sampling: torn"),
    ("module_rss_slope_bytes_per_h", "module RSS slope (bytes/h)"),
    ("module_fds_slope_per_h", "module descriptors slope (/h)"),
];

pub fn section<E: Experiment + ?Sized>(e: &E, data: &ExperimentData) -> String {
    let mut h = section_head(e, data);
    let mut rows = vec![std::iter::once("figure".to_string()).chain(data.runs.iter().map(params_label)).collect::<Vec<_>>()];
    for (metric, label) in VERDICT {
        let cells = data
            .runs
            .iter()
            .map(|r| r.point.metrics.get(metric).and_then(|m| m.samples.last()).map_or("-".to_string(), |v| format!("{v:.0}")));
        rows.push(std::iter::once(label.to_string()).chain(cells).collect());
    }
    h += &table(&rows);
    for (metric, title, y, scale) in [
        ("module_rss_bytes", "module RSS over the run", "MiB", 1048576.0),
        ("module_fds", "module descriptors over the run", "descriptors", 1.0),
    ] {
        let series: Vec<Series> = data
            .runs
            .iter()
            .filter_map(|r| {
                let m = r.point.metrics.get(metric)?;
                // One sample a second.
                Some(Series::new(params_label(r), m.samples.iter().enumerate().map(|(i, v)| (i as f64, v / scale)).collect()))
            })
            .collect();
        if !series.is_empty() {
            h += &chart(&line_chart(&Axes::new(title, "s since the start", y), &series));
        }
    }
    for prefix in ["lateness_core", "pcs_core"] {
        let sets: Vec<(String, Vec<f64>)> = data
            .runs
            .iter()
            .flat_map(|r| {
                r.point
                    .metrics
                    .iter()
                    .filter(|(n, _)| n.starts_with(prefix))
                    .map(move |(n, m)| (format!("{n} {}", params_label(r)), m.samples.clone()))
            })
            .collect();
        if !sets.is_empty() {
            h += &chart(&cdf_chart(&format!("{prefix}N_ns (soak)"), "us", &sets, 1000.0));
        }
    }
    h += &stats_table(data, &|_| true);
    h += &notes(data);
    h
}
