//! `blobbench export SOURCE DEST [--tree]`: copies a dataset into another
//! store; by default one file per blob, as kvtest export.
//!
//! DEST uses the target grammar (`dir:out`, `tree:out`, `sqlite:copy.db`,
//! a server URL, ...); a bare path keeps kvtest's meaning: a flat folder,
//! or a tree with --tree.

use std::path::Path;

use crate::cli::ExportArgs;
use crate::error::{Error, Result};
use crate::store;
use crate::target::Target;
use crate::units::human_bytes;

/// The destination named on the command line, as a target.
fn destination(args: &ExportArgs) -> Result<Target> {
    // A lossy copy of a name that is not UTF-8 would name another folder.
    crate::command::output::require_utf8("export destination", &args.dir)?;
    let text = args.dir.to_string_lossy();
    let bare = |p: &Path| {
        let path = p.to_path_buf();
        if args.tree {
            Target::Tree { path }
        } else {
            Target::Dir { path }
        }
    };
    let dest = Target::parse_with_bare(&text, bare)?;
    if args.tree && !matches!(dest, Target::Tree { .. }) {
        return Err(Error::usage(format!(
            "--tree makes a bare destination a tree of folders, but \"{text}\" is a {} target; name it tree:{} or drop --tree",
            dest.kind_name(),
            dest.path().display()
        )));
    }
    Ok(dest)
}

/// Copies the dataset and prints what was copied and the disk space of both.
pub fn run(args: &ExportArgs) -> Result<()> {
    let source = Target::parse(&args.db)?;
    let dest = destination(args)?;
    // Where the copy goes must take files before the source is read.
    match (&dest, dest.data_path()) {
        (Target::Dir { path } | Target::Tree { path }, _) => {
            crate::command::output::check_work_dir("export destination", path)?
        }
        (_, Some(file)) => {
            let folder = file.parent().filter(|p| !p.as_os_str().is_empty());
            crate::command::output::check_work_dir(
                "export destination",
                folder.unwrap_or(Path::new(".")),
            )?
        }
        _ => {}
    }
    let store::CopySummary {
        blobs: count,
        bytes,
        source_space,
        dest_space: space,
    } = store::copy_measured(&source, &dest, &super::progress::Bars::new())?;
    let (dest_word, source_word) = match (&source, &dest) {
        (Target::Sqlite { .. }, Target::Dir { .. } | Target::Tree { .. }) => ("files", "database"),
        _ => (dest.kind_name(), source.kind_name()),
    };
    println!(
        "exported {count} blobs ({}) from {} to {}{}; disk space: {dest_word} {} vs {source_word} {} ({:.2}x)",
        human_bytes(bytes),
        source.path().display(),
        dest.path().display(),
        if matches!(dest, Target::Tree { .. }) {
            " (tree)"
        } else {
            ""
        },
        human_bytes(space),
        human_bytes(source_space),
        space as f64 / source_space as f64
    );
    Ok(())
}
