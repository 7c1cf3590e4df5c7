//! `blobbench quick`: about a minute, SQLite vs files on this machine.
//!
//! One dataset (20k blobs of 10k +/- 2k by default) in a database, a flat
//! folder and a tree. Cases run once per round, after one discarded warm-up
//! round, and rounds alternate their order (A B C, C B A, ...) so drift on a
//! shared machine does not favour one side; every case meets the database as
//! it was made (rollback journal, no WAL) and warms its own files right
//! before it is timed. The reads, the updates and the durable writes each
//! run until their ratios meet a precision target (or `--rounds N`), and
//! `--runs K` repeats the whole on a fresh dataset each for intervals
//! between runs.
//!
//! With an object store (`--s3`), the same blobs are copied under its
//! prefix and measured as a fourth side in the same rounds: every case of
//! the files (reads, updates) is run against it too, each write one PUT.

use std::path::PathBuf;

use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::measure::estimate::Stopping;
use crate::progress::Progress;
use crate::result::faults::SystemFailure;
use crate::result::quick::{
    DURABLE_CASE, ObjectStoreColumn, QuickEstimates, QuickRow, QuickTables, READ_BATCHED_CASE,
    READ_PER_TRANSACTION_CASE, SpaceBytes,
};
use crate::result::rounds::RoundsRule;
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::store::inject::Injection;
use crate::store::{Access, ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::workload::{Operation, RunPlan, RunResult};

use super::common::{
    DatasetState, ProbedReference, ThreeLayouts, WorkDir, exclude_checkpoint, per_op_ns, plan,
    session, sqlite,
};
use super::rounds::{Figure, RoundGroup, RoundPlan, run_rounds_keeping};

/// What `quick` measures, checked by the command before any work.
#[derive(Debug, Clone)]
pub struct QuickOptions {
    /// Folder for the datasets; None: a temporary folder.
    pub dir: Option<PathBuf>,
    /// Keep the datasets afterwards.
    pub keep: bool,
    /// The dataset every layout holds.
    pub spec: DatasetSpec,
    /// How many measured rounds, after one discarded warm-up round: a
    /// fixed count, or until each group's ratios meet a precision target.
    pub rule: RoundsRule,
    /// Independent runs, each on a fresh dataset (1: one run, intervals
    /// over its rounds; more: intervals between the runs).
    pub runs: u64,
    /// Where an object-store copy of the dataset goes (`--s3`: a fresh
    /// prefix the command chose); measured as one more side and removed
    /// afterwards, also when the run fails (unless `keep`). None: no
    /// object store.
    pub object_store: Option<Target>,
    /// A testing aid: a known extra cost in every timed operation of the
    /// one case named `ROW:SIDE` (see [`check_injection`]); None: none.
    pub inject: Option<(String, Injection)>,
}

struct Case {
    row: usize,
    side: Side,
    plan: RunPlan,
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Db,
    Dir,
    Tree,
    ObjectStore,
}

struct Row {
    label: &'static str,
    claim: &'static str,
    /// The cases whose runs the row shows (their `Case::row`).
    cases: usize,
    /// Whether the database's time includes the WAL checkpoint after the
    /// commit (as fasterthanfs's rows and compare's samples do unless the
    /// run left it out, kvtest's --nocheckpoint).
    with_checkpoint: bool,
}

/// The cases' rows: the files' one read case serves every read row, as a
/// file read has no transaction to scope.
const READ_CASES: usize = 4;
const UPDATE_CASE: usize = 4;
const DURABLE_CASE_ROW: usize = 5;

const ROWS: &[Row] = &[
    Row {
        label: READ_BATCHED_CASE,
        claim: "random order, warm cache; db: all of a round's reads in one transaction",
        cases: 0,
        with_checkpoint: false,
    },
    Row {
        label: READ_PER_TRANSACTION_CASE,
        claim: "db: each read its own transaction (kvtest --multitrans), as a server answering one request per blob",
        cases: 3,
        with_checkpoint: false,
    },
    Row {
        label: "read, blob API",
        claim: "sqlite3_blob_reopen per key, one transaction",
        cases: 1,
        with_checkpoint: false,
    },
    Row {
        label: "read, blob API + mmap",
        claim: "whole database memory-mapped, one transaction",
        cases: 2,
        with_checkpoint: false,
    },
    Row {
        label: "update, WAL+NORMAL vs in place",
        claim: "db: 1 txn, checkpoint excluded (as the fasterthanfs page); files: no fsync",
        cases: UPDATE_CASE,
        with_checkpoint: false,
    },
    Row {
        label: "  same, checkpoint included",
        claim: "db: the same runs with the WAL checkpoint's time added",
        cases: UPDATE_CASE,
        with_checkpoint: true,
    },
    // Durable means on disk in the database file too: the checkpoint that
    // copies the WAL back is part of the write's cost (fasterthanfs's
    // durable row and compare count it as well).
    Row {
        label: DURABLE_CASE,
        claim: "db: WAL+FULL txn per write, WAL checkpoint included; files: temp+fsync+rename+fsync(dir)",
        cases: DURABLE_CASE_ROW,
        with_checkpoint: true,
    },
];

/// Builds the dataset in three layouts, measures every case round after
/// round and returns the result with its table.
pub fn run(options: &QuickOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    check_injection(options)?;
    ThreeLayouts::check_room(options.dir.as_deref(), &options.spec)?;
    let work = WorkDir::new(options.dir.as_deref(), options.keep, "blobbench-quick-")?;
    let outcome = run_each(options, &work, progress);
    work.remove(&ThreeLayouts::names("quick"), outcome.is_err());
    work.report_kept(progress);
    if let Some(t) = &options.object_store {
        // Whatever happened, the objects go unless asked to stay.
        if options.keep {
            progress.note(&format!("object-store dataset kept at {t}"));
        } else {
            crate::store::remove_target(t);
        }
    }
    // A Ctrl-C while the datasets went is still an interruption.
    outcome.and_then(|doc| crate::interrupt::check().map(|()| doc))
}

/// One run, or `options.runs` independent runs each on a fresh dataset
/// (the previous one removed first), merged into one result whose
/// intervals are between the runs.
fn run_each(
    options: &QuickOptions,
    work: &WorkDir,
    progress: &dyn Progress,
) -> Result<ResultDocument> {
    if options.runs <= 1 {
        return run_in(options, work, progress);
    }
    let mut docs = Vec::new();
    for k in 1..=options.runs {
        if k > 1 {
            let names = ThreeLayouts::names("quick");
            let paths: Vec<_> = names.iter().map(|n| work.join(n)).collect();
            super::common::remove_entries(&paths);
            // The object store's copy is made anew too (its prefix is
            // this invocation's own, so only blobbench's objects go).
            if let Some(t) = &options.object_store {
                crate::store::remove_target(t);
            }
        }
        progress.note(&format!(
            "blobbench quick: run {k} of {} (a fresh dataset)",
            options.runs
        ));
        docs.push(run_in(options, work, progress)?);
    }
    Ok(super::between_runs::merge_quick(docs))
}

fn run_in(
    options: &QuickOptions,
    work: &WorkDir,
    progress: &dyn Progress,
) -> Result<ResultDocument> {
    let environment = crate::store::capture_environment(Some(&work.path));
    let spec = &options.spec;
    let layouts = ThreeLayouts::create(work, "quick", spec, "blobbench quick", progress)?;
    let mut failed = Vec::new();
    // An object store that fails while the dataset is copied there is a
    // failed side: the local sides go on without it.
    let mut object_store_target = options.object_store.as_ref();
    let object_store = match object_store_target {
        Some(t) => match copy_to_object_store(&layouts, t, progress) {
            Ok(column) => Some(column),
            Err(e @ Error::Interrupted(_)) => return Err(e),
            Err(e) => {
                failed.push(side_failed(
                    Side::ObjectStore,
                    "copying the dataset",
                    &e,
                    progress,
                ));
                object_store_target = None;
                None
            }
        },
        None => None,
    };
    let others = other_targets(&layouts, object_store_target);
    let mut cases = read_cases(&layouts, &others, spec.count);
    let read_cases = cases.len();
    cases.extend(update_cases(&layouts, &others, spec.count));
    inject_into(&mut cases, options.inject.as_ref())?;
    let mut doc = ResultDocument::new(
        ResultKind::Quick,
        environment,
        Tables::Other(serde_json::Value::Null),
    );
    // Reads first, then updates, each group in alternating order; every
    // case meets the database as it was made (rollback journal, no WAL).
    let mut reference = ProbedReference::new(&work.path);
    let state = DatasetState::capture(&[&layouts.db])?;
    let plans: Vec<RunPlan> = cases.iter().map(|c| c.plan.clone()).collect();
    let groups = groups(&cases, read_cases);
    let figures = figures(&cases);
    // A case that fails fails its side: the side's other cases are left
    // out, every other side goes on.
    let mut on_failure = |i: usize, round: &str, e: Error| -> Result<Vec<usize>> {
        if matches!(e, Error::Interrupted(_)) {
            return Err(e);
        }
        let side = cases[i].side;
        let during = format!("{round}, {}", cases[i].plan.name);
        failed.push(side_failed(side, &during, &e, progress));
        Ok((0..cases.len())
            .filter(|&j| cases[j].side == side)
            .collect())
    };
    let measured = run_rounds_keeping(
        &plans,
        &groups,
        &figures,
        RoundPlan::after_warmup(options.rule),
        progress,
        &state,
        &mut reference,
        &mut on_failure,
    )?;
    let mut results = measured.results;
    // A failed side's rounds before its failure are not paired with the
    // others' whole set: its figures are left out of the table and the runs.
    for (c, r) in cases.iter().zip(results.iter_mut()) {
        if failed.iter().any(|f| f.system == c.side.name()) {
            r.clear();
        }
    }
    doc.environment.reference = reference.into_record();
    doc.runs.extend(results.iter().flatten().cloned());
    doc.tables = Tables::Quick(QuickTables {
        quick: rows(&cases, &results, options.rule.stopping()),
        space_bytes: SpaceBytes::from_array(layouts.space),
        dataset: spec.clone(),
        rounds: results.iter().map(|r| r.len() as u64).max().unwrap_or(0),
        stopping: Some(measured.record),
        between_runs: None,
        run_stopping: Vec::new(),
        object_store,
        failed,
    });
    Ok(doc)
}

/// A side's failure, as the result records it, said on the way.
fn side_failed(side: Side, during: &str, e: &Error, progress: &dyn Progress) -> SystemFailure {
    let f = SystemFailure::new(side.name(), during, e);
    progress.note(&format!(
        "{} failed ({during}): {}; going on without it",
        f.system,
        f.reason()
    ));
    f
}

/// Copies the database's blobs under the object store's prefix (untimed)
/// and reads back what the store says about itself and its size.
fn copy_to_object_store(
    layouts: &ThreeLayouts,
    target: &Target,
    progress: &dyn Progress,
) -> Result<ObjectStoreColumn> {
    progress.note(&format!("blobbench quick: the same blobs at {target}"));
    crate::store::copy(&sqlite(&layouts.db, |_| {}), target, progress)?;
    let store = crate::store::open(target, Access::ReadOnly)?;
    Ok(ObjectStoreColumn {
        store: store.info(),
        space_bytes: store.space_used()?,
    })
}

/// Every blob read once in random order: the database by its three read
/// paths, the folder and the tree once each (files are read the same way
/// whatever the database's read path: one case serves rows 0-2).
fn read_cases(layouts: &ThreeLayouts, others: &[(Side, Target)], n: u64) -> Vec<Case> {
    let db = &layouts.db;
    let mmap = std::fs::metadata(db)
        .map(|m| m.len() * 2)
        .unwrap_or(1 << 30);
    let read = |p, per_read| session(p, per_read, WriteStyle::Truncate, false);
    let db_case = |row, name: &str, path, per_read, settings: &dyn Fn(&mut SqliteSettings)| Case {
        row,
        side: Side::Db,
        plan: plan(
            name,
            sqlite(db, settings),
            Operation::Read,
            n,
            read(path, per_read),
            11,
        ),
    };
    let mut cases = vec![
        db_case(0, "read sql", ReadPath::Sql, false, &|_| {}),
        db_case(1, "read blob-api", ReadPath::BlobApi, false, &|_| {}),
        db_case(2, "read blob-api mmap", ReadPath::BlobApi, false, &|s| {
            s.mmap_size = Some(mmap)
        }),
        db_case(3, "read sql multitrans", ReadPath::Sql, true, &|_| {}),
    ];
    for (side, t) in others {
        cases.push(Case {
            row: 0,
            side: *side,
            plan: plan(
                format!("read {}", t.kind_name()),
                t.clone(),
                Operation::Read,
                n,
                read(ReadPath::Sql, false),
                11,
            ),
        });
    }
    cases
}

/// A tenth of the blobs overwritten in one transaction (row 3) and a
/// fortieth each made durable on its own (row 4), database and files; the
/// object store writes each as one PUT in both rows (how durable a PUT is
/// is the server's to say, not the client's).
fn update_cases(layouts: &ThreeLayouts, others: &[(Side, Target)], n: u64) -> Vec<Case> {
    let updates = (n / 10).max(1);
    let durable = (n / 40).max(1);
    let wal = |sync: &'static str| {
        move |s: &mut SqliteSettings| {
            s.journal_mode = Some("wal".into());
            s.synchronous = Some(sync.into());
        }
    };
    let mut cases = vec![
        Case {
            row: UPDATE_CASE,
            side: Side::Db,
            plan: exclude_checkpoint(plan(
                "update wal normal",
                sqlite(&layouts.db, wal("normal")),
                Operation::Update,
                updates,
                session(ReadPath::Sql, false, WriteStyle::Truncate, false),
                12,
            )),
        },
        Case {
            row: DURABLE_CASE_ROW,
            side: Side::Db,
            plan: plan(
                "update wal full per-write txn",
                sqlite(&layouts.db, wal("full")),
                Operation::Update,
                durable,
                session(ReadPath::Sql, true, WriteStyle::Truncate, false),
                13,
            ),
        },
    ];
    for (side, t) in others.iter().cloned() {
        if side == Side::ObjectStore {
            let put = |count, seed| {
                plan(
                    format!("update {} put", t.kind_name()),
                    t.clone(),
                    Operation::Update,
                    count,
                    session(ReadPath::Sql, false, WriteStyle::Truncate, false),
                    seed,
                )
            };
            cases.push(Case {
                row: UPDATE_CASE,
                side,
                plan: put(updates, 12),
            });
            cases.push(Case {
                row: DURABLE_CASE_ROW,
                side,
                plan: put(durable, 13),
            });
            continue;
        }
        cases.push(Case {
            row: UPDATE_CASE,
            side,
            plan: plan(
                format!("update {} in place", t.kind_name()),
                t.clone(),
                Operation::Update,
                updates,
                session(ReadPath::Sql, false, WriteStyle::InPlace, false),
                12,
            ),
        });
        cases.push(Case {
            row: DURABLE_CASE_ROW,
            side,
            plan: plan(
                format!("update {} rename+fsync", t.kind_name()),
                t,
                Operation::Update,
                durable,
                session(ReadPath::Sql, false, WriteStyle::TempRename, true),
                13,
            ),
        });
    }
    cases
}

