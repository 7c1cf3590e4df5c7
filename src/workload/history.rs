//! What a read may legally return while other workers write. Every write
//! (update, insert, delete) is recorded with the logical times it began
//! and ended (its call returned and its transaction committed); its effect
//! took place at some moment in between, which the worker cannot see. A
//! read that ran from `t0` to `t1` may return the state of a write `w` that
//! began before `t1`, unless another write surely came after `w` and surely
//! took effect before the read began (it began after `w` ended and ended
//! before `t0`). A write ends in one of three ways ([`Outcome`]): committed;
//! rolled back, whose state is never legal (the store undid it); or with
//! an outcome unknown (an error after which the store may or may not have
//! applied it), whose state stays legal from its start on and which never
//! surely replaced anything. The dataset's state before the run (the
//! version each key held, learned before the run; missing for a key the
//! run inserts) is legal until some write has surely taken effect before
//! the read. Anything else is a stale read: a rolled-back version, a
//! version older than the dataset's, a replaced one. Bytes that are no
//! version at all are a torn read (the content check finds those).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes (and rolled-back versions) kept per key: a read spanning more
/// writes of one key than this is judged only for its content.
const KEPT: usize = 16;

/// Shards of the per-key records, so workers rarely wait on one another.
const SHARDS: usize = 64;

/// A key's initial version not learned (no version is this: versions are
/// below 2^63).
const NOT_LEARNED: u64 = u64::MAX;

/// One write of one key that took effect or may have.
#[derive(Debug, Clone, Copy)]
struct Write {
    /// The version written; None for a delete.
    version: Option<u64>,
    /// Logical time the write began.
    start: u64,
    /// Logical time it committed (u64::MAX while in flight, and for ever
    /// when its outcome is unknown).
    end: u64,
}

/// What the run did to one key.
#[derive(Debug, Default)]
struct KeyWrites {
    /// Writes committed, in flight or of unknown outcome, oldest first.
    writes: Vec<Write>,
    /// Versions whose writes were rolled back: never legal to read.
    rolled_back: Vec<u64>,
    /// Writes were dropped to keep `KEPT`: a state none of `writes`
    /// explains may be one of theirs.
    dropped: bool,
    /// The latest end of a dropped write (u64::MAX when one was still in
    /// flight or of unknown outcome): a committed write begun after it
    /// surely replaced every dropped one.
    dropped_end: u64,
}

/// How a write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its transaction committed; the time is one taken after the commit
    /// returned.
    Committed(u64),
    /// It never took effect: its transaction was rolled back (or the store
    /// refused it, the key missing). Reading its version is stale.
    RolledBack,
    /// It failed in a way that may or may not have applied it: its state
    /// may be read from its start on, and it never surely replaced another.
    Unknown,
}

/// What a read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// An intact blob at this version.
    Version(u64),
    /// No blob under the key.
    Missing,
}

/// How a read is judged against the writes that ran around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A state the key could legally be in.
    Legal,
    /// A state older than the one committed before the read began, a
    /// rolled-back write's, a version older than the dataset's (or a
    /// missing key that no delete explains).
    Stale,
    /// Too many writes of the key ran during the read to tell.
    Unjudged,
}

/// What a key held before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Before {
    /// No blob: a key the run inserts.
    Missing,
    /// A blob at this version, or at a version not learned.
    Version(Option<u64>),
}

/// The writes of every key during one run, a logical clock, and the
/// version each key of the dataset held before the run.
pub struct History {
    clock: AtomicU64,
    shards: Vec<Mutex<HashMap<u64, KeyWrites>>>,
    /// The dataset's keys before the run: `first..=last`.
    first: u64,
    last: u64,
    /// Per key from `first`: the version it held before the run, or
    /// `NOT_LEARNED`. Empty when versions are not learned.
    initial: Vec<AtomicU64>,
}

impl History {
    /// The history of a run over a dataset of keys `first..=last` (keys
    /// past `last` are the run's inserts). With `learn`, it keeps the
    /// version each key held before the run, once told ([`Self::learn`]):
    /// a read of any other version the run did not write is then stale;
    /// without it, any such version counts as the state before the run.
    pub fn new(first: u64, last: u64, learn: bool) -> History {
        let keys = if learn && last >= first {
            last - first + 1
        } else {
            0
        };
        History {
            clock: AtomicU64::new(1),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            first,
            last,
            initial: (0..keys).map(|_| AtomicU64::new(NOT_LEARNED)).collect(),
        }
    }

