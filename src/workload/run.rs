//! The executor: one workload on one target, repeated, measured.
//!
//! Timed: each operation (a clock read on either side of the call), the
//! closing commit, and the WAL checkpoint. Not timed: opening the target,
//! preparing statements, generating content, cache warming or eviction, and
//! verification. Each repetition opens the target afresh so SQLite's own
//! page cache starts empty every time, as in a new kvtest process.
//!
//! [`execute`] runs named steps in order: [`discover`] (what the target
//! holds and can do), [`choose_keys`] (validate the plan against it),
//! [`foreign_sizes`], [`begin_updates`] (an update run marks the dataset's
//! ledger of acknowledged versions), then per repetition [`generate`]
//! (contents), [`prepare_cache`] and [`run_repetition`] (the timed loop),
//! then [`record_updates`] (into the ledger), [`verify_after`] and
//! [`summarize`].

use std::time::Instant;

use super::order::key_sequence;
use super::timer::OpTimer;
use crate::dataset::{Allowed, DatasetSpec, Ledger, fresh_version};
use crate::error::{Error, Result};
use crate::measure::cache::{self, CacheAction, Eviction};
use crate::measure::cpu;
use crate::measure::io::IoCounters;
use crate::measure::latency::Latencies;
use crate::measure::stats::summarize as stats;
use crate::progress::Progress;
use crate::result::faults::Failures;
use crate::result::run::InjectedExtra;
pub use crate::result::run::{
    CacheMode, Operation, Repetition, RunPlan, RunResult, RunSummary, SessionOptionsRecord, Startup,
};
use crate::store::{self, Access, CacheControl, Catalog, ReadPath, SessionOptions, StoreInfo};
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

/// What the target holds and can do, found before anything is timed.
struct Discovery {
    catalog: Catalog,
    cache: CacheControl,
    info: StoreInfo,
    /// How updates reach the disk, for update runs.
    write_method: Option<String>,
    /// A checked read run: the dataset's ledger, or why it is not known.
    ledger: Option<store::ledger::Expectation>,
}

/// The plan checked against the dataset: the keys to visit and, for a
/// dataset blobbench made, the spec that recomputes its contents.
struct Job<'a> {
    plan: &'a RunPlan,
    access: Access,
    options: SessionOptions,
    keys: Vec<u64>,
    spec: Option<DatasetSpec>,
    /// Each key's current size, for updates of a dataset without a manifest.
    foreign_sizes: Option<Vec<usize>>,
    /// Operations failed and tried in the repetitions before this one
    /// (for `--max-errors`).
    before: std::cell::Cell<(u64, u64)>,
    /// The versions a checked read must find (the dataset's ledger of
    /// acknowledged writes), when it is known.
    ledger: Option<Ledger>,
}

impl Job<'_> {
    /// Whether `failed` more failures of `tried` more operations spend the
    /// plan's `--max-errors`; the reason to record when they do.
    fn budget_spent(&self, failed: u64, tried: u64) -> Option<String> {
        let budget = self.plan.max_errors?;
        let (f, t) = self.before.get();
        let (failed, tried) = (f + failed, (t + tried).max(f + failed));
        budget.reason(failed, tried, "operations")
    }
}

/// One repetition's measurements and its per-operation latencies.
struct Measured {
    repetition: Repetition,
    latencies: Latencies,
    /// Operations that failed, by class.
    failures: Failures,
    /// How long each failed operation took until it failed.
    failed: Latencies,
    /// Why the run stops after this repetition (`--max-errors`).
    stopped_early: Option<String>,
    /// When its first timed operation began (None when none began).
    first_op: Option<Instant>,
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
    let started = Instant::now();
    let (mut found, keys, spec) = discover(plan, access, &options)?;
    progress.set_total(
        (u64::from(plan.warmup) + u64::from(plan.repeat)).saturating_mul(keys.len() as u64),
    );
    let mut job = Job {
        plan,
        access,
        options,
        keys,
        spec,
        foreign_sizes: None,
        before: Default::default(),
        ledger: None,
    };
    match found.ledger.take() {
        Some(Ok(ledger)) => job.ledger = Some(ledger),
        Some(Err(why)) => notes.push(format!(
            "reads were checked for whole versions only, not for the last acknowledged ones: {why}"
        )),
        None => {}
    }
    job.foreign_sizes = foreign_sizes(&job, &mut notes)?;
    let claim = begin_updates(&job, &found)?;
    let repeated = job_repetitions(&job, &found, started, progress);
    if let Some(claim) = claim {
        let recorded = store::open(&plan.target, Access::ReadWrite).and_then(|mut s| {
            claim.end(s.as_mut(), |ledger| record_updates(&job, &repeated, ledger))
        });
        notes.extend(recorded.err().map(|e| {
            format!("the run's writes could not be recorded in the dataset's ledger ({e}): later checks find it unknown")
        }));
    }
    let Repeated {
        all,
        mut reps,
        last_update,
        failures,
        failed,
        stopped_early,
        startup,
    } = repeated?;
    match last_update {
        Some(_) if !failures.is_empty() => notes.push(format!(
            "updated blobs were not read back after the run: {} operation(s) failed, so which blobs hold the last repetition's content is not known",
            failures.total()
        )),
        Some(version) => verify_after(&job, version, &mut reps, &mut notes)?,
        None => {}
    }
    let space_bytes = store::inspect(&plan.target)?.space_used()?;
    let mut r = summarize(plan, found, reps, &all, space_bytes, notes);
    if !failures.is_empty() {
        r.failed_latency = Some(failed.summary());
        r.latency_with_failures = Some(Latencies::merged([&all, &failed]).summary());
    }
    r.failures = failures;
    r.stopped_early = stopped_early;
    r.startup = startup;
    Ok(r)
}

