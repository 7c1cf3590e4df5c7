//! `blobbench suite aging`: what years of overwrites do to blobs kept in
//! SQLite and in files, after Sears, van Ingen and Gray, "To BLOB or Not To
//! BLOB" (MSR-TR-2006-45, 2006).
//!
//! Each series is one layout on a volume of its own, made fresh: a
//! loop-mounted ext4, xfs or btrfs image of `--volume-size` when run as
//! root (occupancy exact, the filesystem part of the answer), else a folder
//! with a stated capacity. The volume is filled with blobs to `--fill`,
//! then aged: random blobs are replaced by new ones whose sizes are drawn
//! afresh, pass after pass, until each storage age of `--ages` (blob bytes
//! written by replacements over the bytes stored after the fill). At age 0
//! and after every pass the suite measures cold reads of whole blobs in
//! random order, the pass's write throughput, each blob's fragments on
//! disk, space used, and free-space fragmentation where the filesystem
//! tells it. Everything mounted is unmounted and removed, on Ctrl-C too.

pub mod interrupt;
mod measure;
mod series;
pub mod volume;

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::result::aging::{AgingSeries, AgingTables, SizeRange, SkippedSeries, VolumeInfo};
use crate::result::{ResultDocument, Tables};

pub use series::Layout;
use volume::{Fs, Volume};

/// What `suite aging` measures, checked and typed before anything runs.
#[derive(Debug, Clone)]
pub struct AgingOptions {
    /// Where the series run.
    pub place: Place,
    /// Occupancies to fill to, 0 to 1 (each below 1).
    pub fills: Vec<f64>,
    /// Blob size ranges (constant or uniform).
    pub sizes: Vec<SizeRange>,
    /// Storage ages to measure after age 0, ascending, each above 0.
    pub ages: Vec<f64>,
    /// Layouts, in the order given.
    pub layouts: Vec<Layout>,
    /// After the last age, VACUUM the sqlite layout and measure again.
    pub vacuum: bool,
    /// Cold read rounds per point (at least 1).
    pub read_rounds: u64,
    /// SQLite's page size for the database layouts.
    pub page_size: u32,
    /// Every write durable before it returns (fsync / synchronous=full);
    /// false: synced once at the end of each pass (timed).
    pub durable: bool,
    /// Seed of sizes, content and the choice of blobs replaced.
    pub seed: u64,
}

/// The volumes the series run on.
#[derive(Debug, Clone)]
pub enum Place {
    /// A loop-mounted image per series, of each filesystem (root only).
    Loop {
        /// Filesystems, in order.
        fs: Vec<Fs>,
        /// Bytes per image.
        size: u64,
        /// Where the images and mount points go.
        work: PathBuf,
    },
    /// A fresh folder per series inside `path`, `capacity` bytes counted
    /// as the volume (occupancy approximate).
    Dir {
        /// The folder.
        path: PathBuf,
        /// The stated capacity, bytes.
        capacity: u64,
    },
}

/// One series to run: where, which layout, which sizes, how full.
#[derive(Debug, Clone, Copy)]
struct Case {
    fs: Option<Fs>,
    layout: Layout,
    sizes: SizeRange,
    fill: f64,
}

