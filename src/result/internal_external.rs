//! The `suite internal-external` result's own tables: per blob size and page
//! size, the read times of blobs inside the database (internal) and of
//! files it names (external), their ratio beside the 2011 study's, the best
//! page size and where files start to win.

use serde::{Deserialize, Serialize};

use crate::measure::estimate::{Estimate, Stopping, paired_ratio};

use super::rounds::{RoundsRecord, RoundsRule};

use super::advise::{AgainstDefault, default_page_size, other_page_sizes};

/// The study's page cache: "a 2000 page cache was used for 1024 byte pages
/// and a 31 page cache was used for 65536 byte pages", about 2 MB each.
/// Both are 2000 x 1024 = 2,048,000 bytes divided by the page size, rounded
/// down (2,048,000 / 65536 = 31.25), so every page size gets that many bytes'
/// worth of whole pages: 2000, 1000, 500, 250, 125, 62, 31.
pub const STUDY_CACHE_BYTES: u64 = 2000 * 1024;

/// The cache_size (pages) a database of `page_size` gets for `cache_bytes`
/// of cache: whole pages, rounded down as the study's 31 at 65536 is, and
/// at least one.
pub fn cache_pages(cache_bytes: u64, page_size: u32) -> i64 {
    (cache_bytes / u64::from(page_size.max(1))).clamp(1, i32::MAX as u64) as i64
}

/// The kind-specific part of a `suite internal-external` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InternalExternalTables {
    /// One cell per (blob size, page size), blob sizes outer, in the order
    /// they were given.
    pub internal_external: Vec<Cell>,
    /// The page size recommended for blob reads: SQLite's default (or the
    /// size tried nearest it) unless another's internal read time is lower
    /// beyond the noise (in results from before `best_page_choice`: the
    /// lowest at the median).
    pub best_page_size: u32,
    /// How `best_page_size` was decided: every other page size's internal
    /// read time over the default's (geometric mean over blob sizes, paired
    /// round by round) and whether the default was kept within noise.
    /// Absent in older results: [`InternalExternalTables::page_choice`]
    /// derives it from the cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_page_choice: Option<AgainstDefault<u32>>,
    /// Where the ratio crosses 1.00, per page size.
    pub crossover: Vec<PageCrossover>,
    /// Content per case (bytes).
    pub total_bytes: u64,
    /// Page cache per database (bytes).
    pub cache_bytes: u64,
    /// Measured rounds per case (the most any case ran).
    pub rounds: u64,
    /// The rule the rounds followed and where each cell's cases stopped
    /// (absent in results from before cells could stop at a precision
    /// target, which all ran `rounds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<RoundsRecord>,
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
    /// The cache_size (pages) the internal database read with, as SQLite
    /// reported it back (absent in older results: [`cache_pages`] of
    /// `cache_bytes` was set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_pages: Option<i64>,
}

impl Cell {
    /// external / internal with its interval: as stored, or recomputed from
    /// the rounds an older result kept.
    pub fn ratio_estimate(&self) -> Estimate {
        self.ratio
            .unwrap_or_else(|| paired_ratio(&self.external_ns_per_read, &self.internal_ns_per_read))
    }

    /// The internal read time (ns) with the interval `stopping` calls for
    /// ([`InternalExternalTables::stopping_kind`]).
    pub fn internal_estimate(&self, stopping: Stopping) -> Estimate {
        stopping.median(&finite(&self.internal_ns_per_read))
    }

    /// The external read time (ns) with the interval `stopping` calls for.
    pub fn external_estimate(&self, stopping: Stopping) -> Estimate {
        stopping.median(&finite(&self.external_ns_per_read))
    }

    /// Whether the ratio's interval contains 1.00: neither side is faster
    /// beyond the noise.
    pub fn undecided(&self) -> bool {
        let e = self.ratio_estimate();
        e.has_interval() && e.contains(1.0)
    }
}

