//! `blobbench quick`: about a minute, SQLite vs files on this machine.
//!
//! One dataset (20k blobs of 10k +/- 2k by default) in a database, a flat
//! folder and a tree. Cases run once per round and rounds alternate their
//! order (A B C, C B A, ...) so drift on a shared machine does not favour one
//! side; each case warms its own files right before it is timed.

use serde_json::json;

use crate::cli::QuickArgs;
use crate::dataset::spec_from_options;
use crate::error::{Error, Result};
use crate::measure::stats::summarize;
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::store::{ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::units::human_bytes;
use crate::workload::{Operation, RunPlan};

use super::common::{ThreeLayouts, WorkDir, per_op_ns, plan, run_rounds, session, sqlite};

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
}

struct Row {
    label: &'static str,
    claim: &'static str,
}

const ROWS: &[Row] = &[
    Row {
        label: "read, SQL statement",
        claim: "random order, warm cache",
    },
    Row {
        label: "read, blob API",
        claim: "sqlite3_blob_reopen per key",
    },
    Row {
        label: "read, blob API + mmap",
        claim: "whole database memory-mapped",
    },
    Row {
        label: "update, WAL+NORMAL vs in place",
        claim: "db: 1 txn, checkpoint excluded (as the fasterthanfs page); files: no fsync",
    },
    Row {
        label: "  same, checkpoint included",
        claim: "db: the same runs with the WAL checkpoint's time added",
    },
    Row {
        label: "update, durable each write",
        claim: "db: WAL+FULL txn per write; files: temp+fsync+rename+fsync(dir)",
    },
];

pub fn run(args: &QuickArgs) -> Result<()> {
    if args.rounds == 0 {
        return Err(Error::usage("--rounds 0: at least one round is needed"));
    }
    crate::command::output::check_outputs(
        &args.json,
        args.report
            .as_deref()
            .filter(|p| *p != std::path::Path::new("none")),
    )?;
    let spec = spec_from_options(args.count, args.size, args.variance, "uniform", 1.0, 1)?;
    let work = WorkDir::new(args.dir.as_deref(), args.keep, "blobbench-quick-")?;
    let outcome = run_in(args, &spec, &work);
    work.remove(&ThreeLayouts::names("quick"));
    work.report_kept(&crate::command::progress::Bars::new());
    outcome
}

