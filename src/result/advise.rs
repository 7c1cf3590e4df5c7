//! The `advise` result's own tables: what was asked (the sizes, the
//! read/write mix, the durability), what was measured at each representative
//! size in each layout, the recommendation drawn from it and the WAL against
//! rollback-journal comparison.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::measure::estimate::{Estimate, median_estimate, paired_ratio};
use crate::measure::stats::summarize;
use crate::result::faults::{SystemFailure, failed_systems_line};
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
    /// Layouts that failed while measured (the object store: its server
    /// stopped answering): left out of every point and of the decision,
    /// which the local layouts' figures still make. Absent when nothing
    /// failed (and in older results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<SystemFailure>,
}

impl AdviseTables {
    /// The one line the command exits 1 with when a layout failed ("1 of
    /// 5 systems failed: s3 (connection: ...); see the result"), else None.
    pub fn failures_line(&self) -> Option<String> {
        let a = &self.advise;
        let layouts = a.input.page_sizes.len() + 2 + usize::from(a.input.object_store.is_some());
        failed_systems_line(&a.failed, layouts)
    }
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
    /// Reads that share one database transaction, as the reads were
    /// measured; absent: all of a pass's reads in one (as every result
    /// from before it was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_per_transaction: Option<u64>,
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

impl AdviseInput {
    /// The transaction the reads were measured in, in words.
    pub fn read_transactions(&self) -> String {
        match self.reads_per_transaction {
            Some(1) => "a transaction per read".into(),
            Some(n) => format!("{n} reads per transaction"),
            None => "all reads in one transaction".into(),
        }
    }
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

impl Spread {
    /// Per-round values (times): the median with its order-statistic or
    /// bootstrap interval.
    pub fn of(v: &[f64]) -> Spread {
        Self::with(v, median_estimate(v))
    }

    /// Per-round paired ratios (same round on both sides): their median with
    /// a bootstrap interval of their logs.
    pub fn of_ratios(v: &[f64]) -> Spread {
        Self::with(v, paired_ratio(v, &vec![1.0; v.len()]))
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

    /// Whether the whole interval lies below 1.00: as a ratio of times,
    /// faster beyond the noise.
    pub fn below_one(&self) -> bool {
        self.interval
            .is_some_and(|e| e.has_interval() && e.high < 1.0)
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
    /// Every blob a plain file, no database: chosen only when faster than
    /// every database-backed placement beyond the noise, and said to keep
    /// no transaction with the metadata.
    #[serde(rename = "plain files, no database")]
    PlainFiles,
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
            Placement::PlainFiles => "plain files, no database",
        }
    }

    /// Where the blobs outside the database go (files named in it, or
    /// objects), for placements that put some outside.
    pub fn outside(self) -> LayoutKind {
        match self {
            Placement::AllObjectStore | Placement::SplitObjectStore => LayoutKind::ObjectStore,
            Placement::PlainFiles => LayoutKind::Files,
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
    /// Expected time per operation of each page size (every blob inside)
    /// relative to the chosen one's, paired round by round.
    pub page_sizes: Vec<(u32, Spread)>,
    /// Blobs at or above this size go to files; None when all go inside or
    /// all go to files (see `placement`).
    pub threshold_bytes: Option<f64>,
    /// The two sizes measured either side of the threshold (the last inside,
    /// the first outside), each with the band of sizes it stands for: the
    /// threshold is only known to lie between them. Absent without a
    /// threshold (and in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_between: Option<[MeasuredSize; 2]>,
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
    /// How `page_size` was decided against SQLite's default: every other
    /// page size's expected time (every blob inside) over the default's,
    /// and whether the default was kept within noise. Absent in results
    /// from before it existed (they took the fastest at the median).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_choice: Option<AgainstDefault<u32>>,
}

/// A size the calibration measured, and the sizes it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeasuredSize {
    /// The size measured.
    pub size: u64,
    /// The band of the user's sizes measured at it (None: a size of the
    /// default grid, standing for itself).
    pub band: Option<SizeBand>,
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
    /// The journal mode recommended: WAL, the mode every layout was
    /// measured in, unless the rollback journal is faster beyond the noise
    /// (in results from before `choice`: the faster at the median).
    pub best: String,
    /// The synchronous setting that goes with it.
    pub best_synchronous: String,
    /// Rollback time / WAL time per round.
    pub rollback_over_wal: Spread,
    /// How `best` was decided against WAL, and whether WAL was kept within
    /// noise. Absent in results from before it existed:
    /// [`JournalComparison::choice`] derives it from `rollback_over_wal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_choice: Option<AgainstDefault<String>>,
}

impl JournalComparison {
    /// The journal mode every other must beat: WAL, the mode every layout
    /// at every size was measured in.
    pub const DEFAULT_MODE: &'static str = "wal";

