//! The one estimate every printed figure is: the median of this run's
//! rounds with its interval, and how that interval was obtained.
//!
//! Both a median and a paired ratio get the exact distribution-free
//! interval of the sign test: order statistics `[x(k), x(n+1-k)]` of the
//! rounds (of the per-round log ratios for a ratio), whose coverage is
//! `1 - 2 P(Binomial(n, 1/2) < k)` whatever the distribution. k is the
//! largest rank that still covers 95%; where the rounds cannot give 95%
//! (n < 6) the interval is [min, max] and its true coverage (94% at 5
//! rounds, 88% at 4, 75% at 3) is printed beside it: never the word 95%.
//!
//! The interval speaks of this run's rounds: it says where the median of
//! many more rounds of this run would fall, not where a rerun tomorrow
//! would land. The between-run answer is `quick --runs K`
//! ([`Method::BetweenRuns`]), `compare` with several results a side, and
//! the calibration bench (bench/calibrate.sh). Every estimate written to a
//! result says which it is (`interval_over`, [`Method::interval_over`]).

use serde::{Deserialize, Serialize};

use super::significance::{LEVEL, median};

/// Half-width (relative to the figure) above which a figure is noisy.
pub const NOISY_HALF_WIDTH: f64 = 0.25;

/// What `~` means and how to make it go away, printed once under a table
/// that marks a figure noisy.
pub const NOISY_ADVICE: &str = "~ = noisy: the interval is wider than +/-25% of the figure; \
rerun with more rounds (--rounds), on a quieter machine, or with --dir on the disk that matters.";

/// What every interval is, said once under a table: the rounds of this run.
pub const INTERVAL_MEANING: &str = "[low-high] = interval over this run's rounds (exact sign-test \
order statistics, 95% unless another coverage is printed beside it); a rerun can land outside it: \
compare several results a side for the between-run answer.";

/// How far past 1.00 a time ratio's interval over one run's rounds must
/// lie before a decision or a verdict moves on it: two runs of one build on
/// one machine commonly differ by 5-10% (where a new dataset's pages
/// landed, the disk's state), which no round of either run reveals, so a
/// within-run interval at 0.96x [0.88-0.97] decides nothing. compare's
/// default threshold, for the same reason. An interval between independent
/// runs (`quick --runs K`) carries that variation itself and needs no margin.
pub const WITHIN_RUN_MARGIN: f64 = 0.10;

/// How an estimate's interval was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Sign-test order statistics of the sorted rounds around the median.
    OrderStatistic,
    /// Sign-test order statistics of the per-round paired log ratios.
    PairedLogOrderStatistic,
    /// Sign-test order statistics at the 97.5% ranks, for rounds that
    /// stopped at a precision target: 95% after stopping, by simulation
    /// (`measure::precision`).
    SequentialOrderStatistic,
    /// The paired log ratios' order statistics at the 97.5% ranks, for
    /// rounds that stopped at a precision target.
    PairedLogSequentialOrderStatistic,
    /// Sign-test order statistics of K independent runs' figures (each a
    /// fresh dataset), widened to hold a rerun's figure ([`between_runs`]):
    /// the between-run interval, which says where a rerun's figure lands,
    /// as the rounds of one run cannot.
    BetweenRuns,
    /// Percentile bootstrap of the median (results written before the
    /// exact intervals; its 95% was nominal).
    Bootstrap,
    /// Percentile bootstrap of paired log ratios (older results; nominal 95%).
    PairedLogBootstrap,
    /// No interval: one round, or a figure that is not sampled (disk space).
    None,
}

/// What a within-run interval spans, as results say it (`interval_over`).
pub const OVER_ROUNDS_OF_ONE_RUN: &str = "rounds of one run";
/// What a between-run interval spans, as results say it.
pub const OVER_INDEPENDENT_RUNS: &str = "independent runs";

impl Method {
    /// What the interval's samples are, for a reader of the result: the
    /// rounds of one run (a rerun can land outside it) or independent runs
    /// (where a rerun lands); None without an interval.
    pub fn interval_over(self) -> Option<&'static str> {
        match self {
            Method::None => None,
            Method::BetweenRuns => Some(OVER_INDEPENDENT_RUNS),
            Method::OrderStatistic
            | Method::PairedLogOrderStatistic
            | Method::SequentialOrderStatistic
            | Method::PairedLogSequentialOrderStatistic
            | Method::Bootstrap
            | Method::PairedLogBootstrap => Some(OVER_ROUNDS_OF_ONE_RUN),
        }
    }
}

