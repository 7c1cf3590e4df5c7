//! The `advise` result's own tables: what was asked (the sizes, the
//! read/write mix, the durability), what was measured at each representative
//! size in each layout, the recommendation drawn from it and the WAL against
//! rollback-journal comparison.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::measure::estimate::{Estimate, median_estimate, paired_ratio};
use crate::measure::stats::summarize;
use crate::store::StoreInfo;

/// The kind-specific part of an `advise` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdviseTables {
    /// Everything `advise` found, under one key as version 0.1 wrote it
    /// (boxed: it is by far the largest kind of tables).
    pub advise: Box<Advice>,
}

/// The calibration and the recommendation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Advice {
    /// What the user asked about.
    pub input: AdviseInput,
    /// The representative sizes, each measured in every layout.
    pub points: Vec<PointResult>,
    /// The recommendation drawn from the points.
    pub decision: Decision,
    /// WAL against a rollback journal at the most common size.
    pub journal: JournalComparison,
    /// The layouts at the application's concurrency (`--threads`,
    /// `--writers`), which the decision took into account; absent for one
    /// thread (and in results from before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<ConcurrencyAdjustment>,
    /// The object store measured as one more layout (`--s3`): what it said
    /// about itself (kind, URL without credentials, the server's name and
    /// version). Absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_store: Option<StoreInfo>,
    /// What the expected overwrites do to each layout (`--aging FILE --age
    /// N`, from a `suite aging` result), which the decision took into
    /// account; absent without it (and in results from before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aging: Option<AgingAdjustment>,
}

/// How much slower each layout reads and writes at the storage age the
/// application will reach (bytes overwritten over bytes stored), taken
/// from a `suite aging` result: the decision scales every size's times of
/// a layout by the factors of the aging series nearest that size (an
/// assumption: a fresh store measured here ages as the aging volume did).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgingAdjustment {
    /// The `suite aging` result the factors come from, as given.
    pub file: String,
    /// The storage age asked (`--age`).
    pub age: f64,
    /// The filesystem of the calibration folder: the aging series on it are
    /// preferred.
    pub fs: String,
    /// Every advise layout the aging result measured (the database at every
    /// page size takes the sqlite factors).
    pub layouts: Vec<AgedLayout>,
    /// What was assumed or left out: another filesystem used, a layout the
    /// file lacks, the object store not aged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The decision the same measurements give a fresh store: what the
    /// recommendation would be without aging.
    pub unaged: Decision,
}

impl AgingAdjustment {
    /// Whether aging changed the recommendation: another placement, split
    /// or page size than the fresh store's.
    pub fn changed(&self, aged: &Decision) -> bool {
        self.unaged.placement != aged.placement
            || self.unaged.points_inside != aged.points_inside
            || self.unaged.page_size != aged.page_size
    }
}

/// One advise layout and the aging series that stand for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgedLayout {
    /// The advise layout adjusted.
    pub kind: LayoutKind,
    /// The aging layout measured for it: sqlite (inside the database),
    /// sqlite-ext (files named in the database), dir (plain files).
    pub aging_layout: String,
    /// The filesystem of the series used.
    pub fs: String,
    /// The occupancy of the series used (`--fill`), 0 to 1: the fill with
    /// the most measured ages.
    pub fill: f64,
    /// One entry per advise size point, in the points' order.
    pub sizes: Vec<AgedSize>,
}

/// The factors of one layout at one advise size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgedSize {
    /// The advise point's blob size.
    pub size: u64,
    /// The aging series used: the one whose mean blob size is nearest (on a
    /// log scale), e.g. "dir on ext4, 256K, 50% full".
    pub series: String,
    /// That series' mean blob size.
    pub series_size: u64,
    /// The measured storage ages the asked age was interpolated between
    /// (one age when it fell on one, or when extrapolated).
    pub ages: Vec<f64>,
    /// True when the asked age lies beyond the last age measured: the last
    /// age's rates are used (extrapolated flat), likely an underestimate.
    pub extrapolated: bool,
    /// Per aging read round: read MB/s at age 0 over read MB/s at the age
    /// (linear in age between measured ages); the decision applies round
    /// `r` of advise the factor of round `r` modulo their count.
    pub read_factor: Vec<f64>,
    /// Write MB/s of the fill over the write MB/s of the aging pass at the
    /// age (interpolated as reads; one pass per age, so one value; 1 where
    /// the file has no write rates).
    pub write_factor: f64,
}

