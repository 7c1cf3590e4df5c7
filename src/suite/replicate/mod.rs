//! `blobbench suite replicate`: what replicating a SQLite blob database to
//! an object store with Litestream costs its writers. One WAL database is
//! written by the mixed-run executor in rounds, each round measuring two
//! arms in alternating order: alone (no Litestream process) and with
//! Litestream replicating to `s3://BUCKET/PREFIX/...`. Litestream is
//! started for each round with it and has caught up (its first sync is a
//! snapshot) before the clock starts, so the round times steady
//! replication; after the round, `litestream sync -wait` measures how far
//! the replica lagged. Every round starts from an empty WAL. At the end, a
//! last round of writes with Litestream, a restore from the replica, and a
//! check that every restored blob is exactly the source's version.

mod litestream;

use super::rounds::judge_point;
use crate::measure::estimate::paired_ratio_sequential;
use crate::measure::precision::StopReason;
use crate::result::rounds::{CaseRounds, RoundsRecord, RoundsRule};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use litestream::Bounds;
use litestream::{Litestream, Setup};

use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::progress::{Progress, Silent};
use crate::result::mixed_run::{KeyDistribution, OpKind};
use crate::result::replicate::{
    Arm, ArmRound, LitestreamInfo, LitestreamRound, ReplicateFailure, ReplicateRound,
    ReplicateTables, RestoreCheck,
};
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::store::{self, Access};
use crate::suite::scaling::{round_plan, session};
use crate::target::{S3Location, SqliteSettings, Target};
use crate::units::human_bytes;
use crate::workload::mix::Mix;
use crate::workload::mixed_run::execute;

use super::common::WorkDir;

/// The source database's name in the work folder.
const DB: &str = "replicate.db";
/// The database restored from the replica.
const RESTORED: &str = "restored.db";

/// What `suite replicate` measures, checked by the command first.
#[derive(Debug, Clone)]
pub struct ReplicateOptions {
    /// The blobs in the database.
    pub dataset: DatasetSpec,
    /// Worker threads.
    pub threads: usize,
    /// The operations (it must write).
    pub mix: Mix,
    /// How keys are drawn.
    pub keys: KeyDistribution,
    /// Each arm's time per round.
    pub round: Duration,
    /// Measured rounds (a fixed rule's count; the planned count said when
    /// the suite ends early).
    pub rounds: u32,
    /// How many measured rounds run: `rounds`, or until the with/alone
    /// ratio of writes/s meets a precision target.
    pub rule: RoundsRule,
    /// Warm-up rounds (both arms), discarded.
    pub warmup: u32,
    /// How long a writer waits for another's lock.
    pub busy_timeout: Duration,
    /// The bucket (and prefix) Litestream replicates to.
    pub replica: S3Location,
    /// The `litestream` binary.
    pub litestream: PathBuf,
    /// Litestream's sync-interval.
    pub sync_interval: Duration,
    /// The longest each wait on Litestream may take (start, sync, restore).
    pub bounds: Bounds,
    /// Folder for the databases (None: a new temporary folder).
    pub dir: Option<PathBuf>,
    /// Keep the databases afterwards.
    pub keep: bool,
}

/// `litestream version` of `binary`, or a one-line usage error naming the
/// fix: the command checks the binary before any work.
pub fn litestream_version(binary: &std::path::Path) -> Result<String> {
    Setup::version(binary)
}

/// Runs the suite.
pub fn run(options: &ReplicateOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    let version = Setup::version(&options.litestream)?;
    let work = WorkDir::new(options.dir.as_deref(), options.keep, "blobbench-replicate-")?;
    let names: Vec<String> = [
        DB,
        RESTORED,
        ".replicate.db-litestream",
        "litestream.yml",
        "litestream.log",
    ]
    .map(String::from)
    .to_vec();
    let outcome = run_in(options, &work, version, progress);
    work.remove(&names, outcome.is_err());
    work.report_kept(progress);
    outcome
}

