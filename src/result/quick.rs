//! The `quick` result's own tables: per case, the database's and the files'
//! time per operation and their ratio, and the disk space of each layout;
//! with `--s3`, an object store's beside them.

use serde::{Deserialize, Serialize};

use crate::dataset::DatasetSpec;
use crate::measure::estimate::Estimate;
use crate::result::faults::{SystemFailure, failed_systems_line};
use crate::result::rounds::RoundsRecord;
use crate::store::StoreInfo;

/// The kind-specific part of a `quick` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QuickTables {
    /// One row per case measured, in the order printed.
    pub quick: Vec<QuickRow>,
    /// Disk space of each layout (du).
    pub space_bytes: SpaceBytes,
    /// The dataset every layout holds.
    pub dataset: DatasetSpec,
    /// Measured rounds (the most any case ran); every time is the median
    /// over its case's rounds.
    pub rounds: u64,
    /// The rule the rounds followed and where each case stopped (absent in
    /// results from before rounds could stop at a precision target, which
    /// all ran `rounds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<RoundsRecord>,
    /// `--runs K`: the independent runs measured (each a fresh dataset);
    /// every figure is then the median of the runs' figures with the
    /// interval between them. Absent for one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_runs: Option<u64>,
    /// With `--runs K`: each run's rule and where its cases stopped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_stopping: Vec<RoundsRecord>,
    /// The object store measured as one more column (`--s3`): what it said
    /// about itself and the bytes its objects hold. Absent without `--s3`
    /// (and in results from before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_store: Option<ObjectStoreColumn>,
    /// Sides that failed while measured ("s3", "dir", ...): their cells say
    /// why, every other side's figures are kept. A failed side's rounds are
    /// left out of the table and of the runs (they would not pair with the
    /// others'); without the database, the folder or the tree no row can
    /// be drawn. Absent when nothing failed (and in older results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<SystemFailure>,
}

impl QuickTables {
    /// The answer to "files or SQLite for reads?" by the transaction the
    /// reads run in, which can flip it: one line per pattern with the
    /// folder's time over the database's, and which application has which.
    /// None for a result without both read rows (before they were measured).
    pub fn transaction_scope(&self) -> Option<Vec<String>> {
        let ratio = |case: &str| {
            self.quick
                .iter()
                .find(|r| r.case == case)
                .map(|r| r.estimates(self.rounds).dir_over_db)
        };
        let (batched, each) = (ratio(READ_BATCHED_CASE)?, ratio(READ_PER_TRANSACTION_CASE)?);
        let verdict = |e: &Estimate| match e.side_of(1.0) {
            crate::measure::estimate::Side::Above => "SQLite is faster",
            crate::measure::estimate::Side::Below => "files are faster",
            crate::measure::estimate::Side::Across => "within noise",
        };
        Some(vec![
            format!(
                "reads, by the transaction they run in (it decides the answer): many reads per transaction \
                 (a batch job, an export, an app that reads several blobs per query): files {} the database's \
                 time, {};",
                batched.format_ratio(),
                verdict(&batched)
            ),
            format!(
                "  one transaction per read (a web server answering one request per blob, SQLite's autocommit): \
                 files {}, {}. Take the line your application's reads match.",
                each.format_ratio(),
                verdict(&each)
            ),
        ])
    }

    /// The failure of side `name` (db, dir, tree, s3), if it failed.
    pub fn failure(&self, name: &str) -> Option<&SystemFailure> {
        self.failed.iter().find(|f| f.system == name)
    }

    /// Whether an object store was asked for (measured or failed).
    pub fn has_object_store(&self) -> bool {
        self.object_store.is_some() || self.failure("s3").is_some()
    }

    /// The one line the command exits 1 with when a side failed ("1 of 4
    /// systems failed: s3 (connection: ...); see the result"), else None.
    pub fn failures_line(&self) -> Option<String> {
        let sides = 3 + usize::from(self.has_object_store());
        failed_systems_line(&self.failed, sides)
    }
}

/// The object store beside the database and the files.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObjectStoreColumn {
    /// What the store said about itself: kind (`s3`), where (the URL
    /// without credentials), its settings and the server's name and
    /// version as the server reports them.
    pub store: StoreInfo,
    /// Sum of the blobs' object sizes (what the server stores them in is
    /// its own business and not visible from here).
    pub space_bytes: u64,
}

