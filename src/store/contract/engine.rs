//! The storage engine behind a store as a run sees it: what it allows
//! (updates and deletes, inserts in any order), how it is made durable,
//! how its cache is warmed or emptied, its own consistency check and its
//! counters.

use std::path::PathBuf;

use super::store_core::StoreCore;
use crate::error::Result;

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

/// What a run asks of the engine before and after it works: the defaults
/// fit a store of local files with transactions, no durability switch,
/// no integrity check and no counters (`impl Engine for X {}`).
pub trait Engine: StoreCore {
    /// How its cache is warmed or emptied before a repetition. The default:
    /// the store's own files.
    fn cache_control(&self) -> Result<CacheControl> {
        Ok(CacheControl::Files(self.files()?))
    }
    /// How its cache is warmed or emptied before a run that visits only
    /// `keys` (ascending, each once). The default: as [`cache_control`]
    /// (a database's blobs may lie anywhere in its files). A store of one
    /// file per key names only those keys' files, so that preparing a
    /// run costs what the run visits, not what the dataset holds.
    ///
    /// [`cache_control`]: Engine::cache_control
    fn cache_control_for(&self, keys: &[u64]) -> Result<CacheControl> {
        let _ = keys;
        self.cache_control()
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
    /// Engine counters after a session (SQLite page cache hits, misses, writes).
    fn engine_stats(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
}
