//! "External blobs": the database holds each blob's file name (and, in
//! datasets made since version 0.2, its size and mtime), the content is a
//! file beside the database. Every read looks the name up first, as the
//! Internal Versus External BLOBs study (and Jim Gray's) did; every update
//! writes the file and then updates its row in one transaction, as an
//! application keeping the two in step does.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, Statement};
use serde_json::{Map, Value, json};

use super::contract::{
    Access, Catalog, DiskLayout, Engine, Reclaim, Serving, Session, SessionCore, SessionOptions,
    Snapshots, Space, StoreCore, StoreInfo, missing_key,
};
use super::files::{FileIo, FileLayout, prepare_own_folder, refuse_read_only};
use super::journal;
use super::sqlite::{
    UnsafeWriter, apply_settings, catalog_of, check_is_database, create_database, database_files,
    external_layout, has_table, integrity_check, open_connection, read_ledger, read_manifest,
    reclaim_database, refuse_if_damaged, replace_own_database, write_ledger, write_manifest_row,
};
use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::target::SqliteSettings;

/// Blob file names in table `blobs`, contents in files beside the database.
pub struct ExternalStore {
    path: PathBuf,
    conn: Connection,
    settings: Map<String, Value>,
    access: Access,
    /// The table has `size` and `mtime` columns (datasets made before
    /// version 0.2 have only `k` and `file`).
    has_meta: bool,
    /// Present while this connection writes without a rollback journal.
    unsafe_writer: Option<UnsafeWriter>,
    /// The last key the manifest records: a key inserted past it is named
    /// in the process's journal of the files folder first (see `journal`).
    dataset_last: Option<u64>,
}

impl Drop for ExternalStore {
    fn drop(&mut self) {
        if let Some(w) = self.unsafe_writer.take() {
            w.clear(&self.conn);
        }
    }
}

/// The table of a new dataset: each blob's file name, size and mtime (in
/// nanoseconds since the Unix epoch).
const SCHEMA: &str =
    "CREATE TABLE blobs(k INTEGER PRIMARY KEY, file TEXT NOT NULL, size INTEGER, mtime INTEGER)";

/// `data.db` keeps its files in `data.db.files/`.
pub fn files_folder(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(".files");
    PathBuf::from(p)
}

impl ExternalStore {
    /// Opens the database at `path` with `settings` applied.
    pub fn open(path: &Path, settings: &SqliteSettings, access: Access) -> Result<Self> {
        check_is_database(
            path,
            &format!(
                "blobbench init sqlite-ext:{} --count 10k --size 100k",
                path.display()
            ),
        )?;
        let conn = open_connection(path, access)?;
        if !has_table(&conn, path, "blobs")? {
            return Err(Error::usage(format!(
                "\"{}\" is not an external-blob dataset: it has no blobs(k, file) table (make one with blobbench init sqlite-ext:{})",
                path.display(),
                path.display()
            )));
        }
        let has_meta = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('blobs') WHERE name IN ('size', 'mtime')",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| Error::sqlite(path, e))?
            == 2;
        refuse_if_damaged(&conn, path)?;
        let unsafe_writer = UnsafeWriter::mark(&conn, path, settings, access)?;
        let (_, mut map) = apply_settings(&conn, path, settings, access)?;
        map.insert("files".into(), json!(files_folder(path)));
        let dataset_last = read_manifest(&conn, path)?.map(|m| m.last_key);
        Ok(ExternalStore {
            path: path.to_path_buf(),
            conn,
            settings: map,
            access,
            has_meta,
            unsafe_writer,
            dataset_last,
        })
    }

    /// Creates an empty dataset at `path` and its files folder, replacing
    /// only what blobbench made.
    pub fn create(path: &Path, settings: &SqliteSettings, manifest: &Manifest) -> Result<Self> {
        let folder = files_folder(path);
        // Before anything of the earlier dataset is replaced.
        super::files::check_free(&folder, FileLayout::Flat, manifest)?;
        replace_own_database(path, "external-blob database")?;
        prepare_own_folder(&folder, manifest)?;
        create_database(path, settings, manifest, SCHEMA)?;
        let mut rest = settings.clone();
        rest.page_size = None;
        ExternalStore::open(path, &rest, Access::ReadWrite)
    }
}

