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
//!
//! The layouts of one filesystem, fill and blob size run side by side,
//! each on its volume, age by age: all are filled, then measured, then
//! aged to the next age and measured again. Their cold read rounds are
//! interleaved, round r of every layout read back to back in an order that
//! alternates from round to round ([`measure::schedule`]), so a ratio
//! between layouts is taken round by round (paired) and drift on the
//! machine favours none.

pub use crate::interrupt;
mod measure;
mod series;
pub mod volume;

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::result::aging::{
    AgingSeries, AgingTables, RoundPairing, SizeRange, SkippedSeries, VolumeInfo,
};
use crate::result::{ResultDocument, ResultKind, Tables};

pub use series::Layout;
use series::Running;
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

/// One series to run: which layout, which sizes, how full.
#[derive(Debug, Clone, Copy)]
struct Case {
    layout: Layout,
    sizes: SizeRange,
    fill: f64,
}

/// The series that run side by side: one filesystem, fill and size range,
/// a layout each, in the order they are made and read.
#[derive(Debug, Clone)]
struct Group {
    fs: Option<Fs>,
    sizes: SizeRange,
    fill: f64,
    layouts: Vec<Layout>,
}

impl Group {
    fn case(&self, layout: Layout) -> Case {
        Case {
            layout,
            sizes: self.sizes,
            fill: self.fill,
        }
    }
}

