//! The one estimate every printed figure is: the median of rounds with its
//! 95% confidence interval, and how that interval was obtained.
//!
//! A median's interval is the order-statistic (binomial) interval where
//! that is defined at 95% (n >= 6), else a percentile bootstrap; a ratio of
//! two cases is the median of the per-round paired ratios (same round),
//! its interval a bootstrap of the paired log ratios. Bootstraps are seeded
//! so a result reproduces exactly.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::significance::{LEVEL, RESAMPLES, median};

/// Half-width (relative to the figure) above which a figure is noisy.
pub const NOISY_HALF_WIDTH: f64 = 0.25;

/// What `~` means and how to make it go away, printed once under a table
/// that marks a figure noisy.
pub const NOISY_ADVICE: &str = "~ = noisy: the 95% interval is wider than +/-25% of the figure; \
rerun with more rounds (--rounds), on a quieter machine, or with --dir on the disk that matters.";

/// How an estimate's interval was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Binomial ranks of the sorted rounds around the median.
    OrderStatistic,
    /// Percentile bootstrap of the median (n too small for order statistics).
    Bootstrap,
    /// Percentile bootstrap of the median of paired per-round log ratios.
    PairedLogBootstrap,
    /// No interval: one round, or a figure that is not sampled (disk space).
    None,
}

/// A figure with its 95% interval: `value [low-high]`, from `n` rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The median of the rounds (of the paired ratios for a ratio).
    pub value: f64,
    /// Lower bound of the interval (equal to `value` without one).
    pub low: f64,
    /// Upper bound of the interval (equal to `value` without one).
    pub high: f64,
    /// Rounds behind the figure.
    pub n: usize,
    /// How the interval was obtained.
    pub method: Method,
}

impl Estimate {
    /// A figure without an interval (one round, or not sampled at all).
    pub fn point(value: f64, n: usize) -> Self {
        Estimate {
            value,
            low: value,
            high: value,
            n,
            method: Method::None,
        }
    }

    /// Whether there is an interval at all.
    pub fn has_interval(&self) -> bool {
        self.method != Method::None
    }

    /// The interval's larger half-width relative to the figure.
    pub fn half_width(&self) -> f64 {
        if !self.has_interval() || self.value == 0.0 {
            return 0.0;
        }
        ((self.high - self.value).max(self.value - self.low) / self.value).abs()
    }

    /// Whether the interval is wider than +/-[`NOISY_HALF_WIDTH`].
    pub fn noisy(&self) -> bool {
        self.half_width() > NOISY_HALF_WIDTH
    }

    /// Where the interval lies against `threshold`: wholly above (or on it),
    /// wholly below, or across it.
    pub fn side_of(&self, threshold: f64) -> Side {
        if self.low >= threshold {
            Side::Above
        } else if self.high < threshold {
            Side::Below
        } else {
            Side::Across
        }
    }

    /// Whether the interval contains `x`.
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Whether two intervals share any value.
    pub fn overlaps(&self, other: &Estimate) -> bool {
        self.low <= other.high && other.low <= self.high
    }

    /// Every bound scaled by `k` (ns to µs, bytes/s to MB/s).
    pub fn scaled(&self, k: f64) -> Self {
        Estimate {
            value: self.value * k,
            low: self.low * k,
            high: self.high * k,
            ..*self
        }
    }

    /// `12.34 [11.90-13.00]` with `decimals` digits, ` ~` when noisy, the
    /// figure alone without an interval.
    pub fn format(&self, decimals: usize) -> String {
        self.format_with(decimals, "")
    }

    /// A ratio: `1.52x [1.30-1.68]`, ` ~` when noisy.
    pub fn format_ratio(&self) -> String {
        self.format_with(2, "x")
    }

    fn format_with(&self, d: usize, unit: &str) -> String {
        let mut s = format!("{:.d$}{unit}", self.value);
        if self.has_interval() {
            s.push_str(&format!(" [{:.d$}-{:.d$}]", self.low, self.high));
        }
        if self.noisy() {
            s.push_str(" ~");
        }
        s
    }
}

/// Where an interval lies against a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The whole interval is at or above the threshold.
    Above,
    /// The whole interval is below the threshold.
    Below,
    /// The threshold lies inside the interval.
    Across,
}

