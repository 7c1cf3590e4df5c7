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
use crate::result::aging::SizeRange;
use crate::suite::aging::volume::Fs;
use crate::suite::aging::{AgingOptions, Layout, Place};
use crate::suite::common::parse_list;
use crate::units::{MAX_BLOB_SIZE, parse_number};

/// Runs `suite aging`.
pub fn run(args: &AgingArgs) -> Result<()> {
    let options = options(args)?;
    crate::command::output::check_outputs(&args.json, args.report.as_deref(), None)?;
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
    if let Tables::Aging(t) = &doc.tables {
        print!("{}", terminal::aging::render(t));
    }
    crate::command::output::write_result_with_report(&mut doc, &args.json, args.report.as_deref())?;
    println!("result written to {}", args.json.display());
    Ok(())
}

/// The suite's options from the command line.
fn options(args: &AgingArgs) -> Result<AgingOptions> {
    let fills = parse_list("--fill", &args.fill, parse_fill)?;
    let sizes = parse_list("--sizes", &args.sizes, parse_size_range)?;
    let ages = parse_ages(&args.ages)?;
    let layouts = parse_list("--layouts", &args.layouts, Layout::parse)?;
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
            let fs = parse_list("--fs", &args.fs, Fs::parse)?;
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
    for s in &sizes {
        for f in &fills {
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
        fills,
        sizes,
        ages,
        layouts,
        vacuum: !args.no_vacuum,
        read_rounds: args.read_rounds,
        page_size: crate::target::parse_page_size(&args.page_size.to_string())?,
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

/// "50%" or "0.5" -> 0.5; between 1% and 98%.
fn parse_fill(text: &str) -> Result<f64> {
    let value = match text.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => text.parse::<f64>(),
    };
    match value {
        Ok(v) if (0.01..=0.98).contains(&v) => Ok(v),
        _ => Err(Error::usage(format!(
            "--fill {text}: give an occupancy between 1% and 98%, e.g. 50% or 0.9"
        ))),
    }
}

/// "256KiB" (constant) or "256KiB-1MiB" (uniform).
fn parse_size_range(text: &str) -> Result<SizeRange> {
    let bad = |why: &str| {
        Error::usage(format!(
            "--sizes {text}: {why}; give a size (256KiB) or a range (256KiB-1MiB)"
        ))
    };
    let (min, max) = match text.split_once('-') {
        Some((a, b)) => (parse_number(a)?, parse_number(b)?),
        None => {
            let v = parse_number(text)?;
            (v, v)
        }
    };
    if min == 0 || max < min {
        return Err(bad("sizes must be positive and a range low-high"));
    }
    if max > MAX_BLOB_SIZE {
        return Err(bad("larger than a blob can be"));
    }
    Ok(SizeRange { min, max })
}

/// The largest storage age: a thousand times the volume's content
/// rewritten is already far past any store's life.
const MAX_AGE: f64 = 1000.0;

/// Positive, strictly ascending storage ages.
fn parse_ages(text: &str) -> Result<Vec<f64>> {
    let ages = parse_list("--ages", text, |a| {
        let why = match a.parse::<f64>() {
            Ok(v) if v > 0.0 && v <= MAX_AGE => return Ok(v),
            Ok(v) if v > MAX_AGE => format!("too large (at most {MAX_AGE})"),
            Ok(v) if v.is_nan() => "not a number".to_string(),
            Ok(_) => "a storage age is above 0".to_string(),
            Err(_) => "not a number".to_string(),
        };
        Err(Error::usage(format!(
            "--ages {a}: {why}; give storage ages (bytes overwritten / bytes stored) from above 0 to {MAX_AGE}, e.g. 1,2,4,8"
        )))
    })?;
    if ages.windows(2).any(|w| w[1] <= w[0]) {
        return Err(Error::usage(format!(
            "--ages {text}: give the ages in ascending order, each once, e.g. 1,2,4,8"
        )));
    }
    Ok(ages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_bad_values_name_themselves() {
        assert_eq!(parse_fill("50%").unwrap(), 0.5);
        assert_eq!(parse_fill("0.9").unwrap(), 0.9);
        assert!(
            parse_fill("100%")
                .unwrap_err()
                .to_string()
                .contains("--fill 100%")
        );
        assert_eq!(
            parse_size_range("256KiB-1MiB").unwrap(),
            SizeRange {
                min: 256 << 10,
                max: 1 << 20
            }
        );
        assert!(parse_size_range("1MiB-256KiB").is_err());
        assert_eq!(parse_ages("1,2,4").unwrap(), vec![1.0, 2.0, 4.0]);
        assert!(
            parse_ages("2,1")
                .unwrap_err()
                .to_string()
                .contains("ascending")
        );
        assert!(parse_ages("0").unwrap_err().to_string().contains("above 0"));
        for (text, why) in [
            ("1000000", "too large (at most 1000)"),
            ("inf", "too large (at most 1000)"),
            ("x", "not a number"),
            ("-1", "above 0"),
            ("NaN", "not a number"),
        ] {
            let e = parse_ages(text).unwrap_err().to_string();
            assert!(
                e.contains(why) && e.contains(&format!("--ages {text}")),
                "{text}: {e}"
            );
        }
    }
}
