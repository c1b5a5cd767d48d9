//! Slowdown statistics and the per-run summary printed by `edmsim`.

use serde::Serialize;

use crate::RunResult;

/// Mean, median and 99th percentile of a set of slowdowns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SlowdownStats {
    /// Number of samples.
    pub count: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (nearest rank).
    pub median: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
}

impl SlowdownStats {
    /// Statistics of `v` (all zeros when empty).
    pub fn of(v: &[f64]) -> SlowdownStats {
        if v.is_empty() {
            return SlowdownStats {
                count: 0,
                mean: 0.0,
                median: 0.0,
                p99: 0.0,
            };
        }
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let rank = |q: f64| s[((q * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
        SlowdownStats {
            count: s.len(),
            mean: s.iter().sum::<f64>() / s.len() as f64,
            median: rank(0.5),
            p99: rank(0.99),
        }
    }
}

/// Summary of one scheme on one trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Scheme name.
    pub scheme: String,
    /// Messages in the trace.
    pub messages: usize,
    /// Messages that completed.
    pub completed: usize,
    /// Slowdown over all completed messages.
    pub all: SlowdownStats,
    /// Slowdown of writes.
    pub writes: SlowdownStats,
    /// Slowdown of reads.
    pub reads: SlowdownStats,
    /// Packets dropped (packet schemes).
    pub drops: u64,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds of the run (ideal runs excluded).
    pub wall_s: f64,
    /// Events per wall-clock second.
    pub events_per_s: f64,
    /// EDM: largest notification queue seen.
    pub max_queue: u32,
    /// EDM/Fastpass: mean PIM iterations per scheduling pass.
    pub pim_iterations: f64,
}

impl Summary {
    /// Build from per-message slowdowns and the run's counters.
    pub fn new(
        scheme: &str,
        messages: usize,
        all: &[f64],
        writes: &[f64],
        reads: &[f64],
        res: &RunResult,
        wall_s: f64,
    ) -> Summary {
        Summary {
            scheme: scheme.to_string(),
            messages,
            completed: all.len(),
            all: SlowdownStats::of(all),
            writes: SlowdownStats::of(writes),
            reads: SlowdownStats::of(reads),
            drops: res.drops,
            events: res.events,
            wall_s,
            events_per_s: if wall_s > 0.0 {
                res.events as f64 / wall_s
            } else {
                0.0
            },
            max_queue: res.max_queue,
            pim_iterations: res.pim_iterations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = SlowdownStats::of(&v);
        assert_eq!((s.count, s.mean, s.median, s.p99), (100, 50.5, 50.0, 99.0));
        assert_eq!(SlowdownStats::of(&[]).count, 0);
    }
}
