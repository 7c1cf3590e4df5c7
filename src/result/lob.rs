//! The `suite lob` result's own tables: every write and read sample per
//! system and blob size, their medians and means, the spikes among them, the
//! time to read 1 GB (the paper's Figure 22), each system's best blob size,
//! where time starts to grow with size, and what each system ran with
//! (`--logging`, `--cold`).
//!
//! Documents written by hand or by older versions may hold only the samples
//! (system, size, write_ns, read_ns): every other field defaults to empty.

use serde::{Deserialize, Deserializer, Serialize};

use crate::store::StoreInfo;

/// The paper's blob sizes (kvtest units: 1K = 1000 bytes), the default of
/// `--sizes`. Here rather than in the suite so `cli` names it without
/// depending on the suite.
pub const PAPER_SIZES: &str = "1K,2K,3999,5K,10K,50K,100K,500K,1M,5M,10M";

/// The systems the suite measures, in the order it runs and lists them.
pub const SYSTEMS: &[&str] = &[
    "sqlite",
    "dir",
    "postgres bytea",
    "postgres lo",
    "mariadb innodb",
    "mariadb myisam",
    "mariadb aria",
    "mariadb archive",
    "s3",
];

/// The kind-specific part of a `lob` result.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LobTables {
    /// Every sample, one entry per system and size measured.
    #[serde(default)]
    pub lob: Vec<Samples>,
    /// Samples over 10x the median of their size (kept in every mean).
    #[serde(default)]
    pub spikes: Vec<Spike>,
    /// Time to read 1 GB in blobs of each size, from the mean read time.
    #[serde(default)]
    pub read_1gb_seconds: Vec<ReadGb>,
    /// Each system's size with the lowest time per GB.
    #[serde(default)]
    pub best_size: Vec<BestSize>,
    /// Systems that were not measured, and why.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// What each measured system reported about itself, and the sizes it refused.
    #[serde(default)]
    pub stores: Vec<StoreEntry>,
    /// Different random blobs per size (`--per-size`).
    #[serde(default)]
    pub per_size: u64,
    /// `--logging`: "off" (the paper's setup: logging disabled on every
    /// system) or "on" (durable everywhere); empty in older documents,
    /// which ran SQLite durable and everything else at its defaults.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub logging: String,
    /// Whether each size's reads started cold (`--cold`): server restarted,
    /// page cache dropped; how, per size, in [`Samples::cold`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cold: bool,
    /// Median and mean of every system and size (the paper plots the mean).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<SizeSummary>,
    /// The size from which time per blob grows with size, per system and phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub growth: Vec<Growth>,
    /// The key orders measured (`--order`), the first being the one every
    /// other table is drawn from; empty in older documents, which wrote and
    /// read in ascending id order (sequential).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orders: Vec<Order>,
    /// With `--order both`: random against sequential, per system, size and
    /// phase, judged together (the paper: "We repeated BLOB read and write
    /// in different orders; however no significant difference was observed").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order_effect: Vec<OrderEffect>,
}

/// The order blobs are written and read back in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Written with ids 1, 2, 3 .. and read back in the same ascending order.
    #[default]
    Sequential,
    /// Written in a seeded random permutation of the ids and read back in
    /// another one.
    Random,
}

impl Order {
    /// The name `--order` takes and the output prints.
    pub fn name(self) -> &'static str {
        match self {
            Order::Sequential => "sequential",
            Order::Random => "random",
        }
    }

    fn is_sequential(&self) -> bool {
        *self == Order::Sequential
    }
}

/// The smallest effect of order that counts (10%: the whole interval of
/// random / sequential must lie beyond a factor of 1.10 either way). Two
/// datasets built one after the other commonly differ by 5-10% for reasons
/// unrelated to order (where their pages landed), as `compare` knows.
pub const ORDER_THRESHOLD: f64 = 0.10;

/// What the order comparison concluded for one system, size and phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrderCall {
    /// Fewer than 4 blobs a side: no test was made.
    Insufficient,
    /// No difference beyond the noise: the rank test (after Holm) does not
    /// reject, or the interval reaches inside [`ORDER_THRESHOLD`].
    WithinNoise,
    /// Random order is slower beyond the noise and the threshold.
    RandomSlower,
    /// Random order is faster beyond the noise and the threshold.
    RandomFaster,
}

