//! Blobs inside an SQLite database, in kvtest's table `kv(k INTEGER PRIMARY KEY, v BLOB)`,
//! so that databases made by kvtest and by blobbench are interchangeable, or
//! in the blog's `files(id, data)` (see `layout`): the store, its catalog
//! and what it says about itself.

use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value, json};

use super::database::{
    check_is_database, create_database, database_files, open_connection, replace_own_database,
};
use super::layout::SqliteLayout;
use super::meta::{read_manifest, write_manifest_row};
use super::session::SqliteSession;
use super::settings::{apply_settings, describe_sql_writes};
use super::space::{database_layout, reclaim_database};
use super::unsafe_writes::{UnsafeWriter, refuse_if_damaged};
use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::store::contract::{
    Access, Catalog, DiskLayout, Engine, Reclaim, Session, SessionOptions, Space, StoreCore,
    StoreInfo, first_key_from_one,
};
use crate::target::SqliteSettings;

/// SQLite's `PRAGMA integrity_check`, its lines joined by "; " ("ok" when sound).
pub(crate) fn integrity_check(conn: &Connection, path: &Path) -> Result<String> {
    let mut stmt = conn
        .prepare("PRAGMA integrity_check")
        .map_err(|e| Error::sqlite(path, e))?;
    let lines: Vec<String> = stmt
        .query_map([], |row| row.get::<_, String>(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| Error::sqlite(path, e))?;
    Ok(lines.join("; "))
}

/// Blobs in table `kv` (or the blog's `files`), one row per key.
pub struct SqliteStore {
    path: PathBuf,
    conn: Connection,
    layout: SqliteLayout,
    journal_mode: String,
    settings: Map<String, Value>,
    /// Present while this connection writes without a rollback journal.
    unsafe_writer: Option<UnsafeWriter>,
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        if let Some(w) = self.unsafe_writer.take() {
            w.clear(&self.conn);
        }
    }
}

impl SqliteStore {
    /// Opens the database at `path` with `settings` applied.
    pub fn open(path: &Path, settings: &SqliteSettings, access: Access) -> Result<Self> {
        check_is_database(
            path,
            &format!("blobbench init {} --count 100k --size 10k", path.display()),
        )?;
        let conn = open_connection(path, access)?;
        let layout = super::layout::detect(&conn, path, settings.layout)?;
        refuse_if_damaged(&conn, path)?;
        let unsafe_writer = UnsafeWriter::mark(&conn, path, settings, access)?;
        let (journal_mode, mut settings) = apply_settings(&conn, path, settings, access)?;
        settings.insert("layout".into(), json!(layout.name()));
        Ok(SqliteStore {
            path: path.to_path_buf(),
            conn,
            layout,
            journal_mode,
            settings,
            unsafe_writer,
        })
    }

    /// Creates an empty dataset at `path`, replacing only one blobbench made.
    pub fn create(path: &Path, settings: &SqliteSettings, manifest: &Manifest) -> Result<Self> {
        replace_own_database(path, "database")?;
        let layout = settings.layout.unwrap_or_default();
        create_database(path, settings, manifest, layout.sql().create)?;
        let mut rest = settings.clone();
        rest.page_size = None;
        rest.layout = Some(layout);
        SqliteStore::open(path, &rest, Access::ReadWrite)
    }

