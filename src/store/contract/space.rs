//! A store's space on disk: how much it takes, where each blob's bytes lie
//! (the aging suite counts their fragments) and giving free space back.

use std::path::PathBuf;

use super::store_core::StoreCore;
use crate::error::Result;

/// How [`Space::reclaim`] works on the store's free space.
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

/// A store's space on disk: the default counts its files' allocated bytes
/// and knows no layout and no reclaiming (`impl Space for X {}`).
pub trait Space: StoreCore {
    /// Space allocated on disk (like `du`), in bytes.
    fn space_used(&self) -> Result<u64> {
        crate::measure::space::allocated_bytes(&self.files()?)
    }
    /// Marks the dataset complete ([`StoreCore::finish`]) and returns its
    /// space once it is: the default does one after the other; a store
    /// whose measure is a walk of many files may overlap the two.
    fn finish_and_measure(&mut self, manifest: &crate::dataset::Manifest) -> Result<u64> {
        self.finish(manifest)?;
        self.space_used()
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
