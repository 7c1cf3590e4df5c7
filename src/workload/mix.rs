//! The operations a mixed run draws from, and their shares
//! (`--mix read=90,update=8,insert=1,delete=1`). The kinds themselves are
//! named in results (`result::mixed_run::OpKind`).

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::result::mixed_run::OpKind;

/// The operations' shares, as whole weights (`read=95,update=5`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mix {
    /// (kind, weight) with every weight above 0, in `OpKind::ALL` order.
    pub shares: Vec<(OpKind, u32)>,
}

/// The largest weight of one operation: shares finer than one in a
/// million mean nothing in a run, and the weights' sum stays far from
/// overflowing.
pub const MAX_WEIGHT: u64 = 1_000_000;

impl Mix {
    /// Parses `read=90,update=8,insert=1,delete=1` (weights need not add up
    /// to 100; each is a share of their sum).
    pub fn parse(text: &str) -> Result<Mix> {
        let names: Vec<&str> = OpKind::ALL.iter().map(|k| k.name()).collect();
        let bad = |why: String| {
            Error::usage(format!(
                "--mix {text}: {why}; give KIND=WEIGHT pairs from {}, e.g. --mix read=95,update=5",
                names.join(", ")
            ))
        };
        let mut shares: Vec<(OpKind, u32)> = Vec::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, weight) = pair
                .split_once('=')
                .ok_or_else(|| bad(format!("\"{pair}\" has no weight")))?;
            let kind = OpKind::ALL
                .into_iter()
                .find(|k| k.name().eq_ignore_ascii_case(name.trim()))
                .ok_or_else(|| bad(format!("unknown operation \"{name}\"")))?;
            let weight = crate::units::whole_number(weight, MAX_WEIGHT)
                .map_err(|why| bad(format!("weight {why}")))? as u32;
            if shares.iter().any(|(k, _)| *k == kind) {
                return Err(bad(format!("{name} is given twice")));
            }
            if weight > 0 {
                shares.push((kind, weight));
            }
        }
        if shares.is_empty() {
            return Err(bad("no operation has a weight above 0".into()));
        }
        shares.sort();
        Ok(Mix { shares })
    }

    /// Only reads.
    pub fn read_only() -> Mix {
        Mix {
            shares: vec![(OpKind::Read, 1)],
        }
    }

    /// The weights' sum: each kind's share is its weight over this.
    pub fn total_weight(&self) -> u32 {
        self.shares.iter().map(|(_, w)| w).sum()
    }

    /// The weight of `kind` (0 when it is not in the mix).
    pub fn weight(&self, kind: OpKind) -> u32 {
        self.shares
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |&(_, w)| w)
    }

    /// The kind of the next operation.
    pub fn draw(&self, rng: &mut impl Rng) -> OpKind {
        let mut x = rng.random_range(0..self.total_weight());
        for &(kind, w) in &self.shares {
            if x < w {
                return kind;
            }
            x -= w;
        }
        self.shares[self.shares.len() - 1].0
    }

    /// Whether any operation writes.
    pub fn writes(&self) -> bool {
        self.shares.iter().any(|(k, _)| k.writes())
    }

    /// Whether `kind` is in the mix.
    pub fn has(&self, kind: OpKind) -> bool {
        self.shares.iter().any(|(k, _)| *k == kind)
    }

    /// `read=90,update=10`, as `--mix` takes it back.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .shares
            .iter()
            .map(|(k, w)| format!("{}={w}", k.name()))
            .collect();
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn shares_are_drawn_in_proportion() {
        let mix = Mix::parse("read=90, update=8,insert=1,delete=1").unwrap();
        assert_eq!(mix.describe(), "read=90,update=8,insert=1,delete=1");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..100_000 {
            *counts.entry(mix.draw(&mut rng)).or_insert(0u32) += 1;
        }
        let reads = counts[&OpKind::Read];
        assert!((89_000..91_000).contains(&reads), "{counts:?}");
        assert!((700..1300).contains(&counts[&OpKind::Delete]), "{counts:?}");
        assert!(mix.writes() && !Mix::read_only().writes());
    }

    #[test]
    fn bad_mixes_name_the_fault() {
        for (text, why) in [
            ("read", "has no weight"),
            ("read=x", "not a whole number"),
            ("read=-1", "not a whole number"),
            ("read=4294967296,update=1", "too large (at most 1000000)"),
            ("read=4294967295,update=1", "too large (at most 1000000)"),
            (
                "read=99999999999999999999999",
                "too large (at most 1000000)",
            ),
            ("read=1,read=2", "given twice"),
            ("write=5", "unknown operation"),
            ("read=0", "no operation"),
            ("", "no operation"),
        ] {
            let e = Mix::parse(text).unwrap_err().to_string();
            assert!(
                e.contains(why) && e.contains("--mix read=95,update=5"),
                "{text}: {e}"
            );
        }
    }
}
