//! The `suite internal-external` result's own tables: per blob size and page
//! size, the read times of blobs inside the database (internal) and of
//! files it names (external), their ratio beside the 2011 study's, the best
//! page size and where files start to win.

use serde::{Deserialize, Serialize};

use crate::measure::estimate::{Estimate, median_estimate, paired_ratio};

/// The kind-specific part of a `suite internal-external` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InternalExternalTables {
    /// One cell per (blob size, page size), blob sizes outer, in the order
    /// they were given.
    pub internal_external: Vec<Cell>,
    /// The page size with the lowest internal read time over all blob sizes.
    pub best_page_size: u32,
    /// Where the ratio crosses 1.00, per page size.
    pub crossover: Vec<PageCrossover>,
    /// Content per case (bytes).
    pub total_bytes: u64,
    /// Page cache per database (bytes).
    pub cache_bytes: u64,
    /// Measured rounds per case.
    pub rounds: u64,
    /// Whether the datasets were evicted from the page cache before each read pass.
    pub cold: bool,
}

/// One case of the matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// Bytes per blob.
    pub blob_size: u64,
    /// The database's page size.
    pub page_size: u32,
    /// Blobs read per round.
    pub count: u64,
    /// Time per internal read, one per round (ns).
    pub internal_ns_per_read: Vec<f64>,
    /// Time per external read, one per round (ns).
    pub external_ns_per_read: Vec<f64>,
    /// Median over rounds of external time / internal time: above 1 the
    /// database is faster.
    pub external_over_internal: f64,
    /// The study's figure for this cell, when it measured it.
    pub seed: Option<f64>,
    /// external / internal paired round by round, with its 95% interval
    /// (absent in results written before intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Estimate>,
}

impl Cell {
    /// A fixed bootstrap seed per cell: the same rounds give the same interval.
    fn bootstrap_seed(&self) -> u64 {
        self.blob_size.wrapping_mul(31) ^ u64::from(self.page_size)
    }

    /// external / internal with its interval: as stored, or recomputed from
    /// the rounds an older result kept.
    pub fn ratio_estimate(&self) -> Estimate {
        self.ratio.unwrap_or_else(|| {
            paired_ratio(
                &self.external_ns_per_read,
                &self.internal_ns_per_read,
                self.bootstrap_seed(),
            )
        })
    }

    /// The internal read time (ns) with its interval.
    pub fn internal_estimate(&self) -> Estimate {
        median_estimate(
            &finite(&self.internal_ns_per_read),
            self.bootstrap_seed() + 1,
        )
    }

    /// The external read time (ns) with its interval.
    pub fn external_estimate(&self) -> Estimate {
        median_estimate(
            &finite(&self.external_ns_per_read),
            self.bootstrap_seed() + 2,
        )
    }

    /// Whether the ratio's interval contains 1.00: neither side is faster
    /// beyond the noise.
    pub fn undecided(&self) -> bool {
        let e = self.ratio_estimate();
        e.has_interval() && e.contains(1.0)
    }
}

/// The finite values (times written as null are left out).
fn finite(v: &[f64]) -> Vec<f64> {
    v.iter().copied().filter(|x| x.is_finite()).collect()
}

/// Where files start to win at one page size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PageCrossover {
    /// The page size.
    pub page_size: u32,
    /// Where the ratio crosses 1.00 going up in blob size.
    pub crossover: Crossover,
}

/// Where the ratio crosses 1.00 going up in blob size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Crossover {
    /// External files start to win above this blob size (bytes).
    At(f64),
    /// The database wins at every blob size measured.
    DatabaseEverywhere,
    /// External files win at every blob size measured.
    FilesEverywhere,
    /// Files win first and the database later: no single threshold.
    Mixed,
}

impl InternalExternalTables {
    /// The blob sizes measured, in the order given (the matrix's columns).
    pub fn sizes(&self) -> Vec<u64> {
        distinct(self.internal_external.iter().map(|c| c.blob_size))
    }

    /// The page sizes measured, in the order given (the matrix's rows).
    pub fn page_sizes(&self) -> Vec<u32> {
        distinct(self.internal_external.iter().map(|c| c.page_size))
    }

    /// The cell of a blob size and page size, when measured.
    pub fn cell(&self, size: u64, page_size: u32) -> Option<&Cell> {
        self.internal_external
            .iter()
            .find(|c| c.blob_size == size && c.page_size == page_size)
    }
}

/// Values in first-seen order, each once.
fn distinct<T: PartialEq>(values: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}
