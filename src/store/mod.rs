//! The Store trait every target implements, and the backends behind it.
//!
//! A [`Store`] is an open target. Work happens in a [`Session`], which holds
//! the prepared statements, blob handles and buffers that a benchmark loop
//! reuses from one operation to the next, so that only the operation itself
//! falls inside the timed region.

pub mod cluster;
mod copy;
mod external;
mod files;
pub mod inject;
mod journal;
mod map_guard;
mod memory;
mod mysql;
mod postgres;
mod s3;
mod sqlite;
mod sqlite_layout;
mod sqlite_lock;
mod sqlite_map;
mod sqlite_meta;
mod sqlite_pages;
mod sqlite_space;
mod unsafe_writes;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use copy::{copy, create_dataset, export};
pub use external::ExternalStore;
pub use files::{FileLayout, FilesStore};
pub use memory::MemoryStore;
pub use mysql::MysqlStore;
pub use postgres::PostgresStore;
pub use s3::S3Store;
pub use sqlite::{SqliteStore, max_blob_bytes, read_sqlite_info};
/// For `blobbench stat`, which reads SQLite's own statistics of a dataset.
pub(crate) use sqlite::{check_is_database, open_connection};

use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::target::{SqliteLayout, Target};

/// Whether the benchmark may change the target. Read-only stores are opened
/// so that the operating system or SQLite refuses any write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only; any write is refused.
    ReadOnly,
    /// Reads and writes.
    ReadWrite,
}

impl Access {
    /// How results record it: "read-only" or "read-write".
    pub fn label(self) -> &'static str {
        match self {
            Access::ReadOnly => "read-only",
            Access::ReadWrite => "read-write",
        }
    }
}

/// How SQLite content is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadPath {
    /// `SELECT v FROM kv WHERE k=?1`, prepared once.
    Sql,
    /// `sqlite3_blob_open` once, `sqlite3_blob_reopen` per key.
    BlobApi,
}

/// How a file is rewritten, as an application would do it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteStyle {
    /// open(O_TRUNC) + write + close: kvtest's fopen("wb").
    Truncate,
    /// open without truncation + pwrite over the old bytes + close.
    InPlace,
    /// write a temporary file beside it, then rename over the old one.
    TempRename,
}

impl WriteStyle {
    /// The style in words, with or without fsync, for results.
    pub fn describe(self, fsync: bool) -> &'static str {
        match (self, fsync) {
            (WriteStyle::Truncate, false) => "truncate+rewrite",
            (WriteStyle::Truncate, true) => "truncate+rewrite+fsync",
            (WriteStyle::InPlace, false) => "overwrite in place",
            (WriteStyle::InPlace, true) => "overwrite in place+fsync",
            (WriteStyle::TempRename, false) => "temp+rename",
            (WriteStyle::TempRename, true) => "temp+fsync+rename+fsync(dir)",
        }
    }
}

/// How a session reads and writes.
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// SQL statements or SQLite's incremental blob API.
    pub read_path: ReadPath,
    /// Each operation in its own transaction (kvtest's --multitrans). On the
    /// blob API this means opening and closing the handle per operation,
    /// because an open blob handle keeps its transaction open.
    pub per_op_transaction: bool,
    /// How files are rewritten (files and external blobs).
    pub write_style: WriteStyle,
    /// fsync each written file (files and external blobs).
    pub fsync: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            read_path: ReadPath::Sql,
            per_op_transaction: false,
            write_style: WriteStyle::Truncate,
            fsync: false,
        }
    }
}

/// What a store says about itself, recorded in every result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct StoreInfo {
    /// The backend: sqlite, sqlite-ext, dir, tree, postgres, mysql, memory.
    pub kind: String,
    /// The file or folder; for a server, its URL without the password.
    pub path: PathBuf,
    /// Settings in force, read back from the store (not just what was asked).
    pub settings: serde_json::Map<String, serde_json::Value>,
    /// The storage engine's version (SQLite's library, the server's
    /// `version()`), where the store knows it cheaply. Absent in results
    /// written before it was recorded, and for plain files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// How the executor brings a store's cache into the state a run asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheControl {
    /// Local files: warmed by reading them, evicted from the page cache.
    Files(Vec<PathBuf>),
    /// A server with its own cache: warmed by reading every key of the run
    /// through it; it cannot be evicted from here (restart it to start cold).
    Server,
    /// Data held in this process's memory: nothing to warm, nothing to evict.
    Process,
}

/// The keys a target holds: from its manifest, or found by scanning it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Catalog {
    /// The lowest key present.
    pub first_key: u64,
    /// The highest key present.
    pub last_key: u64,
    /// Keys present, counted (fewer than the span first..=last when keys
    /// are missing in between).
    pub count: u64,
    /// Present when the target was made by blobbench; enables --verify.
    pub manifest: Option<Manifest>,
    /// "manifest" or "scan".
    pub source: String,
}