fn run_in(
    options: &ReplicateOptions,
    work: &WorkDir,
    version: String,
    progress: &dyn Progress,
) -> Result<ResultDocument> {
    let environment = store::capture_environment(Some(&work.path));
    let spec = &options.dataset;
    // The source, its restored copy, and a WAL Litestream lets grow to
    // about 500 MB before it truncates it.
    let wal = 512u64 << 20;
    super::common::check_free_space(
        &work.path,
        super::common::layouts_bytes(spec, 0) * 2 + wal,
        ResultKind::Replicate.command(),
    )?;
    let db = work.join(DB);
    let target = Target::sqlite(
        db.clone(),
        SqliteSettings {
            journal_mode: Some("wal".into()),
            synchronous: Some("normal".into()),
            ..Default::default()
        },
    );
    progress.note(&format!(
        "blobbench suite replicate: {} blobs of {}, {} in all, in {}; litestream {version}",
        spec.count,
        human_bytes(spec.size),
        human_bytes(spec.total_bytes()),
        work.path.display()
    ));
    let (s, _) = store::create_dataset(&target, spec, progress)?;
    let writes = s.describe_writes(&session());
    drop(s);
    let prefix = replica_prefix(&options.replica);
    let setup = Setup::write(
        &options.litestream,
        &work.path,
        &db,
        &options.replica,
        &prefix,
        options.sync_interval,
        options.keep,
    )?;
    let started = Instant::now();
    let mut stopped = None;
    let (rounds, mut failure) = measure(options, &target, &setup, started, progress, &mut stopped)?;
    // Where the rounds stopped: a failure ends them where it happened.
    let (reason, half_width) = stopped.unwrap_or((StopReason::Failed, None));
    let stopping = RoundsRecord {
        rule: options.rule,
        cases: [Arm::Alone, Arm::WithLitestream]
            .iter()
            .map(|arm| CaseRounds {
                case: arm.name().to_string(),
                group: "with/alone".into(),
                rounds: rounds.len() as u64,
                stopped: reason,
                half_width,
            })
            .collect(),
    };
    // The restore needs a replica the rounds left whole: not after a failure.
    let restore = match failure {
        Some(_) => None,
        None => {
            progress.message("a last round with litestream, then a restore from the replica");
            match restore_check(options, &target, &setup, &work.join(RESTORED)) {
                Ok(check) => Some(check),
                Err((phase, e)) => {
                    failure = Some(failed(
                        "the last round and the restore",
                        phase,
                        e,
                        started,
                        progress,
                    )?);
                    None
                }
            }
        }
    };
    let replica = format!(
        "s3://{}/{prefix}{}",
        options.replica.bucket,
        options
            .replica
            .endpoint
            .as_deref()
            .map(|e| format!(" at {e}"))
            .unwrap_or_default()
    );
    let tables = ReplicateTables {
        dataset: spec.clone(),
        target: target.to_string(),
        writes,
        threads: options.threads,
        mix: options.mix.describe(),
        keys: options.keys,
        round_ns: options.round.as_nanos() as u64,
        warmup: options.warmup,
        rounds_planned: options.rounds,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        notes: notes(&replica),
        litestream: LitestreamInfo {
            version,
            replica,
            sync_interval_ns: options.sync_interval.as_nanos() as u64,
            config: setup.config_text.clone(),
            start_timeout_ns: options.bounds.start.as_nanos() as u64,
            sync_timeout_ns: options.bounds.sync.as_nanos() as u64,
            restore_timeout_ns: options.bounds.restore.as_nanos() as u64,
        },
        rounds,
        restore,
        failure,
        stopping: Some(stopping),
    };
    Ok(ResultDocument::new(
        ResultKind::Replicate,
        environment,
        Tables::Replicate(tables),
    ))
}

