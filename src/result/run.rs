//! A run's record: the plan it followed and what every repetition measured.
//! Written by the executor (`workload::execute`), read by reports.

use serde::{Deserialize, Serialize};

use super::faults::{Failures, closing_line, whole_figure_error};

use crate::error::{Error, Result};
use crate::measure::cache::CacheAction;
use crate::measure::io::IoCounters;
use crate::measure::latency::{EncodedHistogram, Latencies, LatencySummary};
use crate::measure::stats::Summary;
/// A known extra cost per timed operation (a testing aid), recorded in a plan.
pub use crate::store::inject::Injection;
use crate::store::{Catalog, SessionOptions, StoreInfo};
/// How a run reads and writes, recorded in its plan.
pub use crate::store::{ReadPath, WriteStyle};
use crate::target::Target;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// What each operation of a run does to its blob.
pub enum Operation {
    /// Read the whole blob.
    Read,
    /// Replace the whole blob with new content of the same key.
    Update,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// The cache state each repetition starts from.
pub enum CacheMode {
    /// Everything the run touches read once right before timing.
    Warm,
    /// The target's files evicted from the page cache right before timing;
    /// as root by dropping the whole machine's caches (`--cold`).
    Cold,
    /// Only the target's files evicted (posix_fadvise DONTNEED), even as
    /// root (`--cold=file`).
    ColdFiles,
}

/// The order a run visits keys in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyOrder {
    /// Ascending from the start key (kvtest's --asc, its default).
    Asc,
    /// Descending from the last key (kvtest's --desc).
    Desc,
    /// A seeded random permutation: every key once per pass.
    Random,
    /// kvtest's --random exactly: draws with replacement from its generator.
    KvtestDraws,
}

/// Everything the executor needs to run one workload on one target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunPlan {
    /// A short label for reports ("read sqlite", "write dir 4096 (round 1)").
    pub name: String,
    /// What is measured.
    pub target: Target,
    /// Read or update.
    pub operation: Operation,
    /// The order keys are visited in.
    pub order: KeyOrder,
    /// Operations per repetition; None = every key of the dataset once.
    pub count: Option<u64>,
    /// The first key visited (--start); None = the dataset's first key.
    pub start: Option<u64>,
    /// The highest key visited (--max-id); None = the dataset's last key.
    pub max_id: Option<u64>,
    /// How reads and writes are done (SQL or blob API, transactions, write style).
    pub session: SessionOptionsRecord,
    /// Measured repetitions.
    pub repeat: u32,
    /// Repetitions run first and not measured.
    pub warmup: u32,
    /// The cache state each repetition starts from.
    pub cache: CacheMode,
    /// Check every blob read (or updated, read back after the run) against
    /// the content the dataset's manifest recomputes.
    pub verify: bool,
    /// Leave the WAL checkpoint out of the timed total (it is still timed and reported).
    pub exclude_checkpoint: bool,
    /// Seed of the random key orders.
    pub order_seed: u64,
    /// Stop once this many operations failed (None: every repetition goes
    /// to its end whatever fails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_errors: Option<super::budget::ErrorBudget>,
}

/// The session options as recorded in results.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SessionOptionsRecord {
    /// SQL statements or SQLite's incremental blob API.
    pub read_path: ReadPath,
    /// Each operation in its own transaction (kvtest's --multitrans).
    pub per_op_transaction: bool,
    /// Without per-operation transactions: the transaction is committed
    /// and a new one begun after every this many operations, inside the
    /// timed operation that ends it (advise's --reads-per-transaction).
    /// None: the repetition's operations all share one transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_transaction: Option<u64>,
    /// How a file is rewritten.
    pub write_style: WriteStyle,
    /// fsync each written file (files and external blobs).
    pub fsync: bool,
    /// A known extra cost spun after each timed operation (`+20us`, or
    /// `x1.10`: the operation's own time scaled): a testing aid for
    /// calibrating the instrument, never the default. Absent when none
    /// (and in results written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject: Option<Injection>,
}

