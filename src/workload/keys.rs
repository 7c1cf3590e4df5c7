//! Which key the next operation touches, as YCSB chooses them: uniform,
//! zipfian (YCSB's generator, theta 0.99 by default, the hot keys scattered
//! over the range), latest (zipfian over recency: the newest keys are the
//! hottest) and hotspot (a fraction of the keys takes a fraction of the
//! operations). The distribution itself is part of a mixed run's
//! recorded plan (`result::mixed_run::KeyDistribution`); here it is
//! parsed from `--keys` and drawn from.

use rand::Rng;

use crate::error::{Error, Result};
use crate::result::mixed_run::KeyDistribution;

/// YCSB's default zipfian constant.
pub const YCSB_THETA: f64 = 0.99;

impl KeyDistribution {
    /// Parses `uniform`, `zipf`, `zipf:0.8`, `latest`, `latest:0.9`,
    /// `hotspot:0.2` (20% of the keys take 80% of the operations, YCSB's
    /// default) or `hotspot:0.2:0.9`.
    pub fn parse(text: &str) -> Result<KeyDistribution> {
        let bad = |why: &str| {
            Error::usage(format!(
                "--keys {text}: {why}; use uniform, zipf[:THETA] (THETA in 0..1, default 0.99), latest[:THETA] or hotspot:KEYS[:OPS] (fractions, e.g. hotspot:0.2 for 20% of the keys taking 80% of the operations)"
            ))
        };
        let mut parts = text.split(':');
        let name = parts.next().unwrap_or_default().to_ascii_lowercase();
        let numbers: Vec<f64> = parts
            .map(|p| p.trim().parse::<f64>().map_err(|_| bad("not a number")))
            .collect::<Result<_>>()?;
        let theta = |numbers: &[f64]| -> Result<f64> {
            match numbers {
                [] => Ok(YCSB_THETA),
                [t] if (0.0..1.0).contains(t) => Ok(*t),
                [_] => Err(bad("theta must be at least 0 and below 1")),
                _ => Err(bad("one theta at most")),
            }
        };
        match name.as_str() {
            "uniform" if numbers.is_empty() => Ok(KeyDistribution::Uniform),
            "zipf" | "zipfian" => Ok(KeyDistribution::Zipf {
                theta: theta(&numbers)?,
            }),
            "latest" => Ok(KeyDistribution::Latest {
                theta: theta(&numbers)?,
            }),
            "hotspot" => {
                let (keys, ops) = match numbers[..] {
                    [k] => (k, 0.8),
                    [k, o] => (k, o),
                    _ => {
                        return Err(bad(
                            "hotspot takes the hot keys' fraction, then optionally the operations'",
                        ));
                    }
                };
                if !(keys > 0.0 && keys < 1.0 && (0.0..=1.0).contains(&ops)) {
                    return Err(bad(
                        "the hot keys' fraction must lie between 0 and 1, the operations' within 0..1",
                    ));
                }
                Ok(KeyDistribution::Hotspot { keys, ops })
            }
            _ => Err(bad("unknown distribution")),
        }
    }
}

/// Draws keys from `first..=last` (which grows as inserts land) following
/// one distribution. One per worker: it keeps the zipfian constants for
/// the range it last saw.
pub struct KeyChooser {
    distribution: KeyDistribution,
    first: u64,
    zipf: Option<Zipfian>,
    /// The permutation for the range last drawn from.
    scatter: Option<Scatter>,
}

impl KeyChooser {
    /// A chooser over keys from `first` up.
    pub fn new(distribution: KeyDistribution, first: u64) -> Self {
        KeyChooser {
            distribution,
            first,
            zipf: None,
            scatter: None,
        }
    }

    /// A key from `first..=last`.
    pub fn next(&mut self, last: u64, rng: &mut impl Rng) -> u64 {
        let n = last - self.first + 1;
        match self.distribution {
            KeyDistribution::Uniform => self.first + rng.random_range(0..n),
            KeyDistribution::Zipf { theta } => {
                let rank = self.zipfian(theta, n).rank(rng);
                let scatter = match self.scatter {
                    Some(s) if s.n == n => s,
                    _ => *self.scatter.insert(Scatter::new(n)),
                };
                self.first + scatter.apply(rank)
            }
            KeyDistribution::Latest { theta } => {
                let rank = self.zipfian(theta, n).rank(rng);
                last - rank
            }
            KeyDistribution::Hotspot { keys, ops } => {
                let hot = ((n as f64 * keys).ceil() as u64).clamp(1, n);
                if hot == n || rng.random_bool(ops) {
                    self.first + rng.random_range(0..hot)
                } else {
                    self.first + hot + rng.random_range(0..n - hot)
                }
            }
        }
    }

    /// The zipfian generator for `n` items, its constants extended when
    /// the range has grown since the last draw.
    fn zipfian(&mut self, theta: f64, n: u64) -> &Zipfian {
        match &mut self.zipf {
            Some(z) if z.n == n => {}
            Some(z) if z.n < n => z.grow(n),
            slot => *slot = Some(Zipfian::new(n, theta)),
        }
        self.zipf.as_ref().expect("set above")
    }
}

/// YCSB's ZipfianGenerator (after Gray et al., "Quickly generating
/// billion-record synthetic databases"): rank r in 0..n with probability
/// proportional to 1/(r+1)^theta, in constant time per draw.
#[derive(Debug, Clone)]
struct Zipfian {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    zeta2: f64,
    eta: f64,
}

impl Zipfian {
    fn new(n: u64, theta: f64) -> Self {
        let mut z = Zipfian {
            n: 0,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan: 0.0,
            zeta2: 1.0 + 0.5f64.powf(theta),
            eta: 0.0,
        };
        z.grow(n);
        z
    }

