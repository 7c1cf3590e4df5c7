//! "External blobs": the database holds each blob's file name, the content is
//! a file beside the database. Every read looks the name up first, as the
//! Internal Versus External BLOBs study (and Jim Gray's) did.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, Statement};
use serde_json::{Map, Value, json};

use super::files::{FileIo, FileLayout, prepare_own_folder, refuse_read_only};
use super::sqlite::{
    apply_settings, catalog_of, check_is_database, create_database, database_files, has_table,
    integrity_check, open_connection, replace_own_database,
};
use super::{Access, Catalog, Session, SessionOptions, Store, StoreInfo, missing_key};
use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::target::SqliteSettings;

/// Blob file names in table `blobs`, contents in files beside the database.
pub struct ExternalStore {
    path: PathBuf,
    conn: Connection,
    settings: Map<String, Value>,
    access: Access,
}

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
        let (_, mut map) = apply_settings(&conn, path, settings, access)?;
        map.insert("files".into(), json!(files_folder(path)));
        Ok(ExternalStore {
            path: path.to_path_buf(),
            conn,
            settings: map,
            access,
        })
    }

    /// Creates an empty dataset at `path` and its files folder, replacing
    /// only what blobbench made.
    pub fn create(path: &Path, settings: &SqliteSettings, manifest: &Manifest) -> Result<Self> {
        replace_own_database(path, "external-blob database")?;
        let folder = files_folder(path);
        prepare_own_folder(&folder)?;
        std::fs::write(folder.join(super::files::MANIFEST_FILE), manifest.to_json())
            .map_err(|e| Error::io("cannot write", &folder, e))?;
        drop(create_database(
            path,
            settings,
            manifest,
            "CREATE TABLE blobs(k INTEGER PRIMARY KEY, file TEXT NOT NULL)",
        )?);
        let mut rest = settings.clone();
        rest.page_size = None;
        ExternalStore::open(path, &rest, Access::ReadWrite)
    }
}

impl Store for ExternalStore {
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
            "file {} after a name lookup in the database",
            options.write_style.describe(options.fsync)
        )
    }

    /// The database's check; the files beside it are not looked at.
    fn integrity_check(&mut self) -> Result<Option<String>> {
        integrity_check(&self.conn, &self.path).map(Some)
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
            base_len: base.len(),
            path: base,
            folder_name,
            name: String::new(),
            in_transaction: false,
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

pub struct ExternalSession<'a> {
    conn: &'a Connection,
    db: &'a Path,
    io: FileIo,
    lookup: Option<Statement<'a>>,
    insert: Option<Statement<'a>>,
    delete: Option<Statement<'a>>,
    /// The database's folder with a trailing slash, then the blob's file name.
    path: String,
    base_len: usize,
    folder_name: String,
    name: String,
    in_transaction: bool,
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

impl Session for ExternalSession<'_> {
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.locate(key)?;
        self.io.read(&self.path, key, self.db, sink)
    }

    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        refuse_read_only(self.access, self.db)?;
        self.locate(key)?;
        self.io.update(&self.path, key, self.db, data)
    }

    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()> {
        refuse_read_only(self.access, self.db)?;
        self.name.clear();
        self.name.push_str(&self.folder_name);
        self.name.push('/');
        FileLayout::Flat.push_name(key, &mut self.name);
        self.path.truncate(self.base_len);
        self.path.push_str(&self.name);
        self.io.create(&self.path, data)?;
        if self.insert.is_none() {
            self.insert = Some(
                self.conn
                    .prepare("INSERT INTO blobs(k, file) VALUES(?1, ?2)")
                    .map_err(|e| Error::sqlite(self.db, e))?,
            );
        }
        self.insert
            .as_mut()
            .expect("prepared")
            .execute(rusqlite::params![key as i64, &self.name])
            .map_err(|e| Error::sqlite(self.db, e))?;
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
        }
        Ok(())
    }
}

impl Drop for ExternalSession<'_> {
    fn drop(&mut self) {
        if self.in_transaction {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}