/// One case: the database beside the flat folder and the tree.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QuickRow {
    /// What is measured, e.g. "read, blob API".
    pub case: String,
    /// How it is measured (the settings on each side).
    pub detail: String,
    /// Database time per operation (median over rounds).
    pub db_ns_per_op: f64,
    /// Flat folder time per operation.
    pub dir_ns_per_op: f64,
    /// Tree time per operation.
    pub tree_ns_per_op: f64,
    /// dir time / db time: above 1 the database is faster.
    pub dir_over_db: f64,
    /// tree time / db time.
    pub tree_over_db: f64,
    /// Object-store time per operation (`--s3`; absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_ns_per_op: Option<f64>,
    /// object-store time / db time (`--s3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_over_db: Option<f64>,
    /// The widest range across rounds of the three times, in percent of
    /// their median: written by versions before intervals, read back only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_pct: Option<f64>,
    /// Every figure of the row with its 95% interval (absent in results
    /// written before intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimates: Option<QuickEstimates>,
}

/// A quick row's figures with their intervals: times in ns per operation,
/// ratios as paired per-round ratios.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuickEstimates {
    /// Database time per operation.
    pub db_ns_per_op: Estimate,
    /// Flat folder time per operation.
    pub dir_ns_per_op: Estimate,
    /// Tree time per operation.
    pub tree_ns_per_op: Estimate,
    /// dir time / db time, round by round.
    pub dir_over_db: Estimate,
    /// tree time / db time, round by round.
    pub tree_over_db: Estimate,
    /// Object-store time per operation (`--s3`; absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_ns_per_op: Option<Estimate>,
    /// object-store time / db time, round by round (`--s3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_over_db: Option<Estimate>,
}

/// The case of the row whose database reads share one transaction a round.
pub const READ_BATCHED_CASE: &str = "read, SQL statement";
/// The case of the row whose database reads are each a transaction.
pub const READ_PER_TRANSACTION_CASE: &str = "read, SQL, a txn per read";

/// The case of the row whose writes are each made durable on their own.
pub const DURABLE_CASE: &str = "update, durable each write";

impl QuickRow {
    /// The row of `case`, measured as `detail` says, whose figures are `e`.
    pub fn of(case: String, detail: String, e: QuickEstimates) -> QuickRow {
        QuickRow {
            case,
            detail,
            db_ns_per_op: e.db_ns_per_op.value,
            dir_ns_per_op: e.dir_ns_per_op.value,
            tree_ns_per_op: e.tree_ns_per_op.value,
            dir_over_db: e.dir_over_db.value,
            tree_over_db: e.tree_over_db.value,
            s3_ns_per_op: e.s3_ns_per_op.map(|x| x.value),
            s3_over_db: e.s3_over_db.map(|x| x.value),
            spread_pct: None,
            estimates: Some(e),
        }
    }

    /// How the row was measured, as printed: its detail, and for a durable
    /// row of a result from before the WAL checkpoint was counted in its
    /// database time (its detail does not mention the checkpoint), that it
    /// was left out.
    pub fn detail_text(&self) -> String {
        if self.case == DURABLE_CASE && !self.detail.contains("checkpoint") {
            format!(
                "{}; db time without the WAL checkpoint (a result from before it was counted)",
                self.detail
            )
        } else {
            self.detail.clone()
        }
    }

    /// The row's estimates: as stored, or for an older result its figures
    /// without intervals over `rounds`.
    pub fn estimates(&self, rounds: u64) -> QuickEstimates {
        self.estimates.unwrap_or_else(|| {
            let p = |v| Estimate::point(v, rounds as usize);
            QuickEstimates {
                db_ns_per_op: p(self.db_ns_per_op),
                dir_ns_per_op: p(self.dir_ns_per_op),
                tree_ns_per_op: p(self.tree_ns_per_op),
                dir_over_db: p(self.dir_over_db),
                tree_over_db: p(self.tree_over_db),
                s3_ns_per_op: self.s3_ns_per_op.map(p),
                s3_over_db: self.s3_over_db.map(p),
            }
        })
    }
}

impl QuickEstimates {
    /// Every estimate of the row, times first (five, seven with an
    /// object store).
    pub fn all(&self) -> Vec<Estimate> {
        let mut all = vec![self.db_ns_per_op, self.dir_ns_per_op, self.tree_ns_per_op];
        all.extend(self.s3_ns_per_op);
        all.extend([self.dir_over_db, self.tree_over_db]);
        all.extend(self.s3_over_db);
        all
    }
}

/// Disk space (du) of one dataset in its three layouts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpaceBytes {
    /// The database file.
    pub db: u64,
    /// The flat folder.
    pub dir: u64,
    /// The tree of folders.
    pub tree: u64,
}

impl SpaceBytes {
    /// From the three layouts' sizes in the order db, dir, tree.
    pub fn from_array(space: [u64; 3]) -> Self {
        SpaceBytes {
            db: space[0],
            dir: space[1],
            tree: space[2],
        }
    }

    /// (layout name, bytes) in the order db, dir, tree.
    pub fn entries(&self) -> [(&'static str, u64); 3] {
        [("db", self.db), ("dir", self.dir), ("tree", self.tree)]
    }
}
