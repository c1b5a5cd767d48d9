//! Sample statistics of the benchmark reports: latency summaries, ratios,
//! medians, CDF points, and a small deterministic generator.

use serde::Serialize;

use crate::report::percentile;

/// Percentiles of one latency series, in nanoseconds.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Summary {
    /// Samples.
    pub n: usize,
    /// Median.
    pub p50_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
    /// 99.9th percentile.
    pub p999_ns: f64,
    /// Arithmetic mean.
    pub mean_ns: f64,
    /// Fastest sample.
    pub min_ns: f64,
    /// Slowest sample.
    pub max_ns: f64,
}

impl Summary {
    /// Summarise `samples` (sorted in place). All zero when empty.
    pub fn of(samples: &mut [f64]) -> Summary {
        samples.sort_by(f64::total_cmp);
        let n = samples.len();
        let mean = if n == 0 {
            0.0
        } else {
            samples.iter().sum::<f64>() / n as f64
        };
        Summary {
            n,
            p50_ns: percentile(samples, 0.5),
            p99_ns: percentile(samples, 0.99),
            p999_ns: percentile(samples, 0.999),
            mean_ns: mean,
            min_ns: samples.first().copied().unwrap_or(0.0),
            max_ns: samples.last().copied().unwrap_or(0.0),
        }
    }

    /// p99 over p50: how heavy the tail is (1 = none).
    pub fn tail(&self) -> f64 {
        ratio(self.p99_ns, self.p50_ns)
    }
}

/// `a / b`, or 0 when `b` is not a positive number (so JSON never holds
/// NaN or infinity).
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 && a.is_finite() && b.is_finite() {
        a / b
    } else {
        0.0
    }
}

/// Median of `v` (sorted in place); 0 if empty.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    percentile(v, 0.5)
}

/// At most `max` points `(value, fraction <= value)` of the empirical CDF of
/// sorted samples, evenly spaced in rank, always with the last sample.
pub fn cdf_points(sorted: &[f64], max: usize) -> Vec<(f64, f64)> {
    let n = sorted.len();
    if n == 0 || max == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(max).max(1);
    let mut out: Vec<(f64, f64)> = (0..n)
        .step_by(step)
        .map(|i| (sorted[i], (i + 1) as f64 / n as f64))
        .collect();
    if out.last().map(|p| p.1) != Some(1.0) {
        out.push((sorted[n - 1], 1.0));
    }
    out
}

/// The SDK connection's counters that explain a tail: retries and why.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Proto {
    /// Request attempts (first sends and retries).
    pub requests_sent: u64,
    /// Attempts that were retries.
    pub retries: u64,
    /// Retries caused by RTO expiry.
    pub timeouts: u64,
    /// `BUSY` answers.
    pub busy: u64,
    /// NACKs received.
    pub nacks: u64,
    /// Answers that matched no outstanding attempt (late, after a retry).
    pub stale: u64,
}

impl From<clio::proto::Stats> for Proto {
    fn from(s: clio::proto::Stats) -> Proto {
        Proto {
            requests_sent: s.requests_sent,
            retries: s.retries,
            timeouts: s.timeouts,
            busy: s.busy,
            nacks: s.nacks,
            stale: s.stale,
        }
    }
}

impl std::fmt::Display for Proto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} requests, {} retries ({} on timeout, {} busy, {} NACKed), {} stale answers",
            self.requests_sent, self.retries, self.timeouts, self.busy, self.nacks, self.stale
        )
    }
}

/// xorshift64: a tiny deterministic generator, so runs pick the same
/// addresses and stay comparable.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced by a fixed odd constant).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        // Multiply-shift: unbiased enough for address picking, no division.
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_a_known_series() {
        let mut v: Vec<f64> = (1..=1000).rev().map(f64::from).collect();
        let s = Summary::of(&mut v);
        assert_eq!(s.n, 1000);
        assert_eq!(s.p50_ns, 500.0);
        assert_eq!(s.p99_ns, 990.0);
        assert_eq!(s.p999_ns, 999.0);
        assert_eq!((s.min_ns, s.max_ns), (1.0, 1000.0));
        assert!((s.mean_ns - 500.5).abs() < 1e-9);
        assert!((s.tail() - 1.98).abs() < 1e-9);
        // Sorted in place.
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn empty_and_degenerate_inputs() {
        let s = Summary::of(&mut []);
        assert_eq!((s.n, s.p50_ns, s.mean_ns), (0, 0.0, 0.0));
        assert_eq!(s.tail(), 0.0);
        assert_eq!(ratio(1.0, 0.0), 0.0);
        assert_eq!(ratio(f64::NAN, 1.0), 0.0);
        assert_eq!(ratio(3.0, 2.0), 1.5);
        assert_eq!(median(&mut []), 0.0);
        assert_eq!(median(&mut [5.0, 1.0, 3.0]), 3.0);
        assert!(cdf_points(&[], 10).is_empty());
    }

    #[test]
    fn cdf_is_monotone_and_ends_at_one() {
        let v: Vec<f64> = (0..10_000).map(|i| f64::from(i) * 0.5).collect();
        let pts = cdf_points(&v, 100);
        assert!(pts.len() <= 101 && pts.len() >= 100);
        assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
        assert_eq!(*pts.last().unwrap(), (4999.5, 1.0));
        assert_eq!(pts[0], (0.0, 1e-4));
        // Fewer samples than points: every sample appears.
        assert_eq!(cdf_points(&[1.0, 2.0], 100), vec![(1.0, 0.5), (2.0, 1.0)]);
    }

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let mut hist = [0u32; 8];
        for _ in 0..8000 {
            let x = a.below(8);
            assert_eq!(x, b.below(8));
            hist[x as usize] += 1;
        }
        // Roughly uniform: every bucket within 20 % of 1000.
        assert!(hist.iter().all(|&h| (800..1200).contains(&h)), "{hist:?}");
        assert_ne!(Rng::new(0).next_u64(), 0);
    }
}
