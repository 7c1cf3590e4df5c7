//! The core of a session: the operations every backend implements and a
//! run times (read, write, transactions), plus the sizes and pieces a
//! verifier and the executor's other callers ask for.

use crate::error::{Error, Result};

/// Work on an open store: prepared statements, handles and buffers reused
/// from one operation to the next. The operations every backend
/// implements; what only a server asks of a session is in
/// [`Serving`](super::Serving) and [`Snapshots`](super::Snapshots).
pub trait SessionCore {
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
    /// Runs any deferred durability work (a WAL checkpoint); timed separately.
    fn checkpoint(&mut self) -> Result<()> {
        Ok(())
    }
    /// How long an operation waits for a lock another connection holds
    /// before failing (SQLite's busy timeout; 5 s unless set). Stores
    /// without such locks ignore it.
    fn wait_for_locks(&mut self, _wait: std::time::Duration) -> Result<()> {
        Ok(())
    }
}
