//! One worker of a concurrent run: its own store and session, batches of
//! operations drawn from the mix, each timed on its own, every read judged.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{MAX_SCAN, Shared};
use crate::error::{Error, Result};
use crate::measure::latency::Latencies;
use crate::result::concurrent::Outcomes;
use crate::store::{self, Access, Session};
use crate::workload::history::{Outcome, Seen, Verdict};
use crate::workload::keys::KeyChooser;
use crate::workload::mix::OpKind;

/// How long before an operation falls due an open-loop worker stops
/// sleeping and spins.
const SPIN: Duration = Duration::from_micros(200);

/// One kind's figures in one worker.
#[derive(Default)]
pub(super) struct KindTally {
    pub latencies: Latencies,
    pub ops: u64,
    pub bytes: u64,
    pub outcomes: Outcomes,
}

impl KindTally {
    fn absorb(&mut self, o: KindTally) {
        self.latencies.merge(&o.latencies);
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.outcomes.add(&o.outcomes);
    }
}

/// Everything one worker measured.
#[derive(Default)]
pub(super) struct Tally {
    /// Indexed by `OpKind as usize`.
    pub kinds: [KindTally; 6],
    pub commits: KindTally,
    pub verified: u64,
    pub unjudged: u64,
    /// Open loop: how late each operation started.
    pub lag: Latencies,
    /// Keys deleted, or inserts that did not land: written back afterwards.
    pub touched: Vec<u64>,
}

impl Tally {
    pub(super) fn absorb(&mut self, o: Tally) {
        for (mine, theirs) in self.kinds.iter_mut().zip(o.kinds) {
            mine.absorb(theirs);
        }
        self.commits.absorb(o.commits);
        self.verified += o.verified;
        self.unjudged += o.unjudged;
        self.lag.merge(&o.lag);
        self.touched.extend(o.touched);
    }
}

/// A write done (or tried) in the open batch, recorded in the history
/// when the batch ends.
struct Pending {
    key: u64,
    /// Its id in the history.
    id: u64,
    delete: bool,
    insert: bool,
    /// Its call failed (busy): the store may or may not have applied it,
    /// unless the batch is rolled back.
    failed: bool,
}

/// A worker's state between operations.
struct Worker<'s, 'a> {
    shared: &'s Shared<'a>,
    /// When the run started (every worker the same).
    start: Instant,
    session: Box<dyn Session + 's>,
    rng: Xoshiro256PlusPlus,
    chooser: KeyChooser,
    tally: Tally,
    buf: Vec<u8>,
    pending: Vec<Pending>,
    /// Logical time the open batch began (reads in it may see its snapshot).
    batch_start: u64,
    /// The open batch's completed operations: (kind, ns, bytes), counted
    /// once the batch commits.
    done: Vec<(OpKind, u64, u64)>,
    /// One of the plan's writer threads: it only updates.
    writer: bool,
    /// Time spent in the current operation on work that is not it (making
    /// a blob to write, checking one read), left out of its latency.
    excluded: Duration,
}

/// Runs worker `id` until the run ends; an error that is not a busy lock
/// stops every worker.
pub(super) fn run(shared: &Shared, id: usize) -> Result<Tally> {
    let plan = shared.plan;
    let access = if plan.writes() {
        Access::ReadWrite
    } else {
        Access::ReadOnly
    };
    // Every worker opens first, then all start together (a failure to open
    // still meets the others at the barrier, which they would wait at
    // forever otherwise).
    let mut store = match store::open(&plan.target, access) {
        Ok(s) => s,
        Err(e) => {
            shared.ready.wait();
            return Err(e);
        }
    };
    let session = store
        .session(crate::store::SessionOptions {
            per_op_transaction: plan.batch == 1,
            ..plan.session
        })
        .and_then(|mut s| s.wait_for_locks(plan.busy_timeout).map(|()| s))
        .map(|s| match shared.wrap {
            Some(w) => w.wrap(s),
            None => s,
        });
    shared.ready.wait();
    let session = session?;
    let start = shared.start();
    let mut w = Worker {
        start,
        shared,
        session,
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
    };
    while let Some(index) = shared.claim(u64::from(plan.batch)) {
        let due = match plan.rate {
            Some(rate) => match w.wait_until_due(index, rate) {
                Some(due) => Some(due),
                None => break,
            },
            None => None,
        };
        w.batch(due)?;
        shared
            .done
            .fetch_add(u64::from(plan.batch), Ordering::Relaxed);
    }
    Ok(w.tally)
}

