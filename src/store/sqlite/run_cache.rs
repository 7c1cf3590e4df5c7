//! Where blobs found once in a read snapshot lie in the mapped file, kept
//! for the rest of that snapshot: while its shared lock is held no writer
//! can change the file, so a blob's runs found by walking its overflow
//! chain (pages.rs) are the same the next time it is asked for. A server
//! whose snapshots last (writers kept out for its whole life) then walks
//! each blob once, not once per request: the walk reads one cold link per
//! page, about a twentieth of such a server's CPU for 2 MB blobs.
//!
//! Locations only, never bytes, and emptied in every new snapshot (and
//! whenever the snapshot's map is taken afresh) before it is used.
//! Compact: a chain written in one go is a run on its leaf page and one run
//! per overflow page, each the same length a page apart, kept as one group;
//! so an entry is a few dozen bytes however large the blob, and a session's
//! cache at most about 5 MB (the bounds below) however fragmented.

use std::collections::HashMap;
use std::ops::Range;

/// Entries kept at most; a snapshot that finds more starts the cache
/// again (as nginx's open_file_cache `max`, the server's memory for it is
/// bounded whatever the number of blobs).
const MAX_ENTRIES: usize = 16_384;

/// Groups kept at most over all entries (32 bytes each): a blob written
/// into scattered free pages has a group per piece of its chain.
const MAX_GROUPS: usize = 131_072;

/// `count` runs of `len` bytes, the first at `start`, each `stride`
/// after the one before (the overflow pages of a chain: a page apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    start: usize,
    len: usize,
    count: usize,
    stride: usize,
}

/// The runs of the blobs found in this snapshot, by key.
#[derive(Debug, Default)]
pub(super) struct RunCache {
    entries: HashMap<u64, Vec<Group>>,
    /// Groups over all entries.
    groups: usize,
}

impl RunCache {
    /// Forgets every entry: a snapshot began or ended.
    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.groups = 0;
    }

    /// The runs of `key`, when this snapshot has found them.
    pub(super) fn get(&self, key: u64) -> Option<Vec<Range<usize>>> {
        let groups = self.entries.get(&key)?;
        let mut runs = Vec::with_capacity(groups.iter().map(|g| g.count).sum());
        for g in groups {
            runs.extend((0..g.count).map(|i| {
                let start = g.start + i * g.stride;
                start..start + g.len
            }));
        }
        Some(runs)
    }

    /// Keeps `runs` as where `key` lies in this snapshot.
    pub(super) fn insert(&mut self, key: u64, runs: &[Range<usize>]) {
        let groups = compact(runs);
        if let Some(old) = self.entries.remove(&key) {
            self.groups -= old.len();
        }
        if self.entries.len() >= MAX_ENTRIES || self.groups + groups.len() > MAX_GROUPS {
            self.clear();
        }
        self.groups += groups.len();
        self.entries.insert(key, groups);
    }
}

/// `runs` as groups: a run joins the group before it when it has the same
/// length and starts the group's stride after its last run (the second
/// run of a group sets the stride).
fn compact(runs: &[Range<usize>]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for run in runs {
        match groups.last_mut() {
            Some(g) if g.count == 1 && g.len == run.len() && run.start > g.start => {
                g.stride = run.start - g.start;
                g.count = 2;
            }
            Some(g) if g.len == run.len() && g.start + g.count * g.stride == run.start => {
                g.count += 1;
            }
            _ => groups.push(Group {
                start: run.start,
                len: run.len(),
                count: 1,
                stride: 0,
            }),
        }
    }
    groups
}

#[cfg(test)]
// A list of one run is what these tests mean by `[a..b]`.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_chain_written_in_one_go_is_kept_as_three_groups() {
        let mut cache = RunCache::default();
        // The leaf's part, 489 whole overflow pages, and a partial last one.
        let mut runs = vec![10_000..10_500];
        runs.extend((0..489).map(|i| (20 + i) * 4096 + 4..(21 + i) * 4096));
        runs.push(509 * 4096 + 4..509 * 4096 + 1004);
        cache.insert(7, &runs);
        assert_eq!(cache.groups, 3);
        assert_eq!(cache.get(7), Some(runs));
        assert_eq!(cache.get(8), None);
    }

    #[test]
    fn a_full_cache_starts_again_and_a_key_kept_twice_counts_once() {
        let mut cache = RunCache::default();
        for k in 0..MAX_ENTRIES as u64 {
            cache.insert(k, &[0..1]);
        }
        cache.insert(0, &[0..1, 8192..8194]);
        assert_eq!(
            (cache.entries.len(), cache.groups),
            (MAX_ENTRIES, MAX_ENTRIES + 1)
        );
        cache.insert(MAX_ENTRIES as u64, &[5..6]);
        assert_eq!((cache.entries.len(), cache.groups), (1, 1));
        assert_eq!(cache.get(MAX_ENTRIES as u64), Some(vec![5..6]));
        assert_eq!(cache.get(1), None, "the entries before were dropped");
        cache.clear();
        assert_eq!(
            (
                cache.entries.len(),
                cache.groups,
                cache.get(MAX_ENTRIES as u64)
            ),
            (0, 0, None)
        );
    }

    proptest! {
        /// Whatever the runs (any lengths and gaps), the cache gives back
        /// exactly the runs it was given.
        #[test]
        fn any_runs_come_back_as_they_went_in(
            parts in proptest::collection::vec((0usize..3, 0usize..5000), 0..200),
        ) {
            let mut runs = Vec::new();
            let mut at: usize = 100;
            for (gap, len) in parts {
                // Often a page apart and a page's run long, as a chain is.
                let (start, len) = match gap {
                    0 => (at.next_multiple_of(4096) + 4, 4092),
                    1 => (at + 4096, len),
                    _ => (at + len, len),
                };
                runs.push(start..start + len);
                at = start + len;
            }
            let mut cache = RunCache::default();
            cache.insert(1, &runs);
            prop_assert_eq!(cache.get(1), Some(runs));
        }
    }
}