/// What the repetitions measured, and the version the last update wrote.
struct Repeated {
    all: Latencies,
    reps: Vec<Repetition>,
    last_update: Option<u64>,
    failures: Failures,
    failed: Latencies,
    stopped_early: Option<String>,
    startup: Option<Startup>,
}

/// An update run of a dataset blobbench made marks its ledger before the
/// first write (see `store::ledger`).
fn begin_updates(job: &Job, found: &Discovery) -> Result<Option<store::ledger::LedgerClaim>> {
    match &found.catalog.manifest {
        Some(m) if m.spec.is_some() && job.plan.operation == Operation::Update => {
            let mut s = store::open(&job.plan.target, Access::ReadWrite)?;
            Ok(Some(store::ledger::begin_writes(s.as_mut(), m)?))
        }
        _ => Ok(None),
    }
}

/// Records in the ledger what an update run left: every key it wrote holds
/// the last repetition's version when every operation succeeded; after a
/// failure or an interruption, which repetition's version each holds is
/// not known, so any whole version is.
fn record_updates(job: &Job, repeated: &Result<Repeated>, ledger: &mut Ledger) {
    let allowed = match repeated {
        Ok(r) if r.failures.is_empty() && r.stopped_early.is_none() => match r.last_update {
            Some(v) => Allowed::OneOf(vec![v]),
            None => return,
        },
        _ => Allowed::Any,
    };
    for &key in &job.keys {
        ledger.set(key, allowed.clone());
    }
}

/// The warm-up and measured repetitions, each with fresh content for an
/// update.
fn job_repetitions(
    job: &Job,
    found: &Discovery,
    started: Instant,
    progress: &dyn Progress,
) -> Result<Repeated> {
    let plan = job.plan;
    // Said before the first repetition, once the dataset is known good:
    // a result `compare` could never judge.
    if let Some(why) =
        crate::measure::significance::never_judged(plan.repeat as usize, 1, "--repeat")
    {
        progress.note(&format!("note: {why}"));
    }
    let mut all = Latencies::new();
    let mut reps = Vec::new();
    let mut last_update: Option<u64> = None;
    let mut timer = OpTimer::with_capacity(job.keys.len());
    let (mut failures, mut failed) = (Failures::default(), Latencies::new());
    let mut stopped_early = None;
    let mut startup = None;
    for iteration in 0..plan.warmup.saturating_add(plan.repeat) {
        crate::interrupt::check()?;
        let version = fresh_version();
        let contents = (plan.operation == Operation::Update).then(|| {
            generate(
                &job.keys,
                job.spec.as_ref(),
                job.foreign_sizes.as_deref(),
                version,
            )
        });
        let t = Instant::now();
        let cache = prepare_cache(plan, &found.cache, &job.keys)?;
        let cache_ns = ns(t);
        let m = run_repetition(job, contents.as_ref(), version, cache, &mut timer, progress)?;
        if plan.operation == Operation::Update {
            last_update = Some(version);
        }
        if startup.is_none() {
            startup = m.first_op.map(|at| startup_before(at, started, cache_ns));
        }
        let (f, t) = job.before.get();
        let failed_here = m.failures.total();
        job.before
            .set((f + failed_here, t + m.repetition.ops + failed_here));
        // Warm-up repetitions' failures count too: they happened.
        failures.add(&m.failures);
        failed.merge(&m.failed);
        if iteration >= plan.warmup {
            all.merge(&m.latencies);
            reps.push(m.repetition);
        }
        if m.stopped_early.is_some() {
            stopped_early = m.stopped_early;
            break;
        }
    }
    Ok(Repeated {
        all,
        reps,
        last_update,
        failures,
        failed,
        stopped_early,
        startup,
    })
}

/// The start-up cost of a run whose first timed operation began `at`:
/// from the process's start (or, for a caller that is not the binary,
/// `run_start`), leaving out the cache preparation.
fn startup_before(at: Instant, run_start: Instant, cache_ns: u64) -> Startup {
    let (zero, from) = match crate::process::started() {
        Some(p) if p <= run_start => (p, "process start"),
        _ => (run_start, "run start"),
    };
    let before = at.saturating_duration_since(zero).as_nanos() as u64;
    Startup {
        ns: before.saturating_sub(cache_ns),
        from: from.into(),
        cache_ns,
    }
}

