//! Filling a new target with a dataset, and copying one target into another.

use std::path::Path;
use std::time::Instant;

use super::{Access, FileLayout, FilesStore, SessionOptions, SqliteStore, Store};
use crate::dataset::{DatasetSpec, Manifest};
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::target::Target;

/// Loads every blob of `spec` into a new target; returns the store.
pub fn create_dataset(
    target: &Target,
    spec: &DatasetSpec,
    progress: &dyn Progress,
) -> Result<(Box<dyn Store>, u64)> {
    let manifest = Manifest::new(spec.clone());
    let mut store = super::create(target, &manifest)?;
    progress.start(&format!("creating {}", target.kind_name()), spec.count);
    let started = Instant::now();
    {
        let mut session = store.session(SessionOptions::default())?;
        session.begin()?;
        let mut buf = Vec::new();
        for key in spec.first_key..=spec.last_key() {
            spec.fill(key, 0, &mut buf);
            session.insert(key, &buf)?;
            if key % 256 == 0 {
                progress.advance(256);
            }
        }
        session.commit()?;
        session.checkpoint()?;
    }
    progress.finish();
    Ok((store, started.elapsed().as_nanos() as u64))
}

/// Copies every blob of the database at `db` into `dir`; returns (blobs, bytes).
pub fn export(
    db: &Path,
    dir: &Path,
    layout: FileLayout,
    progress: &dyn Progress,
) -> Result<(u64, u64)> {
    let mut source = SqliteStore::open(db, &Default::default(), Access::ReadOnly)?;
    let catalog = source.catalog()?;
    let manifest = catalog
        .manifest
        .clone()
        .unwrap_or_else(|| Manifest::for_keys(catalog.first_key, catalog.last_key, catalog.count));
    let mut dest = FilesStore::create(dir, layout, &manifest)?;
    progress.start("exporting", catalog.count);
    let mut session = dest.session(SessionOptions::default())?;
    let conn = source.connection();
    let mut stmt = conn
        .prepare("SELECT k, v FROM kv ORDER BY k")
        .map_err(|e| Error::sqlite(db, e))?;
    let mut rows = stmt.query([]).map_err(|e| Error::sqlite(db, e))?;
    let (mut count, mut bytes) = (0u64, 0u64);
    while let Some(row) = rows.next().map_err(|e| Error::sqlite(db, e))? {
        let key: i64 = row.get(0).map_err(|e| Error::sqlite(db, e))?;
        if key < 0 {
            return Err(Error::usage(format!(
                "{} holds key {key}: files can only be named for keys >= 0",
                db.display()
            )));
        }
        let value = row.get_ref(1).map_err(|e| Error::sqlite(db, e))?;
        let data = value
            .as_blob_or_null()
            .map_err(|e| Error::sqlite(db, e.into()))?
            .unwrap_or(&[]);
        session.insert(key as u64, data)?;
        count += 1;
        bytes += data.len() as u64;
        if count % 256 == 0 {
            progress.advance(256);
        }
    }
    progress.finish();
    Ok((count, bytes))
}
