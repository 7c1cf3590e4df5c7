//! Open descriptors of blob files kept between requests, as nginx's
//! `open_file_cache` keeps them: a blob that is a file of its own (dir and
//! tree targets) is opened and stat'ed once, and later requests for it are
//! sent from the same descriptor with the size and tag taken then, with no
//! open, stat or close of their own. Only descriptors are kept, never
//! contents: the bytes always come from the file (sendfile).
//!
//! An entry is revalidated once it is older than `--open-file-valid`: the
//! file's name is stat'ed again and the entry is kept only while its tag
//! (size, modification time, inode) is unchanged, so a file replaced (by
//! rename, the way blobbench and most applications rewrite files), changed
//! in place or removed is served stale for at most that long. A write
//! through this server drops every entry at once. Each worker thread keeps
//! its own entries (no lock between threads), at most `capacity` of them;
//! an entry not asked for in `INACTIVE` is closed at the thread's next
//! request, so a removed file's space is not held by an idle entry.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::watched::WatchedFile;

/// Descriptors a worker thread keeps at most (nginx's `max=4000` per
/// worker), fewer when the descriptor limit is low (see `capacity`).
const MAX_ENTRIES: usize = 4000;

/// An entry not asked for this long is closed (nginx's `inactive=20s`).
pub(super) const INACTIVE: Duration = Duration::from_secs(20);

/// A blob's file as opened once: what a reply needs.
#[derive(Clone)]
pub(super) struct OpenFile {
    /// Open for reading, with its identity then.
    pub(super) file: Arc<WatchedFile>,
    /// Its length when opened.
    pub(super) size: u64,
    /// Its tag when opened.
    pub(super) etag: String,
}

/// One kept descriptor.
struct Entry {
    /// The file and what was read of it.
    open: OpenFile,
    /// When its name last stat'ed to the same tag (or it was opened).
    checked: Instant,
    /// When a request last used it.
    used: Instant,
}

/// What a look-up in the cache found.
pub(super) enum Cached {
    /// Checked within the validity: use it as it is.
    Fresh(OpenFile),
    /// Older than the validity: use it only if the file's tag is still
    /// this one (then call `confirm`).
    Stale(OpenFile),
    /// Not kept.
    Missing,
}

/// One worker thread's descriptors for one server.
pub(super) struct OpenFiles {
    /// The server they were opened for (tests run several in a process).
    server_id: u64,
    /// The server's write count when the entries were opened: a write
    /// through the server drops them all.
    writes: u64,
    /// By key.
    entries: HashMap<u64, Entry>,
    /// Entries kept at most.
    capacity: usize,
    /// When entries unused for `INACTIVE` were last closed.
    swept: Instant,
}

thread_local! {
    /// This thread's descriptors, for the server it serves.
    static OPEN_FILES: RefCell<Option<OpenFiles>> = const { RefCell::new(None) };
}

/// Runs `f` on this thread's cache for the server `server_id` whose write
/// count is `writes` (a cache made for another server, or before a write
/// through this one, is emptied first).
pub(super) fn with_cache<T>(server_id: u64, writes: u64, f: impl FnOnce(&mut OpenFiles) -> T) -> T {
    OPEN_FILES.with(|cell| {
        let mut slot = cell.borrow_mut();
        let cache = slot.get_or_insert_with(|| OpenFiles::new(server_id, thread_capacity()));
        if cache.server_id != server_id {
            *cache = OpenFiles::new(server_id, thread_capacity());
        }
        if cache.writes != writes {
            cache.entries.clear();
            cache.writes = writes;
        }
        f(cache)
    })
}

/// `capacity` for this process's workers (one per core), worked out once:
/// asking for the core count reads cgroup files, too dear per request.
fn thread_capacity() -> usize {
    static CAPACITY: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CAPACITY.get_or_init(|| capacity(std::thread::available_parallelism().map_or(1, |n| n.get())))
}

/// Entries per thread: `MAX_ENTRIES`, or a quarter of the descriptor
/// limit shared among `threads` (one worker per core) when that is fewer, so the cache never
/// takes the descriptors connections and sessions need.
fn capacity(threads: usize) -> usize {
    // SAFETY: getrlimit with a valid, initialised struct.
    let limit = unsafe {
        let mut l: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 {
            l.rlim_cur as usize
        } else {
            1024
        }
    };
    (limit / 4 / threads.max(1)).min(MAX_ENTRIES)
}

impl OpenFiles {
    /// An empty cache of at most `capacity` entries.
    fn new(server_id: u64, capacity: usize) -> Self {
        OpenFiles {
            server_id,
            writes: 0,
            entries: HashMap::new(),
            capacity,
            swept: Instant::now(),
        }
    }