impl Worker<'_, '_> {
    /// Open loop: sleeps until operation `index` falls due; None when that
    /// is past the end of the run.
    fn wait_until_due(&mut self, index: u64, rate: f64) -> Option<Instant> {
        let offset = Duration::from_secs_f64(index as f64 / rate);
        if self.shared.plan.duration.is_some_and(|d| offset >= d) {
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

    /// One batch: its operations drawn, a transaction around them when
    /// there are several, a busy lock rolling it all back.
    fn batch(&mut self, due: Option<Instant>) -> Result<()> {
        let plan = self.shared.plan;
        let kinds: Vec<OpKind> = (0..plan.batch)
            .map(|_| {
                if self.writer {
                    OpKind::Update
                } else {
                    plan.mix.draw(&mut self.rng)
                }
            })
            .collect();
        let writes = kinds.iter().any(|k| k.writes());
        self.batch_start = self.shared.history.now();
        if plan.batch > 1 {
            let begun = if writes {
                self.session.begin_write()
            } else {
                self.session.begin()
            };
            if let Err(e) = begun {
                return self.abandon(kinds[0], e);
            }
        }
        for kind in kinds.iter().copied() {
            let start = due.unwrap_or_else(Instant::now);
            self.excluded = Duration::ZERO;
            match self.operation(kind) {
                Ok(bytes) => {
                    let took = start.elapsed().saturating_sub(self.excluded);
                    self.done.push((kind, took.as_nanos() as u64, bytes));
                }
                Err(e) => return self.abandon(kind, e),
            }
        }
        if plan.batch > 1 {
            let start = Instant::now();
            if let Err(e) = self.session.commit() {
                return self.abandon_commit(e);
            }
            let c = &mut self.tally.commits;
            c.latencies.record(start.elapsed().as_nanos() as u64);
            c.ops += 1;
        }
        self.committed();
        Ok(())
    }

    /// Counts the batch's operations as done: all of them, or with
    /// `writes` false only its reads (its writes were rolled back).
    fn count_done(&mut self, writes: bool) {
        for (kind, ns, bytes) in self.done.drain(..) {
            if kind.writes() && !writes {
                continue;
            }
            let t = &mut self.tally.kinds[kind as usize];
            t.latencies.record(ns);
            t.ops += 1;
            t.bytes += bytes;
        }
    }

    /// The batch's writes are in: they count as done, the history learns
    /// when, and committed inserts become keys the others may draw. A
    /// write whose call failed may or may not be in: its outcome is
    /// unknown, and a failed insert's key is put right afterwards.
    fn committed(&mut self) {
        self.count_done(true);
        let at = self.shared.history.now();
        for p in self.pending.drain(..) {
            let outcome = if p.failed {
                Outcome::Unknown
            } else {
                Outcome::Committed(at)
            };
            self.shared.history.end_write(p.key, p.id, outcome);
            if p.insert && !p.failed {
                self.shared.visible_last.fetch_max(p.key, Ordering::Relaxed);
            }
            if p.delete || (p.insert && p.failed) {
                self.tally.touched.push(p.key);
            }
        }
    }

    /// A failure inside the batch: a busy lock is counted against `kind`
    /// and the batch rolled back; anything else ends the run.
    fn abandon(&mut self, kind: OpKind, e: Error) -> Result<()> {
        if !e.is_busy() {
            return Err(e);
        }
        self.tally.kinds[kind as usize].outcomes.busy += 1;
        self.roll_back()
    }

    fn abandon_commit(&mut self, e: Error) -> Result<()> {
        if !e.is_busy() {
            return Err(e);
        }
        self.tally.commits.outcomes.busy += 1;
        self.roll_back()
    }

    /// Rolls the batch back; writes the store kept anyway count as done.
    /// Those it undid never happened: the history remembers their versions
    /// as never legal to read.
    fn roll_back(&mut self) -> Result<()> {
        let undone = self.session.rollback()?;
        if !undone {
            self.committed();
            return Ok(());
        }
        // Reads happened; writes rolled back are not operations done.
        self.count_done(false);
        for p in self.pending.drain(..) {
            self.shared
                .history
                .end_write(p.key, p.id, Outcome::RolledBack);
            if p.insert {
                self.tally.touched.push(p.key);
            }
        }
        Ok(())
    }

    /// One operation; returns the blob bytes it moved.
    fn operation(&mut self, kind: OpKind) -> Result<u64> {
        let last = self.shared.visible_last.load(Ordering::Relaxed);
        match kind {
            OpKind::Read => {
                let key = self.chooser.next(last, &mut self.rng);
                self.read(kind, key)
            }
            OpKind::Update => {
                let key = self.chooser.next(last, &mut self.rng);
                self.write(kind, key)
            }
            OpKind::ReadModifyWrite => {
                let key = self.chooser.next(last, &mut self.rng);
                Ok(self.read(kind, key)? + self.write(kind, key)?)
            }
            OpKind::Insert => {
                let key = self.shared.next_insert.fetch_add(1, Ordering::Relaxed);
                self.write(kind, key)
            }
            OpKind::Delete => {
                let key = self.chooser.next(last, &mut self.rng);
                self.delete(key)
            }
            OpKind::Scan => {
                let key = self.chooser.next(last, &mut self.rng);
                let len = self.rng.random_range(1..=MAX_SCAN);
                let mut bytes = 0;
                for k in key..=(key + len - 1).min(last) {
                    bytes += self.read(kind, k)?;
                }
                Ok(bytes)
            }
        }
    }

    /// Reads `key` whole, checks its bytes (outside nothing: the check runs
    /// on the store's buffer) and judges the version found.
    fn read(&mut self, kind: OpKind, key: u64) -> Result<u64> {
        let shared = self.shared;
        let t0 = if shared.plan.batch > 1 {
            self.batch_start
        } else {
            shared.history.now()
        };
        let spec = shared.spec.as_ref().filter(|_| shared.plan.verify);
        let mut n = 0u64;
        let mut checking = Duration::ZERO;
        // The check takes the blob piece by piece as the store hands it
        // over, so a store whose bytes arrive in pieces never gathers them.
        let mut check = spec.map(|s| s.check_pieces(key));
        let read = self.session.read_pieces(key, &mut |d| {
            let c = Instant::now();
            n += d.len() as u64;
            if let Some(check) = check.as_mut() {
                check.feed(d);
            }
            checking += c.elapsed();
        });
        let c = Instant::now();
        let found = check.map(|c| c.finish().ok());
        checking += c.elapsed();
        self.excluded += checking;
        let t1 = shared.history.now();
        let seen = match read {
            Ok(()) => match found {
                Some(Some(v)) => Seen::Version(v),
                Some(None) => {
                    self.tally.kinds[kind as usize].outcomes.torn += 1;
                    return Ok(n);
                }
                None => return Ok(n),
            },
            Err(Error::MissingKey { .. }) => Seen::Missing,
            Err(e) => return Err(e),
        };
        let outcomes = &mut self.tally.kinds[kind as usize].outcomes;
        if seen == Seen::Missing {
            outcomes.missing += 1;
        }
        if spec.is_none() {
            return Ok(n);
        }
        match shared.history.judge(key, t0, t1, seen) {
            Verdict::Legal => self.tally.verified += 1,
            Verdict::Stale => outcomes.stale += 1,
            Verdict::Unjudged => self.tally.unjudged += 1,
        }
        Ok(n)
    }

    /// Writes a new version of `key` (an insert when `kind` is Insert).
    fn write(&mut self, kind: OpKind, key: u64) -> Result<u64> {
        let shared = self.shared;
        let spec = shared.spec.as_ref().expect("write mixes need a manifest");
        let version = shared.version();
        let making = Instant::now();
        spec.fill(key, version, &mut self.buf);
        self.excluded += making.elapsed();
        let id = shared.history.begin_write(key, Some(version));
        let done = if kind == OpKind::Insert {
            self.session.insert(key, &self.buf)
        } else {
            self.session.update(key, &self.buf)
        };
        if let Err(Error::MissingKey { .. }) = done {
            // Nothing was written: the version never exists.
            shared.history.end_write(key, id, Outcome::RolledBack);
            self.tally.kinds[kind as usize].outcomes.missing += 1;
            return Ok(0);
        }
        // A failure is ended with the batch: rolled back, or of unknown
        // outcome where the store could not undo it.
        self.pending.push(Pending {
            key,
            id,
            delete: false,
            insert: kind == OpKind::Insert,
            failed: done.is_err(),
        });
        done.map(|()| self.buf.len() as u64)
    }

    fn delete(&mut self, key: u64) -> Result<u64> {
        let id = self.shared.history.begin_write(key, None);
        let done = self.session.delete(key);
        if let Err(Error::MissingKey { .. }) = done {
            // Nothing was deleted.
            self.shared.history.end_write(key, id, Outcome::RolledBack);
            self.tally.kinds[OpKind::Delete as usize].outcomes.missing += 1;
            return Ok(0);
        }
        self.pending.push(Pending {
            key,
            id,
            delete: true,
            insert: false,
            failed: done.is_err(),
        });
        done.map(|()| 0)
    }
}
