//! What a read may legally return while other workers write. Every write
//! (update, insert, delete) is recorded with the logical times it began
//! and ended (its call returned and its transaction committed); its effect
//! took place at some moment in between, which the worker cannot see. A
//! read that ran from `t0` to `t1` may return the state of a write `w` that
//! began before `t1`, unless another write surely came after `w` and surely
//! took effect before the read began (it began after `w` ended and ended
//! before `t0`). The dataset's state before the run is legal until some
//! write has surely taken effect before the read. Anything else is a stale
//! read; bytes that are no version at all are a torn read (the content
//! check finds those).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes kept per key: a read spanning more writes of one key than this
/// is judged only for its content.
const KEPT: usize = 16;

/// Shards of the per-key records, so workers rarely wait on one another.
const SHARDS: usize = 64;

/// One write of one key.
#[derive(Debug, Clone, Copy)]
struct Write {
    /// The version written; None for a delete.
    version: Option<u64>,
    /// Logical time the write began.
    start: u64,
    /// Logical time it committed (u64::MAX while in flight).
    end: u64,
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
    /// A state older than the one committed before the read began (or a
    /// missing key that no delete explains).
    Stale,
    /// Too many writes of the key ran during the read to tell.
    Unjudged,
}

/// The writes of every key during one run, and a logical clock.
pub struct History {
    clock: AtomicU64,
    shards: Vec<Mutex<HashMap<u64, Vec<Write>>>>,
}

impl Default for History {
    fn default() -> Self {
        History {
            clock: AtomicU64::new(1),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }
}

impl History {
    /// The logical time now: later calls (on any thread) get larger ones.
    pub fn now(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::SeqCst)
    }

    fn shard(&self, key: u64) -> std::sync::MutexGuard<'_, HashMap<u64, Vec<Write>>> {
        let shard = &self.shards[(key % SHARDS as u64) as usize];
        shard.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that a write of `key` (`version`, or a delete) begins now;
    /// returns its id for `end_write`.
    pub fn begin_write(&self, key: u64, version: Option<u64>) -> u64 {
        let start = self.now();
        let mut shard = self.shard(key);
        let writes = shard.entry(key).or_default();
        writes.push(Write {
            version,
            start,
            end: u64::MAX,
        });
        if writes.len() > KEPT {
            writes.remove(0);
        }
        start
    }

    /// The write `id` of `key` committed (`at`: a time taken after the
    /// commit returned) or, with `at` None, never happened.
    pub fn end_write(&self, key: u64, id: u64, at: Option<u64>) {
        let mut shard = self.shard(key);
        let Some(writes) = shard.get_mut(&key) else {
            return;
        };
        let Some(i) = writes.iter().position(|w| w.start == id) else {
            return;
        };
        match at {
            Some(t) => writes[i].end = t,
            None => {
                writes.remove(i);
            }
        }
    }

    /// Judges a read of `key` that began at `t0` and ended at `t1`.
    /// `existed` says what the key held before the run (a dataset key:
    /// some version; false: a key this run inserts).
    pub fn judge(&self, key: u64, t0: u64, t1: u64, seen: Seen, existed: bool) -> Verdict {
        let shard = self.shard(key);
        let writes = shard.get(&key).map_or(&[][..], Vec::as_slice);
        // A write that surely took effect after `w` and before the read.
        let overwritten = |w_end: u64| writes.iter().any(|w2| w2.start > w_end && w2.end < t0);
        let by_write = writes
            .iter()
            .any(|w| state_of(w) == seen && w.start < t1 && !overwritten(w.end));
        let ours = writes.iter().any(|w| state_of(w) == seen);
        let initial_state = match seen {
            // An earlier run's version: not one this run wrote.
            Seen::Version(_) => existed && !ours,
            Seen::Missing => !existed,
        };
        // The state before the run holds until a write surely replaced it.
        let by_initial = initial_state && !writes.iter().any(|w| w.end < t0);
        if by_write || by_initial {
            Verdict::Legal
        } else if writes.len() == KEPT {
            // Older writes were dropped: the state may be one of theirs.
            Verdict::Unjudged
        } else {
            Verdict::Stale
        }
    }
}

