//! Read snapshots a server holds across requests: one read lock for many
//! reads, let go while a writer waits for it.

use crate::error::Result;

/// A read snapshot held across many reads, and whether a writer waits for
/// it. The defaults hold nothing (`begin_snapshot` returns false), right
/// for a store whose reads take no lock; SQLite overrides them.
pub trait Snapshots {
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
