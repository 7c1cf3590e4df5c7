//! `blobbench export DB DIR [--tree]`: one file per blob, as kvtest export.

use std::path::Path;

use crate::cli::ExportArgs;
use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::store::{self, Access, FileLayout, FilesStore, SessionOptions, SqliteStore, Store};
use crate::target::Target;
use crate::units::human_bytes;

/// Copies every blob of the database at `db` into `dir`; returns (blobs, bytes).
pub fn export(
    db: &Path,
    dir: &Path,
    layout: FileLayout,
    show_progress: bool,
) -> Result<(u64, u64)> {
    let mut source = SqliteStore::open(db, &Default::default(), Access::ReadOnly)?;
    let catalog = source.catalog()?;
    let manifest = catalog
        .manifest
        .clone()
        .unwrap_or_else(|| Manifest::for_keys(catalog.first_key, catalog.last_key, catalog.count));
    let mut dest = FilesStore::create(dir, layout, &manifest)?;
    let pb = show_progress.then(|| super::progress::bar(catalog.count, "exporting"));
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
        if let Some(p) = &pb
            && count % 256 == 0
        {
            p.inc(256);
        }
    }
    if let Some(p) = pb {
        p.finish_and_clear();
    }
    Ok((count, bytes))
}

pub fn run(args: &ExportArgs) -> Result<()> {
    let db = match Target::parse(&args.db)? {
        Target::Sqlite { path, .. } => path,
        other => {
            return Err(Error::usage(format!(
                "export reads a database, but \"{}\" is a {} target; name the .db file",
                args.db,
                other.kind_name()
            )));
        }
    };
    let layout = if args.tree {
        FileLayout::Tree
    } else {
        FileLayout::Flat
    };
    let (count, bytes) = export(&db, &args.dir, layout, true)?;
    let space = FilesStore::open(&args.dir, layout, Access::ReadOnly)?.space_used()?;
    let db_space = store::open(
        &Target::Sqlite {
            path: db.clone(),
            settings: Default::default(),
        },
        Access::ReadOnly,
    )?
    .space_used()?;
    println!(
        "exported {count} blobs ({}) from {} to {}{}; disk space: files {} vs database {} ({:.2}x)",
        human_bytes(bytes),
        db.display(),
        args.dir.display(),
        if args.tree { " (tree)" } else { "" },
        human_bytes(space),
        human_bytes(db_space),
        space as f64 / db_space as f64
    );
    Ok(())
}