impl Catalog {
    /// How many keys between the first and the last are absent.
    pub fn absent_keys(&self) -> u64 {
        (self.last_key.saturating_sub(self.first_key) + 1).saturating_sub(self.count)
    }

    /// Refuses work that would walk this catalog's span key by key when
    /// more than [`GAPS_ALLOWED`] keys in it are absent: a few gaps cost a
    /// lookup each (and a run stops at the first with its key named), but
    /// keys 1 and 2^62 would take for ever and as much memory as the span.
    pub fn check_gaps(&self, target: &std::path::Path) -> Result<()> {
        if self.absent_keys() > GAPS_ALLOWED {
            return Err(sparse_keys(target, self));
        }
        Ok(())
    }

    /// The catalog of keys `first..=last` (`count` of them), whose source
    /// is the manifest when one still describes them, else a scan.
    pub fn found(first_key: u64, last_key: u64, count: u64, manifest: Option<Manifest>) -> Self {
        Catalog {
            first_key,
            last_key,
            count,
            source: if manifest.is_some() {
                "manifest"
            } else {
                "scan"
            }
            .into(),
            manifest,
        }
    }
}

/// An open target: what it holds, how to work on it, what it can do.
pub trait Store {
    /// What the store says about itself, recorded in results.
    fn info(&self) -> StoreInfo;
    /// The table the blobs are in and how one is found, in words, for a
    /// store that can keep them in more than one (SQLite: kvtest's kv or the
    /// blog's files); None for the others.
    fn layout(&self) -> Option<&'static str> {
        None
    }
    /// The keys present, via the manifest if trustworthy or a scan.
    fn catalog(&mut self) -> Result<Catalog>;
    /// Opens a session: prepared statements and handles reused across ops.
    fn session(&mut self, options: SessionOptions) -> Result<Box<dyn Session + '_>>;
    /// Files that hold the target's data, for cache warming and eviction
    /// (none for a server: its files are the server's).
    fn files(&self) -> Result<Vec<PathBuf>>;
    /// How its cache is warmed or emptied before a repetition. The default:
    /// the store's own files.
    fn cache_control(&self) -> Result<CacheControl> {
        Ok(CacheControl::Files(self.files()?))
    }
    /// Why inserts must come in ascending key order, when they must (an
    /// engine that only appends, such as MySQL's ARCHIVE, refuses a key
    /// below one it holds); None when any order is accepted.
    fn ascending_inserts_only(&self) -> Option<String> {
        None
    }
    /// Whether rows can be updated and deleted; Err says why not and what
    /// to use instead (MySQL's ARCHIVE only inserts and reads).
    fn can_modify(&self) -> Result<()> {
        Ok(())
    }
    /// How updates reach the disk under `options`, in words, for results.
    fn describe_writes(&self, options: &SessionOptions) -> String;
    /// Whether operations take locks and run in transactions, so another
    /// connection can hold one busy (a busy timeout and several operations
    /// per transaction mean something); false for plain files and objects.
    fn has_transactions(&self) -> bool {
        true
    }
    /// Makes this store's commits durable (`true`: a commit returns once it
    /// is on disk) or not (`false`: the 2008 benchmark's "logging
    /// disabled"), where the store sets that on its server connection.
    /// `server_wide` allows a setting that changes the whole server (only on
    /// a throwaway server blobbench's own script started). Returns what is
    /// in force afterwards, read back, in words, including what could not
    /// be set and why; None when the store takes durability from its target
    /// settings and session options instead (SQLite, files).
    fn set_durability(&mut self, durable: bool, server_wide: bool) -> Result<Option<String>> {
        let _ = (durable, server_wide);
        Ok(None)
    }
    /// The engine's own consistency check (SQLite's `PRAGMA
    /// integrity_check`) as one line, "ok" when sound; None when the store
    /// has no such check.
    fn integrity_check(&mut self) -> Result<Option<String>> {
        Ok(None)
    }
    /// Refuses a [`Store::scan`] that cannot finish: the default walks the
    /// catalog's span and probes every absent key, fine for a few gaps,
    /// endless for keys 1 and 2^62. A copy asks before it creates anything.
    fn check_scan(&self, catalog: &Catalog) -> Result<()> {
        catalog.check_gaps(&self.info().path)
    }
    /// Hands every blob to `sink` in ascending key order; returns how many.
    /// The default walks the catalog's key range through a session and
    /// skips keys that are absent (a sparse dataset).
    fn scan(&mut self, sink: &mut dyn FnMut(u64, &[u8]) -> Result<()>) -> Result<u64> {
        let catalog = self.catalog()?;
        self.check_scan(&catalog)?;
        let mut session = self.session(SessionOptions::default())?;
        session.begin()?;
        let mut count = 0;
        for key in catalog.first_key..=catalog.last_key {
            let mut delivered = Ok(());
            match session.read(key, &mut |d| delivered = sink(key, d)) {
                Ok(()) => count += 1,
                Err(Error::MissingKey { .. }) => continue,
                Err(e) => return Err(e),
            }
            delivered?;
        }
        session.commit()?;
        Ok(count)
    }
    /// Marks a dataset this command made as complete, last: makes every
    /// blob durable, then records `manifest` (whose `complete` is true) in
    /// place of the incomplete one `create` wrote. Until then `catalog`
    /// refuses the dataset, so an interrupted init or export is never
    /// taken for a whole dataset.
    fn finish(&mut self, manifest: &Manifest) -> Result<()>;
    /// Removes what writers of this store that were killed mid-write left
    /// behind (blobbench's own temporary files of processes no longer
    /// running), before a long-lived writer such as `serve --writable`
    /// starts; returns how many. Stores whose engine recovers itself on
    /// open (SQLite, the servers) have nothing to do.
    fn remove_interrupted_writes(&mut self) -> Result<u64> {
        Ok(0)
    }
    /// Engine counters after a session (SQLite page cache hits, misses, writes).
    fn engine_stats(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
    /// Space allocated on disk (like `du`), in bytes.
    fn space_used(&self) -> Result<u64> {
        crate::measure::space::allocated_bytes(&self.files()?)
    }
    /// Where every blob's bytes lie in the store's files, for counting
    /// fragments (`suite aging`); None where the store cannot say (servers,
    /// object stores, memory).
    fn disk_layout(&mut self) -> Result<Option<DiskLayout>> {
        Ok(None)
    }
    /// Gives free space inside the store back or rewrites it in order, as
    /// `how` asks; returns what was done in words, or None when the store
    /// has nothing of the kind (files: the filesystem owns free space).
    fn reclaim(&mut self, how: Reclaim) -> Result<Option<String>> {
        let _ = how;
        Ok(None)
    }
}