impl StoreCore for ExternalStore {
    fn info(&self) -> StoreInfo {
        StoreInfo {
            kind: "sqlite-ext".into(),
            path: self.path.clone(),
            settings: self.settings.clone(),
            version: Some(rusqlite::version().to_string()),
        }
    }

    fn describe_writes(&self, options: &SessionOptions) -> String {
        format!(
            "file {} after a name lookup in the database, then its row's {} updated in {}; \
             the commit comes after the file is in place",
            options.write_style.describe(options.fsync),
            if self.has_meta {
                "name, size and mtime"
            } else {
                "name (no size or mtime columns in this older dataset)"
            },
            if options.per_op_transaction {
                "one transaction per write with the lookup"
            } else {
                "the transaction of all writes"
            }
        )
    }

    /// The files beside the database made durable, then the mark.
    fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        super::files::sync_filesystem(&files_folder(&self.path))?;
        write_manifest_row(&self.conn, &self.path, manifest)
    }

    fn read_ledger(&mut self) -> Result<Option<String>> {
        read_ledger(&self.conn, &self.path)
    }

    fn write_ledger(&mut self, text: &str) -> Result<()> {
        write_ledger(&self.conn, &self.path, text)
    }

    fn catalog(&mut self) -> Result<Catalog> {
        catalog_of(&self.conn, &self.path, "blobs")
    }

    fn session(&mut self, options: SessionOptions) -> Result<Box<dyn Session + '_>> {
        let base = match self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => format!("{}/", p.to_string_lossy()),
            None => String::new(),
        };
        let folder_name = files_folder(&self.path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Box::new(ExternalSession {
            conn: &self.conn,
            db: &self.path,
            io: FileIo::new(options),
            lookup: None,
            insert: None,
            delete: None,
            record: None,
            has_meta: self.has_meta,
            base_len: base.len(),
            path: base,
            folder_name,
            name: String::new(),
            in_transaction: false,
            made: Vec::new(),
            dataset_last: self.dataset_last,
            access: self.access,
        }))
    }

    fn files(&self) -> Result<Vec<PathBuf>> {
        let mut files = database_files(&self.path);
        let folder = files_folder(&self.path);
        if folder.is_dir() {
            for entry in
                std::fs::read_dir(&folder).map_err(|e| Error::io("cannot list", &folder, e))?
            {
                files.push(
                    entry
                        .map_err(|e| Error::io("cannot list", &folder, e))?
                        .path(),
                );
            }
        }
        Ok(files)
    }
}

impl Engine for ExternalStore {
    /// The database's check; the files beside it are not looked at.
    fn integrity_check(&mut self) -> Result<Option<String>> {
        integrity_check(&self.conn, &self.path).map(Some)
    }
}

impl Space for ExternalStore {
    /// Each blob's file, whole; the database's free pages.
    fn disk_layout(&mut self) -> Result<Option<DiskLayout>> {
        external_layout(&self.conn, &self.path).map(Some)
    }

    /// On the database of names, as for blobs inside one.
    fn reclaim(&mut self, how: Reclaim) -> Result<Option<String>> {
        reclaim_database(&self.conn, &self.path, how)
    }
}

pub struct ExternalSession<'a> {
    conn: &'a Connection,
    db: &'a Path,
    io: FileIo,
    lookup: Option<Statement<'a>>,
    insert: Option<Statement<'a>>,
    delete: Option<Statement<'a>>,
    /// Updates a blob's row after its file was rewritten.
    record: Option<Statement<'a>>,
    has_meta: bool,
    /// The database's folder with a trailing slash, then the blob's file name.
    path: String,
    base_len: usize,
    folder_name: String,
    name: String,
    in_transaction: bool,
    /// Files the open transaction's inserts made, removed if it rolls back.
    made: Vec<String>,
    /// The last key the manifest records (see `FilesStore`'s).
    dataset_last: Option<u64>,
    /// The database refuses writes when read-only, but the files beside it
    /// would not: the session refuses before touching them.
    access: Access,
}