/// The page size for blob reads, decided against SQLite's default (or the
/// page size tried nearest it): per round, each other page size's internal
/// read time over the default's at every blob size measured at both, their
/// geometric mean over the blob sizes (each size's times are on their own
/// scale; a size's rounds are measured together across page sizes, so the
/// ratio is paired), then the median of the rounds with its interval.
pub fn page_choice_of(cells: &[Cell]) -> AgainstDefault<u32> {
    let pages = distinct(cells.iter().map(|c| c.page_size));
    let default = default_page_size(&pages);
    let others = other_page_sizes(&pages, default)
        .into_iter()
        .map(|p| {
            // Per round, the logs of p's time over the default's, per size.
            let mut logs: Vec<Vec<f64>> = Vec::new();
            for c in cells.iter().filter(|c| c.page_size == p) {
                let Some(d) = cells
                    .iter()
                    .find(|d| d.page_size == default && d.blob_size == c.blob_size)
                else {
                    continue;
                };
                for (r, (a, b)) in c
                    .internal_ns_per_read
                    .iter()
                    .zip(&d.internal_ns_per_read)
                    .enumerate()
                {
                    if logs.len() <= r {
                        logs.push(Vec::new());
                    }
                    let l = (a / b).ln();
                    if l.is_finite() {
                        logs[r].push(l);
                    }
                }
            }
            let per_round: Vec<f64> = logs
                .iter()
                .filter(|l| !l.is_empty())
                .map(|l| (l.iter().sum::<f64>() / l.len() as f64).exp())
                .collect();
            let ones = vec![1.0; per_round.len()];
            (p, paired_ratio(&per_round, &ones))
        })
        .collect();
    AgainstDefault::decide(default, others)
}

/// The finite values (times written as null are left out).
fn finite(v: &[f64]) -> Vec<f64> {
    v.iter().copied().filter(|x| x.is_finite()).collect()
}

/// Where files start to win at one page size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageCrossover {
    /// The page size.
    pub page_size: u32,
    /// The row in one word: a single threshold where files start to win,
    /// one side everywhere, or no single threshold.
    pub crossover: Crossover,
    /// Every place the row crosses 1.00, in ascending blob size (absent in
    /// older results: [`InternalExternalTables::crossings`] recomputes them
    /// from the cells).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crossings: Vec<Crossing>,
    /// The blob sizes of the row whose ratio's interval contains 1.00: the
    /// row's claim (`crossover`) is confirmed only where none is; there it
    /// is within noise. Empty when every cell is decided (and in older
    /// results: [`InternalExternalTables::row`] says it from the cells).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within_noise_at: Vec<u64>,
}

/// Where the ratio crosses 1.00 going up in blob size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Crossover {
    /// The row crosses once, from the database to files: external files
    /// start to win above this blob size (bytes).
    At(f64),
    /// The database wins at every blob size measured.
    DatabaseEverywhere,
    /// External files win at every blob size measured.
    FilesEverywhere,
    /// No single threshold where files start to win: the row crosses 1.00
    /// more than once, or rises through it (files win first, the database
    /// later). Its crossings say where.
    Mixed,
}

/// Who reads faster on one side of a crossing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Winner {
    /// Blobs inside the database (ratio at or above 1.00).
    Database,
    /// Separate files (ratio below 1.00).
    Files,
}

/// One place where a row of ratios crosses 1.00.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Crossing {
    /// The blob size (bytes) where the ratio meets 1.00, interpolated on a
    /// log scale of size between the two measured sizes around it.
    pub at: f64,
    /// The measured blob size just below the crossing.
    pub from_size: u64,
    /// The measured blob size just above it.
    pub to_size: u64,
    /// Who wins above the crossing (up to the next one).
    pub above: Winner,
    /// Whether both cells beside it lie wholly on their side of 1.00 (their
    /// intervals exclude it); false: the crossing may be noise.
    pub firm: bool,
}

/// One cell of a row, as [`crossings`] reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowPoint {
    /// The blob size (bytes).
    pub size: u64,
    /// external time / internal time.
    pub ratio: f64,
    /// Whether the cell's interval lies wholly on its side of 1.00 (true
    /// for a figure without an interval, such as the study's).
    pub decided: bool,
}

/// Every place a row crosses 1.00, in ascending blob size (the points are
/// sorted first; points whose ratio is not a number are left out). A ratio
/// of exactly 1.00 counts on the database's side.
pub fn crossings(points: &[RowPoint]) -> Vec<Crossing> {
    let mut p: Vec<RowPoint> = points
        .iter()
        .copied()
        .filter(|x| x.ratio.is_finite() && x.ratio > 0.0)
        .collect();
    p.sort_by_key(|x| x.size);
    p.windows(2)
        .filter(|w| (w[0].ratio >= 1.0) != (w[1].ratio >= 1.0))
        .map(|w| {
            let (a, b) = (w[0], w[1]);
            let (l1, l2) = ((a.size as f64).ln(), (b.size as f64).ln());
            let at = l1 + (a.ratio - 1.0) / (a.ratio - b.ratio) * (l2 - l1);
            Crossing {
                at: at.exp(),
                from_size: a.size,
                to_size: b.size,
                above: if b.ratio >= 1.0 {
                    Winner::Database
                } else {
                    Winner::Files
                },
                firm: a.decided && b.decided,
            }
        })
        .collect()
}

