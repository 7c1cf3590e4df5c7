//! Blobs inside an SQLite database, in kvtest's table `kv(k INTEGER PRIMARY KEY, v BLOB)`,
//! so that databases made by kvtest and by blobbench are interchangeable, or
//! in the blog's `files(id, data)` (see `sqlite_layout`).

use std::path::{Path, PathBuf};

use rusqlite::blob::Blob;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, MAIN_DB, OpenFlags, OptionalExtension, Statement, params};
use serde_json::{Map, Value, json};

use super::sqlite_layout::{SqliteLayout, Statements};
use super::sqlite_meta::{META_TABLE, read_manifest, write_manifest_row};
use super::unsafe_writes::{UnsafeWriter, refuse_if_damaged};
use super::{Access, Catalog, ReadPath, Session, SessionOptions, Store, StoreInfo, missing_key};
use crate::dataset::Manifest;
use crate::error::{Error, Result};
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

/// Checks that `path` exists and starts with SQLite's magic header.
pub(crate) fn check_is_database(path: &Path, make_hint: &str) -> Result<()> {
    if !path.exists() {
        return Err(Error::usage(format!(
            "target \"{}\" does not exist (create it with: {make_hint})",
            path.display()
        )));
    }
    if path.is_dir() {
        return Err(Error::usage(format!(
            "target \"{}\" is a folder, not a database: name it dir:{0} or tree:{0}",
            path.display()
        )));
    }
    // The header is left to SQLite (NOTADB becomes a usage error naming the
    // file): reading it here through a descriptor of our own would, when
    // closed, drop every POSIX lock this process's connections hold on the
    // file (a server's locking_mode=exclusive among them). An empty file
    // SQLite would take for an empty database, so it is refused here.
    let len = std::fs::metadata(path)
        .map_err(|e| Error::io("cannot open", path, e))?
        .len();
    if len == 0 {
        let fix = if make_hint.is_empty() {
            "name a database made by blobbench init or kvtest init".to_string()
        } else {
            format!("remove it and make one with {make_hint}")
        };
        return Err(Error::usage(format!(
            "\"{}\" is empty (0 bytes), not a database: {fix}",
            path.display()
        )));
    }
    Ok(())
}

/// Opens the database at `path` and reads its schema once, so that a
/// database left mid-write by an interrupted command is recognised here:
/// a read-write connection rolls its hot journal back (or recovers its
/// WAL) as SQLite does on first use; a read-only one, which must not
/// write, stops with an error saying how to recover it.
pub(crate) fn open_connection(path: &Path, access: Access) -> Result<Connection> {
    let flags = match access {
        Access::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY,
        Access::ReadWrite => OpenFlags::SQLITE_OPEN_READ_WRITE,
    } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| Error::sqlite(path, e))?;
    match conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
        r.get::<_, i64>(0)
    }) {
        Ok(_) => Ok(conn),
        Err(e) => Err(interrupted_error(path, access, e)),
    }
}

/// What SQLite needs write access for before it can read a database
/// left by an interrupted command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Recovery {
    /// A hot journal to roll back (rollback journal modes).
    Rollback,
    /// A WAL whose index must be rebuilt.
    Wal,
    /// A WAL index (`-shm`) that cannot be created or locked.
    WalIndex,
}

/// Whether `e` is SQLite refusing for want of write access to recover.
fn needs_recovery(path: &Path, e: &rusqlite::Error) -> Option<Recovery> {
    use rusqlite::ffi;
    let code = e.sqlite_error()?.extended_code;
    match code {
        ffi::SQLITE_READONLY_ROLLBACK => Some(Recovery::Rollback),
        ffi::SQLITE_READONLY_RECOVERY => Some(Recovery::Wal),
        ffi::SQLITE_READONLY_CANTINIT | ffi::SQLITE_READONLY_CANTLOCK => Some(Recovery::WalIndex),
        _ if code & 0xff == ffi::SQLITE_CANTOPEN && is_wal_database(path) => {
            Some(Recovery::WalIndex)
        }
        _ => None,
    }
}