    /// The open connection, for what the Store trait does not cover.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

/// Finds the key range: the manifest when it agrees with the table (kvtest
/// init may have rebuilt kv after blobbench wrote it), else min/max of k.
pub(crate) fn catalog_of(conn: &Connection, path: &Path, table: &str) -> Result<Catalog> {
    let err = |e| Error::sqlite(path, e);
    let manifest = read_manifest(conn, path)?;
    if let Some(m) = &manifest {
        m.require_complete(&path.display().to_string())?;
    }
    // Two queries: SQLite answers min() or max() alone from the b-tree's
    // edge, but `SELECT min(k), max(k)` together scans the whole table.
    let edge = |f: &str| -> Result<Option<i64>> {
        let value: rusqlite::types::Value = conn
            .query_row(&format!("SELECT {f}(k) FROM {table}"), [], |r| r.get(0))
            .map_err(err)?;
        // A column without INTEGER PRIMARY KEY takes any type; SQLite
        // sorts numbers before text and blobs, so min and max find them.
        use rusqlite::types::Value::*;
        let other = match value {
            Null => return Ok(None),
            Integer(k) => return Ok(Some(k)),
            Real(k) => format!("{k}"),
            Text(k) => format!("'{}'", k.chars().take(40).collect::<String>()),
            Blob(_) => "a blob".into(),
        };
        Err(Error::usage(format!(
            "{} holds key {other} in its {table} table: blobbench keys are whole numbers from 1 up",
            path.display()
        )))
    };
    let (min, max) = (edge("min")?, edge("max")?);
    let (Some(min), Some(max)) = (min, max) else {
        return Err(Error::usage(format!(
            "\"{}\" holds no blobs (its {table} table is empty)",
            path.display()
        )));
    };
    let (first, last) = (first_key_from_one(path, min)?, max as u64);
    if let Some(m) = manifest
        && m.first_key == first
        && m.last_key == last
    {
        return Ok(Catalog {
            first_key: first,
            last_key: last,
            count: m.count,
            manifest: Some(m),
            source: "manifest".into(),
        });
    }
    // Without a manifest the keys are counted: min..max says nothing about
    // the keys in between (1 and 10^10 are two keys, not ten billion).
    let count: i64 = conn
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .map_err(err)?;
    Ok(Catalog {
        first_key: first,
        last_key: last,
        count: count as u64,
        manifest: None,
        source: "scan".into(),
    })
}

/// The key range of the blog's table, from its ids (every one is read: text
/// ids of several widths have no cheap min and max), with the manifest when
/// it agrees.
fn blog_catalog(conn: &Connection, path: &Path) -> Result<Catalog> {
    let manifest = read_manifest(conn, path)?;
    if let Some(m) = &manifest {
        m.require_complete(&path.display().to_string())?;
    }
    let Some((first, last, count)) = super::layout::blog_keys(conn, path)? else {
        return Err(Error::usage(format!(
            "\"{}\" holds no blobs (its files table is empty)",
            path.display()
        )));
    };
    let agrees = manifest
        .as_ref()
        .is_some_and(|m| (m.first_key, m.last_key, m.count) == (first, last, count));
    Ok(Catalog {
        first_key: first,
        last_key: last,
        count,
        source: if agrees { "manifest" } else { "scan" }.into(),
        manifest: manifest.filter(|_| agrees),
    })
}

impl StoreCore for SqliteStore {
    fn info(&self) -> StoreInfo {
        StoreInfo {
            kind: "sqlite".into(),
            path: self.path.clone(),
            settings: self.settings.clone(),
            version: Some(rusqlite::version().to_string()),
        }
    }

    fn describe_writes(&self, options: &SessionOptions) -> String {
        describe_sql_writes(&self.settings, options)
    }

    fn layout(&self) -> Option<&'static str> {
        Some(self.layout.describe())
    }

