//! Statistics of a metric's samples, with the definitions of `partita_trace::stats` (percentiles
//! by linear interpolation between closest ranks, population standard deviation) on `f64`
//! samples, since bench metrics are not all integer nanoseconds (loss in percent, ratios).

use serde::{Deserialize, Serialize};

/// Summary of one metric at one point. AbsJitter = max - min.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub p99: f64,
    pub max: f64,
    pub stddev: f64,
}

impl Summary {
    /// `None` without samples; NaN samples are left out.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| !v.is_nan()).collect();
        sorted.sort_by(f64::total_cmp);
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let var = sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        Some(Summary { n, min, median: percentile(&sorted, 50.0)?, mean, p99: percentile(&sorted, 99.0)?, max, stddev: var.sqrt() })
    }

    pub fn abs_jitter(&self) -> f64 {
        self.max - self.min
    }
}

/// The median of unsorted samples (the upper one of an even count); NaN when there are none.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    if s.is_empty() { f64::NAN } else { s[s.len() / 2] }
}

/// The `p`-th percentile of ascending samples (linear interpolation between closest ranks).
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * p.clamp(0.0, 100.0) / 100.0;
    let lo = (h.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// Empirical CDF: ascending (value, fraction of samples <= value) pairs, at most `max_points`
/// of them (evenly spaced ranks, always keeping the first and last), for charts.
pub fn cdf(samples: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n == 0 || max_points == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(max_points).max(1);
    let mut out: Vec<(f64, f64)> = (0..n).step_by(step).map(|i| (sorted[i], (i + 1) as f64 / n as f64)).collect();
    if out.last().map(|p| p.1) != Some(1.0) {
        out.push((sorted[n - 1], 1.0));
    }
    out
}

/// Histogram with `bins` equal bins between the minimum and the maximum: (lower edge, count).
pub fn histogram(samples: &[f64], bins: usize) -> Vec<(f64, usize)> {
    let s = Summary::of(samples);
    let Some(s) = s.filter(|_| bins > 0) else { return Vec::new() };
    let width = if s.max > s.min { (s.max - s.min) / bins as f64 } else { 1.0 };
    let mut counts = vec![0usize; bins];
    for &v in samples.iter().filter(|v| !v.is_nan()) {
        let i = (((v - s.min) / width) as usize).min(bins - 1);
        counts[i] += 1;
    }
    counts.into_iter().enumerate().map(|(i, c)| (s.min + i as f64 * width, c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.n, s.min, s.max), (4, 1.0, 4.0));
        assert_eq!(s.median, 2.5);
        assert_eq!(s.mean, 2.5);
        assert!((s.stddev - 1.25f64.sqrt()).abs() < 1e-12);
        assert!((s.p99 - 3.97).abs() < 1e-12);
        assert_eq!(s.abs_jitter(), 3.0);
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[f64::NAN]), None);
    }

    #[test]
    fn agrees_with_the_trace_statistics_on_integer_samples() {
        let v: Vec<i64> = (0..1000).map(|i| (i * 7919) % 1009 - 300).collect();
        let t = partita_trace::stats::Stats::from_samples(&v).unwrap();
        let s = Summary::of(&v.iter().map(|&x| x as f64).collect::<Vec<_>>()).unwrap();
        assert_eq!((s.n, s.min, s.max), (t.n, t.min as f64, t.max as f64));
        for (a, b) in [(s.median, t.median), (s.mean, t.mean), (s.p99, t.p99), (s.stddev, t.stddev)] {
            assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        }
    }

    #[test]
    fn cdf_ends_at_one_and_is_monotonic() {
        let v: Vec<f64> = (0..1000).rev().map(f64::from).collect();
        let c = cdf(&v, 50);
        assert!(c.len() <= 51 && c.len() >= 50);
        assert_eq!(c.first().unwrap().0, 0.0);
        assert_eq!(*c.last().unwrap(), (999.0, 1.0));
        assert!(c.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
    }

    #[test]
    fn histogram_counts_every_sample() {
        let h = histogram(&[0.0, 1.0, 1.0, 9.0, 10.0], 5);
        assert_eq!(h.len(), 5);
        assert_eq!(h.iter().map(|b| b.1).sum::<usize>(), 5);
        assert_eq!(h[0], (0.0, 3.0 as usize));
        assert_eq!(h[4].1, 2);
    }
}