/// Opens the target once, untimed: its keys, the keys of one repetition
/// (and the spec that recomputes their contents), how to prepare the cache
/// for those keys, its settings, and whether it can do what the plan asks.
fn discover(
    plan: &RunPlan,
    access: Access,
    options: &SessionOptions,
) -> Result<(Discovery, Vec<u64>, Option<DatasetSpec>)> {
    let (found, keys, spec) = {
        let mut s = store::open(&plan.target, access)?;
        if plan.operation == Operation::Update {
            s.can_modify()?;
        }
        let catalog = s.catalog()?;
        let (keys, spec) = choose_keys(plan, &catalog)?;
        let mut visited = keys.clone();
        visited.sort_unstable();
        visited.dedup();
        let ledger = match &catalog.manifest {
            Some(m) if m.spec.is_some() && plan.verify && plan.operation == Operation::Read => {
                Some(store::ledger::expectation(s.as_mut(), m)?)
            }
            _ => None,
        };
        let found = Discovery {
            catalog,
            cache: s.cache_control_for(&visited)?,
            info: s.info(),
            write_method: (plan.operation == Operation::Update).then(|| s.describe_writes(options)),
            ledger,
        };
        (found, keys, spec)
    };
    if matches!(plan.cache, CacheMode::Cold | CacheMode::ColdFiles) {
        match found.cache {
            CacheControl::Files(_) => {}
            CacheControl::Server => {
                return Err(Error::usage(format!(
                    "--cold evicts local files from the page cache; {} is a server with its own cache (restart it to start cold)",
                    plan.target
                )));
            }
            CacheControl::Process => {
                return Err(Error::usage(format!(
                    "--cold evicts local files from the page cache; {} holds its data in this process's memory, with no cache to evict",
                    plan.target
                )));
            }
        }
    }
    Ok((found, keys, spec))
}

/// Checks --max-id, --count, --start and --verify against the dataset and
/// lists the keys of one repetition, in the plan's order.
fn choose_keys(plan: &RunPlan, catalog: &Catalog) -> Result<(Vec<u64>, Option<DatasetSpec>)> {
    // Keys are visited by position in first..=last: with many keys missing
    // in between, that span is not the dataset (keys 1 and 10^10 would make
    // ten billion operations on two blobs).
    catalog.check_gaps(plan.target.path())?;
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
    Ok((keys, spec))
}

/// Sizes for updates of foreign datasets: each blob's length, read once, untimed.
fn foreign_sizes(job: &Job, notes: &mut Vec<String>) -> Result<Option<Vec<usize>>> {
    if job.plan.operation != Operation::Update || job.spec.is_some() {
        return Ok(None);
    }
    let mut s = store::inspect(&job.plan.target)?;
    let mut session = s.session(SessionOptions {
        read_path: ReadPath::BlobApi,
        ..job.options
    })?;
    let mut sizes = Vec::with_capacity(job.keys.len());
    for &k in &job.keys {
        let mut n = 0;
        session.read(k, &mut |d| n = d.len())?;
        sizes.push(n);
    }
    notes.push(
        "dataset has no manifest: update content is random bytes of each blob's current size"
            .into(),
    );
    Ok(Some(sizes))
}

/// Brings the cache into the plan's state right before a repetition.
fn prepare_cache(plan: &RunPlan, control: &CacheControl, keys: &[u64]) -> Result<CacheAction> {
    match (plan.cache, control) {
        (CacheMode::Warm, CacheControl::Server) => warm_server(plan, keys),
        (CacheMode::Warm, CacheControl::Process) => Ok(CacheAction {
            state: "warm".into(),
            method: "held in this process's memory".into(),
            files: 0,
            bytes: 0,
        }),
        (CacheMode::Warm, CacheControl::Files(files)) => cache::warm(files),
        (CacheMode::Cold, CacheControl::Files(files)) => cache::evict(files, Eviction::Machine),
        (CacheMode::ColdFiles, CacheControl::Files(files)) => {
            cache::evict(files, Eviction::TargetFiles)
        }
        (CacheMode::Cold | CacheMode::ColdFiles, _) => unreachable!("refused by discover"),
    }
}

/// A server caches what it was last asked for: read every key of the run
/// once, untimed, right before timing.
fn warm_server(plan: &RunPlan, keys: &[u64]) -> Result<CacheAction> {
    let mut store = store::inspect(&plan.target)?;
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
    Ok(CacheAction {
        state: "warm".into(),
        method: "read every key of the run once through the server right before timing".into(),
        files: 0,
        bytes,
    })
}

/// Per-repetition tallies of the timed loop.
#[derive(Default)]
struct Tally {
    /// Operations that succeeded.
    done: u64,
    bytes: u64,
    verified: u64,
    /// Operations that failed, by class (the run went on).
    failures: Failures,
    /// How long each failed operation took until it failed.
    failed: Latencies,
}

impl Tally {
    /// Counts one failed operation that ran `ns`.
    fn fail(&mut self, e: &Error, ns: u64) {
        self.failures.record(e.class(), &e.to_string());
        self.failed.record(ns);
    }
}

/// A connection's share of a repetition ended early: at the key of index
/// `at`, which failed with `error` after `ns`.
struct Stopped {
    at: usize,
    error: Error,
    ns: u64,
}