/// A figure with its interval: `value [low-high]`, from `n` rounds. Written
/// to results with `interval_over` beside the method (see
/// [`Method::interval_over`]); reading ignores it, as it follows from the
/// method.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
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
    /// The interval's exact coverage (0.9375 for [min, max] of 5 rounds);
    /// absent in results written before exact intervals and without an interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
}

impl Serialize for Estimate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let over = self.method.interval_over();
        let fields = 5 + usize::from(self.coverage.is_some()) + usize::from(over.is_some());
        let mut st = s.serialize_struct("Estimate", fields)?;
        st.serialize_field("value", &self.value)?;
        st.serialize_field("low", &self.low)?;
        st.serialize_field("high", &self.high)?;
        st.serialize_field("n", &self.n)?;
        st.serialize_field("method", &self.method)?;
        if let Some(coverage) = self.coverage {
            st.serialize_field("coverage", &coverage)?;
        }
        if let Some(over) = over {
            st.serialize_field("interval_over", over)?;
        }
        st.end()
    }
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
            coverage: None,
        }
    }

    /// Whether the interval's coverage falls short of 95% (too few rounds),
    /// so it must be printed beside it.
    pub fn short_coverage(&self) -> Option<f64> {
        self.coverage
            .filter(|c| self.has_interval() && *c < LEVEL - 1e-9)
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

    /// The factor a rerun could move this figure by beyond its interval:
    /// [`WITHIN_RUN_MARGIN`] for an interval over one run's rounds (two
    /// runs of one build here differ by 5-10%, which no round reveals), 1
    /// for one between independent runs, which carries that variation, and
    /// for a figure without an interval (disk space, which a rerun gives
    /// again).
    pub fn rerun_factor(&self) -> f64 {
        match self.method.interval_over() {
            Some(OVER_ROUNDS_OF_ONE_RUN) => 1.0 + WITHIN_RUN_MARGIN,
            _ => 1.0,
        }
    }

    /// The interval widened by [`Estimate::rerun_factor`] each way: where a
    /// rerun's figure could land. A verdict that must survive a rerun is
    /// taken on it.
    pub fn rerun_reach(&self) -> (f64, f64) {
        let f = self.rerun_factor();
        (self.low / f, self.high * f)
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
            if let Some(c) = self.short_coverage() {
                s.push_str(&format!(", {}", coverage_text(c)));
            }
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

/// A coverage as printed beside an interval: 0.9375 -> "94%", 0.875 ->
/// "88%"; a coverage short of 95% never prints as 95%.
pub fn coverage_text(coverage: f64) -> String {
    let percent = coverage * 100.0;
    let rounded = percent.round();
    if rounded >= LEVEL * 100.0 && coverage < LEVEL {
        return format!("{:.0}%", percent.floor());
    }
    format!("{rounded:.0}%")
}

/// The lines to print once under a table: what `~` means when any figure
/// is noisy, and the coverage the rounds give when it is short of 95%.
/// The advice names `--rounds` and `--dir`; see [`notes_naming`] for a
/// command whose options are called otherwise.
pub fn notes<'a>(estimates: impl IntoIterator<Item = &'a Estimate>) -> Vec<String> {
    notes_naming(estimates, "--rounds", "--dir")
}

/// [`notes`] for a command whose rounds are set by `rounds_option` and
/// whose data's disk by `dir_option`: advice names options that exist.
pub fn notes_naming<'a>(
    estimates: impl IntoIterator<Item = &'a Estimate>,
    rounds_option: &str,
    dir_option: &str,
) -> Vec<String> {
    let (mut noisy, mut min_n, mut nominal, mut runs) = (false, usize::MAX, false, false);
    for e in estimates {
        noisy |= e.noisy();
        min_n = min_n.min(e.n);
        nominal |= matches!(e.method, Method::Bootstrap | Method::PairedLogBootstrap);
        runs |= e.method == Method::BetweenRuns;
    }
    let mut out = Vec::new();
    if runs {
        out.push(format!(
            "[low-high] = interval between the {min_n} runs (each a fresh dataset, the figure their median): \
             it holds a rerun's figure (the median of {min_n} more runs) {} of the time, as this run's rounds cannot{}",
            coverage_text(sign_test_ranks(min_n.max(2)).1),
            if min_n < MIN_FULL_COVERAGE_N {
                format!("; 95% needs {MIN_FULL_COVERAGE_N} runs (--runs {MIN_FULL_COVERAGE_N})")
            } else {
                String::new()
            }
        ));
    } else if min_n == 1 {
        out.push(format!(
            "1 round: figures without an interval; use {rounds_option} 6 or more."
        ));
    } else if min_n < MIN_FULL_COVERAGE_N {
        let (_, coverage) = sign_test_ranks(min_n);
        out.push(format!(
            "{min_n} rounds: [min-max] covers {} of this run's medians, printed beside each interval; \
             95% needs {MIN_FULL_COVERAGE_N} rounds ({rounds_option} {MIN_FULL_COVERAGE_N}).",
            coverage_text(coverage)
        ));
    }
    if nominal {
        out.push(
            "intervals from a result written before exact intervals: a bootstrap, 95% only nominally."
                .to_string(),
        );
    }
    if noisy {
        let fix = if runs {
            "more runs (--runs)".to_string()
        } else {
            format!("more rounds ({rounds_option})")
        };
        out.push(
            NOISY_ADVICE
                .replace("more rounds (--rounds)", &fix)
                .replace("--dir on", &format!("{dir_option} on")),
        );
    }
    out
}

