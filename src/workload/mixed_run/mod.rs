//! The mixed-run executor: `--threads N` workers, each with its own store
//! and session, over one dataset, mixing operations (`--mix`) on keys drawn
//! from a distribution (`--keys`), in transactions of `--batch`
//! operations, for a time or a count, closed loop or open loop at
//! `--rate`. Every read is checked against the versions that may legally
//! be there (see `history`; each key's version before the run is read
//! first, untimed); a busy lock is counted and the transaction
//! rolled back, never fatal. Inserts and deletes are put right afterwards
//! (untimed), so the dataset stays whole for the next run: also when the
//! run is stopped by Ctrl-C, SIGTERM or SIGHUP (the workers stop after
//! their batch, the dataset is put right, and what was measured until
//! then is returned with the reason in `stopped_early`) or by a disk
//! filling up (see `room`). A run that adds keys to a folder dataset
//! names them first in a journal (`store::name_added_key`), so a run killed
//! outright leaves nothing a later `init` does not find.

mod operations;
mod room;
mod settle;
mod tally;
#[cfg(test)]
mod tests;
mod worker;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::dataset::{CheckedDigests, DatasetSpec, Ledger, Manifest};
use crate::error::{Error, Result};
use crate::measure::latency::Latencies;
use crate::progress::Progress;
use crate::result::mixed_run::{
    DatasetAfter, KeyDistribution, KindFigures, MixedRunPlanRecord, MixedRunTables, OpKind,
    Schedule,
};
use crate::store::{self, Access, Session, SessionOptions};
use crate::target::Target;

use super::history::{History, Outcome};
use super::mix::Mix;
use crate::result::budget::ErrorBudget;
use crate::result::faults::{ClusterRecord, ShapeChange};
use crate::store::cluster::ClusterShape;
use room::DiskReserve;
use tally::Tally;

/// How `stopped_early` begins when the disk ran out of room (the reserve
/// reached, or a write found the disk full).
pub const OUT_OF_ROOM: &str = "out of room on the disk: ";

/// How a run's notes begin when its dataset could not be put right.
pub const NOT_PUT_RIGHT: &str = "the dataset could not be put right after the run";

/// Keys a scan reads at most (YCSB's default maxscanlength).
pub const MAX_SCAN: u64 = 100;

/// What a mixed run does.
#[derive(Debug, Clone)]
pub struct MixedRunPlan {
    /// The target string as given (recorded).
    pub target_text: String,
    /// What is measured.
    pub target: Target,
    /// Worker threads.
    pub threads: usize,
    /// Of them, this many only update (the others follow `mix`): an
    /// application's writer threads beside its readers.
    pub writers: usize,
    /// The operations and their shares.
    pub mix: Mix,
    /// How keys are drawn.
    pub keys: KeyDistribution,
    /// Operations per transaction.
    pub batch: u32,
    /// Run this long (with `count`, whichever ends first).
    pub duration: Option<Duration>,
    /// Run this many operations in all.
    pub count: Option<u64>,
    /// Open loop: operations per second across all threads.
    pub rate: Option<f64>,
    /// How long an operation waits for another connection's lock.
    pub busy_timeout: Duration,
    /// How reads and writes are done.
    pub session: SessionOptions,
    /// Check every read (needs the dataset's manifest).
    pub verify: bool,
    /// Seed of the workers' random choices.
    pub seed: u64,
    /// YCSB's workload letter, when a preset chose the mix.
    pub workload: Option<String>,
    /// Stop early once this many operations failed (None: run to the end
    /// whatever fails).
    pub max_errors: Option<ErrorBudget>,
}

/// Wraps each worker's session: how tests make a store misbehave on
/// purpose.
trait WrapSession: Sync {
    fn wrap<'s>(&self, session: Box<dyn Session + 's>) -> Box<dyn Session + 's>;
}