impl SessionOptionsRecord {
    /// The factor of a scaled injection (`x1.10`); None for a fixed extra
    /// or none.
    pub fn inject_factor(&self) -> Option<f64> {
        match self.inject {
            Some(Injection::Scaled { factor }) => Some(factor),
            _ => None,
        }
    }

    /// The database transaction its operations run in, in words.
    pub fn transaction_words(&self) -> String {
        match (self.per_op_transaction, self.ops_per_transaction) {
            (true, _) => "one transaction per op".into(),
            (false, Some(n)) => format!("a transaction per {n} ops"),
            (false, None) => "one transaction".into(),
        }
    }
}

impl From<SessionOptionsRecord> for SessionOptions {
    fn from(r: SessionOptionsRecord) -> Self {
        SessionOptions {
            read_path: r.read_path,
            per_op_transaction: r.per_op_transaction,
            write_style: r.write_style,
            fsync: r.fsync,
        }
    }
}

/// What one measured repetition of a run took.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repetition {
    /// Operations done.
    pub ops: u64,
    /// Blob bytes read or written.
    pub bytes: u64,
    /// Sum of the per-operation times.
    pub ops_ns: u64,
    /// The opening BEGIN and the closing commit, in ns.
    pub commit_ns: u64,
    /// The WAL checkpoint after the commit, in ns.
    pub checkpoint_ns: u64,
    /// The measured total: ops + commit (+ checkpoint unless excluded).
    pub elapsed_ns: u64,
    /// Open + ops + commit + checkpoint + close, as kvtest's whole-run timer sees it.
    pub whole_run_ns: u64,
    /// Opening the target and its session, in ns (not in the total).
    pub open_ns: u64,
    /// Closing the session and the target, in ns (not in the total).
    pub close_ns: u64,
    /// User CPU time of the process during the operations, commit and checkpoint.
    pub cpu_user_ns: u64,
    /// System CPU time of the process during the same span.
    pub cpu_system_ns: u64,
    /// The process's I/O counters over the same span.
    pub io: IoCounters,
    /// How the cache was warmed or emptied before this repetition.
    pub cache: CacheAction,
    /// Blobs checked against their expected content.
    pub verified: u64,
    /// Engine counters (SQLite page cache hits/misses/writes) for the repetition.
    pub engine: serde_json::Map<String, serde_json::Value>,
    /// Operations that failed (not in `ops`; see the run's `failures`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// With an injection (`plan.session.inject`): what it delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected: Option<InjectedExtra>,
}

/// What an injected cost delivered in one repetition, as the injecting
/// session measured it on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InjectedExtra {
    /// The timed operations' own time, ns.
    pub own_ns: u64,
    /// The spins after them, ns.
    pub extra_ns: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A run's start-up cost: the time before its first timed operation
/// (process start, opening the target, reading its catalog, drawing the
/// keys, for updates generating their contents), all of it but the cache
/// preparation, so a user can tell a fixed cost from a per-read one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Startup {
    /// From `from` to the first timed operation of the first repetition
    /// (warm-up included), less `cache_ns`.
    pub ns: u64,
    /// Where the clock started: "process start" (the binary's `main`) or
    /// "run start" (a caller that is not the binary).
    pub from: String,
    /// The first repetition's cache preparation (warm or evict), left out
    /// of `ns`: it grows with the keys the run visits, by design.
    pub cache_ns: u64,
}

/// Statistics over the measured repetitions of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSummary {
    /// Measured total divided by operations, per repetition.
    pub time_per_op_ns: Summary,
    /// Operations per second, per repetition.
    pub ops_per_sec: Summary,
    /// Blob megabytes (10^6) per second, per repetition.
    pub mb_per_sec: Summary,
    /// The measured total, per repetition.
    pub elapsed_ns: Summary,
    /// Open to close, per repetition.
    pub whole_run_ns: Summary,
}

