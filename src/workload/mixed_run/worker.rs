//! One worker of a mixed run: its own store and session, batches of
//! operations drawn from the mix (see `operations`), and, when a failure
//! broke its connection, a new one opened before its next operation (to
//! another node where the target names several), so the run goes on.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::tally::Tally;
use super::{MixedRunPlan, Shared};
use crate::error::{Error, FailureClass, Result};
use crate::result::faults::Reconnect;
use crate::result::mixed_run::OpKind;
use crate::store::{self, Access, Session, Store};
use crate::workload::keys::KeyChooser;

/// How long before an operation falls due an open-loop worker stops
/// sleeping and spins.
const SPIN: Duration = Duration::from_micros(200);

/// The first wait after a connection could not be opened again; it
/// doubles with each failed attempt up to [`RECONNECT_WAIT_MAX`].
const RECONNECT_WAIT: Duration = Duration::from_millis(100);

/// The longest wait between two attempts to open a connection again.
const RECONNECT_WAIT_MAX: Duration = Duration::from_secs(1);

/// A write done (or tried) in the open batch, recorded in the history
/// when the batch ends.
pub(super) struct Pending {
    pub key: u64,
    /// Its id in the history.
    pub id: u64,
    pub delete: bool,
    pub insert: bool,
    /// Its call failed: the store may or may not have applied it, unless
    /// the batch is rolled back.
    pub failed: bool,
    /// It may have landed even if the batch rolls back (a timeout or lost
    /// connection after the server had it).
    pub uncertain: bool,
}

/// What a worker keeps from one connection to the next.
pub(super) struct State {
    /// When the run started (every worker the same).
    pub start: Instant,
    pub rng: Xoshiro256PlusPlus,
    pub chooser: KeyChooser,
    pub tally: Tally,
    pub buf: Vec<u8>,
    pub pending: Vec<Pending>,
    /// Logical time the open batch began (reads in it may see its snapshot).
    pub batch_start: u64,
    /// The open batch's completed operations: (kind, ns, bytes), counted
    /// once the batch commits.
    pub done: Vec<(OpKind, u64, u64)>,
    /// One of the plan's writer threads: it only updates.
    pub writer: bool,
    /// Time spent in the current operation on work that is not it (making
    /// a blob to write, checking one read), left out of its latency.
    pub excluded: Duration,
    /// A failure may have broken the connection: open a new one.
    pub broken: bool,
}

/// A worker on one connection.
pub(super) struct Worker<'w, 's, 'a> {
    pub shared: &'s Shared<'a>,
    pub session: Box<dyn Session + 'w>,
    pub st: &'w mut State,
}

/// Runs worker `id` until the run ends. Only a failure to open its first
/// connection is an error (the run never started); every later failure
/// is counted.
pub(super) fn run(shared: &Shared, id: usize) -> Result<Tally> {
    let plan = shared.plan;
    // Every worker opens first, then all start together (a failure to open
    // still meets the others at the barrier, which they would wait at
    // forever otherwise).
    let mut store = match store::open(&plan.target, access(plan)) {
        Ok(s) => s,
        Err(e) => {
            shared.ready.wait();
            return Err(e);
        }
    };
    let session = open_session(shared, store.as_mut());
    shared.ready.wait();
    let session = session?;
    let mut st = State::new(shared, id);
    let mut broken = drive(shared, &mut st, session);
    drop(store);
    while broken {
        let Some(mut store) = reconnect(shared, &mut st) else {
            break;
        };
        let to = node_of(store.as_ref());
        match open_session(shared, store.as_mut()) {
            Ok(session) => {
                let at_ns = st.since_start();
                st.tally.reconnects.push(Reconnect { at_ns, to });
                broken = drive(shared, &mut st, session);
            }
            Err(e) => {
                st.fail_unconnected(shared, &e, Duration::ZERO);
            }
        }
    }
    Ok(st.tally)
}

/// Read-write when the plan writes.
fn access(plan: &MixedRunPlan) -> Access {
    if plan.writes() {
        Access::ReadWrite
    } else {
        Access::ReadOnly
    }
}

/// A session on `store` as the plan asks (wrapped in tests).
fn open_session<'w>(shared: &Shared, store: &'w mut dyn Store) -> Result<Box<dyn Session + 'w>> {
    let plan = shared.plan;
    let mut session = store.session(crate::store::SessionOptions {
        per_op_transaction: plan.batch == 1,
        ..plan.session
    })?;
    session.wait_for_locks(plan.busy_timeout)?;
    Ok(match shared.wrap {
        Some(w) => w.wrap(session),
        None => session,
    })
}

/// Where a store is connected: its "node" setting where it names one (a
/// target of several nodes), else its path or URL.
fn node_of(store: &dyn Store) -> String {
    let info = store.info();
    match info.settings.get("node").and_then(|n| n.as_str()) {
        Some(node) => node.to_string(),
        None => info.path.display().to_string(),
    }
}

