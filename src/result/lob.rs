//! The `suite lob` result's own tables: every write and read sample per
//! system and blob size, the spikes among them, the time to read 1 GB (the
//! paper's Figure 22) and each system's best blob size.
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

    /// The samples of one system at one size.
    pub fn samples(&self, system: &str, size: u64) -> Option<&Samples> {
        self.lob
            .iter()
            .find(|s| s.system == system && s.size == size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