/// The fewest rounds whose sign-test interval covers 95%.
pub const MIN_FULL_COVERAGE_N: usize = 6;

/// The exact coverage of `[x(k), x(n+1-k)]` for the median of n values:
/// 1 - 2 P(Binomial(n, 1/2) < k).
pub fn sign_test_coverage(n: usize, k: usize) -> f64 {
    // P(B = i) built up term by term: C(n, i) / 2^n.
    let mut p = 0.5f64.powi(n as i32);
    let mut below = 0.0;
    for i in 0..k.min(n + 1) {
        below += p;
        p *= (n - i) as f64 / (i + 1) as f64;
    }
    (1.0 - 2.0 * below).max(0.0)
}

/// 1-based ranks k of the sorted values bounding the median's interval,
/// `[x(k), x(n+1-k)]`, and its exact coverage: the largest k whose coverage
/// is still at least 95%, or k = 1 ([min, max]) with the coverage it gives
/// when even that falls short (n < 6). n must be at least 2.
pub fn sign_test_ranks(n: usize) -> (usize, f64) {
    sign_test_ranks_at(n, LEVEL)
}

/// [`sign_test_ranks`] at another level.
fn sign_test_ranks_at(n: usize, level: f64) -> (usize, f64) {
    let mut k = 1;
    while k < n / 2 && sign_test_coverage(n, k + 1) >= level - 1e-12 {
        k += 1;
    }
    (k, sign_test_coverage(n, k))
}

/// The median of `values` with its sign-test interval: at the 95% ranks,
/// or for rounds that stopped on width at the ranks that keep 95% after
/// stopping (the coverage recorded is then the simulated 95%, as the
/// rule's, not the ranks' own).
fn order_statistic(values: &[f64], method: Method) -> Estimate {
    let n = values.len();
    if n <= 1 {
        return Estimate::point(values.first().copied().unwrap_or(0.0), n);
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let sequential = matches!(
        method,
        Method::SequentialOrderStatistic | Method::PairedLogSequentialOrderStatistic
    );
    let (k, coverage) = if sequential {
        let (k, exact) = sign_test_ranks_at(n, super::precision::SEQUENTIAL_LEVEL);
        (k, exact.min(LEVEL))
    } else {
        sign_test_ranks(n)
    };
    Estimate {
        value: median(&sorted),
        low: sorted[k - 1],
        high: sorted[n - k],
        n,
        method,
        coverage: Some(coverage),
    }
}

/// The median of `values` (rounds, any order) with its sign-test interval.
pub fn median_estimate(values: &[f64]) -> Estimate {
    order_statistic(values, Method::OrderStatistic)
}

/// How the rounds behind an estimate ended, which sets its interval's
/// ranks: a count fixed beforehand, or on the intervals' width (see
/// `measure::precision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopping {
    /// As many rounds as asked for.
    Fixed,
    /// Until the intervals were narrow enough.
    OnWidth,
}