/// The row in one word, from its crossings and its ratios: a single
/// threshold only when the row crosses exactly once, toward files.
pub fn crossover_of(points: &[RowPoint], crossings: &[Crossing]) -> Crossover {
    match crossings {
        [] if points.iter().any(|p| p.ratio < 1.0) => Crossover::FilesEverywhere,
        [] => Crossover::DatabaseEverywhere,
        [c] if c.above == Winner::Files => Crossover::At(c.at),
        _ => Crossover::Mixed,
    }
}

impl InternalExternalTables {
    /// How the rounds ended, for the intervals recomputed from them: on
    /// the intervals' width when a precision target stopped them.
    pub fn stopping_kind(&self) -> Stopping {
        match self.stopping.as_ref().map(|r| r.rule) {
            Some(RoundsRule::Precision(_)) => Stopping::OnWidth,
            _ => Stopping::Fixed,
        }
    }

    /// The blob sizes measured, in the order given (the matrix's columns).
    pub fn sizes(&self) -> Vec<u64> {
        distinct(self.internal_external.iter().map(|c| c.blob_size))
    }

    /// The page sizes measured, in the order given (the matrix's rows).
    pub fn page_sizes(&self) -> Vec<u32> {
        distinct(self.internal_external.iter().map(|c| c.page_size))
    }

    /// The cache_size (pages) a page size's databases read with: as SQLite
    /// reported it back, else what `cache_bytes` gave (older results).
    pub fn cache_pages(&self, page_size: u32) -> i64 {
        self.internal_external
            .iter()
            .find(|c| c.page_size == page_size)
            .and_then(|c| c.cache_pages)
            .unwrap_or_else(|| cache_pages(self.cache_bytes, page_size))
    }

    /// One page size's row: its cells' ratios and whether each is decided.
    pub fn row(&self, page_size: u32) -> Vec<RowPoint> {
        self.internal_external
            .iter()
            .filter(|c| c.page_size == page_size)
            .map(|c| RowPoint {
                size: c.blob_size,
                ratio: c.ratio_estimate().value,
                decided: !c.undecided(),
            })
            .collect()
    }

    /// The study's figures for the same row, at the blob sizes measured
    /// that it has (all decided: it printed no intervals).
    pub fn study_row(&self, page_size: u32) -> Vec<RowPoint> {
        self.internal_external
            .iter()
            .filter(|c| c.page_size == page_size)
            .filter_map(|c| {
                c.seed.map(|ratio| RowPoint {
                    size: c.blob_size,
                    ratio,
                    decided: true,
                })
            })
            .collect()
    }

    /// Every crossing of a page size's row: as stored, or recomputed from
    /// the cells for a result written before crossings were stored.
    pub fn crossings(&self, page_size: u32) -> Vec<Crossing> {
        match self.crossover.iter().find(|c| c.page_size == page_size) {
            Some(c) if !c.crossings.is_empty() => c.crossings.clone(),
            _ => crossings(&self.row(page_size)),
        }
    }

