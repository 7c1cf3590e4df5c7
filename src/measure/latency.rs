//! Per-operation latency: an HDR histogram (3 significant digits, 1 ns to
//! hours) and the percentiles and spikes drawn from it.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Every operation's duration in ns, kept as a histogram so memory stays
/// fixed however many operations are recorded; threads record into their
/// own and [`Latencies::merge`] them.
pub struct Latencies {
    hist: Histogram<u64>,
}

/// The latency distribution of a run as stored in results; every duration
/// in nanoseconds, accurate to 3 significant digits.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    /// Number of operations recorded.
    pub count: u64,
    /// Fastest operation, ns.
    pub min_ns: u64,
    /// Mean duration, ns.
    pub mean_ns: f64,
    /// Median, ns: the typical operation.
    pub p50_ns: u64,
    /// 90th percentile, ns.
    pub p90_ns: u64,
    /// 99th percentile, ns: the tail a busy service feels.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Slowest operation, ns.
    pub max_ns: u64,
    /// Operations slower than 10x the median: the spikes a mean hides.
    pub spikes_over_10x_median: u64,
    /// Percentile curve for plots: (percentile, ns) at a log-spaced set of points.
    pub percentiles: Vec<(f64, u64)>,
}

impl Default for Latencies {
    fn default() -> Self {
        Self::new()
    }
}

impl Latencies {
    /// An empty histogram covering 1 ns to one hour.
    pub fn new() -> Self {
        Latencies {
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
        }
    }

    /// Records one operation that took `ns` nanoseconds (0 counts as 1,
    /// beyond an hour as an hour).
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns.max(1));
    }

    /// Adds every operation recorded in `other` (e.g. another thread's).
    pub fn merge(&mut self, other: &Latencies) {
        self.hist.add(&other.hist).expect("same bounds");
    }

    /// Number of operations recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Percentiles, extremes, spike count and the percentile curve.
    pub fn summary(&self) -> LatencySummary {
        let h = &self.hist;
        let p50 = h.value_at_quantile(0.5);
        let threshold = p50.saturating_mul(10);
        let spikes = if h.is_empty() {
            0
        } else {
            h.iter_recorded()
                .filter(|v| v.value_iterated_to() > threshold)
                .map(|v| v.count_at_value())
                .sum()
        };
        let points = [
            0.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999, 100.0,
        ];
        LatencySummary {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: h.mean(),
            p50_ns: p50,
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            spikes_over_10x_median: spikes,
            percentiles: points
                .iter()
                .map(|&p| (p, h.value_at_percentile(p)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spikes_are_counted() {
        let mut l = Latencies::new();
        for _ in 0..1000 {
            l.record(1000);
        }
        for _ in 0..3 {
            l.record(50_000);
        }
        let s = l.summary();
        assert_eq!(s.count, 1003);
        assert_eq!(s.spikes_over_10x_median, 3);
        assert!(s.p50_ns >= 999 && s.p50_ns <= 1001);
        assert!(s.max_ns >= 49_900);
    }
}