impl Stopping {
    /// The median of `values` with the interval this stopping calls for.
    pub fn median(self, values: &[f64]) -> Estimate {
        match self {
            Stopping::Fixed => median_estimate(values),
            Stopping::OnWidth => median_estimate_sequential(values),
        }
    }

    /// The paired ratio with the interval this stopping calls for.
    pub fn ratio(self, numerator: &[f64], denominator: &[f64]) -> Estimate {
        match self {
            Stopping::Fixed => paired_ratio(numerator, denominator),
            Stopping::OnWidth => paired_ratio_sequential(numerator, denominator),
        }
    }
}

/// How much wider than the sign-test interval of K runs' median the
/// between-run interval is, each side, on the log scale.
///
/// The between-run interval answers where a rerun's figure lands, and that
/// figure (the median of as many runs) is as uncertain as this one: their
/// difference spreads about sqrt(2) times either. sqrt(2) still falls 1-3
/// points short of the ranks' coverage at few runs (the order statistics'
/// own spread); 1.75 holds it, within half a point, from 3 to 30 runs over
/// normal, skewed, heavy-tailed, flat and two-peaked runs (simulation in
/// this module's tests). Checked against real reruns by `bench/calibrate.sh`.
pub const RERUN_WIDENING: f64 = 1.75;

/// The median of K independent runs' figures with the between-run
/// interval: the sign-test interval of the runs, widened by
/// [`RERUN_WIDENING`], which holds a rerun's figure (the median of K more
/// runs) with the recorded coverage when runs are independent.
pub fn between_runs(values: &[f64]) -> Estimate {
    let e = order_statistic(values, Method::BetweenRuns);
    let widen = |bound: f64| {
        if e.value > 0.0 && bound > 0.0 {
            e.value * (bound / e.value).powf(RERUN_WIDENING)
        } else {
            e.value + (bound - e.value) * RERUN_WIDENING
        }
    };
    Estimate {
        low: widen(e.low),
        high: widen(e.high),
        ..e
    }
}

/// [`median_estimate`] of rounds that stopped at a precision target.
pub fn median_estimate_sequential(values: &[f64]) -> Estimate {
    order_statistic(values, Method::SequentialOrderStatistic)
}

/// numerator / denominator round by round (same round paired), as the
/// median of the per-round ratios with the sign-test interval of their
/// logs. Rounds beyond the shorter side are dropped.
pub fn paired_ratio(numerator: &[f64], denominator: &[f64]) -> Estimate {
    paired_ratio_by(numerator, denominator, Method::PairedLogOrderStatistic)
}

/// [`paired_ratio`] of rounds that stopped at a precision target.
pub fn paired_ratio_sequential(numerator: &[f64], denominator: &[f64]) -> Estimate {
    paired_ratio_by(
        numerator,
        denominator,
        Method::PairedLogSequentialOrderStatistic,
    )
}