    /// The decision against WAL: as stored, or for an older result derived
    /// from the rollback journal's paired ratio by the same rule.
    pub fn choice(&self) -> AgainstDefault<String> {
        self.mode_choice.clone().unwrap_or_else(|| {
            let rollback = self
                .modes
                .iter()
                .map(|m| m.0.clone())
                .find(|m| m != Self::DEFAULT_MODE)
                .unwrap_or_else(|| "delete".into());
            AgainstDefault::decide(
                Self::DEFAULT_MODE.to_string(),
                vec![(rollback, self.rollback_over_wal.estimate(0))],
            )
        })
    }
}

/// SQLite's default page size: advise and `suite internal-external` keep it
/// unless another page size is faster beyond the noise.
pub const SQLITE_DEFAULT_PAGE_SIZE: u32 = 4096;

/// The page size every other must beat among those `tried`: SQLite's
/// default when tried, else the one nearest it on a log scale (the smaller
/// of two as near); the default itself when none was tried.
pub fn default_page_size(tried: &[u32]) -> u32 {
    tried
        .iter()
        .copied()
        .min_by_key(|&p| (page_distance(p), p))
        .unwrap_or(SQLITE_DEFAULT_PAGE_SIZE)
}

/// How far a page size is from SQLite's default, in powers of two.
fn page_distance(page: u32) -> u32 {
    (page.max(1).ilog2()).abs_diff(SQLITE_DEFAULT_PAGE_SIZE.ilog2())
}

/// The page sizes other than `default` among `tried`, simplest first:
/// nearest SQLite's default, then the smaller.
pub fn other_page_sizes(tried: &[u32], default: u32) -> Vec<u32> {
    let mut out: Vec<u32> = tried.iter().copied().filter(|&p| p != default).collect();
    out.sort_by_key(|&p| (page_distance(p), p));
    out.dedup();
    out
}

/// A setting decided against its default, never by the median alone:
/// another value is chosen only when its time is below the default's
/// beyond the noise (the whole interval of their paired ratio below 1.00,
/// by [`crate::measure::estimate::WITHIN_RUN_MARGIN`] for an interval over one run's rounds);
/// otherwise the default is kept, and when some value could not be told
/// from it (its interval contains 1.00, or it has none), the decision is
/// within noise. Of several values faster beyond the noise, the fastest at
/// the median is taken unless a simpler one (given earlier) cannot be told
/// from it. Advise's page size and journal mode, `suite internal-external`'s
/// best page size and `sweep`'s parameter effects are decided this way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgainstDefault<T> {
    /// The value kept unless another beats it beyond the noise.
    pub default: T,
    /// The value recommended.
    pub chosen: T,
    /// Whether the interval decided against the median: the default kept
    /// though some value's interval contains 1.00, or a simpler value kept
    /// though a faster one (at the median) cannot be told from it.
    pub within_noise: bool,
    /// Every other value with its time over the default's, paired round by
    /// round, simplest first.
    pub others: Vec<(T, Estimate)>,
}

/// Whether a time ratio's whole interval lies below 1.00 by more than a
/// rerun could move it ([`Estimate::rerun_factor`]: 1.10, so below 0.91,
/// for an interval over one run's rounds).
pub fn faster_beyond_noise(e: &Estimate) -> bool {
    e.has_interval() && e.high < 1.0 / e.rerun_factor()
}

/// Whether a time ratio's whole interval lies above 1.00 by more than a
/// rerun could move it.
pub fn slower_beyond_noise(e: &Estimate) -> bool {
    e.has_interval() && e.low > e.rerun_factor()
}

impl<T: Clone + PartialEq> AgainstDefault<T> {
    /// Decides from `others`: each value other than the default with its
    /// time over the default's (paired round by round), simplest first.
    pub fn decide(default: T, others: Vec<(T, Estimate)>) -> Self {
        let others: Vec<(T, Estimate)> = others.into_iter().filter(|o| o.0 != default).collect();
        let faster: Vec<&(T, Estimate)> = others
            .iter()
            .filter(|o| faster_beyond_noise(&o.1))
            .collect();
        let fastest = faster
            .iter()
            .min_by(|a, b| a.1.value.total_cmp(&b.1.value))
            .copied();
        let (chosen, within_noise) = match fastest {
            // The simplest of those faster beyond the noise that cannot be
            // told from the fastest (the fastest itself at least).
            Some(f) => {
                let simplest = faster
                    .iter()
                    .find(|o| o.1.overlaps(&f.1))
                    .copied()
                    .unwrap_or(f);
                (simplest.0.clone(), simplest.0 != f.0)
            }
            None => (
                default.clone(),
                others.iter().any(|o| !slower_beyond_noise(&o.1)),
            ),
        };
        AgainstDefault {
            default,
            chosen,
            within_noise,
            others,
        }
    }