/// Runs the suite: group after group, the layouts of each side by side,
/// each on a volume of its own.
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
    let groups = plan(options, &mut tables.skipped);
    if groups.is_empty() {
        // Nothing would be measured: an empty result is no answer.
        let reasons: Vec<String> = tables
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.fs, s.reason))
            .collect();
        return Err(Error::usage(format!(
            "no series can run ({}); fix that, or leave those filesystems out of --fs",
            reasons.join("; ")
        )));
    }
    progress.note(&format!(
        "{} series: {} layouts x {} sizes x {} fills on {}; ages 0, {}",
        groups.iter().map(|g| g.layouts.len()).sum::<usize>(),
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
    for (i, group) in groups.iter().enumerate() {
        interrupt::check()?;
        progress.message(&format!("group {} of {}", i + 1, groups.len()));
        let (series, info, cold) = run_group(options, group, progress)?;
        if let Some(info) = info
            && !tables.volumes.iter().any(|v| v.fs == info.fs)
        {
            tables.volumes.push(info);
        }
        tables.cold = cold;
        tables.series.extend(series);
    }
    tables.pairing = RoundPairing::Paired;
    Ok(ResultDocument::new(
        ResultKind::Aging,
        environment,
        Tables::Aging(tables),
    ))
}

/// Every group in the order they run: per filesystem, fill and size, the
/// layouts side by side, their order reversed from one group to the next
/// so drift favours none. Filesystems that cannot be made are skipped with
/// the reason.
fn plan(options: &AgingOptions, skipped: &mut Vec<SkippedSeries>) -> Vec<Group> {
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
    let mut groups = Vec::new();
    let mut turn = 0;
    for &fs in &filesystems {
        for &fill in &options.fills {
            for &sizes in &options.sizes {
                let mut layouts = options.layouts.clone();
                if turn % 2 == 1 {
                    layouts.reverse();
                }
                turn += 1;
                groups.push(Group {
                    fs,
                    sizes,
                    fill,
                    layouts,
                });
            }
        }
    }
    groups
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

/// Makes a volume for each of the group's layouts, runs their series side
/// by side, and removes every volume whatever happened (a failure's error
/// wins over the removals'). Returns the series, the first volume's
/// description and how the cache was emptied.
fn run_group(
    options: &AgingOptions,
    group: &Group,
    progress: &dyn Progress,
) -> Result<(Vec<AgingSeries>, Option<VolumeInfo>, String)> {
    let mut volumes = Vec::with_capacity(group.layouts.len());
    let ran = run_on(options, group, &mut volumes, progress);
    let mut closed = Ok(());
    for v in volumes {
        let c = v.close();
        if closed.is_ok() {
            closed = c;
        }
    }
    let out = ran?;
    closed?;
    Ok(out)
}

/// A fresh volume for one series of the group.
fn make_volume(options: &AgingOptions, fs: Option<Fs>) -> Result<Volume> {
    match (&options.place, fs) {
        (Place::Loop { size, work, .. }, Some(fs)) => Volume::make(fs, *size, work),
        (Place::Dir { path, capacity }, _) => Volume::in_dir(path, *capacity),
        (Place::Loop { .. }, None) => Err(Error::usage("a loop volume needs a filesystem")),
    }
}

/// Refuses a group whose volumes, all there at once, would not fit where
/// they go: `layouts` images of `--volume-size` (sparse, but filled to
/// the fill and aged) or folders of `--capacity`. Asked after the first
/// volume is made, so root and the filesystem's tools are checked first.
fn check_room(options: &AgingOptions, layouts: usize) -> Result<()> {
    let (path, each, flag) = match &options.place {
        Place::Loop { size, work, .. } => (work, *size, "--volume-size"),
        Place::Dir { path, capacity } => (path, *capacity, "--capacity"),
    };
    let need = each.saturating_mul(layouts as u64);
    let free = crate::measure::space::free_bytes(path).unwrap_or(u64::MAX);
    if layouts > 1 && free < need {
        return Err(Error::usage(format!(
            "{flag} {} for {layouts} layouts side by side (their read rounds interleave, so their volumes exist at once) needs {} in {}, and {} are free there; give a smaller {flag}, fewer --layouts, or a folder on a larger disk",
            crate::units::human_bytes(each),
            crate::units::human_bytes(need),
            path.display(),
            crate::units::human_bytes(free)
        )));
    }
    Ok(())
}

/// The group's series on `volumes` (made here, one per layout, and left
/// for the caller to remove): filled one after another, then at age 0 and
/// after every age measured side by side ([`measure_points`]); last the
/// sqlite layout's point after a VACUUM, alone.
fn run_on(
    options: &AgingOptions,
    group: &Group,
    volumes: &mut Vec<Volume>,
    progress: &dyn Progress,
) -> Result<(Vec<AgingSeries>, Option<VolumeInfo>, String)> {
    for i in 0..group.layouts.len() {
        volumes.push(make_volume(options, group.fs)?);
        if i == 0 {
            check_room(options, group.layouts.len())?;
        }
    }
    let info = volumes.first().map(Volume::info);
    let fs = info.as_ref().map_or_else(String::new, |i| i.fs.clone());
    let mut runs = Vec::with_capacity(group.layouts.len());
    for (&layout, volume) in group.layouts.iter().zip(volumes.iter()) {
        interrupt::check()?;
        progress.note(&format!(
            "{} on {fs}, {}, fill {:.0}%",
            layout.name(),
            group.sizes.label(),
            group.fill * 100.0
        ));
        runs.push(Running::start(
            options,
            &group.case(layout),
            volume,
            &fs,
            progress,
        )?);
    }
    let mut cold = measure_points(&mut runs, volumes, options, progress)?;
    for &age in &options.ages {
        for (run, volume) in runs.iter_mut().zip(volumes.iter()) {
            if run.going() {
                run.age_to(age, options, volume, progress)?;
            }
        }
        if runs.iter().any(Running::pending) {
            cold = measure_points(&mut runs, volumes, options, progress)?;
        }
    }
    for (run, volume) in runs.iter_mut().zip(volumes.iter()) {
        run.vacuum_point(volume, options)?;
    }
    Ok((runs.into_iter().map(|r| r.series).collect(), info, cold))
}

/// A point for every series with a state waiting to be measured: each
/// one's fragments and space first (they only look), then the cold read
/// rounds of all of them interleaved round by round
/// ([`measure::schedule`]). Returns how the cache was emptied.
fn measure_points(
    runs: &mut [Running],
    volumes: &[Volume],
    options: &AgingOptions,
    progress: &dyn Progress,
) -> Result<String> {
    let mut points = Vec::new();
    for (i, (run, volume)) in runs.iter_mut().zip(volumes).enumerate() {
        if let Some(point) = run.survey(volume)? {
            points.push((i, point, run.read_plan(options)));
        }
    }
    let rounds: Vec<usize> = points.iter().map(|(_, _, plan)| plan.len()).collect();
    let order = measure::schedule(&rounds);
    progress.start("cold reads, layouts side by side", order.len() as u64);
    let mut cold = String::new();
    let mut buf = Vec::new();
    for (k, round) in order {
        let (i, point, plan) = &mut points[k];
        let (rate, read, how) = runs[*i].read_round(&volumes[*i], &plan[round], &mut buf)?;
        point.read_mb_s.push(rate);
        point.blobs_read += read;
        cold = how;
        progress.advance(1);
    }
    progress.finish();
    for (i, point, _) in points {
        runs[i].push_point(point);
    }
    Ok(cold)
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
