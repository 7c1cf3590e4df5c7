//! `blobbench suite fasterthanfs`: SQLite's "35% Faster Than The Filesystem"
//! page, every chart of it, measured on this machine.
//!
//! One dataset (100k blobs of 10k +/- 2k by default) in a database, a flat
//! folder and a tree. Reads in random order via SQL, the blob API and the
//! blob API on a memory-mapped database (charts 1-3), the same with every
//! read its own transaction (--multitrans), 10% of the blobs overwritten in
//! random order in WAL + synchronous=NORMAL (chart 4, checkpoint excluded
//! and included) and with journal and sync off (chart 5) against every file
//! write style, the fairness variants with fsync, and disk space. Each row
//! puts the page's claim beside the ratio measured here and says whether it
//! holds.
//!
//! `--cold` adds the read cases again with the page cache dropped before
//! each timed pass (the page: "indications that SQLite does not perform as
//! well as direct I/O when experiments are run using a cold filesystem
//! cache"). Every run also sets its own write times beside its read times
//! (the page: writes are "between 5 and 15 times slower than reads").

use std::path::{Path, PathBuf};

use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::measure::estimate::{Estimate, Stopping};
use crate::progress::Progress;
use crate::result::fasterthanfs::{
    Claim, FasterThanFsRow, FasterThanFsTables, ReadWriteRow, SpaceBytes, SpaceRow, TimedRow,
    judge_write_over_read,
};
use crate::result::rounds::RoundsRule;
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::store::inject::Injection;
use crate::store::{ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::workload::{CacheMode, Operation, RunPlan, RunResult};

use super::common::{self, ThreeLayouts, WorkDir, per_op_ns, plan, ratio, session, sqlite};
use super::rounds::{Figure, RoundGroup, RoundPlan, run_rounds};

/// What `suite fasterthanfs` measures, checked by the command before any work.
#[derive(Debug, Clone)]
pub struct FasterThanFsOptions {
    /// Folder for the datasets; None: a temporary folder.
    pub dir: Option<PathBuf>,
    /// Keep the datasets afterwards.
    pub keep: bool,
    /// The dataset every layout holds.
    pub spec: DatasetSpec,
    /// Blobs overwritten per write case without fsync (1 ..= count).
    pub updates: u64,
    /// Blobs overwritten per write case with fsync or a transaction per
    /// write (1 ..= count).
    pub durable_updates: u64,
    /// How many measured rounds, after one discarded warm-up round: a
    /// fixed count, or until each group's ratios meet a precision target.
    pub rule: RoundsRule,
    /// Also run the read cases with the page cache dropped before each
    /// timed pass (as root the whole machine's, else the target's files).
    pub cold: bool,
    /// A testing aid: a known extra cost in every timed operation of the
    /// one case named ([`case_name`]); None: no case has one.
    pub inject: Option<(String, Injection)>,
}

/// A row of the table: which database case and which file case (the same
/// for dir and tree) are compared.
struct Row {
    label: &'static str,
    db: usize,
    files: FileCase,
    with_checkpoint: bool,
    claim: Claim,
}

#[derive(Clone, Copy)]
struct FileCase {
    dir: usize,
    tree: usize,
}

/// The read cases, by their index in the case list.
struct Reads {
    sql: usize,
    blob: usize,
    mapped: usize,
    sql_mt: usize,
    blob_mt: usize,
    mapped_mt: usize,
    files: FileCase,
    /// With --cold: the SQL, blob API and mapped reads and the file reads, cold.
    cold: Option<([usize; 3], FileCase)>,
}

/// The write cases, by their index in the case list.
struct Writes {
    wal_normal: usize,
    off_off: usize,
    wal_normal_mt: usize,
    wal_full: usize,
    wal_full_mt: usize,
    truncate: FileCase,
    in_place: FileCase,
    rename: FileCase,
    truncate_sync: FileCase,
    in_place_sync: FileCase,
    rename_sync: FileCase,
}

/// Everything to run: the cases, split into the read group and the write
/// group, and the rows that compare them.
struct Grid {
    cases: Vec<RunPlan>,
    groups: [RoundGroup; 2],
    rows: Vec<Row>,
    /// (storage, write case, read case) for the read/write comparison.
    read_write: Vec<(&'static str, usize, usize)>,
}

impl Grid {
    /// The rows' ratios, whose intervals decide when a group stops.
    fn figures(&self) -> Vec<Figure> {
        self.rows
            .iter()
            .flat_map(|row| {
                [row.files.dir, row.files.tree].map(|file| Figure {
                    numerator: file,
                    denominator: row.db,
                    with_checkpoint: row.with_checkpoint,
                })
            })
            .collect()
    }
}

const HEADLINE_READ: f64 = 1.35;
/// The page's own figures: 1,228,800,000 bytes (du -k of test1.dir) over
/// 1,024,512,000 (test1.db).
const SPACE_RATIO: f64 = 1_228_800_000.0 / 1_024_512_000.0;

/// Builds the dataset in three layouts, measures every case round after
/// round and returns the result with each row judged against the page.
pub fn run(options: &FasterThanFsOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    check_injection(options)?;
    ThreeLayouts::check_room(options.dir.as_deref(), &options.spec)?;
    let work = WorkDir::new(
        options.dir.as_deref(),
        options.keep,
        "blobbench-fasterthanfs-",
    )?;
    let outcome = run_in(options, &work, progress);
    work.remove(&ThreeLayouts::names("fasterthanfs"), outcome.is_err());
    work.report_kept(progress);
    // A Ctrl-C while the datasets went is still an interruption.
    outcome.and_then(|doc| crate::interrupt::check().map(|()| doc))
}

fn run_in(
    options: &FasterThanFsOptions,
    work: &WorkDir,
    progress: &dyn Progress,
) -> Result<ResultDocument> {
    let environment = crate::store::capture_environment(Some(&work.path));
    let layouts = ThreeLayouts::create(
        work,
        "fasterthanfs",
        &options.spec,
        "blobbench suite fasterthanfs",
        progress,
    )?;
    // The whole database memory-mapped, with room to spare, as the page's chart 3.
    let mmap = std::fs::metadata(&layouts.db)
        .map(|m| m.len() * 2)
        .unwrap_or(1 << 31);
    let mut grid = grid(&layouts, options, mmap);
    inject_into(&mut grid.cases, options.inject.as_ref())?;
    let mut doc = ResultDocument::new(
        ResultKind::FasterThanFs,
        environment,
        Tables::Other(serde_json::Value::Null),
    );
    // Every case meets the database as it was made (a rollback journal, as
    // on the page), whatever journal mode the previous write case left.
    let mut reference = common::ProbedReference::new(&work.path);
    let state = common::DatasetState::capture(&[&layouts.db])?;
    let figures = grid.figures();
    let measured = run_rounds(
        &grid.cases,
        &grid.groups,
        &figures,
        RoundPlan::after_warmup(options.rule),
        progress,
        &state,
        &mut reference,
    )?;
    let results = measured.results;
    let stopping = options.rule.stopping();
    doc.environment.reference = reference.into_record();
    doc.runs.extend(results.iter().flatten().cloned());
    let mut rows: Vec<FasterThanFsRow> = grid
        .rows
        .iter()
        .map(|row| FasterThanFsRow::Timed(timed_row(row, &grid.cases, &results, stopping)))
        .collect();
    rows.push(FasterThanFsRow::Space(space_row(layouts.space)));
    let read_write = grid
        .read_write
        .iter()
        .map(|&(storage, write, read)| {
            let cases = (write, read);
            read_write_row(storage, cases, &grid.cases, &results, stopping)
        })
        .collect();
    let cold_method = grid
        .cases
        .iter()
        .position(|c| c.cache == CacheMode::Cold)
        .and_then(|i| results[i].first())
        .and_then(|r| r.repetitions.first())
        .map(|rep| rep.cache.method.clone());
    doc.tables = Tables::FasterThanFs(FasterThanFsTables {
        fasterthanfs: rows,
        dataset: options.spec.clone(),
        updates: options.updates,
        durable_updates: options.durable_updates,
        rounds: results.iter().map(|r| r.len() as u64).max().unwrap_or(0),
        stopping: Some(measured.record),
        mmap_size: mmap,
        cold: options.cold,
        cold_method,
        read_write,
    });
    Ok(doc)
}

/// Every case to run and the rows comparing them.
fn grid(layouts: &ThreeLayouts, options: &FasterThanFsOptions, mmap: u64) -> Grid {
    let dir_t = Target::dir(layouts.dir.clone());
    let tree_t = Target::tree(layouts.tree.clone());
    let mut cases = Vec::new();
    let reads = read_cases(&mut cases, &layouts.db, [&dir_t, &tree_t], options, mmap);
    let first_write = cases.len();
    let writes = write_cases(&mut cases, &layouts.db, [&dir_t, &tree_t], options);
    let mut rows = read_rows(&reads);
    rows.extend(write_rows(&writes));
    // Chart 1's reads against chart 4's writes (checkpoint excluded, as the
    // page's timer), and each file layout's reads against fopen "wb" writes.
    let read_write = vec![
        ("SQLite", writes.wal_normal, reads.sql),
        ("dir", writes.truncate.dir, reads.files.dir),
        ("tree", writes.truncate.tree, reads.files.tree),
    ];
    Grid {
        read_write,
        groups: [
            RoundGroup {
                name: "reads".into(),
                cases: (0..first_write).collect(),
            },
            RoundGroup {
                name: "writes".into(),
                cases: (first_write..cases.len()).collect(),
            },
        ],
        cases,
        rows,
    }
}

/// Every blob read once in random order: the database by SQL, the blob API
/// and the blob API memory-mapped, each also with a transaction per read,
/// and the folder and the tree (read the same way whatever the database's
/// read path).
fn read_cases(
    cases: &mut Vec<RunPlan>,
    db: &Path,
    [dir_t, tree_t]: [&Target; 2],
    options: &FasterThanFsOptions,
    mmap: u64,
) -> Reads {
    let n = options.spec.count;
    let read = |path, per_op| session(path, per_op, WriteStyle::Truncate, false);
    let mut db_read = |name: &str, path, per_op, map: bool| {
        let settings = |s: &mut SqliteSettings| {
            if map {
                s.mmap_size = Some(mmap);
            }
        };
        push(
            cases,
            plan(
                name,
                sqlite(db, settings),
                Operation::Read,
                n,
                read(path, per_op),
                11,
            ),
        )
    };
    let sql = db_read("read sql", ReadPath::Sql, false, false);
    let blob = db_read("read blob-api", ReadPath::BlobApi, false, false);
    let mapped = db_read("read blob-api mmap", ReadPath::BlobApi, false, true);
    let sql_mt = db_read("read sql multitrans", ReadPath::Sql, true, false);
    let blob_mt = db_read("read blob-api multitrans", ReadPath::BlobApi, true, false);
    let mapped_mt = db_read(
        "read blob-api mmap multitrans",
        ReadPath::BlobApi,
        true,
        true,
    );
    let mut file_read = |t: &Target| {
        push(
            cases,
            plan(
                format!("read {}", t.kind_name()),
                t.clone(),
                Operation::Read,
                n,
                read(ReadPath::Sql, false),
                11,
            ),
        )
    };
    let files = FileCase {
        dir: file_read(dir_t),
        tree: file_read(tree_t),
    };
    let cold = options
        .cold
        .then(|| cold_reads(cases, [sql, blob, mapped], files));
    Reads {
        cold,
        sql,
        blob,
        mapped,
        sql_mt,
        blob_mt,
        mapped_mt,
        files,
    }
}

/// The same reads again, each timed pass after the page cache is dropped.
fn cold_reads(cases: &mut Vec<RunPlan>, db: [usize; 3], files: FileCase) -> ([usize; 3], FileCase) {
    let mut cold = |i: usize| {
        let mut p = cases[i].clone();
        p.name = format!("{} cold", p.name);
        p.cache = CacheMode::Cold;
        push(cases, p)
    };
    (
        db.map(&mut cold),
        FileCase {
            dir: cold(files.dir),
            tree: cold(files.tree),
        },
    )
}

/// Blobs overwritten in random order: the database in WAL (NORMAL and
/// FULL, one transaction or one per write) and with journal and sync off;
/// the files by every write style, without and with fsync.
fn write_cases(
    cases: &mut Vec<RunPlan>,
    db: &Path,
    [dir_t, tree_t]: [&Target; 2],
    options: &FasterThanFsOptions,
) -> Writes {
    let (updates, durable) = (options.updates, options.durable_updates);
    let mut db_write =
        |name: &str, journal: &str, sync: &str, per_op: bool, durable_count: bool| {
            let (journal, sync) = (journal.to_string(), sync.to_string());
            let (count, seed) = if durable_count {
                (durable, 13)
            } else {
                (updates, 12)
            };
            push(
                cases,
                plan(
                    name,
                    sqlite(db, move |s| {
                        s.journal_mode = Some(journal);
                        s.synchronous = Some(sync);
                    }),
                    Operation::Update,
                    count,
                    session(ReadPath::Sql, per_op, WriteStyle::Truncate, false),
                    seed,
                ),
            )
        };
    let wal_normal = db_write("update wal normal", "wal", "normal", false, false);
    let off_off = db_write("update journal off sync off", "off", "off", false, false);
    let wal_normal_mt = db_write("update wal normal multitrans", "wal", "normal", true, false);
    let wal_full = db_write("update wal full", "wal", "full", false, false);
    let wal_full_mt = db_write("update wal full multitrans", "wal", "full", true, true);
    // Their rows leave the checkpoint out (chart 4 as the page's kvtest
    // --nocheckpoint): no checkpoint may run inside their timed commits.
    for i in [wal_normal, wal_normal_mt] {
        cases[i] = common::exclude_checkpoint(cases[i].clone());
    }
    let mut file_write = |style: WriteStyle, fsync: bool| {
        let (count, seed) = if fsync { (durable, 13) } else { (updates, 12) };
        let mut one = |t: &Target| {
            push(
                cases,
                plan(
                    format!("update {} {}", t.kind_name(), style.describe(fsync)),
                    t.clone(),
                    Operation::Update,
                    count,
                    session(ReadPath::Sql, false, style, fsync),
                    seed,
                ),
            )
        };
        FileCase {
            dir: one(dir_t),
            tree: one(tree_t),
        }
    };
    Writes {
        wal_normal,
        off_off,
        wal_normal_mt,
        wal_full,
        wal_full_mt,
        truncate: file_write(WriteStyle::Truncate, false),
        in_place: file_write(WriteStyle::InPlace, false),
        rename: file_write(WriteStyle::TempRename, false),
        truncate_sync: file_write(WriteStyle::Truncate, true),
        in_place_sync: file_write(WriteStyle::InPlace, true),
        rename_sync: file_write(WriteStyle::TempRename, true),
    }
}

fn at_least(ratio: f64, text: &str) -> Claim {
    Claim::AtLeast {
        ratio,
        text: text.into(),
    }
}

fn not_claimed(text: &str) -> Claim {
    Claim::NotClaimed { text: text.into() }
}

fn multitrans_claim() -> Claim {
    Claim::DbSlower {
        text: "--multitrans: 'much slower, and uncompetitive with direct disk I/O'".into(),
    }
}

fn row(
    label: &'static str,
    db: usize,
    files: FileCase,
    with_checkpoint: bool,
    claim: Claim,
) -> Row {
    Row {
        label,
        db,
        files,
        with_checkpoint,
        claim,
    }
}

/// Charts 1-3 and their --multitrans variants (and cold variants).
fn read_rows(r: &Reads) -> Vec<Row> {
    let f = r.files;
    let mut rows = vec![
        row(
            "chart 1: read, SQL statement",
            r.sql,
            f,
            false,
            at_least(1.0, "chart 1: 'SQLite still out-performs direct reads'"),
        ),
        row(
            "chart 2: read, blob API",
            r.blob,
            f,
            false,
            at_least(
                HEADLINE_READ,
                "headline: reads '35% faster' (kvtest --blob-api)",
            ),
        ),
        row(
            "chart 3: read, blob API + mmap",
            r.mapped,
            f,
            false,
            at_least(
                2.0,
                "chart 3: 'twice as fast' (Mac, Android), 10x (Windows)",
            ),
        ),
        row(
            "read, SQL, txn per read",
            r.sql_mt,
            f,
            false,
            multitrans_claim(),
        ),
        row(
            "read, blob API, txn per read",
            r.blob_mt,
            f,
            false,
            multitrans_claim(),
        ),
        row(
            "read, blob API + mmap, txn per read",
            r.mapped_mt,
            f,
            false,
            multitrans_claim(),
        ),
    ];
    if let Some(([sql, blob, mapped], files)) = r.cold {
        let claim = || {
            Claim::DbSlower {
            text: "cold cache: 'SQLite does not perform as well as direct I/O' (the page's 'indications')"
                .into(),
        }
        };
        rows.extend([
            row("cold: read, SQL statement", sql, files, false, claim()),
            row("cold: read, blob API", blob, files, false, claim()),
            row("cold: read, blob API + mmap", mapped, files, false, claim()),
        ]);
    }
    rows
}

/// Charts 4 and 5, the other file write styles, and the fair and durable
/// comparisons with fsync.
fn write_rows(w: &Writes) -> Vec<Row> {
    let other_style = "another file write style (no fsync)";
    vec![
        row(
            "chart 4: update WAL+NORMAL vs fopen wb",
            w.wal_normal,
            w.truncate,
            false,
            at_least(
                HEADLINE_READ,
                "headline: writes '35% faster'; 1 txn, timer stopped before the checkpoint",
            ),
        ),
        row(
            "  same, checkpoint included",
            w.wal_normal,
            w.truncate,
            true,
            not_claimed("the page stops its timer before the WAL checkpoint"),
        ),
        row(
            "  WAL+NORMAL vs overwrite in place",
            w.wal_normal,
            w.in_place,
            false,
            not_claimed(other_style),
        ),
        row(
            "  WAL+NORMAL vs temp + rename",
            w.wal_normal,
            w.rename,
            false,
            not_claimed(other_style),
        ),
        row(
            "chart 5: journal OFF, sync OFF vs fopen wb",
            w.off_off,
            w.truncate,
            false,
            at_least(1.0, "chart 5: SQLite faster on an equal (unsafe) footing"),
        ),
        row(
            "update WAL+NORMAL, txn per write",
            w.wal_normal_mt,
            w.truncate,
            false,
            multitrans_claim(),
        ),
        row(
            "fair: WAL+FULL 1 txn vs fopen wb + fsync",
            w.wal_full,
            w.truncate_sync,
            true,
            at_least(
                10.0,
                "fsync on each file: 'about 10 times or more slower than writes to SQLite'",
            ),
        ),
        row(
            "  WAL+FULL 1 txn vs in place + fsync",
            w.wal_full,
            w.in_place_sync,
            true,
            not_claimed("another file write style (fsync)"),
        ),
        row(
            "  WAL+FULL 1 txn vs temp + fsync + rename",
            w.wal_full,
            w.rename_sync,
            true,
            not_claimed("another file write style (fsync, then fsync of the folder)"),
        ),
        row(
            "durable: WAL+FULL txn per write vs temp+fsync+rename",
            w.wal_full_mt,
            w.rename_sync,
            true,
            not_claimed("not on the page: every write durable on both sides"),
        ),
    ]
}

/// One row's ratios over rounds (file time / database time) and verdict.
fn timed_row(
    row: &Row,
    cases: &[RunPlan],
    results: &[Vec<RunResult>],
    stopping: Stopping,
) -> TimedRow {
    let times = |case: usize, with_checkpoint: bool| -> Vec<f64> {
        results[case]
            .iter()
            .map(|r| per_op_ns(r, with_checkpoint))
            .collect()
    };
    let db_t = times(row.db, row.with_checkpoint);
    let dir_r = ratio(&times(row.files.dir, true), &db_t, stopping);
    let tree_r = ratio(&times(row.files.tree, true), &db_t, stopping);
    TimedRow {
        case: row.label.into(),
        db_case: cases[row.db].name.clone(),
        dir_case: cases[row.files.dir].name.clone(),
        tree_case: cases[row.files.tree].name.clone(),
        checkpoint_included: row.with_checkpoint,
        verdict: row.claim.verdict(&dir_r.ratio(0), &tree_r.ratio(0)),
        claim: row.claim.clone(),
        dir_over_db: dir_r,
        tree_over_db: tree_r,
    }
}

/// Write time per blob over read time per blob of one storage, round by round.
fn read_write_row(
    storage: &str,
    (write, read): (usize, usize),
    cases: &[RunPlan],
    results: &[Vec<RunResult>],
    stopping: Stopping,
) -> ReadWriteRow {
    let times =
        |case: usize| -> Vec<f64> { results[case].iter().map(|r| per_op_ns(r, false)).collect() };
    let r = ratio(&times(write), &times(read), stopping);
    ReadWriteRow {
        storage: storage.into(),
        write_case: cases[write].name.clone(),
        read_case: cases[read].name.clone(),
        verdict: judge_write_over_read(&r.ratio(0)),
        write_over_read: r,
    }
}

/// Disk space of the three layouts against the page's figures.
fn space_row(space: [u64; 3]) -> SpaceRow {
    let claim = at_least(
        SPACE_RATIO,
        "'about 20% less disk space' (1,228,800,000 vs 1,024,512,000 bytes)",
    );
    let (dir_s, tree_s) = (
        space[1] as f64 / space[0] as f64,
        space[2] as f64 / space[0] as f64,
    );
    SpaceRow {
        case: "disk space".into(),
        verdict: claim.verdict(&Estimate::point(dir_s, 1), &Estimate::point(tree_s, 1)),
        claim,
        space_bytes: SpaceBytes::from_array(space),
        dir_over_db: dir_s,
        tree_over_db: tree_s,
    }
}

/// The name `--inject CASE=SPEC` gives a case: ROW:SIDE, SIDE its storage
/// (db, dir or tree) and ROW its run's name without the storage and
/// without `sql` (the default read path), in letters, digits, + and -
/// (`read:db`, `read-blob-api-mmap:db`, `read:dir`,
/// `update-truncate+rewrite:tree`), as quick names its cases.
pub fn case_name(plan: &RunPlan) -> String {
    let kind = plan.target.kind_name();
    let side = if kind == "sqlite" { "db" } else { kind };
    let mut row = String::new();
    for word in plan
        .name
        .split_whitespace()
        .filter(|w| *w != kind && *w != "sql")
    {
        for c in word.chars() {
            let c = if c.is_ascii_alphanumeric() || c == '+' {
                c
            } else {
                '-'
            };
            if c != '-' || !(row.is_empty() || row.ends_with('-')) {
                row.push(c);
            }
        }
        if !row.ends_with('-') {
            row.push('-');
        }
    }
    format!("{}:{side}", row.trim_end_matches('-'))
}

/// Puts the injection into the one case it names; an unknown name is
/// refused with every case's name.
fn inject_into(cases: &mut [RunPlan], inject: Option<&(String, Injection)>) -> Result<()> {
    let Some((name, injection)) = inject else {
        return Ok(());
    };
    match cases.iter_mut().find(|c| case_name(c) == *name) {
        Some(c) => {
            c.session.inject = Some(*injection);
            Ok(())
        }
        None => Err(Error::usage(format!(
            "--inject {name}={injection}: suite fasterthanfs has no case \"{name}\"; use one of: {}",
            cases.iter().map(case_name).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// Checks `--inject`'s case name before any work, on the cases the
/// options make (laid out at placeholder paths: nothing is touched).
pub fn check_injection(options: &FasterThanFsOptions) -> Result<()> {
    let placeholder = ThreeLayouts {
        db: "/nonexistent/fasterthanfs.db".into(),
        dir: "/nonexistent/fasterthanfs.dir".into(),
        tree: "/nonexistent/fasterthanfs.tree".into(),
        space: [0; 3],
    };
    inject_into(
        &mut grid(&placeholder, options, 0).cases,
        options.inject.as_ref(),
    )
}

fn push(cases: &mut Vec<RunPlan>, plan: RunPlan) -> usize {
    cases.push(plan);
    cases.len() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(cold: bool, inject: Option<&str>) -> FasterThanFsOptions {
        FasterThanFsOptions {
            dir: None,
            keep: false,
            spec: DatasetSpec {
                first_key: 1,
                count: 100,
                size: 1000,
                distribution: crate::dataset::SizeDistribution::Fixed,
                seed: 1,
            },
            updates: 10,
            durable_updates: 1,
            rule: RoundsRule::Fixed { rounds: 1 },
            cold,
            inject: inject.map(|t| crate::store::inject::parse_case(t).unwrap()),
        }
    }

    fn cases(o: &FasterThanFsOptions) -> Vec<RunPlan> {
        let placeholder = ThreeLayouts {
            db: "/nonexistent/f.db".into(),
            dir: "/nonexistent/f.dir".into(),
            tree: "/nonexistent/f.tree".into(),
            space: [0; 3],
        };
        grid(&placeholder, o, 0).cases
    }

    #[test]
    fn every_case_has_its_own_name_of_row_and_side() {
        for cold in [false, true] {
            let names: Vec<String> = cases(&options(cold, None)).iter().map(case_name).collect();
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{names:?}");
            for n in &names {
                let (row, side) = n.split_once(':').unwrap();
                assert!(["db", "dir", "tree"].contains(&side), "{n}");
                assert!(
                    !row.is_empty()
                        && row
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-')
                        && !row.starts_with('-')
                        && !row.ends_with('-')
                        && !row.contains("--"),
                    "{n}"
                );
            }
            for n in [
                "read:db",
                "read-multitrans:db",
                "read-blob-api-mmap:db",
                "read:dir",
                "read:tree",
                "update-wal-normal:db",
                "update-truncate+rewrite:dir",
                "update-temp+fsync+rename+fsync-dir:tree",
            ] {
                assert!(names.iter().any(|x| x == n), "{n} not in {names:?}");
            }
            assert_eq!(names.iter().any(|x| x == "read-cold:db"), cold);
        }
    }

    #[test]
    fn an_injection_goes_into_exactly_the_case_it_names() {
        let o = options(false, Some("read:tree=x1.25"));
        check_injection(&o).unwrap();
        let mut all = cases(&o);
        inject_into(&mut all, o.inject.as_ref()).unwrap();
        let injected: Vec<String> = all
            .iter()
            .filter(|c| c.session.inject.is_some())
            .map(case_name)
            .collect();
        assert_eq!(injected, ["read:tree"]);
        let e = check_injection(&options(false, Some("read:nfs=+1us"))).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let m = e.to_string();
        assert!(
            m.contains("\"read:nfs\"") && m.contains("read:db") && m.contains("read:dir"),
            "{m}"
        );
        assert!(!m.contains('\n'), "{m}");
    }
}
