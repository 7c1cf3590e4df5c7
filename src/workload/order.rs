//! The keys each key order visits ([`key_sequence`]; the order itself,
//! [`KeyOrder`], is part of a run's recorded plan). Random is a permutation
//! (each key once per pass, unlike kvtest's draws with replacement) so a run
//! covers the whole dataset. KvtestDraws reproduces kvtest's own sequence
//! (first key, then draws with replacement from its generator) for
//! like-for-like comparisons with it: keys drawn twice find their pages already
//! mapped or cached.

use rand::seq::SliceRandom;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::result::run::KeyOrder;

/// kvtest.c's randInt(): a shift register xor a linear congruential
/// generator, seeded with kvtest's constants.
struct KvtestRand {
    x: u32,
    y: u32,
}

impl KvtestRand {
    fn new() -> Self {
        KvtestRand {
            x: 0x333a13cd,
            y: 0xecb2adea,
        }
    }

    fn next(&mut self) -> u32 {
        self.x = (self.x >> 1) ^ ((1u32.wrapping_add(!(self.x & 1))) & 0xd0000001);
        self.y = self.y.wrapping_mul(1103515245).wrapping_add(12345);
        self.x ^ self.y
    }
}

/// `count` keys from `first..=last` in `order`, starting at `start` for
/// ascending/descending orders (wrapping around like kvtest).
pub fn key_sequence(
    order: KeyOrder,
    first: u64,
    last: u64,
    count: u64,
    start: Option<u64>,
    seed: u64,
) -> Vec<u64> {
    let span = last - first + 1;
    match order {
        KeyOrder::Asc => {
            let s = start.unwrap_or(first).clamp(first, last) - first;
            (0..count).map(|i| first + (s + i) % span).collect()
        }
        KeyOrder::Desc => {
            let s = last - start.unwrap_or(last).clamp(first, last);
            (0..count).map(|i| last - (s + i) % span).collect()
        }
        KeyOrder::Random => {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut out = Vec::with_capacity(count as usize);
            while (out.len() as u64) < count {
                let mut pass: Vec<u64> = (first..=last).collect();
                pass.shuffle(&mut rng);
                let need = (count - out.len() as u64).min(span) as usize;
                out.extend_from_slice(&pass[..need]);
            }
            out
        }
        KeyOrder::KvtestDraws => {
            let mut rng = KvtestRand::new();
            let mut out = Vec::with_capacity(count as usize);
            if count > 0 {
                out.push(start.unwrap_or(first).clamp(first, last));
            }
            while (out.len() as u64) < count {
                out.push(first + u64::from(rng.next()) % span);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders() {
        assert_eq!(
            key_sequence(KeyOrder::Asc, 1, 5, 7, Some(4), 0),
            vec![4, 5, 1, 2, 3, 4, 5]
        );
        assert_eq!(
            key_sequence(KeyOrder::Desc, 1, 5, 6, None, 0),
            vec![5, 4, 3, 2, 1, 5]
        );
        let mut r = key_sequence(KeyOrder::Random, 1, 1000, 1000, None, 9);
        assert_ne!(r, (1..=1000).collect::<Vec<_>>());
        r.sort();
        assert_eq!(r, (1..=1000).collect::<Vec<_>>());
        // kvtest's first keys with iMax = 100000, printed by kvtest.c's randInt compiled as is.
        assert_eq!(
            key_sequence(KeyOrder::KvtestDraws, 1, 100_000, 6, None, 0),
            vec![1, 24893, 65547, 48745, 76172, 54665]
        );
        assert_eq!(
            key_sequence(KeyOrder::Random, 1, 1000, 10, None, 9),
            key_sequence(KeyOrder::Random, 1, 1000, 10, None, 9)
        );
    }
}