fn run_in(args: &QuickArgs, spec: &crate::dataset::DatasetSpec, work: &WorkDir) -> Result<()> {
    let layouts = ThreeLayouts::create(
        work,
        "quick",
        spec,
        "blobbench quick",
        &crate::command::progress::Bars::new(),
    )?;
    let (db, dir, tree, space) = (layouts.db, layouts.dir, layouts.tree, layouts.space);
    let base = &work.path;

    let n = spec.count;
    let updates = (n / 10).max(1);
    let durable = (n / 40).max(1);
    let mmap = std::fs::metadata(&db)
        .map(|m| m.len() * 2)
        .unwrap_or(1 << 30);
    let dir_t = Target::Dir { path: dir.clone() };
    let tree_t = Target::Tree { path: tree.clone() };
    let mut cases = Vec::new();
    let read = |p| session(p, false, WriteStyle::Truncate, false);
    cases.push(Case {
        row: 0,
        side: Side::Db,
        plan: plan(
            "read sql",
            sqlite(&db, |_| {}),
            Operation::Read,
            n,
            read(ReadPath::Sql),
            11,
        ),
    });
    cases.push(Case {
        row: 1,
        side: Side::Db,
        plan: plan(
            "read blob-api",
            sqlite(&db, |_| {}),
            Operation::Read,
            n,
            read(ReadPath::BlobApi),
            11,
        ),
    });
    cases.push(Case {
        row: 2,
        side: Side::Db,
        plan: plan(
            "read blob-api mmap",
            sqlite(&db, |s| s.mmap_size = Some(mmap)),
            Operation::Read,
            n,
            read(ReadPath::BlobApi),
            11,
        ),
    });
    for (side, t) in [(Side::Dir, &dir_t), (Side::Tree, &tree_t)] {
        // Files are read the same way whatever the database's read path: one case serves rows 0-2.
        cases.push(Case {
            row: 0,
            side,
            plan: plan(
                format!("read {}", t.kind_name()),
                t.clone(),
                Operation::Read,
                n,
                read(ReadPath::Sql),
                11,
            ),
        });
    }
    let read_cases = cases.len();
    let wal = |sync: &'static str| {
        move |s: &mut SqliteSettings| {
            s.journal_mode = Some("wal".into());
            s.synchronous = Some(sync.into());
        }
    };
    cases.push(Case {
        row: 3,
        side: Side::Db,
        plan: plan(
            "update wal normal",
            sqlite(&db, wal("normal")),
            Operation::Update,
            updates,
            session(ReadPath::Sql, false, WriteStyle::Truncate, false),
            12,
        ),
    });
    cases.push(Case {
        row: 4,
        side: Side::Db,
        plan: plan(
            "update wal full per-write txn",
            sqlite(&db, wal("full")),
            Operation::Update,
            durable,
            session(ReadPath::Sql, true, WriteStyle::Truncate, false),
            13,
        ),
    });
    for (side, t) in [(Side::Dir, &dir_t), (Side::Tree, &tree_t)] {
        cases.push(Case {
            row: 3,
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
            row: 4,
            side,
            plan: plan(
                format!("update {} rename+fsync", t.kind_name()),
                t.clone(),
                Operation::Update,
                durable,
                session(ReadPath::Sql, false, WriteStyle::TempRename, true),
                13,
            ),
        });
    }
    let mut doc = ResultDocument::new(
        "quick",
        crate::store::capture_environment(Some(base)),
        crate::result::Tables::Other(serde_json::Value::Null),
    );
    // Reads first (updates change the database's journal mode), each group
    // in alternating order.
    let plans: Vec<RunPlan> = cases.iter().map(|c| c.plan.clone()).collect();
    let groups = [
        (0..read_cases).collect(),
        (read_cases..cases.len()).collect(),
    ];
    let results = run_rounds(
        &plans,
        &groups,
        args.rounds,
        "measuring",
        &crate::command::progress::Bars::new(),
        |_| Ok(()),
    )?;
    for r in results.iter().flatten() {
        doc.runs.push(r.clone());
    }

    let per_op = per_op_ns;
    let lookup = |row: usize, side: Side, with_checkpoint: bool| -> Option<(f64, f64)> {
        let row = if side != Side::Db && row < 3 { 0 } else { row };
        let idx = cases.iter().position(|c| c.row == row && c.side == side)?;
        let v: Vec<f64> = results[idx]
            .iter()
            .map(|r| per_op(r, with_checkpoint))
            .collect();
        let s = summarize(&v);
        (!v.is_empty()).then(|| {
            (
                s.median,
                if s.median > 0.0 {
                    (s.max - s.min) / s.median * 100.0
                } else {
                    0.0
                },
            )
        })
    };
    let mut table = Table::new([
        "case",
        "db µs/op",
        "dir µs/op",
        "dir/db",
        "tree µs/op",
        "tree/db",
        "spread",
    ]);
    let mut rows_json = Vec::new();
    for (row, info) in ROWS.iter().enumerate() {
        let with_checkpoint = info.label.contains("checkpoint");
        let data_row = if row > 3 { row - 1 } else { row };
        let (d, f, t) = (
            lookup(data_row, Side::Db, with_checkpoint),
            lookup(data_row, Side::Dir, true),
            lookup(data_row, Side::Tree, true),
        );
        let (Some((d, sd)), Some((f, sf)), Some((t, st))) = (d, f, t) else {
            continue;
        };
        let worst = sd.max(sf).max(st);
        table.row([
            info.label.to_string(),
            format!("{:.2}", d / 1e3),
            format!("{:.2}", f / 1e3),
            format!("{:.2}", f / d),
            format!("{:.2}", t / 1e3),
            format!("{:.2}", t / d),
            format!("±{:.0}%", worst / 2.0),
        ]);
        rows_json.push(json!({
            "case": info.label, "detail": info.claim,
            "db_ns_per_op": d, "dir_ns_per_op": f, "tree_ns_per_op": t,
            "dir_over_db": f / d, "tree_over_db": t / d, "spread_pct": worst,
        }));
    }
    table.row([
        "disk space (MB, du)".to_string(),
        format!("{:.1}", space[0] as f64 / 1e6),
        format!("{:.1}", space[1] as f64 / 1e6),
        format!("{:.2}", space[1] as f64 / space[0] as f64),
        format!("{:.1}", space[2] as f64 / 1e6),
        format!("{:.2}", space[2] as f64 / space[0] as f64),
        String::new(),
    ]);
    println!(
        "blobbench quick: {} blobs, {} +/- {} bytes, {} rounds (median of rounds; spread = half the range across rounds)",
        spec.count, args.size, args.variance, args.rounds
    );
    print!("{}", table.render());
    println!(
        "ratio = file time / database time (or file space / database space): above 1.00 the database is faster or smaller."
    );
    for info in ROWS.iter().skip(3) {
        println!("{}: {}", info.label, info.claim);
    }
    println!(
        "content: {}; SQLite {}",
        human_bytes(spec.total_bytes()),
        rusqlite::version()
    );
    doc.tables = crate::result::Tables::Quick(crate::result::quick::QuickTables(json!({
        "quick": rows_json,
        "space_bytes": { "db": space[0], "dir": space[1], "tree": space[2] },
        "dataset": spec,
        "rounds": args.rounds,
    })));
    crate::command::output::write_result_with_report(
        &mut doc,
        &args.json,
        args.report
            .as_deref()
            .filter(|p| *p != std::path::Path::new("none")),
    )?;
    println!("result written to {}", args.json.display());
    Ok(())
}