/// What a reader of the result must know about how it was measured.
fn notes(replica: &str) -> Vec<String> {
    vec![
        "Litestream was started for each round with it and had synced (a snapshot of the database) before the clock started; its CPU time and uploads are those of the timed round, then of the catch-up after it".into(),
        "every round (both arms) started from an empty WAL (a TRUNCATE checkpoint, untimed)".into(),
        "Litestream ran with its own defaults otherwise (its checkpoints, compaction levels and retention)".into(),
        format!("the replica stays in the bucket: {replica}"),
    ]
}

/// A prefix of its own for this run inside the bucket's prefix, so a
/// replica of another database is never continued.
fn replica_prefix(replica: &S3Location) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let own = format!("blobbench-replicate-{secs}-{}", std::process::id());
    if replica.prefix.is_empty() {
        own
    } else {
        format!("{}/{own}", replica.prefix)
    }
}

/// A failure of the suite (Litestream killed, frozen past a bound, a
/// sync refused) as the result records it, said on the way; an
/// interruption stays an error.
fn failed(
    round: &str,
    phase: &str,
    e: Error,
    started: Instant,
    progress: &dyn Progress,
) -> Result<ReplicateFailure> {
    if matches!(e, Error::Interrupted(_)) {
        return Err(e);
    }
    let f = ReplicateFailure {
        round: round.into(),
        phase: phase.into(),
        class: e.class(),
        message: e.to_string(),
        at_ns: started.elapsed().as_nanos() as u64,
    };
    progress.note(&format!(
        "{}; the rounds before are kept, the rest is not run",
        f.describe()
    ));
    Ok(f)
}

/// Every round, both arms, their order alternating; warm-ups discarded.
/// A failure ends the rounds: the rounds measured before it are returned
/// with it.
fn measure(
    options: &ReplicateOptions,
    target: &Target,
    setup: &Setup,
    started: Instant,
    progress: &dyn Progress,
    stopped: &mut Option<(StopReason, Option<f64>)>,
) -> Result<(Vec<ReplicateRound>, Option<ReplicateFailure>)> {
    let floor = u64::from(options.warmup) + options.rule.floor();
    progress.start("measuring", floor * 2);
    let mut out: Vec<ReplicateRound> = Vec::new();
    let mut measuring_since = None;
    for turn in 0.. {
        if turn == options.warmup {
            measuring_since = Some(Instant::now());
        }
        let first = if turn % 2 == 0 {
            Arm::Alone
        } else {
            Arm::WithLitestream
        };
        let label = if turn < options.warmup {
            format!("warm-up {}/{}", turn + 1, options.warmup)
        } else {
            let k = turn - options.warmup + 1;
            match options.rule {
                RoundsRule::Fixed { rounds } => format!("round {k}/{rounds}"),
                RoundsRule::Precision(t) => {
                    format!("round {k} (of {}-{})", t.min_rounds, t.max_rounds)
                }
            }
        };
        let (mut alone, mut with) = (None, None);
        let order = match first {
            Arm::Alone => [Arm::Alone, Arm::WithLitestream],
            Arm::WithLitestream => [Arm::WithLitestream, Arm::Alone],
        };
        for arm in order {
            progress.message(&format!("{label}: {}", arm.name()));
            let done = match arm {
                Arm::Alone => reset_wal(target)
                    .and_then(|()| timed(options, target))
                    .map(|a| alone = Some(a))
                    .map_err(|e| ("alone", e)),
                Arm::WithLitestream => {
                    with_litestream(options, target, setup).map(|w| with = Some(w))
                }
            };
            if let Err((phase, e)) = done {
                let f = failed(&label, phase, e, started, progress)?;
                progress.finish();
                return Ok((out, Some(f)));
            }
            progress.advance(1);
        }
        if let (true, Some(alone), Some((with, litestream))) = (turn >= options.warmup, alone, with)
        {
            out.push(ReplicateRound {
                first,
                alone,
                with,
                litestream,
            });
        }
        if turn < options.warmup {
            continue;
        }
        // The figure that decides: with / alone of writes/s, paired by round.
        let rates = |arm: fn(&ReplicateRound) -> f64| out.iter().map(arm).collect::<Vec<f64>>();
        let ratio = paired_ratio_sequential(
            &rates(|r| r.with.writes_per_s),
            &rates(|r| r.alone.writes_per_s),
        );
        let measured = out.len() as u64;
        let elapsed = measuring_since.map_or(0.0, |t| t.elapsed().as_secs_f64());
        let (stop, projected, widest) = judge_point(options.rule, measured, &[ratio], elapsed);
        if let Some(reason) = stop {
            *stopped = Some((reason, widest));
            break;
        }
        progress.set_total((u64::from(options.warmup) + projected) * 2);
    }
    progress.finish();
    Ok((out, None))
}

