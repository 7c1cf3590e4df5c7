//! What every suite needs: a work folder it owns, run plans built from a few
//! parameters, cases run round after round in alternating order, and per-op
//! times and ratios taken from the results.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::measure::stats::summarize;
use crate::progress::Progress;
use crate::result::run::KeyOrder;
use crate::store::{self, Access, ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::workload::run::SessionOptionsRecord;
use crate::workload::{CacheMode, Operation, RunPlan, RunResult};

/// The folder a suite creates its datasets in: `--dir` or a fresh
/// temporary folder; either way the datasets go afterwards unless `--keep`.
/// Only the entries the suite names as its own are ever removed, and a
/// `--dir` folder itself only when this run created it and it is empty. While it lives, Ctrl-C,
/// SIGTERM and SIGHUP stop the suite at its next step instead of killing
/// it (see `interrupt`), so the folder and its datasets are removed as
/// after a failure.
pub struct WorkDir {
    /// The folder itself.
    pub path: PathBuf,
    remove_after: bool,
    /// --keep: datasets stay even when the suite fails, to be looked at.
    keep: bool,
    /// `--dir` named a folder this run created (removed again, if empty,
    /// when its datasets go).
    created: bool,
    /// Set when a failure removed the datasets: nothing is left to report.
    discarded: std::cell::Cell<bool>,
    _temp: Option<tempfile::TempDir>,
    /// Last, so it is dropped last: a signal while the folder is being
    /// removed is still caught.
    _signals: crate::interrupt::Guard,
}

impl WorkDir {
    /// `dir` (created when missing, if its parent exists: a mistyped path
    /// is refused, not made) or a new temporary folder named `prefix...`;
    /// the datasets are removed afterwards unless `keep`.
    pub fn new(dir: Option<&Path>, keep: bool, prefix: &str) -> Result<WorkDir> {
        // Caught before anything is made, so nothing is made unguarded.
        let signals = crate::interrupt::install();
        match dir {
            Some(d) => {
                let created = !d.exists();
                if created {
                    create_named_folder(d)?;
                } else if !d.is_dir() {
                    return Err(Error::usage(format!(
                        "--dir {}: is a file, not a folder",
                        d.display()
                    )));
                }
                Ok(WorkDir {
                    path: d.to_path_buf(),
                    remove_after: !keep,
                    keep,
                    created,
                    discarded: Default::default(),
                    _temp: None,
                    _signals: signals,
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
                // Datasets are named by text (targets, SQL, child servers).
                if path.to_str().is_none() {
                    return Err(Error::usage(format!(
                        "the temporary folder \"{}\" is not valid UTF-8; set TMPDIR to another folder or give --dir",
                        path.to_string_lossy()
                    )));
                }
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
                    keep,
                    created: false,
                    discarded: Default::default(),
                    _temp: temp,
                    _signals: signals,
                })
            }
        }
    }

    /// The path of entry `name` in the folder.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Removes `names` (files or folders) when the folder is not being
    /// kept, or when the suite `failed` (unless --keep): half-made datasets
    /// in a --dir folder are of no use, and the folder itself goes too
    /// when this run created it and nothing else is in it.
    pub fn remove(&self, names: &[String], failed: bool) {
        let discard = failed && !self.keep;
        if !self.remove_after && !discard {
            return;
        }
        let paths: Vec<PathBuf> = names.iter().map(|n| self.path.join(n)).collect();
        // A test holds the suite here to interrupt it while its datasets go.
        crate::pause::at("work-remove");
        remove_entries(&paths);
        self.discarded.set(discard);
        if self.created {
            // remove_dir removes only an empty folder: nothing of the user's.
            let _ = std::fs::remove_dir(&self.path);
        }
    }

    /// Says where the datasets are when they stay on disk.
    pub fn report_kept(&self, progress: &dyn Progress) {
        // Nothing there (a suite stopped before its first dataset), or the
        // half-made datasets were discarded: nothing to say.
        let empty = std::fs::read_dir(&self.path).is_ok_and(|mut d| d.next().is_none());
        if !self.remove_after && !empty && !self.discarded.get() {
            progress.note(&format!("datasets kept in {}", self.path.display()));
        }
    }
}

/// Creates the `--dir` folder `d`, whose parent must exist: `--dir
/// /data/blobench` (a typo of an existing /data/blobbench) is one folder
/// deep, but `--dir /dat/blobbench` would make a tree nobody asked for.
fn create_named_folder(d: &Path) -> Result<()> {
    let parent = match d.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(Error::usage(format!(
            "--dir {}: its parent folder {} does not exist; check the path, or create the parent first",
            d.display(),
            parent.display()
        )));
    }
    std::fs::create_dir(d).map_err(|e| Error::io("cannot create folder", d, e))
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
        check_free_space(&work.path, layouts_bytes(spec, 2), title)?;
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
        // What this call makes goes again if it fails part-way (a full
        // disk): nothing half-made is left behind, even in a kept --dir.
        let mut made = NewEntries::default();
        made.track(&db);
        let (store, _) = crate::store::create_dataset(&sqlite(&db, |_| {}), spec, progress)?;
        drop(store);
        made.track(&dir);
        made.track(&tree);
        let [dir_space, tree_space] = export_side_by_side(&db, [&dir, &tree], spec, progress)?;
        made.keep();
        let space = [space_of(&sqlite(&db, |_| {}))?, dir_space, tree_space];
        Ok(ThreeLayouts {
            db,
            dir,
            tree,
            space,
        })
    }

    /// Refuses, before any folder is made, a dataset whose three copies
    /// (they exist at once) do not fit the disk holding `dir` (or the
    /// temporary folder, where the work goes without --dir).
    pub fn check_room(dir: Option<&Path>, spec: &crate::dataset::DatasetSpec) -> Result<()> {
        let temp = std::env::temp_dir();
        let needed = spec.least_bytes().map(|b| b.saturating_mul(3));
        crate::store::check_free_space(
            dir.unwrap_or(&temp),
            needed.unwrap_or(u64::MAX),
            &format!(
                "three copies of {} blobs of {} bytes",
                spec.count, spec.size
            ),
            "ask for fewer or smaller blobs (--count, --size), or use --dir on a larger disk",
        )
    }

    /// The entry names to remove afterwards.
    pub fn names(name: &str) -> Vec<String> {
        ["db", "dir", "tree"]
            .iter()
            .map(|ext| format!("{name}.{ext}"))
            .collect()
    }
}