    /// Records the version `key` held before the run (learned before any
    /// write began; the caller orders this before every `judge`).
    pub fn learn(&self, key: u64, version: u64) {
        if let Some(slot) = key
            .checked_sub(self.first)
            .and_then(|i| self.initial.get(usize::try_from(i).ok()?))
        {
            slot.store(version, Ordering::Relaxed);
        }
    }

    /// What `key` held before the run.
    fn before(&self, key: u64) -> Before {
        if key < self.first || key > self.last {
            return Before::Missing;
        }
        let learned = usize::try_from(key - self.first)
            .ok()
            .and_then(|i| self.initial.get(i))
            .map(|v| v.load(Ordering::Relaxed))
            .filter(|&v| v != NOT_LEARNED);
        Before::Version(learned)
    }

    /// The logical time now: later calls (on any thread) get larger ones.
    pub fn now(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::SeqCst)
    }

    fn shard(&self, key: u64) -> std::sync::MutexGuard<'_, HashMap<u64, KeyWrites>> {
        let shard = &self.shards[(key % SHARDS as u64) as usize];
        shard.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that a write of `key` (`version`, or a delete) begins now;
    /// returns its id for `end_write`.
    pub fn begin_write(&self, key: u64, version: Option<u64>) -> u64 {
        let start = self.now();
        let mut shard = self.shard(key);
        let k = shard.entry(key).or_default();
        k.writes.push(Write {
            version,
            start,
            end: u64::MAX,
        });
        if k.writes.len() > KEPT {
            let gone = k.writes.remove(0);
            k.dropped_end = if k.dropped {
                k.dropped_end.max(gone.end)
            } else {
                gone.end
            };
            k.dropped = true;
        }
        start
    }

    /// The write `id` of `key` ended with `outcome`.
    pub fn end_write(&self, key: u64, id: u64, outcome: Outcome) {
        let mut shard = self.shard(key);
        let Some(k) = shard.get_mut(&key) else {
            return;
        };
        let Some(i) = k.writes.iter().position(|w| w.start == id) else {
            return;
        };
        match outcome {
            Outcome::Committed(t) => k.writes[i].end = t,
            Outcome::Unknown => {}
            Outcome::RolledBack => {
                let w = k.writes.remove(i);
                if let Some(v) = w.version {
                    k.rolled_back.push(v);
                    if k.rolled_back.len() > KEPT {
                        k.rolled_back.remove(0);
                    }
                }
            }
        }
    }

    /// Judges a read of `key` that began at `t0` and ended at `t1`.
    pub fn judge(&self, key: u64, t0: u64, t1: u64, seen: Seen) -> Verdict {
        let before = self.before(key);
        let shard = self.shard(key);
        let k = shard.get(&key);
        let writes = k.map_or(&[][..], |k| k.writes.as_slice());
        let rolled_back = k.map_or(&[][..], |k| k.rolled_back.as_slice());
        let dropped = k.is_some_and(|k| k.dropped);
        // A write that surely took effect after `w` and before the read.
        let overwritten = |w_end: u64| writes.iter().any(|w2| w2.start > w_end && w2.end < t0);
        let by_write = writes
            .iter()
            .any(|w| state_of(w) == seen && w.start < t1 && !overwritten(w.end));
        let rolled = matches!(seen, Seen::Version(v) if rolled_back.contains(&v));
        let ours = writes.iter().any(|w| state_of(w) == seen);
        let initial_state = match (before, seen) {
            (Before::Missing, Seen::Missing) => true,
            (Before::Version(Some(v0)), Seen::Version(v)) => v == v0,
            // Not learned: any version this run did not write.
            (Before::Version(None), Seen::Version(_)) => !ours && !rolled,
            _ => false,
        };
        // The state before the run holds until a write surely replaced it.
        let by_initial = initial_state && !writes.iter().any(|w| w.end < t0);
        // The learned version before the run, surely replaced: no write of
        // this run (dropped or not) wrote it.
        let replaced_initial = initial_state && matches!(before, Before::Version(Some(_)));
        if by_write || by_initial {
            Verdict::Legal
        } else if rolled || replaced_initial {
            Verdict::Stale
        } else if dropped {
            // The state may be a dropped write's.
            Verdict::Unjudged
        } else {
            Verdict::Stale
        }
    }
}