/// One repetition: open, every operation timed on its own, commit and
/// checkpoint timed, close. Contents were made before; verification of
/// reads runs on the store's buffer and is left out of the intervals
/// ([`read_one`]). A failed operation is counted by class and the
/// repetition goes on from the next key in a new transaction on a new
/// connection; when no connection can be opened again, the rest of the
/// repetition's operations count as failed with that error. Only a first
/// open that fails ends the run (nothing was measured).
fn run_repetition(
    job: &Job,
    contents: Option<&Contents>,
    version: u64,
    cache: CacheAction,
    timer: &mut OpTimer,
    progress: &dyn Progress,
) -> Result<Measured> {
    let plan = job.plan;
    let whole = Instant::now();
    let t = Instant::now();
    let mut store = Some(store::open(&plan.target, job.access)?);
    let open_ns = ns(t);
    let io0 = IoCounters::now();
    let cpu0 = cpu::now();
    let mut tally = Tally::default();
    let mut times = Times::default();
    let mut engine = Default::default();
    let mut stopped_early = None;
    let mut first_op = None;
    let pass = Pass {
        job,
        contents,
        version,
        progress,
    };
    timer.clear();
    let mut from = 0;
    while from < job.keys.len() || store.is_some() {
        let mut opened = match store.take() {
            Some(s) => s,
            None => match store::open(&plan.target, job.access) {
                Ok(s) => s,
                Err(e) => {
                    // Nothing to run the rest on: every one of them failed.
                    for _ in from..job.keys.len() {
                        tally.fail(&e, 0);
                    }
                    break;
                }
            },
        };
        let connection =
            on_one_connection(&pass, opened.as_mut(), timer, from, &mut tally, &mut times);
        first_op = first_op.or(times.first_op);
        match connection {
            Ok(()) => {
                let t = Instant::now();
                engine = opened.engine_stats();
                drop(opened);
                times.close_ns = ns(t);
                break;
            }
            // A key the dataset does not hold is the user's to fix (the
            // keys asked for), not an outcome of the store.
            Err(Stopped {
                error: e @ Error::MissingKey { .. },
                ..
            }) => return Err(e),
            // A signal: the command stops (its transaction was rolled back).
            Err(Stopped {
                error: e @ Error::Interrupted(_),
                ..
            }) => return Err(e),
            Err(stopped) => {
                tally.fail(&stopped.error, stopped.ns);
                from = stopped.at + 1;
                let failed = tally.failures.total();
                stopped_early = job.budget_spent(failed, from as u64);
                if stopped_early.is_some() {
                    break;
                }
            }
        }
    }
    let cpu_used = cpu::now().since(cpu0);
    let io = IoCounters::now().since(&io0);
    let whole_run_ns = ns(whole);
    let (latencies, ops_ns) = timer.latencies();
    progress.advance(job.keys.len() as u64 % 512);
    let checkpoint_counted = if plan.exclude_checkpoint {
        0
    } else {
        times.checkpoint_ns
    };
    let failed = tally.failures.total();
    Ok(Measured {
        repetition: Repetition {
            ops: tally.done,
            bytes: tally.bytes,
            ops_ns,
            commit_ns: times.commit_ns,
            checkpoint_ns: times.checkpoint_ns,
            elapsed_ns: ops_ns + times.commit_ns + checkpoint_counted,
            whole_run_ns,
            open_ns,
            close_ns: times.close_ns,
            cpu_user_ns: cpu_used.user_ns,
            cpu_system_ns: cpu_used.system_ns,
            io,
            cache,
            verified: tally.verified,
            engine,
            failed,
            injected: plan.session.inject.map(|_| {
                let (own_ns, extra_ns) = times.injected.totals();
                InjectedExtra { own_ns, extra_ns }
            }),
        },
        latencies,
        failures: tally.failures,
        failed: tally.failed,
        stopped_early,
        first_op,
    })
}

/// What every connection of one repetition runs: the job, the content to
/// write (made before) and its version, and where progress goes.
#[derive(Clone, Copy)]
struct Pass<'a> {
    job: &'a Job<'a>,
    contents: Option<&'a Contents>,
    version: u64,
    progress: &'a dyn Progress,
}

/// The untimed-by-operation parts of a repetition, ns.
#[derive(Default)]
struct Times {
    commit_ns: u64,
    checkpoint_ns: u64,
    close_ns: u64,
    /// When the first connection's timed loop began.
    first_op: Option<Instant>,
    /// What an injection delivered, over every connection.
    injected: std::sync::Arc<store::inject::Delivered>,
}

/// The repetition's keys from index `from` on one connection, in one
/// transaction, then its commit and checkpoint; stops at the first
/// failure (the transaction rolled back, if the store still can).
fn on_one_connection(
    pass: &Pass,
    store: &mut dyn store::Store,
    timer: &mut OpTimer,
    from: usize,
    tally: &mut Tally,
    times: &mut Times,
) -> std::result::Result<(), Stopped> {
    let job = pass.job;
    let at_start = |error: Error| Stopped {
        at: from,
        error,
        ns: 0,
    };
    // A testing aid when the plan asks: a known extra cost after each
    // timed operation, inside its interval (see store::inject).
    let session = store.session(job.options).map_err(at_start)?;
    let mut session = store::inject::wrap(session, job.plan.session.inject, &times.injected);
    let t = Instant::now();
    session.begin().map_err(at_start)?;
    let begin_ns = ns(t);
    times.first_op.get_or_insert_with(Instant::now);
    timer.restart();
    if let Err(stopped) = timed_loop(pass, session.as_mut(), timer, from, tally) {
        let _ = session.rollback();
        return Err(stopped);
    }
    let last = job.keys.len().saturating_sub(1);
    let at_end = |error: Error| Stopped {
        at: last,
        error,
        ns: 0,
    };
    crate::pause::at("repetition-before-commit");
    let t = Instant::now();
    session.commit().map_err(at_end)?;
    times.commit_ns += ns(t) + begin_ns;
    crate::pause::at("repetition-after-commit");
    let t = Instant::now();
    session.checkpoint().map_err(at_end)?;
    times.checkpoint_ns = ns(t);
    Ok(())
}

