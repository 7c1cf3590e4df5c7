//! Writes without a rollback journal (`journal_mode=off` or `memory`)
//! cannot be undone when the writer is interrupted (kill -9, a crash): the
//! database may be left with a half-done transaction that `PRAGMA
//! integrity_check` or `--verify` would find, or that silently tears blobs.
//! So a connection that is about to write that way first records itself in
//! `blobbench_meta` (still under the database's own, safe journal mode) and
//! removes the record when it closes. Each writer has a record of its own,
//! named by its process (pid and start time) and a number within it: the
//! workers of `run --threads` and writers in other processes come and go
//! without touching each other's. A record whose process is still running
//! belongs to a writer at work, not an interrupted one; a record whose
//! process has ended means such a writer was interrupted, and the dataset
//! is refused with the fix.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::Connection;

use super::meta::{META_TABLE, has_table, read_manifest};
use crate::error::{Error, Result};
use crate::process::ProcessStamp;
use crate::store::contract::Access;
use crate::target::SqliteSettings;

/// The names of the records in `blobbench_meta` start with this.
const PREFIX: &str = "unsafe-writer:";

/// Tells the connections of one process apart.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// How long removing a record waits for another writer's lock.
const CLEAR_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether the record `name` was left by a writer that is no longer
/// running. A record not named as this version names them (an older
/// blobbench's `PID-N`, which did not say when its process started) is
/// taken as interrupted: refusing a sound database is the lesser harm.
fn left_by_ended_writer(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return true;
    };
    let stamp = rest
        .rsplit_once('-')
        .and_then(|(stamp, _writer)| ProcessStamp::parse(stamp));
    !stamp.is_some_and(|s| s.is_running())
}

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
            ProcessStamp::current().to_text(),
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
    /// Best effort (it runs as the store is dropped), but it waits for
    /// another writer's lock rather than leave a record behind that would
    /// later be taken for an interrupted writer's.
    pub fn clear(&self, conn: &Connection) {
        let _ = conn.busy_timeout(CLEAR_WAIT);
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
    let found = interrupted_writer(conn, path)?;
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

/// What the first record of an interrupted writer says it was doing, or
/// None when every record belongs to a writer still running.
fn interrupted_writer(conn: &Connection, path: &Path) -> Result<Option<String>> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT name, value FROM {META_TABLE} WHERE name LIKE '{PREFIX}%'"
        ))
        .map_err(|e| Error::sqlite(path, e))?;
    let records = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(|e| Error::sqlite(path, e))?;
    for record in records {
        let (name, what) = record.map_err(|e| Error::sqlite(path, e))?;
        if left_by_ended_writer(&name) {
            return Ok(Some(what));
        }
    }
    Ok(None)
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
            [format!("{PREFIX}{}-%", ProcessStamp::current().to_text())],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database with blobbench's meta table, and the settings of a
    /// writer without a rollback journal.
    fn database(dir: &Path) -> (std::path::PathBuf, Connection, SqliteSettings) {
        let path = dir.join("o.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "CREATE TABLE {META_TABLE}(name TEXT PRIMARY KEY, value TEXT)"
        ))
        .unwrap();
        let settings = SqliteSettings {
            journal_mode: Some("off".into()),
            ..Default::default()
        };
        (path, conn, settings)
    }

    fn record(conn: &Connection, name: &str) {
        conn.execute(
            &format!("INSERT INTO {META_TABLE}(name, value) VALUES(?1, 'journal_mode=off: x')"),
            [name],
        )
        .unwrap();
    }

    /// Writers of one process, each with its own record: none is refused
    /// for another's, and one closing leaves the others' records alone.
    #[test]
    fn writers_at_work_are_not_taken_for_interrupted_ones() {
        let dir = tempfile::tempdir().unwrap();
        let (path, conn, settings) = database(dir.path());
        let other = Connection::open(&path).unwrap();
        let first = UnsafeWriter::mark(&conn, &path, &settings, Access::ReadWrite)
            .unwrap()
            .expect("journal_mode=off is recorded");
        refuse_if_damaged(&other, &path).unwrap();
        let second = UnsafeWriter::mark(&other, &path, &settings, Access::ReadWrite)
            .unwrap()
            .unwrap();
        assert_ne!(first.name, second.name);
        first.clear(&conn);
        let left: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {META_TABLE} WHERE name = ?1"),
                [&second.name],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 1, "the other writer's record stays");
        refuse_if_damaged(&conn, &path).unwrap();
        second.clear(&other);
        assert_eq!(interrupted_writer(&conn, &path).unwrap(), None);
    }

    /// A record whose process has ended, or that cannot say which process
    /// made it, is an interrupted writer's: the database is refused.
    #[test]
    fn a_record_of_an_ended_process_is_refused() {
        let max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let me = ProcessStamp::current();
        for name in [
            format!("{PREFIX}{}-1-0", max + 1),
            // This pid, but started at another time: its pid was reused.
            format!("{PREFIX}{}-{}-0", me.pid, me.start + 1),
            // Written by an older blobbench: no start time to check.
            format!("{PREFIX}{}-0", me.pid),
            format!("{PREFIX}garbage"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let (path, conn, _) = database(dir.path());
            record(&conn, &format!("{PREFIX}{}-7", me.to_text()));
            refuse_if_damaged(&conn, &path).unwrap();
            record(&conn, &name);
            let err = refuse_if_damaged(&conn, &path).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{name}");
            assert!(err.to_string().contains("may be damaged"), "{name}: {err}");
        }
    }
}