/// The sides beside the database: the two folders, and the object store
/// when there is one.
fn other_targets(layouts: &ThreeLayouts, object_store: Option<&Target>) -> Vec<(Side, Target)> {
    let mut out = vec![
        (Side::Dir, Target::dir(layouts.dir.clone())),
        (Side::Tree, Target::tree(layouts.tree.clone())),
    ];
    out.extend(object_store.map(|t| (Side::ObjectStore, t.clone())));
    out
}

/// The ROW of `--inject ROW:SIDE=SPEC`, by the cases' row (the files'
/// one read case serves the three read rows: `read`).
const INJECT_ROWS: [&str; 6] = [
    "read",
    "read-blob-api",
    "read-mmap",
    "read-multitrans",
    "update",
    "durable",
];

impl Side {
    /// Its name in the table's columns and in `--inject`: db, dir, tree, s3.
    fn name(self) -> &'static str {
        match self {
            Side::Db => "db",
            Side::Dir => "dir",
            Side::Tree => "tree",
            Side::ObjectStore => "s3",
        }
    }
}

impl Case {
    /// Its name for `--inject`: ROW:SIDE, e.g. `read:db`, `durable:dir`.
    fn name(&self) -> String {
        format!("{}:{}", INJECT_ROWS[self.row], self.side.name())
    }
}

