//! A run's record: the plan it followed and what every repetition measured.
//! Written by the executor (`workload::execute`), read by reports.

use serde::{Deserialize, Serialize};

use crate::measure::cache::CacheAction;
use crate::measure::io::IoCounters;
use crate::measure::latency::LatencySummary;
use crate::measure::stats::Summary;
use crate::store::{Catalog, ReadPath, SessionOptions, StoreInfo, WriteStyle};
use crate::target::Target;
use crate::workload::KeyOrder;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    Read,
    Update,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    Warm,
    Cold,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunPlan {
    pub name: String,
    pub target: Target,
    pub operation: Operation,
    pub order: KeyOrder,
    /// Operations per repetition; None = every key of the dataset once.
    pub count: Option<u64>,
    pub start: Option<u64>,
    pub max_id: Option<u64>,
    pub session: SessionOptionsRecord,
    pub repeat: u32,
    pub warmup: u32,
    pub cache: CacheMode,
    pub verify: bool,
    /// Leave the WAL checkpoint out of the timed total (it is still timed and reported).
    pub exclude_checkpoint: bool,
    pub order_seed: u64,
}

/// The session options as recorded in results.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SessionOptionsRecord {
    pub read_path: ReadPath,
    pub per_op_transaction: bool,
    pub write_style: WriteStyle,
    pub fsync: bool,
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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repetition {
    pub ops: u64,
    pub bytes: u64,
    /// Sum of the per-operation times.
    pub ops_ns: u64,
    pub commit_ns: u64,
    pub checkpoint_ns: u64,
    /// The measured total: ops + commit (+ checkpoint unless excluded).
    pub elapsed_ns: u64,
    /// Open + ops + commit + checkpoint + close, as kvtest's whole-run timer sees it.
    pub whole_run_ns: u64,
    pub open_ns: u64,
    pub close_ns: u64,
    pub cpu_user_ns: u64,
    pub cpu_system_ns: u64,
    pub io: IoCounters,
    pub cache: CacheAction,
    pub verified: u64,
    /// Engine counters (SQLite page cache hits/misses/writes) for the repetition.
    pub engine: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSummary {
    pub time_per_op_ns: Summary,
    pub ops_per_sec: Summary,
    pub mb_per_sec: Summary,
    pub elapsed_ns: Summary,
    pub whole_run_ns: Summary,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub name: String,
    pub target: String,
    pub plan: RunPlan,
    pub store: StoreInfo,
    pub catalog: Catalog,
    /// Human description of how writes reach the disk.
    pub write_method: Option<String>,
    pub repetitions: Vec<Repetition>,
    pub summary: RunSummary,
    pub latency: LatencySummary,
    pub space_bytes: u64,
    pub notes: Vec<String>,
    #[serde(skip)]
    pub histogram_count: u64,
}

/// The `run` command's own tables: the integrity check when asked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunTables(pub serde_json::Value);
