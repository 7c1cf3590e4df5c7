//! What every suite needs: a work folder it owns, run plans built from a few
//! parameters, cases run round after round in alternating order, and per-op
//! times and ratios taken from the results.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::measure::stats::summarize;
use crate::progress::Progress;
use crate::store::{self, Access, ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::workload::run::SessionOptionsRecord;
use crate::workload::{CacheMode, KeyOrder, Operation, RunPlan, RunResult, execute};

/// The folder a suite creates its datasets in: `--dir` (kept) or a fresh
/// temporary folder (removed afterwards unless `--keep`). Only the entries
/// the suite names as its own are ever removed.
pub struct WorkDir {
    /// The folder itself.
    pub path: PathBuf,
    remove_after: bool,
    _temp: Option<tempfile::TempDir>,
}

impl WorkDir {
    /// `dir` (created when missing) or a new temporary folder named
    /// `prefix...`, removed on drop unless `keep`.
    pub fn new(dir: Option<&Path>, keep: bool, prefix: &str) -> Result<WorkDir> {
        match dir {
            Some(d) => {
                if !d.exists() {
                    std::fs::create_dir_all(d)
                        .map_err(|e| Error::io("cannot create folder", d, e))?;
                } else if !d.is_dir() {
                    return Err(Error::usage(format!(
                        "--dir {}: is a file, not a folder",
                        d.display()
                    )));
                }
                Ok(WorkDir {
                    path: d.to_path_buf(),
                    remove_after: false,
                    _temp: None,
                })
            }
            None => {
                let temp = tempfile::Builder::new()
                    .prefix(prefix)
                    .tempdir()
                    .map_err(|e| {
                        Error::io(
                            "cannot create a temporary folder in",
                            &std::env::temp_dir(),
                            e,
                        )
                    })?;
                let path = temp.path().to_path_buf();
                // keep: forget the TempDir so it is not removed on drop.
                let temp = if keep {
                    let _ = temp.keep();
                    None
                } else {
                    Some(temp)
                };
                Ok(WorkDir {
                    path,
                    remove_after: !keep,
                    _temp: temp,
                })
            }
        }
    }

    /// The path of entry `name` in the folder.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Removes `names` (files or folders) when the folder is not being kept.
    pub fn remove(&self, names: &[String]) {
        if !self.remove_after {
            return;
        }
        for name in names {
            remove_entry(&self.path.join(name));
        }
    }

    /// Says where the datasets are when they stay on disk.
    pub fn report_kept(&self, progress: &dyn Progress) {
        if !self.remove_after {
            progress.note(&format!("datasets kept in {}", self.path.display()));
        }
    }
}

/// Removes a dataset blobbench made in the work folder: a folder, or a
/// database with everything the store keeps beside it (see
/// `store::remove_dataset`).
pub fn remove_entry(p: &Path) {
    store::remove_dataset(p);
}

/// One dataset in the three layouts the fasterthanfs page compares: a
/// database, a flat folder and a tree, with the disk space of each.
pub struct ThreeLayouts {
    /// The database (`NAME.db`).
    pub db: PathBuf,
    /// The flat folder, one file per blob (`NAME.dir`).
    pub dir: PathBuf,
    /// The tree of folders (`NAME.tree`).
    pub tree: PathBuf,
    /// du of db, dir, tree.
    pub space: [u64; 3],
}

impl ThreeLayouts {
    /// Creates `NAME.db`, exports it to `NAME.dir` and `NAME.tree`, and says so.
    pub fn create(
        work: &WorkDir,
        name: &str,
        spec: &crate::dataset::DatasetSpec,
        title: &str,
        progress: &dyn Progress,
    ) -> Result<ThreeLayouts> {
        let db = work.join(&format!("{name}.db"));
        let dir = work.join(&format!("{name}.dir"));
        let tree = work.join(&format!("{name}.tree"));
        progress.note(&format!(
            "{title}: {} blobs of {} in {} ({})",
            spec.count,
            match spec.distribution {
                crate::dataset::SizeDistribution::Uniform { variance } =>
                    format!("{} +/- {variance} bytes", spec.size),
                _ => format!("{} bytes", spec.size),
            },
            work.path.display(),
            crate::measure::environment::filesystem_of(&work.path)
                .map(|f| f.fs_type)
                .unwrap_or_else(|| "?".into())
        ));
        let (store, _) = crate::store::create_dataset(&sqlite(&db, |_| {}), spec, progress)?;
        drop(store);
        crate::store::export(&db, &dir, crate::store::FileLayout::Flat, progress)?;
        crate::store::export(&db, &tree, crate::store::FileLayout::Tree, progress)?;
        let space = [
            space_of(&sqlite(&db, |_| {}))?,
            space_of(&Target::dir(dir.clone()))?,
            space_of(&Target::tree(tree.clone()))?,
        ];
        Ok(ThreeLayouts {
            db,
            dir,
            tree,
            space,
        })
    }

    /// The entry names to remove afterwards.
    pub fn names(name: &str) -> Vec<String> {
        ["db", "dir", "tree"]
            .iter()
            .map(|ext| format!("{name}.{ext}"))
            .collect()
    }
}

/// A single-repetition warm run of `count` ops in `order`.
pub fn plan(
    name: impl Into<String>,
    target: Target,
    operation: Operation,
    count: u64,
    session: SessionOptionsRecord,
    seed: u64,
) -> RunPlan {
    RunPlan {
        name: name.into(),
        target,
        operation,
        order: KeyOrder::Random,
        count: Some(count),
        start: None,
        max_id: None,
        session,
        repeat: 1,
        warmup: 0,
        cache: CacheMode::Warm,
        verify: false,
        exclude_checkpoint: false,
        order_seed: seed,
    }
}

/// The session options of a run plan.
pub fn session(
    read_path: ReadPath,
    per_op_transaction: bool,
    write_style: WriteStyle,
    fsync: bool,
) -> SessionOptionsRecord {
    SessionOptionsRecord {
        read_path,
        per_op_transaction,
        write_style,
        fsync,
    }
}

/// An sqlite target with kvtest's default cache (1000 pages), adjusted by `f`.
pub fn sqlite(path: &Path, f: impl FnOnce(&mut SqliteSettings)) -> Target {
    let mut settings = SqliteSettings {
        cache_size: Some(1000),
        ..Default::default()
    };
    f(&mut settings);
    Target::sqlite(path.to_path_buf(), settings)
}

/// Disk space a target uses (like du).
pub fn space_of(target: &Target) -> Result<u64> {
    store::open(target, Access::ReadOnly)?.space_used()
}

/// Runs each group of cases `rounds` times; within a round the groups run in
/// the given order and each group's cases alternate direction from round to
/// round (A B C, C B A, ...) so drift on a shared machine favours no side.
/// `between_groups` runs untimed after each group (e.g. to reset a journal
/// mode). Returns every case's results, one per round.
pub fn run_rounds(
    cases: &[RunPlan],
    groups: &[Vec<usize>],
    rounds: u64,
    label: &str,
    progress: &dyn Progress,
    mut between_groups: impl FnMut(usize) -> Result<()>,
) -> Result<Vec<Vec<RunResult>>> {
    let total_ops: u64 = groups
        .iter()
        .flatten()
        .map(|&i| cases[i].count.unwrap_or(0))
        .sum::<u64>()
        * rounds;
    progress.start(label, total_ops);
    let units = cases.iter().map(|c| c.count.unwrap_or(0));
    let mut expected = crate::progress::Expected::rounds(units, groups, rounds);
    let mut results: Vec<Vec<RunResult>> = (0..cases.len()).map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (g, group) in groups.iter().enumerate() {
            let mut order = group.clone();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                progress.message(&format!(
                    "round {}/{}: {}",
                    round + 1,
                    rounds,
                    cases[i].name
                ));
                if let Some((current, after)) = expected.next(i) {
                    progress.expect_remaining(current, after);
                }
                let started = std::time::Instant::now();
                let mut r = execute(&cases[i], &crate::progress::Silent)?;
                progress.advance(cases[i].count.unwrap_or(0));
                expected.record(i, started.elapsed());
                r.name = format!("{} (round {})", r.name, round + 1);
                results[i].push(r);
            }
            between_groups(g)?;
        }
    }
    progress.finish();
    Ok(results)
}

