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
                let need = (count - out.len() as u64).min(span) as usize;
                match u32::try_from(span - 1) {
                    Ok(top) => shuffled_pass(0..=top, need, first, &mut rng, &mut out),
                    Err(_) => shuffled_pass(0..=span - 1, need, first, &mut rng, &mut out),
                }
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

/// Shuffles the offsets `pass` of one pass over the keys and appends the
/// first `need` of them, as keys from `first`, to `out`. The shuffle draws
/// the same indices whatever the offsets' type, so a pass over fewer than
/// 2^32 keys holds them as u32: the same sequence at 4 bytes a key, not 8
/// (40 MB for ten million blobs).
fn shuffled_pass<T: Copy + Into<u64>>(
    pass: impl Iterator<Item = T>,
    need: usize,
    first: u64,
    rng: &mut Xoshiro256PlusPlus,
    out: &mut Vec<u64>,
) {
    let mut pass: Vec<T> = pass.collect();
    pass.shuffle(rng);
    out.extend(pass[..need].iter().map(|&offset| first + offset.into()));
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

    /// Random order holds offsets as u32 and still visits the keys a
    /// shuffle of the keys themselves visits: runs recorded before keep
    /// their sequences.
    #[test]
    fn random_passes_as_u32_visit_the_keys_a_shuffle_of_the_keys_does() {
        for (first, last, count, seed) in [(1, 1000, 2500, 9), (77, 80, 9, 1), (5, 5, 3, 0)] {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut keys_shuffled = Vec::new();
            while keys_shuffled.len() < count {
                let mut pass: Vec<u64> = (first..=last).collect();
                pass.shuffle(&mut rng);
                let need = (count - keys_shuffled.len()).min(pass.len());
                keys_shuffled.extend_from_slice(&pass[..need]);
            }
            let sequence = key_sequence(KeyOrder::Random, first, last, count as u64, None, seed);
            assert_eq!(sequence, keys_shuffled, "keys {first}..={last}");
        }
    }
}
