//! The executor: one workload on one target, repeated, measured.
//!
//! Timed: each operation (a clock read on either side of the call), the
//! closing commit, and the WAL checkpoint. Not timed: opening the target,
//! preparing statements, generating content, cache warming or eviction, and
//! verification. Each repetition opens the target afresh so SQLite's own
//! page cache starts empty every time, as in a new kvtest process.

use std::time::Instant;

use super::order::key_sequence;
use super::timer::OpTimer;
use crate::dataset::{DatasetSpec, fresh_version};
use crate::error::{Error, Result};
use crate::measure::cache::{self};
use crate::measure::cpu;
use crate::measure::io::IoCounters;
use crate::measure::latency::Latencies;
use crate::measure::stats::summarize;
use crate::progress::Progress;
pub use crate::result::run::{
    CacheMode, Operation, Repetition, RunPlan, RunResult, RunSummary, SessionOptionsRecord,
};
use crate::store::{self, Access, ReadPath, SessionOptions, StoreInfo};
use crate::target::Target;

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
        state: "warm".into(),
        method: "read every key of the run once through the server right before timing".into(),
        files: 0,
        bytes,
    })
}

/// Runs the plan and returns its measurements.
pub fn execute(plan: &RunPlan, progress: &dyn Progress) -> Result<RunResult> {
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
    progress.set_total(u64::from(plan.warmup + plan.repeat) * keys.len() as u64);

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
    let mut timer = OpTimer::with_capacity(keys.len());
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
        // One interval per operation (see workload::timer): anything that
        // is not the operation is followed by a restart.
        timer.clear();
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
                    timer.restart();
                    session.update(key, &inline_buf)?;
                    n = inline_buf.len();
                }
            }
            timer.lap();
            bytes += n as u64;
            if plan.verify && plan.operation == Operation::Read {
                spec.as_ref()
                    .expect("checked")
                    .verify(key, &verify_buf, None, &mut scratch)?;
                verified += 1;
                timer.restart();
            }
            if i % 512 == 511 {
                progress.advance(512);
                timer.restart();
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
        let (latencies, ops_ns) = timer.latencies();
        progress.advance(keys.len() as u64 % 512);
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