    /// Whether a value other than the default was chosen.
    pub fn changed(&self) -> bool {
        self.chosen != self.default
    }

    /// The other value with the lowest time at the median, with its ratio.
    pub fn fastest_other(&self) -> Option<&(T, Estimate)> {
        self.others
            .iter()
            .min_by(|a, b| a.1.value.total_cmp(&b.1.value))
    }

    /// The ratio of `value`'s time over the default's.
    pub fn vs_default(&self, value: &T) -> Option<Estimate> {
        self.others.iter().find(|o| o.0 == *value).map(|o| o.1)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A time ratio from per-round ratios, as advise computes them.
    fn ratio(per_round: &[f64]) -> Estimate {
        Spread::of_ratios(per_round).estimate(per_round.len() as u64)
    }

    #[test]
    fn the_default_is_kept_unless_another_is_faster_beyond_the_noise() {
        // 0.95 at the median, but two rounds of five slower: within noise.
        let overlapping = ratio(&[0.90, 1.10, 0.95, 1.05, 0.92]);
        assert!(overlapping.value < 1.0 && overlapping.contains(1.0));
        let d = AgainstDefault::decide(4096, vec![(16384, overlapping)]);
        assert_eq!(d.chosen, 4096);
        assert!(d.within_noise && !d.changed());
        assert_eq!(d.fastest_other().map(|o| o.0), Some(16384));
        // Half the time every round: changed.
        let separated = ratio(&[0.50, 0.52, 0.49, 0.51, 0.50]);
        let d = AgainstDefault::decide(4096, vec![(16384, separated)]);
        assert_eq!(d.chosen, 16384);
        assert!(!d.within_noise && d.changed());
        // Slower beyond the noise: the default, not within noise.
        let d = AgainstDefault::decide(4096, vec![(16384, ratio(&[1.5, 1.6, 1.4, 1.5, 1.55]))]);
        assert_eq!(d.chosen, 4096);
        assert!(!d.within_noise);
        // One round, no interval: nothing is confirmed, the default stays.
        let d = AgainstDefault::decide(4096, vec![(16384, ratio(&[0.5]))]);
        assert_eq!(d.chosen, 4096);
        assert!(d.within_noise);
    }

    #[test]
    fn a_gain_a_rerun_could_undo_moves_nothing_unless_measured_between_runs() {
        // The advise case of issue 53: 0.96x [0.88-0.97] over one run's
        // rounds, on a machine whose runs differ by 5-10%.
        let small = Estimate {
            value: 0.96,
            low: 0.88,
            high: 0.97,
            n: 7,
            method: crate::measure::estimate::Method::PairedLogOrderStatistic,
            coverage: Some(0.984),
        };
        assert!(!small.contains(1.0));
        let d = AgainstDefault::decide(4096, vec![(16384, small)]);
        assert_eq!(d.chosen, 4096);
        assert!(d.within_noise, "kept within noise, not as slower");
        // The same interval between independent runs carries the runs'
        // own variation: it decides.
        let between = Estimate {
            method: crate::measure::estimate::Method::BetweenRuns,
            ..small
        };
        assert_eq!(
            AgainstDefault::decide(4096, vec![(16384, between)]).chosen,
            16384
        );
        // Past the margin over one run's rounds: decided.
        let big = Estimate {
            value: 0.85,
            low: 0.82,
            high: 0.90,
            ..small
        };
        assert_eq!(
            AgainstDefault::decide(4096, vec![(16384, big)]).chosen,
            16384
        );
        assert!(!slower_beyond_noise(&Estimate {
            value: 1.05,
            low: 1.02,
            high: 1.08,
            ..small
        }));
    }

    #[test]
    fn of_two_faster_values_that_cannot_be_told_apart_the_simpler_is_kept() {
        let near = ratio(&[0.60, 0.62, 0.59, 0.61, 0.60]);
        let far = ratio(&[0.58, 0.63, 0.57, 0.60, 0.59]);
        assert!(far.value < near.value && far.overlaps(&near));
        let d = AgainstDefault::decide(4096, vec![(8192, near), (65536, far)]);
        assert_eq!(d.chosen, 8192);
        assert!(d.within_noise && d.changed());
        // Clearly faster than the simpler one too: the fastest.
        let far = ratio(&[0.30, 0.31, 0.29, 0.30, 0.30]);
        let d = AgainstDefault::decide(4096, vec![(8192, near), (65536, far)]);
        assert_eq!(d.chosen, 65536);
        assert!(!d.within_noise);
    }

    #[test]
    fn the_default_page_size_is_sqlites_or_the_nearest_tried() {
        assert_eq!(default_page_size(&[1024, 4096, 65536]), 4096);
        assert_eq!(default_page_size(&[16384, 2048, 65536]), 2048);
        assert_eq!(default_page_size(&[8192, 2048]), 2048);
        assert_eq!(default_page_size(&[]), 4096);
        assert_eq!(
            other_page_sizes(&[65536, 1024, 4096, 8192, 2048], 4096),
            [2048, 8192, 1024, 65536]
        );
    }

    #[test]
    fn an_older_journal_comparison_is_decided_from_its_ratio() {
        let j = |per_round: &[f64]| JournalComparison {
            size: 1,
            page_size: 4096,
            modes: vec![
                ("wal".into(), "full".into(), vec![1.0; per_round.len()]),
                ("delete".into(), "full".into(), per_round.to_vec()),
            ],
            best: "delete".into(),
            best_synchronous: "full".into(),
            rollback_over_wal: Spread::of_ratios(per_round),
            mode_choice: None,
        };
        let c = j(&[0.90, 1.10, 0.95, 1.05, 0.92]).choice();
        assert_eq!((c.chosen.as_str(), c.within_noise), ("wal", true));
        let c = j(&[0.50, 0.52, 0.49, 0.51, 0.50]).choice();
        assert_eq!((c.chosen.as_str(), c.within_noise), ("delete", false));
    }
}
