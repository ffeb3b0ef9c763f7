//! Median, 99th percentile and maximum of a set of durations.

use std::fmt;
use std::time::Duration;

/// Summary of one measured quantity, in microseconds.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    /// Number of samples.
    pub n: usize,
    /// Median.
    pub median_us: f64,
    /// 99th percentile (nearest rank).
    pub p99_us: f64,
    /// Largest sample.
    pub max_us: f64,
}

impl Stats {
    /// Summarizes `samples` (at least one).
    pub fn of(samples: &[Duration]) -> Stats {
        assert!(!samples.is_empty(), "no samples");
        let mut us: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        let rank = |q: f64| us[((q * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1];
        Stats { n: us.len(), median_us: rank(0.5), p99_us: rank(0.99), max_us: us[us.len() - 1] }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "median {:8.1} us  p99 {:8.1} us  max {:8.1} us  (n={})", self.median_us, self.p99_us, self.max_us, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_p99_and_max_by_nearest_rank() {
        let samples: Vec<Duration> = (1..=200).map(Duration::from_micros).collect();
        let s = Stats::of(&samples);
        assert_eq!((s.n, s.median_us, s.p99_us, s.max_us), (200, 100.0, 198.0, 200.0));
    }
}
