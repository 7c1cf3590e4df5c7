//! What both kinds of `run` (kvtest-style and mixed) take alike from its
//! arguments: the target with the SQLite settings the kvtest options ask
//! for (and the testing aid's injection), how writes are made, and the
//! seed. Beneath both, so neither kind of run reaches into the other.

use crate::cli::{RunArgs, WriteStyleArg};
use crate::error::{Error, Result};
use crate::store::WriteStyle;
use crate::store::inject::Injection;
use crate::target::{Target, split_injection};

/// The seed of the random key order (kvtest-style run) or of a mixed
/// run's keys and operations when --order-seed is not given.
pub const DEFAULT_SEED: u64 = 1;

/// The target string without its `?inject=SPEC` (a testing aid: a known
/// extra cost per timed operation), and the injection parsed.
pub fn injection(args: &RunArgs) -> Result<(String, Option<Injection>)> {
    let (text, spec) = split_injection(&args.target)?;
    Ok((text, spec.as_deref().map(Injection::parse).transpose()?))
}

/// The target with the SQLite settings `run`'s kvtest options ask for
/// (--cache-size, --mmap, --nosync, --jmode, --nocheckpoint), and notes on
/// those that do not apply to it.
pub fn target_from_args(args: &RunArgs) -> Result<(Target, Vec<String>)> {
    target_with_options(args, &args.target)
}

/// As [`target_from_args`], for the target string `text`.
pub fn target_with_options(args: &RunArgs, text: &str) -> Result<(Target, Vec<String>)> {
    let mut target = Target::parse(text)?;
    let mut notes = Vec::new();
    match target.sqlite_settings_mut() {
        Some(s) => {
            s.cache_size = Some(args.cache_size);
            if args.mmap > 0 || s.mmap_size.is_none() {
                s.mmap_size = Some(args.mmap);
            }
            if args.nosync {
                s.synchronous = Some("off".into());
            }
            if let Some(j) = &args.jmode {
                s.journal_mode = Some(j.clone());
            }
            if args.nocheckpoint {
                // As kvtest: no checkpoint inside the timed COMMIT; the
                // executor times the one after it on its own.
                s.wal_autocheckpoint = Some(0);
            }
        }
        None => {
            for (given, name) in [
                (args.blob_api, "--blob-api"),
                (args.mmap > 0, "--mmap"),
                (args.nosync, "--nosync"),
                (args.jmode.is_some(), "--jmode"),
                (args.integrity_check, "--integrity-check"),
            ] {
                if given {
                    notes.push(format!("{name} ignored: it applies to database targets"));
                }
            }
        }
    }
    if args.fsync && matches!(target, Target::Sqlite { .. }) {
        notes.push(
            "--fsync ignored: SQLite durability is set by synchronous (--nosync or ?synchronous=)"
                .into(),
        );
    }
    if args.write_style.is_some()
        && !matches!(
            target,
            Target::Dir { .. } | Target::Tree { .. } | Target::SqliteExt { .. }
        )
    {
        notes.push(
            "--write-style ignored: it says how files are rewritten (dir:, tree:, sqlite-ext: targets)"
                .into(),
        );
    }
    Ok((target, notes))
}

/// Refuses --fsync and --write-style for a run that writes nothing (they
/// say how writes are made); `fix` says how to make it write.
pub fn refuse_write_options(args: &RunArgs, fix: &str) -> Result<()> {
    let given = [
        (args.fsync, "--fsync"),
        (args.write_style.is_some(), "--write-style"),
    ];
    for (given, name) in given {
        if given {
            return Err(Error::usage(format!(
                "{name} says how blobs are written, and this run only reads: {fix}, or leave {name} out"
            )));
        }
    }
    Ok(())
}

/// How `--write-style` rewrites files (`default` when not given).
pub fn write_style(args: &RunArgs, default: WriteStyle) -> WriteStyle {
    match args.write_style {
        None => default,
        Some(WriteStyleArg::Truncate) => WriteStyle::Truncate,
        Some(WriteStyleArg::InPlace) => WriteStyle::InPlace,
        Some(WriteStyleArg::Rename) => WriteStyle::TempRename,
    }
}