/// Exports the database at `db` to a flat folder and a tree at once, one
/// thread each, and returns the disk space of each. Untimed setup: a
/// filesystem creating files spends most of its time in the kernel (ext4
/// with no journal skips inodes freed in the last half minute), so the two
/// side by side take about the time of the slower one on two cores, not
/// the sum (quick: 3.6 s instead of 4.5 s here).
fn export_side_by_side(
    db: &Path,
    [dir, tree]: [&Path; 2],
    spec: &crate::dataset::DatasetSpec,
    progress: &dyn Progress,
) -> Result<[u64; 2]> {
    use crate::store::FileLayout;
    progress.start("exporting to a folder and a tree", 2 * spec.count);
    let shared = crate::progress::Shared(progress);
    let export = |to: &Path, layout, target: Target| {
        crate::store::export(db, to, layout, &shared)?;
        space_of(&target)
    };
    let (dir_space, tree_space) = std::thread::scope(|scope| {
        let tree_side =
            scope.spawn(|| export(tree, FileLayout::Tree, Target::tree(tree.to_path_buf())));
        let dir_space = export(dir, FileLayout::Flat, Target::dir(dir.to_path_buf()));
        let tree_space = tree_side.join().unwrap_or_else(|_| {
            Err(Error::Verify(format!(
                "exporting to {} stopped",
                tree.display()
            )))
        });
        (dir_space, tree_space)
    });
    progress.finish();
    // An interrupt seen by either side is the answer, not the other's
    // failure it caused.
    match (dir_space, tree_space) {
        (Ok(d), Ok(t)) => Ok([d, t]),
        (Err(e @ Error::Interrupted(_)), _) | (_, Err(e @ Error::Interrupted(_))) => Err(e),
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

/// Removes the datasets at `paths` (see [`remove_entry`]), each on a
/// thread of its own: removing files is mostly waiting on the filesystem
/// (a discard per freed extent here), so two folders of 20,000 files go in
/// 1.7 s at once against 2.9 s one after the other.
pub fn remove_entries(paths: &[PathBuf]) {
    std::thread::scope(|scope| {
        for p in paths {
            scope.spawn(move || remove_entry(p));
        }
    });
}

/// Datasets a step is making, removed when the step fails before
/// [`NewEntries::keep`]. Only entries that did not exist when tracked are
/// removed: a file the step refused to replace is never touched.
#[derive(Default)]
pub struct NewEntries {
    paths: Vec<PathBuf>,
}

impl NewEntries {
    /// Removes `path` on failure, if nothing is there yet.
    pub fn track(&mut self, path: &Path) {
        if path.symlink_metadata().is_err() {
            self.paths.push(path.to_path_buf());
        }
    }

    /// The step succeeded: what it made stays.
    pub fn keep(mut self) {
        self.paths.clear();
    }
}

impl Drop for NewEntries {
    fn drop(&mut self) {
        remove_entries(&self.paths);
    }
}

/// Datasets a suite made on a server (object-store prefixes), removed with
/// `store::remove_target` when [`RemoteDatasets::remove`] is called or the
/// value is dropped (a suite that fails part-way), unless kept. A target is
/// tracked before its dataset is made, so a half-made one goes too.
pub struct RemoteDatasets {
    targets: Vec<Target>,
    keep: bool,
}

impl RemoteDatasets {
    /// Nothing tracked yet; `keep`: never remove (`--keep`).
    pub fn new(keep: bool) -> RemoteDatasets {
        RemoteDatasets {
            targets: Vec::new(),
            keep,
        }
    }

    /// Removes `target`'s dataset later (only one blobbench made is ever
    /// removed: see `store::remove_target`).
    pub fn track(&mut self, target: &Target) {
        if !self.targets.contains(target) {
            self.targets.push(target.clone());
        }
    }

    /// Removes every tracked dataset now, unless kept.
    pub fn remove(&mut self) {
        if !self.keep {
            for t in self.targets.drain(..) {
                store::remove_target(&t);
            }
        }
    }
}

impl Drop for RemoteDatasets {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Refuses at once (exit 2) a server among `targets` that cannot be
/// reached or refuses the login, before a suite makes or measures
/// anything: the user's to fix, not a system skipped or failed after the
/// others ran. Each server is asked once. Any other error is left to the
/// measurement, which records the system as failed.
pub fn refuse_unreachable<'a>(targets: impl IntoIterator<Item = &'a Target>) -> Result<()> {
    let mut asked: Vec<&Path> = Vec::new();
    for target in targets {
        if asked.contains(&target.path()) {
            continue;
        }
        asked.push(target.path());
        if let Err(e) = store::reach(target)
            && e.exit_code() == 2
        {
            return Err(e);
        }
    }
    Ok(())
}

/// Disk space a dataset takes in a database and `file_layouts` folders of
/// one file per blob: the content once per layout, each file rounded up to
/// 4 KiB blocks, and a fifth more for pages, folders and journals.
pub fn layouts_bytes(spec: &crate::dataset::DatasetSpec, file_layouts: u64) -> u64 {
    let per_file = spec.size.div_ceil(4096).max(1).saturating_mul(4096);
    let files = spec.count.saturating_mul(per_file);
    let db = spec.count.saturating_mul(spec.size);
    db.saturating_add(files.saturating_mul(file_layouts))
        .saturating_mul(6)
        / 5
}

/// Refuses to start when the filesystem holding `folder` has less free
/// space than `needed`, naming both and the fix.
pub fn check_free_space(folder: &Path, needed: u64, what: &str) -> Result<()> {
    if let Some(free) = free_bytes(folder)
        && free < needed
    {
        return Err(Error::usage(format!(
            "{} has {} free; {what} needs about {}: use --dir on a larger disk, or a smaller --count or --size",
            folder.display(),
            crate::units::human_bytes(free),
            crate::units::human_bytes(needed)
        )));
    }
    Ok(())
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
        max_errors: None,
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
        ops_per_transaction: None,
        write_style,
        fsync,
        inject: None,
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

/// How many times a suite runs its cases: warm-up rounds run every case
/// once and are discarded (they fill the page cache, settle the files and
/// the CPU's clocks), then the measured rounds are recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rounds {
    /// Discarded rounds before the measured ones.
    pub warmup: u64,
    /// Recorded rounds (at least one).
    pub measured: u64,
}

impl Rounds {
    /// `measured` recorded rounds after the default single warm-up round.
    pub fn after_warmup(measured: u64) -> Rounds {
        Rounds {
            warmup: 1,
            measured,
        }
    }

    /// Every round, warm-up included.
    pub fn total(&self) -> u64 {
        self.warmup + self.measured
    }
}

/// The state a suite's databases are in before any case runs, restored
/// before every case so each one (in every round) starts alike: the same
/// journal mode, an empty WAL, no journal left beside the database. Write
/// cases switch the journal mode and nothing else switches it back.
#[derive(Debug, Clone, Default)]
pub struct DatasetState {
    databases: Vec<(PathBuf, String)>,
}

impl DatasetState {
    /// Reads the journal mode of each database, to restore it later.
    pub fn capture(databases: &[&Path]) -> Result<DatasetState> {
        let databases = databases
            .iter()
            .map(|db| {
                let conn = rusqlite::Connection::open(db).map_err(|e| Error::sqlite(db, e))?;
                let mode: String = conn
                    .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                    .map_err(|e| Error::sqlite(db, e))?;
                Ok((db.to_path_buf(), mode.to_ascii_lowercase()))
            })
            .collect::<Result<_>>()?;
        Ok(DatasetState { databases })
    }

    /// Untimed: empties the WAL (checkpoint TRUNCATE), puts each database
    /// back in its captured journal mode, and checks nothing is left beside
    /// it that the next case would meet (a WAL with frames, a journal).
    pub fn restore(&self) -> Result<()> {
        for (db, mode) in &self.databases {
            let err = |e| Error::sqlite(db, e);
            let conn = rusqlite::Connection::open(db).map_err(err)?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(err)?;
            let got: String = conn
                .query_row(&format!("PRAGMA journal_mode={mode}"), [], |r| r.get(0))
                .map_err(err)?;
            drop(conn);
            if !got.eq_ignore_ascii_case(mode) {
                return Err(Error::Verify(format!(
                    "{}: could not restore journal_mode={mode} between cases (it stayed {got})",
                    db.display()
                )));
            }
            for (suffix, allowed) in [("-wal", 0), ("-journal", 0)] {
                let mut side = db.as_os_str().to_owned();
                side.push(suffix);
                if let Ok(m) = std::fs::metadata(&side)
                    && m.len() > allowed
                {
                    return Err(Error::Verify(format!(
                        "{} still holds {} bytes after restoring {}: the next case would not start from the same state",
                        Path::new(&side).display(),
                        m.len(),
                        db.display()
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The machine reference of a suite that runs rounds: probed before each
/// group of cases of every measured round, in `folder` (the work folder, so the flush probe
/// meets the data's filesystem), kept in the result's environment.
pub struct ProbedReference {
    /// Where the probe's small file is written and removed.
    pub folder: PathBuf,
    /// The samples so far.
    pub samples: crate::measure::reference::MachineReference,
}

impl ProbedReference {
    /// No samples yet; probes will write in `folder`.
    pub fn new(folder: &Path) -> ProbedReference {
        ProbedReference {
            folder: folder.to_path_buf(),
            samples: Default::default(),
        }
    }

    /// The samples for the result's environment (None when no round ran).
    pub fn into_record(self) -> Option<crate::measure::reference::MachineReference> {
        (!self.samples.is_empty()).then_some(self.samples)
    }
}

/// Makes `plan` a "checkpoint excluded" case as kvtest's --nocheckpoint:
/// wal_autocheckpoint=0, so no commit inside the timed region checkpoints,
/// and the checkpoint the executor runs after the commit is timed on its own
/// and left out of the run's total.
pub fn exclude_checkpoint(mut plan: RunPlan) -> RunPlan {
    plan.exclude_checkpoint = true;
    if let Some(s) = plan.target.sqlite_settings_mut() {
        s.wal_autocheckpoint = Some(0);
    }
    plan
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
/// interval, the range of the per-round ratios, and each side's time, the
/// intervals as `stopping` calls for.
pub fn ratio(
    numerator: &[f64],
    denominator: &[f64],
    stopping: crate::measure::estimate::Stopping,
) -> Ratio {
    let per_round: Vec<f64> = numerator
        .iter()
        .zip(denominator)
        .map(|(n, d)| n / d)
        .collect();
    let s = summarize(&per_round);
    let estimate = stopping.ratio(numerator, denominator);
    let (num, den) = (stopping.median(numerator), stopping.median(denominator));
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
pub use crate::measure::space::free_bytes;

#[cfg(test)]
mod tests {
    use super::*;

    /// What a failed step made goes; what was there before it stays.
    #[test]
    fn new_entries_remove_only_what_did_not_exist() {
        let tmp = tempfile::tempdir().unwrap();
        let (mine, users) = (tmp.path().join("made.dir"), tmp.path().join("user.db"));
        std::fs::write(&users, "a user's file").unwrap();
        {
            let mut made = NewEntries::default();
            made.track(&mine);
            made.track(&users);
            // As a step makes an entry outside the stores (see
            // store::claim_new): recorded as this process's.
            crate::store::claim_new(&mine).unwrap();
            std::fs::create_dir(&mine).unwrap();
            std::fs::write(mine.join("000001"), "x").unwrap();
            // Dropped without keep(): the step failed.
        }
        assert!(!mine.exists());
        assert_eq!(std::fs::read_to_string(&users).unwrap(), "a user's file");
        let mut made = NewEntries::default();
        made.track(&mine);
        std::fs::create_dir(&mine).unwrap();
        made.keep();
        assert!(mine.is_dir());
    }

    /// A write case leaves WAL mode and a WAL with frames; restore puts the
    /// database back in its captured journal mode with nothing beside it.
    #[test]
    fn restore_undoes_what_a_write_case_leaves() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("s.db");
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            .unwrap();
        drop(conn);
        let state = DatasetState::capture(&[&db]).unwrap();
        let writer = rusqlite::Connection::open(&db).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode=wal; PRAGMA wal_autocheckpoint=0; INSERT INTO t VALUES (2)",
            )
            .unwrap();
        // The WAL has frames while the writer is open; closing it (as the
        // executor does) checkpoints, restore must still switch the mode back.
        let wal = tmp.path().join("s.db-wal");
        assert!(std::fs::metadata(&wal).unwrap().len() > 0);
        drop(writer);
        state.restore().unwrap();
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2, "the WAL's frames reached the database");
        assert!(!wal.exists());
    }

    /// A suite that fails part-way drops its tracker: the datasets it
    /// made on a server go, unless --keep asked for them.
    #[test]
    fn remote_datasets_go_when_dropped_unless_kept() {
        let spec =
            crate::dataset::spec_from_options(3, 100, 0, crate::dataset::SizeShape::Fixed, 1)
                .unwrap();
        let exists = |t: &Target| store::open(t, Access::ReadOnly).is_ok();
        for (keep, name) in [(false, "memory:remote-go"), (true, "memory:remote-keep")] {
            let t = Target::parse(name).unwrap();
            {
                let mut made = RemoteDatasets::new(keep);
                made.track(&t);
                store::create_dataset(&t, &spec, &crate::progress::Silent).unwrap();
                assert!(exists(&t));
                // Dropped here, as a suite returning an error drops it.
            }
            assert_eq!(exists(&t), keep, "{name}");
        }
        // remove() empties the tracker: a later drop removes nothing again.
        let t = Target::parse("memory:remote-now").unwrap();
        let mut made = RemoteDatasets::new(false);
        made.track(&t);
        store::create_dataset(&t, &spec, &crate::progress::Silent).unwrap();
        made.remove();
        assert!(!exists(&t));
        store::create_dataset(&t, &spec, &crate::progress::Silent).unwrap();
        drop(made);
        assert!(exists(&t), "a dataset made after remove() is not tracked");
        store::remove_target(&t);
    }

    #[test]
    fn warmup_rounds_are_counted_apart() {
        let r = Rounds::after_warmup(7);
        assert_eq!((r.warmup, r.measured, r.total()), (1, 7, 8));
    }
}