/// What a key may hold once every write of a run has ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// Versions of writes no committed write surely followed.
    pub versions: Vec<u64>,
    /// The key may be missing (a delete no committed write followed).
    pub missing: bool,
    /// The key may still hold what it held before the run (no write of it
    /// surely took effect).
    pub before: bool,
    /// More writes of the key than are kept: what it holds cannot be told.
    pub unknown: bool,
}

impl History {
    /// Every key the run wrote (or tried to).
    pub fn written_keys(&self) -> Vec<u64> {
        let mut keys: Vec<u64> = self
            .shards
            .iter()
            .flat_map(|s| {
                let shard = s.lock().unwrap_or_else(|e| e.into_inner());
                shard.keys().copied().collect::<Vec<_>>()
            })
            .collect();
        keys.sort_unstable();
        keys
    }

    /// What `key` may hold now that every write of the run has ended: the
    /// state of a write unless a committed write began after it ended.
    pub fn settled(&self, key: u64) -> Settled {
        let shard = self.shard(key);
        let Some(k) = shard.get(&key) else {
            return Settled {
                versions: Vec::new(),
                missing: false,
                before: true,
                unknown: false,
            };
        };
        let committed_after = |end: u64| {
            k.writes
                .iter()
                .any(|w2| w2.start > end && w2.end != u64::MAX)
        };
        let mut settled = Settled {
            versions: Vec::new(),
            missing: false,
            before: !k.dropped && k.writes.iter().all(|w| w.end == u64::MAX),
            unknown: k.dropped && !committed_after(k.dropped_end),
        };
        for w in k.writes.iter().filter(|w| !committed_after(w.end)) {
            match w.version {
                Some(v) => settled.versions.push(v),
                None => settled.missing = true,
            }
        }
        settled
    }
}

