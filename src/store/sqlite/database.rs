//! An SQLite database file: checked, opened (recognising one an
//! interrupted command left mid-write), created under a temporary name and
//! renamed into place, and removed with its companions.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::map::read_start;
use super::meta::{META_TABLE, read_manifest};
use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::store::contract::Access;
use crate::target::SqliteSettings;

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
    read_start(path, &mut header).is_ok() && header[18] == 2 && header[19] == 2
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
    if made.is_ok() {
        crate::store::owned::record(path, crate::store::owned::Made::Dataset);
    }
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
