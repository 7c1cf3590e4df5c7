//! Writes without a rollback journal (`journal_mode=off` or `memory`)
//! cannot be undone when the writer is interrupted (kill -9, a crash): the
//! database may be left with a half-done transaction that `PRAGMA
//! integrity_check` or `--verify` would find, or that silently tears blobs.
//! So a connection that is about to write that way first records itself in
//! `blobbench_meta` (still under the database's own, safe journal mode) and
//! removes the record when it closes; a record found by a later open means
//! such a writer was interrupted, and the dataset is refused with the fix.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::{Connection, OptionalExtension};

use super::Access;
use super::sqlite_meta::{META_TABLE, has_table, read_manifest};
use crate::error::{Error, Result};
use crate::target::SqliteSettings;

/// The names of the records in `blobbench_meta` start with this.
const PREFIX: &str = "unsafe-writer:";

/// Tells the connections of one process apart.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The record of one connection writing without a rollback journal;
/// [`UnsafeWriter::clear`] removes it when the connection closes.
pub(crate) struct UnsafeWriter {
    name: String,
}

impl UnsafeWriter {
    /// Records `conn` as an unsafe writer when it is about to write under
    /// `journal_mode=off` or `memory` on a database blobbench made (one
    /// with a meta table); None otherwise. Call before the journal mode is
    /// switched, so the record itself is written safely.
    pub fn mark(
        conn: &Connection,
        path: &Path,
        settings: &SqliteSettings,
        access: Access,
    ) -> Result<Option<UnsafeWriter>> {
        let Some(mode) = settings.journal_mode.as_deref() else {
            return Ok(None);
        };
        let unsafe_mode = mode.eq_ignore_ascii_case("off") || mode.eq_ignore_ascii_case("memory");
        if access == Access::ReadOnly || !unsafe_mode || !has_table(conn, path, META_TABLE)? {
            return Ok(None);
        }
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let what = format!(
            "journal_mode={}: {}",
            mode.to_ascii_lowercase(),
            crate::dataset::current_command()
        );
        conn.execute(
            &format!("INSERT OR REPLACE INTO {META_TABLE}(name, value) VALUES(?1, ?2)"),
            [&name, &what],
        )
        .map_err(|e| Error::sqlite(path, e))?;
        Ok(Some(UnsafeWriter { name }))
    }

    /// Removes the record: the connection closes with nothing half-done.
    /// Best effort (it runs as the store is dropped).
    pub fn clear(&self, conn: &Connection) {
        let _ = conn.execute(
            &format!("DELETE FROM {META_TABLE} WHERE name = ?1"),
            [&self.name],
        );
    }
}

/// Refuses a database that an interrupted writer without a rollback
/// journal may have damaged, naming how to make it again or check it.
pub(crate) fn refuse_if_damaged(conn: &Connection, path: &Path) -> Result<()> {
    if !has_table(conn, path, META_TABLE)? {
        return Ok(());
    }
    let found: Option<String> = conn
        .query_row(
            &format!("SELECT value FROM {META_TABLE} WHERE name LIKE '{PREFIX}%' LIMIT 1"),
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| Error::sqlite(path, e))?;
    let Some(what) = found else {
        return Ok(());
    };
    let shown = path.display();
    let remake = match read_manifest(conn, path)?.and_then(|m| m.command) {
        Some(c) => format!("make it again with `{c}`"),
        None => "make it again with blobbench init".to_string(),
    };
    Err(Error::usage(format!(
        "{shown} may be damaged: a command writing it without a rollback journal ({what}) was interrupted, so its half-done transaction could not be undone: {remake}, or check it with `sqlite3 {shown} 'pragma integrity_check'` and, if that says ok, clear this mark with `sqlite3 {shown} \"DELETE FROM {META_TABLE} WHERE name LIKE '{PREFIX}%'\"`"
    )))
}

/// Removes the records of this process's writers, for a process whose
/// stores live until it exits (a server's per-thread stores) once it has
/// stopped writing. Best effort.
pub(crate) fn clear_this_process(path: &Path) {
    let Ok(conn) = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) else {
        return;
    };
    if has_table(&conn, path, META_TABLE).unwrap_or(false) {
        let _ = conn.execute(
            &format!("DELETE FROM {META_TABLE} WHERE name LIKE ?1"),
            [format!("{PREFIX}{}-%", std::process::id())],
        );
    }
}