/// Whether the database file's header says WAL mode (read and write
/// format versions 2, bytes 18 and 19), without SQLite; through the
/// process's lasting descriptor of the file, as closing any descriptor of
/// it would drop the locks other connections of this process hold.
fn is_wal_database(path: &Path) -> bool {
    let mut header = [0u8; 20];
    super::sqlite_map::read_start(path, &mut header).is_ok() && header[18] == 2 && header[19] == 2
}

/// The error for a database SQLite could not read, naming how to recover
/// one left mid-write by an interrupted command (exit status 2).
fn interrupted_error(path: &Path, access: Access, e: rusqlite::Error) -> Error {
    let shown = path.display();
    let how = format!(
        "recover it where it can be written (`sqlite3 {shown} 'pragma integrity_check'` rolls it back), or make it again with blobbench init"
    );
    match (needs_recovery(path, &e), access) {
        (Some(Recovery::Rollback), Access::ReadOnly) => Error::usage(format!(
            "{shown} was left mid-write by an interrupted command (a hot journal {shown}-journal is beside it); this run only reads and will not roll it back: run a command that writes it, such as `blobbench run {shown} --update --count 1`, or {how}"
        )),
        (Some(Recovery::Rollback | Recovery::Wal), _) => Error::usage(format!(
            "{shown} was left mid-write by an interrupted command and SQLite cannot recover it because the file or its folder is not writable: {how}"
        )),
        (Some(Recovery::WalIndex), _) => Error::usage(format!(
            "{shown} is in WAL mode and SQLite cannot create or lock its index {shown}-shm because the folder is not writable: copy the database (with its -wal file) to a writable folder, or convert it where it can be written with `sqlite3 {shown} 'pragma journal_mode=delete'`"
        )),
        (None, _) => Error::sqlite(path, e),
    }
}

/// Whether opening `path` read-only fails only because an interrupted
/// write left a hot journal that a read-write connection would roll back.
fn has_hot_journal(path: &Path) -> bool {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(path, flags)
        .and_then(|c| {
            c.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
                r.get::<_, i64>(0)
            })
        })
        .is_err_and(|e| needs_recovery(path, &e) == Some(Recovery::Rollback))
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
        super::map_guard::install();
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

/// Removes a database and its companions: the companions first, the
/// database last, so that a removal cut short never leaves a stale
/// journal or WAL for a new database of the same name to be "recovered"
/// from.
pub(crate) fn remove_database(path: &Path) -> Result<()> {
    for f in database_files(path).iter().rev() {
        std::fs::remove_file(f).map_err(|e| Error::io("cannot remove", f, e))?;
    }
    Ok(())
}

/// The database's own files: itself plus any WAL, shared-memory or journal.
pub(crate) fn database_files(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let p = PathBuf::from(p);
        if p.exists() {
            files.push(p);
        }
    }
    files
}

/// Removes a database blobbench made, or refuses if it is not ours.
pub(crate) fn replace_own_database(path: &Path, what: &str) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    // Left mid-write by an interrupted init or update: roll the journal
    // back (as any SQLite client would on opening it), so the committed
    // content, and with it the manifest, can be read.
    if check_is_database(path, "").is_ok() && has_hot_journal(path) {
        drop(open_connection(path, Access::ReadWrite)?);
    }
    let ours = check_is_database(path, "").is_ok()
        && open_connection(path, Access::ReadOnly)
            .ok()
            .and_then(|c| read_manifest(&c, path).ok().flatten())
            .is_some();
    if !ours {
        return Err(Error::usage(format!(
            "refusing to replace \"{}\": it exists and is not a {what} made by blobbench; remove it yourself or choose another path",
            path.display()
        )));
    }
    remove_database(path)
}

/// Makes a new database at `path` holding `schema`, the meta table and the
/// (incomplete) `manifest`. It is built under a temporary name beside
/// `path` and renamed into place once committed, so an interrupted init
/// never leaves an empty or half-made file under the dataset's name.
pub(crate) fn create_database(
    path: &Path,
    settings: &SqliteSettings,
    manifest: &Manifest,
    schema: &str,
) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return Err(Error::usage(format!(
            "cannot create \"{}\": folder \"{}\" does not exist",
            path.display(),
            parent.display()
        )));
    }
    let name = path.file_name().map_or_else(
        || "blobbench.db".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    remove_stale_builds(path, &name);
    let tmp = path.with_file_name(format!(".{name}.init-{}", std::process::id()));
    let made = build_database(&tmp, path, settings, manifest, schema).and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot rename", &tmp, e))
    });
    if made.is_err() {
        let _ = remove_database(&tmp);
    }
    made
}

