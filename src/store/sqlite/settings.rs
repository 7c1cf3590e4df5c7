//! A connection's settings: the PRAGMAs a target asks for applied and read
//! back, and how writes reach the disk under them, in words.

use std::path::Path;

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::store::contract::{Access, ReadPath, SessionOptions};
use crate::target::SqliteSettings;

/// How writes reach the disk through SQL (or the blob API) under the
/// journal mode and synchronous setting in `settings`, in words.
pub(crate) fn describe_sql_writes(
    settings: &Map<String, Value>,
    options: &SessionOptions,
) -> String {
    let get = |k: &str| {
        settings
            .get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string()
    };
    format!(
        "SQLite {} journal_mode={} synchronous={}, {}",
        if options.read_path == ReadPath::BlobApi {
            "blob-api write in place,"
        } else {
            "UPDATE,"
        },
        get("journal_mode"),
        get("synchronous"),
        if options.per_op_transaction {
            "one transaction per write"
        } else {
            "one transaction for all writes"
        }
    )
}

/// Applies connection settings and returns what is in force afterwards.
pub(crate) fn apply_settings(
    conn: &Connection,
    path: &Path,
    settings: &SqliteSettings,
    access: Access,
) -> Result<(String, Map<String, Value>)> {
    let err = |e| Error::sqlite(path, e);
    let page_size: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .map_err(err)?;
    if let Some(want) = settings.page_size
        && i64::from(want) != page_size
    {
        return Err(Error::usage(format!(
            "page_size={want} asked but {} has page size {page_size}: the page size is set when a database is created (blobbench init --pagesize {want})",
            path.display()
        )));
    }
    let auto_vacuum = auto_vacuum_of(conn, path)?;
    if let Some(want) = &settings.auto_vacuum
        && *want != auto_vacuum
    {
        return Err(Error::usage(format!(
            "auto_vacuum={want} asked but {} has auto_vacuum {auto_vacuum}: it is set when a database is created (blobbench init sqlite:PATH?auto_vacuum={want} makes a new one)",
            path.display()
        )));
    }
    if let Some(n) = settings.cache_size {
        conn.execute_batch(&format!("PRAGMA cache_size={n}"))
            .map_err(err)?;
    }
    if let Some(n) = settings.mmap_size {
        // SQLite's own map cannot be guarded; a truncation under it at
        // least says so before the process ends (map_guard.rs).
        crate::store::map_guard::install();
        conn.execute_batch(&format!("PRAGMA mmap_size={n}"))
            .map_err(err)?;
    }
    if let Some(m) = &settings.locking_mode {
        conn.execute_batch(&format!("PRAGMA locking_mode={m}"))
            .map_err(err)?;
    }
    if let Some(s) = &settings.synchronous {
        conn.execute_batch(&format!("PRAGMA synchronous={s}"))
            .map_err(err)?;
    }
    if let Some(n) = settings.wal_autocheckpoint {
        conn.execute_batch(&format!("PRAGMA wal_autocheckpoint={n}"))
            .map_err(err)?;
    }
    let current: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .map_err(err)?;
    if let Some(j) = &settings.journal_mode
        && !current.eq_ignore_ascii_case(j)
    {
        if access == Access::ReadOnly {
            return Err(Error::usage(format!(
                "journal_mode={j} would change {} (it is in {current} mode), but this run only reads it; set the journal mode with an --update run or blobbench init",
                path.display()
            )));
        }
        let got: String = conn
            .query_row(&format!("PRAGMA journal_mode={j}"), [], |r| r.get(0))
            .map_err(err)?;
        if !got.eq_ignore_ascii_case(j) {
            return Err(Error::usage(format!(
                "SQLite refused journal_mode={j} on {} (it stayed {got})",
                path.display()
            )));
        }
    }
    let mut map = Map::new();
    let int = |sql: &str| -> Result<i64> { conn.query_row(sql, [], |r| r.get(0)).map_err(err) };
    let journal_mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .map_err(err)?;
    let sync = match int("PRAGMA synchronous")? {
        0 => "off",
        1 => "normal",
        2 => "full",
        3 => "extra",
        _ => "?",
    };
    let locking: String = conn
        .query_row("PRAGMA locking_mode", [], |r| r.get(0))
        .map_err(err)?;
    map.insert("page_size".into(), json!(page_size));
    map.insert("auto_vacuum".into(), json!(auto_vacuum));
    map.insert("journal_mode".into(), json!(journal_mode));
    map.insert("synchronous".into(), json!(sync));
    map.insert("cache_size".into(), json!(int("PRAGMA cache_size")?));
    map.insert("mmap_size".into(), json!(int("PRAGMA mmap_size")?));
    map.insert("locking_mode".into(), json!(locking));
    map.insert(
        "wal_autocheckpoint".into(),
        json!(int("PRAGMA wal_autocheckpoint")?),
    );
    map.insert("page_count".into(), json!(int("PRAGMA page_count")?));
    map.insert(
        "freelist_count".into(),
        json!(int("PRAGMA freelist_count")?),
    );
    map.insert("access".into(), json!(access.label()));
    Ok((journal_mode.to_ascii_lowercase(), map))
}

/// The database's auto_vacuum mode by name (none, full, incremental).
pub(crate) fn auto_vacuum_of(conn: &Connection, path: &Path) -> Result<&'static str> {
    let n: i64 = conn
        .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))
        .map_err(|e| Error::sqlite(path, e))?;
    Ok(crate::target::AUTO_VACUUM
        .get(n as usize)
        .copied()
        .unwrap_or("?"))
}