/// One arm with Litestream: started and caught up untimed, the timed
/// round, the catch-up after it, stopped. A failure says in which phase:
/// "start", "first sync", "timed round" (Litestream exited during it),
/// "catch-up", "stop".
fn with_litestream(
    options: &ReplicateOptions,
    target: &Target,
    setup: &Setup,
) -> Result<(ArmRound, LitestreamRound), (&'static str, Error)> {
    reset_wal(target).map_err(|e| ("start", e))?;
    let start = Instant::now();
    let mut ls = Litestream::start(setup, options.bounds).map_err(|e| ("start", e))?;
    ls.sync().map_err(|e| ("first sync", e))?;
    let start_ns = start.elapsed().as_nanos() as u64;
    // A test holds the suite here to kill or freeze Litestream mid-run.
    crate::pause::at("replicate-litestream-running");
    let (cpu0, up0) = (ls.cpu_ns(), ls.uploaded());
    let arm = timed(options, target).map_err(|e| ("timed round", e))?;
    ls.check_running().map_err(|e| ("timed round", e))?;
    let (cpu1, up1) = (ls.cpu_ns(), ls.uploaded());
    let catch_up = ls.sync().map_err(|e| ("catch-up", e))?;
    let (cpu2, up2) = (ls.cpu_ns(), ls.uploaded());
    ls.stop().map_err(|e| ("stop", e))?;
    let delta = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
    Ok((
        arm,
        LitestreamRound {
            start_ns,
            cpu_ns: cpu1.saturating_sub(cpu0),
            uploaded_bytes: delta(up0, up1),
            catch_up_ns: catch_up.as_nanos() as u64,
            catch_up_cpu_ns: cpu2.saturating_sub(cpu1),
            catch_up_bytes: delta(up1, up2),
        },
    ))
}

/// Empties the WAL (a TRUNCATE checkpoint) so every round starts alike.
fn reset_wal(target: &Target) -> Result<()> {
    let mut s = store::open(target, Access::ReadWrite)?;
    let mut session = s.session(session())?;
    session.checkpoint()
}

/// The `-wal` file of the database.
fn wal_path(target: &Target) -> PathBuf {
    let mut p = target.path().as_os_str().to_owned();
    p.push("-wal");
    PathBuf::from(p)
}