fn state_of(w: &Write) -> Seen {
    w.version.map_or(Seen::Missing, Seen::Version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Seen::{Missing, Version};
    use Verdict::{Legal, Stale, Unjudged};

    /// A dataset of keys 1..=100, versions not learned.
    fn unlearned() -> History {
        History::new(1, 100, false)
    }

    /// A write of `key` begun and committed now; returns its (start, end).
    fn write(h: &History, key: u64, version: Option<u64>) -> (u64, u64) {
        let id = h.begin_write(key, version);
        let end = h.now();
        h.end_write(key, id, Outcome::Committed(end));
        (id, end)
    }

    /// A write of `key` begun now and ended with `outcome`.
    fn ended(h: &History, key: u64, version: Option<u64>, outcome: Outcome) {
        let id = h.begin_write(key, version);
        h.end_write(key, id, outcome);
    }

    /// The verdict on a read of `key` begun and ended now.
    fn read_now(h: &History, key: u64, seen: Seen) -> Verdict {
        let t0 = h.now();
        h.judge(key, t0, h.now(), seen)
    }

    #[test]
    fn a_read_sees_the_last_write_or_one_it_overlapped() {
        let h = unlearned();
        let t_before = h.now();
        // Untouched key: any intact version of the dataset is legal; missing is not.
        assert_eq!(h.judge(1, t_before, h.now(), Version(77)), Legal);
        assert_eq!(h.judge(1, t_before, h.now(), Missing), Stale);
        let id = h.begin_write(1, Some(100));
        let during = h.now();
        h.end_write(1, id, Outcome::Committed(h.now()));
        let (after, t1) = (h.now(), h.now());
        // A read wholly after the write must see it.
        assert_eq!(h.judge(1, after, t1, Version(100)), Legal);
        assert_eq!(h.judge(1, after, t1, Version(77)), Stale);
        // A read overlapping the write may see either.
        assert_eq!(h.judge(1, t_before, during, Version(100)), Legal);
        assert_eq!(h.judge(1, t_before, during, Version(77)), Legal);
        // A delete, then the key is legally missing and the old version stale.
        write(&h, 1, None);
        assert_eq!(read_now(&h, 1, Missing), Legal);
        assert_eq!(read_now(&h, 1, Version(100)), Stale);
    }

    #[test]
    fn of_two_writes_that_overlapped_either_may_have_landed_last() {
        let h = unlearned();
        let a = h.begin_write(2, Some(1));
        let b = h.begin_write(2, Some(2));
        h.end_write(2, b, Outcome::Committed(h.now()));
        h.end_write(2, a, Outcome::Committed(h.now()));
        assert_eq!(read_now(&h, 2, Version(1)), Legal);
        assert_eq!(read_now(&h, 2, Version(2)), Legal);
        // A third write begun after both ended surely came last.
        write(&h, 2, Some(3));
        assert_eq!(read_now(&h, 2, Version(3)), Legal);
        assert_eq!(read_now(&h, 2, Version(1)), Stale);
        assert_eq!(read_now(&h, 2, Version(2)), Stale);
    }

    #[test]
    fn a_rolled_back_write_is_never_legal_to_read() {
        for learn in [false, true] {
            let h = History::new(1, 100, learn);
            h.learn(9, 5);
            // A read that overlapped the write, judged before it ended,
            // may have seen it in flight ...
            let t0 = h.now();
            let id = h.begin_write(9, Some(1));
            assert_eq!(h.judge(9, t0, h.now(), Version(1)), Legal);
            // ... but once it is rolled back, its version never happened:
            // not at all a version from before the run.
            h.end_write(9, id, Outcome::RolledBack);
            assert_eq!(h.judge(9, t0, h.now(), Version(1)), Stale, "{learn}");
            assert_eq!(read_now(&h, 9, Version(1)), Stale, "{learn}");
            // The state before the run still holds.
            assert_eq!(read_now(&h, 9, Version(5)), Legal, "{learn}");
            // Nor did a rolled-back delete or insert happen.
            ended(&h, 9, None, Outcome::RolledBack);
            assert_eq!(read_now(&h, 9, Missing), Stale, "{learn}");
            ended(&h, 150, Some(3), Outcome::RolledBack);
            assert_eq!(read_now(&h, 150, Version(3)), Stale, "{learn}");
            assert_eq!(read_now(&h, 150, Missing), Legal, "{learn}");
            // ... and an inserted key nobody wrote may not be read.
            assert_eq!(read_now(&h, 151, Version(3)), Stale, "{learn}");
        }
    }

    #[test]
    fn a_write_of_unknown_outcome_may_or_may_not_have_landed_for_good() {
        let h = History::new(1, 100, true);
        h.learn(9, 5);
        ended(&h, 9, Some(1), Outcome::Unknown);
        // Either state may be there, however late the read ...
        assert_eq!(read_now(&h, 9, Version(1)), Legal);
        assert_eq!(read_now(&h, 9, Version(5)), Legal);
        // ... and a write committed after it replaces the state before the
        // run, yet may itself have been overtaken by the unknown one.
        write(&h, 9, Some(2));
        assert_eq!(read_now(&h, 9, Version(2)), Legal);
        assert_eq!(read_now(&h, 9, Version(1)), Legal);
        assert_eq!(read_now(&h, 9, Version(5)), Stale);
        // An insert of unknown outcome: the key may hold it or nothing.
        ended(&h, 150, Some(3), Outcome::Unknown);
        assert_eq!(read_now(&h, 150, Version(3)), Legal);
        assert_eq!(read_now(&h, 150, Missing), Legal);
    }

    #[test]
    fn once_learned_only_the_datasets_version_is_the_state_before_the_run() {
        let h = History::new(1, 100, true);
        h.learn(1, 77);
        assert_eq!(read_now(&h, 1, Version(77)), Legal);
        // An older version (or any other the run did not write) is stale.
        assert_eq!(read_now(&h, 1, Version(0)), Stale);
        assert_eq!(read_now(&h, 1, Version(76)), Stale);
        assert_eq!(read_now(&h, 1, Missing), Stale);
        // A key whose version was not learned takes any version.
        assert_eq!(read_now(&h, 2, Version(0)), Legal);
        // Keys outside the dataset are not learned: they were missing.
        h.learn(101, 4);
        assert_eq!(read_now(&h, 101, Version(4)), Stale);
        assert_eq!(read_now(&h, 101, Missing), Legal);
        // Once a write surely replaced it, the dataset's version is stale.
        write(&h, 1, Some(500));
        assert_eq!(read_now(&h, 1, Version(500)), Legal);
        assert_eq!(read_now(&h, 1, Version(77)), Stale);
        // Without learning, the old behaviour: any version not the run's.
        let h = unlearned();
        h.learn(1, 77);
        assert_eq!(read_now(&h, 1, Version(0)), Legal);
    }

    #[test]
    fn too_many_writes_of_one_key_are_not_judged() {
        for learn in [false, true] {
            let h = History::new(1, 100, learn);
            h.learn(4, 1000);
            ended(&h, 4, Some(999), Outcome::RolledBack);
            for v in 0..KEPT as u64 + 3 {
                write(&h, 4, Some(v));
            }
            assert_eq!(read_now(&h, 4, Version(0)), Unjudged, "{learn}");
            assert_eq!(read_now(&h, 4, Version(KEPT as u64 + 2)), Legal);
            // A rolled-back version is stale however many writes followed.
            assert_eq!(read_now(&h, 4, Version(999)), Stale, "{learn}");
            // So is the learned version before the run, surely replaced;
            // unlearned, it might be a dropped write's.
            let want = if learn { Stale } else { Unjudged };
            assert_eq!(read_now(&h, 4, Version(1000)), want, "{learn}");
        }
    }

    #[test]
    fn a_rolled_back_write_does_not_hide_that_older_writes_were_dropped() {
        let h = unlearned();
        for v in 0..KEPT as u64 + 1 {
            write(&h, 4, Some(v));
        }
        ended(&h, 4, Some(999), Outcome::RolledBack);
        // Version 0 was dropped: fewer than KEPT writes remain, yet it may
        // be the state read.
        assert_eq!(read_now(&h, 4, Version(0)), Unjudged);
    }

    #[test]
    fn once_the_run_ends_only_the_last_acknowledged_write_is_settled() {
        let h = History::new(1, 100, true);
        assert!(h.settled(7).before, "an untouched key");
        write(&h, 1, Some(10));
        write(&h, 1, Some(11));
        let s = h.settled(1);
        assert_eq!((s.versions, s.before, s.unknown), (vec![11], false, false));
        // Two that overlapped: either may have landed last.
        let a = h.begin_write(2, Some(20));
        let b = h.begin_write(2, Some(21));
        h.end_write(2, a, Outcome::Committed(h.now()));
        h.end_write(2, b, Outcome::Committed(h.now()));
        assert_eq!(h.settled(2).versions, vec![20, 21]);
        // An unknown outcome after a commit: either; before the run too
        // when nothing committed.
        write(&h, 3, Some(30));
        ended(&h, 3, Some(31), Outcome::Unknown);
        assert_eq!(h.settled(3).versions, vec![30, 31]);
        ended(&h, 4, Some(40), Outcome::Unknown);
        let s = h.settled(4);
        assert_eq!((s.versions, s.before), (vec![40], true));
        // Rolled back: as if never written.
        ended(&h, 5, Some(50), Outcome::RolledBack);
        assert!(h.settled(5).versions.is_empty() && h.settled(5).before);
        // A delete last: missing.
        write(&h, 6, None);
        assert!(h.settled(6).missing);
        assert_eq!(h.written_keys(), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn dropped_writes_are_settled_only_when_a_commit_surely_followed_them() {
        let h = History::new(1, 100, true);
        for v in 0..KEPT as u64 + 3 {
            write(&h, 8, Some(v));
        }
        let s = h.settled(8);
        assert_eq!((s.versions, s.unknown), (vec![KEPT as u64 + 2], false));
        // A write of unknown outcome dropped: it may be the last.
        ended(&h, 9, Some(99), Outcome::Unknown);
        for v in 0..KEPT as u64 + 3 {
            write(&h, 9, Some(v));
        }
        assert!(h.settled(9).unknown);
    }
}
