//! A worker's batches on one connection: each operation timed on its own,
//! every read judged, a busy lock rolling the batch back, any other
//! failure counted by class (the batch rolled back where the store can,
//! the connection marked broken where the failure may have broken it).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rand::Rng;

use super::MAX_SCAN;
use super::worker::{Pending, Worker};
use crate::error::{Error, Result};
use crate::result::mixed_run::OpKind;
use crate::workload::history::{Outcome, Seen, Verdict};

impl Worker<'_, '_, '_> {
    /// One batch: its operations drawn, a transaction around them when
    /// there are several; a failure ends the batch (see [`Self::abandon`]).
    pub(super) fn batch(&mut self, due: Option<Instant>) {
        let plan = self.shared.plan;
        let kinds: Vec<OpKind> = (0..plan.batch).map(|_| self.st.draw(plan)).collect();
        let writes = kinds.iter().any(|k| k.writes());
        self.st.batch_start = self.shared.history.now();
        if plan.batch > 1 {
            let began = Instant::now();
            let begun = if writes {
                self.session.begin_write()
            } else {
                self.session.begin()
            };
            if let Err(e) = begun {
                return self.abandon(Some(kinds[0]), e, began);
            }
        }
        for kind in kinds.iter().copied() {
            let start = due.unwrap_or_else(Instant::now);
            self.st.excluded = Duration::ZERO;
            match self.operation(kind) {
                Ok(bytes) => {
                    let took = start.elapsed().saturating_sub(self.st.excluded);
                    self.st.done.push((kind, took.as_nanos() as u64, bytes));
                }
                Err(e) => return self.abandon(Some(kind), e, start),
            }
        }
        if plan.batch > 1 {
            let start = Instant::now();
            if let Err(e) = self.session.commit() {
                return self.abandon(None, e, start);
            }
            let c = &mut self.st.tally.commits;
            c.latencies.record(start.elapsed().as_nanos() as u64);
            c.ops += 1;
        }
        self.committed();
    }

    /// Counts the batch's operations as done: all of them, or with
    /// `writes` false only its reads (its writes were rolled back, or
    /// their fate is unknown).
    fn count_done(&mut self, writes: bool) {
        let at = self.st.since_start();
        for (kind, ns, bytes) in self.st.done.drain(..) {
            if kind.writes() && !writes {
                continue;
            }
            let t = &mut self.st.tally.kinds[kind as usize];
            t.latencies.record(ns);
            t.ops += 1;
            t.bytes += bytes;
            self.st.tally.activity.completed_at(at);
        }
    }

    /// The batch's writes are in: they count as done, the history learns
    /// when, and committed inserts become keys the others may draw. A
    /// write whose call failed may or may not be in: its outcome is
    /// unknown, and a failed insert's key is put right afterwards.
    fn committed(&mut self) {
        self.count_done(true);
        let at = self.shared.history.now();
        for p in self.st.pending.drain(..) {
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
                self.st.tally.touched.push(p.key);
            }
        }
    }

    /// A failure inside the batch, of `kind` (None: its COMMIT), which
    /// began at `began`. A busy lock is counted as busy and the batch
    /// rolled back. Anything else is a failed operation: counted by class
    /// with how long it took and when, the batch rolled back where the
    /// store can, and the connection marked broken when the failure may
    /// have broken it (the worker opens a new one). A write that failed
    /// this way may still have landed (a timeout after the server applied
    /// it): its outcome stays unknown even when the rest rolls back.
    fn abandon(&mut self, kind: Option<OpKind>, e: Error, began: Instant) {
        if e.is_busy() {
            match kind {
                Some(k) => self.st.tally.kinds[k as usize].outcomes.busy += 1,
                None => self.st.tally.commits.outcomes.busy += 1,
            }
            return self.roll_back();
        }
        let class = e.class();
        self.st
            .count_failure(self.shared, kind, class, &e.to_string(), began.elapsed());
        if e.is_disk_full() {
            // Counted, and the end of the run: every write after it would
            // fail too, and the dataset must still be put right.
            self.shared
                .stop_early(format!("{}a write failed ({e})", super::OUT_OF_ROOM));
        }
        for p in (self.st.pending.iter_mut()).filter(|p| p.failed || kind.is_none()) {
            p.uncertain = true;
        }
        if class.breaks_connection() {
            self.st.broken = true;
        }
        self.roll_back();
    }

    /// Rolls the batch back; writes the store kept anyway count as done.
    /// Those it undid never happened: the history remembers their versions
    /// as never legal to read. A rollback that fails leaves every write of
    /// the batch of unknown outcome and the connection broken.
    fn roll_back(&mut self) {
        let undone = match self.session.rollback() {
            Ok(undone) => undone,
            Err(_) => {
                self.st.broken = true;
                return self.lost();
            }
        };
        if !undone {
            return self.committed();
        }
        // Reads happened; writes rolled back are not operations done.
        self.count_done(false);
        for p in self.st.pending.drain(..) {
            let outcome = if p.uncertain {
                Outcome::Unknown
            } else {
                Outcome::RolledBack
            };
            self.shared.history.end_write(p.key, p.id, outcome);
            if p.insert || (p.delete && p.uncertain) {
                self.st.tally.touched.push(p.key);
            }
        }
    }

    /// The batch's fate is unknown (its connection broke): its reads count,
    /// its writes may or may not have landed.
    fn lost(&mut self) {
        self.count_done(false);
        for p in self.st.pending.drain(..) {
            self.shared.history.end_write(p.key, p.id, Outcome::Unknown);
            if p.insert || p.delete {
                self.st.tally.touched.push(p.key);
            }
        }
    }

    /// One operation; returns the blob bytes it moved.
    fn operation(&mut self, kind: OpKind) -> Result<u64> {
        let last = self.shared.visible_last.load(Ordering::Relaxed);
        match kind {
            OpKind::Read => {
                let key = self.st.chooser.next(last, &mut self.st.rng);
                self.read(kind, key)
            }
            OpKind::Update => {
                let key = self.st.chooser.next(last, &mut self.st.rng);
                self.write(kind, key)
            }
            OpKind::ReadModifyWrite => {
                let key = self.st.chooser.next(last, &mut self.st.rng);
                Ok(self.read(kind, key)? + self.write(kind, key)?)
            }
            OpKind::Insert => {
                let key = self.shared.next_insert.fetch_add(1, Ordering::Relaxed);
                // Named in the run's journal before it is written: not
                // part of the operation's time.
                let journaling = Instant::now();
                let named = self.shared.journal_key(key);
                self.st.excluded += journaling.elapsed();
                if named.is_err() {
                    // Never written, but a key the run skipped: put right.
                    self.st.tally.touched.push(key);
                }
                named?;
                self.write(kind, key)
            }
            OpKind::Delete => {
                let key = self.st.chooser.next(last, &mut self.st.rng);
                self.delete(key)
            }
            OpKind::Scan => {
                let key = self.st.chooser.next(last, &mut self.st.rng);
                let len = self.st.rng.random_range(1..=MAX_SCAN);
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
            self.st.batch_start
        } else {
            shared.history.now()
        };
        let spec = shared.spec.as_ref().filter(|_| shared.plan.verify);
        let mut n = 0u64;
        let mut checking = Duration::ZERO;
        // The check takes the blob piece by piece as the store hands it
        // over, so a store whose bytes arrive in pieces never gathers them.
        let mut check = spec.map(|s| s.check_pieces_remembering(key, &shared.checked));
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
        self.st.excluded += checking;
        let t1 = shared.history.now();
        let seen = match read {
            Ok(()) => match found {
                Some(Some(v)) => Seen::Version(v),
                Some(None) => {
                    self.st.tally.kinds[kind as usize].outcomes.torn += 1;
                    return Ok(n);
                }
                None => return Ok(n),
            },
            Err(Error::MissingKey { .. }) => Seen::Missing,
            Err(e) => return Err(e),
        };
        let outcomes = &mut self.st.tally.kinds[kind as usize].outcomes;
        if seen == Seen::Missing {
            outcomes.missing += 1;
        }
        if spec.is_none() {
            return Ok(n);
        }
        match shared.history.judge(key, t0, t1, seen) {
            Verdict::Legal => self.st.tally.verified += 1,
            Verdict::Stale => outcomes.stale += 1,
            Verdict::Unjudged => self.st.tally.unjudged += 1,
        }
        Ok(n)
    }

    /// Writes a new version of `key` (an insert when `kind` is Insert).
    fn write(&mut self, kind: OpKind, key: u64) -> Result<u64> {
        let shared = self.shared;
        let spec = shared.spec.as_ref().expect("write mixes need a manifest");
        let version = shared.version();
        let making = Instant::now();
        spec.fill(key, version, &mut self.st.buf);
        self.st.excluded += making.elapsed();
        let id = shared.history.begin_write(key, Some(version));
        let done = if kind == OpKind::Insert {
            self.session.insert(key, &self.st.buf)
        } else {
            self.session.update(key, &self.st.buf)
        };
        if let Err(Error::MissingKey { .. }) = done {
            // Nothing was written: the version never exists.
            shared.history.end_write(key, id, Outcome::RolledBack);
            self.st.tally.kinds[kind as usize].outcomes.missing += 1;
            return Ok(0);
        }
        // A failure is ended with the batch: rolled back, or of unknown
        // outcome where the store could not undo it.
        self.st.pending.push(Pending {
            key,
            id,
            delete: false,
            insert: kind == OpKind::Insert,
            failed: done.is_err(),
            uncertain: false,
        });
        done.map(|()| self.st.buf.len() as u64)
    }

    fn delete(&mut self, key: u64) -> Result<u64> {
        let id = self.shared.history.begin_write(key, None);
        let done = self.session.delete(key);
        if done.is_ok()
            && let Some(spec) = &self.shared.spec
        {
            // Put back afterwards: the room it took stays kept.
            let bytes = super::room::on_disk(spec.size_of(key) as u64);
            self.shared.owed.fetch_add(bytes, Ordering::Relaxed);
        }
        if let Err(Error::MissingKey { .. }) = done {
            // Nothing was deleted.
            self.shared.history.end_write(key, id, Outcome::RolledBack);
            self.st.tally.kinds[OpKind::Delete as usize]
                .outcomes
                .missing += 1;
            return Ok(0);
        }
        self.st.pending.push(Pending {
            key,
            id,
            delete: true,
            insert: false,
            failed: done.is_err(),
            uncertain: false,
        });
        done.map(|()| 0)
    }
}