impl ExternalSession<'_> {
    /// Looks the file name up in the database: the step that makes this
    /// design slower than keeping the blob inside.
    fn locate(&mut self, key: u64) -> Result<()> {
        if self.lookup.is_none() {
            self.lookup = Some(
                self.conn
                    .prepare("SELECT file FROM blobs WHERE k=?1")
                    .map_err(|e| Error::sqlite(self.db, e))?,
            );
        }
        let stmt = self.lookup.as_mut().expect("prepared");
        stmt.raw_bind_parameter(1, key as i64)
            .map_err(|e| Error::sqlite(self.db, e))?;
        let mut rows = stmt.raw_query();
        let row = rows
            .next()
            .map_err(|e| Error::sqlite(self.db, e))?
            .ok_or_else(|| missing_key(key, self.db))?;
        let name = row.get_ref(0).map_err(|e| Error::sqlite(self.db, e))?;
        let name = name
            .as_str()
            .map_err(|e| Error::sqlite(self.db, e.into()))?;
        self.path.truncate(self.base_len);
        self.path.push_str(name);
        Ok(())
    }
}

/// Nanoseconds since the Unix epoch: the mtime a row records.
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

impl ExternalSession<'_> {
    /// The lookup, the file rewritten (durably as the session asks), then
    /// the row updated: all inside the caller's transaction.
    fn rewrite(&mut self, key: u64, data: &[u8]) -> Result<()> {
        self.locate(key)?;
        self.io.update(&self.path, key, self.db, data)?;
        let sql = if self.has_meta {
            "UPDATE blobs SET file=?2, size=?3, mtime=?4 WHERE k=?1"
        } else {
            "UPDATE blobs SET file=?2 WHERE k=?1"
        };
        if self.record.is_none() {
            self.record = Some(
                self.conn
                    .prepare(sql)
                    .map_err(|e| Error::sqlite(self.db, e))?,
            );
        }
        let stmt = self.record.as_mut().expect("prepared");
        let name = &self.path[self.base_len..];
        let changed = if self.has_meta {
            stmt.execute(rusqlite::params![
                key as i64,
                name,
                data.len() as i64,
                now_ns()
            ])
        } else {
            stmt.execute(rusqlite::params![key as i64, name])
        }
        .map_err(|e| Error::sqlite(self.db, e))?;
        if changed == 0 {
            return Err(missing_key(key, self.db));
        }
        Ok(())
    }
}

