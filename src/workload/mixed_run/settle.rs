//! The versions a mixed run checks outside its timed operations: before
//! the run, the version every key holds (so a read of an older one is
//! judged stale, and a blob not at its last acknowledged version is
//! found); after it, the version every key it wrote holds, against the
//! writes it acknowledged; and what it records in the dataset's ledger.

use std::sync::atomic::Ordering;

use super::Shared;
use crate::dataset::{Allowed, DatasetSpec, Ledger, SizeDistribution};
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::store::{self, Access, SessionOptions};

/// Reads, untimed and before the run, the version every key holds (the
/// first eight bytes of its blob, on as many threads as the run has), so
/// that a read during the run of a version neither this one nor the run
/// wrote (an older one) is judged stale; a version the dataset's ledger
/// does not allow is counted lost. A blob shorter than eight bytes carries
/// no version: any version the run did not write stays legal.
pub(super) fn learn_versions(
    shared: &Shared,
    access: Access,
    progress: &dyn Progress,
) -> Result<()> {
    let keys: Vec<u64> = (shared.first..=shared.initial_last).collect();
    progress.start("reading versions", keys.len() as u64);
    let read = read_heads(shared, &keys, access, progress, &|key, version| {
        if let Some(v) = version {
            shared.history.learn(key, v);
            if let Some(allowed) = shared.ledger.as_ref().and_then(|l| l.allowed(key)) {
                shared.count_lost(&allowed, key, v);
            }
        }
    });
    progress.finish();
    read
}

/// After the run (its dataset put right, keys `..=last`): what every key
/// it wrote may hold, from its history and the ledger found before it;
/// with checks on, each key is read back and one at a version its
/// acknowledged writes do not allow is counted lost. What is recorded is
/// what may be there, not what was read: a write whose answer was lost
/// may still land (a server that applies it late, a replica behind), so
/// its version stays allowed beside the one read. Returns the ledger's new
/// entries, and the error that kept them from being read back, if one did.
pub(super) fn settle(
    shared: &Shared,
    last: u64,
    progress: &dyn Progress,
) -> (Vec<(u64, Allowed)>, Option<Error>) {
    let keys: Vec<u64> = shared
        .history
        .written_keys()
        .into_iter()
        .filter(|&k| k >= shared.first && k <= last)
        .collect();
    let settled: Vec<(u64, Allowed)> = keys
        .iter()
        .map(|&k| (k, allowed_after(shared, k)))
        .collect();
    if !shared.plan.verify || shared.spec.is_none() {
        return (settled, None);
    }
    progress.start("checking acknowledged writes", keys.len() as u64);
    let seen = std::sync::Mutex::new(Vec::with_capacity(keys.len()));
    let read = read_heads(
        shared,
        &keys,
        Access::ReadOnly,
        progress,
        &|key, version| {
            seen.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((key, version));
        },
    );
    progress.finish();
    if let Err(e) = read {
        return (settled, Some(e));
    }
    let seen: std::collections::HashMap<u64, Option<u64>> = seen
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .collect();
    for (key, allowed) in &settled {
        match seen.get(key) {
            Some(Some(v)) => shared.count_lost(allowed, *key, *v),
            Some(None) => shared.note_lost(format!(
                "key {key}: missing, but its last acknowledged write left {}",
                allowed.describe()
            )),
            // A blob too short to name its version.
            None => {}
        }
    }
    (settled, None)
}

/// What `key` may hold after the run: its settled writes' versions, and
/// what the ledger allowed before the run while no write surely replaced it.
fn allowed_after(shared: &Shared, key: u64) -> Allowed {
    let s = shared.history.settled(key);
    let before = match (s.before, &shared.ledger) {
        (false, _) => Some(Vec::new()),
        (true, Some(l)) => match l.allowed(key) {
            Some(Allowed::OneOf(v)) => Some(v),
            _ => None,
        },
        (true, None) => None,
    };
    match before {
        Some(mut versions) if !s.unknown => {
            versions.extend(s.versions);
            versions.sort_unstable();
            versions.dedup();
            if versions.is_empty() {
                Allowed::Any
            } else {
                Allowed::OneOf(versions)
            }
        }
        _ => Allowed::Any,
    }
}

/// Records the run's settled writes in `ledger`; keys past `last` (inserts
/// the run took back) are forgotten.
pub(super) fn record(ledger: &mut Ledger, settled: Vec<(u64, Allowed)>, last: u64) {
    for (key, allowed) in settled {
        ledger.set(key, allowed);
    }
    ledger.truncate_after(last);
}

/// Reads the first eight bytes of each of `keys` on as many threads as the
/// run has and hands `seen` the version they name (None: the key is
/// missing); a blob shorter than eight bytes is skipped.
fn read_heads(
    shared: &Shared,
    keys: &[u64],
    access: Access,
    progress: &dyn Progress,
    seen: &(dyn Fn(u64, Option<u64>) + Sync),
) -> Result<()> {
    let Some(spec) = shared.spec.as_ref() else {
        return Ok(());
    };
    if keys.is_empty() {
        return Ok(());
    }
    let heads = heads(spec);
    let plan = shared.plan;
    let threads = plan.threads.clamp(1, keys.len());
    let per = keys.len().div_ceil(threads);
    let read = |part: &[u64]| -> Result<()> {
        let mut store = store::open(&plan.target, access)?;
        let mut session = store.session(SessionOptions {
            per_op_transaction: true,
            ..plan.session
        })?;
        let mut head = [0u8; 8];
        for (i, &key) in part.iter().enumerate() {
            if spec.size_of(key) >= head.len() {
                match session.read_at(key, 0, &mut head) {
                    Ok(8) => {
                        if let Ok(v) = heads.verify(key, &head, None) {
                            seen(key, Some(v));
                        }
                    }
                    Err(Error::MissingKey { .. }) => seen(key, None),
                    Ok(_) => {}
                    Err(e) => return Err(e),
                }
            }
            if i % 256 == 255 {
                progress.advance(256);
            }
        }
        Ok(())
    };
    let read = &read;
    std::thread::scope(|scope| {
        let handles: Vec<_> = keys
            .chunks(per)
            .map(|part| scope.spawn(move || read(part)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Result<Vec<()>>>()
    })
    .map(|_| ())
}

/// `spec` with every blob its head alone (eight bytes): the check of a
/// blob's head against it returns the version the head names.
pub(super) fn heads(spec: &DatasetSpec) -> DatasetSpec {
    DatasetSpec {
        size: 8,
        distribution: SizeDistribution::Fixed,
        ..spec.clone()
    }
}

impl Shared<'_> {
    /// Counts blob `key` at `version` lost unless `allowed` admits it.
    fn count_lost(&self, allowed: &Allowed, key: u64, version: u64) {
        if !allowed.admits(version) {
            self.note_lost(allowed.lost(key, version));
        }
    }

    /// Counts one blob not at its last acknowledged version; the first is
    /// kept in words.
    fn note_lost(&self, what: String) {
        self.lost.fetch_add(1, Ordering::Relaxed);
        let mut first = self.lost_first.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(what);
    }
}