fn state_of(w: &Write) -> Seen {
    w.version.map_or(Seen::Missing, Seen::Version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Seen::{Missing, Version};
    use Verdict::{Legal, Stale};

    /// A write of `key` begun and committed now; returns its (start, end).
    fn write(h: &History, key: u64, version: Option<u64>) -> (u64, u64) {
        let id = h.begin_write(key, version);
        let end = h.now();
        h.end_write(key, id, Some(end));
        (id, end)
    }

    #[test]
    fn a_read_sees_the_last_write_or_one_it_overlapped() {
        let h = History::default();
        let t_before = h.now();
        // Untouched key: any intact version of the dataset is legal; missing is not.
        assert_eq!(h.judge(1, t_before, h.now(), Version(77), true), Legal);
        assert_eq!(h.judge(1, t_before, h.now(), Missing, true), Stale);
        let id = h.begin_write(1, Some(100));
        let during = h.now();
        h.end_write(1, id, Some(h.now()));
        let (after, t1) = (h.now(), h.now());
        // A read wholly after the write must see it.
        assert_eq!(h.judge(1, after, t1, Version(100), true), Legal);
        assert_eq!(h.judge(1, after, t1, Version(77), true), Stale);
        // A read overlapping the write may see either.
        assert_eq!(h.judge(1, t_before, during, Version(100), true), Legal);
        assert_eq!(h.judge(1, t_before, during, Version(77), true), Legal);
        // A delete, then the key is legally missing and the old version stale.
        write(&h, 1, None);
        let t2 = h.now();
        assert_eq!(h.judge(1, t2, h.now(), Missing, true), Legal);
        assert_eq!(h.judge(1, t2, h.now(), Version(100), true), Stale);
    }

    #[test]
    fn of_two_writes_that_overlapped_either_may_have_landed_last() {
        let h = History::default();
        let a = h.begin_write(2, Some(1));
        let b = h.begin_write(2, Some(2));
        h.end_write(2, b, Some(h.now()));
        h.end_write(2, a, Some(h.now()));
        let t0 = h.now();
        assert_eq!(h.judge(2, t0, h.now(), Version(1), true), Legal);
        assert_eq!(h.judge(2, t0, h.now(), Version(2), true), Legal);
        // A third write begun after both ended surely came last.
        write(&h, 2, Some(3));
        let t0 = h.now();
        assert_eq!(h.judge(2, t0, h.now(), Version(3), true), Legal);
        assert_eq!(h.judge(2, t0, h.now(), Version(1), true), Stale);
        assert_eq!(h.judge(2, t0, h.now(), Version(2), true), Stale);
    }

    #[test]
    fn a_write_that_failed_leaves_no_trace() {
        let h = History::default();
        let id = h.begin_write(9, Some(1));
        h.end_write(9, id, None);
        let t = h.now();
        assert_eq!(h.judge(9, t, h.now(), Version(1), true), Legal);
        // ... and an inserted key nobody committed may not be read.
        assert_eq!(h.judge(50, t, h.now(), Version(3), false), Stale);
        assert_eq!(h.judge(50, t, h.now(), Missing, false), Legal);
    }

    #[test]
    fn too_many_writes_of_one_key_are_not_judged() {
        let h = History::default();
        for v in 0..KEPT as u64 + 3 {
            write(&h, 4, Some(v));
        }
        let t0 = h.now();
        assert_eq!(h.judge(4, t0, h.now(), Version(0), true), Verdict::Unjudged);
        assert_eq!(
            h.judge(4, t0, h.now(), Version(KEPT as u64 + 2), true),
            Legal
        );
    }
}
