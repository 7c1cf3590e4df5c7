//! The dataset's manifest kept inside a SQLite database (table
//! `blobbench_meta`), and the table check it needs: shared by the sqlite
//! and sqlite-ext stores and the unsafe-writes mark, so none of them
//! imports another for it.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use crate::dataset::Manifest;
use crate::error::{Error, Result};

/// The table blobbench keeps its own records in, beside the data.
pub(crate) const META_TABLE: &str = "blobbench_meta";

/// Whether the database has a table named `table`.
pub(crate) fn has_table(conn: &Connection, path: &Path, table: &str) -> Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type='table' AND name=?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
    .map_err(|e| Error::sqlite(path, e))
}

/// The dataset's manifest, when the database has one.
pub(crate) fn read_manifest(conn: &Connection, path: &Path) -> Result<Option<Manifest>> {
    let text = read_meta(conn, path, "dataset")?;
    Ok(text.as_deref().and_then(Manifest::parse))
}

/// blobbench's record `name` in the database, when it has one.
fn read_meta(conn: &Connection, path: &Path, name: &str) -> Result<Option<String>> {
    if !has_table(conn, path, META_TABLE)? {
        return Ok(None);
    }
    conn.query_row(
        &format!("SELECT value FROM {META_TABLE} WHERE name=?1"),
        [name],
        |r| r.get(0),
    )
    .optional()
    .map_err(|e| Error::sqlite(path, e))
}

/// Records `manifest` in place of the one `create_database` wrote, in its
/// own transaction after the data's, then checkpoints a WAL so the mark is
/// in the database file itself.
pub(crate) fn write_manifest_row(
    conn: &Connection,
    path: &Path,
    manifest: &Manifest,
) -> Result<()> {
    let err = |e| Error::sqlite(path, e);
    conn.execute(
        &format!("UPDATE {META_TABLE} SET value=?1 WHERE name='dataset'"),
        [manifest.to_json()],
    )
    .map_err(err)?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .map_err(err)?;
    if mode.eq_ignore_ascii_case("wal") {
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(err)?;
    }
    Ok(())
}

/// The dataset's ledger of acknowledged versions, when the database has one.
pub(crate) fn read_ledger(conn: &Connection, path: &Path) -> Result<Option<String>> {
    read_meta(conn, path, "ledger")
}

/// Records the ledger `text` in its own transaction (the data's are
/// committed: a ledger never names a write still in flight). In WAL mode
/// the row stays in the WAL as any write does: closing this connection
/// does not checkpoint on the run's behalf, so a `--nocheckpoint` run's
/// database file is as it was until its own commits.
pub(crate) fn write_ledger(conn: &Connection, path: &Path, text: &str) -> Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )
    .map_err(|e| Error::sqlite(path, e))?;
    conn.execute(
        &format!("INSERT OR REPLACE INTO {META_TABLE}(name, value) VALUES ('ledger', ?1)"),
        [text],
    )
    .map(|_| ())
    .map_err(|e| Error::sqlite(path, e))
}