    /// The scan is one query in key order: any keys, however far apart.
    fn check_scan(&self, _catalog: &Catalog) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        write_manifest_row(&self.conn, &self.path, manifest)
    }

    fn read_ledger(&mut self) -> Result<Option<String>> {
        super::meta::read_ledger(&self.conn, &self.path)
    }

    fn write_ledger(&mut self, text: &str) -> Result<()> {
        super::meta::write_ledger(&self.conn, &self.path, text)
    }

    /// One query in key order. Refuses negative keys (blob files are named
    /// for keys >= 0) and numbers (text is copied as its bytes).
    fn scan(&mut self, sink: &mut dyn FnMut(u64, &[u8]) -> Result<()>) -> Result<u64> {
        let db = &self.path;
        let mut stmt = self
            .conn
            .prepare(self.layout.sql().scan)
            .map_err(|e| Error::sqlite(db, e))?;
        let mut rows = stmt.query([]).map_err(|e| Error::sqlite(db, e))?;
        let mut count = 0u64;
        while let Some(row) = rows.next().map_err(|e| Error::sqlite(db, e))? {
            let key = match self.layout {
                SqliteLayout::Kv => row.get::<_, i64>(0).map_err(|e| Error::sqlite(db, e))?,
                SqliteLayout::Blog => {
                    let id = row.get_ref(0).map_err(|e| Error::sqlite(db, e))?;
                    super::layout::key_of_id(db, id)? as i64
                }
            };
            if key < 0 {
                return Err(Error::usage(format!(
                    "{} holds key {key}: files can only be named for keys >= 0",
                    db.display()
                )));
            }
            // As a read hands them over: TEXT as its bytes, NULL as empty.
            let data = match row.get_ref(1).map_err(|e| Error::sqlite(db, e))? {
                ValueRef::Blob(b) | ValueRef::Text(b) => b,
                ValueRef::Null => &[],
                ValueRef::Integer(_) | ValueRef::Real(_) => {
                    return Err(Error::usage(format!(
                        "key {key} of {} holds a number, not a blob; only blobs and text can be copied",
                        db.display()
                    )));
                }
            };
            sink(key as u64, data)?;
            count += 1;
        }
        Ok(count)
    }

    fn catalog(&mut self) -> Result<Catalog> {
        let mut c = match self.layout {
            SqliteLayout::Kv => catalog_of(&self.conn, &self.path, "kv")?,
            SqliteLayout::Blog => blog_catalog(&self.conn, &self.path)?,
        };
        // A manifest whose spec no longer matches the blobs (kvtest init over
        // a blobbench file) must not drive --verify.
        if let Some(spec) = c.manifest.as_ref().and_then(|m| m.spec.clone()) {
            let len: Option<i64> = self
                .conn
                .query_row(
                    self.layout.sql().length,
                    [self.layout.key(c.last_key)],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| Error::sqlite(&self.path, e))?
                .flatten();
            if len != Some(spec.size_of(c.last_key) as i64) {
                c.manifest = None;
                c.source = "scan".into();
            }
        }
        Ok(c)
    }

    fn session(&mut self, options: SessionOptions) -> Result<Box<dyn Session + '_>> {
        let exclusive = self
            .settings
            .get("locking_mode")
            .is_some_and(|m| m == "exclusive");
        Ok(Box::new(SqliteSession::new(
            &self.conn,
            &self.path,
            self.layout,
            options,
            self.journal_mode == "wal",
            exclusive,
        )))
    }

    fn files(&self) -> Result<Vec<PathBuf>> {
        Ok(database_files(&self.path))
    }
}

impl Engine for SqliteStore {
    fn integrity_check(&mut self) -> Result<Option<String>> {
        integrity_check(&self.conn, &self.path).map(Some)
    }

    fn engine_stats(&self) -> Map<String, Value> {
        use rusqlite::ffi;
        let mut m = Map::new();
        // SAFETY: the handle belongs to self.conn, which outlives this call;
        // sqlite3_db_status only reads counters.
        let db = unsafe { self.conn.handle() };
        for (name, op) in [
            ("page_cache_hits", ffi::SQLITE_DBSTATUS_CACHE_HIT),
            ("page_cache_misses", ffi::SQLITE_DBSTATUS_CACHE_MISS),
            ("page_cache_writes", ffi::SQLITE_DBSTATUS_CACHE_WRITE),
            ("page_cache_bytes", ffi::SQLITE_DBSTATUS_CACHE_USED),
        ] {
            let (mut current, mut highwater) = (0, 0);
            let rc = unsafe { ffi::sqlite3_db_status(db, op, &mut current, &mut highwater, 0) };
            if rc == ffi::SQLITE_OK {
                m.insert(name.into(), json!(current));
            }
        }
        m
    }
}

impl Space for SqliteStore {
    /// Each blob's overflow pages, found on one map of the file.
    fn disk_layout(&mut self) -> Result<Option<DiskLayout>> {
        database_layout(&self.conn, &self.path, self.layout).map(Some)
    }

    /// incremental_vacuum (auto_vacuum=incremental only, else None) or VACUUM.
    fn reclaim(&mut self, how: Reclaim) -> Result<Option<String>> {
        reclaim_database(&self.conn, &self.path, how)
    }
}