/// Removes what earlier, interrupted inits of `path` left under their
/// temporary names (`.NAME.init-PID`, see [`create_database`]). Best effort.
fn remove_stale_builds(path: &Path, name: &str) {
    let prefix = format!(".{name}.init-");
    let folder = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p.to_path_buf(),
        None => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let pid = file.strip_prefix(&prefix).unwrap_or("");
        if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) {
            let _ = remove_database(&entry.path());
        }
    }
}

/// Creates the database file `tmp` (to become `path`) and commits its schema.
fn build_database(
    tmp: &Path,
    path: &Path,
    settings: &SqliteSettings,
    manifest: &Manifest,
    schema: &str,
) -> Result<()> {
    let not_writable = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::CannotOpen)
        | Some(rusqlite::ErrorCode::ReadOnly)
        | Some(rusqlite::ErrorCode::PermissionDenied) => Error::usage(format!(
            "cannot create \"{}\": the folder is not writable; choose another place",
            path.display()
        )),
        _ => Error::sqlite(path, e),
    };
    let conn = Connection::open_with_flags(
        tmp,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(not_writable)?;
    let page_size = settings.page_size.unwrap_or(4096);
    conn.execute_batch(&format!("PRAGMA page_size={page_size};"))
        .map_err(not_writable)?;
    // Like the page size, auto_vacuum takes only before the first table.
    if let Some(mode) = &settings.auto_vacuum {
        conn.execute_batch(&format!("PRAGMA auto_vacuum={mode};"))
            .map_err(not_writable)?;
    }
    conn.execute_batch(&format!(
        "BEGIN; {schema}; CREATE TABLE {META_TABLE}(name TEXT PRIMARY KEY, value TEXT); COMMIT;"
    ))
    .map_err(not_writable)?;
    conn.execute(
        &format!("INSERT INTO {META_TABLE}(name, value) VALUES('dataset', ?1)"),
        [manifest.to_json()],
    )
    .map_err(|e| Error::sqlite(path, e))?;
    // Closed before the rename: no journal is left to belong to `tmp`.
    conn.close().map_err(|(_, e)| Error::sqlite(path, e))
}

