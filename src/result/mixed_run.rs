//! The result of a mixed run (`run --threads N --mix ...`, its `command`
//! "run concurrent"): what it was asked to do (with the kinds of operation
//! it mixes and how it draws keys), and per kind of operation what was
//! done, how long each took, and every outcome that was not a plain
//! success (a busy lock, a key deleted meanwhile, a torn or stale read).

use serde::{Deserialize, Serialize};

use super::faults::{
    Activity, ClusterRecord, Failures, Reconnect, closing_line, whole_figure_error,
};
use crate::measure::latency::{EncodedHistogram, LatencySummary};
use crate::store::StoreInfo;

/// One kind of operation of a mixed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    /// Read one blob whole.
    Read,
    /// Replace one blob with a new version of the same size.
    Update,
    /// Add a blob under a new key past the last one.
    Insert,
    /// Remove one blob.
    Delete,
    /// Read a blob, then write its next version (YCSB's read-modify-write).
    #[serde(rename = "rmw")]
    ReadModifyWrite,
    /// Read a run of consecutive keys (YCSB's short scan).
    Scan,
}

impl OpKind {
    /// Every kind, in the order tables list them.
    pub const ALL: [OpKind; 6] = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Delete,
        OpKind::ReadModifyWrite,
        OpKind::Scan,
    ];

    /// The name `--mix` takes.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Update => "update",
            OpKind::Insert => "insert",
            OpKind::Delete => "delete",
            OpKind::ReadModifyWrite => "rmw",
            OpKind::Scan => "scan",
        }
    }

    /// Whether the operation changes the store.
    pub fn writes(self) -> bool {
        !matches!(self, OpKind::Read | OpKind::Scan)
    }
}

/// How keys are drawn, as `--keys` names it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum KeyDistribution {
    /// Every key equally likely.
    Uniform,
    /// Rank r (from 1) drawn with probability proportional to 1/r^theta,
    /// ranks scattered over the keys by a fixed permutation.
    Zipf {
        /// The skew: 0 is uniform, 0.99 YCSB's default; below 1.
        theta: f64,
    },
    /// Zipfian over recency: the last key is rank 1.
    Latest {
        /// The skew, as for `Zipf`.
        theta: f64,
    },
    /// The first `keys` fraction of the range takes `ops` of the draws.
    Hotspot {
        /// Fraction of the keys that are hot (0..1).
        keys: f64,
        /// Fraction of the operations that go to them (0..=1).
        ops: f64,
    },
}

impl KeyDistribution {
    /// The distribution as `--keys` takes it back.
    pub fn describe(&self) -> String {
        match self {
            KeyDistribution::Uniform => "uniform".into(),
            KeyDistribution::Zipf { theta } => format!("zipf:{theta}"),
            KeyDistribution::Latest { theta } => format!("latest:{theta}"),
            KeyDistribution::Hotspot { keys, ops } => format!("hotspot:{keys}:{ops}"),
        }
    }
}

/// What a mixed run was asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedRunPlanRecord {
    /// The target string as given.
    pub target: String,
    /// Worker threads, each with its own connection or session.
    pub threads: usize,
    /// Of them, threads that only updated (the others followed `mix`).
    #[serde(default)]
    pub writers: usize,
    /// The operations' shares, as `--mix` takes them.
    pub mix: String,
    /// How keys were drawn.
    pub keys: KeyDistribution,
    /// Operations per transaction (1: each its own).
    pub batch: u32,
    /// How long the run lasted at most, ns.
    pub duration_ns: Option<u64>,
    /// Operations in all at most.
    pub count: Option<u64>,
    /// Open loop: operations per second across all threads (None: closed loop).
    pub rate: Option<f64>,
    /// How long an operation waits for another's lock before it counts as busy, ns.
    pub busy_timeout_ns: u64,
    /// How writes reach the store, in words.
    pub writes: String,
    /// Whether every read was checked (content and version).
    pub verify: bool,
    /// Whether the store takes locks and runs transactions (false for
    /// files and S3: no busy timeout, no batch in one transaction).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub transactions: bool,
    /// YCSB's workload letter, when a preset was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
}

/// Operations that did not succeed as asked, by why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcomes {
    /// Another connection held the lock past the busy timeout (SQLite's
    /// SQLITE_BUSY, a server's lock wait or deadlock): the transaction was
    /// rolled back; not fatal.
    pub busy: u64,
    /// The key was gone, legally (a delete ran first or meanwhile).
    pub missing: u64,
    /// Bytes that are no version of the blob: a reader saw a write half done.
    pub torn: u64,
    /// A version the read could not legally see: older than one committed
    /// before the read began, older than the key's version at the start of
    /// the run, or written by a transaction that was rolled back.
    pub stale: u64,
}

impl Outcomes {
    /// Adds `o`'s counts.
    pub fn add(&mut self, o: &Outcomes) {
        self.busy += o.busy;
        self.missing += o.missing;
        self.torn += o.torn;
        self.stale += o.stale;
    }

    /// Torn and stale reads: results that are wrong, not just refused.
    pub fn wrong(&self) -> u64 {
        self.torn + self.stale
    }
}

