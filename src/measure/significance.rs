//! Whether two sets of samples differ: a rank test (Mann-Whitney U), the
//! Holm correction for testing many cases at once, and a bootstrap interval
//! of the ratio of medians. `compare` decides "faster" or "slower" with
//! [`assess`]; the rule is here, beside the statistics, so the simulations
//! that check its false-positive rate and its power test the rule itself.
//!
//! Everything is deterministic: the bootstrap draws from a seeded generator,
//! so the same two results always compare the same way.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The family-wise error rate: the chance that any case of a comparison is
/// called changed when none changed.
pub const ALPHA: f64 = 0.05;
/// Fewer samples than this on a side give no verdict: below 4 a side the
/// rank test cannot reject at 5% and the median's interval is the range.
pub const MIN_SAMPLES: usize = 4;
/// The confidence level of the ratio's interval.
pub const LEVEL: f64 = 0.95;
/// Bootstrap resamples per case: enough for stable 2.5% and 97.5% quantiles.
pub const RESAMPLES: usize = 2000;
/// Largest sample on a side for which the exact distribution of U is
/// counted; beyond it the normal approximation is as good.
const EXACT_MAX: usize = 30;

/// How a rank test's p value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankMethod {
    /// The exact distribution of U (small samples, no ties).
    Exact,
    /// The normal approximation with tie correction and continuity correction.
    Normal,
}

impl RankMethod {
    /// The name results record.
    pub fn name(self) -> &'static str {
        match self {
            RankMethod::Exact => "mann-whitney-exact",
            RankMethod::Normal => "mann-whitney-normal",
        }
    }
}

/// The outcome of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankTest {
    /// U of the first sample: pairs (x, y) with x > y, ties counting half.
    pub u: f64,
    /// Two-sided p value of "both samples come from one distribution".
    pub p: f64,
    /// How `p` was computed.
    pub method: RankMethod,
}

/// Midranks (1-based) of `values` pooled, and the sizes of tied groups.
fn midranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && values[order[j]] == values[order[i]] {
            j += 1;
        }
        // Ranks i+1..=j share their mean.
        let rank = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            ranks[k] = rank;
        }
        if j - i > 1 {
            ties.push(j - i);
        }
        i = j;
    }
    (ranks, ties)
}