/// One run's record: its plan, the store, every repetition and the statistics.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The plan's name.
    pub name: String,
    /// The target as text (servers without password).
    pub target: String,
    /// The plan followed.
    pub plan: RunPlan,
    /// What the store said about itself (settings in force).
    pub store: StoreInfo,
    /// The keys the target held.
    pub catalog: Catalog,
    /// Human description of how writes reach the disk.
    pub write_method: Option<String>,
    /// Every measured repetition (warm-ups are not recorded).
    pub repetitions: Vec<Repetition>,
    /// Statistics over the repetitions.
    pub summary: RunSummary,
    /// Per-operation latency percentiles over all measured repetitions.
    pub latency: LatencySummary,
    /// The histogram those percentiles come from, losslessly (HdrHistogram
    /// V2 + DEFLATE, base64): runs merge and any percentile can be
    /// recomputed from it. Absent from results written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<EncodedHistogram>,
    /// Disk space of the target after the run (like `du`), in bytes.
    pub space_bytes: u64,
    /// What the reader should know about how the numbers were made.
    pub notes: Vec<String>,
    /// Operations that failed, by class, over the measured repetitions:
    /// counted, the run went on. `latency` and the summary are of the
    /// successful operations only.
    #[serde(default, skip_serializing_if = "Failures::is_empty")]
    pub failures: Failures,
    /// How long each failed operation took until it failed (None when none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_latency: Option<LatencySummary>,
    /// Successful and failed operations together (None when none failed:
    /// then it is `latency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_with_failures: Option<LatencySummary>,
    /// Why the run ended before its last repetition's end (`--max-errors`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// The fixed cost before the first timed operation; None in results
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup: Option<Startup>,
    /// Operations in the latency histogram (not written to results).
    #[serde(skip)]
    pub histogram_count: u64,
}

impl RunResult {
    /// The closing line when operations failed ("3 of 20,000 operations
    /// failed: 3 timeout"), or None.
    pub fn failures_line(&self) -> Option<String> {
        if self.failures.is_empty() {
            return None;
        }
        let done: u64 = self.repetitions.iter().map(|r| r.ops).sum();
        Some(closing_line(
            &self.failures,
            done + self.failures.total(),
            "operations",
        ))
    }

    /// The run as a figure a suite can use: an error naming what failed
    /// when any operation did (a time per operation over only the ones
    /// that worked is no figure of the case).
    pub fn without_failures(self) -> crate::error::Result<RunResult> {
        match self.failures_line() {
            None => Ok(self),
            Some(line) => Err(whole_figure_error(&self.target, &self.failures, &line)),
        }
    }

    /// The run's latency histogram decoded; None for a result written
    /// before histograms were kept.
    pub fn histogram(&self) -> Result<Option<Latencies>> {
        self.latency_histogram
            .as_ref()
            .map(|h| {
                h.decode()
                    .map_err(|e| Error::usage(format!("run \"{}\": {e}", self.name)))
            })
            .transpose()
    }
}

/// The latency histogram of all `runs` together, as if one run had done all
/// their operations; None when a run has no histogram (a result written
/// before they were kept), since percentiles cannot be merged.
pub fn merged_histogram<'a>(
    runs: impl IntoIterator<Item = &'a RunResult>,
) -> Result<Option<Latencies>> {
    let mut all = Latencies::new();
    for r in runs {
        match r.histogram()? {
            Some(h) => all.merge(&h),
            None => return Ok(None),
        }
    }
    Ok(Some(all))
}

/// The `run` command's own tables: the integrity check when asked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "Option<RunTablesFields>")]
pub struct RunTables {
    /// SQLite's `PRAGMA integrity_check` after the run ("ok" when sound);
    /// null when --integrity-check was not given or the target has no check.
    pub integrity_check: Option<String>,
}

/// RunTables as stored; a document without tables (null) reads as empty.
#[derive(Deserialize)]
struct RunTablesFields {
    #[serde(default)]
    integrity_check: Option<String>,
}

impl From<Option<RunTablesFields>> for RunTables {
    fn from(f: Option<RunTablesFields>) -> Self {
        RunTables {
            integrity_check: f.and_then(|f| f.integrity_check),
        }
    }
}