/// Time per op of a one-repetition run: operations plus commit, and the WAL
/// checkpoint when `with_checkpoint` (the fasterthanfs page's chart 4 stops
/// its timer before the checkpoint).
pub fn per_op_ns(r: &RunResult, with_checkpoint: bool) -> f64 {
    let rep = &r.repetitions[0];
    let mut total = rep.ops_ns + rep.commit_ns;
    if with_checkpoint {
        total += rep.checkpoint_ns;
    }
    total as f64 / rep.ops.max(1) as f64
}

pub use crate::result::fasterthanfs::Ratio;

/// numerator / denominator round by round: the paired ratio with its
/// interval, the range of the per-round ratios, and each side's time.
pub fn ratio(numerator: &[f64], denominator: &[f64], seed: u64) -> Ratio {
    use crate::measure::estimate::{median_estimate, paired_ratio};
    let per_round: Vec<f64> = numerator
        .iter()
        .zip(denominator)
        .map(|(n, d)| n / d)
        .collect();
    let s = summarize(&per_round);
    let estimate = paired_ratio(numerator, denominator, seed);
    let (num, den) = (
        median_estimate(numerator, seed + 1),
        median_estimate(denominator, seed + 2),
    );
    Ratio {
        median: estimate.value,
        min: s.min,
        max: s.max,
        numerator_ns: num.value,
        denominator_ns: den.value,
        estimate: Some(estimate),
        numerator: Some(num),
        denominator: Some(den),
    }
}

/// A comma-separated option value, each item checked by `f`.
pub fn parse_list<T>(name: &str, text: &str, f: impl Fn(&str) -> Result<T>) -> Result<Vec<T>> {
    let items: Vec<T> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(&f)
        .collect::<Result<_>>()?;
    if items.is_empty() {
        return Err(Error::usage(format!(
            "{name} is empty: give a comma-separated list"
        )));
    }
    Ok(items)
}

/// Free space for an unprivileged user on the filesystem holding `path`.
pub fn free_bytes(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path and st a properly sized out-parameter.
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0)
        .then(|| st.f_bavail as u64 * st.f_frsize as u64)
}