/// The layouts measured with the application's threads at the most common
/// size, and how much longer each one's reads and writes took per thread
/// than with one thread: the decision scales every size's times of that
/// layout by these factors (an assumption: the factor measured at one size
/// holds at the others).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConcurrencyAdjustment {
    /// Threads at once.
    pub threads: usize,
    /// Of them, threads that only write.
    pub writers: usize,
    /// The blob size measured.
    pub size: u64,
    /// The page size of the database layout.
    pub page_size: u32,
    /// Every layout, as measured.
    pub layouts: Vec<ConcurrentLayout>,
}

/// One layout under the application's concurrency.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConcurrentLayout {
    /// "db 16384", "db+files", "files".
    pub layout: String,
    /// How the layout keeps its blobs.
    pub kind: LayoutKind,
    /// Reads per second of all reader threads, per round.
    pub reads_per_s: Vec<f64>,
    /// Writes per second of all writer threads, per round.
    pub writes_per_s: Vec<f64>,
    /// Writes that found the lock held past the busy timeout.
    pub busy: u64,
    /// Per round: one thread's time per read under this concurrency over
    /// the one-thread time per read at the same size (1 without readers).
    pub read_factor: Vec<f64>,
    /// The same for writes (1 without writers).
    pub write_factor: Vec<f64>,
}

/// The question: which blobs, which mix of reads and writes, how durable.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdviseInput {
    /// The blob sizes and where they came from.
    pub sample: SizeSample,
    /// Share of operations that are reads, in percent.
    pub reads_percent: u64,
    /// What a write must survive.
    pub durability: Durability,
    /// The page sizes tried for blobs inside the database.
    pub page_sizes: Vec<u32>,
    /// Measured rounds; every spread is over them.
    pub rounds: u64,
    /// The application's threads at once (1 in results from before it).
    #[serde(default = "one_thread", skip_serializing_if = "is_one")]
    pub threads: usize,
    /// Of them, threads that only write.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub writers: usize,
    /// Bytes of content per size and layout.
    pub total_per_layout: u64,
    /// The object store measured as one more layout (`--s3`), as
    /// `s3://BUCKET/PREFIX at ENDPOINT`; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_store: Option<String>,
}

/// What a write must survive; it decides `synchronous` and how files are
/// written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// Every commit is on disk when it returns.
    Power,
    /// No corruption on power loss; the last writes may be lost.
    Crash,
    /// Data that can be rebuilt: no syncing at all.
    None,
}

impl Durability {
    /// The word the user types (and the result stores).
    pub fn name(self) -> &'static str {
        match self {
            Durability::Power => "power",
            Durability::Crash => "crash",
            Durability::None => "none",
        }
    }

    /// One line saying what the level promises.
    pub fn describe(self) -> &'static str {
        match self {
            Durability::Power => "power: a write is on disk when it returns",
            Durability::Crash => "crash: no corruption on power loss, the last writes may be lost",
            Durability::None => "none: data that can be rebuilt",
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the sizes came from and what they look like.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeSample {
    /// The folder sampled or the `--sizes` description.
    pub source: String,
    /// How many sizes the sample holds.
    pub blobs: u64,
    /// Their sum.
    pub total_bytes: u64,
    /// 10th percentile size.
    pub p10: u64,
    /// Median size.
    pub median: u64,
    /// 90th percentile size.
    pub p90: u64,
    /// Largest size.
    pub max: u64,
    /// Entries under --sample-dir that were not regular files or could not be stat()ed.
    pub skipped: u64,
    /// Every size, ascending: what the representative points are drawn
    /// from. Not written: a result keeps the summary, not the sample.
    #[serde(skip)]
    pub sorted: Vec<u64>,
}

impl SizeSample {
    /// The summary of `sizes` (at least one) from `source`.
    pub fn new(source: String, mut sizes: Vec<u64>, skipped: u64) -> SizeSample {
        sizes.sort_unstable();
        let q = |f: f64| sizes[((sizes.len() - 1) as f64 * f).round() as usize];
        SizeSample {
            source,
            blobs: sizes.len() as u64,
            total_bytes: sizes.iter().sum(),
            p10: q(0.1),
            median: q(0.5),
            p90: q(0.9),
            max: *sizes.last().unwrap_or(&0),
            skipped,
            sorted: sizes,
        }
    }
}

/// How a layout keeps its blobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LayoutKind {
    /// Inside the database.
    #[serde(rename = "db")]
    Db,
    /// As files named in the database.
    #[serde(rename = "db+files")]
    DbFiles,
    /// As plain files, no database.
    #[serde(rename = "files")]
    Files,
    /// As objects in an object store (S3), one per blob.
    #[serde(rename = "s3")]
    ObjectStore,
}

