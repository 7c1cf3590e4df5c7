//! The executor: one workload on one target, repeated, measured.
//!
//! Timed: each operation (a clock read on either side of the call), the
//! closing commit, and the WAL checkpoint. Not timed: opening the target,
//! preparing statements, generating content, cache warming or eviction, and
//! verification. Each repetition opens the target afresh so SQLite's own
//! page cache starts empty every time, as in a new kvtest process.

use std::time::Instant;

use indicatif::ProgressBar;
use serde::Serialize;

use super::order::{KeyOrder, key_sequence};
use crate::dataset::{DatasetSpec, fresh_version};
use crate::error::{Error, Result};
use crate::measure::cache::{self, CacheAction};
use crate::measure::cpu;
use crate::measure::latency::{Latencies, LatencySummary};
use crate::measure::stats::{Summary, summarize};
use crate::store::{self, Access, Catalog, ReadPath, SessionOptions, StoreInfo};
use crate::target::Target;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    Read,
    Update,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    Warm,
    Cold,
}

#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SessionOptionsRecord {
    pub read_path: ReadPath,
    pub per_op_transaction: bool,
    pub write_style: crate::store::WriteStyle,
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

#[derive(Debug, Clone, Serialize, Default)]
pub struct IoCounters {
    pub rchar: u64,
    pub wchar: u64,
    pub syscr: u64,
    pub syscw: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl IoCounters {
    fn now() -> IoCounters {
        let text = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
        let mut c = IoCounters::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v: u64 = v.trim().parse().unwrap_or(0);
            match k {
                "rchar" => c.rchar = v,
                "wchar" => c.wchar = v,
                "syscr" => c.syscr = v,
                "syscw" => c.syscw = v,
                "read_bytes" => c.read_bytes = v,
                "write_bytes" => c.write_bytes = v,
                _ => {}
            }
        }
        c
    }

