//! A blob's bytes as runs of a read-only map of its file, for a server
//! that writes them to its socket straight from the map, and how many of
//! those pages a process keeps resident.

use crate::error::Result;
use crate::store::map_guard;

/// A blob's bytes as runs of a read-only map of the file that holds them:
/// see `Serving::mapped_blob`.
#[derive(Debug)]
pub struct MappedBlob {
    /// The runs, in the order of the blob's bytes.
    pub runs: MappedRuns,
    /// The blob's length in bytes (the runs' total).
    pub size: u64,
    /// Its tag, as `Serving::etag` gives it.
    pub etag: Option<String>,
}

/// Runs of bytes of one mapped file, in order; cheap to cut into pieces
/// and to send between threads. Bytes read from them are the file's only
/// if [`MappedRuns::check`] holds after the reading (see map_guard.rs).
#[derive(Debug, Clone)]
pub struct MappedRuns {
    /// The whole file, mapped read-only.
    map: std::sync::Arc<map_guard::GuardedMap>,
    /// Offsets into the map.
    runs: Vec<std::ops::Range<usize>>,
}

impl MappedRuns {
    /// `runs` of `map`, every one within it.
    pub(crate) fn new(
        map: std::sync::Arc<map_guard::GuardedMap>,
        runs: Vec<std::ops::Range<usize>>,
    ) -> Self {
        debug_assert!(runs.iter().all(|r| r.end <= map.len()));
        MappedRuns { map, runs }
    }

    /// The runs, as offsets into the map.
    pub(crate) fn ranges(&self) -> &[std::ops::Range<usize>] {
        &self.runs
    }

    /// The runs as slices of the map.
    pub fn slices(&self) -> impl Iterator<Item = &[u8]> {
        self.runs.iter().map(|r| &self.map[r.clone()])
    }

    /// Bytes covered.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|r| r.len() as u64).sum()
    }

    /// Whether every byte read from the map so far was the file's: false
    /// once another process has cut the file short under the map (a read
    /// past its end then gives zeros instead of killing the process).
    /// Ask after reading, before trusting or sending the last byte.
    pub fn check(&self) -> Result<()> {
        self.map.check()
    }

    /// The runs' bytes copied into one buffer, checked (see `check`).
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(self.len() as usize);
        self.slices().for_each(|run| bytes.extend_from_slice(run));
        self.check()?;
        Ok(bytes)
    }

    /// Whether no bytes are covered.
    pub fn is_empty(&self) -> bool {
        self.runs.iter().all(|r| r.is_empty())
    }

    /// Bytes [start, start + len) of the runs, in one piece.
    pub fn span(&self, start: u64, len: u64) -> MappedRuns {
        self.pieces(start, len, usize::MAX)
            .pop()
            .unwrap_or_else(|| self.with_runs(Vec::new()))
    }

    /// Bytes [start, start + len) of the runs, cut into consecutive pieces
    /// of at most `piece` bytes each.
    pub fn pieces(&self, start: u64, len: u64, piece: usize) -> Vec<MappedRuns> {
        let (mut skip, mut left) = (start as usize, len as usize);
        let mut out = Vec::new();
        let mut current = Vec::new();
        let mut in_current = 0;
        for run in &self.runs {
            let mut r = run.clone();
            if skip >= r.len() {
                skip -= r.len();
                continue;
            }
            r.start += skip;
            skip = 0;
            while !r.is_empty() && left > 0 {
                let take = r.len().min(left).min(piece - in_current);
                current.push(r.start..r.start + take);
                (r.start, left, in_current) = (r.start + take, left - take, in_current + take);
                if in_current == piece {
                    out.push(self.with_runs(std::mem::take(&mut current)));
                    in_current = 0;
                }
            }
        }
        if !current.is_empty() {
            out.push(self.with_runs(current));
        }
        out
    }

    /// Unmaps the pages under these runs from this process (the page
    /// cache keeps them): once a piece has been sent, its pages need not
    /// count in the server's resident memory, so a thousand streams in
    /// flight hold only the pieces being written. Runs at most a page apart
    /// (the overflow pages of one blob, usually) are released together.
    pub fn release_pages(&self) {
        for span in self.spans() {
            release_mapped(self.map.mmap(), span);
        }
    }

    /// Maps the pages under these runs into this process, a call per span
    /// of them (see `release_pages`) where touching them would fault every
    /// few pages: for runs found without reading their pages.
    pub(crate) fn map_in(&self) {
        for span in self.spans() {
            map_ahead(self.map.mmap(), span);
        }
    }

    /// The runs joined where at most a page apart (the overflow pages of
    /// one blob, usually), in order.
    fn spans(&self) -> Vec<std::ops::Range<usize>> {
        let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
        for run in &self.runs {
            match spans.last_mut() {
                Some(span) if run.start >= span.end && run.start - span.end <= 4096 => {
                    span.end = run.end
                }
                _ => spans.push(run.clone()),
            }
        }
        spans
    }

    /// Other runs of the same map.
    fn with_runs(&self, runs: Vec<std::ops::Range<usize>>) -> MappedRuns {
        MappedRuns {
            map: self.map.clone(),
            runs,
        }
    }
}

/// Blobs up to this size may stay mapped after a server has found their
/// pages; larger ones give their pages back as they are walked and sent,
/// so a stream never keeps more than about a mebibyte of them resident.
pub const MAPPED_RESIDENT_UP_TO: u64 = 8 << 20;

/// Bytes of mapped blobs a process leaves resident between sweeps: past
/// this, every page of the map is unmapped at once (the page cache keeps
/// them), so serving a database larger than this from its map never makes
/// the whole file count in the server's resident memory.
pub const MAPPED_RESIDENT_BUDGET: u64 = 64 << 20;

/// Bytes of mapped blobs left resident since the last sweep.
static KEPT_MAPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts `bytes` of `map` a reader leaves mapped; past
/// `MAPPED_RESIDENT_BUDGET` since the last sweep, unmaps all of the map's
/// pages from this process (one call; later readers map them again from the
/// page cache as they go).
pub(crate) fn kept_mapped(map: &map_guard::GuardedMap, bytes: u64) {
    use std::sync::atomic::Ordering;
    if KEPT_MAPPED.fetch_add(bytes, Ordering::Relaxed) + bytes > MAPPED_RESIDENT_BUDGET {
        KEPT_MAPPED.store(0, Ordering::Relaxed);
        release_mapped(map.mmap(), 0..map.len());
    }
}

/// Maps `range` of `map` into this process in one call, where touching its
/// pages one after another would take a page fault for every few of them
/// (a kernel without MADV_POPULATE_READ, before Linux 5.14, refuses; the
/// pages then fault in as they are read, as they did before).
pub(crate) fn map_ahead(map: &memmap2::Mmap, range: std::ops::Range<usize>) {
    let _ = map.advise_range(memmap2::Advice::PopulateRead, range.start, range.len());
}

/// Unmaps `range` of `map` from this process; the page cache keeps the
/// pages.
pub(crate) fn release_mapped(map: &memmap2::Mmap, range: std::ops::Range<usize>) {
    // SAFETY: MADV_DONTNEED on a shared, read-only file mapping only drops
    // page-table entries; a later read maps the same page-cache pages
    // again, so no reference into the map ever sees other bytes.
    let _ = unsafe {
        map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, range.start, range.len())
    };
}