impl SqliteStore {
    /// Opens the database at `path` with `settings` applied.
    pub fn open(path: &Path, settings: &SqliteSettings, access: Access) -> Result<Self> {
        check_is_database(
            path,
            &format!("blobbench init {} --count 100k --size 10k", path.display()),
        )?;
        let conn = open_connection(path, access)?;
        let layout = super::sqlite_layout::detect(&conn, path, settings.layout)?;
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

/// The largest blob this SQLite library stores in `kv(k INTEGER PRIMARY
/// KEY, v BLOB)`: SQLite refuses a record longer than its
/// SQLITE_LIMIT_LENGTH (1,000,000,000 bytes unless built otherwise, so it is
/// asked of the library), and the record holds a few header bytes beside
/// the blob (its size, a NULL for the key, the blob's type and length).
pub fn max_blob_bytes() -> u64 {
    let limit = Connection::open_in_memory()
        .map(|conn| {
            // SAFETY: the handle is valid while conn lives; -1 only reads the limit.
            unsafe {
                rusqlite::ffi::sqlite3_limit(conn.handle(), rusqlite::ffi::SQLITE_LIMIT_LENGTH, -1)
            }
        })
        .unwrap_or(1_000_000_000)
        .max(0) as u64;
    let varint_len = |v: u64| (1..9).find(|&k| v < 1u64 << (7 * k)).unwrap_or(9);
    (limit.saturating_sub(12)..=limit)
        .rev()
        .find(|&n| n + 2 + varint_len(2 * n + 12) <= limit)
        .unwrap_or(0)
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
    let (first, last) = (super::first_key_from_one(path, min)?, max as u64);
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
    let Some((first, last, count)) = super::sqlite_layout::blog_keys(conn, path)? else {
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

impl Store for SqliteStore {
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

    fn integrity_check(&mut self) -> Result<Option<String>> {
        integrity_check(&self.conn, &self.path).map(Some)
    }

    /// The scan is one query in key order: any keys, however far apart.
    fn check_scan(&self, _catalog: &Catalog) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        write_manifest_row(&self.conn, &self.path, manifest)
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
                    super::sqlite_layout::key_of_id(db, id)? as i64
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
        Ok(Box::new(SqliteSession {
            conn: &self.conn,
            path: &self.path,
            layout: self.layout,
            sql: self.layout.sql(),
            options,
            wal: self.journal_mode == "wal",
            exclusive: self
                .settings
                .get("locking_mode")
                .is_some_and(|m| m == "exclusive"),
            select: None,
            rowid: None,
            update: None,
            insert: None,
            delete: None,
            length: None,
            small: None,
            data_version: None,
            root_page: None,
            stamps: None,
            read_blob: None,
            write_blob: None,
            buf: Vec::new(),
            in_transaction: false,
            in_snapshot: false,
            mapped: None,
        }))
    }

    fn files(&self) -> Result<Vec<PathBuf>> {
        Ok(database_files(&self.path))
    }

    /// Each blob's overflow pages, found on one map of the file.
    fn disk_layout(&mut self) -> Result<Option<super::DiskLayout>> {
        super::sqlite_space::database_layout(&self.conn, &self.path, self.layout).map(Some)
    }

    /// incremental_vacuum (auto_vacuum=incremental only, else None) or VACUUM.
    fn reclaim(&mut self, how: super::Reclaim) -> Result<Option<String>> {
        super::sqlite_space::reclaim_database(&self.conn, &self.path, how)
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

pub struct SqliteSession<'a> {
    conn: &'a Connection,
    path: &'a Path,
    layout: SqliteLayout,
    sql: &'static Statements,
    options: SessionOptions,
    wal: bool,
    /// locking_mode=exclusive: the connection keeps its locks on purpose.
    exclusive: bool,
    select: Option<Statement<'a>>,
    /// Key to rowid, where the key is not the rowid (the blog's table).
    rowid: Option<Statement<'a>>,
    update: Option<Statement<'a>>,
    insert: Option<Statement<'a>>,
    delete: Option<Statement<'a>>,
    length: Option<Statement<'a>>,
    small: Option<Statement<'a>>,
    data_version: Option<Statement<'a>>,
    root_page: Option<Statement<'a>>,
    /// (PRAGMA data_version, db and WAL stamps) from the last etag(): while
    /// no other connection commits and this one does not write, the files'
    /// stamps need not be read again.
    stamps: Option<(i64, [u64; 6])>,
    read_blob: Option<Blob<'a>>,
    write_blob: Option<Blob<'a>>,
    buf: Vec<u8>,
    in_transaction: bool,
    /// Inside a read snapshot (`begin_snapshot`): the database cannot
    /// change under it, so its tag stamps are read once per snapshot.
    in_snapshot: bool,
    /// The table's root page and the file's map, for this snapshot.
    mapped: Option<(i64, std::sync::Arc<super::map_guard::GuardedMap>)>,
}

/// The tag of blob `key` of `size` bytes with the database's file stamps.
fn tag_of(key: u64, size: u64, stamps: &[u64; 6]) -> String {
    let mut parts = vec![key, size];
    parts.extend_from_slice(stamps);
    super::fingerprint(&parts)
}

/// Whether sqlite3_blob_open / reopen failed for want of the row: SQLite
/// gives that case no code of its own (it is SQLITE_ERROR), only this text.
fn is_missing_row(e: &rusqlite::Error) -> bool {
    e.to_string().contains("no such rowid")
}

impl<'a> SqliteSession<'a> {
    fn err(&self, e: rusqlite::Error) -> Error {
        Error::sqlite(self.path, e)
    }

    fn statement(
        conn: &'a Connection,
        slot: &mut Option<Statement<'a>>,
        sql: &str,
        path: &Path,
    ) -> Result<()> {
        if slot.is_none() {
            *slot = Some(conn.prepare(sql).map_err(|e| Error::sqlite(path, e))?);
        }
        Ok(())
    }

    /// The one integer `sql` returns, through the statement kept in `slot`
    /// (prepared on first use).
    fn query_int(
        conn: &'a Connection,
        slot: &mut Option<Statement<'a>>,
        sql: &str,
        path: &Path,
    ) -> Result<i64> {
        Self::statement(conn, slot, sql, path)?;
        slot.as_mut()
            .expect("prepared")
            .query_row([], |r| r.get(0))
            .map_err(|e| Error::sqlite(path, e))
    }

    /// The rowid blob `key` is stored in (None: no such key): the key
    /// itself in kv, looked up through the primary key's index in the
    /// blog's table.
    fn rowid_of(&mut self, key: u64) -> Result<Option<i64>> {
        let Some(sql) = self.sql.rowid else {
            return Ok(i64::try_from(key).ok());
        };
        Self::statement(self.conn, &mut self.rowid, sql, self.path)?;
        let stmt = self.rowid.as_mut().expect("prepared");
        stmt.query_row([self.layout.key(key)], |r| r.get(0))
            .optional()
            .map_err(|e| Error::sqlite(self.path, e))
    }

    /// The rowid of `key`, or the missing-key error.
    fn existing_rowid(&mut self, key: u64) -> Result<i64> {
        self.rowid_of(key)?
            .ok_or_else(|| missing_key(key, self.path))
    }

    fn open_blob(&mut self, key: u64, read_only: bool) -> Result<Blob<'a>> {
        let rowid = self.existing_rowid(key)?;
        self.conn
            .blob_open(MAIN_DB, self.sql.table, self.sql.column, rowid, read_only)
            .map_err(|e| {
                if is_missing_row(&e) {
                    missing_key(key, self.path)
                } else {
                    self.err(e)
                }
            })
    }

    fn position_blob(&mut self, key: u64, read_only: bool) -> Result<()> {
        let slot_full = if read_only {
            self.read_blob.is_some()
        } else {
            self.write_blob.is_some()
        };
        if self.options.per_op_transaction || !slot_full {
            let blob = self.open_blob(key, read_only)?;
            if read_only {
                self.read_blob = Some(blob)
            } else {
                self.write_blob = Some(blob)
            }
            return Ok(());
        }
        let rowid = self.existing_rowid(key)?;
        let blob = if read_only {
            self.read_blob.as_mut()
        } else {
            self.write_blob.as_mut()
        };
        let blob = blob.expect("checked above");
        blob.reopen(rowid).map_err(|e| {
            if is_missing_row(&e) {
                missing_key(key, self.path)
            } else {
                Error::sqlite(self.path, e)
            }
        })
    }

    /// The table's root page and a map of the file, looked up once per
    /// snapshot: under its shared lock neither can change.
    fn snapshot_map(&mut self) -> Result<(i64, std::sync::Arc<super::map_guard::GuardedMap>)> {
        if let Some((root, map)) = &self.mapped {
            return Ok((*root, map.clone()));
        }
        // Also takes the snapshot's shared lock, if no read has yet.
        let root = Self::query_int(self.conn, &mut self.root_page, self.sql.root, self.path)?;
        let map = super::sqlite_map::map_of(self.path)?;
        self.mapped = Some((root, map.clone()));
        Ok((root, map))
    }

    fn release_handles(&mut self) {
        self.read_blob = None;
        self.write_blob = None;
    }
}

impl Session for SqliteSession<'_> {
    /// SQLite keeps no per-row version, so the tag covers the whole
    /// database: its file and its WAL (size, mtime in ns, inode). A commit
    /// writes one of them (the WAL, or the database in rollback mode) and a
    /// checkpoint writes the database, so any write anywhere changes every
    /// tag: coarse, never stale.
    fn etag(&mut self, key: u64, size: u64) -> Result<Option<String>> {
        if self.in_snapshot
            && let Some((_, stamps)) = self.stamps
        {
            // Read under this snapshot's lock: nothing has committed since.
            return Ok(Some(tag_of(key, size, &stamps)));
        }
        let version = Self::query_int(
            self.conn,
            &mut self.data_version,
            "PRAGMA data_version",
            self.path,
        )?;
        let stamps = match self.stamps {
            Some((v, st)) if v == version => st,
            _ => {
                let db = super::file_stamp(self.path);
                let mut wal = self.path.as_os_str().to_owned();
                wal.push("-wal");
                let wal = super::file_stamp(Path::new(&wal));
                let st = [db[0], db[1], db[2], wal[0], wal[1], wal[2]];
                self.stamps = Some((version, st));
                st
            }
        };
        Ok(Some(tag_of(key, size, &stamps)))
    }

    /// One statement (one lock, one lookup): the length always, the bytes
    /// only when small; length() alone reads no overflow page.
    fn fetch_small(&mut self, key: u64, max: u64) -> Result<Option<(u64, Option<Vec<u8>>)>> {
        Self::statement(self.conn, &mut self.small, self.sql.small, self.path)?;
        let stmt = self.small.as_mut().expect("prepared");
        let row = stmt.query_row(params![self.layout.key(key), max as i64], |r| {
            let n: Option<i64> = r.get(0)?;
            let data = match r.get_ref(1)? {
                ValueRef::Blob(b) => Some(b.to_vec()),
                ValueRef::Text(t) => Some(t.to_vec()),
                _ => None,
            };
            Ok((n.unwrap_or(0) as u64, data))
        });
        match row {
            Ok((n, data)) => Ok(Some((
                n,
                if n <= max {
                    Some(data.unwrap_or_default())
                } else {
                    None
                },
            ))),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(Error::sqlite(self.path, e)),
        }
    }

    /// length() reads the record header only, not the blob's overflow pages.
    fn size(&mut self, key: u64) -> Result<Option<u64>> {
        Self::statement(self.conn, &mut self.length, self.sql.length, self.path)?;
        let stmt = self.length.as_mut().expect("prepared");
        match stmt.query_row([self.layout.key(key)], |r| r.get::<_, Option<i64>>(0)) {
            Ok(n) => Ok(Some(n.unwrap_or(0) as u64)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(Error::sqlite(self.path, e)),
        }
    }

    /// One blob handle for the whole stream: it holds one read transaction,
    /// so every piece comes from the same version of the blob.
    fn read_stream(
        &mut self,
        key: u64,
        offset: u64,
        len: u64,
        piece: usize,
        sink: &mut dyn FnMut(Vec<u8>) -> bool,
    ) -> Result<u64> {
        let blob = self.open_blob(key, true)?;
        // Bounded by the blob's length, every piece is read in full.
        let len = len.min((blob.len() as u64).saturating_sub(offset));
        super::stream_pieces(offset, len, piece, sink, |at, buf| {
            blob.read_at_exact(buf, at as usize)
                .map_err(|e| self.err(e))?;
            Ok(buf.len())
        })
    }

    /// The incremental blob API: only the pages of the piece are read.
    fn read_at(&mut self, key: u64, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let blob = self.open_blob(key, true)?;
        let len = blob.len() as u64;
        if offset >= len {
            return Ok(0);
        }
        let n = (buf.len() as u64).min(len - offset) as usize;
        blob.read_at_exact(&mut buf[..n], offset as usize)
            .map_err(|e| self.err(e))?;
        Ok(n)
    }

    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        match self.options.read_path {
            ReadPath::Sql => {
                Self::statement(self.conn, &mut self.select, self.sql.select, self.path)?;
                let path = self.path;
                let stmt = self.select.as_mut().expect("prepared");
                stmt.raw_bind_parameter(1, self.layout.key(key))
                    .map_err(|e| Error::sqlite(path, e))?;
                let mut rows = stmt.raw_query();
                match rows.next().map_err(|e| Error::sqlite(path, e))? {
                    Some(row) => match row.get_ref(0).map_err(|e| Error::sqlite(path, e))? {
                        ValueRef::Blob(b) => sink(b),
                        ValueRef::Null => sink(&[]),
                        ValueRef::Text(t) => sink(t),
                        _ => {
                            return Err(Error::usage(format!(
                                "key {key} of {} holds a number, not a blob",
                                path.display()
                            )));
                        }
                    },
                    None => return Err(missing_key(key, path)),
                }
                Ok(())
            }
            ReadPath::BlobApi => {
                self.position_blob(key, true)?;
                let blob = self.read_blob.as_ref().expect("positioned");
                let n = blob.len();
                if self.buf.len() < n {
                    self.buf.resize(n, 0);
                }
                blob.read_at_exact(&mut self.buf[..n], 0)
                    .map_err(|e| Error::sqlite(self.path, e))?;
                if self.options.per_op_transaction {
                    self.read_blob = None;
                }
                sink(&self.buf[..n]);
                Ok(())
            }
        }
    }

    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        // This connection's own writes do not move data_version.
        self.stamps = None;
        match self.options.read_path {
            ReadPath::Sql => {
                Self::statement(self.conn, &mut self.update, self.sql.update, self.path)?;
                let changed = self
                    .update
                    .as_mut()
                    .expect("prepared")
                    .execute(params![self.layout.key(key), data])
                    .map_err(|e| Error::sqlite(self.path, e))?;
                if changed == 0 {
                    return Err(missing_key(key, self.path));
                }
                Ok(())
            }
            ReadPath::BlobApi => {
                self.position_blob(key, false)?;
                let blob = self.write_blob.as_mut().expect("positioned");
                if blob.len() != data.len() {
                    return Err(Error::usage(format!(
                        "the blob API overwrites in place and cannot resize key {key} ({} bytes stored, {} to write); drop --blob-api to update by SQL",
                        blob.len(),
                        data.len()
                    )));
                }
                blob.write_at(data, 0)
                    .map_err(|e| Error::sqlite(self.path, e))?;
                if self.options.per_op_transaction {
                    self.write_blob = None;
                }
                Ok(())
            }
        }
    }

    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()> {
        // This connection's own writes do not move data_version.
        self.stamps = None;
        Self::statement(self.conn, &mut self.insert, self.sql.insert, self.path)?;
        self.insert
            .as_mut()
            .expect("prepared")
            .execute(params![self.layout.key(key), data])
            .map_err(|e| Error::sqlite(self.path, e))?;
        Ok(())
    }

    fn delete(&mut self, key: u64) -> Result<()> {
        // This connection's own writes do not move data_version.
        self.stamps = None;
        Self::statement(self.conn, &mut self.delete, self.sql.delete, self.path)?;
        let n = self
            .delete
            .as_mut()
            .expect("prepared")
            .execute([self.layout.key(key)])
            .map_err(|e| Error::sqlite(self.path, e))?;
        if n == 0 {
            return Err(missing_key(key, self.path));
        }
        Ok(())
    }

    fn begin(&mut self) -> Result<()> {
        if !self.options.per_op_transaction && !self.in_transaction {
            self.conn.execute_batch("BEGIN").map_err(|e| self.err(e))?;
            self.in_transaction = true;
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.release_handles();
        if self.in_transaction {
            self.conn.execute_batch("COMMIT").map_err(|e| self.err(e))?;
            self.in_transaction = false;
        }
        Ok(())
    }

    fn begin_write(&mut self) -> Result<()> {
        if !self.options.per_op_transaction && !self.in_transaction {
            self.conn
                .execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| self.err(e))?;
            self.in_transaction = true;
        }
        Ok(())
    }

    /// A statement that failed outside a transaction committed nothing.
    fn rollback(&mut self) -> Result<bool> {
        self.release_handles();
        self.stamps = None;
        if !self.conn.is_autocommit() {
            self.conn
                .execute_batch("ROLLBACK")
                .map_err(|e| self.err(e))?;
        }
        self.in_transaction = false;
        Ok(true)
    }

    /// The row's overflow chain, read from a map of the database file while
    /// this snapshot's shared lock keeps every writer out (rollback journal
    /// only: in WAL mode the newest pages may be in the WAL).
    fn mapped_blob(&mut self, key: u64, max: u64) -> Result<Option<super::MappedBlob>> {
        if self.wal || !self.in_snapshot || key > i64::MAX as u64 {
            return Ok(None);
        }
        let (root, map) = self.snapshot_map()?;
        let Some(rowid) = self.rowid_of(key)? else {
            return Ok(None);
        };
        let mut walked = super::sqlite_pages::Walked {
            max: usize::try_from(max).unwrap_or(usize::MAX),
            over: super::MAPPED_RESIDENT_UP_TO as usize,
            release: &mut |range| super::release_mapped(map.mmap(), range),
        };
        let key_column = match self.layout {
            SqliteLayout::Kv => super::sqlite_pages::KeyColumn::Rowid,
            SqliteLayout::Blog => super::sqlite_pages::KeyColumn::Text,
        };
        crate::pause::at("serve-mapped-walk");
        let found =
            super::sqlite_pages::value_runs(&map, root as u64, (rowid, key_column), &mut walked);
        // The walk read the pages it followed: they were the file's only if
        // no other process cut it short meanwhile (see map_guard.rs).
        if let Err(e) = map.check() {
            self.mapped = None;
            return Err(e);
        }
        let runs = match found {
            super::sqlite_pages::Lookup::Found(runs) => runs,
            _ => return Ok(None),
        };
        let runs = super::MappedRuns::new(map.clone(), runs);
        let size = runs.len();
        if size <= super::MAPPED_RESIDENT_UP_TO {
            // The walk left its pages mapped (see `Walked::over`).
            super::kept_mapped(&map, size);
        }
        let etag = self.etag(key, size)?;
        Ok(Some(super::MappedBlob { runs, size, etag }))
    }

    fn wait_for_locks(&mut self, wait: std::time::Duration) -> Result<()> {
        self.conn.busy_timeout(wait).map_err(|e| self.err(e))
    }

    /// A deferred BEGIN: the shared lock (or WAL read mark) is taken by the
    /// first read and kept until `end_snapshot`.
    ///
    /// In a rollback journal, SQLite's unix VFS keeps one OS-level shared
    /// lock per process for all its connections to a file and grants a
    /// second connection's shared lock without asking the OS, past another
    /// process's PENDING lock. So while the snapshots of a server's threads
    /// overlapped, an outside writer could wait for ever. Hence no snapshot
    /// begins while another process holds PENDING (`writer_waiting`): the
    /// busy error makes the caller wait and try again, and as the snapshots
    /// held end, the writer gets in.
    fn begin_snapshot(&mut self) -> Result<bool> {
        if !self.in_snapshot && !self.in_transaction {
            if self.writer_waiting(false)? {
                return Err(super::sqlite_lock::writer_waiting_error(self.path));
            }
            self.conn.execute_batch("BEGIN").map_err(|e| self.err(e))?;
            self.in_snapshot = true;
            // Stamps read before the snapshot began may be older than it.
            self.stamps = None;
            self.mapped = None;
        }
        Ok(true)
    }

    /// This process's write is queued, or another process holds the
    /// PENDING lock (rollback journal only: in WAL mode readers never hold
    /// writers up; with locking_mode=exclusive the server keeps writers out
    /// on purpose).
    fn writer_waiting(&mut self, own_write: bool) -> Result<bool> {
        if self.wal || self.exclusive {
            return Ok(false);
        }
        Ok(own_write || super::sqlite_lock::writer_pending(self.path)?)
    }

    fn data_version(&mut self) -> Result<Option<i64>> {
        Self::query_int(
            self.conn,
            &mut self.data_version,
            "PRAGMA data_version",
            self.path,
        )
        .map(Some)
    }

    fn end_snapshot(&mut self) -> Result<()> {
        self.release_handles();
        if self.in_snapshot {
            self.in_snapshot = false;
            self.stamps = None;
            self.mapped = None;
            if !self.conn.is_autocommit() {
                self.conn.execute_batch("COMMIT").map_err(|e| self.err(e))?;
            }
        }
        Ok(())
    }

    /// A checkpoint writes the database file: never on a read-only
    /// connection (a read run must not write its target, and SQLite would
    /// fail on a WAL another process is using or a crash left).
    fn checkpoint(&mut self) -> Result<()> {
        if self.wal && !self.conn.is_readonly(MAIN_DB).unwrap_or(true) {
            self.conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }
}

impl Drop for SqliteSession<'_> {
    fn drop(&mut self) {
        self.release_handles();
        if self.in_transaction {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// SQLite's version and compile options, for the environment record.
pub fn read_sqlite_info() -> (String, Vec<String>) {
    let version = rusqlite::version().to_string();
    let options = Connection::open_in_memory()
        .and_then(|c| {
            let mut stmt = c.prepare("PRAGMA compile_options")?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect::<rusqlite::Result<Vec<String>>>()
        })
        .unwrap_or_default();
    (version, options)
}
