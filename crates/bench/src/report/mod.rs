//! `partita report`: one self-contained HTML page from the result store, a section per
//! experiment (its description, Partita's figures per backend beside the published ones, SVG
//! charts). An experiment's section is its [`crate::Experiment::report`]; the helpers here
//! (tables, [`svg`] charts, reading a stored run's figures and parameters) are shared by all of them.

pub mod svg;

use crate::experiment::{Experiment, Unit};
use crate::published::Published;
use crate::stats::Summary;
use crate::store::{Store, StoredRun};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The runs of one experiment that the report shows: for each backend and parameter point the
/// most recent one.
pub struct ExperimentData {
    pub experiment: String,
    pub runs: Vec<StoredRun>,
}

impl ExperimentData {
    /// Keeps the latest run per (backend, params), in first-seen order.
    pub fn from_runs(experiment: &str, all: &[StoredRun]) -> ExperimentData {
        let mut latest: BTreeMap<(String, String), usize> = BTreeMap::new();
        let mine: Vec<&StoredRun> = all.iter().filter(|r| r.meta.experiment == experiment).collect();
        for (i, r) in mine.iter().enumerate() {
            latest.insert((r.meta.backend.clone(), serde_json::Value::Object(r.point.params.clone()).to_string()), i);
        }
        let mut keep: Vec<usize> = latest.into_values().collect();
        keep.sort_unstable();
        ExperimentData { experiment: experiment.to_string(), runs: keep.into_iter().map(|i| mine[i].clone()).collect() }
    }

    pub fn backends(&self) -> Vec<String> {
        let mut b: Vec<String> = Vec::new();
        for r in &self.runs {
            if !b.contains(&r.meta.backend) {
                b.push(r.meta.backend.clone());
            }
        }
        b
    }

    /// Runs on `backend`.
    pub fn on(&self, backend: &str) -> impl Iterator<Item = &StoredRun> {
        self.runs.iter().filter(move |r| r.meta.backend == backend)
    }

    /// Samples of `metric` over every run on `backend`.
    pub fn samples(&self, backend: &str, metric: &str) -> Vec<f64> {
        self.on(backend).flat_map(|r| r.point.metrics.get(metric).map(|m| m.samples.clone()).unwrap_or_default()).collect()
    }
}

/// "key=value, ..." of a run's parameters.
pub fn params_label(r: &StoredRun) -> String {
    r.point
        .params
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statistics of `metric` in one stored run.
pub fn summary(r: &StoredRun, metric: &str) -> Option<Summary> {
    Summary::of(&r.point.metrics.get(metric)?.samples)
}

/// The median of `metric` in one stored run.
pub fn run_median(r: &StoredRun, metric: &str) -> Option<f64> {
    summary(r, metric).map(|s| s.median)
}

/// A numeric parameter of a stored run.
pub fn param_f(r: &StoredRun, key: &str) -> Option<f64> {
    r.point.params.get(key)?.as_f64()
}

/// A parameter of a stored run as text (a string without its quotes).
pub fn param_s(r: &StoredRun, key: &str) -> String {
    r.point.params.get(key).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).unwrap_or_default()
}

/// Nanoseconds as microseconds with one decimal.
pub fn us(v: f64) -> String {
    format!("{:.1}", v / 1000.0)
}

pub fn f1(v: f64) -> String {
    format!("{v:.1}")
}

pub fn f2(v: f64) -> String {
    format!("{v:.2}")
}

pub fn esc(s: &str) -> String {
    svg::escape(s)
}

/// A value in its unit for a table: ns as us with 2 decimals.
pub fn fmt_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Ns => format!("{:.2}", v / 1000.0),
        Unit::Percent => format!("{v:.4}"),
        Unit::Ratio => format!("{v:.4}"),
        Unit::Bytes => format!("{v:.0}"),
        Unit::Count => {
            if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        }
    }
}

pub fn unit_label(unit: Unit) -> &'static str {
    match unit {
        Unit::Ns => "us",
        Unit::Percent => "%",
        Unit::Ratio => "ratio",
        Unit::Bytes => "bytes",
        Unit::Count => "count",
    }
}

/// A table with one row per (run, metric): statistics of the samples.
pub fn stats_table(data: &ExperimentData, metric_filter: &dyn Fn(&str) -> bool) -> String {
    let mut h = String::from(
        "<table><tr><th>backend</th><th>parameters</th><th>metric</th><th>unit</th><th>n</th><th>min</th><th>median</th><th>mean</th><th>p99</th><th>max</th><th>stddev</th><th>AbsJitter</th></tr>\n",
    );
    for r in &data.runs {
        for (name, m) in r.point.metrics.iter().filter(|(n, _)| metric_filter(n)) {
            let Some(s) = Summary::of(&m.samples) else { continue };
            let f = |v: f64| fmt_value(v, m.unit);
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.meta.backend),
                esc(&params_label(r)),
                esc(name),
                unit_label(m.unit),
                s.n,
                f(s.min),
                f(s.median),
                f(s.mean),
                f(s.p99),
                f(s.max),
                f(s.stddev),
                f(s.abs_jitter())
            );
        }
    }
    h.push_str("</table>\n");
    h
}

