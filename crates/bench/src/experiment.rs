//! The framework API every experiment implements: what it is ([`Experiment`]), the parameter
//! points it runs, and the [`RunContext`] through which it runs workloads and hands in samples.
//! `registry()` lists every experiment `partita bench` knows; adding one is adding it there.

use crate::workload::Programs;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where the measured workload runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The same workload without Partita: the baseline.
    Native,
    /// Partitions as Linux processes (`partita run`'s default backend).
    Process,
    /// Partitions as KVM machines (not implemented: refused with a message).
    Kvm,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Native => "native",
            Backend::Process => "process",
            Backend::Kvm => "kvm",
        }
    }

    pub fn parse(s: &str) -> Option<Backend> {
        [Backend::Native, Backend::Process, Backend::Kvm].into_iter().find(|b| b.name() == s)
    }
}

/// The parameters of one point (e.g. `{"processes": 4}`), as JSON values in key order.
pub type Params = serde_json::Map<String, serde_json::Value>;

/// Builds [`Params`] from pairs: `params([("slot_ms", 10.into())])`.
pub fn params<const N: usize>(pairs: [(&str, serde_json::Value); N]) -> Params {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Unit of a metric's samples. Times are always nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Ns,
    Count,
    Percent,
    Bytes,
    Ratio,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Count => "count",
            Unit::Percent => "percent",
            Unit::Bytes => "bytes",
            Unit::Ratio => "ratio",
        }
    }

    pub fn parse(s: &str) -> Option<Unit> {
        [Unit::Ns, Unit::Count, Unit::Percent, Unit::Bytes, Unit::Ratio].into_iter().find(|u| u.name() == s)
    }
}

/// Every sample of one metric at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub unit: Unit,
    pub samples: Vec<f64>,
}

/// What one parameter point produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PointResult {
    pub params: Params,
    pub metrics: BTreeMap<String, Metric>,
    /// Remarks for the reader (a part skipped and why, a capability missing, ...).
    pub notes: Vec<String>,
}

/// A characterization experiment (design.md §6).
pub trait Experiment: Sync {
    /// The name on the command line (`pcs`, `slot-loss`, ...).
    fn name(&self) -> &'static str;
    /// The paper table or figure it reproduces.
    fn reproduces(&self) -> &'static str;
    /// What it measures, how, and what differs from the paper's set-up.
    fn description(&self) -> &'static str;
    /// Backends it runs on; the first is the default.
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process, Backend::Native]
    }
    /// Whether `partita bench all` runs it (`soak` takes an hour: only by name).
    fn in_all(&self) -> bool {
        true
    }
    /// Parameter points, in run order. `quick` keeps the whole experiment within about a minute.
    fn points(&self, quick: bool) -> Vec<Params>;
    /// Runs one point; samples and notes go to `ctx`.
    fn run_point(&self, ctx: &mut RunContext, params: &Params) -> Result<(), String>;
    /// The report section (HTML); the default shows each metric's statistics per point and a CDF.
    fn report(&self, data: &crate::report::ExperimentData, published: &crate::published::Published) -> String {
        crate::report::default_section(self, data, published)
    }
}

/// Everything an experiment needs while running a point.
pub struct RunContext<'a> {
    pub backend: Backend,
    pub quick: bool,
    /// How to start the partition workloads (`partita bench-partition NAME ...`).
    pub programs: &'a Programs,
    /// A scratch directory for this point (configurations, logs, traces); removed afterwards.
    pub scratch: PathBuf,
    progress: &'a dyn Fn(&str),
    result: PointResult,
}

impl<'a> RunContext<'a> {
    pub fn new(backend: Backend, quick: bool, programs: &'a Programs, scratch: PathBuf, progress: &'a dyn Fn(&str)) -> Self {
        RunContext { backend, quick, programs, scratch, progress, result: PointResult::default() }
    }

    /// Adds samples of `metric`; a metric may be fed several times. NaN (no value) is dropped.
    pub fn samples(&mut self, metric: &str, unit: Unit, values: impl IntoIterator<Item = f64>) {
        let m = self.result.metrics.entry(metric.to_string()).or_insert_with(|| Metric { unit, samples: Vec::new() });
        m.samples.extend(values.into_iter().filter(|v| !v.is_nan()));
    }

    pub fn sample(&mut self, metric: &str, unit: Unit, value: f64) {
        self.samples(metric, unit, [value]);
    }

    /// The samples of `metric` collected so far at this point (for figures derived from two
    /// metrics, such as a ratio of medians).
    pub fn metric_samples(&self, metric: &str) -> Option<Vec<f64>> {
        self.result.metrics.get(metric).map(|m| m.samples.clone())
    }

    /// A remark stored with the run and shown in the report.
    pub fn note(&mut self, text: impl Into<String>) {
        self.result.notes.push(text.into());
    }

    /// Shows what is running now beside the progress bar.
    pub fn progress(&self, message: &str) {
        (self.progress)(message);
    }

    /// The point's result; metrics that received no sample are left out.
    pub fn into_result(mut self, params: &Params) -> PointResult {
        self.result.params = params.clone();
        self.result.metrics.retain(|_, m| !m.samples.is_empty());
        self.result
    }
}

/// Every experiment `partita bench` knows, in `bench list` order.
pub fn registry() -> Vec<&'static dyn Experiment> {
    crate::experiments::all()
}

/// The experiment called `name`.
pub fn find(name: &str) -> Option<&'static dyn Experiment> {
    registry().into_iter().find(|e| e.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_collects_samples_and_notes() {
        let programs = Programs::with_exe(std::path::Path::new("/bin/true"));
        let shown = std::cell::RefCell::new(Vec::new());
        let show = |m: &str| shown.borrow_mut().push(m.to_string());
        let mut ctx = RunContext::new(Backend::Process, true, &programs, PathBuf::from("/tmp"), &show);
        ctx.samples("a_ns", Unit::Ns, [1.0, f64::NAN, 2.0]);
        ctx.sample("a_ns", Unit::Ns, 3.0);
        ctx.samples("empty", Unit::Count, []);
        ctx.note("skipped x");
        ctx.progress("step");
        let r = ctx.into_result(&params([("k", 1.into())]));
        assert_eq!(r.metrics.keys().collect::<Vec<_>>(), ["a_ns"]);
        assert_eq!(r.metrics["a_ns"].samples, [1.0, 2.0, 3.0]);
        assert_eq!(r.notes, ["skipped x"]);
        assert_eq!(r.params["k"], 1);
        assert_eq!(*shown.borrow(), ["step"]);
    }

    #[test]
    fn names_parse_back() {
        for b in [Backend::Native, Backend::Process, Backend::Kvm] {
            assert_eq!(Backend::parse(b.name()), Some(b));
        }
        for u in [Unit::Ns, Unit::Count, Unit::Percent, Unit::Bytes, Unit::Ratio] {
            assert_eq!(Unit::parse(u.name()), Some(u));
        }
        let names: Vec<&str> = registry().iter().map(|e| e.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "experiment names are unique: {names:?}");
        assert!(registry().iter().all(|e| !e.points(true).is_empty() && !e.backends().is_empty() && e.backends()[0] != Backend::Kvm));
    }
}