/// One kind of operation (or the commits of batches) over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindFigures {
    /// The operation, or None for the COMMIT of a batch of several.
    pub kind: Option<OpKind>,
    /// Operations that completed (whatever their outcome but busy).
    pub ops: u64,
    /// Completed operations per second of the run.
    pub per_s: f64,
    /// Blob bytes read or written.
    pub bytes: u64,
    /// Time of each completed operation (open loop: from its intended start).
    pub latency: LatencySummary,
    /// The latency histogram, mergeable.
    pub histogram: EncodedHistogram,
    /// What did not succeed as asked.
    pub outcomes: Outcomes,
    /// Operations that failed (timeout, lost connection, server error,
    /// ...), by class: counted, not fatal. `ops`, `per_s` and `latency`
    /// are the successful operations only; `failed_latency` is how long
    /// the failures took, and `latency_with_failures` both together.
    #[serde(default, skip_serializing_if = "Failures::is_empty")]
    pub failures: Failures,
    /// How long each failed operation took until it failed (None when
    /// none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_latency: Option<LatencySummary>,
    /// Successful and failed operations together (None when none failed:
    /// then it is `latency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_with_failures: Option<LatencySummary>,
}

impl KindFigures {
    /// `read`, `update`, ..., or `commit`.
    pub fn name(&self) -> &'static str {
        self.kind.map_or("commit", OpKind::name)
    }
}

/// How an open-loop run kept its schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Operations per second asked for.
    pub target_per_s: f64,
    /// Operations started per second.
    pub achieved_per_s: f64,
    /// Operations that fell due but were never started before the end.
    pub not_started: u64,
    /// How late each operation started against its intended time.
    pub start_lag: LatencySummary,
}

/// The dataset after the run, kept whole for the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetAfter {
    /// Keys it holds now, from..to.
    pub first_key: u64,
    /// The last key (past the old last one when inserts landed).
    pub last_key: u64,
    /// Keys deleted (or inserts that failed) and written back afterwards,
    /// untimed, so the dataset has no gaps.
    pub refilled: u64,
}

/// The kind-specific part of a `run --threads/--mix` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedRunTables {
    /// What was asked.
    pub plan: MixedRunPlanRecord,
    /// The store as opened (settings read back).
    pub store: StoreInfo,
    /// The machine's cores, to say when threads exceed them.
    pub cores: usize,
    /// Wall time from the first operation to the last, ns.
    pub elapsed_ns: u64,
    /// Per kind, in `OpKind::ALL` order, then the commits.
    pub kinds: Vec<KindFigures>,
    /// Reads whose content and version were checked.
    pub verified: u64,
    /// Reads whose version could not be judged (more writes of the key
    /// during the read than are kept); their content was still checked.
    pub unjudged: u64,
    /// Blobs found at a version their acknowledged writes do not allow: a
    /// lost write, or an older copy put back (before the run, against the
    /// dataset's ledger; after it, against the run's own writes). Absent
    /// in results written before it was checked.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost: u64,
    /// The first of them, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_first: Option<String>,
    /// Open loop only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// The dataset afterwards.
    pub after: DatasetAfter,
    /// What the reader should know (threads beyond cores, settings ignored).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Completions and failures per tenth of a second (absent in results
    /// written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<Box<Activity>>,
    /// Connections opened again after a failure broke them, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reconnects: Vec<Reconnect>,
    /// The cluster's shape at the start and the end and every change seen
    /// (None when the target is not a cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Box<ClusterRecord>>,
    /// Why the run ended before its -t or --count (`--max-errors`, a
    /// signal, the disk's reserve reached, a full disk), or None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl MixedRunTables {
    /// Completed operations per second, every kind together (commits aside).
    pub fn ops_per_s(&self) -> f64 {
        let ops: u64 = self
            .kinds
            .iter()
            .filter(|k| k.kind.is_some())
            .map(|k| k.ops)
            .sum();
        ops as f64 / (self.elapsed_ns as f64 / 1e9).max(1e-9)
    }

    /// Every kind's failed operations together (commits included).
    pub fn failures(&self) -> Failures {
        let mut all = Failures::default();
        for k in &self.kinds {
            all.add(&k.failures);
        }
        all
    }

    /// The closing line when operations failed (see
    /// [`Tables::failures_line`](super::Tables::failures_line)).
    pub fn failures_line(&self) -> Option<String> {
        let failures = self.failures();
        if failures.is_empty() {
            return None;
        }
        let attempted: u64 = self.kinds.iter().map(|k| k.ops + k.failures.total()).sum();
        Some(closing_line(&failures, attempted, "operations"))
    }

    /// The run as a figure a suite can use: an error naming what failed
    /// when any operation did (throughput over only the operations that
    /// worked is no figure of the case).
    pub fn without_failures(self) -> crate::error::Result<MixedRunTables> {
        match self.failures_line() {
            None => Ok(self),
            Some(line) => Err(whole_figure_error(
                &self.plan.target,
                &self.failures(),
                &line,
            )),
        }
    }

    /// Every kind's outcomes together.
    pub fn outcomes(&self) -> Outcomes {
        let mut all = Outcomes::default();
        for k in &self.kinds {
            all.add(&k.outcomes);
        }
        all
    }
}
