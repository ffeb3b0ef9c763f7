//! Sample statistics on nanosecond samples (window-start lateness, PCS, stop times, ...), shared
//! by the run summary, `partita trace --summary` and the bench.
//!
//! Percentiles use **linear interpolation between closest ranks** (the "R-7" / NumPy default
//! definition): for sorted samples `x[0..n]` and `p` in [0, 100], `h = (n - 1) * p / 100` and the
//! result is `x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)])`. So the median of an
//! even number of samples is the mean of the two middle ones, the 0th percentile is the minimum and
//! the 100th the maximum. The standard deviation is the population one (divided by `n`): it
//! describes the samples that were measured.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Summary of a set of i64 nanosecond samples. `n` is always at least 1 (see
/// [`Stats::from_samples`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub n: usize,
    pub min: i64,
    /// 50th percentile (linear interpolation, see the module documentation).
    pub median: f64,
    pub mean: f64,
    /// 99th percentile (linear interpolation).
    pub p99: f64,
    pub max: i64,
    /// Population standard deviation.
    pub stddev: f64,
    /// Absolute jitter: `max - min`.
    pub abs_jitter: i64,
}

impl Stats {
    /// Statistics of `samples` (any order); `None` when there are none.
    pub fn from_samples(samples: &[i64]) -> Option<Stats> {
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        Stats::from_sorted(&sorted)
    }

    /// Same as [`Stats::from_samples`] for samples already sorted ascending (not checked).
    pub fn from_sorted(sorted: &[i64]) -> Option<Stats> {
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let n = sorted.len();
        let sum: i128 = sorted.iter().map(|&x| x as i128).sum();
        let mean = sum as f64 / n as f64;
        let var = sorted.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        Some(Stats {
            n,
            min,
            median: percentile(sorted, 50.0)?,
            mean,
            p99: percentile(sorted, 99.0)?,
            max,
            stddev: var.sqrt(),
            abs_jitter: max.saturating_sub(min),
        })
    }
}

/// The `p`-th percentile (`p` clamped to [0, 100]) of samples sorted ascending, by linear
/// interpolation between closest ranks (see the module documentation); `None` when empty.
pub fn percentile(sorted: &[i64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let p = if p.is_nan() { 50.0 } else { p.clamp(0.0, 100.0) };
    let h = last as f64 * p / 100.0;
    let lo = (h.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    let frac = h - lo as f64;
    let (a, b) = (sorted[lo] as f64, sorted[hi] as f64);
    Some(a + frac * (b - a))
}

/// Nanoseconds as microseconds with one decimal, e.g. `12.3`.
pub fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

impl fmt::Display for Stats {
    /// One line in microseconds: `n=.. min .. med .. mean .. p99 .. max .. sd .. jitter .. us`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "n={} min {} med {} mean {} p99 {} max {} sd {} jitter {} us",
            self.n,
            us(self.min as f64),
            us(self.median),
            us(self.mean),
            us(self.p99),
            us(self.max as f64),
            us(self.stddev),
            us(self.abs_jitter as f64)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn empty_has_no_stats() {
        assert_eq!(Stats::from_samples(&[]), None);
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn single_sample() {
        let s = Stats::from_samples(&[-7]).unwrap();
        assert_eq!((s.n, s.min, s.max, s.abs_jitter), (1, -7, -7, 0));
        assert!(close(s.median, -7.0) && close(s.mean, -7.0) && close(s.p99, -7.0) && close(s.stddev, 0.0));
    }

    #[test]
    fn hand_computed_odd_count() {
        // sorted: 1 2 3 4 10; mean 4; deviations -3 -2 -1 0 6 -> squares 9 4 1 0 36 = 50; var 10.
        let s = Stats::from_samples(&[10, 2, 4, 1, 3]).unwrap();
        assert_eq!((s.n, s.min, s.max, s.abs_jitter), (5, 1, 10, 9));
        assert!(close(s.median, 3.0));
        assert!(close(s.mean, 4.0));
        assert!(close(s.stddev, 10f64.sqrt()));
        // p99: h = 4 * 0.99 = 3.96 -> 4 + 0.96 * (10 - 4) = 9.76
        assert!(close(s.p99, 9.76), "{}", s.p99);
    }

    #[test]
    fn hand_computed_even_count() {
        // sorted: 100 200 300 400; median = (200 + 300) / 2; mean 250; var = (150²+50²+50²+150²)/4 = 12500.
        let s = Stats::from_samples(&[400, 100, 300, 200]).unwrap();
        assert!(close(s.median, 250.0));
        assert!(close(s.mean, 250.0));
        assert!(close(s.stddev, 12500f64.sqrt()));
        // p99: h = 3 * 0.99 = 2.97 -> 300 + 0.97 * 100 = 397
        assert!(close(s.p99, 397.0));
        assert_eq!(s.abs_jitter, 300);
    }

    #[test]
    fn percentile_bounds_and_interpolation() {
        let x = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
        assert_eq!(percentile(&x, 0.0), Some(0.0));
        assert_eq!(percentile(&x, 100.0), Some(100.0));
        assert_eq!(percentile(&x, 150.0), Some(100.0));
        assert_eq!(percentile(&x, -1.0), Some(0.0));
        assert!(close(percentile(&x, 25.0).unwrap(), 25.0));
        assert!(close(percentile(&x, 95.0).unwrap(), 95.0));
        assert!(close(percentile(&[5, 6], 50.0).unwrap(), 5.5));
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        let s = Stats::from_samples(&[i64::MAX, i64::MAX, i64::MIN]).unwrap();
        assert_eq!(s.abs_jitter, i64::MAX);
        assert!(s.mean.is_finite());
    }

    #[test]
    fn serializes_and_displays() {
        let s = Stats::from_samples(&[1000, 3000]).unwrap();
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["n"], 2);
        assert_eq!(v["abs_jitter"], 2000);
        assert_eq!(v["median"], 2000.0);
        assert_eq!(serde_json::from_value::<Stats>(v).unwrap(), s);
        assert_eq!(s.to_string(), "n=2 min 1.0 med 2.0 mean 2.0 p99 3.0 max 3.0 sd 1.0 jitter 2.0 us");
    }
}
