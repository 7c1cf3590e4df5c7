//! A session on an SQLite database: prepared statements and blob handles
//! kept from one operation to the next, the ETag from the database's file
//! stamps, blobs read from a map of the file inside a read snapshot.

use std::path::Path;

use rusqlite::blob::Blob;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, MAIN_DB, OptionalExtension, Statement, params};

use super::layout::{SqliteLayout, Statements};
use super::run_cache::RunCache;
use super::{lock, map, pages};
use crate::error::{Error, Result};
use crate::store::contract::{
    MAPPED_RESIDENT_UP_TO, MappedBlob, MappedRuns, ReadPath, Serving, SessionCore, SessionOptions,
    Snapshots, kept_mapped, map_ahead, missing_key, release_mapped,
};
use crate::store::etag::{file_stamp, fingerprint};
use crate::store::map_guard::GuardedMap;
use crate::store::pieces::stream_pieces;

/// Work on an SQLite database: statements prepared on first use and blob
/// handles kept open between operations.
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
    mapped: Option<(i64, std::sync::Arc<GuardedMap>)>,
    /// Where the blobs this snapshot has mapped lie in `mapped`'s map:
    /// emptied whenever that map is taken afresh (`snapshot_map`).
    runs: RunCache,
}

/// The tag of blob `key` of `size` bytes with the database's file stamps.
fn tag_of(key: u64, size: u64, stamps: &[u64; 6]) -> String {
    let mut parts = vec![key, size];
    parts.extend_from_slice(stamps);
    fingerprint(&parts)
}

/// Whether sqlite3_blob_open / reopen failed for want of the row: SQLite
/// gives that case no code of its own (it is SQLITE_ERROR), only this text.
fn is_missing_row(e: &rusqlite::Error) -> bool {
    e.to_string().contains("no such rowid")
}

impl<'a> SqliteSession<'a> {
    /// A session on `conn`, the database at `path` laid out as `layout`,
    /// with no statement prepared yet; `wal` and `exclusive` are the
    /// connection's journal and locking modes.
    pub(super) fn new(
        conn: &'a Connection,
        path: &'a Path,
        layout: SqliteLayout,
        options: SessionOptions,
        wal: bool,
        exclusive: bool,
    ) -> Self {
        SqliteSession {
            conn,
            path,
            layout,
            sql: layout.sql(),
            options,
            wal,
            exclusive,
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
            runs: RunCache::default(),
        }
    }

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
    fn snapshot_map(&mut self) -> Result<(i64, std::sync::Arc<GuardedMap>)> {
        if let Some((root, map)) = &self.mapped {
            return Ok((*root, map.clone()));
        }
        // Runs found in another snapshot, or in a map since remade.
        self.runs.clear();
        // Also takes the snapshot's shared lock, if no read has yet.
        let root = Self::query_int(self.conn, &mut self.root_page, self.sql.root, self.path)?;
        let map = map::map_of(self.path)?;
        self.mapped = Some((root, map.clone()));
        Ok((root, map))
    }

    fn release_handles(&mut self) {
        self.read_blob = None;
        self.write_blob = None;
    }
}

impl SessionCore for SqliteSession<'_> {
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

    fn wait_for_locks(&mut self, wait: std::time::Duration) -> Result<()> {
        self.conn.busy_timeout(wait).map_err(|e| self.err(e))
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

impl Serving for SqliteSession<'_> {
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
                let db = file_stamp(self.path);
                let mut wal = self.path.as_os_str().to_owned();
                wal.push("-wal");
                let wal = file_stamp(Path::new(&wal));
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
        stream_pieces(offset, len, piece, sink, |at, buf| {
            blob.read_at_exact(buf, at as usize)
                .map_err(|e| self.err(e))?;
            Ok(buf.len())
        })
    }

    /// The row's overflow chain, read from a map of the database file while
    /// this snapshot's shared lock keeps every writer out (rollback journal
    /// only: in WAL mode the newest pages may be in the WAL). Walked once
    /// per snapshot: a blob asked for again is found in `runs`.
    fn mapped_blob(&mut self, key: u64, max: u64) -> Result<Option<MappedBlob>> {
        if self.wal || !self.in_snapshot || key > i64::MAX as u64 {
            return Ok(None);
        }
        let (root, map) = self.snapshot_map()?;
        if let Some(runs) = self.runs.get(key) {
            let runs = MappedRuns::new(map.clone(), runs);
            let size = runs.len();
            if size > max {
                return Ok(None);
            }
            runs.map_in();
            kept_mapped(&map, size);
            let etag = self.etag(key, size)?;
            return Ok(Some(MappedBlob { runs, size, etag }));
        }
        let Some(rowid) = self.rowid_of(key)? else {
            return Ok(None);
        };
        let mut walked = pages::Walked {
            max: usize::try_from(max).unwrap_or(usize::MAX),
            over: MAPPED_RESIDENT_UP_TO as usize,
            release: &mut |range| release_mapped(map.mmap(), range),
            map_ahead: &mut |range| map_ahead(map.mmap(), range),
        };
        let key_column = match self.layout {
            SqliteLayout::Kv => pages::KeyColumn::Rowid,
            SqliteLayout::Blog => pages::KeyColumn::Text,
        };
        crate::pause::at("serve-mapped-walk");
        let found = pages::value_runs(&map, root as u64, (rowid, key_column), &mut walked);
        // The walk read the pages it followed: they were the file's only if
        // no other process cut it short meanwhile (see map_guard.rs).
        if let Err(e) = map.check() {
            self.mapped = None;
            return Err(e);
        }
        let runs = match found {
            pages::Lookup::Found(runs) => runs,
            _ => return Ok(None),
        };
        let runs = MappedRuns::new(map.clone(), runs);
        let size = runs.len();
        if size <= MAPPED_RESIDENT_UP_TO {
            // The walk left its pages mapped (see `Walked::over`).
            kept_mapped(&map, size);
            // Not a larger one's: a hit maps all its runs in at once.
            self.runs.insert(key, runs.ranges());
        }
        let etag = self.etag(key, size)?;
        Ok(Some(MappedBlob { runs, size, etag }))
    }
}

impl Snapshots for SqliteSession<'_> {
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
                return Err(lock::writer_waiting_error(self.path));
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
        Ok(own_write || lock::writer_pending(self.path)?)
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
}

impl Drop for SqliteSession<'_> {
    fn drop(&mut self) {
        self.release_handles();
        if self.in_transaction {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}