/// What every worker shares.
struct Shared<'a> {
    plan: &'a MixedRunPlan,
    /// Wraps each worker's session (tests).
    wrap: Option<&'a dyn WrapSession>,
    spec: Option<DatasetSpec>,
    /// Digests of blobs whose bytes every thread's reads have checked.
    checked: CheckedDigests,
    history: History,
    first: u64,
    /// The dataset's last key before the run.
    initial_last: u64,
    /// Reads, updates and deletes draw keys up to here (inserts raise it
    /// once committed).
    visible_last: AtomicU64,
    next_insert: AtomicU64,
    next_version: AtomicU64,
    /// Operations begun (closed loop) or scheduled (open loop).
    issued: AtomicU64,
    done: AtomicU64,
    stop: AtomicBool,
    /// Every worker has opened its store and session: the run starts.
    ready: Barrier,
    /// When the run started: set by the first worker past `ready`, so
    /// opening connections is not timed and every thread starts together.
    started: OnceLock<Instant>,
    /// A worker could not open its first connection: the run never started.
    failure: Mutex<Option<Error>>,
    /// Operations failed so far (all workers).
    failed: AtomicU64,
    /// Why the run stopped before its end (`--max-errors`, a signal, the
    /// disk's reserve reached, a full disk).
    stopped_early: Mutex<Option<String>>,
    /// The last key the process's journal of the dataset's folder names
    /// (see `store::name_added_key`): inserts up to it need no journal write.
    claimed: AtomicU64,
    /// The free space a run that inserts keeps on its disk.
    reserve: Option<DiskReserve>,
    /// Bytes the run's deletes took off the disk: put back afterwards, so
    /// kept free beside the reserve.
    owed: AtomicU64,
    /// The dataset's ledger of acknowledged versions as the run found it,
    /// when it is known.
    ledger: Option<Ledger>,
    /// Blobs found at a version their acknowledged writes do not allow
    /// (before the run, against the ledger; after it, against its writes).
    lost: AtomicU64,
    /// The first of them, in words.
    lost_first: Mutex<Option<String>>,
    /// When the last worker ended, ns from the run's start.
    last_end_ns: AtomicU64,
}

impl Shared<'_> {
    fn deadline_passed(&self) -> bool {
        self.plan.duration.is_some_and(|d| self.since_start() >= d)
    }

    /// The run's start, set by the first caller (a worker past `ready`).
    fn start(&self) -> Instant {
        *self.started.get_or_init(Instant::now)
    }

    /// Time since the run started (zero before it has).
    fn since_start(&self) -> Duration {
        self.started.get().map_or(Duration::ZERO, Instant::elapsed)
    }

    /// Claims the next `n` operations; false once the run is over (or
    /// must stop: the disk's reserve reached).
    fn claim(&self, n: u64) -> Option<u64> {
        if self.stop.load(Ordering::Relaxed) || self.deadline_passed() {
            return None;
        }
        if let Some(why) = self
            .reserve
            .as_ref()
            .and_then(|r| r.short(self.owed.load(Ordering::Relaxed)))
        {
            self.stop_early(format!("{OUT_OF_ROOM}{why}"));
            return None;
        }
        let at = self.issued.fetch_add(n, Ordering::Relaxed);
        if self.plan.count.is_some_and(|c| at >= c) {
            return None;
        }
        Some(at)
    }

    fn version(&self) -> u64 {
        self.next_version.fetch_add(1, Ordering::Relaxed)
    }

    /// Counts one failed operation; stops the run when that spends the
    /// `--max-errors` budget.
    fn count_failure(&self) {
        let failed = self.failed.fetch_add(1, Ordering::Relaxed) + 1;
        let Some(budget) = self.plan.max_errors else {
            return;
        };
        // This operation is not yet in `done`.
        let tried = (self.done.load(Ordering::Relaxed) + 1).max(failed);
        if let Some(reason) = budget.reason(failed, tried, "operations") {
            self.stop_early(reason);
        }
    }

    /// Stops the run before its end for `reason` (said with the time);
    /// the first reason is the one kept.
    fn stop_early(&self, reason: String) {
        if !self.stop.swap(true, Ordering::Relaxed) {
            let at = self.since_start().as_secs_f64();
            let mut why = self.stopped_early.lock().unwrap_or_else(|e| e.into_inner());
            *why = Some(format!("{reason} at {at:.1} s"));
        }
    }

    /// Names `key` in the process's journal of the dataset's folder
    /// before it is inserted, outside the timed insert (whose store would
    /// otherwise do it inside); a key already named costs one load.
    fn journal_key(&self, key: u64) -> Result<()> {
        if key <= self.claimed.load(Ordering::Acquire) {
            return Ok(());
        }
        let claimed = store::name_added_key(&self.plan.target, self.initial_last, key)?;
        self.claimed.fetch_max(claimed, Ordering::Release);
        Ok(())
    }

    /// Sleeps `wait`, or less: until the run's end or its stop.
    fn sleep_within_run(&self, wait: Duration) {
        let until = Instant::now() + wait;
        while Instant::now() < until
            && !self.stop.load(Ordering::Relaxed)
            && !self.deadline_passed()
        {
            std::thread::sleep(Duration::from_millis(10).min(until - Instant::now()));
        }
    }

    fn fail(&self, e: Error) {
        self.stop.store(true, Ordering::Relaxed);
        let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            *f = Some(e);
        }
    }
}