/// Two-sided Mann-Whitney U test of `x` against `y`: exact when both are at
/// most 30 samples and nothing is tied, else the normal approximation with
/// the tie-corrected variance and a continuity correction.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> RankTest {
    let (m, n) = (x.len(), y.len());
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, ties) = midranks(&pooled);
    let rank_sum: f64 = ranks[..m].iter().sum();
    let u = rank_sum - (m * (m + 1)) as f64 / 2.0;
    if m == 0 || n == 0 {
        return RankTest {
            u,
            p: 1.0,
            method: RankMethod::Normal,
        };
    }
    if ties.is_empty() && m <= EXACT_MAX && n <= EXACT_MAX {
        let counts = u_distribution(m, n);
        let total: f64 = counts.iter().sum();
        let k = u.round() as usize;
        let below: f64 = counts[..=k].iter().sum();
        let above: f64 = counts[k..].iter().sum();
        let p = (2.0 * below.min(above) / total).min(1.0);
        return RankTest {
            u,
            p,
            method: RankMethod::Exact,
        };
    }
    let (mf, nf) = (m as f64, n as f64);
    let big_n = mf + nf;
    let tie_term: f64 = ties.iter().map(|&t| (t * t * t - t) as f64).sum::<f64>();
    let var = mf * nf / 12.0 * ((big_n + 1.0) - tie_term / (big_n * (big_n - 1.0)));
    let p = if var <= 0.0 {
        // Every value equal: nothing to tell the samples apart.
        1.0
    } else {
        let z = ((u - mf * nf / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
        erfc(z / std::f64::consts::SQRT_2).min(1.0)
    };
    RankTest {
        u,
        p,
        method: RankMethod::Normal,
    }
}

/// How many arrangements of m x's among m + n distinct values give each U
/// (index 0..=m*n). Counted as m-subsets of the ranks 1..=m+n by their sum:
/// additions only, so the counts stay exact as long as f64 holds them.
fn u_distribution(m: usize, n: usize) -> Vec<f64> {
    let big_n = m + n;
    let max_sum = m * big_n;
    // ways[j][s]: j-subsets of the ranks seen so far summing to s.
    let mut ways = vec![vec![0.0f64; max_sum + 1]; m + 1];
    ways[0][0] = 1.0;
    for rank in 1..=big_n {
        for j in (1..=m.min(rank)).rev() {
            let (lower, upper) = ways.split_at_mut(j);
            let (from, to) = (&lower[j - 1], &mut upper[0]);
            for s in (rank..=max_sum).rev() {
                to[s] += from[s - rank];
            }
        }
    }
    let offset = m * (m + 1) / 2;
    ways[m][offset..=offset + m * n].to_vec()
}

/// The smallest two-sided p value a rank test of m against n samples can
/// give (both fully separated, no ties): what "significant" is possible at all.
pub fn smallest_p(m: usize, n: usize) -> f64 {
    let x: Vec<f64> = (0..m).map(|i| i as f64).collect();
    let y: Vec<f64> = (0..n).map(|i| (m + i) as f64).collect();
    mann_whitney(&x, &y).p
}

/// Holm's step-down adjustment: adjusted p values, in the order given, that
/// keep the chance of any false rejection among all of them at most alpha
/// when compared with alpha.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let k = p.len();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; k];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        // Monotone: a larger p never gets a smaller adjusted value.
        running = running.max(((k - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The median of `v`, reordering it (0 for none).
fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    let (_, hi, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        return hi;
    }
    // The lower middle is the largest of the lower half.
    let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo + hi) / 2.0
}

/// The median of `v` (0 for none).
pub fn median(v: &[f64]) -> f64 {
    median_in_place(&mut v.to_vec())
}

/// A ratio after/before of medians with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioInterval {
    /// median(after) / median(before).
    pub ratio: f64,
    /// The lower bound of the interval.
    pub low: f64,
    /// The upper bound of the interval.
    pub high: f64,
}

/// A percentile bootstrap interval (at [`LEVEL`], [`RESAMPLES`] resamples)
/// of median(after) / median(before), each side resampled on its own (the
/// two results' samples are not paired). `seed` makes it reproducible.
pub fn median_ratio_interval(before: &[f64], after: &[f64], seed: u64) -> RatioInterval {
    let ratio = median(after) / median(before);
    if before.is_empty() || after.is_empty() {
        return RatioInterval {
            ratio,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut draw = |from: &[f64], into: &mut Vec<f64>| {
        into.clear();
        into.extend((0..from.len()).map(|_| from[rng.random_range(0..from.len())]));
        median_in_place(into)
    };
    let (mut b, mut a) = (Vec::new(), Vec::new());
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let mb = draw(before, &mut b);
            draw(after, &mut a) / mb
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - LEVEL) / 2.0;
    RatioInterval {
        ratio,
        low: quantile(&ratios, tail),
        high: quantile(&ratios, 1.0 - tail),
    }
}

/// The rank test's own interval of after/before (Moses' distribution-free
/// interval for a shift, taken on log times): the k-th smallest and k-th
/// largest of all m x n pairwise log ratios ln(after_j / before_i), with k
/// from the exact distribution of U (its normal approximation beyond 30 a
/// side), so it excludes 1 exactly when the two-sided rank test rejects at
/// 5%. Unlike a bootstrap of two medians it keeps its coverage at 5 to 10
/// samples a side, and a round-to-round pattern (cases alternating their
/// order) does not widen it. `ratio` is median(after) / median(before), the
/// figure printed; the interval is widened to hold it in the rare case it
/// falls outside.
pub fn shift_ratio_interval(before: &[f64], after: &[f64]) -> RatioInterval {
    shift_ratio_interval_at(before, after, LEVEL)
}

/// [`shift_ratio_interval`] at another confidence `level` (a simultaneous
/// interval over N cases takes 1 - 5%/N): it excludes 1 exactly when the
/// rank test's two-sided p is below 1 - level.
pub fn shift_ratio_interval_at(before: &[f64], after: &[f64], level: f64) -> RatioInterval {
    let ratio = median(after) / median(before);
    let (m, n) = (before.len(), after.len());
    if m == 0 || n == 0 {
        return RatioInterval {
            ratio,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    let mut logs: Vec<f64> = after
        .iter()
        .flat_map(|a| before.iter().map(move |b| (a / b).ln()))
        .collect();
    logs.sort_by(f64::total_cmp);
    // Too few samples for this level: no interval can be had.
    if smallest_p(m, n) >= 1.0 - level {
        return RatioInterval {
            ratio,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    let k = shift_rank(m, n, level);
    let (low, high) = (logs[k - 1].exp(), logs[logs.len() - k].exp());
    RatioInterval {
        ratio,
        low: low.min(ratio),
        high: high.max(ratio),
    }
}

/// The 1-based rank k of the pairwise differences bounding the shift
/// interval at `level`: the largest k with P(U < k) below the tail
/// (1 - level) / 2 (at least 1). Strictly below, so an interval that
/// excludes 1 always stands beside a p strictly below 1 - level.
fn shift_rank(m: usize, n: usize, level: f64) -> usize {
    let tail = (1.0 - level) / 2.0;
    if m <= EXACT_MAX && n <= EXACT_MAX {
        let counts = u_distribution(m, n);
        let total: f64 = counts.iter().sum();
        let mut below = 0.0;
        let mut k = 0;
        for c in &counts {
            if (below + c) / total >= tail * (1.0 - 1e-9) {
                break;
            }
            below += c;
            k += 1;
        }
        return k.max(1);
    }
    let (mf, nf) = (m as f64, n as f64);
    let sd = (mf * nf * (mf + nf + 1.0) / 12.0).sqrt();
    let z = normal_quantile(1.0 - tail);
    ((mf * nf / 2.0 - z * sd).floor() as usize).max(1)
}

/// The standard normal quantile of p (0.5 < p < 1), by bisection on erfc:
/// ample for the few intervals a comparison draws.
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 10.0f64);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if 1.0 - erfc(mid / std::f64::consts::SQRT_2) / 2.0 < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The q quantile of sorted values, interpolating between neighbours.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    match sorted.get(i + 1) {
        Some(next) if frac > 0.0 => sorted[i] + (next - sorted[i]) * frac,
        _ => sorted[i],
    }
}

/// The complementary error function (Numerical Recipes' Chebyshev fit,
/// relative error below 1.2e-7: ample for p values).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// A percentile bootstrap interval of a case's ratio corrected for the
/// machine's drift: (median(after) / median(before)) / (median(probe
/// after) / median(probe before)), all four samples resampled on their own
/// in each draw, so the interval carries the probe's noise as well as the
/// case's (a noisy probe widens it; it never becomes an allowance).
pub fn drift_corrected_interval(
    case: (&[f64], &[f64]),
    probe: (&[f64], &[f64]),
    seed: u64,
) -> RatioInterval {
    drift_corrected_interval_at(case, probe, seed, LEVEL)
}

/// [`drift_corrected_interval`] at another confidence `level`.
pub fn drift_corrected_interval_at(
    case: (&[f64], &[f64]),
    probe: (&[f64], &[f64]),
    seed: u64,
    level: f64,
) -> RatioInterval {
    let ((before, after), (probe_before, probe_after)) = (case, probe);
    let drift = median(probe_after) / median(probe_before);
    let ratio = median(after) / median(before) / drift;
    if [before, after, probe_before, probe_after]
        .iter()
        .any(|s| s.is_empty())
    {
        return RatioInterval {
            ratio,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut buf = Vec::new();
    let mut draw = |from: &[f64]| {
        buf.clear();
        buf.extend((0..from.len()).map(|_| from[rng.random_range(0..from.len())]));
        median_in_place(&mut buf)
    };
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let (b, a) = (draw(before), draw(after));
            let (pb, pa) = (draw(probe_before), draw(probe_after));
            (a / b) / (pa / pb)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    RatioInterval {
        ratio,
        low: quantile(&ratios, tail),
        high: quantile(&ratios, 1.0 - tail),
    }
}

/// One case to judge: both sides' samples and the seed of its bootstrap.
#[derive(Debug, Clone, Copy)]
pub struct Case<'a> {
    /// The before (reference) samples.
    pub before: &'a [f64],
    /// The after samples.
    pub after: &'a [f64],
    /// Seeds the bootstrap, so the interval is the same on every run.
    pub seed: u64,
    /// The section of cases compared together: Holm's correction runs
    /// within each section (cases of one section share a number).
    pub section: usize,
    /// The drift probe's samples (before, after) when the case's ratio is
    /// to be corrected for the machine's drift: the test runs on the after
    /// samples divided by the probe's median ratio, the interval is
    /// [`drift_corrected_interval`].
    pub probe: Option<(&'a [f64], &'a [f64])>,
}

impl<'a> Case<'a> {
    /// A case of section 0, not corrected for drift.
    pub fn new(before: &'a [f64], after: &'a [f64], seed: u64) -> Self {
        Case {
            before,
            after,
            seed,
            section: 0,
            probe: None,
        }
    }
}

/// What the rule concludes about one case's ratio after/before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// Fewer than [`MIN_SAMPLES`] on a side: no test was made.
    Insufficient,
    /// The rank test does not reject "no change" after Holm's correction.
    NotSignificant,
    /// Significant, but the interval reaches inside the threshold.
    BelowThreshold,
    /// The ratio went up: significant and the whole interval above 1 + threshold.
    Up,
    /// The ratio went down: significant and the whole interval below 1 / (1 + threshold).
    Down,
}

/// The judgement of one case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assessment {
    /// The ratio after/before and, when tested, its interval (NaN bounds otherwise).
    pub interval: RatioInterval,
    /// The rank test, when both sides had enough samples.
    pub test: Option<RankTest>,
    /// The Holm-adjusted p value, when tested.
    pub p_adjusted: Option<f64>,
    /// The smallest adjusted p any case of this case's section could reach
    /// with these sample counts (1 when not tested).
    pub best_possible_p: f64,
    /// How many cases of its section were tested (its Holm family).
    pub family: usize,
    /// The conclusion.
    pub call: Call,
}

/// The judgement of a family of cases tested together.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// One assessment per case, in the order given.
    pub cases: Vec<Assessment>,
    /// How many cases were tested (over every section).
    pub tested: usize,
    /// How many sections (Holm families) held a tested case.
    pub sections: usize,
    /// The smallest adjusted p any case of any section could reach with
    /// these sample counts (1 when nothing was tested); at or above
    /// [`ALPHA`] no case can be called changed however large the change.
    pub best_possible_p: f64,
}

/// Judges every case: a rank test on each with at least [`MIN_SAMPLES`] a
/// side, Holm within each section over those tested, and a change called
/// only when the adjusted p is below [`ALPHA`] and the whole bootstrap
/// interval of the ratio lies beyond `threshold` (0.05: a factor of 1.05
/// either way). A case with a drift probe is tested and bounded on its
/// drift-corrected ratio.
pub fn assess(cases: &[Case], threshold: f64) -> Family {
    let enough = |c: &Case| c.before.len() >= MIN_SAMPLES && c.after.len() >= MIN_SAMPLES;
    let tests: Vec<Option<RankTest>> = cases
        .iter()
        .map(|c| {
            enough(c).then(|| match c.probe {
                Some((pb, pa)) => {
                    let drift = median(pa) / median(pb);
                    let corrected: Vec<f64> = c.after.iter().map(|x| x / drift).collect();
                    mann_whitney(&corrected, c.before)
                }
                None => mann_whitney(c.after, c.before),
            })
        })
        .collect();
    // Holm within each section; the best p a section could reach.
    let mut adjusted = vec![None; cases.len()];
    let mut best = vec![1.0f64; cases.len()];
    let mut sections: Vec<usize> = cases.iter().map(|c| c.section).collect();
    sections.sort_unstable();
    sections.dedup();
    let mut with_tests = 0;
    let mut best_overall = 1.0f64;
    for section in sections {
        let members: Vec<usize> = (0..cases.len())
            .filter(|&i| cases[i].section == section && tests[i].is_some())
            .collect();
        if members.is_empty() {
            continue;
        }
        with_tests += 1;
        let p: Vec<f64> = members
            .iter()
            .filter_map(|&i| tests[i])
            .map(|t| t.p)
            .collect();
        let smallest = members
            .iter()
            .map(|&i| smallest_p(cases[i].before.len(), cases[i].after.len()))
            .fold(1.0f64, f64::min);
        let section_best = (smallest * members.len() as f64).min(1.0);
        best_overall = best_overall.min(section_best);
        for (&i, q) in members.iter().zip(holm(&p)) {
            adjusted[i] = Some(q);
            best[i] = section_best;
        }
    }
    let family_size = |section: usize| {
        (0..cases.len())
            .filter(|&i| cases[i].section == section && tests[i].is_some())
            .count()
    };
    let factor = 1.0 + threshold;
    let judged = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let Some(test) = tests[i] else {
                return Assessment {
                    interval: RatioInterval {
                        ratio: median(c.after) / median(c.before),
                        low: f64::NAN,
                        high: f64::NAN,
                    },
                    test: None,
                    p_adjusted: None,
                    best_possible_p: 1.0,
                    family: 0,
                    call: Call::Insufficient,
                };
            };
            let p_adjusted = adjusted[i].unwrap_or(1.0);
            let interval = simultaneous_interval(c, family_size(c.section));
            let call = if p_adjusted >= ALPHA {
                Call::NotSignificant
            } else if interval.low > factor {
                Call::Up
            } else if interval.high < 1.0 / factor {
                Call::Down
            } else {
                Call::BelowThreshold
            };
            Assessment {
                interval,
                test: Some(test),
                p_adjusted: Some(p_adjusted),
                best_possible_p: best[i],
                family: family_size(c.section),
                call,
            }
        })
        .collect();
    Family {
        cases: judged,
        tested: tests.iter().flatten().count(),
        sections: with_tests,
        best_possible_p: best_overall,
    }
}