/// The lines to print once under a table: what `~` means when any figure
/// is noisy, and how the intervals were obtained when not by order statistics.
pub fn notes<'a>(estimates: impl IntoIterator<Item = &'a Estimate>) -> Vec<String> {
    let (mut noisy, mut min_n, mut boot) = (false, usize::MAX, false);
    for e in estimates {
        noisy |= e.noisy();
        min_n = min_n.min(e.n);
        boot |= e.method == Method::Bootstrap;
    }
    let mut out = Vec::new();
    if min_n == 1 {
        out.push("1 round: figures without an interval; use --rounds 5 or more.".to_string());
    } else if boot {
        out.push(format!(
            "n<{MIN_ORDER_STATISTIC_N} rounds: a median's interval is by bootstrap (order statistics need {MIN_ORDER_STATISTIC_N}+)."
        ));
    }
    if noisy {
        out.push(NOISY_ADVICE.to_string());
    }
    out
}

/// The fewest rounds for which a 95% order-statistic interval of the median exists.
pub const MIN_ORDER_STATISTIC_N: usize = 6;

/// 1-based ranks (lower, upper) of the sorted values bounding a 95%
/// interval for the median, when n allows one: the largest lower rank k
/// with P(Binomial(n, 1/2) < k) <= 2.5%, and its mirror n + 1 - k.
pub fn order_statistic_ranks(n: usize) -> Option<(usize, usize)> {
    let tail = (1.0 - LEVEL) / 2.0;
    // P(B = i) built up term by term: C(n, i) / 2^n.
    let mut p = 0.5f64.powi(n as i32);
    let mut cdf = 0.0;
    let mut k = 0;
    for i in 0..n {
        cdf += p;
        if cdf > tail + 1e-12 {
            break;
        }
        k = i + 1;
        p *= (n - i) as f64 / (i + 1) as f64;
    }
    (k >= 1).then(|| (k, n + 1 - k))
}

/// The median of `values` (rounds, any order) with its 95% interval.
pub fn median_estimate(values: &[f64], seed: u64) -> Estimate {
    let n = values.len();
    if n <= 1 {
        return Estimate::point(values.first().copied().unwrap_or(0.0), n);
    }
    let value = median(values);
    if let Some((lo, hi)) = order_statistic_ranks(n) {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        return Estimate {
            value,
            low: v[lo - 1],
            high: v[hi - 1],
            n,
            method: Method::OrderStatistic,
        };
    }
    let (low, high) = bootstrap_median(values, seed);
    Estimate {
        value,
        low,
        high,
        n,
        method: Method::Bootstrap,
    }
}

/// numerator / denominator round by round (same round paired), as the
/// median of the per-round ratios with a bootstrap of their logs. Rounds
/// beyond the shorter side are dropped.
pub fn paired_ratio(numerator: &[f64], denominator: &[f64], seed: u64) -> Estimate {
    let logs: Vec<f64> = numerator
        .iter()
        .zip(denominator)
        .map(|(a, b)| (a / b).ln())
        .collect();
    let n = logs.len();
    if n <= 1 {
        return Estimate::point(logs.first().map_or(f64::NAN, |l| l.exp()), n);
    }
    let (low, high) = bootstrap_median(&logs, seed);
    Estimate {
        value: median(&logs).exp(),
        low: low.exp(),
        high: high.exp(),
        n,
        method: Method::PairedLogBootstrap,
    }
}