    /// Blob `key`'s entry, fresh when checked less than `valid` before
    /// `now`; closes entries unused for `INACTIVE` first (at most once per
    /// `INACTIVE`).
    pub(super) fn get(&mut self, key: u64, now: Instant, valid: Duration) -> Cached {
        if now.duration_since(self.swept) >= INACTIVE {
            self.entries
                .retain(|_, e| now.duration_since(e.used) < INACTIVE);
            self.swept = now;
        }
        let Some(entry) = self.entries.get_mut(&key) else {
            return Cached::Missing;
        };
        entry.used = now;
        if now.duration_since(entry.checked) < valid {
            Cached::Fresh(entry.open.clone())
        } else {
            Cached::Stale(entry.open.clone())
        }
    }

    /// Blob `key`'s entry was found unchanged at `now`: fresh again.
    pub(super) fn confirm(&mut self, key: u64, now: Instant) {
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.checked = now;
        }
    }

    /// Keeps `open` as blob `key`'s entry, checked at `now`; when full,
    /// another entry is closed to make room.
    pub(super) fn insert(&mut self, key: u64, open: OpenFile, now: Instant) {
        if self.capacity == 0 {
            return;
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            let victim = self.entries.keys().next().copied();
            if let Some(victim) = victim {
                self.entries.remove(&victim);
            }
        }
        let entry = Entry {
            open,
            checked: now,
            used: now,
        };
        self.entries.insert(key, entry);
    }

    /// Drops blob `key`'s entry (its file changed or is gone).
    pub(super) fn remove(&mut self, key: u64) {
        self.entries.remove(&key);
    }

    /// Entries kept now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_file(tag: &str) -> OpenFile {
        let file = std::fs::File::open("/dev/null").unwrap();
        let identity = crate::store::FileIdentity::now(&file).unwrap();
        OpenFile {
            file: Arc::new(WatchedFile::new(file, identity)),
            size: 0,
            etag: tag.to_string(),
        }
    }

    #[test]
    fn an_entry_is_fresh_within_the_validity_then_stale_until_confirmed() {
        let valid = Duration::from_secs(1);
        let t0 = Instant::now();
        let mut cache = OpenFiles::new(1, 10);
        assert!(matches!(cache.get(7, t0, valid), Cached::Missing));
        cache.insert(7, open_file("a"), t0);
        let at = |ms| t0 + Duration::from_millis(ms);
        assert!(matches!(cache.get(7, at(999), valid), Cached::Fresh(f) if f.etag == "a"));
        assert!(matches!(cache.get(7, at(1000), valid), Cached::Stale(f) if f.etag == "a"));
        cache.confirm(7, at(1000));
        assert!(matches!(cache.get(7, at(1999), valid), Cached::Fresh(_)));
        cache.remove(7);
        assert!(matches!(cache.get(7, at(1999), valid), Cached::Missing));
    }

    #[test]
    fn a_full_cache_closes_one_entry_per_new_one_and_unused_entries_expire() {
        // Made first: its last sweep is then no later than t0.
        let mut cache = OpenFiles::new(1, 3);
        let t0 = Instant::now();
        let valid = Duration::from_secs(1);
        for key in 1..=5 {
            cache.insert(key, open_file("x"), t0);
            assert!(cache.len() <= 3);
        }
        assert!(matches!(cache.get(5, t0, valid), Cached::Fresh(_)));
        // Key 5 asked for just now; the others only when inserted.
        let later = t0 + INACTIVE - Duration::from_millis(1);
        assert!(matches!(cache.get(5, later, valid), Cached::Stale(_)));
        assert!(matches!(
            cache.get(5, t0 + INACTIVE, valid),
            Cached::Stale(_)
        ));
        assert_eq!(cache.len(), 1, "entries unused for INACTIVE are closed");
    }

    #[test]
    fn a_write_through_the_server_or_another_server_empties_the_cache() {
        let now = Instant::now();
        let valid = Duration::from_secs(60);
        with_cache(90, 0, |c| c.insert(1, open_file("a"), now));
        let hit = with_cache(90, 0, |c| matches!(c.get(1, now, valid), Cached::Fresh(_)));
        assert!(hit);
        let after_write = with_cache(90, 1, |c| matches!(c.get(1, now, valid), Cached::Missing));
        assert!(after_write);
        with_cache(90, 1, |c| c.insert(1, open_file("b"), now));
        let other_server = with_cache(91, 1, |c| matches!(c.get(1, now, valid), Cached::Missing));
        assert!(other_server);
    }

    #[test]
    fn no_thread_takes_more_than_a_quarter_of_its_share_of_descriptors() {
        assert!(capacity(1) <= MAX_ENTRIES);
        assert!(capacity(1_000_000) < 10);
    }
}
