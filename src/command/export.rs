//! `blobbench export DB DIR [--tree]`: one file per blob, as kvtest export.

use crate::cli::ExportArgs;
use crate::error::{Error, Result};
use crate::store::{self, Access, FileLayout, FilesStore, Store};
use crate::target::Target;
use crate::units::human_bytes;

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
    let (count, bytes) =
        crate::store::export(&db, &args.dir, layout, &super::progress::Bars::new())?;
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