/// Runs the plan and returns its tables.
pub fn execute(plan: &MixedRunPlan, progress: &dyn Progress) -> Result<MixedRunTables> {
    execute_wrapped(plan, progress, None)
}

/// [`execute`], each worker's session wrapped by `wrap`.
fn execute_wrapped(
    plan: &MixedRunPlan,
    progress: &dyn Progress,
    wrap: Option<&dyn WrapSession>,
) -> Result<MixedRunTables> {
    check(plan)?;
    // Ctrl-C, SIGTERM and SIGHUP stop the workers instead of the process,
    // so the dataset is put right (the caller may hold a guard already).
    let _signals = crate::interrupt::install();
    let access = if plan.writes() {
        Access::ReadWrite
    } else {
        Access::ReadOnly
    };
    let mut probe = store::open(&plan.target, access)?;
    let catalog = probe.catalog()?;
    let info = probe.info();
    let writes = probe.describe_writes(&plan.session);
    let transactions = probe.has_transactions();
    let spec = catalog.manifest.as_ref().and_then(|m| m.spec.clone());
    if plan.writes() && spec.is_none() {
        return Err(Error::usage(format!(
            "{} has no blobbench manifest, so new versions of its blobs cannot be made (or checked): run a read-only --mix, or use a dataset made by blobbench init",
            plan.target
        )));
    }
    if catalog.count != catalog.last_key - catalog.first_key + 1 {
        return Err(Error::usage(format!(
            "{} holds {} keys between {} and {}: a concurrent run needs every key in its range; make the dataset again with blobbench init",
            plan.target, catalog.count, catalog.first_key, catalog.last_key
        )));
    }
    let reserve = spec
        .as_ref()
        .and_then(|s| DiskReserve::of(plan, s, plan.target.data_path()));
    if let (Some(reserve), Some(spec)) = (&reserve, &spec) {
        reserve.check_before(plan, spec)?;
    }
    let judged = plan.verify && spec.is_some() && plan.reads();
    // Marked before the first write; read for the checks (see `settle`).
    let (claim, found) = match (&catalog.manifest, plan.writes()) {
        (Some(m), true) if spec.is_some() => {
            let claim = store::ledger::begin_writes(probe.as_mut(), m)?;
            let found = claim.found().clone();
            (Some(claim), Some(found))
        }
        (Some(m), false) if judged => (None, Some(store::ledger::expectation(probe.as_mut(), m)?)),
        _ => (None, None),
    };
    let dataset_id = catalog.manifest.as_ref().and_then(|m| m.id.clone());
    let shared = Shared {
        plan,
        wrap,
        spec,
        checked: CheckedDigests::new(),
        history: History::new(catalog.first_key, catalog.last_key, judged),
        first: catalog.first_key,
        initial_last: catalog.last_key,
        visible_last: AtomicU64::new(catalog.last_key),
        next_insert: AtomicU64::new(catalog.last_key + 1),
        next_version: AtomicU64::new(crate::dataset::fresh_version()),
        issued: AtomicU64::new(0),
        done: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        ready: Barrier::new(plan.threads),
        started: OnceLock::new(),
        failure: Mutex::new(None),
        failed: AtomicU64::new(0),
        stopped_early: Mutex::new(None),
        claimed: AtomicU64::new(catalog.last_key),
        reserve,
        owed: AtomicU64::new(0),
        ledger: found.clone().and_then(|f| f.ok()),
        lost: AtomicU64::new(0),
        lost_first: Mutex::new(None),
        last_end_ns: AtomicU64::new(0),
    };
    if judged {
        settle::learn_versions(&shared, access, progress)?;
    }
    // A signal while the versions were read: nothing has changed yet.
    crate::interrupt::check()?;
    let resizes = plan.mix.has(OpKind::Insert) || plan.mix.has(OpKind::Delete);
    if plan.mix.has(OpKind::Insert) {
        // The journal is begun before the clock starts (see journal_key).
        shared.journal_key(catalog.last_key + 1)?;
    }
    if resizes && let Some(m) = &catalog.manifest {
        // Until the run has put the dataset right, it is not whole.
        let pending = m.in_progress(None);
        probe.finish(&pending)?;
    }
    drop(probe);
    let shape = store::read_shape(&plan.target);
    let (tallies, changes) = run_workers(&shared, shape.as_ref(), progress);
    // Until the last worker ended, not until this thread saw it (it looks
    // every 200 ms).
    let elapsed = Duration::from_nanos(shared.last_end_ns.load(Ordering::Relaxed));
    let mut all = Tally::default();
    for t in tallies {
        all.absorb(t);
    }
    let put = put_right(&shared, &all, resizes, dataset_id);
    let mut notes = Vec::new();
    if let Ok(after) = &put {
        // Also when the run never started: a claim is always ended.
        notes.extend(settle_and_record(&shared, claim, after.last_key, progress));
    }
    if put.is_ok() && plan.mix.has(OpKind::Insert) {
        // The manifest now records the dataset the run left. A journal
        // that cannot be removed names only keys the manifest holds or no
        // file holds: harmless, so not a failure of the run.
        let _ = store::end_added_keys(&plan.target);
    }
    if let Some(e) = shared
        .failure
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        // The run never started; what it marked is put back above.
        return Err(e);
    }
    let cluster = shape.map(|start| {
        Box::new(ClusterRecord {
            end: store::read_shape_after(&plan.target, Some(&start)),
            start,
            changes,
        })
    });
    if let Some(Err(why)) = &found
        && plan.verify
    {
        notes.push(format!(
            "versions were checked against this run's own writes only, not the dataset's earlier acknowledged ones: {why}"
        ));
    }
    let after = match put {
        Ok(after) => after,
        Err(e) => {
            // The manifest still says the dataset is not whole: no later
            // command mistakes it for a whole one.
            notes.push(format!(
                "{NOT_PUT_RIGHT} ({e}): it is marked incomplete; make it again with blobbench init"
            ));
            DatasetAfter {
                first_key: shared.first,
                last_key: shared.visible_last.load(Ordering::Relaxed),
                refilled: 0,
            }
        }
    };
    let mut t = tables(plan, &shared, all, elapsed, info, writes, after);
    t.notes.extend(notes);
    t.plan.transactions = transactions;
    t.cluster = cluster;
    t.stopped_early = shared
        .stopped_early
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    Ok(t)
}

