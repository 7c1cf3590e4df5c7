//! Per-operation latency: an HDR histogram (3 significant digits, 1 ns to
//! hours) and the percentiles and spikes drawn from it.
//!
//! Results keep the whole histogram, not only its percentiles, so runs can
//! be merged and any percentile recomputed later: [`EncodedHistogram`] is
//! the HdrHistogram V2 + DEFLATE encoding (the format every HdrHistogram
//! implementation reads) as base64 text.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

/// Every operation's duration in ns, kept as a histogram so memory stays
/// fixed however many operations are recorded; threads record into their
/// own and [`Latencies::merge`] them.
pub struct Latencies {
    hist: Histogram<u64>,
}

/// The longest duration recorded as itself: longer ones count as an hour.
const HOUR_NS: u64 = 3_600_000_000_000;

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

/// A latency histogram as stored in results: base64 of its HdrHistogram V2
/// + DEFLATE encoding (lossless: every bucket's count survives).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EncodedHistogram(pub String);

impl EncodedHistogram {
    /// The histogram back, or a message saying why the text is not one.
    pub fn decode(&self) -> Result<Latencies, String> {
        Latencies::from_encoded(&self.0)
    }
}

impl Default for Latencies {
    fn default() -> Self {
        Self::new()
    }
}

impl Latencies {
    /// An empty histogram from 1 ns, which grows to the longest duration
    /// recorded (up to an hour): a histogram sized for an hour up front is
    /// 256 KB to clear and fault in, and a 16-thread run keeps fifteen a
    /// thread, most of them for kinds of operation it never does.
    pub fn new() -> Self {
        Latencies {
            hist: Histogram::new(3).expect("valid precision"),
        }
    }

    /// Records one operation that took `ns` nanoseconds (0 counts as 1,
    /// beyond an hour as an hour).
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let _ = self.hist.record(ns.clamp(1, HOUR_NS));
    }

    /// Adds every operation recorded in `other` (e.g. another thread's, or
    /// another run's decoded from its result); the histogram grows to hold
    /// them. Values no histogram can hold are counted as an hour rather
    /// than refused.
    pub fn merge(&mut self, other: &Latencies) {
        if self.hist.add(&other.hist).is_err() {
            // Only a decoded histogram of values past i64::MAX / 2 gets here.
            for v in other.hist.iter_recorded() {
                let value = v.value_iterated_to();
                let _ = self.hist.record_n(value.min(HOUR_NS), v.count_at_value());
            }
        }
    }

    /// All the histograms in one: what a single run of all their operations
    /// would have recorded.
    pub fn merged<'a>(all: impl IntoIterator<Item = &'a Latencies>) -> Latencies {
        let mut out = Latencies::new();
        for l in all {
            out.merge(l);
        }
        out
    }

    /// The lossless encoding results store (see [`EncodedHistogram`]).
    pub fn encode(&self) -> EncodedHistogram {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.hist, &mut bytes)
            .expect("writing to a Vec cannot fail");
        EncodedHistogram(STANDARD.encode(bytes))
    }

    /// Decodes what [`Latencies::encode`] wrote (plain V2 is read too).
    pub fn from_encoded(text: &str) -> Result<Latencies, String> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|e| format!("latency histogram is not base64: {e}"))?;
        let mut hist: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("latency histogram is not HdrHistogram V2: {e:?}"))?;
        // Grows as a new one does when other runs are merged into it.
        hist.auto(true);
        Ok(Latencies { hist })
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

    /// A spread of latencies with a tail, reproducible.
    fn sample(seed: u64, n: u64) -> Latencies {
        let mut l = Latencies::new();
        let mut x = seed;
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let ns = 500 + (x >> 33) % 20_000 + if x.is_multiple_of(97) { 3_000_000 } else { 0 };
            l.record(ns);
        }
        l
    }

    #[test]
    fn the_encoding_is_lossless() {
        let l = sample(1, 50_000);
        let enc = l.encode();
        let back = Latencies::from_encoded(&enc.0).unwrap();
        assert_eq!(back.count(), 50_000);
        assert_eq!(back.summary(), l.summary());
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(
                back.hist.value_at_quantile(q),
                l.hist.value_at_quantile(q),
                "{q}"
            );
        }
        // Every bucket, not only the summary points.
        let buckets = |h: &Latencies| -> Vec<(u64, u64)> {
            h.hist
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        assert_eq!(buckets(&back), buckets(&l));
        // Compressed: far smaller than one u64 per operation.
        assert!(enc.0.len() < 20_000, "{}", enc.0.len());
        assert!(Latencies::from_encoded("not base64!").is_err());
        assert!(Latencies::from_encoded("AAAA").is_err());
    }

    #[test]
    fn merging_decoded_histograms_equals_recording_everything_once() {
        let (a, b) = (sample(1, 10_000), sample(2, 7_000));
        let decoded = [a.encode().decode().unwrap(), b.encode().decode().unwrap()];
        let merged = Latencies::merged(&decoded);
        let mut direct = Latencies::new();
        direct.merge(&a);
        direct.merge(&b);
        assert_eq!(merged.count(), 17_000);
        assert_eq!(merged.summary(), direct.summary());
    }

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
