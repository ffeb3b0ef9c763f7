//! Fixed-memory statistics of a stream of i64 nanosecond samples, for summaries of runs of any
//! length (the run summary of `partita run`, docs/trace.md).
//!
//! A [`Sketch`] keeps the count, minimum, maximum, sum and a running variance exactly, and the
//! samples themselves while there are at most [`EXACT_SAMPLES`] of them: up to that, its
//! [`Stats`] are exactly those of [`Stats::from_samples`]. Beyond, the samples move into
//! HDR histograms (the `hdrhistogram` crate; one for the non-negative values, one for the
//! magnitudes of the negative ones) with [`SIGNIFICANT_DIGITS`] significant digits, and
//! percentiles are read from them:
//!
//! - the same definition as [`crate::stats::percentile`] (linear interpolation between the two
//!   closest ranks), each of the two order statistics replaced by the midpoint of the histogram
//!   bucket that holds it, clamped to the exact minimum and maximum;
//! - so the error of a percentile is at most `max(|x_lo|, |x_hi|) / 2048` (under 0.05 % of
//!   the neighbouring samples' magnitude; none below 2048 ns, which are recorded to the
//!   nanosecond), for any percentile (p50, p99, p99.9, ...);
//! - magnitudes above [`HIGHEST_NS`] (about 18 minutes) are recorded as [`HIGHEST_NS`];
//!   minimum, maximum, mean and count stay exact; the standard deviation is Welford's running
//!   one (rounding only).
//!
//! Memory: at most `EXACT_SAMPLES * 8` bytes of samples, or two histograms of at most
//! `32 * 1024` u64 counters (256 KiB each) sized by the largest magnitude seen: a few hundred
//! KiB at worst, whatever the number of samples.

use crate::stats::{Stats, percentile};
use hdrhistogram::Histogram;

/// Samples kept exactly before the sketch switches to histograms.
pub const EXACT_SAMPLES: usize = 4096;
/// Precision of the histograms: relative bucket width at most 2^-10, midpoint error 2^-11.
pub const SIGNIFICANT_DIGITS: u8 = 3;
/// Largest magnitude the histograms distinguish (2^40 ns, about 18.3 minutes).
pub const HIGHEST_NS: u64 = 1 << 40;

#[derive(Debug, Clone)]
pub struct Sketch {
    n: u64,
    min: i64,
    max: i64,
    sum: i128,
    /// Welford's running mean and sum of squared deviations (for the standard deviation).
    w_mean: f64,
    w_m2: f64,
    exact: Vec<i64>,
    /// Non-negative samples, then magnitudes of the negative ones (only once past the exact
    /// limit).
    hist: Option<(Histogram<u64>, Histogram<u64>)>,
}

impl Default for Sketch {
    fn default() -> Self {
        Sketch::new()
    }
}

fn histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 2048, SIGNIFICANT_DIGITS).expect("valid histogram bounds");
    h.auto(true);
    h
}

impl Sketch {
    pub fn new() -> Sketch {
        Sketch { n: 0, min: i64::MAX, max: i64::MIN, sum: 0, w_mean: 0.0, w_m2: 0.0, exact: Vec::new(), hist: None }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    pub fn push(&mut self, x: i64) {
        self.n += 1;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        self.sum += x as i128;
        let d = x as f64 - self.w_mean;
        self.w_mean += d / self.n as f64;
        self.w_m2 += d * (x as f64 - self.w_mean);
        match &mut self.hist {
            Some(h) => record(h, x),
            None if self.exact.len() < EXACT_SAMPLES => {
                if self.exact.capacity() == 0 {
                    self.exact.reserve_exact(EXACT_SAMPLES);
                }
                self.exact.push(x)
            }
            None => {
                let mut h = (histogram(), histogram());
                for &s in &self.exact {
                    record(&mut h, s);
                }
                record(&mut h, x);
                self.exact = Vec::new();
                self.hist = Some(h);
            }
        }
    }

    /// Whether the figures are still exact (at most [`EXACT_SAMPLES`] samples).
    pub fn is_exact(&self) -> bool {
        self.hist.is_none()
    }

    /// Bytes the sketch holds on the heap (the samples or the histograms' counters).
    pub fn heap_bytes(&self) -> usize {
        self.exact.capacity() * 8 + self.hist.as_ref().map_or(0, |(p, n)| (p.distinct_values() + n.distinct_values()) * 8)
    }

    /// The `p`-th percentile (see the module documentation); `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        let Some((pos, neg)) = &self.hist else {
            let mut sorted = self.exact.clone();
            sorted.sort_unstable();
            return percentile(&sorted, p);
        };
        let last = self.n.checked_sub(1)?;
        let p = if p.is_nan() { 50.0 } else { p.clamp(0.0, 100.0) };
        let h = last as f64 * p / 100.0;
        let lo = (h.floor() as u64).min(last);
        let hi = (lo + 1).min(last);
        let frac = h - lo as f64;
        let at = |rank: u64| -> f64 {
            let negs = neg.len();
            let v = if rank < negs { -(magnitude_at(neg, negs - 1 - rank) as f64) } else { magnitude_at(pos, rank - negs) as f64 };
            v.clamp(self.min as f64, self.max as f64)
        };
        let (a, b) = (at(lo), at(hi));
        Some(a + frac * (b - a))
    }

    /// The statistics of the samples so far (exact up to [`EXACT_SAMPLES`]); `None` when empty.
    pub fn stats(&self) -> Option<Stats> {
        if self.hist.is_none() {
            return Stats::from_samples(&self.exact);
        }
        let n = self.n as usize;
        Some(Stats {
            n,
            min: self.min,
            median: self.percentile(50.0)?,
            mean: self.sum as f64 / self.n as f64,
            p99: self.percentile(99.0)?,
            max: self.max,
            stddev: (self.w_m2 / self.n as f64).max(0.0).sqrt(),
            abs_jitter: self.max.saturating_sub(self.min),
        })
    }
}