/// Percentile bootstrap (at [`LEVEL`], [`RESAMPLES`] resamples) of the median.
fn bootstrap_median(values: &[f64], seed: u64) -> (f64, f64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut buf = Vec::with_capacity(values.len());
    let mut medians: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            buf.clear();
            buf.extend((0..values.len()).map(|_| values[rng.random_range(0..values.len())]));
            median(&buf)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - LEVEL) / 2.0;
    let at = |q: f64| medians[((q * (RESAMPLES - 1) as f64).round() as usize).min(RESAMPLES - 1)];
    (at(tail), at(1.0 - tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_statistic_ranks_match_the_binomial_table() {
        // Conover's table of 95% median intervals (ranks of the sorted sample).
        let table = [
            (6, 1, 6),
            (7, 1, 7),
            (8, 1, 8),
            (9, 2, 8),
            (10, 2, 9),
            (11, 2, 10),
            (12, 3, 10),
            (13, 3, 11),
            (14, 3, 12),
            (15, 4, 12),
            (16, 4, 13),
            (17, 5, 13),
            (18, 5, 14),
            (19, 5, 15),
            (20, 6, 15),
        ];
        for (n, lo, hi) in table {
            assert_eq!(order_statistic_ranks(n), Some((lo, hi)), "n = {n}");
        }
        // n = 5: even [min, max] covers only 93.75%.
        for n in 0..=5 {
            assert_eq!(order_statistic_ranks(n), None, "n = {n}");
        }
    }

    #[test]
    fn median_estimate_picks_its_method() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let e = median_estimate(&v, 1);
        assert_eq!((e.value, e.low, e.high), (5.5, 2.0, 9.0));
        assert_eq!(e.method, Method::OrderStatistic);
        let e = median_estimate(&[3.0, 1.0, 2.0], 1);
        assert_eq!(e.value, 2.0);
        assert_eq!(e.method, Method::Bootstrap);
        assert!(e.low >= 1.0 && e.high <= 3.0 && e.low <= 2.0 && e.high >= 2.0);
        let e = median_estimate(&[7.0], 1);
        assert_eq!((e.value, e.n, e.method), (7.0, 1, Method::None));
        assert_eq!(e.format(1), "7.0");
    }

    #[test]
    fn a_ratio_pairs_rounds_not_medians() {
        // Round 1 is slow on both sides, round 3 fast on both: the per-round
        // ratios are 2, 1, 2 (median 2), whereas the ratio of the medians is 1.
        let files = [100.0, 20.0, 2.0];
        let db = [50.0, 20.0, 1.0];
        let r = paired_ratio(&files, &db, 3);
        assert_eq!(median(&files) / median(&db), 1.0);
        assert!((r.value - 2.0).abs() < 1e-12, "{r:?}");
        let files = [100.0, 40.0, 2.0];
        let r = paired_ratio(&files, &db, 3);
        assert!((r.value - 2.0).abs() < 1e-12, "{r:?}");
        assert!((r.low - 2.0).abs() < 1e-12 && (r.high - 2.0).abs() < 1e-12);
        assert_eq!(r.method, Method::PairedLogBootstrap);
        assert_eq!(r.format_ratio(), "2.00x [2.00-2.00]");
    }

    #[test]
    fn bootstrap_covers_the_true_ratio_near_the_nominal_rate() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
        let truth = 1.5;
        let (trials, n) = (300, 15);
        let mut hits = 0;
        for t in 0..trials {
            let mut noise =
                || (rng.random::<f64>() - 0.5) * 0.4 + (rng.random::<f64>() - 0.5) * 0.4;
            let db: Vec<f64> = (0..n).map(|i| 100.0 * (1.0 + i as f64 * 0.1)).collect();
            let files: Vec<f64> = db.iter().map(|d| d * truth * noise().exp()).collect();
            if paired_ratio(&files, &db, t).contains(truth) {
                hits += 1;
            }
        }
        let rate = hits as f64 / trials as f64;
        assert!((0.88..=0.995).contains(&rate), "coverage {rate}");
    }

    #[test]
    fn noisy_beyond_a_quarter() {
        let e = |low, high| Estimate {
            value: 1.0,
            low,
            high,
            n: 5,
            method: Method::Bootstrap,
        };
        assert!(!e(0.8, 1.24).noisy());
        assert!(e(0.8, 1.26).noisy());
        assert!(e(0.74, 1.0).noisy());
        assert_eq!(e(0.74, 1.0).format_ratio(), "1.00x [0.74-1.00] ~");
        assert!(!Estimate::point(1.0, 1).noisy());
        let notes = notes(&[e(0.5, 2.0)]);
        assert!(
            notes
                .iter()
                .any(|l| l.contains("--rounds") && l.contains("--dir"))
        );
        assert!(notes.iter().any(|l| l.contains("bootstrap")));
    }

    #[test]
    fn sides_of_a_threshold() {
        let e = Estimate {
            value: 1.5,
            low: 1.3,
            high: 1.7,
            n: 5,
            method: Method::PairedLogBootstrap,
        };
        assert_eq!(e.side_of(1.2), Side::Above);
        assert_eq!(e.side_of(1.3), Side::Above);
        assert_eq!(e.side_of(1.8), Side::Below);
        assert_eq!(e.side_of(1.5), Side::Across);
    }
}
