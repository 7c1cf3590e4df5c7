//! `blobbench suite aging`: the edge. Every list (filesystems, fills, sizes,
//! ages, layouts) is checked before any volume is made; root is required
//! for loop volumes, and without it the error names `--dir` and
//! `--capacity`. The table is printed and the result written after.

use crate::cli::AgingArgs;
use std::path::Path;

use crate::command::output::check_work_dir;
use crate::command::progress::Bars;
use crate::error::{Error, Result};
use crate::report::terminal;
use crate::result::Tables;
use crate::suite::aging::volume::Fs;
use crate::suite::aging::{AgingOptions, Place};

/// Runs `suite aging`.
pub fn run(args: &AgingArgs) -> Result<()> {
    let options = options(args)?;
    crate::command::output::check_result_files(&args.outputs, None)?;
    let created = match &options.place {
        Place::Loop { work, .. } => create_work(work)?,
        Place::Dir { .. } => None,
    };
    let ran = crate::suite::aging::run(&options, &Bars::new());
    if let (Err(_), Some(work)) = (&ran, created) {
        // Only if still empty: a failed run leaves no folder it made.
        let _ = std::fs::remove_dir(work);
    }
    let mut doc = ran?;
    crate::command::output::finish_environment(&mut doc.environment);
    crate::command::output::print_transactions(&doc);
    if let Tables::Aging(t) = &doc.tables {
        print!("{}", terminal::aging::render(t));
    }
    crate::command::output::write_result_files(&mut doc, &args.outputs)?;
    Ok(())
}

/// The suite's options from the command line.
fn options(args: &AgingArgs) -> Result<AgingOptions> {
    check_ascending(&args.ages)?;
    let (fills, sizes) = (&args.fill, &args.sizes);
    let place = match (&args.dir, args.capacity) {
        (Some(dir), Some(capacity)) => {
            check_work_dir("--dir", dir)?;
            Place::Dir {
                path: dir.clone(),
                capacity,
            }
        }
        _ => {
            if !is_root() {
                return Err(Error::usage(
                    "suite aging makes loop-mounted volumes, which needs root: run it with sudo, or give --dir FOLDER --capacity SIZE to age blobs in a folder (occupancy then approximate)",
                ));
            }
            let fs = args.fs.clone();
            check_volume_size(&fs, args.volume_size)?;
            let work = args.work.clone().unwrap_or_else(std::env::temp_dir);
            check_work_dir("--work", &work)?;
            Place::Loop {
                fs,
                size: args.volume_size,
                work,
            }
        }
    };
    let volume = match &place {
        Place::Loop { size, .. } => *size,
        Place::Dir { capacity, .. } => *capacity,
    };
    for s in sizes {
        for f in fills {
            if (s.max as f64) > volume as f64 * f / 4.0 {
                return Err(Error::usage(format!(
                    "--sizes {}: a blob of up to {} fills more than a quarter of {:.0}% of the {} volume; raise --volume-size (or --capacity) or give smaller sizes",
                    s.label(),
                    crate::units::human_bytes(s.max),
                    f * 100.0,
                    crate::units::human_bytes(volume)
                )));
            }
        }
    }
    Ok(AgingOptions {
        place,
        fills: fills.clone(),
        sizes: sizes.clone(),
        ages: args.ages.clone(),
        layouts: args.layouts.clone(),
        vacuum: !args.no_vacuum,
        read_rounds: args.read_rounds,
        page_size: args.page_size,
        durable: args.durable,
        seed: args.seed,
    })
}

/// Creates --work when missing, as mkdir -p (fio makes its --directory
/// too); returns it when this run made it.
fn create_work(work: &Path) -> Result<Option<&Path>> {
    if work.is_dir() {
        return Ok(None);
    }
    std::fs::create_dir_all(work).map_err(|e| Error::io("cannot create --work folder", work, e))?;
    Ok(Some(work))
}

/// Refuses a --volume-size below the smallest volume a filesystem's mkfs
/// makes: every series on it would be skipped.
fn check_volume_size(filesystems: &[Fs], size: u64) -> Result<()> {
    for fs in filesystems {
        if size < fs.min_size() {
            return Err(Error::usage(format!(
                "--volume-size {}: {} needs a volume of at least {} (its mkfs's minimum); give --volume-size {} or more, or leave {} out of --fs",
                crate::units::human_bytes(size),
                fs.name(),
                crate::units::human_bytes(fs.min_size()),
                binary_size(fs.min_size()),
                fs.name()
            )));
        }
    }
    Ok(())
}

/// A size as --volume-size takes it back: 300MiB.
fn binary_size(bytes: u64) -> String {
    match bytes {
        b if b % (1 << 30) == 0 => format!("{}GiB", b >> 30),
        b if b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b => b.to_string(),
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no failure modes.
    unsafe { libc::geteuid() == 0 }
}

/// Storage ages each measured once, in ascending order.
fn check_ascending(ages: &[f64]) -> Result<()> {
    if ages.windows(2).any(|w| w[1] <= w[0]) {
        let text = ages
            .iter()
            .map(f64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        return Err(Error::usage(format!(
            "--ages {text}: give the ages in ascending order, each once, e.g. 1,2,4,8"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_must_ascend() {
        assert!(check_ascending(&[1.0, 2.0, 4.0]).is_ok());
        assert!(
            check_ascending(&[2.0, 1.0])
                .unwrap_err()
                .to_string()
                .contains("ascending")
        );
    }
}