/// The operations of one repetition from index `from`. One interval per
/// operation (see workload::timer): anything that is not the operation is
/// followed by a restart. A failed operation's interval is not kept: it
/// ends the loop, with how long it ran.
fn timed_loop(
    pass: &Pass,
    session: &mut dyn store::Session,
    timer: &mut OpTimer,
    from: usize,
    tally: &mut Tally,
) -> std::result::Result<(), Stopped> {
    let Pass {
        job,
        contents,
        version,
        progress,
    } = *pass;
    let plan = job.plan;
    let verify_reads = plan.verify && plan.operation == Operation::Read;
    let mut inline_buf = Vec::new();
    let spec = job.spec.as_ref();
    let mut check = |key: u64, d: &[u8]| -> Result<()> {
        let version = spec.expect("checked").verify(key, d, None)?;
        match job.ledger.as_ref().and_then(|l| l.allowed(key)) {
            Some(allowed) if !allowed.admits(version) => {
                Err(Error::Verify(allowed.lost(key, version)))
            }
            _ => Ok(()),
        }
    };
    for (i, &key) in job.keys.iter().enumerate().skip(from) {
        let done = match (contents, plan.operation) {
            (_, Operation::Read) => {
                let check: Option<&mut Check> = if verify_reads { Some(&mut check) } else { None };
                read_one(session, key, timer, check)
            }
            (Some(Contents::Pregenerated { data, offsets }), Operation::Update) => {
                let blob = &data[offsets[i]..offsets[i + 1]];
                session.update(key, blob).map(|()| blob.len())
            }
            (_, Operation::Update) => {
                fill_one(
                    key,
                    i,
                    job.spec.as_ref(),
                    job.foreign_sizes.as_deref(),
                    version,
                    &mut inline_buf,
                );
                timer.restart();
                session.update(key, &inline_buf).map(|()| inline_buf.len())
            }
        };
        // A transaction of the plan's size ends with the operation that
        // fills it, and its commit is that operation's time.
        let done = match plan.session.ops_per_transaction {
            Some(every)
                if (i as u64 + 1).is_multiple_of(every.max(1)) && i + 1 < job.keys.len() =>
            {
                done.and_then(|n| {
                    session.commit()?;
                    session.begin()?;
                    Ok(n)
                })
            }
            _ => done,
        };
        match done {
            Ok(n) => {
                timer.lap();
                tally.done += 1;
                tally.bytes += n as u64;
                tally.verified += u64::from(verify_reads);
            }
            Err(error) => {
                let ns = timer.abandon();
                return Err(Stopped { at: i, error, ns });
            }
        }
        if i % 512 == 511 {
            progress.advance(512);
            if let Err(error) = crate::interrupt::check() {
                return Err(Stopped {
                    at: i,
                    error,
                    ns: 0,
                });
            }
            timer.restart();
        }
    }
    Ok(())
}

/// A check of a blob read (--verify): its key and bytes.
type Check<'a> = dyn FnMut(u64, &[u8]) -> Result<()> + 'a;

/// One read, timed up to the caller's lap; returns the blob's length. The
/// check runs on the store's own buffer inside its callback, left out of
/// the interval by [`OpTimer::exclude`]: nothing is copied, and a checked
/// read times the same work as an unchecked one (plus two clock reads).
fn read_one(
    session: &mut dyn store::Session,
    key: u64,
    timer: &mut OpTimer,
    mut check: Option<&mut Check>,
) -> Result<usize> {
    let mut n = 0usize;
    let mut checked = Ok(());
    session.read(key, &mut |d| {
        n = d.len();
        if let Some(check) = check.as_mut() {
            checked = timer.exclude(|| check(key, d));
        }
    })?;
    checked?;
    Ok(n)
}

/// With --verify after updates: reads back every key the last repetition
/// wrote and checks it holds that repetition's content.
fn verify_after(
    job: &Job,
    version: u64,
    reps: &mut [Repetition],
    notes: &mut Vec<String>,
) -> Result<()> {
    let (true, Some(spec)) = (job.plan.verify, &job.spec) else {
        return Ok(());
    };
    let mut s = store::inspect(&job.plan.target)?;
    let mut session = s.session(SessionOptions {
        read_path: ReadPath::Sql,
        per_op_transaction: false,
        ..job.options
    })?;
    let mut result = Ok(0);
    for &k in &job.keys {
        session.read(k, &mut |d| {
            if result.is_ok() {
                result = spec.verify(k, d, Some(version));
            }
        })?;
        result.as_ref().map_err(|e| Error::Verify(e.to_string()))?;
    }
    if let Some(r) = reps.last_mut() {
        r.verified = job.keys.len() as u64;
    }
    notes.push(format!(
        "verified {} updated blobs read back after the run",
        job.keys.len()
    ));
    Ok(())
}