/// One layout's measurements at one size, one value per round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LayoutResult {
    /// "db 4096", "db+files", "files".
    pub layout: String,
    /// How the layout keeps its blobs.
    pub kind: LayoutKind,
    /// The database page size, for blobs inside the database.
    pub page_size: Option<u32>,
    /// Time per read, per round.
    pub read_ns: Vec<f64>,
    /// Time per write (with its checkpoint), per round.
    pub write_ns: Vec<f64>,
    /// Disk space of the whole layout.
    pub space_bytes: u64,
}

impl LayoutResult {
    /// Time per operation of the mix with `reads` (0..1) reads, in `round`.
    pub fn mix_ns(&self, round: usize, reads: f64) -> f64 {
        reads * self.read_ns[round] + (1.0 - reads) * self.write_ns[round]
    }
}

/// One representative size and its measurements in every layout.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointResult {
    /// The blob size measured.
    pub size: u64,
    /// The share of the user's blobs this size stands for (0..1).
    pub share: f64,
    /// Blobs in each layout's dataset.
    pub blobs: u64,
    /// Writes timed per layout and round.
    pub writes: u64,
    /// Every layout measured at this size.
    pub layouts: Vec<LayoutResult>,
    /// The band of the user's sizes this point stands for (results before
    /// version 0.2 measured a band's midpoint and did not record it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<SizeBand>,
}

/// The sizes one point stands for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SizeBand {
    /// Smallest size in the band.
    pub min: u64,
    /// Largest size in the band.
    pub max: u64,
    /// Mean size in the band: what the point is measured at, up to the
    /// calibration cap.
    pub mean: f64,
}

/// A band of the user's sizes as the calibration plans it: its range, the
/// share of blobs in it and the size measured for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// The sizes in the band and their mean.
    pub range: SizeBand,
    /// The share of the user's blobs in the band (0..1).
    pub share: f64,
    /// The size measured: the mean, rounded, at most the calibration cap.
    pub size: u64,
}

impl Band {
    /// True when the band's mean is above the calibration cap, so the band
    /// is measured at a smaller size than its mean and under-costed.
    pub fn capped(&self) -> bool {
        self.range.mean.round() > self.size as f64
    }
}

impl PointResult {
    /// The band this point stands for, when the result recorded it.
    pub fn band(&self) -> Option<Band> {
        self.band.map(|range| Band {
            range,
            share: self.share,
            size: self.size,
        })
    }

    /// The layout of `kind` (and, when given, `page` size).
    pub fn layout(&self, kind: LayoutKind, page: Option<u32>) -> Option<&LayoutResult> {
        self.layouts
            .iter()
            .find(|l| l.kind == kind && (page.is_none() || l.page_size == page))
    }
}

/// A figure over rounds: median, range and its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Median over rounds.
    pub median: f64,
    /// Smallest round.
    pub min: f64,
    /// Largest round.
    pub max: f64,
    /// The median with its 95% interval (absent in results written before
    /// intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Estimate>,
}