/// Reads back what the run's writes left (see `settle`) and records it in
/// the dataset's ledger when the run holds a claim on it (keys `..=last`);
/// returns the notes on what could not be done.
fn settle_and_record(
    shared: &Shared,
    claim: Option<store::ledger::LedgerClaim>,
    last: u64,
    progress: &dyn Progress,
) -> Vec<String> {
    let (settled, unread) = settle::settle(shared, last, progress);
    let mut notes: Vec<String> = unread
        .map(|e| format!("the versions the run's writes left could not be read back ({e})"))
        .into_iter()
        .collect();
    let recorded = claim.map_or(Ok(()), |claim| {
        let mut store = store::open(&shared.plan.target, Access::ReadWrite)?;
        claim.end(store.as_mut(), |l| settle::record(l, settled, last))
    });
    notes.extend(recorded.err().map(|e| {
        format!("the run's writes could not be recorded in the dataset's ledger ({e}): later checks find it unknown")
    }));
    notes
}

impl MixedRunPlan {
    /// Whether any thread writes.
    pub fn writes(&self) -> bool {
        self.writers > 0 || self.mix.writes()
    }

    /// Whether any operation reads.
    fn reads(&self) -> bool {
        [OpKind::Read, OpKind::ReadModifyWrite, OpKind::Scan]
            .iter()
            .any(|k| self.mix.has(*k))
    }