/// Runs batches on `session` until the run ends (false) or a failure may
/// have broken the connection (true).
fn drive(shared: &Shared, st: &mut State, session: Box<dyn Session + '_>) -> bool {
    let plan = shared.plan;
    let mut w = Worker {
        shared,
        session,
        st,
    };
    while let Some(index) = shared.claim(u64::from(plan.batch)) {
        let due = match plan.rate {
            Some(rate) => match w.st.wait_until_due(shared, index, rate) {
                Some(due) => Some(due),
                None => break,
            },
            None => None,
        };
        w.batch(due);
        shared
            .done
            .fetch_add(u64::from(plan.batch), Ordering::Relaxed);
        crate::pause::at("concurrent-batch");
        if std::mem::take(&mut w.st.broken) {
            return true;
        }
    }
    false
}

/// Opens the store again after a failure broke the connection. While it
/// cannot be opened, each attempt takes the place of the next batch: its
/// operations count as failed with the attempt's error, and the worker
/// waits (100 ms, doubling to 1 s) before the next attempt. None once the
/// run is over.
fn reconnect(shared: &Shared, st: &mut State) -> Option<Box<dyn Store>> {
    let mut wait = RECONNECT_WAIT;
    loop {
        let began = Instant::now();
        match store::open(&shared.plan.target, access(shared.plan)) {
            Ok(store) => return Some(store),
            Err(e) => {
                if !st.fail_unconnected(shared, &e, began.elapsed()) {
                    return None;
                }
                shared.sleep_within_run(wait);
                wait = (wait * 2).min(RECONNECT_WAIT_MAX);
            }
        }
    }
}

impl State {
    fn new(shared: &Shared, id: usize) -> State {
        let plan = shared.plan;
        State {
            start: shared.start(),
            rng: Xoshiro256PlusPlus::seed_from_u64(
                plan.seed ^ (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            chooser: KeyChooser::new(plan.keys, shared.first),
            tally: Tally::default(),
            buf: Vec::new(),
            pending: Vec::new(),
            batch_start: 0,
            done: Vec::new(),
            writer: id < plan.writers,
            excluded: Duration::ZERO,
            broken: false,
        }
    }

    /// Time since the run started, ns.
    pub fn since_start(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// The next operation's kind: an update for a writer thread, else
    /// drawn from the mix.
    pub fn draw(&mut self, plan: &MixedRunPlan) -> OpKind {
        if self.writer {
            OpKind::Update
        } else {
            plan.mix.draw(&mut self.rng)
        }
    }

    /// Counts one failed operation of `kind` (None: a batch's COMMIT),
    /// which took `took`: by class in its kind's tally, in the activity at
    /// this moment, and in the run's total (which may stop the run).
    pub fn count_failure(
        &mut self,
        shared: &Shared,
        kind: Option<OpKind>,
        class: FailureClass,
        message: &str,
        took: Duration,
    ) {
        let tally = match kind {
            Some(k) => &mut self.tally.kinds[k as usize],
            None => &mut self.tally.commits,
        };
        tally.failures.record(class, message);
        tally.failed.record(took.as_nanos() as u64);
        let at = self.since_start();
        self.tally.activity.failed_at(at);
        shared.count_failure();
    }

    /// Without a connection: claims the next batch and counts each of its
    /// operations failed with `e`, the attempt to connect, which took
    /// `took`. False when the run is over (nothing claimed).
    fn fail_unconnected(&mut self, shared: &Shared, e: &Error, took: Duration) -> bool {
        let plan = shared.plan;
        let Some(index) = shared.claim(u64::from(plan.batch)) else {
            return false;
        };
        if let Some(rate) = plan.rate
            && self.wait_until_due(shared, index, rate).is_none()
        {
            return false;
        }
        let (class, message) = (e.class(), e.to_string());
        for _ in 0..plan.batch {
            let kind = self.draw(plan);
            self.count_failure(shared, Some(kind), class, &message, took);
        }
        shared
            .done
            .fetch_add(u64::from(plan.batch), Ordering::Relaxed);
        true
    }

    /// Open loop: sleeps until operation `index` falls due; None when that
    /// is past the end of the run.
    pub fn wait_until_due(&mut self, shared: &Shared, index: u64, rate: f64) -> Option<Instant> {
        let offset = Duration::from_secs_f64(index as f64 / rate);
        if shared.plan.duration.is_some_and(|d| offset >= d) {
            return None;
        }
        let due = self.start + offset;
        // Sleep to just short of the due time, then spin: a sleep alone
        // overshoots by the kernel's timer slack (tens of microseconds),
        // lateness of the generator's own that would land in every
        // operation's latency (counted from the due time).
        let now = Instant::now();
        if due > now + SPIN {
            std::thread::sleep(due - now - SPIN);
        }
        while Instant::now() < due {
            std::hint::spin_loop();
        }
        self.tally
            .lag
            .record(Instant::now().saturating_duration_since(due).as_nanos() as u64);
        Some(due)
    }
}
