//! Whether another process waits to write a rollback-journal SQLite
//! database: it holds the PENDING lock, the byte SQLite's unix VFS locks
//! while it waits for readers' shared locks to go so it can commit.
//!
//! SQLite grants a connection's shared lock without asking the OS when
//! another connection of the same process already holds one, so a
//! process whose connections keep overlapping read transactions (a busy
//! server) would never let that writer in. Asking the OS which lock
//! another process holds on the PENDING byte (F_GETLK) lets such a
//! process stop beginning read transactions until the writer is through.

use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use crate::error::{Error, FailureClass, Result};
use crate::store::contract::Access;
use crate::target::SqliteSettings;

/// SQLite's PENDING byte: 0x40000000 in the database file, the first byte
/// of the lock range (sqlite3PendingByte; never moved outside tests).
const PENDING_BYTE: i64 = 0x4000_0000;

/// Whether another process holds the PENDING (or an EXCLUSIVE) lock of
/// the database file at `path`: a writer waits for readers, or commits.
/// This process's own locks are never reported (POSIX locks do not
/// conflict with their own process's).
pub(crate) fn writer_pending(path: &Path) -> Result<bool> {
    super::map::with_lasting_file(path, |file| {
        // SAFETY: fcntl(F_GETLK) on an open descriptor with a zeroed,
        // then filled, flock; it only reads the kernel's lock table.
        let mut probe: libc::flock = unsafe { std::mem::zeroed() };
        probe.l_type = libc::F_RDLCK as libc::c_short;
        probe.l_whence = libc::SEEK_SET as libc::c_short;
        probe.l_start = PENDING_BYTE as libc::off_t;
        probe.l_len = 1;
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut probe) };
        if rc != 0 {
            return Err(Error::io(
                "cannot ask for the locks of",
                path,
                std::io::Error::last_os_error(),
            ));
        }
        Ok(probe.l_type != libc::F_UNLCK as libc::c_short)
    })?
}

/// The error a read snapshot begins with while a writer waits: a lock
/// refusal ([`Error::is_busy`]), so callers wait and try again.
pub(crate) fn writer_waiting_error(path: &Path) -> Error {
    Error::Failed {
        target: path.display().to_string(),
        class: FailureClass::Busy,
        message: "a writer waits for the readers to finish (database is locked)".into(),
    }
}

/// A read-only connection to the database at `path` that holds SQLite's
/// SHARED lock until it is dropped, so no other process can commit to the
/// database, and so change a page of it, meanwhile. Only when the target
/// asks for it (`locking_mode=exclusive`, under which a connection keeps
/// the lock of its first read) and the database keeps a rollback journal
/// (in WAL mode readers keep no writer out): None otherwise. Waits up to
/// `wait` for a writer that holds the database to finish.
pub(crate) fn keep_writers_out(
    path: &Path,
    settings: &SqliteSettings,
    wait: Duration,
) -> Result<Option<Connection>> {
    let exclusive = settings
        .locking_mode
        .as_deref()
        .is_some_and(|m| m.eq_ignore_ascii_case("exclusive"));
    if !exclusive {
        return Ok(None);
    }
    let conn = super::open_connection(path, Access::ReadOnly)?;
    let (journal_mode, _) = super::apply_settings(&conn, path, settings, Access::ReadOnly)?;
    if journal_mode == "wal" {
        return Ok(None);
    }
    let err = |e| Error::sqlite(path, e);
    conn.busy_timeout(wait).map_err(err)?;
    // The first read under locking_mode=exclusive takes the lock for good.
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(err)?;
    Ok(Some(conn))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes a write lock on SQLite's PENDING byte through an open file
    /// description lock (F_OFD_SETLK): unlike a POSIX lock of this process,
    /// it conflicts with this process's F_GETLK, as another process's would.
    fn hold_pending(file: &std::fs::File) {
        // SAFETY: fcntl on an open descriptor with a filled flock.
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = libc::F_WRLCK as libc::c_short;
        lock.l_whence = libc::SEEK_SET as libc::c_short;
        lock.l_start = PENDING_BYTE as libc::off_t;
        lock.l_len = 1;
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &lock) };
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    }

    #[test]
    fn a_pending_lock_of_another_owner_is_seen_and_its_release_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.db");
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        assert!(!writer_pending(&path).unwrap(), "nobody holds it yet");
        let other = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        hold_pending(&other);
        assert!(writer_pending(&path).unwrap(), "a waiting writer");
        // Closing the description releases its lock.
        drop(other);
        assert!(!writer_pending(&path).unwrap(), "the writer is through");
        assert!(writer_waiting_error(&path).is_busy());
    }
}