fn paired_ratio_by(numerator: &[f64], denominator: &[f64], method: Method) -> Estimate {
    let logs: Vec<f64> = numerator
        .iter()
        .zip(denominator)
        .map(|(a, b)| (a / b).ln())
        .collect();
    if logs.len() == 1 {
        return Estimate::point(logs[0].exp(), 1);
    }
    if logs.is_empty() {
        return Estimate::point(f64::NAN, 0);
    }
    let e = order_statistic(&logs, method);
    Estimate {
        value: e.value.exp(),
        low: e.low.exp(),
        high: e.high.exp(),
        ..e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, LogNormal};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn sign_test_ranks_match_the_binomial_table() {
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
            let (k, coverage) = sign_test_ranks(n);
            assert_eq!((k, n + 1 - k), (lo, hi), "n = {n}");
            assert!(coverage >= LEVEL, "n = {n}: {coverage}");
        }
        // Too few rounds for 95%: [min, max] and what it truly covers.
        for (n, coverage) in [(2, 0.5), (3, 0.75), (4, 0.875), (5, 0.9375)] {
            assert_eq!(sign_test_ranks(n), (1, coverage), "n = {n}");
        }
        assert!((sign_test_ranks(7).1 - 126.0 / 128.0).abs() < 1e-12);
        assert!((sign_test_ranks(10).1 - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
    }

    /// The share of `trials` intervals from `interval` that hold the truth.
    fn covered(trials: u32, mut interval: impl FnMut(&mut Xoshiro256PlusPlus) -> bool) -> f64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(27);
        let hits = (0..trials).filter(|_| interval(&mut rng)).count();
        hits as f64 / f64::from(trials)
    }

    #[test]
    fn coverage_is_what_the_interval_claims_at_the_default_round_counts() {
        // Skewed, heavy-tailed rounds (log-normal, log-sd 0.5): the sign
        // test's coverage holds for any continuous distribution, so the
        // simulated share must match the exact figure within 4 standard
        // errors of 20,000 trials (about +/-0.7 points at 95%).
        let trials = 20_000;
        let d = LogNormal::new(0.0, 0.5).unwrap();
        for n in [3, 5, 7, 10] {
            let (_, exact) = sign_test_ranks(n);
            let tolerance = 4.0 * (exact * (1.0 - exact) / f64::from(trials)).sqrt();
            // The true median of the distribution is e^0 = 1.
            let median_share = covered(trials, |rng| {
                let rounds: Vec<f64> = (0..n).map(|_| 100.0 * d.sample(rng)).collect();
                median_estimate(&rounds).contains(100.0)
            });
            // A paired ratio of 1.5 with round-to-round drift shared by
            // both sides and each side's own noise.
            let ratio_share = covered(trials, |rng| {
                let drift: Vec<f64> = (0..n).map(|_| rng.random_range(0.5..2.0)).collect();
                let db: Vec<f64> = drift.iter().map(|m| 100.0 * m).collect();
                let files: Vec<f64> = db.iter().map(|x| x * 1.5 * d.sample(rng)).collect();
                paired_ratio(&files, &db).contains(1.5)
            });
            eprintln!(
                "n={n}: exact {exact:.4}, median covered {median_share:.4}, ratio {ratio_share:.4}"
            );
            for share in [median_share, ratio_share] {
                assert!(
                    (share - exact).abs() <= tolerance,
                    "n={n}: {share} vs {exact}"
                );
            }
            // Where 95% is claimed it is true, and below 6 rounds it is not claimed.
            assert_eq!(exact >= LEVEL, n >= MIN_FULL_COVERAGE_N, "n={n}");
        }
    }

    #[test]
    fn a_between_run_interval_holds_a_reruns_figure_with_its_recorded_coverage() {
        // Runs of several shapes (on the log scale, as run figures are
        // times and ratios): a rerun's figure is the median of as many
        // independent runs again. 20,000 trials a shape; the shortfall
        // allowed is half a point plus 4 standard errors.
        type Shape = Box<dyn Fn(&mut Xoshiro256PlusPlus) -> f64>;
        let normal = rand_distr::Normal::new(0.0, 0.1).unwrap();
        let t3 = rand_distr::StudentT::new(3.0).unwrap();
        let shapes: Vec<(&str, Shape)> = vec![
            ("normal", Box::new(move |r| normal.sample(r))),
            ("skewed", Box::new(|r| 0.1 * r.random::<f64>().powi(4))),
            ("heavy-tailed", Box::new(move |r| 0.05 * t3.sample(r))),
            ("flat", Box::new(|r| r.random_range(-0.1..0.1))),
            (
                "two-peaked",
                Box::new(move |r| normal.sample(r) + if r.random_bool(0.3) { 0.3 } else { 0.0 }),
            ),
        ];
        let trials = 20_000;
        for k in [3, 4, 5, 6, 7, 9, 12, 17, 20] {
            for (name, shape) in &shapes {
                let runs = |rng: &mut Xoshiro256PlusPlus| -> Vec<f64> {
                    (0..k).map(|_| 100.0 * shape(rng).exp()).collect()
                };
                let mut coverage = None;
                let share = covered(trials, |rng| {
                    let e = between_runs(&runs(rng));
                    coverage = e.coverage;
                    e.contains(median(&runs(rng)))
                });
                let claimed = coverage.unwrap();
                let tolerance =
                    0.005 + 4.0 * (claimed * (1.0 - claimed) / f64::from(trials)).sqrt();
                assert!(
                    share >= claimed - tolerance,
                    "{k} runs, {name}: a rerun's figure held {share:.4}, recorded {claimed:.4}"
                );
                // Without the widening, a rerun's figure lands outside far
                // more often than the ranks' coverage says.
                if k == 6 && *name == "normal" {
                    let plain = covered(trials, |rng| {
                        order_statistic(&runs(rng), Method::BetweenRuns)
                            .contains(median(&runs(rng)))
                    });
                    assert!(plain < claimed - 0.04, "{plain} vs {claimed}");
                }
            }
        }
    }

    #[test]
    fn short_coverage_is_printed_beside_the_interval() {
        let five = [5.0, 1.0, 4.0, 2.0, 3.0];
        let e = median_estimate(&five);
        assert_eq!((e.value, e.low, e.high), (3.0, 1.0, 5.0));
        assert_eq!(e.method, Method::OrderStatistic);
        assert_eq!(e.format(1), "3.0 [1.0-5.0], 94% ~");
        let seven: Vec<f64> = (1..=7).map(|i| 100.0 + f64::from(i)).collect();
        assert_eq!(median_estimate(&seven).format(0), "104 [101-107]");
        let notes = notes(&[e]);
        assert!(
            notes
                .iter()
                .any(|l| l.contains("5 rounds") && l.contains("94%")),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .all(|l| !l.contains("95%") || l.contains("needs 6"))
        );
    }

    #[test]
    fn median_estimate_of_one_round_has_no_interval() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let e = median_estimate(&v);
        assert_eq!((e.value, e.low, e.high), (5.5, 2.0, 9.0));
        let e = median_estimate(&[7.0]);
        assert_eq!((e.value, e.n, e.method), (7.0, 1, Method::None));
        assert_eq!(e.format(1), "7.0");
    }

    #[test]
    fn a_ratio_pairs_rounds_not_medians() {
        // Round 1 is slow on both sides, round 3 fast on both: the per-round
        // ratios are 2, 1, 2 (median 2), whereas the ratio of the medians is 1.
        let files = [100.0, 20.0, 2.0];
        let db = [50.0, 20.0, 1.0];
        let r = paired_ratio(&files, &db);
        assert_eq!(median(&files) / median(&db), 1.0);
        assert!((r.value - 2.0).abs() < 1e-12, "{r:?}");
        let files = [100.0, 40.0, 2.0];
        let r = paired_ratio(&files, &db);
        assert!((r.value - 2.0).abs() < 1e-12, "{r:?}");
        assert!((r.low - 2.0).abs() < 1e-12 && (r.high - 2.0).abs() < 1e-12);
        assert_eq!(r.method, Method::PairedLogOrderStatistic);
        assert_eq!(r.format_ratio(), "2.00x [2.00-2.00], 75%");
    }

    #[test]
    fn every_estimate_written_says_whether_it_spans_one_run_or_several() {
        let within = median_estimate(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let json = serde_json::to_value(within).unwrap();
        assert_eq!(json["interval_over"], OVER_ROUNDS_OF_ONE_RUN);
        let between = between_runs(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let json = serde_json::to_value(between).unwrap();
        assert_eq!(json["interval_over"], OVER_INDEPENDENT_RUNS);
        assert!(
            serde_json::to_value(Estimate::point(3.0, 1))
                .unwrap()
                .get("interval_over")
                .is_none()
        );
        // Read back, the label is not needed: the method says it.
        let back: Estimate = serde_json::from_value(json).unwrap();
        assert_eq!(back, between);
    }

    #[test]
    fn results_written_before_exact_intervals_still_read_and_print() {
        let old =
            r#"{"value": 1.5, "low": 1.3, "high": 1.7, "n": 5, "method": "paired-log-bootstrap"}"#;
        let e: Estimate = serde_json::from_str(old).unwrap();
        assert_eq!(e.coverage, None);
        assert_eq!(e.format_ratio(), "1.50x [1.30-1.70]");
        assert!(notes(&[e]).iter().any(|l| l.contains("nominally")));
    }

    #[test]
    fn noisy_beyond_a_quarter() {
        let e = |low, high| Estimate {
            value: 1.0,
            low,
            high,
            n: 7,
            method: Method::OrderStatistic,
            coverage: Some(0.984),
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
    }

    #[test]
    fn sides_of_a_threshold() {
        let e = Estimate {
            value: 1.5,
            low: 1.3,
            high: 1.7,
            n: 7,
            method: Method::PairedLogOrderStatistic,
            coverage: Some(0.984),
        };
        assert_eq!(e.side_of(1.2), Side::Above);
        assert_eq!(e.side_of(1.3), Side::Above);
        assert_eq!(e.side_of(1.8), Side::Below);
        assert_eq!(e.side_of(1.5), Side::Across);
    }
}