impl SessionCore for ExternalSession<'_> {
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.locate(key)?;
        self.io.read(&self.path, key, self.db, sink)
    }

    /// The file first, then its row, in one transaction: the batch's when
    /// one is open, else its own (IMMEDIATE, so the lookup and the row update
    /// see the same database and no other writer comes between). It commits
    /// only after the file is in place; on any failure it rolls back.
    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        refuse_read_only(self.access, self.db)?;
        if self.in_transaction {
            return self.rewrite(key, data);
        }
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| Error::sqlite(self.db, e))?;
        let done = self.rewrite(key, data);
        let end = if done.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let ended = self
            .conn
            .execute_batch(end)
            .map_err(|e| Error::sqlite(self.db, e));
        done.and(ended)
    }

    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()> {
        refuse_read_only(self.access, self.db)?;
        if let Some(last) = self.dataset_last {
            journal::name_added_key(&files_folder(self.db), last, key)?;
        }
        self.name.clear();
        self.name.push_str(&self.folder_name);
        self.name.push('/');
        FileLayout::Flat.push_name(key, &mut self.name);
        self.path.truncate(self.base_len);
        self.path.push_str(&self.name);
        self.io.create(&self.path, data)?;
        if self.insert.is_none() {
            let sql = if self.has_meta {
                "INSERT INTO blobs(k, file, size, mtime) VALUES(?1, ?2, ?3, ?4)"
            } else {
                "INSERT INTO blobs(k, file) VALUES(?1, ?2)"
            };
            self.insert = Some(
                self.conn
                    .prepare(sql)
                    .map_err(|e| Error::sqlite(self.db, e))?,
            );
        }
        let stmt = self.insert.as_mut().expect("prepared");
        let recorded = if self.has_meta {
            stmt.execute(rusqlite::params![
                key as i64,
                &self.name,
                data.len() as i64,
                now_ns()
            ])
        } else {
            stmt.execute(rusqlite::params![key as i64, &self.name])
        };
        if let Err(e) = recorded {
            // No row names the file: it goes, or it would stay behind
            // under the key and refuse the next insert of it.
            let _ = std::fs::remove_file(&self.path);
            return Err(Error::sqlite(self.db, e));
        }
        if self.in_transaction {
            self.made.push(self.path.clone());
        }
        Ok(())
    }

    fn delete(&mut self, key: u64) -> Result<()> {
        refuse_read_only(self.access, self.db)?;
        self.locate(key)?;
        if self.delete.is_none() {
            self.delete = Some(
                self.conn
                    .prepare("DELETE FROM blobs WHERE k=?1")
                    .map_err(|e| Error::sqlite(self.db, e))?,
            );
        }
        self.delete
            .as_mut()
            .expect("prepared")
            .execute([key as i64])
            .map_err(|e| Error::sqlite(self.db, e))?;
        self.io.remove(&self.path, key, self.db)
    }

    fn begin(&mut self) -> Result<()> {
        if !self.io.options.per_op_transaction && !self.in_transaction {
            self.conn
                .execute_batch("BEGIN")
                .map_err(|e| Error::sqlite(self.db, e))?;
            self.in_transaction = true;
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        if self.in_transaction {
            self.conn
                .execute_batch("COMMIT")
                .map_err(|e| Error::sqlite(self.db, e))?;
            self.in_transaction = false;
            self.made.clear();
        }
        Ok(())
    }

    fn begin_write(&mut self) -> Result<()> {
        if !self.io.options.per_op_transaction && !self.in_transaction {
            self.conn
                .execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| Error::sqlite(self.db, e))?;
            self.in_transaction = true;
        }
        Ok(())
    }

    /// The rows roll back and the files the transaction's inserts made
    /// go with them, but a file already rewritten keeps its new content:
    /// what the batch wrote may remain (false).
    fn rollback(&mut self) -> Result<bool> {
        if !self.conn.is_autocommit() {
            self.conn
                .execute_batch("ROLLBACK")
                .map_err(|e| Error::sqlite(self.db, e))?;
        }
        self.in_transaction = false;
        self.remove_uncommitted_files();
        Ok(false)
    }
}

impl Serving for ExternalSession<'_> {}

impl Snapshots for ExternalSession<'_> {}