/// The run's record: the repetitions and their statistics.
fn summarize(
    plan: &RunPlan,
    found: Discovery,
    reps: Vec<Repetition>,
    all: &Latencies,
    space_bytes: u64,
    notes: Vec<String>,
) -> RunResult {
    let per_rep = |f: &dyn Fn(&Repetition) -> f64| -> Vec<f64> { reps.iter().map(f).collect() };
    let per_op = per_rep(&|r| r.elapsed_ns as f64 / r.ops.max(1) as f64);
    let ops_s = per_rep(&|r| r.ops as f64 / (r.elapsed_ns as f64 / 1e9));
    let mb_s = per_rep(&|r| r.bytes as f64 / 1e6 / (r.elapsed_ns as f64 / 1e9));
    let elapsed = per_rep(&|r| r.elapsed_ns as f64);
    let whole = per_rep(&|r| r.whole_run_ns as f64);
    RunResult {
        failures: Failures::default(),
        failed_latency: None,
        latency_with_failures: None,
        stopped_early: None,
        name: plan.name.clone(),
        target: plan.target.to_string(),
        plan: plan.clone(),
        store: found.info,
        catalog: found.catalog,
        write_method: found.write_method,
        summary: RunSummary {
            time_per_op_ns: stats(&per_op),
            ops_per_sec: stats(&ops_s),
            mb_per_sec: stats(&mb_s),
            elapsed_ns: stats(&elapsed),
            whole_run_ns: stats(&whole),
        },
        latency: all.summary(),
        latency_histogram: Some(all.encode()),
        histogram_count: all.count(),
        repetitions: reps,
        space_bytes,
        notes,
        startup: None,
    }
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

#[cfg(test)]
mod tests {
    //! The executor on memory datasets: what it visits, counts, verifies
    //! and refuses, without files or timing noise mattering.

    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;
    use crate::dataset::SizeDistribution;
    use crate::progress::Silent;
    use crate::result::run::KeyOrder;
    use crate::target::Target;

    /// A memory dataset of `count` blobs with distinct sizes; returns its target and spec.
    fn dataset(name: &str, count: u64) -> (Target, DatasetSpec) {
        let target = Target::parse(&format!("memory:executor-{name}")).unwrap();
        let spec = DatasetSpec {
            first_key: 1,
            count,
            size: 2000,
            distribution: SizeDistribution::Uniform { variance: 1000 },
            seed: 7,
        };
        store::create_dataset(&target, &spec, &Silent).unwrap();
        (target, spec)
    }

    fn plan(target: &Target, operation: Operation) -> RunPlan {
        RunPlan {
            name: "test".into(),
            target: target.clone(),
            operation,
            order: KeyOrder::Asc,
            count: None,
            start: None,
            max_id: None,
            session: SessionOptionsRecord {
                read_path: ReadPath::Sql,
                per_op_transaction: false,
                ops_per_transaction: None,
                write_style: crate::store::WriteStyle::Truncate,
                fsync: false,
                inject: None,
            },
            repeat: 1,
            warmup: 0,
            cache: CacheMode::Warm,
            verify: true,
            exclude_checkpoint: false,
            order_seed: 3,
            max_errors: None,
        }
    }

    fn bytes_of(spec: &DatasetSpec, keys: &[u64]) -> u64 {
        keys.iter().map(|&k| spec.size_of(k) as u64).sum()
    }

    /// Counts what the executor reports as done.
    #[derive(Default)]
    struct Counting {
        total: AtomicU64,
        done: AtomicU64,
    }

    impl Progress for Counting {
        fn start(&self, _label: &str, _total: u64) {}
        fn set_total(&self, total: u64) {
            self.total.store(total, Ordering::Relaxed);
        }
        fn message(&self, _text: &str) {}
        fn advance(&self, n: u64) {
            self.done.fetch_add(n, Ordering::Relaxed);
        }
        fn finish(&self) {}
        fn note(&self, _text: &str) {}
    }

    #[test]
    fn a_folder_run_warms_only_its_keys_and_records_its_start_up() {
        let dir = tempfile::tempdir().unwrap();
        let target = Target::parse(&format!("dir:{}", dir.path().join("d").display())).unwrap();
        let spec = DatasetSpec {
            first_key: 1,
            count: 300,
            size: 100,
            distribution: SizeDistribution::Fixed,
            seed: 7,
        };
        store::create_dataset(&target, &spec, &Silent).unwrap();
        let mut p = plan(&target, Operation::Read);
        p.count = Some(20);
        let begun = Instant::now();
        let r = execute(&p, &Counting::default()).unwrap();
        let whole = ns(begun);
        let cache = &r.repetitions[0].cache;
        // The 20 keys' files and the manifest: not the folder's 300 files.
        assert_eq!(cache.files, 21);
        assert!(
            cache.bytes > 20 * 100 && cache.bytes < 300 * 100,
            "{cache:?}"
        );
        let startup = r.startup.expect("a run records its start-up");
        // No binary marked a process start here: the clock is the run's.
        assert_eq!(startup.from, "run start");
        assert!(
            startup.ns + startup.cache_ns < whole,
            "{startup:?} vs {whole} ns"
        );
        assert!(startup.ns > 0);
    }

    #[test]
    fn reads_every_key_verified_and_counts_only_measured_repetitions() {
        let (target, spec) = dataset("read", 1200);
        let mut p = plan(&target, Operation::Read);
        p.repeat = 3;
        p.warmup = 2;
        let progress = Counting::default();
        let r = execute(&p, &progress).unwrap();
        assert_eq!(r.repetitions.len(), 3, "warm-ups are not recorded");
        assert_eq!(r.histogram_count, 3 * 1200);
        // Progress covers warm-ups too, and adds up exactly (1200 is not a multiple of 512).
        assert_eq!(progress.total.load(Ordering::Relaxed), 5 * 1200);
        assert_eq!(progress.done.load(Ordering::Relaxed), 5 * 1200);
        for rep in &r.repetitions {
            assert_eq!(rep.ops, 1200);
            assert_eq!(rep.verified, 1200);
            assert_eq!(rep.bytes, spec.total_bytes());
            assert_eq!(rep.cache.state, "warm");
            assert!(rep.elapsed_ns >= rep.ops_ns);
        }
        assert_eq!(r.catalog.source, "manifest");
        assert_eq!((r.catalog.first_key, r.catalog.last_key), (1, 1200));
        assert_eq!(r.space_bytes, spec.total_bytes());
        assert_eq!(r.store.kind, "memory");
        assert_eq!(r.write_method, None);
        assert_eq!(r.target, format!("memory:{}", target.path().display()));
    }

    #[test]
    fn visits_the_keys_of_each_order_count_and_start() {
        let (target, spec) = dataset("orders", 100);
        for order in [
            KeyOrder::Asc,
            KeyOrder::Desc,
            KeyOrder::Random,
            KeyOrder::KvtestDraws,
        ] {
            let mut p = plan(&target, Operation::Read);
            p.order = order;
            p.count = Some(30);
            p.start = Some(40);
            p.max_id = Some(90);
            let r = execute(&p, &Silent).unwrap();
            let keys = key_sequence(order, 1, 90, 30, Some(40), p.order_seed);
            assert_eq!(r.repetitions[0].ops, 30, "{order:?}");
            assert_eq!(r.repetitions[0].bytes, bytes_of(&spec, &keys), "{order:?}");
        }
    }

    #[test]
    fn updates_write_new_content_and_verify_it_after_the_run() {
        let (target, spec) = dataset("update", 50);
        let mut p = plan(&target, Operation::Update);
        p.count = Some(20);
        p.repeat = 2;
        p.warmup = 1;
        let r = execute(&p, &Silent).unwrap();
        assert_eq!(r.repetitions.len(), 2);
        assert_eq!(r.repetitions[1].verified, 20);
        assert!(
            r.notes
                .iter()
                .any(|n| n == "verified 20 updated blobs read back after the run"),
            "{:?}",
            r.notes
        );
        assert_eq!(
            r.write_method.as_deref(),
            Some("the blob's bytes replaced in this process's memory")
        );
        // Keys 1..=20 hold new content now; key 21 still the original.
        let mut s = store::open(&target, Access::ReadOnly).unwrap();
        let mut session = s.session(SessionOptions::default()).unwrap();
        let mut first = Vec::new();
        session.read(1, &mut |d| first = d.to_vec()).unwrap();
        let version = spec.verify(1, &first, None).unwrap();
        assert_ne!(version, 0, "key 1 still holds the content init wrote");
        let mut untouched = Vec::new();
        session.read(21, &mut |d| untouched = d.to_vec()).unwrap();
        spec.verify(21, &untouched, Some(0)).unwrap();
    }

    #[test]
    fn refuses_what_the_dataset_or_store_cannot_do() {
        let (target, _) = dataset("refusals", 10);
        let usage = |p: &RunPlan, needle: &str| match execute(p, &Silent) {
            Err(Error::Usage(m)) => assert!(m.contains(needle), "{m}"),
            other => panic!("{needle}: {other:?}"),
        };
        let mut p = plan(&target, Operation::Read);
        p.count = Some(11);
        usage(&p, "--count 11 is beyond the dataset");
        let mut p = plan(&target, Operation::Read);
        p.max_id = Some(11);
        usage(&p, "--max-id 11");
        let mut p = plan(&target, Operation::Read);
        p.start = Some(0);
        usage(&p, "--start 0");
        let mut p = plan(&target, Operation::Read);
        p.cache = CacheMode::Cold;
        usage(&p, "--cold");
    }

    /// The check runs while the store still holds the blob, inside the
    /// read, yet its time is left out: the read's interval plus the check's
    /// own span (read on the same clock from inside the check) fits in the
    /// span around the whole call. An exact inequality, not a bound in
    /// milliseconds that a loaded machine could break; were the check
    /// timed, the interval alone would hold its 40 ms sleep.
    #[test]
    fn a_checked_read_leaves_the_check_out_of_its_interval() {
        let (target, spec) = dataset("check", 3);
        let mut s = store::open(&target, Access::ReadOnly).unwrap();
        let mut session = s.session(SessionOptions::default()).unwrap();
        let clock = quanta::Clock::new();
        let mut timer = OpTimer::with_capacity(2);
        let mut seen = Vec::new();
        let mut checking = 0u64;
        let mut slow_check = |key: u64, d: &[u8]| -> Result<()> {
            let start = clock.raw();
            std::thread::sleep(std::time::Duration::from_millis(40));
            seen.push((key, d.to_vec()));
            checking += clock.delta_as_nanos(start, clock.raw());
            Ok(())
        };
        let before = clock.raw();
        timer.clear();
        let n = read_one(session.as_mut(), 2, &mut timer, Some(&mut slow_check)).unwrap();
        timer.lap();
        let around = clock.delta_as_nanos(before, clock.raw());
        assert_eq!(n, spec.size_of(2));
        // The check saw the blob itself, in the store's buffer.
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].0, 2);
        spec.verify(2, &seen[0].1, Some(0)).unwrap();
        let ns = timer.nanos();
        assert!(
            ns[0] + checking <= around,
            "the check was timed: {ns:?}, check {checking} ns, call {around} ns"
        );
        // A failed check fails the read.
        let mut failing = |_: u64, _: &[u8]| -> Result<()> { Err(Error::Verify("bad".into())) };
        match read_one(session.as_mut(), 3, &mut timer, Some(&mut failing)) {
            Err(Error::Verify(m)) => assert_eq!(m, "bad"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_run_keeps_its_histogram_losslessly() {
        let (target, _) = dataset("histogram", 300);
        let mut p = plan(&target, Operation::Read);
        p.repeat = 2;
        let r = execute(&p, &Silent).unwrap();
        let h = r.histogram().unwrap().expect("recorded");
        assert_eq!(h.count(), 600);
        assert_eq!(h.summary(), r.latency);
        let merged = crate::result::run::merged_histogram([&r, &r])
            .unwrap()
            .unwrap();
        assert_eq!(merged.count(), 1200);
    }

    /// With an injection, every operation's interval holds the extra (the
    /// spin runs inside the session's call, between the timer's marks),
    /// and the plan records it; without one nothing is recorded.
    #[test]
    fn an_injected_extra_lands_in_every_operation_interval() {
        let (target, _) = dataset("inject", 40);
        for operation in [Operation::Read, Operation::Update] {
            let mut p = plan(&target, operation);
            p.session.inject = Some(crate::store::inject::Injection::Fixed { ns: 300_000 });
            let r = execute(&p, &Silent).unwrap();
            let rep = &r.repetitions[0];
            assert!(rep.ops_ns >= 40 * 300_000, "{operation:?}: {}", rep.ops_ns);
            assert!(r.summary.time_per_op_ns.median >= 300_000.0);
            let json = serde_json::to_value(&r).unwrap();
            assert_eq!(json["plan"]["session"]["inject"], "+300us");
        }
        let r = execute(&plan(&target, Operation::Read), &Silent).unwrap();
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["plan"]["session"].get("inject").is_none(), "{json}");
    }

    #[test]
    fn a_failed_operation_is_counted_and_the_run_goes_on() {
        use crate::error::FailureClass;
        let (target, spec) = dataset("corrupt", 10);
        {
            // Key 3 holds key 4's bytes: every read of it fails its check.
            let mut s = store::open(&target, Access::ReadWrite).unwrap();
            let mut session = s.session(SessionOptions::default()).unwrap();
            let mut buf = Vec::new();
            spec.fill(4, 0, &mut buf);
            session.update(3, &buf).unwrap();
        }
        let mut p = plan(&target, Operation::Read);
        (p.repeat, p.warmup) = (3, 1);
        let r = execute(&p, &Silent).unwrap();
        assert_eq!(r.failures.total(), 4, "one per repetition, warm-up too");
        assert_eq!(r.failures.classes[0].class, FailureClass::WrongBytes);
        assert!(r.repetitions.iter().all(|x| (x.ops, x.failed) == (9, 1)));
        assert_eq!(r.latency.count, 27, "failed reads are not timed as reads");
        assert_eq!(
            r.failures_line().unwrap(),
            "4 of 31 operations failed: 4 wrong bytes"
        );
        let e = r.without_failures().unwrap_err();
        assert!(e.to_string().contains("4 wrong bytes"), "{e}");
        // --max-errors 2 stops in the second repetition, at its failure.
        p.max_errors = Some(crate::result::budget::ErrorBudget::Count(2));
        let r = execute(&p, &Silent).unwrap();
        assert_eq!(r.failures.total(), 2);
        assert_eq!(r.repetitions.len(), 1, "the warm-up and one measured");
        let why = r.stopped_early.unwrap();
        assert!(
            why.starts_with("--max-errors 2: 2 of 13 operations"),
            "{why}"
        );
    }

    #[test]
    fn an_injection_records_what_it_delivered() {
        // x1.5: the spins sum to at least half the operations' own time (a
        // spin ends only once its share has passed), and not much more
        // (the last spin's overshoot, however a loaded machine stalls it).
        let (target, _) = dataset("delivered", 200);
        let mut p = plan(&target, Operation::Read);
        p.session.inject = Some(crate::store::inject::Injection::Scaled { factor: 1.5 });
        let r = execute(&p, &Silent).unwrap();
        let i = r.repetitions[0].injected.expect("recorded");
        assert!(i.own_ns > 0, "{i:?}");
        assert!(2 * i.extra_ns >= i.own_ns, "{i:?}");
        assert!(2 * i.extra_ns <= i.own_ns + 100_000_000, "{i:?}");
        // None without an injection.
        let r = execute(&plan(&target, Operation::Read), &Silent).unwrap();
        assert!(r.repetitions[0].injected.is_none());
    }

    #[test]
    fn reads_commit_after_every_n_of_a_transaction_size() {
        // 10 reads, 4 a transaction: commits after the 4th and the 8th
        // inside the loop, and the repetition's own at the end.
        let (target, _) = dataset("txn-size", 10);
        let name = "executor-txn-size";
        let mut p = plan(&target, Operation::Read);
        p.session.ops_per_transaction = Some(4);
        let before = crate::store::memory_commits(name);
        let r = execute(&p, &Silent).unwrap();
        assert_eq!(r.repetitions[0].ops, 10);
        assert_eq!(crate::store::memory_commits(name) - before, 3);
        // All in one: the repetition's commit only.
        p.session.ops_per_transaction = None;
        let before = crate::store::memory_commits(name);
        execute(&p, &Silent).unwrap();
        assert_eq!(crate::store::memory_commits(name) - before, 1);
    }

    #[test]
    fn a_missing_key_is_its_own_error() {
        let (target, _) = dataset("sparse", 10);
        {
            let mut s = store::open(&target, Access::ReadWrite).unwrap();
            let mut session = s.session(SessionOptions::default()).unwrap();
            session.delete(5).unwrap();
        }
        let mut p = plan(&target, Operation::Read);
        p.verify = false;
        match execute(&p, &Silent) {
            Err(e @ Error::MissingKey { key: 5, .. }) => assert_eq!(e.exit_code(), 2),
            other => panic!("{other:?}"),
        }
    }
}
