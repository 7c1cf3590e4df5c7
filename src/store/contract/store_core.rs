//! The core of a store: what it holds, how to work on it and how a
//! dataset it holds is finished, read whole or recovered.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::catalog::Catalog;
use super::options::SessionOptions;
use super::session::Session;
use crate::dataset::Manifest;
use crate::error::{Error, Result};

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

/// An open target: what it holds and how to work on it. The methods every
/// backend implements (a few with defaults); what a run adapts to is in
/// [`Engine`](super::Engine), the space on disk in [`Space`](super::Space).
pub trait StoreCore {
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
    /// How updates reach the disk under `options`, in words, for results.
    fn describe_writes(&self, options: &SessionOptions) -> String;
    /// Refuses a [`StoreCore::scan`] that cannot finish: the default walks the
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
    /// The dataset's ledger of acknowledged versions as text (see
    /// `dataset::Ledger`), kept beside the manifest in a record of the
    /// store's own; None where none was written.
    fn read_ledger(&mut self) -> Result<Option<String>>;
    /// Replaces the ledger with `text`, durably (a store opened for
    /// writing only).
    fn write_ledger(&mut self, text: &str) -> Result<()>;
    /// Removes what writers of this store that were killed mid-write left
    /// behind (blobbench's own temporary files of processes no longer
    /// running), before a long-lived writer such as `serve --writable`
    /// starts; returns how many. Stores whose engine recovers itself on
    /// open (SQLite, the servers) have nothing to do.
    fn remove_interrupted_writes(&mut self) -> Result<u64> {
        Ok(0)
    }
}