impl ExternalSession<'_> {
    /// Removes the files of inserts whose rows were rolled back: no row
    /// names them, and left behind they would refuse the next insert of
    /// their key ("File exists").
    fn remove_uncommitted_files(&mut self) {
        for path in self.made.drain(..) {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for ExternalSession<'_> {
    fn drop(&mut self) {
        if self.in_transaction {
            let _ = self.conn.execute_batch("ROLLBACK");
            self.remove_uncommitted_files();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{SizeShape, spec_from_options};
    use crate::progress::Silent;
    use crate::store::WriteStyle;
    use crate::target::Target;

    /// (size, mtime) of key `k`'s row, seen from another connection.
    fn row(db: &Path, k: i64) -> (i64, i64) {
        Connection::open(db)
            .unwrap()
            .query_row("SELECT size, mtime FROM blobs WHERE k=?1", [k], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap()
    }

    /// An insert leaves no file that no row names: not when its row
    /// cannot be written, not when its transaction rolls back (the next
    /// insert of the key would fail "File exists").
    #[test]
    fn an_insert_whose_row_does_not_stay_leaves_no_file() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("e.db");
        let target = Target::parse(&format!("sqlite-ext:{}", db.display())).unwrap();
        let spec = spec_from_options(5, 1000, 0, SizeShape::Fixed, 1).unwrap();
        let (mut store, _) = crate::store::create_dataset(&target, &spec, &Silent).unwrap();
        let folder = files_folder(&db);
        // A row for key 6 without its file: the insert makes the file,
        // then its row is refused.
        Connection::open(&db)
            .unwrap()
            .execute("INSERT INTO blobs(k, file) VALUES(6, 'elsewhere')", [])
            .unwrap();
        {
            let mut s = store.session(SessionOptions::default()).unwrap();
            assert!(s.insert(6, &[1u8; 10]).is_err());
        }
        assert!(
            !folder.join("000006").exists(),
            "the refused row's file went"
        );
        let batch = SessionOptions {
            per_op_transaction: false,
            ..SessionOptions::default()
        };
        {
            let mut s = store.session(batch).unwrap();
            s.begin_write().unwrap();
            s.insert(7, &[2u8; 10]).unwrap();
            assert!(folder.join("000007").exists());
            s.rollback().unwrap();
        }
        assert!(!folder.join("000007").exists(), "rolled back with its row");
        let mut s = store.session(batch).unwrap();
        s.begin_write().unwrap();
        s.insert(7, &[3u8; 10]).unwrap();
        s.commit().unwrap();
        let mut got = Vec::new();
        s.read(7, &mut |d| got = d.to_vec()).unwrap();
        assert_eq!(got, vec![3u8; 10]);
    }

    #[test]
    fn an_update_writes_the_file_and_its_row_in_one_transaction() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("e.db");
        let target =
            Target::parse(&format!("sqlite-ext:{}?journal_mode=wal", db.display())).unwrap();
        let spec = spec_from_options(5, 1000, 0, SizeShape::Fixed, 1).unwrap();
        let (mut store, _) = crate::store::create_dataset(&target, &spec, &Silent).unwrap();
        let (size, created) = row(&db, 1);
        assert_eq!(size, 1000, "insert records the size");
        assert!(created > 0, "and the mtime");
        let options = |per_op| SessionOptions {
            per_op_transaction: per_op,
            write_style: WriteStyle::TempRename,
            fsync: true,
            ..SessionOptions::default()
        };
        {
            // One transaction per write: the row has changed when update returns.
            let mut s = store.session(options(true)).unwrap();
            s.update(1, &[7u8; 123]).unwrap();
            let (size, mtime) = row(&db, 1);
            assert_eq!(size, 123);
            assert!(mtime >= created, "{mtime} < {created}");
            // The file gone: the update fails, the row is unchanged and no
            // transaction is left open (another connection can write).
            let file = files_folder(&db).join("000002");
            std::fs::remove_file(&file).unwrap();
            assert!(s.update(2, &[7u8; 50]).is_err());
            assert_eq!(row(&db, 2).0, 1000);
            let other = Connection::open(&db).unwrap();
            other.execute_batch("BEGIN IMMEDIATE; ROLLBACK").unwrap();
            let mut got = Vec::new();
            s.read(1, &mut |d| got = d.to_vec()).unwrap();
            assert_eq!(got, vec![7u8; 123]);
        }
        {
            // In a batch, the file is in place at once and the row changes
            // when the batch commits.
            let mut s = store.session(options(false)).unwrap();
            s.begin().unwrap();
            s.update(3, &[9u8; 77]).unwrap();
            let path = files_folder(&db).join("000003");
            assert_eq!(std::fs::read(&path).unwrap(), vec![9u8; 77]);
            assert_eq!(row(&db, 3).0, 1000, "not committed yet");
            s.commit().unwrap();
            assert_eq!(row(&db, 3).0, 77);
        }
        let method = store.describe_writes(&options(true));
        assert!(method.contains("name, size and mtime"), "{method}");
        drop(store);
        // A dataset made before the size and mtime columns still updates.
        Connection::open(&db)
            .unwrap()
            .execute_batch(
                "ALTER TABLE blobs DROP COLUMN size; ALTER TABLE blobs DROP COLUMN mtime",
            )
            .unwrap();
        let mut store = crate::store::open(&target, Access::ReadWrite).unwrap();
        let method = store.describe_writes(&options(true));
        assert!(method.contains("no size or mtime"), "{method}");
        let mut s = store.session(options(true)).unwrap();
        s.update(4, &[1u8; 10]).unwrap();
        s.insert(9, &[2u8; 10]).unwrap();
        let mut got = Vec::new();
        s.read(4, &mut |d| got = d.to_vec()).unwrap();
        assert_eq!(got, vec![1u8; 10]);
    }
}