/// One timed arm: a mixed run of one round's length, every read
/// checked, the WAL's size sampled meanwhile.
fn timed(options: &ReplicateOptions, target: &Target) -> Result<ArmRound> {
    let plan = round_plan(
        target,
        (options.threads, &options.mix),
        options.keys,
        options.round,
        options.busy_timeout,
    );
    let wal = wal_path(target);
    let size = || std::fs::metadata(&wal).map_or(0, |m| m.len());
    let done = AtomicBool::new(false);
    let peak = AtomicU64::new(0);
    let t = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(size(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let t = execute(&plan, &Silent)
            .and_then(crate::result::mixed_run::MixedRunTables::without_failures);
        done.store(true, Ordering::Relaxed);
        t
    })?;
    let o = t.outcomes();
    if o.wrong() > 0 {
        return Err(Error::Verify(format!(
            "{}: {} torn or stale read(s)",
            target,
            o.wrong()
        )));
    }
    let writes: Vec<_> = t
        .kinds
        .iter()
        .filter(|k| matches!(k.kind, Some(OpKind::Update | OpKind::ReadModifyWrite)))
        .collect();
    let latencies = crate::measure::latency::Latencies::merged(
        writes
            .iter()
            .filter_map(|k| k.histogram.decode().ok())
            .collect::<Vec<_>>()
            .iter(),
    );
    let summary = latencies.summary();
    let count: u64 = writes.iter().map(|k| k.ops).sum();
    let end = size();
    Ok(ArmRound {
        writes_per_s: count as f64 / (t.elapsed_ns as f64 / 1e9).max(1e-9),
        writes: count,
        written_bytes: writes.iter().map(|k| k.bytes).sum(),
        p50_ns: summary.p50_ns,
        p99_ns: summary.p99_ns,
        busy: writes.iter().map(|k| k.outcomes.busy).sum(),
        wal_peak_bytes: peak.load(Ordering::Relaxed).max(end),
        wal_end_bytes: end,
    })
}

/// A last round of writes with Litestream, the replica caught up, restored
/// to `out`, and every restored blob checked against the source's version.
/// A failure says in which phase: "start", "first sync", "timed round",
/// "catch-up", "stop", "restore", "restore check".
fn restore_check(
    options: &ReplicateOptions,
    target: &Target,
    setup: &Setup,
    out: &std::path::Path,
) -> Result<RestoreCheck, (&'static str, Error)> {
    reset_wal(target).map_err(|e| ("start", e))?;
    let mut ls = Litestream::start(setup, options.bounds).map_err(|e| ("start", e))?;
    ls.sync().map_err(|e| ("first sync", e))?;
    let last = timed(options, target).map_err(|e| ("timed round", e))?;
    ls.check_running().map_err(|e| ("timed round", e))?;
    let catch_up = ls.sync().map_err(|e| ("catch-up", e))?;
    ls.stop().map_err(|e| ("stop", e))?;
    store::claim_new(out).map_err(|e| ("restore", e))?;
    let restore = setup
        .restore(out, options.bounds.restore)
        .map_err(|e| ("restore", e))?;
    let check = || -> Result<RestoreCheck> {
        let source = versions(target)?;
        let restored = Target::sqlite(out.to_path_buf(), SqliteSettings::default());
        let mut check = RestoreCheck {
            writes: last.writes,
            catch_up_ns: catch_up.as_nanos() as u64,
            restore_ns: restore.as_nanos() as u64,
            restored_bytes: std::fs::metadata(out).map_or(0, |m| m.len()),
            blobs: source.versions.len() as u64,
            matching: 0,
            first_mismatch: None,
            integrity: String::new(),
        };
        compare_restored(&restored, &source, &mut check)?;
        Ok(check)
    };
    check().map_err(|e| ("restore check", e))
}

/// Every blob's version in a database, checked against its dataset spec.
struct Versions {
    spec: DatasetSpec,
    first_key: u64,
    versions: Vec<u64>,
}

fn versions(target: &Target) -> Result<Versions> {
    let mut s = store::open(target, Access::ReadOnly)?;
    let catalog = s.catalog()?;
    let spec = catalog
        .manifest
        .and_then(|m| m.spec)
        .ok_or_else(|| Error::Verify(format!("{target} lost its dataset manifest")))?;
    let mut versions = Vec::with_capacity(catalog.count as usize);
    s.scan(&mut |key, data| {
        versions.push(spec.verify(key, data, None)?);
        Ok(())
    })?;
    Ok(Versions {
        spec,
        first_key: catalog.first_key,
        versions,
    })
}