/// Puts the injection into the one case it names; an unknown name is
/// refused with every case's name.
fn inject_into(cases: &mut [Case], inject: Option<&(String, Injection)>) -> Result<()> {
    let Some((name, injection)) = inject else {
        return Ok(());
    };
    match cases.iter_mut().find(|c| c.name() == *name) {
        Some(c) => {
            c.plan.session.inject = Some(*injection);
            Ok(())
        }
        None => Err(Error::usage(format!(
            "--inject {name}={injection}: quick has no case \"{name}\"; use one of: {}",
            cases.iter().map(Case::name).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// Checks `--inject`'s case name before any work, on the cases the
/// options make (laid out at placeholder paths: nothing is touched).
pub fn check_injection(options: &QuickOptions) -> Result<()> {
    let placeholder = ThreeLayouts {
        db: "/nonexistent/quick.db".into(),
        dir: "/nonexistent/quick.dir".into(),
        tree: "/nonexistent/quick.tree".into(),
        space: [0; 3],
    };
    let others = other_targets(&placeholder, options.object_store.as_ref());
    let mut cases = read_cases(&placeholder, &others, 1);
    cases.extend(update_cases(&placeholder, &others, 1));
    inject_into(&mut cases, options.inject.as_ref())
}

/// The groups of cases that alternate and stop together: the reads, the
/// updates of one transaction, and the durable writes (each group's
/// rounds cost differently and settle at their own pace).
fn groups(cases: &[Case], read_cases: usize) -> Vec<RoundGroup> {
    let of_row = |row: usize| -> Vec<usize> {
        (read_cases..cases.len())
            .filter(|&i| cases[i].row == row)
            .collect()
    };
    vec![
        RoundGroup {
            name: "reads".into(),
            cases: (0..read_cases).collect(),
        },
        RoundGroup {
            name: "updates".into(),
            cases: of_row(UPDATE_CASE),
        },
        RoundGroup {
            name: "durable writes".into(),
            cases: of_row(DURABLE_CASE_ROW),
        },
    ]
}

/// The ratios the table answers with, whose intervals decide when a group
/// stops: every side's time over the database's, row by row.
fn figures(cases: &[Case]) -> Vec<Figure> {
    let index = |row: usize, side: Side| cases.iter().position(|c| c.row == row && c.side == side);
    let mut out = Vec::new();
    for info in ROWS {
        let Some(db) = index(info.cases, Side::Db) else {
            continue;
        };
        let files_row = if info.cases < READ_CASES {
            0
        } else {
            info.cases
        };
        for side in [Side::Dir, Side::Tree, Side::ObjectStore] {
            if let Some(file) = index(files_row, side) {
                out.push(Figure {
                    numerator: file,
                    denominator: db,
                    with_checkpoint: info.with_checkpoint,
                });
            }
        }
    }
    out
}

/// The table's rows: each case's median time per op on every side with its
/// interval, and the file/db ratios paired round by round; `stopping`: how
/// the rounds ended, which sets the intervals' ranks.
fn rows(cases: &[Case], results: &[Vec<RunResult>], stopping: Stopping) -> Vec<QuickRow> {
    let median_estimate = |v: &[f64]| stopping.median(v);
    let paired_ratio = |n: &[f64], d: &[f64]| stopping.ratio(n, d);
    // One side's time per op, round by round.
    let times = |row: usize, side: Side, with_checkpoint: bool| -> Option<Vec<f64>> {
        let row = if side != Side::Db && row < READ_CASES {
            0
        } else {
            row
        };
        let idx = cases.iter().position(|c| c.row == row && c.side == side)?;
        let v: Vec<f64> = results[idx]
            .iter()
            .map(|r| per_op_ns(r, with_checkpoint))
            .collect();
        (!v.is_empty()).then_some(v)
    };
    let mut out = Vec::new();
    for info in ROWS {
        let with_checkpoint = info.with_checkpoint;
        let data_row = info.cases;
        let (Some(d), Some(f), Some(t)) = (
            times(data_row, Side::Db, with_checkpoint),
            times(data_row, Side::Dir, true),
            times(data_row, Side::Tree, true),
        ) else {
            continue;
        };
        let s3 = times(data_row, Side::ObjectStore, true);
        let e = QuickEstimates {
            db_ns_per_op: median_estimate(&d),
            dir_ns_per_op: median_estimate(&f),
            tree_ns_per_op: median_estimate(&t),
            dir_over_db: paired_ratio(&f, &d),
            tree_over_db: paired_ratio(&t, &d),
            s3_ns_per_op: s3.as_ref().map(|s| median_estimate(s)),
            s3_over_db: s3.as_ref().map(|s| paired_ratio(s, &d)),
        };
        let mut detail = info.claim.to_string();
        if s3.is_some() && data_row >= UPDATE_CASE {
            detail.push_str("; object store: one PUT per write");
        }
        out.push(QuickRow::of(info.label.into(), detail, e));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every case's runs, `rounds` of them: each op takes 100 ns, the
    /// commit nothing, and the database's WAL checkpoint `checkpoint_ns`.
    fn results(cases: &[Case], rounds: usize, checkpoint_ns: u64) -> Vec<Vec<RunResult>> {
        let text = include_str!("../../tests/fixtures/results/quick.json");
        let doc: ResultDocument = serde_json::from_str(text).expect("fixture");
        let template = doc.runs[0].clone();
        cases
            .iter()
            .map(|c| {
                let mut r = template.clone();
                r.plan = c.plan.clone();
                let rep = &mut r.repetitions[0];
                rep.ops = 10;
                rep.ops_ns = 1000;
                rep.commit_ns = 0;
                rep.checkpoint_ns = if c.side == Side::Db { checkpoint_ns } else { 0 };
                vec![r; rounds]
            })
            .collect()
    }

    fn quick_rows(checkpoint_ns: u64) -> Vec<QuickRow> {
        let layouts = ThreeLayouts {
            db: "/nonexistent/quick.db".into(),
            dir: "/nonexistent/quick.dir".into(),
            tree: "/nonexistent/quick.tree".into(),
            space: [0; 3],
        };
        let others = other_targets(&layouts, None);
        let mut cases = read_cases(&layouts, &others, 400);
        cases.extend(update_cases(&layouts, &others, 400));
        rows(&cases, &results(&cases, 3, checkpoint_ns), Stopping::Fixed)
    }

    #[test]
    fn the_durable_row_counts_the_wal_checkpoint_in_the_database_time() {
        let rows = quick_rows(500);
        let row = |label: &str| {
            rows.iter()
                .find(|r| r.case == label)
                .unwrap_or_else(|| panic!("no row {label}"))
        };
        // 1000 ns of ops + 500 ns of checkpoint over 10 ops.
        let durable = row(DURABLE_CASE);
        assert_eq!(durable.db_ns_per_op, 150.0, "{durable:?}");
        assert_eq!(durable.dir_ns_per_op, 100.0);
        assert!(
            durable.detail.contains("WAL checkpoint included"),
            "{}",
            durable.detail
        );
        // Row 3 leaves it out as the page does, its twin puts it back.
        assert_eq!(row("update, WAL+NORMAL vs in place").db_ns_per_op, 100.0);
        assert_eq!(row("  same, checkpoint included").db_ns_per_op, 150.0);
        assert_eq!(row(READ_BATCHED_CASE).db_ns_per_op, 100.0);
    }

    #[test]
    fn the_durable_row_runs_without_leaving_the_checkpoint_out() {
        // compare's samples count the checkpoint unless the plan excludes
        // it: the durable case must not, or quick and compare would differ.
        let layouts = ThreeLayouts {
            db: "/nonexistent/quick.db".into(),
            dir: "/nonexistent/quick.dir".into(),
            tree: "/nonexistent/quick.tree".into(),
            space: [0; 3],
        };
        let others = other_targets(&layouts, None);
        let cases = update_cases(&layouts, &others, 400);
        let durable = cases
            .iter()
            .find(|c| c.row == DURABLE_CASE_ROW && c.side == Side::Db)
            .expect("durable db case");
        assert!(!durable.plan.exclude_checkpoint);
        assert_eq!(ROWS.len(), 7);
        assert!(ROWS[6].with_checkpoint && ROWS[5].with_checkpoint);
        assert!(!ROWS[4].with_checkpoint);
    }
}