    /// Whether the run does `kind` at all.
    fn does(&self, kind: OpKind) -> bool {
        self.mix.has(kind) || (kind == OpKind::Update && self.writers > 0)
    }
}

/// Refuses plans that cannot run as asked.
fn check(plan: &MixedRunPlan) -> Result<()> {
    if plan.threads == 0 {
        return Err(Error::usage("--threads 0: at least one worker is needed"));
    }
    if plan.writers > plan.threads {
        return Err(Error::usage(format!(
            "--writers {} of --threads {}: writers are some of the threads; raise --threads",
            plan.writers, plan.threads
        )));
    }
    if plan.duration.is_none() && plan.count.is_none() {
        return Err(Error::usage(
            "a concurrent run needs an end: -t DURATION or --count N",
        ));
    }
    if plan.rate.is_some() && plan.batch > 1 {
        return Err(Error::usage(format!(
            "--rate with --batch {}: the open loop schedules single operations; use --batch 1",
            plan.batch
        )));
    }
    Ok(())
}

/// A run that ends later than this past its -t says so.
const OVERRUN_SAID: Duration = Duration::from_millis(100);

/// How often a cluster's shape is read while the run goes on.
const SHAPE_POLL: Duration = Duration::from_secs(1);

/// Starts the workers and shows live throughput until they end; with a
/// cluster's `shape` at the start, reads it again every second on a thread
/// of its own and returns every change seen, with its time.
fn run_workers(
    shared: &Shared,
    shape: Option<&ClusterShape>,
    progress: &dyn Progress,
) -> (Vec<Tally>, Vec<ShapeChange>) {
    let total = shared
        .plan
        .count
        .unwrap_or(0)
        .max(shared.plan.duration.map_or(0, |d| d.as_millis() as u64));
    progress.start("running", total);
    let workers_done = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        let monitor = shape.map(|s| scope.spawn(|| watch_shape(shared, s, &workers_done)));
        let handles: Vec<_> = (0..shared.plan.threads)
            .map(|id| {
                scope.spawn(move || {
                    let tally = match worker::run(shared, id) {
                        Ok(t) => t,
                        Err(e) => {
                            shared.fail(e);
                            Tally::default()
                        }
                    };
                    let ended = shared.since_start().as_nanos() as u64;
                    shared.last_end_ns.fetch_max(ended, Ordering::Relaxed);
                    tally
                })
            })
            .collect();
        let mut shown = 0u64;
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(200));
            if let Some(signal) = crate::interrupt::received() {
                shared.stop_early(signal_reason(signal));
            }
            let done = shared.done.load(Ordering::Relaxed);
            let failed = shared.failed.load(Ordering::Relaxed);
            let secs = shared.since_start().as_secs_f64();
            let position = match shared.plan.count {
                Some(_) => done,
                None => shared.since_start().as_millis() as u64,
            };
            if position > shown {
                progress.advance(position.min(total) - shown.min(total));
                shown = position;
            }
            let failed = if failed > 0 {
                format!(", {failed} failed")
            } else {
                String::new()
            };
            progress.message(&format!(
                "{done} ops{failed}, {:.0}/s",
                done as f64 / secs.max(1e-9)
            ));
        }
        let tallies = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect();
        workers_done.store(true, Ordering::Relaxed);
        let changes = monitor
            .map(|m| m.join().unwrap_or_default())
            .unwrap_or_default();
        (tallies, changes)
    });
    progress.finish();
    result
}

/// The reason a signal gives for stopping the run ("interrupted (SIGINT,
/// Ctrl-C)").
fn signal_reason(signal: i32) -> String {
    format!("interrupted ({})", crate::error::signal_name(signal))
}