/// Random against sequential order for one system, blob size and phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OrderEffect {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// "write" or "read".
    pub phase: String,
    /// Median time per blob in sequential order (ns).
    pub sequential_median_ns: f64,
    /// Median time per blob in random order (ns).
    pub random_median_ns: f64,
    /// median(random) / median(sequential), with its 95% bootstrap interval
    /// (each side resampled on its own: the blobs are not paired).
    pub ratio: f64,
    /// Lower bound of the ratio's interval.
    pub low: f64,
    /// Upper bound of the ratio's interval.
    pub high: f64,
    /// Blobs per side.
    pub n: usize,
    /// The rank test's p value after Holm's correction over every case, when tested.
    pub p_adjusted: Option<f64>,
    /// The conclusion.
    pub call: OrderCall,
}

impl OrderEffect {
    /// Whether order made a difference here beyond the noise and the threshold.
    pub fn differs(&self) -> bool {
        matches!(self.call, OrderCall::RandomSlower | OrderCall::RandomFaster)
    }

    /// `1.02x [0.95-1.10]`, as every ratio is printed.
    pub fn format_ratio(&self) -> String {
        if self.low.is_finite() && self.high.is_finite() {
            format!("{:.2}x [{:.2}-{:.2}]", self.ratio, self.low, self.high)
        } else {
            format!("{:.2}x", self.ratio)
        }
    }
}

/// How much slower than at the smallest size a blob must be, at a size and
/// every larger one, for time to count as growing with size.
pub const GROWTH_FACTOR: f64 = 1.5;

/// The paper's "size where time starts to grow with size": among
/// `(size, median ns)` points in ascending size order, the first size from
/// which on every larger size's median is over [`GROWTH_FACTOR`] times the
/// median at the smallest size. None when fewer than two sizes or when time
/// stays within that factor (or dips back under it at the largest sizes).
pub fn growth_size(points: &[(u64, f64)]) -> Option<u64> {
    let (&(_, base), rest) = points.split_first()?;
    let limit = GROWTH_FACTOR * base;
    // The suffix of sizes all above the limit; its first size is the answer.
    let above = rest.iter().rev().take_while(|(_, t)| *t > limit).count();
    (above > 0).then(|| rest[rest.len() - above].0)
}

/// Median and mean of one system's samples at one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeSummary {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// Median INSERT time.
    pub write_median_ns: f64,
    /// Mean INSERT time (the paper's figure; spikes pull it up).
    pub write_mean_ns: f64,
    /// Median SELECT time.
    pub read_median_ns: f64,
    /// Mean SELECT time (the paper's figure).
    pub read_mean_ns: f64,
}

/// Where time per blob starts to grow with blob size, for one system and phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Growth {
    /// The system's name.
    pub system: String,
    /// "write" or "read".
    pub phase: String,
    /// The smallest size measured, the baseline.
    pub baseline_size: u64,
    /// The median time per blob at the baseline size.
    pub baseline_median_ns: f64,
    /// The factor over the baseline that counts as growth ([`GROWTH_FACTOR`]).
    pub factor: f64,
    /// The first size from which on every larger size is over factor x
    /// baseline; None: time did not grow that much up to the largest size.
    pub size: Option<u64>,
}

/// Every per-call time of one system at one blob size, in nanoseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Samples {
    /// The system's name, one of [`SYSTEMS`].
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// Each INSERT, in the order the blobs were written.
    #[serde(deserialize_with = "nanos")]
    pub write_ns: Vec<u64>,
    /// Each SELECT by id after reconnecting, in the same order.
    #[serde(deserialize_with = "nanos")]
    pub read_ns: Vec<u64>,
    /// With `--cold`: what was done between writing and reading (server
    /// restarted, page cache dropped), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold: Option<String>,
    /// The order written and read in (absent: sequential).
    #[serde(default, skip_serializing_if = "Order::is_sequential")]
    pub order: Order,
}

/// Sample times as written: whole nanoseconds, though a hand-written
/// document may spell them as floats (100.0).
fn nanos<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    let numbers = Vec::<serde_json::Number>::deserialize(d)?;
    numbers
        .iter()
        .map(|n| {
            n.as_u64()
                .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f.round() as u64))
                .ok_or_else(|| serde::de::Error::custom(format!("{n} is not a time in ns")))
        })
        .collect()
}

/// One sample over 10x the median of its system, size and phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spike {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// "write" or "read".
    pub phase: String,
    /// Which sample (1-based, in the order timed).
    pub sample: u64,
    /// The sample's time.
    pub ns: u64,
    /// The median of its system, size and phase.
    pub median_ns: f64,
    /// The order its samples were taken in (absent: sequential).
    #[serde(default, skip_serializing_if = "Order::is_sequential")]
    pub order: Order,
}

/// Time to read 1 GB stored as blobs of one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadGb {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// Mean read time x (1 GB / size).
    pub seconds: f64,
}