    fn since(&self, s: &IoCounters) -> IoCounters {
        IoCounters {
            rchar: self.rchar.saturating_sub(s.rchar),
            wchar: self.wchar.saturating_sub(s.wchar),
            syscr: self.syscr.saturating_sub(s.syscr),
            syscw: self.syscw.saturating_sub(s.syscw),
            read_bytes: self.read_bytes.saturating_sub(s.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(s.write_bytes),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
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

#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub time_per_op_ns: Summary,
    pub ops_per_sec: Summary,
    pub mb_per_sec: Summary,
    pub elapsed_ns: Summary,
    pub whole_run_ns: Summary,
}

#[derive(Debug, Clone, Serialize)]
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

fn ns(start: Instant) -> u64 {
    start.elapsed().as_nanos() as u64
}

/// Content for the updates of one repetition, generated before timing.
enum Contents {
    /// All blobs in one buffer: offsets[i]..offsets[i+1] is key i's blob.
    Pregenerated { data: Vec<u8>, offsets: Vec<usize> },
    /// Too large to hold: generated between operations, outside the timers.
    Inline,
}

const PREGENERATE_LIMIT: u64 = 512 << 20;

/// A server caches what it was last asked for: read every key of the run
/// once, untimed, right before timing.
fn warm_server(plan: &RunPlan, keys: &[u64]) -> Result<cache::CacheAction> {
    let mut store = store::open(&plan.target.for_inspection(), Access::ReadOnly)?;
    let mut session = store.session(SessionOptions::default())?;
    let mut bytes = 0u64;
    let mut unique: Vec<u64> = keys.to_vec();
    unique.sort_unstable();
    unique.dedup();
    session.begin()?;
    for &k in &unique {
        session.read(k, &mut |d| bytes += d.len() as u64)?;
    }
    session.commit()?;
    Ok(cache::CacheAction {
        state: "warm",
        method: "read every key of the run once through the server right before timing".into(),
        files: 0,
        bytes,
    })
}

/// Runs the plan and returns its measurements.
pub fn execute(plan: &RunPlan, progress: Option<&ProgressBar>) -> Result<RunResult> {
    let access = if plan.operation == Operation::Read {
        Access::ReadOnly
    } else {
        Access::ReadWrite
    };
    let options: SessionOptions = plan.session.into();
    let mut notes = Vec::new();

    // Discovery, outside any timing: key range, files, settings.
    let (catalog, files, info) = {
        let mut s = store::open(&plan.target, access)?;
        if plan.operation == Operation::Update && !s.can_modify() {
            return Err(Error::usage(format!(
                "{}: this store cannot update rows (MySQL's ARCHIVE engine only inserts and reads); \
use engine=innodb, myisam or aria for --update",
                plan.target
            )));
        }
        let c = s.catalog()?;
        (c, s.files()?, s.info())
    };
    if plan.target.is_server() && plan.cache == CacheMode::Cold {
        return Err(Error::usage(format!(
            "--cold evicts local files from the page cache; {} is a server with its own cache (restart it to start cold)",
            plan.target
        )));
    }
    let last = match plan.max_id {
        Some(m) if m < catalog.first_key => {
            return Err(Error::usage(format!(
                "--max-id {m} is below the dataset's first key {}",
                catalog.first_key
            )));
        }
        Some(m) if m > catalog.last_key => {
            return Err(Error::usage(format!(
                "--max-id {m} is beyond the dataset's last key {} ({}); use --max-id {} or less",
                catalog.last_key, plan.target, catalog.last_key
            )));
        }
        Some(m) => m,
        None => catalog.last_key,
    };
    let span = last - catalog.first_key + 1;
    let count = plan.count.unwrap_or(span);
    if count > span {
        return Err(Error::usage(format!(
            "--count {count} is beyond the dataset: {} holds {span} keys ({}..={last}); use --count {span} or less, or --repeat to do more",
            plan.target, catalog.first_key
        )));
    }
    if let Some(s) = plan.start
        && (s < catalog.first_key || s > last)
    {
        return Err(Error::usage(format!(
            "--start {s} is outside the dataset's keys {}..={last}",
            catalog.first_key
        )));
    }
    let spec: Option<DatasetSpec> = catalog.manifest.as_ref().and_then(|m| m.spec.clone());
    if plan.verify && spec.is_none() {
        return Err(Error::usage(format!(
            "--verify needs a dataset made by blobbench init: {} has no manifest (kvtest content is random and cannot be recomputed)",
            plan.target
        )));
    }
    let keys = key_sequence(
        plan.order,
        catalog.first_key,
        last,
        count,
        plan.start,
        plan.order_seed,
    );
    if let Some(p) = progress {
        p.set_length(u64::from(plan.warmup + plan.repeat) * keys.len() as u64);
    }

    // Sizes for updates of foreign datasets: read each blob's length once, untimed.
    let foreign_sizes: Option<Vec<usize>> = if plan.operation == Operation::Update && spec.is_none()
    {
        let mut s = store::open(&plan.target.for_inspection(), Access::ReadOnly)?;
        let mut session = s.session(SessionOptions {
            read_path: ReadPath::BlobApi,
            ..options
        })?;
        let mut sizes = Vec::with_capacity(keys.len());
        for &k in &keys {
            let mut n = 0;
            session.read(k, &mut |d| n = d.len())?;
            sizes.push(n);
        }
        notes.push(
            "dataset has no manifest: update content is random bytes of each blob's current size"
                .into(),
        );
        Some(sizes)
    } else {
        None
    };

    let mut all = Latencies::new();
    let mut reps = Vec::new();
    let mut last_update: Option<(u64, Vec<u64>)> = None;
    let mut scratch = Vec::new();
    let mut verify_buf: Vec<u8> = Vec::new();
    let clock = quanta::Clock::new();
    let mut ticks: Vec<u64> = Vec::with_capacity(keys.len());
    let total_iterations = plan.warmup + plan.repeat;
    for iteration in 0..total_iterations {
        let measured = iteration >= plan.warmup;
        let version = fresh_version();
        let contents = match plan.operation {
            Operation::Read => None,
            Operation::Update => Some(generate(
                &keys,
                spec.as_ref(),
                foreign_sizes.as_deref(),
                version,
            )),
        };

        let cache_action = match plan.cache {
            CacheMode::Warm if plan.target.is_server() => warm_server(plan, &keys)?,
            CacheMode::Warm => cache::warm(&files)?,
            CacheMode::Cold => cache::evict(&files)?,
        };

        let whole = Instant::now();
        let t = Instant::now();
        let mut store = store::open(&plan.target, access)?;
        let mut session = store.session(options)?;
        let open_ns = ns(t);

        let io0 = IoCounters::now();
        let cpu0 = cpu::now();
        let mut bytes = 0u64;
        let mut verified = 0u64;
        let t = Instant::now();
        session.begin()?;
        let begin_ns = ns(t);
        let mut inline_buf = Vec::new();
        // Back-to-back timestamps: one clock read per operation (the TSC
        // where it is invariant, ~10 ns, else the OS clock), each op's time
        // running from the previous op's end. Anything that is not the
        // operation (generation, verification, progress drawing) is followed
        // by a fresh timestamp so it stays outside the timed intervals. Raw
        // ticks go into a preallocated vector; scaling to ns and the HDR
        // histogram come after the loop, outside the timed region.
        ticks.clear();
        let mut t_prev = clock.raw();
        for (i, &key) in keys.iter().enumerate() {
            let mut n = 0usize;
            match (&contents, plan.operation) {
                (_, Operation::Read) => {
                    let verify = plan.verify;
                    let vb = &mut verify_buf;
                    session.read(key, &mut |d| {
                        n = d.len();
                        if verify {
                            vb.clear();
                            vb.extend_from_slice(d);
                        }
                    })?;
                }
                (Some(Contents::Pregenerated { data, offsets }), Operation::Update) => {
                    let blob = &data[offsets[i]..offsets[i + 1]];
                    session.update(key, blob)?;
                    n = blob.len();
                }
                (_, Operation::Update) => {
                    fill_one(
                        key,
                        i,
                        spec.as_ref(),
                        foreign_sizes.as_deref(),
                        version,
                        &mut inline_buf,
                    );
                    t_prev = clock.raw();
                    session.update(key, &inline_buf)?;
                    n = inline_buf.len();
                }
            }
            let now = clock.raw();
            ticks.push(now.wrapping_sub(t_prev));
            t_prev = now;
            bytes += n as u64;
            if plan.verify && plan.operation == Operation::Read {
                spec.as_ref()
                    .expect("checked")
                    .verify(key, &verify_buf, None, &mut scratch)?;
                verified += 1;
                t_prev = clock.raw();
            }
            if let Some(p) = progress
                && i % 512 == 511
            {
                p.inc(512);
                t_prev = clock.raw();
            }
        }
        let t = Instant::now();
        session.commit()?;
        let commit_ns = ns(t) + begin_ns;
        let t = Instant::now();
        session.checkpoint()?;
        let checkpoint_ns = ns(t);
        let cpu_used = cpu::now().since(cpu0);
        let io = IoCounters::now().since(&io0);
        let t = Instant::now();
        drop(session);
        let engine = store.engine_stats();
        drop(store);
        let close_ns = ns(t);
        let whole_run_ns = ns(whole);
        let mut latencies = Latencies::new();
        let mut ops_ns = 0u64;
        for &d in &ticks {
            let elapsed = clock.delta_as_nanos(0, d);
            latencies.record(elapsed);
            ops_ns += elapsed;
        }
        if let Some(p) = progress {
            p.inc(keys.len() as u64 % 512);
        }
        if plan.operation == Operation::Update {
            last_update = Some((version, keys.clone()));
        }
        if !measured {
            continue;
        }
        let elapsed_ns = ops_ns
            + commit_ns
            + if plan.exclude_checkpoint {
                0
            } else {
                checkpoint_ns
            };
        all.merge(&latencies);
        reps.push(Repetition {
            ops: keys.len() as u64,
            bytes,
            ops_ns,
            commit_ns,
            checkpoint_ns,
            elapsed_ns,
            whole_run_ns,
            open_ns,
            close_ns,
            cpu_user_ns: cpu_used.user_ns,
            cpu_system_ns: cpu_used.system_ns,
            io,
            cache: cache_action,
            verified,
            engine,
        });
    }

    if plan.verify
        && let (Some((version, keys)), Some(spec)) = (&last_update, &spec)
    {
        let mut s = store::open(&plan.target.for_inspection(), Access::ReadOnly)?;
        let mut session = s.session(SessionOptions {
            read_path: ReadPath::Sql,
            per_op_transaction: false,
            ..options
        })?;
        let mut result = Ok(0);
        for &k in keys {
            session.read(k, &mut |d| {
                if result.is_ok() {
                    result = spec.verify(k, d, Some(*version), &mut scratch);
                }
            })?;
            result.as_ref().map_err(|e| Error::Verify(e.to_string()))?;
        }
        if let Some(r) = reps.last_mut() {
            r.verified = keys.len() as u64;
        }
        notes.push(format!(
            "verified {} updated blobs read back after the run",
            keys.len()
        ));
    }

    let space_bytes = store::open(&plan.target.for_inspection(), Access::ReadOnly)?.space_used()?;
    let write_method = (plan.operation == Operation::Update).then(|| describe_writes(plan, &info));
    let per_op: Vec<f64> = reps
        .iter()
        .map(|r| r.elapsed_ns as f64 / r.ops as f64)
        .collect();
    let ops_s: Vec<f64> = reps
        .iter()
        .map(|r| r.ops as f64 / (r.elapsed_ns as f64 / 1e9))
        .collect();
    let mb_s: Vec<f64> = reps
        .iter()
        .map(|r| r.bytes as f64 / 1e6 / (r.elapsed_ns as f64 / 1e9))
        .collect();
    let elapsed: Vec<f64> = reps.iter().map(|r| r.elapsed_ns as f64).collect();
    let whole: Vec<f64> = reps.iter().map(|r| r.whole_run_ns as f64).collect();
    Ok(RunResult {
        name: plan.name.clone(),
        target: plan.target.to_string(),
        plan: plan.clone(),
        store: info,
        catalog,
        write_method,
        summary: RunSummary {
            time_per_op_ns: summarize(&per_op),
            ops_per_sec: summarize(&ops_s),
            mb_per_sec: summarize(&mb_s),
            elapsed_ns: summarize(&elapsed),
            whole_run_ns: summarize(&whole),
        },
        latency: all.summary(),
        histogram_count: all.count(),
        repetitions: reps,
        space_bytes,
        notes,
    })
}

fn describe_writes(plan: &RunPlan, info: &StoreInfo) -> String {
    let s = &plan.session;
    if plan.target.is_files() || matches!(plan.target, Target::SqliteExt { .. }) {
        let mut d = s.write_style.describe(s.fsync).to_string();
        if matches!(plan.target, Target::SqliteExt { .. }) {
            d = format!("file {d} after a name lookup in the database");
        }
        return d;
    }
    let get = |k: &str| {
        info.settings
            .get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string()
    };
    format!(
        "SQLite {} journal_mode={} synchronous={}, {}",
        if s.read_path == ReadPath::BlobApi {
            "blob-api write in place,"
        } else {
            "UPDATE,"
        },
        get("journal_mode"),
        get("synchronous"),
        if s.per_op_transaction {
            "one transaction per write"
        } else {
            "one transaction for all writes"
        }
    )
}

fn fill_one(
    key: u64,
    i: usize,
    spec: Option<&DatasetSpec>,
    sizes: Option<&[usize]>,
    version: u64,
    buf: &mut Vec<u8>,
) {
    match (spec, sizes) {
        (Some(spec), _) => spec.fill(key, version, buf),
        (None, Some(sizes)) => {
            let stand_in = DatasetSpec {
                first_key: key,
                count: 1,
                size: sizes[i] as u64,
                distribution: crate::dataset::SizeDistribution::Fixed,
                seed: version,
            };
            stand_in.fill(key, version, buf);
        }
        (None, None) => buf.clear(),
    }
}

fn generate(
    keys: &[u64],
    spec: Option<&DatasetSpec>,
    sizes: Option<&[usize]>,
    version: u64,
) -> Contents {
    let total: u64 = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| match (spec, sizes) {
            (Some(s), _) => s.size_of(k) as u64,
            (None, Some(z)) => z[i] as u64,
            _ => 0,
        })
        .sum();
    if total > PREGENERATE_LIMIT {
        return Contents::Inline;
    }
    let mut data = Vec::with_capacity(total as usize);
    let mut offsets = Vec::with_capacity(keys.len() + 1);
    let mut buf = Vec::new();
    offsets.push(0);
    for (i, &k) in keys.iter().enumerate() {
        fill_one(k, i, spec, sizes, version, &mut buf);
        data.extend_from_slice(&buf);
        offsets.push(data.len());
    }
    Contents::Pregenerated { data, offsets }
}