    /// Extends zeta(n) to `n` items (YCSB does the same as inserts grow
    /// the range: the sum so far is kept).
    fn grow(&mut self, n: u64) {
        for i in self.n + 1..=n {
            self.zetan += 1.0 / (i as f64).powf(self.theta);
        }
        self.n = n;
        self.eta =
            (1.0 - (2.0 / n as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan);
    }

    fn rank(&self, rng: &mut impl Rng) -> u64 {
        let u: f64 = rng.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(self.n - 1);
        }
        let r = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        r.min(self.n - 1)
    }
}

/// Spreads a rank of `n` over 0..n by a fixed permutation, so the hot
/// keys are not the first ones (YCSB scrambles with a hash, which maps some
/// ranks onto one key; a permutation keeps every rank its own key).
#[derive(Debug, Clone, Copy)]
struct Scatter {
    n: u64,
    /// A multiplier coprime to n: r -> r * m mod n is then a bijection.
    m: u64,
}

impl Scatter {
    /// The permutation of 0..n (its multiplier found once, not per draw).
    fn new(n: u64) -> Self {
        let mut m = (n as f64 * 0.618_033_988_75) as u64 | 1;
        while n > 2 && gcd(m, n) != 1 {
            m += 2;
        }
        Scatter { n, m }
    }

    fn apply(&self, r: u64) -> u64 {
        if self.n <= 2 {
            return r;
        }
        ((r as u128 * self.m as u128 + 7) % self.n as u128) as u64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Pearson's chi-square of observed counts against expected ones.
    fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
        observed
            .iter()
            .zip(expected)
            .map(|(&o, &e)| (o as f64 - e).powi(2) / e)
            .sum()
    }

    #[test]
    fn zipf_ranks_follow_one_over_r_to_the_theta() {
        // 20 ranks, 5000 draws: chi-square with 19 degrees of freedom stays
        // below 43.8 (p = 0.001) when the draws follow the distribution.
        for theta in [0.5, YCSB_THETA] {
            let n = 20u64;
            let z = Zipfian::new(n, theta);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
            let draws = 5000;
            let mut counts = vec![0u64; n as usize];
            for _ in 0..draws {
                counts[z.rank(&mut rng) as usize] += 1;
            }
            let weights: Vec<f64> = (1..=n).map(|r| 1.0 / (r as f64).powf(theta)).collect();
            let total: f64 = weights.iter().sum();
            let expected: Vec<f64> = weights.iter().map(|w| w / total * draws as f64).collect();
            let x2 = chi_square(&counts, &expected);
            assert!(
                x2 < 43.8,
                "theta {theta}: chi-square {x2}, counts {counts:?}"
            );
            // And the uniform expectation is rejected: the check can fail.
            let flat = vec![draws as f64 / n as f64; n as usize];
            assert!(chi_square(&counts, &flat) > 43.8, "theta {theta}");
        }
    }

    #[test]
    fn a_grown_range_draws_as_a_new_one() {
        let mut grown = Zipfian::new(100, YCSB_THETA);
        grown.grow(1000);
        let fresh = Zipfian::new(1000, YCSB_THETA);
        assert!((grown.zetan - fresh.zetan).abs() < 1e-9);
        assert!((grown.eta - fresh.eta).abs() < 1e-12);
    }

    #[test]
    fn every_key_stays_in_range_and_the_hot_ones_are_scattered() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for text in [
            "uniform",
            "zipf",
            "zipf:0.5",
            "latest",
            "hotspot:0.1",
            "hotspot:0.3:0.5",
        ] {
            let mut c = KeyChooser::new(KeyDistribution::parse(text).unwrap(), 5);
            for last in [5u64, 6, 17, 1000] {
                for _ in 0..500 {
                    let k = c.next(last, &mut rng);
                    assert!((5..=last).contains(&k), "{text}: {k} of 5..={last}");
                }
            }
        }
        // Zipf's hottest key is not the first; latest's is the last.
        let mut hottest = |text: &str| {
            let mut c = KeyChooser::new(KeyDistribution::parse(text).unwrap(), 1);
            let mut counts = vec![0u32; 1001];
            for _ in 0..20_000 {
                counts[c.next(1000, &mut rng) as usize] += 1;
            }
            (0..=1000).max_by_key(|&k| counts[k]).unwrap()
        };
        assert_ne!(hottest("zipf"), 1);
        assert_eq!(hottest("latest"), 1000);
        let perm: std::collections::HashSet<u64> =
            (0..97).map(|r| Scatter::new(97).apply(r)).collect();
        assert_eq!(perm.len(), 97, "a permutation");
    }

    #[test]
    fn hotspot_sends_its_share_to_the_hot_keys() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut c = KeyChooser::new(KeyDistribution::parse("hotspot:0.2").unwrap(), 1);
        let hot = (0..10_000)
            .filter(|_| c.next(1000, &mut rng) <= 200)
            .count();
        assert!(
            (7700..8300).contains(&hot),
            "{hot} of 10000 hit the hot 20%"
        );
    }

    #[test]
    fn bad_distributions_say_what_is_accepted() {
        for bad in [
            "zipf:1",
            "zipf:x",
            "hotspot",
            "hotspot:0",
            "hotspot:0.2:2",
            "gauss",
            "uniform:1",
        ] {
            let e = KeyDistribution::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains(&format!("--keys {bad}")) && e.contains("zipf[:THETA]"),
                "{e}"
            );
        }
        assert_eq!(
            KeyDistribution::parse("ZIPF").unwrap(),
            KeyDistribution::Zipf { theta: YCSB_THETA }
        );
    }
}