/// A system's best blob size by time per GB read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BestSize {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// Its time to read 1 GB.
    pub seconds_per_gb: f64,
}

/// A system that was not measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Skipped {
    /// The system's name.
    pub system: String,
    /// Why: no URL given, cannot connect, engine missing.
    pub reason: String,
}

/// What a measured system reported about itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreEntry {
    /// The system's name.
    pub system: String,
    /// Versions and settings, as the store read them back.
    pub store: Option<StoreInfo>,
    /// Sizes the system could not take, and why.
    #[serde(default)]
    pub notes: Vec<String>,
    /// What the system's writes ran with under `--logging`, read back from
    /// the system where it can be (journal, fsync, synchronous_commit,
    /// innodb_flush_log_at_trx_commit), and what could not be set.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub durability: String,
}

impl LobTables {
    /// The blob sizes measured, in the order they were given.
    pub fn sizes(&self) -> Vec<u64> {
        let mut sizes = Vec::new();
        for s in &self.lob {
            if !sizes.contains(&s.size) {
                sizes.push(s.size);
            }
        }
        sizes
    }

    /// The systems measured, in the order they ran (from `stores`, else from
    /// the samples of a document that has no `stores`).
    pub fn measured(&self) -> Vec<String> {
        let mut names: Vec<String> = self.stores.iter().map(|s| s.system.clone()).collect();
        if names.is_empty() {
            for s in &self.lob {
                if !names.contains(&s.system) {
                    names.push(s.system.clone());
                }
            }
        }
        names
    }

    /// The order every table but the order comparison is drawn from: the
    /// first measured (sequential in older documents).
    pub fn primary_order(&self) -> Order {
        self.orders.first().copied().unwrap_or_default()
    }

    /// The samples in the primary order, in the order they were taken.
    pub fn primary(&self) -> impl Iterator<Item = &Samples> {
        let order = self.primary_order();
        self.lob.iter().filter(move |s| s.order == order)
    }

    /// The samples of one system at one size, in the primary order.
    pub fn samples(&self, system: &str, size: u64) -> Option<&Samples> {
        self.primary()
            .find(|s| s.system == system && s.size == size)
    }

    /// The samples of one system at one size in a given order.
    pub fn samples_in(&self, system: &str, size: u64, order: Order) -> Option<&Samples> {
        self.lob
            .iter()
            .find(|s| s.system == system && s.size == size && s.order == order)
    }

    /// The order comparisons of one system where order made a difference.
    pub fn order_differences(&self, system: &str) -> Vec<&OrderEffect> {
        self.order_effect
            .iter()
            .filter(|e| e.system == system && e.differs())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_size_is_where_time_leaves_the_small_sizes_for_good() {
        // Flat, then growing from 100K on: a dip back under 1.5x before it
        // (the 10K spike) does not count, the lasting rise does.
        let p = [
            (1_000, 100.0),
            (10_000, 200.0),
            (50_000, 140.0),
            (100_000, 151.0),
            (1_000_000, 900.0),
        ];
        assert_eq!(growth_size(&p), Some(100_000));
        // Exactly 1.5x is not "more than".
        assert_eq!(growth_size(&[(1, 10.0), (2, 15.0)]), None);
        assert_eq!(growth_size(&[(1, 10.0), (2, 15.1)]), Some(2));
        // Flat, falling at the end, one size, none: no growth size.
        assert_eq!(growth_size(&[(1, 10.0), (2, 11.0), (3, 12.0)]), None);
        assert_eq!(growth_size(&[(1, 10.0), (2, 40.0), (3, 12.0)]), None);
        assert_eq!(growth_size(&[(1, 10.0)]), None);
        assert_eq!(growth_size(&[]), None);
    }

    #[test]
    fn samples_load_as_whole_nanoseconds_and_write_back_as_integers() {
        let t: LobTables = serde_json::from_value(serde_json::json!({
            "lob": [{"system": "sqlite", "size": 1000, "write_ns": [100.0, 31469], "read_ns": []}]
        }))
        .unwrap();
        assert_eq!(t.lob[0].write_ns, vec![100, 31469]);
        assert_eq!(t.measured(), vec!["sqlite".to_string()]);
        assert_eq!(t.sizes(), vec![1000]);
        let back = serde_json::to_value(&t).unwrap();
        assert_eq!(back["lob"][0]["write_ns"], serde_json::json!([100, 31469]));
        let negative = serde_json::json!({"lob": [{"system": "x", "size": 1, "write_ns": [-1], "read_ns": []}]});
        assert!(serde_json::from_value::<LobTables>(negative).is_err());
    }
}