fn record((pos, neg): &mut (Histogram<u64>, Histogram<u64>), x: i64) {
    let (h, m) = if x < 0 { (neg, x.unsigned_abs()) } else { (pos, x as u64) };
    // Within bounds by the clamp: auto-resize grows the histogram up to HIGHEST_NS.
    let _ = h.record(m.min(HIGHEST_NS));
}

/// The value of rank `rank` (0-based, ascending) of a histogram: the midpoint of its bucket.
fn magnitude_at(h: &Histogram<u64>, rank: u64) -> u64 {
    let mut seen = 0u64;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        if seen > rank {
            return h.median_equivalent(v.value_iterated_to());
        }
    }
    h.max()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence (xorshift), so the tests need no crate.
    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    fn check_against_exact(samples: &[i64]) {
        let mut sk = Sketch::new();
        samples.iter().for_each(|&x| sk.push(x));
        assert!(!sk.is_exact());
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        for p in [0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            let exact = percentile(&sorted, p).unwrap();
            let got = sk.percentile(p).unwrap();
            // The documented bound: the larger magnitude of the two neighbouring order
            // statistics / 2048.
            let h = (sorted.len() - 1) as f64 * p / 100.0;
            let (lo, hi) = (h.floor() as usize, (h.floor() as usize + 1).min(sorted.len() - 1));
            let bound = (sorted[lo].unsigned_abs().max(sorted[hi].unsigned_abs()) as f64) / 2048.0 + 1e-9;
            assert!((got - exact).abs() <= bound, "p{p}: sketch {got}, exact {exact}, bound {bound}");
        }
        let s = sk.stats().unwrap();
        let e = Stats::from_sorted(&sorted).unwrap();
        assert_eq!((s.n, s.min, s.max, s.abs_jitter), (e.n, e.min, e.max, e.abs_jitter));
        assert!((s.mean - e.mean).abs() <= 1e-6 * e.mean.abs().max(1.0), "{} {}", s.mean, e.mean);
        assert!((s.stddev - e.stddev).abs() <= 1e-6 * e.stddev.max(1.0), "{} {}", s.stddev, e.stddev);
    }

    #[test]
    fn exact_up_to_the_limit() {
        let samples: Vec<i64> = (0..EXACT_SAMPLES as i64).map(|i| (i * 7919) % 100_003 - 500).collect();
        let mut sk = Sketch::new();
        samples.iter().for_each(|&x| sk.push(x));
        assert!(sk.is_exact());
        assert_eq!(sk.stats(), Stats::from_samples(&samples));
        assert_eq!(Sketch::new().stats(), None);
    }

    #[test]
    fn uniform_latencies_within_the_documented_error() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        let samples: Vec<i64> = (0..200_000).map(|_| (xorshift(&mut seed) % 2_000_000) as i64).collect();
        check_against_exact(&samples);
    }

    #[test]
    fn long_tail_and_negative_values_within_the_documented_error() {
        let mut seed = 42;
        let samples: Vec<i64> = (0..100_000)
            .map(|i| {
                let r = xorshift(&mut seed);
                match i % 100 {
                    0 => (r % 900_000_000) as i64,    // rare huge stalls
                    1..=5 => -((r % 50_000) as i64),  // early stops
                    _ => 3_000 + (r % 20_000) as i64, // the usual few microseconds
                }
            })
            .collect();
        check_against_exact(&samples);
    }

    #[test]
    fn known_quantiles_of_a_ramp() {
        // 0, 1, ..., 999_999: the exact p50 is 499_999.5, p99 989_999.01, p99.9 998_999.001.
        let mut sk = Sketch::new();
        (0..1_000_000).for_each(|x| sk.push(x));
        for (p, exact) in [(50.0, 499_999.5), (99.0, 989_999.01), (99.9, 998_999.001)] {
            let got = sk.percentile(p).unwrap();
            assert!((got - exact).abs() <= exact / 2048.0, "p{p}: {got} vs {exact}");
        }
        assert_eq!(sk.percentile(0.0), Some(0.0));
        assert_eq!(sk.percentile(100.0), Some(999_999.0));
    }

    #[test]
    fn extreme_values_are_clamped_not_lost() {
        let mut sk = Sketch::new();
        for i in 0..(EXACT_SAMPLES as i64 + 10) {
            sk.push(if i % 2 == 0 { i64::MAX } else { i64::MIN });
        }
        let s = sk.stats().unwrap();
        assert_eq!((s.min, s.max), (i64::MIN, i64::MAX));
        assert!(s.median.is_finite() && s.p99.is_finite() && s.mean.is_finite());
    }

    #[test]
    fn memory_does_not_grow_with_the_sample_count() {
        let mut sk = Sketch::new();
        let mut seed = 7;
        let mut after_first_million = 0;
        for i in 0..10_000_000u64 {
            sk.push((xorshift(&mut seed) % 5_000_000) as i64);
            if i == 1_000_000 {
                after_first_million = sk.heap_bytes();
            }
        }
        assert_eq!(sk.heap_bytes(), after_first_million);
        assert!(sk.heap_bytes() <= 2 * 32 * 1024 * 8, "{}", sk.heap_bytes());
    }
}