/// Reads the cluster's shape every [`SHAPE_POLL`] until the workers are
/// done; each change from the shape seen before is kept with its time.
fn watch_shape(shared: &Shared, start: &ClusterShape, done: &AtomicBool) -> Vec<ShapeChange> {
    let mut seen = start.clone();
    let mut changes = Vec::new();
    loop {
        let wake = Instant::now() + SHAPE_POLL;
        while Instant::now() < wake {
            if done.load(Ordering::Relaxed) {
                return changes;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let Some(now) = store::read_shape_after(&shared.plan.target, Some(&seen)) else {
            continue;
        };
        let at_ns = shared.since_start().as_nanos() as u64;
        changes.extend(
            now.changes_since(&seen)
                .into_iter()
                .map(|change| ShapeChange { at_ns, change }),
        );
        seen = now;
    }
}

/// Puts the dataset right for the next run, untimed: writes back every
/// key of the dataset a delete removed (or a write of unknown outcome may
/// have), ends the dataset at the last key the run added whole (writing
/// back an added key that did not land where it can, else ending before
/// it), removes whatever the run wrote past that end, and records the
/// dataset's new extent in its manifest.
fn put_right(
    shared: &Shared,
    all: &Tally,
    resizes: bool,
    dataset_id: Option<String>,
) -> Result<DatasetAfter> {
    let visible = shared
        .visible_last
        .load(Ordering::Relaxed)
        .max(shared.initial_last);
    let mut after = DatasetAfter {
        first_key: shared.first,
        last_key: visible,
        refilled: 0,
    };
    let (true, Some(spec)) = (resizes, shared.spec.clone()) else {
        return Ok(after);
    };
    let mut store = store::open(&shared.plan.target, Access::ReadWrite)?;
    {
        let mut session = store.session(SessionOptions {
            per_op_transaction: true,
            ..shared.plan.session
        })?;
        let mut back = WriteBack {
            spec: &spec,
            shared,
            buf: Vec::new(),
            written: 0,
        };
        let mut keys: Vec<u64> = all.touched.clone();
        keys.sort_unstable();
        keys.dedup();
        let (own, added): (Vec<u64>, Vec<u64>) =
            keys.into_iter().partition(|&k| k <= shared.initial_last);
        for key in own {
            back.whole(session.as_mut(), key)?;
        }
        let mut last = visible;
        for key in added.into_iter().filter(|&k| k <= visible) {
            if back.whole(session.as_mut(), key).is_err() {
                last = key - 1;
                break;
            }
        }
        // Past the end: every key the run tried to add (a failed insert
        // may have left its file, a partial one, a row of unknown fate).
        let issued = shared.next_insert.load(Ordering::Relaxed).saturating_sub(1);
        for key in last + 1..=issued {
            match session.delete(key) {
                Ok(()) | Err(Error::MissingKey { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        after.last_key = last;
        after.refilled = back.written;
    }
    let whole = DatasetSpec {
        count: after.last_key - spec.first_key + 1,
        ..spec
    };
    // The same dataset, resized: its ledger still names it.
    let mut manifest = Manifest::new(whole);
    manifest.id = dataset_id;
    store.finish(&manifest)?;
    Ok(after)
}

/// Blobs written back after a run.
struct WriteBack<'a, 's> {
    spec: &'a DatasetSpec,
    shared: &'a Shared<'s>,
    buf: Vec<u8>,
    /// How many were written.
    written: u64,
}

impl WriteBack<'_, '_> {
    /// Makes blob `key` whole: written again when the store does not hold
    /// it at its length (absent, or cut short).
    fn whole(&mut self, session: &mut dyn Session, key: u64) -> Result<()> {
        let want = self.spec.size_of(key) as u64;
        let held = session.size(key)?;
        if held == Some(want) {
            return Ok(());
        }
        let version = self.shared.version();
        self.spec.fill(key, version, &mut self.buf);
        // In the history as any write: the version the key now holds.
        let history = &self.shared.history;
        let id = history.begin_write(key, Some(version));
        let done = match held {
            Some(_) => session.update(key, &self.buf),
            None => session.insert(key, &self.buf),
        };
        let outcome = match done {
            Ok(()) => Outcome::Committed(history.now()),
            Err(_) => Outcome::Unknown,
        };
        history.end_write(key, id, outcome);
        done?;
        self.written += 1;
        Ok(())
    }
}

/// The run's tables from the merged tallies.
fn tables(
    plan: &MixedRunPlan,
    shared: &Shared,
    all: Tally,
    elapsed: Duration,
    info: crate::store::StoreInfo,
    writes: String,
    after: DatasetAfter,
) -> MixedRunTables {
    let secs = elapsed.as_secs_f64().max(1e-9);
    let figures = |kind: Option<OpKind>, t: &tally::KindTally| {
        let failed = t.failures.total() > 0;
        KindFigures {
            kind,
            ops: t.ops,
            per_s: t.ops as f64 / secs,
            bytes: t.bytes,
            latency: t.latencies.summary(),
            histogram: t.latencies.encode(),
            outcomes: t.outcomes,
            failures: t.failures.clone(),
            failed_latency: failed.then(|| t.failed.summary()),
            latency_with_failures: failed
                .then(|| Latencies::merged([&t.latencies, &t.failed]).summary()),
        }
    };
    let mut kinds: Vec<KindFigures> = OpKind::ALL
        .iter()
        .filter(|k| plan.does(**k))
        .map(|k| figures(Some(*k), &all.kinds[*k as usize]))
        .collect();
    if plan.batch > 1 {
        kinds.push(figures(None, &all.commits));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut notes = Vec::new();
    if plan.threads > cores {
        notes.push(format!(
            "{} threads on {cores} cores: beyond {cores}, threads share the cores, so more threads measure waiting as much as work",
            plan.threads
        ));
    }
    if let Some(d) = plan.duration
        && elapsed > d + OVERRUN_SAID
    {
        notes.push(format!(
            "the run overran -t {} by {:.2} s (operations in flight at -t finished): its rates divide by the whole {:.2} s",
            humantime::format_duration(d),
            (elapsed - d).as_secs_f64(),
            elapsed.as_secs_f64()
        ));
    }
    if !plan.verify || shared.spec.is_none() {
        notes.push(
            "reads were not checked (--no-verify, or a dataset without blobbench's manifest)"
                .into(),
        );
    }
    let schedule = plan.rate.map(|rate| {
        // Operations fall due only within the run's duration; the run's
        // wall time also holds the last ones' service time.
        let window = plan.duration.map_or(elapsed, |d| d.min(elapsed));
        let due = ((window.as_secs_f64() * rate).ceil() as u64).min(plan.count.unwrap_or(u64::MAX));
        let started: u64 = all.kinds.iter().map(|k| k.ops + k.outcomes.busy).sum();
        Schedule {
            target_per_s: rate,
            achieved_per_s: started as f64 / window.as_secs_f64().max(1e-9),
            not_started: due.saturating_sub(started),
            start_lag: all.lag.summary(),
        }
    });
    MixedRunTables {
        plan: MixedRunPlanRecord {
            target: plan.target_text.clone(),
            threads: plan.threads,
            writers: plan.writers,
            mix: plan.mix.describe(),
            keys: plan.keys,
            batch: plan.batch,
            duration_ns: plan.duration.map(|d| d.as_nanos() as u64),
            count: plan.count,
            rate: plan.rate,
            busy_timeout_ns: plan.busy_timeout.as_nanos() as u64,
            writes,
            verify: plan.verify && shared.spec.is_some(),
            transactions: true,
            workload: plan.workload.clone(),
        },
        store: info,
        cores,
        elapsed_ns: elapsed.as_nanos() as u64,
        kinds,
        verified: all.verified,
        unjudged: all.unjudged,
        lost: shared.lost.load(Ordering::Relaxed),
        lost_first: shared
            .lost_first
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone(),
        schedule,
        after,
        notes,
        activity: Some(Box::new(all.activity)),
        reconnects: {
            let mut r = all.reconnects;
            r.sort_by_key(|r| r.at_ns);
            r
        },
        cluster: None,
        stopped_early: None,
    }
}