/// How [`Store::reclaim`] works on the store's free space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reclaim {
    /// Give the free pages back to the filesystem, moving pages from the
    /// end into the holes (SQLite: `PRAGMA incremental_vacuum` on a
    /// database made with auto_vacuum=incremental; nothing otherwise).
    Incremental,
    /// Rewrite the whole store in order (SQLite: VACUUM).
    Full,
    /// As `Full`, for a throwaway store on a volume without room for a
    /// rollback journal as large as the store: SQLite's journal is kept in
    /// memory while it runs (journal_mode=memory, then back), so a crash
    /// during it can corrupt the database. Only `suite aging`'s own
    /// databases ask for it, and the result says so.
    FullJournalInMemory,
}

/// Where one blob's bytes lie, for counting its fragments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobPlacement {
    /// The blob's key.
    pub key: u64,
    /// The file that holds them.
    pub file: PathBuf,
    /// Byte ranges of that file, in the blob's order, each widened to whole
    /// pages for a database (a page is read whole). A blob in a file of its
    /// own: `0..len` (nothing for an empty file). SQLite: its overflow
    /// pages only; the part on the b-tree leaf page is left out as a
    /// file's inode is.
    pub ranges: Vec<std::ops::Range<u64>>,
}

/// Every blob's place in the store's files, and the free space inside them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskLayout {
    /// One entry per blob present, in key order.
    pub blobs: Vec<BlobPlacement>,
    /// Bytes free inside the store's files (SQLite's freelist pages);
    /// 0 for files.
    pub freelist_bytes: u64,
}

/// A blob in a file of its own, of `len` bytes, as [`BlobPlacement`]'s
/// ranges: the whole file; nothing for an empty file.
pub(crate) fn whole_file(len: u64) -> Vec<std::ops::Range<u64>> {
    (len > 0).then_some(0..len).into_iter().collect()
}

/// Absent keys a walk over a catalog's span may meet at most (each costs a
/// lookup, and a run's key list holds the span: a million take seconds and
/// 8 MB).
pub const GAPS_ALLOWED: u64 = 1_000_000;

/// The error for a dataset whose keys are not consecutive where the work
/// needs them to be: names the span and the count so the user sees why.
pub fn sparse_keys(target: &std::path::Path, catalog: &Catalog) -> Error {
    Error::usage(format!(
        "{} holds {} keys spread over {}..={} (the others are missing): blobbench works on consecutive keys, as blobbench init and kvtest init make them; renumber the blobs 1..{} in a copy, or use a dataset made by blobbench init",
        target.display(),
        catalog.count,
        catalog.first_key,
        catalog.last_key,
        catalog.count
    ))
}