/// A case's interval that answers the question its Holm-corrected test
/// does: simultaneous over the `family` cases of its section (each at
/// 1 - 5%/family, Bonferroni), so an interval wholly past the threshold
/// always stands beside p below 5% after Holm (the rank test's own
/// interval excludes 1 only when its p is below 5%/family, and Holm never
/// asks more of any case). A drift-corrected case takes the union of the
/// rank test's interval on its corrected samples (which its test is) and
/// the joint bootstrap that carries the probe's noise too.
fn simultaneous_interval(c: &Case, family: usize) -> RatioInterval {
    let level = 1.0 - (1.0 - LEVEL) / family.max(1) as f64;
    let Some((pb, pa)) = c.probe else {
        return shift_ratio_interval_at(c.before, c.after, level);
    };
    let drift = median(pa) / median(pb);
    let corrected: Vec<f64> = c.after.iter().map(|x| x / drift).collect();
    let test = shift_ratio_interval_at(c.before, &corrected, level);
    if test.low.is_nan() {
        return test;
    }
    let joint = drift_corrected_interval_at((c.before, c.after), (pb, pa), c.seed, level);
    RatioInterval {
        ratio: joint.ratio,
        low: test.low.min(joint.low),
        high: test.high.max(joint.high),
    }
}

/// About how many samples a side a rank test, Holm-corrected over
/// `family` cases, needs to tell a change of `threshold` (0.10: 1.10x)
/// from none 80% of the time, at the spread `before` and `after` show
/// (their pooled standard deviation of log times, the larger of 1.4826 MAD
/// and the ordinary one). The
/// normal approximation of a two-sample test on logs, over the rank
/// test's efficiency (3/pi); at least [`rounds_to_judge`] for the family.
/// None when the samples show no spread to go by (fewer than 2 a side).
pub fn samples_to_decide(
    before: &[f64],
    after: &[f64],
    threshold: f64,
    family: usize,
) -> Option<usize> {
    if before.len() < 2 || after.len() < 2 || threshold <= 0.0 {
        return None;
    }
    // The larger of the robust and the ordinary spread: a few samples'
    // MAD often understates it, and the promise is a lower bound on power.
    let spread = |v: &[f64]| {
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let m = median(&logs);
        let dev: Vec<f64> = logs.iter().map(|x| (x - m).abs()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
        (1.4826 * median(&dev)).max(var.sqrt())
    };
    let sd = ((spread(before).powi(2) + spread(after).powi(2)) / 2.0).sqrt();
    let delta = (1.0 + threshold).ln();
    let alpha = (1.0 - LEVEL) / family.max(1) as f64;
    let z = normal_quantile(1.0 - alpha / 2.0) + normal_quantile(0.80);
    let n = (2.0 * (z * sd / delta).powi(2) * std::f64::consts::PI / 3.0).ceil();
    let floor = rounds_to_judge(family).unwrap_or(MIN_SAMPLES);
    Some((n as usize).max(floor))
}

/// The fewest rounds a side at which a section of `cases` cases compared
/// together can reach significance at all (fully separated samples give
/// an adjusted p below [`ALPHA`]); None beyond 100 rounds.
pub fn rounds_to_judge(cases: usize) -> Option<usize> {
    (MIN_SAMPLES..=100).find(|&n| smallest_p(n, n) * cases.max(1) as f64 * 2.0 < ALPHA)
}

/// Why `compare` could never judge a result measured with `rounds` rounds
/// (given by `option`: --rounds, --repeat) whose largest section holds
/// `cases` cases, or None when it can. The bound asks for half of alpha,
/// so a clear change (not only a perfectly separated one) can be called.
pub fn never_judged(rounds: usize, cases: usize, option: &str) -> Option<String> {
    let need = rounds_to_judge(cases)?;
    (rounds < need).then(|| {
        if rounds < MIN_SAMPLES {
            format!(
                "{rounds} round(s) a case: compare needs {MIN_SAMPLES} a side to judge any change; use {option} {need}"
            )
        } else {
            format!(
                "{rounds} rounds for {cases} cases compared together: compare could never call a change significant (the best p after Holm's correction would be {:.3}); use {option} {need}",
                (smallest_p(rounds, rounds) * cases as f64).min(1.0)
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, LogNormal};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn exact_p_values_match_the_tables() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        // Fully separated 5 vs 5: 2 of the C(10,5) = 252 arrangements.
        let t = mann_whitney(&a, &b);
        assert_eq!(t.method, RankMethod::Exact);
        assert_eq!(t.u, 0.0);
        assert!(close(t.p, 2.0 / 252.0, 1e-12), "{t:?}");
        assert!(close(mann_whitney(&b, &a).p, 2.0 / 252.0, 1e-12));
        // One swap (U = 1): P(U <= 1) = 2/252, two-sided 4/252.
        let t = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 6.0], &[5.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(t.u, 1.0);
        assert!(close(t.p, 4.0 / 252.0, 1e-12), "{t:?}");
        // U = 3: P(U <= 3) = 7/252, two-sided 0.0556 (just above 5%).
        let t = mann_whitney(&[1.0, 2.0, 3.0, 5.0, 7.0], &[4.0, 6.0, 8.0, 9.0, 10.0]);
        assert_eq!(t.u, 3.0);
        assert!(close(t.p, 14.0 / 252.0, 1e-12), "{t:?}");
        // Unequal sizes, 3 vs 4 separated: 2/C(7,3) = 2/35.
        assert!(close(smallest_p(3, 4), 2.0 / 35.0, 1e-12));
        // 4 vs 4 separated: 2/70; 3 vs 3 can never go below 2/20 = 0.1.
        assert!(close(smallest_p(4, 4), 2.0 / 70.0, 1e-12));
        assert!(close(smallest_p(3, 3), 0.1, 1e-12));
        assert!(close(smallest_p(5, 5), 0.00794, 1e-5));
        // Interleaved perfectly: no evidence at all.
        let t = mann_whitney(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]);
        assert!(t.p > 0.6, "{t:?}");
    }

    #[test]
    fn ties_and_large_samples_use_the_corrected_normal_approximation() {
        // By hand: midranks of x are 1, 3, 3, 5.5, 8, so U = 20.5 - 15 = 5.5;
        // tied groups of 3, 2 and 3 give var = 25/12 * (11 - 54/90) = 21.667;
        // z = (|5.5 - 12.5| - 0.5) / 4.6547 = 1.3964, p = erfc(z / sqrt 2) =
        // 0.16259 (scipy's mannwhitneyu, method="asymptotic", computes the same).
        let t = mann_whitney(&[1.0, 2.0, 2.0, 3.0, 4.0], &[2.0, 3.0, 4.0, 4.0, 5.0]);
        assert_eq!(t.method, RankMethod::Normal);
        assert_eq!(t.u, 5.5);
        assert!(close(t.p, 0.16259, 1e-4), "{t:?}");
        // All equal: p = 1.
        assert_eq!(mann_whitney(&[3.0; 5], &[3.0; 6]).p, 1.0);
        // 40 vs 40 separated: far below any alpha, and the normal method.
        let x: Vec<f64> = (0..40).map(f64::from).collect();
        let y: Vec<f64> = (40..80).map(f64::from).collect();
        let t = mann_whitney(&x, &y);
        assert_eq!(t.method, RankMethod::Normal);
        assert!(t.p < 1e-10, "{t:?}");
    }

    #[test]
    fn exact_and_normal_agree_at_the_switch() {
        // 30 vs 30 with a shift: the exact count and the approximation
        // must give nearly the same p.
        let x: Vec<f64> = (0..30).map(|i| f64::from(i) * 1.0).collect();
        let y: Vec<f64> = (0..30).map(|i| f64::from(i) + 7.5).collect();
        let exact = mann_whitney(&x, &y);
        assert_eq!(exact.method, RankMethod::Exact);
        let mut y_tied = y.clone();
        y_tied[29] = x[29]; // one tie forces the approximation
        let approx = mann_whitney(&x, &y_tied);
        assert_eq!(approx.method, RankMethod::Normal);
        assert!(close(exact.p, approx.p, 0.02), "{exact:?} {approx:?}");
    }

    #[test]
    fn holm_on_a_hand_example() {
        // Sorted: 0.005 x4 = 0.02, 0.01 x3 = 0.03, 0.03 x2 = 0.06, 0.04 x1 -> 0.06.
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]);
        let expected = [0.03, 0.06, 0.06, 0.02];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!(close(*a, e, 1e-12), "{adjusted:?}");
        }
        assert_eq!(holm(&[0.5, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn the_interval_is_reproducible_and_covers_the_ratio() {
        let before = [100.0, 104.0, 98.0, 101.0, 99.0];
        let after = [150.0, 155.0, 149.0, 152.0, 151.0];
        let a = median_ratio_interval(&before, &after, 7);
        assert_eq!(a, median_ratio_interval(&before, &after, 7));
        assert!(close(a.ratio, 151.0 / 100.0, 1e-12));
        assert!(a.low <= a.ratio && a.ratio <= a.high, "{a:?}");
        // No wider than the worst and best pairing of the samples.
        assert!(a.low >= 149.0 / 104.0 && a.high <= 155.0 / 98.0, "{a:?}");
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    /// n log-normal samples around `scale` with log-sd `noise`.
    fn samples(rng: &mut Xoshiro256PlusPlus, n: usize, scale: f64, noise: f64) -> Vec<f64> {
        let d = LogNormal::new(0.0, noise).unwrap();
        (0..n).map(|_| scale * d.sample(rng)).collect()
    }

    /// The share of `trials` single-case comparisons called changed.
    fn flagged_share(trials: u64, n: usize, change: f64, noise: f64, threshold: f64) -> f64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
        let mut flagged = 0;
        for seed in 0..trials {
            let before = samples(&mut rng, n, 1000.0, noise);
            let after = samples(&mut rng, n, 1000.0 * change, noise);
            let case = Case::new(&before, &after, seed);
            let call = assess(&[case], threshold).cases[0].call;
            flagged += u32::from(matches!(call, Call::Up | Call::Down));
        }
        f64::from(flagged) / trials as f64
    }

    #[test]
    fn a_a_comparisons_are_flagged_at_most_five_percent_of_the_time() {
        // No change, 20% log-normal noise, 5 vs 5: with threshold 0 this is
        // the rank test's own rate; with the default 5% it can only be lower.
        let bare = flagged_share(1000, 5, 1.0, 0.2, 0.0);
        let default = flagged_share(1000, 5, 1.0, 0.2, 0.05);
        eprintln!("A/A 5 vs 5, 20% noise: flagged {bare} (threshold 0), {default} (5%)");
        assert!(bare <= 0.05, "A/A flagged {bare}");
        assert!(default <= bare, "A/A flagged {default} at 5%");
    }

    #[test]
    fn a_a_families_stay_at_five_percent_family_wise() {
        // Six unchanged cases of 8 vs 8 per comparison: Holm keeps the
        // chance that any one is flagged at or below 5%. The rank test alone
        // (threshold 0) flags 6 x 0.7% = 4.1% of families in theory (4.3% in
        // 10,000 simulated); the default 5% threshold brings it to 3.5%.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(34);
        let mut flagged = 0;
        for trial in 0..1000u64 {
            let sides: Vec<(Vec<f64>, Vec<f64>)> = (0..6)
                .map(|_| {
                    (
                        samples(&mut rng, 8, 1000.0, 0.2),
                        samples(&mut rng, 8, 1000.0, 0.2),
                    )
                })
                .collect();
            let cases: Vec<Case> = sides
                .iter()
                .enumerate()
                .map(|(i, (b, a))| Case::new(b, a, trial * 8 + i as u64))
                .collect();
            let family = assess(&cases, 0.05);
            assert!(family.best_possible_p < ALPHA);
            let any = family
                .cases
                .iter()
                .any(|c| matches!(c.call, Call::Up | Call::Down));
            flagged += u32::from(any);
        }
        assert!(flagged <= 50, "{flagged} of 1000 A/A families flagged");
    }

    #[test]
    fn a_one_and_a_half_times_change_is_found_nine_times_in_ten() {
        // One case, 10% noise, 5 vs 5, the default 5% threshold.
        let found = flagged_share(1000, 5, 1.5, 0.1, 0.05);
        eprintln!("1.5x, 10% noise, 5 vs 5: found {found}");
        assert!(found >= 0.90, "1.5x found {found}");
        let slower = flagged_share(200, 5, 1.0 / 1.5, 0.1, 0.05);
        assert!(slower >= 0.90, "1/1.5x found {slower}");
    }

    #[test]
    fn few_samples_or_many_cases_cannot_reach_a_verdict() {
        let before = [100.0, 101.0, 102.0];
        let after = [150.0, 151.0, 152.0];
        let family = assess(&[Case::new(&before, &after, 1)], 0.05);
        assert_eq!(family.cases[0].call, Call::Insufficient);
        assert_eq!(family.tested, 0);
        assert!(close(family.cases[0].interval.ratio, 151.0 / 101.0, 1e-12));
        // Eleven fully separated cases of 5 vs 5: 11 x 2/252 > 5%.
        let before = [100.0, 101.0, 102.0, 103.0, 104.0];
        let after = [150.0, 151.0, 152.0, 153.0, 154.0];
        let cases = vec![Case::new(&before, &after, 1); 11];
        let family = assess(&cases, 0.05);
        assert!(close(family.best_possible_p, 11.0 * 2.0 / 252.0, 1e-12));
        assert!(family.cases.iter().all(|c| c.call == Call::NotSignificant));
        // Alone, the same case is a clear slowdown.
        assert_eq!(assess(&cases[..1], 0.05).cases[0].call, Call::Up);
        // Beyond a 60% threshold it is not.
        assert_eq!(assess(&cases[..1], 0.6).cases[0].call, Call::BelowThreshold);
    }

    #[test]
    fn the_shift_interval_matches_the_rank_test() {
        // 5 vs 5: P(U <= 2) = 4/252 <= 2.5% < P(U <= 3) = 7/252, so k = 3.
        assert_eq!(shift_rank(5, 5, LEVEL), 3);
        // 7 vs 7: the table's critical value 8 (P(U <= 8) = 0.0265 > 2.5%).
        assert_eq!(shift_rank(7, 7, LEVEL), 9);
        assert_eq!(shift_rank(3, 3, LEVEL), 1);
        let before = [100.0, 104.0, 98.0, 101.0, 99.0];
        let after: Vec<f64> = before.iter().map(|b| b * 1.5).collect();
        let i = shift_ratio_interval(&before, &after);
        assert!((i.ratio - 1.5).abs() < 1e-12);
        assert!(
            i.low <= 1.5 && 1.5 <= i.high && i.low > 1.4 && i.high < 1.6,
            "{i:?}"
        );
        // An alternating round pattern (odd rounds slower on both sides)
        // shifted by 1.3x: fully separated, and the interval stays clear of
        // a 10% threshold where a bootstrap of the two medians would not.
        let before = [3172.0, 2509.0, 3135.0, 2713.0, 3112.0, 2493.0, 2817.0];
        let after: Vec<f64> = before.iter().map(|b| b * 1.3).collect();
        let i = shift_ratio_interval(&before, &after);
        assert!(i.low > 1.1, "{i:?}");
    }

    #[test]
    fn samples_to_decide_grow_with_the_spread_and_shrink_with_the_change_sought() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let quiet = samples(&mut rng, 15, 1000.0, 0.02);
        let quiet2 = samples(&mut rng, 15, 1000.0, 0.02);
        let loud = samples(&mut rng, 15, 1000.0, 0.15);
        let loud2 = samples(&mut rng, 15, 1000.0, 0.15);
        let few = samples_to_decide(&quiet, &quiet2, 0.10, 11).unwrap();
        let many = samples_to_decide(&loud, &loud2, 0.10, 11).unwrap();
        assert!(many > 3 * few, "{few} vs {many}");
        // Never below what Holm over 11 cases needs at all.
        assert_eq!(few, rounds_to_judge(11).unwrap());
        // Half the change sought: about four times the samples.
        let half = samples_to_decide(&loud, &loud2, 0.05, 11).unwrap();
        assert!(half > 3 * many && half < 5 * many, "{many} vs {half}");
        assert_eq!(samples_to_decide(&[1.0], &quiet, 0.1, 1), None);
        // What it promises holds: at the count it gives, a 1.10x change at
        // that spread is found at least 3 times in 4 (simulated).
        let n = samples_to_decide(&loud, &loud2, 0.10, 1).unwrap();
        let found = flagged_share(400, n, 1.10, 0.15, 0.0);
        eprintln!("n {n}: found {found}");
        assert!(found >= 0.75, "n {n}: found {found}");
    }

    #[test]
    fn an_interval_past_the_threshold_never_stands_beside_within_noise() {
        // Families of 1 to 14 cases, 4 to 15 samples a side, each case
        // shifted by 0.6x to 1.8x (many near the edge of significance), some
        // corrected for a drift probe: wherever the printed interval lies
        // wholly past the 10% threshold the verdict is a change, and every
        // change has its interval wholly past it.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
        let mut past = 0;
        for trial in 0..800u64 {
            let family = rng.random_range(1..=14);
            let n = rng.random_range(4..=15);
            // Each case: before, after, probe before, probe after.
            let data: Vec<[Vec<f64>; 4]> = (0..family)
                .map(|_| {
                    let shift = rng.random_range(0.6..1.8);
                    let before = samples(&mut rng, n, 1000.0, 0.2);
                    let after = samples(&mut rng, n, 1000.0 * shift, 0.2);
                    let pb = samples(&mut rng, n, 100.0, 0.1);
                    let drift = rng.random_range(0.8..1.2);
                    let pa = samples(&mut rng, n, 100.0 * drift, 0.1);
                    [before, after, pb, pa]
                })
                .collect();
            let cases: Vec<Case> = data
                .iter()
                .enumerate()
                .map(|(i, [b, a, pb, pa])| Case {
                    probe: (i % 3 == 0).then_some((pb.as_slice(), pa.as_slice())),
                    ..Case::new(b, a, trial * 100 + i as u64)
                })
                .collect();
            for c in assess(&cases, 0.10).cases {
                let beyond = c.interval.low > 1.1 || c.interval.high < 1.0 / 1.1;
                let changed = matches!(c.call, Call::Up | Call::Down);
                past += u32::from(beyond);
                assert_eq!(beyond, changed, "family {family}, n {n}: {c:?}");
            }
        }
        assert!(
            past > 300,
            "too few intervals past the threshold to judge: {past}"
        );
    }

    #[test]
    fn the_shift_interval_covers_the_true_ratio_at_small_samples() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        for n in [5, 7, 10] {
            let trials = 4000;
            let mut hits = 0;
            for _ in 0..trials {
                let before = samples(&mut rng, n, 1000.0, 0.3);
                let after = samples(&mut rng, n, 1300.0, 0.3);
                let i = shift_ratio_interval(&before, &after);
                hits += u32::from(i.low <= 1.3 && 1.3 <= i.high);
            }
            let share = f64::from(hits) / f64::from(trials);
            eprintln!("shift interval, n={n}: covered {share}");
            assert!(share >= 0.94, "n={n}: {share}");
        }
    }

    #[test]
    fn a_result_that_could_never_be_judged_is_named_with_the_fix() {
        let few = never_judged(3, 1, "--repeat").expect("3 a side");
        assert!(
            few.contains("needs 4 a side") && few.contains("--repeat 5"),
            "{few}"
        );
        assert!(never_judged(5, 1, "--repeat").is_none());
        // fasterthanfs: 25 cases need 7 rounds; quick's 11 need 6.
        let many = never_judged(5, 25, "--rounds").expect("25 cases at 5");
        assert!(many.contains("--rounds 7"), "{many}");
        assert!(never_judged(7, 25, "--rounds").is_none());
        assert!(never_judged(6, 11, "--rounds").is_none());
        assert_eq!(rounds_to_judge(2), Some(5));
    }
}