/// Counts restored blobs that are exactly the source's version; notes the
/// first that is not, and SQLite's integrity check of the restored file.
fn compare_restored(restored: &Target, source: &Versions, check: &mut RestoreCheck) -> Result<()> {
    let mut s = store::open(restored, Access::ReadOnly)?;
    check.integrity = s.integrity_check()?.unwrap_or_else(|| "-".into());
    let catalog = s.catalog()?;
    if catalog.count != check.blobs {
        check.first_mismatch = Some(format!(
            "the restore holds {} blobs, the source {}",
            catalog.count, check.blobs
        ));
    }
    let mut matching = 0;
    let mut first = None;
    s.scan(&mut |key, data| {
        let want = key
            .checked_sub(source.first_key)
            .and_then(|i| source.versions.get(i as usize).copied());
        match source.spec.verify(key, data, want) {
            Ok(_) if want.is_some() => matching += 1,
            Ok(_) => {
                first.get_or_insert_with(|| format!("key {key}: not in the source"));
            }
            Err(e) => {
                first.get_or_insert_with(|| e.to_string());
            }
        }
        Ok(())
    })?;
    check.matching = matching;
    if check.first_mismatch.is_none() {
        check.first_mismatch = first;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(blobs: u64) -> RestoreCheck {
        RestoreCheck {
            writes: 0,
            catch_up_ns: 0,
            restore_ns: 0,
            restored_bytes: 0,
            blobs,
            matching: 0,
            first_mismatch: None,
            integrity: String::new(),
        }
    }

    #[test]
    fn a_restore_matches_only_when_every_blob_is_the_sources_version() {
        let dir = tempfile::tempdir().unwrap();
        let wal = || SqliteSettings {
            journal_mode: Some("wal".into()),
            ..Default::default()
        };
        let source = Target::sqlite(dir.path().join("a.db"), wal());
        let spec = DatasetSpec::fixed(5, 1000, 7);
        store::create_dataset(&source, &spec, &Silent).unwrap();
        reset_wal(&source).unwrap();
        let copy = dir.path().join("b.db");
        std::fs::copy(dir.path().join("a.db"), &copy).unwrap();
        let copy = Target::sqlite(copy, SqliteSettings::default());
        // The copy equals the source: every blob matches.
        let v = versions(&source).unwrap();
        let mut c = check(5);
        compare_restored(&copy, &v, &mut c).unwrap();
        assert_eq!((c.matching, c.first_mismatch.as_deref()), (5, None));
        assert_eq!(c.integrity, "ok");
        // A write the copy lacks: a legal blob, but not the source's version.
        let mut buf = Vec::new();
        spec.fill(3, 99, &mut buf);
        {
            let mut s = store::open(&source, Access::ReadWrite).unwrap();
            let mut session = s.session(session()).unwrap();
            session.update(3, &buf).unwrap();
        }
        let v = versions(&source).unwrap();
        let mut c = check(5);
        compare_restored(&copy, &v, &mut c).unwrap();
        assert_eq!(c.matching, 4);
        let why = c.first_mismatch.unwrap();
        assert!(
            why.contains("key 3") && why.contains("expected 99"),
            "{why}"
        );
    }

    #[test]
    fn each_run_replicates_under_a_prefix_of_its_own() {
        let mut loc = S3Location {
            bucket: "b".into(),
            prefix: String::new(),
            endpoint: None,
            region: None,
            part_size: crate::target::S3_DEFAULT_PART_SIZE,
            topology: None,
            waits: Default::default(),
            display: PathBuf::from("s3://b"),
        };
        assert!(replica_prefix(&loc).starts_with("blobbench-replicate-"));
        loc.prefix = "a/b".into();
        let p = replica_prefix(&loc);
        assert!(p.starts_with("a/b/blobbench-replicate-"), "{p}");
        assert!(p.ends_with(&format!("-{}", std::process::id())), "{p}");
    }
}