/// A blob's bytes as runs of a read-only map of the file that holds them:
/// see `Session::mapped_blob`.
#[derive(Debug)]
pub struct MappedBlob {
    /// The runs, in the order of the blob's bytes.
    pub runs: MappedRuns,
    /// The blob's length in bytes (the runs' total).
    pub size: u64,
    /// Its tag, as `Session::etag` gives it.
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
        let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
        for run in &self.runs {
            match spans.last_mut() {
                Some(span) if run.start >= span.end && run.start - span.end <= 4096 => {
                    span.end = run.end
                }
                _ => spans.push(run.clone()),
            }
        }
        for span in spans {
            release_mapped(self.map.mmap(), span);
        }
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

/// A blob that is a file of its own, open: see `Session::blob_file`.
#[derive(Debug)]
pub struct BlobFile {
    /// Open for reading.
    pub file: std::fs::File,
    /// Its length in bytes, from the open descriptor.
    pub size: u64,
    /// Its tag, from the open descriptor.
    pub etag: String,
}

/// Work on an open store: prepared statements, handles and buffers reused
/// from one operation to the next.
pub trait Session {
    /// Reads blob `key` and hands its bytes to `sink` without copying them
    /// where the backend allows (SQLite's column buffer, our read buffer).
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()>;
    /// Hands blob `key` to `sink` in the pieces the store has it in, in
    /// order (at least one call). The default is `read`: the whole blob in
    /// one piece. A store whose bytes arrive in pieces (an S3 body) hands
    /// them over as they come, so a caller that can take pieces (a
    /// verifier) never gathers them into one buffer.
    fn read_pieces(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.read(key, sink)
    }
    /// Replaces blob `key` with `data` (same key, possibly same size).
    fn update(&mut self, key: u64, data: &[u8]) -> Result<()>;
    /// Adds blob `key`, which must not exist yet.
    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()>;
    /// Removes blob `key`.
    fn delete(&mut self, key: u64) -> Result<()>;
    /// Starts a batch (one transaction) unless per-op transactions were asked.
    fn begin(&mut self) -> Result<()>;
    /// Ends the batch begun by `begin`.
    fn commit(&mut self) -> Result<()>;
    /// Starts a batch that will write. SQLite takes the write lock at once
    /// (BEGIN IMMEDIATE), so a writer waits for it (the busy timeout) at
    /// the start instead of failing midway on a read lock it cannot
    /// upgrade; the others begin as `begin` does.
    fn begin_write(&mut self) -> Result<()> {
        self.begin()
    }
    /// Abandons the batch after a failure (a busy lock). Returns true when
    /// nothing of it remains (a transaction rolled back, or a failed
    /// statement that committed nothing); false where the writes already
    /// done stay (files, which have no transactions: the default).
    fn rollback(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Size of blob `key` in bytes, or None when the key is absent. The
    /// default reads the whole blob; stores that can ask cheaply override it.
    fn size(&mut self, key: u64) -> Result<Option<u64>> {
        let mut n = 0u64;
        match self.read(key, &mut |d| n = d.len() as u64) {
            Ok(()) => Ok(Some(n)),
            Err(Error::MissingKey { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
    /// Copies bytes of blob `key` from `offset` into `buf`; returns how many
    /// (0 at or past the end). Lets a server stream a large blob in pieces.
    /// The default reads the whole blob and copies the piece.
    fn read_at(&mut self, key: u64, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let mut copied = 0;
        self.read(key, &mut |d| {
            let start = (offset as usize).min(d.len());
            copied = buf.len().min(d.len() - start);
            buf[..copied].copy_from_slice(&d[start..start + copied]);
        })?;
        Ok(copied)
    }
    /// Hands bytes [offset, offset + len) of blob `key` to `sink` in pieces
    /// of at most `piece` bytes, all from one version of the blob; `sink`
    /// returns false to stop. Returns the bytes delivered. The default reads
    /// each piece separately; SQLite (one blob handle, one read transaction)
    /// and files (one open descriptor) read a single version.
    fn read_stream(
        &mut self,
        key: u64,
        offset: u64,
        len: u64,
        piece: usize,
        sink: &mut dyn FnMut(Vec<u8>) -> bool,
    ) -> Result<u64> {
        stream_pieces(offset, len, piece, sink, |at, buf| {
            self.read_at(key, at, buf)
        })
    }
    /// A strong validator for blob `key`: changes whenever its bytes may
    /// have changed (it may also change when they did not). None when the
    /// store cannot tell cheaply; HTTP then sends no ETag.
    fn etag(&mut self, _key: u64, _size: u64) -> Result<Option<String>> {
        Ok(None)
    }
    /// Size of blob `key` and, when it is at most `max` bytes, its content:
    /// what a server needs for a small blob, in one lookup where the store
    /// allows. None when the key is absent.
    fn fetch_small(&mut self, key: u64, max: u64) -> Result<Option<(u64, Option<Vec<u8>>)>> {
        let Some(size) = self.size(key)? else {
            return Ok(None);
        };
        if size > max {
            return Ok(Some((size, None)));
        }
        let mut data = Vec::with_capacity(size as usize);
        self.read(key, &mut |d| data.extend_from_slice(d))?;
        Ok(Some((data.len() as u64, Some(data))))
    }
    /// Runs any deferred durability work (a WAL checkpoint); timed separately.
    fn checkpoint(&mut self) -> Result<()> {
        Ok(())
    }
    /// The file that holds blob `key` and nothing else, open, with its size
    /// and its tag (as `etag` gives it) taken from the open descriptor, so
    /// all three describe one version even if the file is replaced
    /// meanwhile: a server sends such a blob with sendfile. None when the
    /// key is absent; `Ok(None)` as well from stores that keep blobs
    /// otherwise (the default), so callers ask `fetch_small` next.
    fn blob_file(&mut self, _key: u64) -> Result<Option<BlobFile>> {
        Ok(None)
    }
    /// Blob `key` as runs of a read-only map of the file that holds it,
    /// valid until `end_snapshot`: call it only inside a snapshot, whose
    /// lock keeps writers from changing those bytes. A server writes them
    /// to its socket straight from the map (one copy instead of two). None
    /// when the store cannot say (the default; SQLite in WAL mode or with a
    /// table not laid out as `kv(k INTEGER PRIMARY KEY, v BLOB)`): the
    /// caller then reads the blob the usual way, which also reports an
    /// absent key. None as well for a blob over `max` bytes, whose pages
    /// are then not even walked.
    fn mapped_blob(&mut self, _key: u64, _max: u64) -> Result<Option<MappedBlob>> {
        Ok(None)
    }
    /// How long an operation waits for a lock another connection holds
    /// before failing (SQLite's busy timeout; 5 s unless set). Stores
    /// without such locks ignore it.
    fn wait_for_locks(&mut self, _wait: std::time::Duration) -> Result<()> {
        Ok(())
    }
    /// Begins a read snapshot: until `end_snapshot`, reads see one state of
    /// the store and take its read lock once, not once per read (SQLite: one
    /// read transaction, so no lock, hot-journal check and change-counter
    /// read per request). Returns false, holding nothing, for stores whose
    /// reads take no lock, where a snapshot would gain nothing. Fails with
    /// a busy error ([`Error::is_busy`]) while another process's writer
    /// waits for the readers (`writer_waiting`): the caller tries again.
    fn begin_snapshot(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Ends the snapshot `begin_snapshot` began, releasing its lock, so
    /// the next read sees every commit made since.
    fn end_snapshot(&mut self) -> Result<()> {
        Ok(())
    }
    /// Whether a writer waits for this store's readers to let go before
    /// it can commit, so a snapshot held should end: another process
    /// (SQLite in a rollback journal: it holds the PENDING lock), or this
    /// process's own write when `own_write` says one is queued (its lock
    /// is not visible from here). False where readers never hold writers
    /// up (the default; SQLite in WAL mode, or with locking_mode=exclusive,
    /// which keeps writers out on purpose).
    fn writer_waiting(&mut self, _own_write: bool) -> Result<bool> {
        Ok(false)
    }
    /// Inside a snapshot: a number that differs between two snapshots of
    /// this session whenever another connection committed anything in
    /// between (SQLite's PRAGMA data_version), so a reader that let go of
    /// its snapshot can tell whether what it read is still current. None
    /// where the store cannot tell (the default).
    fn data_version(&mut self) -> Result<Option<i64>> {
        Ok(None)
    }
}

/// The environment record of this machine, with the storage engines'
/// versions (SQLite's version and compile options) filled in.
pub fn capture_environment(
    data_path: Option<&std::path::Path>,
) -> crate::measure::environment::Environment {
    let mut env = crate::measure::environment::Environment::capture_machine(data_path);
    (env.sqlite_version, env.sqlite_compile_options) = read_sqlite_info();
    env
}

/// Opens any target.
pub fn open(target: &Target, access: Access) -> Result<Box<dyn Store>> {
    Ok(match target {
        Target::Sqlite { path, settings } => Box::new(SqliteStore::open(path, settings, access)?),
        Target::SqliteExt { path, settings } => {
            Box::new(ExternalStore::open(path, settings, access)?)
        }
        Target::Dir { path } => Box::new(FilesStore::open(path, FileLayout::Flat, access)?),
        Target::Tree { path } => Box::new(FilesStore::open(path, FileLayout::Tree, access)?),
        Target::Postgres {
            server,
            mode,
            table,
        } => Box::new(PostgresStore::open(server, *mode, table, access)?),
        Target::Mysql {
            server,
            engine,
            table,
        } => Box::new(MysqlStore::open(server, *engine, table, access)?),
        Target::S3 { bucket } => Box::new(S3Store::open(bucket, access)?),
        Target::Memory { name } => Box::new(MemoryStore::open(name, access)?),
    })
}

/// Makes sure the server `target` names can be reached, changing
/// nothing: PostgreSQL and MariaDB connect and log in, S3 lists the
/// target's prefix (the bucket, the credentials); a local target always
/// can. Suites ask it of every server before they measure anything, so an
/// unreachable one is refused at once (exit 2), not after the rest ran.
pub fn reach(target: &Target) -> Result<()> {
    match target {
        Target::Postgres { server, .. } => postgres::reach(server),
        Target::Mysql { server, .. } => mysql::reach(server),
        Target::S3 { bucket } => S3Store::open(bucket, Access::ReadOnly).map(drop),
        Target::Sqlite { .. }
        | Target::SqliteExt { .. }
        | Target::Dir { .. }
        | Target::Tree { .. }
        | Target::Memory { .. } => Ok(()),
    }
}

/// Opens a target read-only for the untimed looks around a run (sizes,
/// read-back, space, integrity), without a journal mode to set: such a
/// look must not try to switch a database whose mode the run changed
/// (journal_mode=off and memory do not persist past the connection).
pub fn inspect(target: &Target) -> Result<Box<dyn Store>> {
    open(&target.for_inspection(), Access::ReadOnly)
}

/// Creates an empty target of the given kind, refusing to replace anything
/// that blobbench did not make.
pub fn create(target: &Target, manifest: &Manifest) -> Result<Box<dyn Store>> {
    Ok(match target {
        Target::Sqlite { path, settings } => {
            Box::new(SqliteStore::create(path, settings, manifest)?)
        }
        Target::SqliteExt { path, settings } => {
            Box::new(ExternalStore::create(path, settings, manifest)?)
        }
        Target::Dir { path } => Box::new(FilesStore::create(path, FileLayout::Flat, manifest)?),
        Target::Tree { path } => Box::new(FilesStore::create(path, FileLayout::Tree, manifest)?),
        Target::Postgres {
            server,
            mode,
            table,
        } => Box::new(PostgresStore::create(server, *mode, table, manifest)?),
        Target::Mysql {
            server,
            engine,
            table,
        } => Box::new(MysqlStore::create(server, *engine, table, manifest)?),
        Target::S3 { bucket } => Box::new(S3Store::create(bucket, manifest)?),
        Target::Memory { name } => Box::new(MemoryStore::create(name, manifest)?),
    })
}

/// The largest blob `target` takes in one value, and why, asked before
/// anything is created there: SQLite's SQLITE_LIMIT_LENGTH, PostgreSQL's
/// 1 GB bytea, MariaDB's max_allowed_packet (asked of the server). None
/// where files hold the blobs, or the process's memory.
pub fn value_limit(target: &Target) -> Result<Option<(u64, String)>> {
    Ok(match target {
        Target::Sqlite { settings, .. } => Some((
            // The blog's record also holds the text id: up to 20 digits.
            match settings.layout {
                Some(SqliteLayout::Blog) => max_blob_bytes() - 21,
                _ => max_blob_bytes(),
            },
            "SQLite's SQLITE_LIMIT_LENGTH, the record's header (and id) included".into(),
        )),
        Target::Postgres { .. } => Some((
            postgres::MAX_BLOB_BYTES,
            "a PostgreSQL bytea holds at most 1 GB".into(),
        )),
        Target::Mysql { server, .. } => Some(mysql::value_limit(server)?),
        Target::S3 { bucket } => Some((
            bucket
                .part_size
                .saturating_mul(S3_MAX_PARTS)
                .min(S3_MAX_OBJECT),
            format!(
                "an S3 multipart upload has at most {S3_MAX_PARTS} parts, here of part_size={}, and an object at most 5 TiB; raise part_size",
                s3::part_size_words(bucket.part_size)
            ),
        )),
        Target::SqliteExt { .. }
        | Target::Dir { .. }
        | Target::Tree { .. }
        | Target::Memory { .. } => None,
    })
}

/// The most parts one S3 multipart upload may have.
const S3_MAX_PARTS: u64 = 10_000;
/// The largest S3 object: 5 TiB.
const S3_MAX_OBJECT: u64 = 5 << 40;

/// Refuses, before anything is written, a dataset `target` cannot hold:
/// a blob larger than the store takes in one value, a total past 2^64
/// bytes, or more content than the disk has free (less what the dataset it
/// replaces takes now). `spec.count` blobs are never allocated at once, so
/// only the disk bounds a dataset's size.
pub fn check_room(target: &Target, spec: &crate::dataset::DatasetSpec) -> Result<()> {
    let largest = spec.max_size();
    if let Some((limit, why)) = value_limit(target)?
        && largest > limit
    {
        return Err(Error::usage(format!(
            "blobs of up to {largest} bytes do not fit {}: it stores at most {limit} bytes per value ({why}); use --size {limit} or less (less --variance), or a dir: target",
            target.kind_name()
        )));
    }
    let Some(needed) = spec.least_bytes() else {
        return Err(Error::usage(format!(
            "{} blobs of {} bytes are more than 2^64 bytes in all: ask for fewer or smaller blobs (--count, --size)",
            spec.count, spec.size
        )));
    };
    if let Some(path) = target.data_path() {
        // What the dataset replaced takes now is freed before the new one grows.
        let (replaced, replaced_files) = match inspect(target) {
            Ok(mut s) => (
                s.space_used().unwrap_or(0),
                s.catalog().map(|c| c.count).unwrap_or(0),
            ),
            Err(_) => (0, 0),
        };
        check_files_room(target, path, spec, replaced, replaced_files)?;
        let what = format!("{} blobs of {} bytes", spec.count, spec.size);
        check_free_space(
            path,
            needed.saturating_sub(replaced),
            &what,
            "ask for fewer or smaller blobs (--count, --size), or use a larger disk",
        )?;
    }
    Ok(())
}

/// For a target of one file per blob: every file takes whole blocks and
/// one inode, so 10^8 blobs of 1 byte need 10^8 files and 400 GB on a 4 KiB
/// filesystem, not 100 MB. Checked before the folder is made.
fn check_files_room(
    target: &Target,
    path: &std::path::Path,
    spec: &crate::dataset::DatasetSpec,
    replaced: u64,
    replaced_files: u64,
) -> Result<()> {
    if !matches!(
        target,
        Target::Dir { .. } | Target::Tree { .. } | Target::SqliteExt { .. }
    ) {
        return Ok(());
    }
    let Some(room) = crate::measure::space::room(path) else {
        return Ok(());
    };
    if let Some(files) = room.free_files
        && files.saturating_add(replaced_files) < spec.count
    {
        return Err(Error::usage(format!(
            "{} blobs need {} files, and the filesystem holding {} can make only {files} more: ask for fewer blobs (--count), or use a database target (sqlite:)",
            spec.count,
            spec.count,
            path.display()
        )));
    }
    let blocks = spec.size.div_ceil(room.block_bytes).max(1);
    let needed = blocks
        .saturating_mul(room.block_bytes)
        .saturating_mul(spec.count);
    check_free_space(
        path,
        needed.saturating_sub(replaced),
        &format!(
            "{} files of {} bytes ({}-byte blocks)",
            spec.count, spec.size, room.block_bytes
        ),
        "ask for fewer blobs (--count), use a database target (sqlite:), or a larger disk",
    )
}

/// Refuses work that needs `needed` bytes on the disk holding `path` when
/// the disk has less free; `what` names the work and `fix` says what to
/// do instead. A disk that cannot tell its free space is not refused.
pub fn check_free_space(path: &std::path::Path, needed: u64, what: &str, fix: &str) -> Result<()> {
    if let Some(free) = crate::measure::space::free_bytes(path)
        && free < needed
    {
        return Err(Error::usage(format!(
            "{what} need at least {} on the disk holding {}, which has {} free: {fix}",
            crate::units::human_bytes(needed),
            path.display(),
            crate::units::human_bytes(free)
        )));
    }
    Ok(())
}

/// The folder whose files a process journals the keys it adds to (see
/// `journal`): a `dir:` or `tree:` dataset's, an `sqlite-ext:` database's
/// files. None where `init` replaces everything a writer may have added
/// anyway (a database, a server's table, an object-store prefix, memory).
fn journaled_folder(target: &Target) -> Option<std::path::PathBuf> {
    match target {
        Target::Dir { path } | Target::Tree { path } => Some(path.clone()),
        Target::SqliteExt { path, .. } => Some(external::files_folder(path)),
        _ => None,
    }
}

/// Names `key`, about to be added past `dataset_last` (the dataset's last
/// key), in this process's journal of `target`'s folder, so that an `init`
/// after this process is killed removes it; the stores' inserts do so
/// themselves, and a timed run calls this first, untimed. Returns the last
/// key already named (`u64::MAX` where nothing needs naming).
pub fn name_added_key(target: &Target, dataset_last: u64, key: u64) -> Result<u64> {
    match journaled_folder(target) {
        Some(folder) => journal::name_added_key(&folder, dataset_last, key),
        None => Ok(u64::MAX),
    }
}

/// Ends this process's journal of `target`'s folder once the manifest
/// records every key the process added (see [`name_added_key`]).
pub fn end_added_keys(target: &Target) -> Result<()> {
    match journaled_folder(target) {
        Some(folder) => journal::end_added_keys(&folder),
        None => Ok(()),
    }
}

/// Says that this process has stopped writing `target` through stores it
/// never closes (a server's per-thread stores live until it exits): the
/// records a writer without a rollback journal keeps while it writes are
/// removed, so a clean stop is not later taken for an interrupted one.
pub fn release(target: &Target) {
    match target {
        Target::Sqlite { path, .. } | Target::SqliteExt { path, .. } => {
            unsafe_writes::clear_this_process(path);
        }
        _ => {}
    }
}

/// Removes a local dataset and everything its store keeps beside it: a
/// folder with its files, or a database with its `-wal`, `-shm` and
/// `-journal` files and an external-blob `NAME.files` folder that
/// blobbench made. Best effort, for cleaning up work folders: what cannot
/// be removed stays.
pub fn remove_dataset(path: &std::path::Path) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
        return;
    }
    // Companions first, the database last (see sqlite::remove_database).
    for file in sqlite::database_files(path).iter().rev() {
        let _ = std::fs::remove_file(file);
    }
    let folder = external::files_folder(path);
    if folder.join(files::MANIFEST_FILE).is_file() {
        let _ = std::fs::remove_dir_all(folder);
    }
}

/// Removes the dataset a target names: local files as [`remove_dataset`],
/// a memory dataset from the process. A server's table is left alone.
pub fn remove_target(target: &Target) {
    match target {
        Target::Memory { name } => {
            MemoryStore::remove(name);
        }
        Target::Postgres { .. } | Target::Mysql { .. } => {}
        // Only a dataset blobbench made (its manifest is there) is removed.
        Target::S3 { bucket } => {
            let _ = s3::remove_dataset(bucket);
        }
        _ => remove_dataset(target.path()),
    }
}

/// The lowest key a store found, checked: blobbench's keys start at 1 (as
/// kvtest's do), and a key below that would wrap around when taken as
/// unsigned, so it is refused here, where the store first reads it.
pub(crate) fn first_key_from_one(target: &std::path::Path, first: i64) -> Result<u64> {
    if first < 1 {
        return Err(Error::usage(format!(
            "{} holds key {first}: blobbench datasets have keys from 1 up (as kvtest's); copy the blobs with keys of 1 and above into a new dataset, or use one made by blobbench init",
            target.display()
        )));
    }
    Ok(first as u64)
}

/// The error for a key the dataset does not hold.
pub(crate) fn missing_key(key: u64, target: &std::path::Path) -> Error {
    Error::MissingKey {
        key,
        target: target.to_path_buf(),
    }
}

/// FNV-1a over `parts`: a short, stable fingerprint for ETags.
pub(crate) fn fingerprint(parts: &[u64]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("\"{h:016x}\"")
}

/// (size, modification time in ns, inode) of a file, or zeros when absent.
pub(crate) fn file_stamp(path: &std::path::Path) -> [u64; 3] {
    match std::fs::metadata(path) {
        Ok(m) => stamp_of(&m),
        Err(_) => [0; 3],
    }
}

/// (size, modification time in ns, inode) from a file's metadata.
pub(crate) fn stamp_of(m: &std::fs::Metadata) -> [u64; 3] {
    use std::os::unix::fs::MetadataExt;
    [
        m.len(),
        (m.mtime() as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(m.mtime_nsec() as u64),
        m.ino(),
    ]
}

/// Piece buffers handed back by their last user, for the next stream: a
/// fresh buffer of a chunk's size costs a zero fill and, coming from mmap,
/// a page fault per 4 KiB, more than reading the piece into it.
static SPARE_PIECES: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// Spare piece buffers kept at most (with 256 KiB pieces, 16 MiB).
const MAX_SPARE_PIECES: usize = 64;

/// A buffer of `len` bytes for a streamed piece, reused when one is spare.
pub fn piece_buffer(len: usize) -> Vec<u8> {
    let spare = SPARE_PIECES.lock().ok().and_then(|mut s| s.pop());
    let mut buf = spare.unwrap_or_default();
    buf.resize(len, 0);
    buf
}

/// Hands a piece buffer back once its bytes have been sent.
pub fn recycle_piece(buf: Vec<u8>) {
    if let Ok(mut spare) = SPARE_PIECES.lock()
        && spare.len() < MAX_SPARE_PIECES
    {
        spare.push(buf);
    }
}

/// Reads [offset, offset + len) in pieces of at most `piece` bytes with
/// `read_at` (which returns how many bytes it filled, 0 at the end) and hands
/// each to `sink` until it returns false. Returns the bytes delivered.
pub fn stream_pieces(
    offset: u64,
    len: u64,
    piece: usize,
    sink: &mut dyn FnMut(Vec<u8>) -> bool,
    mut read_at: impl FnMut(u64, &mut [u8]) -> Result<usize>,
) -> Result<u64> {
    let mut done = 0u64;
    while done < len {
        let want = ((len - done) as usize).min(piece);
        let mut buf = piece_buffer(want);
        let n = read_at(offset + done, &mut buf)?;
        buf.truncate(n);
        done += n as u64;
        if n == 0 || !sink(buf) {
            break;
        }
    }
    Ok(done)
}
