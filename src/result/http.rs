//! The `suite http` result's own tables: the same dataset served by each
//! system (a database, a folder, any extra server), loaded at every
//! concurrency level.

use serde::{Deserialize, Serialize};

use super::load::LevelResult;
use crate::dataset::{DatasetSpec, SizeDistribution};

/// One server's figures, level by level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpSystem {
    /// "sqlite", "dir", or the NAME of an `--extra NAME=URLFILE`.
    pub system: String,
    /// One record per concurrency level, in the order of `-c`.
    pub levels: Vec<LevelResult>,
}

/// The kind-specific part of a `suite http` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpTables {
    /// Every system, sqlite first (the ratios' denominator).
    pub http: Vec<HttpSystem>,
    /// The blobs every system served.
    pub dataset: DatasetSpec,
    /// How long each system was loaded at each level.
    pub duration_ns: u64,
}

/// The +/- of a dataset's sizes as `--variance` gave it (0 for fixed sizes),
/// as the suite's header lines show it.
pub fn size_variance(spec: &DatasetSpec) -> u64 {
    match spec.distribution {
        SizeDistribution::Uniform { variance } => variance,
        SizeDistribution::Fixed | SizeDistribution::LogNormal { .. } => 0,
    }
}