/// The bootstrap seed of advise's figures: fixed, so a result reproduces.
const SEED: u64 = 0xad;

impl Spread {
    /// Per-round values (times): the median with its order-statistic or
    /// bootstrap interval.
    pub fn of(v: &[f64]) -> Spread {
        Self::with(v, median_estimate(v, SEED))
    }

    /// Per-round paired ratios (same round on both sides): their median with
    /// a bootstrap interval of their logs.
    pub fn of_ratios(v: &[f64]) -> Spread {
        Self::with(v, paired_ratio(v, &vec![1.0; v.len()], SEED))
    }

    fn with(v: &[f64], e: Estimate) -> Spread {
        let s = summarize(v);
        Spread {
            median: e.value,
            min: s.min,
            max: s.max,
            interval: Some(e),
        }
    }

    /// The figure with its interval; for an older result the median alone
    /// over `rounds`.
    pub fn estimate(&self, rounds: u64) -> Estimate {
        self.interval
            .unwrap_or_else(|| Estimate::point(self.median, rounds as usize))
    }

    /// Whether the interval contains 1.00: as a ratio, within noise.
    pub fn within_noise(&self) -> bool {
        self.interval
            .is_some_and(|e| e.has_interval() && e.contains(1.0))
    }
}

/// Where the blobs go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// Every blob inside the database.
    #[serde(rename = "all inside the database")]
    AllInside,
    /// Every blob as a file named in the database.
    #[serde(rename = "all as files")]
    AllFiles,
    /// Small blobs inside, large ones as files.
    #[serde(rename = "split by size")]
    Split,
    /// Every blob in the object store.
    #[serde(rename = "all in the object store")]
    AllObjectStore,
    /// Small blobs inside the database, large ones in the object store.
    #[serde(rename = "split by size, large in the object store")]
    SplitObjectStore,
}

impl Placement {
    /// The words the result stores and the report matches on.
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::AllInside => "all inside the database",
            Placement::AllFiles => "all as files",
            Placement::Split => "split by size",
            Placement::AllObjectStore => "all in the object store",
            Placement::SplitObjectStore => "split by size, large in the object store",
        }
    }

    /// Where the blobs outside the database go (files named in it, or
    /// objects), for placements that put some outside.
    pub fn outside(self) -> LayoutKind {
        match self {
            Placement::AllObjectStore | Placement::SplitObjectStore => LayoutKind::ObjectStore,
            _ => LayoutKind::DbFiles,
        }
    }
}

/// A placement equals the words a result stores for it.
impl PartialEq<&str> for Placement {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The recommendation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decision {
    /// The page size chosen.
    pub page_size: u32,
    /// Expected time per operation of each page size relative to the best.
    pub page_sizes: Vec<(u32, Spread)>,
    /// Blobs at or above this size go to files; None when all go inside or
    /// all go to files (see `placement`).
    pub threshold_bytes: Option<f64>,
    /// How many of the measured points go inside the database.
    pub points_inside: usize,
    /// Where the blobs go.
    pub placement: Placement,
    /// Expected time per operation of the recommendation.
    pub expected_ns: Spread,
    /// How many times faster the recommendation is than each alternative.
    pub speedup_vs: Vec<(String, Spread)>,
    /// Bytes on disk per blob, recommendation first, then the alternatives.
    pub disk_per_blob: Vec<(String, f64)>,
    /// Where the fastest placement could not be told from a simpler one
    /// (its interval contains 1.00): what was compared and what was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within_noise: Vec<String>,
}

/// WAL against a rollback journal for writes at one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JournalComparison {
    /// The blob size written.
    pub size: u64,
    /// The page size (the one chosen).
    pub page_size: u32,
    /// (journal_mode, synchronous, write ns per round): WAL first.
    pub modes: Vec<(String, String, Vec<f64>)>,
    /// The faster journal mode.
    pub best: String,
    /// The synchronous setting that goes with it.
    pub best_synchronous: String,
    /// Rollback time / WAL time per round.
    pub rollback_over_wal: Spread,
}

fn one_thread() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
