//! `blobbench advise`: where to keep your blobs, calibrated here. The
//! options are checked (and the sizes sampled) before anything is created;
//! the suite measures; the header, the recommendation and the files are
//! written here.

use std::path::{Path, PathBuf};

use crate::cli::AdviseArgs;
use crate::command::progress::Bars;
use crate::error::{Error, Result};
use crate::report::terminal::advise as terminal;
use crate::result::Tables;
use crate::result::advise::Durability;
use crate::suite::advise::{self as suite, AdviseOptions};

/// Runs `advise`.
pub fn run(args: &AdviseArgs) -> Result<()> {
    // Destinations first: sampling --sample-dir can take a while.
    crate::command::output::check_result_files(&args.outputs, args.folder.dir.as_deref())?;
    let options = options(args)?;
    if let (Some(sample_dir), Some(dir)) = (&args.sample_dir, &args.folder.dir)
        && resolved(dir).starts_with(resolved(sample_dir))
    {
        return Err(Error::usage(format!(
            "--dir {}: inside --sample-dir; calibration data must not go into the folder being sampled",
            dir.display()
        )));
    }
    let calibration = suite::prepare(&options)?;
    let fs_type = crate::measure::environment::filesystem_of(calibration.folder())
        .map(|f| f.fs_type)
        .unwrap_or_else(|| "?".into());
    print!(
        "{}",
        terminal::header(
            &options.input(),
            calibration.points(),
            calibration.folder(),
            &fs_type
        )
    );
    let mut doc = calibration.run(&Bars::new())?;
    crate::command::output::finish_environment(&mut doc.environment);
    if let Tables::Advise(t) = &doc.tables {
        print!("{}", terminal::outcome(&t.advise));
    }
    crate::command::output::write_result_files(&mut doc, &args.outputs)?;
    // A layout that failed is in the tables and the result; then exit 1.
    match doc.tables.failures_line() {
        Some(line) => Err(Error::OperationsFailed(line)),
        None => Ok(()),
    }
}

/// The arguments checked and typed, the sizes sampled: nothing is created.
fn options(args: &AdviseArgs) -> Result<AdviseOptions> {
    let durability = Durability::from(args.durability);
    if args.reads > 100 {
        return Err(Error::usage(format!(
            "--reads {}: a percentage from 0 to 100, e.g. --reads 90",
            args.reads
        )));
    }
    if args.rounds == 0 {
        return Err(Error::usage("--rounds 0: at least one round is needed"));
    }
    if !(1..=12).contains(&args.points) {
        return Err(Error::usage(format!(
            "--points {}: from 1 to 12 representative sizes",
            args.points
        )));
    }
    if args.total == 0 {
        return Err(Error::usage("--total must be positive, e.g. --total 32M"));
    }
    let page_sizes = args.page_sizes.clone();
    let sample = match (&args.sample_dir, &args.sizes) {
        (Some(d), _) => suite::sample_dir(d)?,
        (None, Some(s)) => suite::sample_spec(s, args.seed)?,
        (None, None) => {
            return Err(Error::usage(
                "say what your blobs look like: --sample-dir DIR (a folder of real files) or --sizes 10k..2m",
            ));
        }
    };
    if args.writers > args.threads {
        return Err(Error::usage(format!(
            "--writers {} of --threads {}: writers are some of the threads; raise --threads",
            args.writers, args.threads
        )));
    }
    // Before the object store's prefix: a bad --aging must not leave one.
    let aging = aging(args)?;
    let object_store = match &args.s3 {
        Some(url) => Some(crate::command::object_store::fresh_prefix(url, "advise")?),
        None => None,
    };
    Ok(AdviseOptions {
        sample,
        reads_percent: args.reads,
        reads_per_transaction: args.reads_per_transaction.0,
        durability,
        page_sizes,
        points: args.points,
        total: args.total,
        rounds: args.rounds,
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
        seed: args.seed,
        threads: args.threads,
        writers: args.writers,
        object_store,
        aging,
    })
}

/// `--aging FILE --age N`: both or neither; the file a `suite aging`
/// result with aged series.
fn aging(args: &AdviseArgs) -> Result<Option<suite::AgingInput>> {
    let (file, age) = match (&args.aging, args.age) {
        (None, None) => return Ok(None),
        (Some(f), None) => {
            return Err(Error::usage(format!(
                "--aging {}: say the storage age to decide at too, e.g. --age 6 (each blob replaced twice a year for three years)",
                f.display()
            )));
        }
        (None, Some(a)) => {
            return Err(Error::usage(format!(
                "--age {a}: needs --aging FILE, a result of `blobbench suite aging --json FILE` to take the rates at that age from"
            )));
        }
        (Some(f), Some(a)) => (f, a),
    };
    let make = "make one with `blobbench suite aging --json FILE`";
    let doc = crate::result::load(file).map_err(|e| match e {
        Error::Usage(m) => Error::usage(format!("--aging: {m}; {make}")),
        other => other,
    })?;
    let Tables::Aging(tables) = doc.tables else {
        return Err(Error::usage(format!(
            "--aging {}: a result of `{}`, not of `suite aging`; {make}",
            file.display(),
            doc.command
        )));
    };
    if let Some(why) = suite::aging::unusable(&tables) {
        return Err(Error::usage(format!(
            "--aging {}: {why}; {make} (suite aging --ages takes the ages)",
            file.display()
        )));
    }
    Ok(Some(suite::AgingInput {
        file: file.display().to_string(),
        tables,
        age,
    }))
}

/// The path with symbolic links and `..` resolved as far as it exists, the
/// rest appended: where a folder is or would be created.
fn resolved(path: &Path) -> PathBuf {
    let mut existing = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|f| f.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    out.extend(rest.iter().rev());
    out
}