/// A table from rows of cells (first row: header).
pub fn table(rows: &[Vec<String>]) -> String {
    let mut h = String::from("<table>");
    for (i, row) in rows.iter().enumerate() {
        let tag = if i == 0 { "th" } else { "td" };
        h.push_str("<tr>");
        for c in row {
            let _ = write!(h, "<{tag}>{}</{tag}>", esc(c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    h
}

/// The notes of the runs (skipped parts, missing tools), once each.
pub fn notes(data: &ExperimentData) -> String {
    let mut seen: Vec<&String> = Vec::new();
    for r in &data.runs {
        for n in &r.point.notes {
            if !seen.contains(&n) {
                seen.push(n);
            }
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let items: String = seen.iter().map(|n| format!("<li>{}</li>", esc(n))).collect();
    format!("<p>Notes from the runs:</p><ul>{items}</ul>\n")
}

/// Section heading, what it reproduces and how it was measured, and the machine of the runs.
pub fn section_head<E: Experiment + ?Sized>(e: &E, data: &ExperimentData) -> String {
    let mut machines: Vec<String> = data
        .runs
        .iter()
        .map(|r| {
            let m = &r.meta.machine;
            format!(
                "{} ({}, {} cores, Linux {}), revision {}{}",
                m.machine,
                m.cpu_model,
                m.cores,
                m.kernel,
                m.git_revision,
                if r.meta.quick { ", --quick" } else { "" }
            )
        })
        .collect();
    machines.sort();
    machines.dedup();
    let mut times: Vec<&str> = data.runs.iter().map(|r| r.meta.timestamp.as_str()).collect();
    times.sort_unstable();
    let when = match (times.first(), times.last()) {
        (Some(a), Some(b)) if a != b => format!(", {a} to {b}"),
        (Some(a), _) => format!(", {a}"),
        _ => String::new(),
    };
    format!(
        "<h2 id=\"{0}\">{0}</h2>\n<p><b>Reproduces:</b> {1}</p>\n<p>{2}</p>\n<p class=\"meta\">Measured on: {3}{4}</p>\n",
        esc(e.name()),
        esc(e.reproduces()),
        esc(e.description()),
        esc(&machines.join("; ")),
        esc(&when)
    )
}

/// The default section: head, statistics table, and a CDF per ns metric across runs.
pub fn default_section<E: Experiment + ?Sized>(e: &E, data: &ExperimentData, _published: &Published) -> String {
    let mut h = section_head(e, data);
    h += &stats_table(data, &|_| true);
    let mut names: Vec<String> =
        data.runs.iter().flat_map(|r| r.point.metrics.iter().filter(|(_, m)| m.unit == Unit::Ns).map(|(n, _)| n.clone())).collect();
    names.sort();
    names.dedup();
    for name in names {
        let sets: Vec<(String, Vec<f64>)> = data
            .runs
            .iter()
            .filter_map(|r| {
                r.point
                    .metrics
                    .get(&name)
                    .filter(|m| !m.samples.is_empty())
                    .map(|m| (format!("{} {}", r.meta.backend, params_label(r)), m.samples.clone()))
            })
            .collect();
        h += &chart(&svg::cdf_chart(&format!("{} ({})", name, e.name()), &format!("{name} (us)"), &sets, 1000.0));
    }
    h += &notes(data);
    h
}

/// A chart in its own block.
pub fn chart(svg: &str) -> String {
    format!("<div class=\"chart\">{svg}</div>\n")
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222;line-height:1.4}\
table{border-collapse:collapse;margin:0.8em 0;font-size:13px}td,th{border:1px solid #bbb;padding:3px 7px;text-align:right}\
th{background:#eef}td:first-child,th:first-child{text-align:left}h1{color:#234}h2{border-bottom:2px solid #234;margin-top:2em}\
.meta{color:#666;font-size:12px}.chart{display:inline-block;margin:0.4em}";

/// The whole page for every experiment present in `store`.
pub fn render(store: &Store) -> Result<String, String> {
    let runs = store.runs()?;
    let published = Published::load();
    let mut body = String::new();
    let mut toc = Vec::new();
    for e in crate::experiment::registry() {
        let data = ExperimentData::from_runs(e.name(), &runs);
        if data.runs.is_empty() {
            continue;
        }
        toc.push(format!("<a href=\"#{0}\">{0}</a>", esc(e.name())));
        body += &e.report(&data, &published);
    }
    let unknown: Vec<String> = {
        let mut v: Vec<String> = runs.iter().map(|r| r.meta.experiment.clone()).filter(|n| crate::experiment::find(n).is_none()).collect();
        v.dedup();
        v
    };
    if !unknown.is_empty() {
        let _ = write!(body, "<p>Runs of experiments this version does not know are not shown: {}.</p>", esc(&unknown.join(", ")));
    }
    if runs.is_empty() {
        body += "<p>The result store holds no runs yet: <code>partita bench all --quick</code> fills it.</p>";
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Partita characterization report</title><style>{STYLE}</style></head><body>\n\
<h1>Partita characterization report</h1>\n<p>Figures from <code>partita bench</code> (times in microseconds unless said otherwise), beside the published \
figures of the papers they reproduce (data/published.toml). On a noisy machine the figure that counts is the ratio to the baseline measured in the same run.</p>\n\
<p>{}</p>\n{body}</body></html>\n",
        toc.join(" | ")
    ))
}