/// Runs the suite: every series in turn, each on a volume of its own.
pub fn run(options: &AgingOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    let _signals = interrupt::install();
    if let Place::Loop { work, .. } = &options.place {
        for line in volume::remove_stale(work) {
            progress.note(&line);
        }
    }
    let data_path = match &options.place {
        Place::Loop { work, .. } => work.clone(),
        Place::Dir { path, .. } => path.clone(),
    };
    let environment = crate::store::capture_environment(Some(&data_path));
    let mut tables = AgingTables {
        ages: options.ages.clone(),
        read_rounds: options.read_rounds,
        writes: series::describe_writes(options.durable),
        ..AgingTables::default()
    };
    let cases = plan(options, &mut tables.skipped);
    progress.note(&format!(
        "{} series: {} layouts x {} sizes x {} fills on {}; ages 0, {}",
        cases.len(),
        options.layouts.len(),
        options.sizes.len(),
        options.fills.len(),
        place_words(&options.place),
        options
            .ages
            .iter()
            .map(|a| format!("{a}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for (i, case) in cases.iter().enumerate() {
        interrupt::check()?;
        progress.message(&format!("series {} of {}", i + 1, cases.len()));
        let (series, info, cold) = run_case(options, case, progress)?;
        if !tables.volumes.iter().any(|v| v.fs == info.fs) {
            tables.volumes.push(info);
        }
        tables.cold = cold;
        tables.series.push(series);
    }
    Ok(ResultDocument::new(
        "suite aging",
        environment,
        Tables::Aging(tables),
    ))
}

/// Every series in the order they run: per filesystem, fill and size, the
/// layouts back to back, their order reversed from one size to the next so
/// drift favours none. Filesystems that cannot be made are skipped with
/// the reason.
fn plan(options: &AgingOptions, skipped: &mut Vec<SkippedSeries>) -> Vec<Case> {
    let filesystems: Vec<Option<Fs>> = match &options.place {
        Place::Dir { .. } => vec![None],
        Place::Loop { fs, size, .. } => fs
            .iter()
            .filter_map(|&f| match usable(f, *size) {
                Ok(()) => Some(Some(f)),
                Err(reason) => {
                    skipped.push(SkippedSeries {
                        fs: f.name().into(),
                        layout: "*".into(),
                        reason,
                    });
                    None
                }
            })
            .collect(),
    };
    let mut cases = Vec::new();
    let mut turn = 0;
    for &fs in &filesystems {
        for &fill in &options.fills {
            for &sizes in &options.sizes {
                let mut layouts = options.layouts.clone();
                if turn % 2 == 1 {
                    layouts.reverse();
                }
                turn += 1;
                cases.extend(layouts.into_iter().map(|layout| Case {
                    fs,
                    layout,
                    sizes,
                    fill,
                }));
            }
        }
    }
    cases
}

/// Whether a filesystem can be made here at this size.
fn usable(fs: Fs, size: u64) -> std::result::Result<(), String> {
    fs.check_available()?;
    if size < fs.min_size() {
        return Err(format!(
            "{} needs a volume of at least {} (its mkfs's minimum); --volume-size is {}",
            fs.name(),
            crate::units::human_bytes(fs.min_size()),
            crate::units::human_bytes(size)
        ));
    }
    Ok(())
}

/// Makes the case's volume, runs its series, and removes the volume
/// whatever happened (a failure's error wins over the removal's).
fn run_case(
    options: &AgingOptions,
    case: &Case,
    progress: &dyn Progress,
) -> Result<(AgingSeries, VolumeInfo, String)> {
    let volume = match (&options.place, case.fs) {
        (Place::Loop { size, work, .. }, Some(fs)) => Volume::make(fs, *size, work)?,
        (Place::Dir { path, capacity }, _) => Volume::in_dir(path, *capacity)?,
        (Place::Loop { .. }, None) => {
            return Err(Error::usage("a loop volume needs a filesystem"));
        }
    };
    let info = volume.info();
    progress.note(&format!(
        "{} on {}, {}, fill {:.0}%",
        case.layout.name(),
        info.fs,
        case.sizes.label(),
        case.fill * 100.0
    ));
    let ran = series::run(options, case, &volume, &info.fs, progress);
    let closed = volume.close();
    let (series, cold) = ran?;
    closed?;
    Ok((series, info, cold))
}

/// The place in words, for the plan line.
fn place_words(place: &Place) -> String {
    match place {
        Place::Loop { fs, size, .. } => format!(
            "fresh {} volumes ({})",
            crate::units::human_bytes(*size),
            fs.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
        ),
        Place::Dir { path, capacity } => format!(
            "{} counted as {} (occupancy approximate)",
            path.display(),
            crate::units::human_bytes(*capacity)
        ),
    }
}