    /// How the best page size was decided: as stored, or for an older
    /// result derived from its cells by the same rule.
    pub fn page_choice(&self) -> AgainstDefault<u32> {
        self.best_page_choice
            .clone()
            .unwrap_or_else(|| page_choice_of(&self.internal_external))
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

/// A row of decided ratios at 10k, 50k and 1m, for tests.
#[cfg(test)]
pub(crate) fn decided_row(ratios: &[f64]) -> Vec<RowPoint> {
    [10_000, 50_000, 1_000_000]
        .iter()
        .zip(ratios)
        .map(|(&size, &ratio)| RowPoint {
            size,
            ratio,
            decided: true,
        })
        .collect()
}

/// A measured cell with these per-round read times, for tests.
#[cfg(test)]
pub(crate) fn test_cell(size: u64, page_size: u32, internal: &[f64], external: &[f64]) -> Cell {
    let mut c = Cell {
        blob_size: size,
        page_size,
        count: 10,
        internal_ns_per_read: internal.to_vec(),
        external_ns_per_read: external.to_vec(),
        external_over_internal: f64::NAN,
        seed: None,
        ratio: None,
        cache_pages: None,
    };
    let e = c.ratio_estimate();
    c.external_over_internal = e.value;
    c.ratio = Some(e);
    c
}

/// Cells at 10k and 100k for 4096 (steady) and 16384 (`factor` of 4096's
/// internal time per round), external reads at twice 4096's time.
#[cfg(test)]
pub(crate) fn two_pages(factor: [f64; 5]) -> Vec<Cell> {
    let mut out = Vec::new();
    for size in [10_000, 100_000] {
        let base = [100.0, 130.0, 90.0, 120.0, 110.0].map(|t| t * size as f64 / 10_000.0);
        let ext = base.map(|t| t * 2.0);
        out.push(test_cell(size, 4096, &base, &ext));
        let mut other = base;
        for (t, f) in other.iter_mut().zip(factor) {
            *t *= f;
        }
        out.push(test_cell(size, 16384, &other, &ext));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ratios: &[f64]) -> Vec<RowPoint> {
        decided_row(ratios)
    }

    #[test]
    fn the_best_page_size_is_the_default_unless_another_is_faster_beyond_the_noise() {
        // 16384 reads 5% faster at the median, slower in two rounds of five.
        let c = page_choice_of(&two_pages([0.90, 1.10, 0.95, 1.05, 0.92]));
        assert_eq!((c.default, c.chosen), (4096, 4096));
        assert!(c.within_noise, "{c:?}");
        let e = c.vs_default(&16384).unwrap();
        assert!(e.value < 1.0 && e.contains(1.0), "{e:?}");
        // 40% faster every round: 16384.
        let c = page_choice_of(&two_pages([0.60, 0.62, 0.59, 0.61, 0.60]));
        assert_eq!(c.chosen, 16384);
        assert!(!c.within_noise && c.vs_default(&16384).unwrap().high < 1.0);
        // An older result (no choice stored) is decided from its cells.
        let t = InternalExternalTables {
            internal_external: two_pages([0.90, 1.10, 0.95, 1.05, 0.92]),
            best_page_size: 16384,
            best_page_choice: None,
            crossover: Vec::new(),
            total_bytes: 1,
            cache_bytes: STUDY_CACHE_BYTES,
            rounds: 5,
            stopping: None,
            cold: false,
        };
        assert_eq!(t.page_choice().chosen, 4096);
    }

    #[test]
    fn a_row_that_falls_and_rises_again_has_two_crossings_and_no_threshold() {
        // The row: files win from about 62k, the database again before 1m.
        let r = row(&[2.89, 0.50, 1.19]);
        let c = crossings(&r);
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(c[0].above, Winner::Files);
        assert_eq!((c[0].from_size, c[0].to_size), (10_000, 50_000));
        assert_eq!(c[1].above, Winner::Database);
        assert_eq!((c[1].from_size, c[1].to_size), (50_000, 1_000_000));
        assert!(c[1].at > 50_000.0 && c[1].at < 1_000_000.0, "{c:?}");
        assert_eq!(crossover_of(&r, &c), Crossover::Mixed);
    }

    #[test]
    fn a_single_fall_is_a_threshold_and_a_single_rise_is_not() {
        let r = row(&[1.5, 0.9, 0.5]);
        let c = crossings(&r);
        assert_eq!(c.len(), 1);
        assert!(matches!(crossover_of(&r, &c), Crossover::At(s) if s > 10_000.0 && s < 50_000.0));
        let r = row(&[0.5, 0.9, 1.5]);
        let c = crossings(&r);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].above, Winner::Database);
        assert_eq!(crossover_of(&r, &c), Crossover::Mixed);
        assert_eq!(
            crossover_of(&row(&[1.0, 1.2, 3.0]), &[]),
            Crossover::DatabaseEverywhere
        );
        assert_eq!(
            crossover_of(&row(&[0.9, 0.2, 0.3]), &[]),
            Crossover::FilesEverywhere
        );
    }

    #[test]
    fn crossings_sort_by_size_and_mark_the_ones_within_noise() {
        // Given largest first, read smallest first: one fall between 10k and 50k.
        let mut r = row(&[1.5, 0.9, 0.5]);
        r.reverse();
        r[1].decided = false;
        let c = crossings(&r);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].from_size, c[0].to_size), (10_000, 50_000));
        assert!(!c[0].firm, "the 50k cell's interval contains 1.00");
        // A NaN cell is left out rather than read as a side.
        let r = row(&[1.5, f64::NAN, 0.5]);
        assert_eq!(crossings(&r).len(), 1);
    }
}
