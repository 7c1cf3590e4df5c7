//! `blobbench quick`: about a minute, SQLite vs files on this machine.
//!
//! One dataset (20k blobs of 10k +/- 2k by default) in a database, a flat
//! folder and a tree. Cases run once per round and rounds alternate their
//! order (A B C, C B A, ...) so drift on a shared machine does not favour one
//! side; each case warms its own files right before it is timed.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cli::QuickArgs;
use crate::dataset::spec_from_options;
use crate::error::{Error, Result};
use crate::measure::environment::Environment;
use crate::measure::stats::summarize;
use crate::report::result::{self, ResultDocument};
use crate::report::table::Table;
use crate::store::{FileLayout, ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::units::human_bytes;
use crate::workload::run::SessionOptionsRecord;
use crate::workload::{CacheMode, KeyOrder, Operation, RunPlan, RunResult, execute};

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

fn plan(
    name: String,
    target: Target,
    operation: Operation,
    count: u64,
    session: SessionOptionsRecord,
    seed: u64,
) -> RunPlan {
    RunPlan {
        name,
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

fn session(
    read_path: ReadPath,
    per_op: bool,
    style: WriteStyle,
    fsync: bool,
) -> SessionOptionsRecord {
    SessionOptionsRecord {
        read_path,
        per_op_transaction: per_op,
        write_style: style,
        fsync,
    }
}

fn sqlite(path: &Path, f: impl FnOnce(&mut SqliteSettings)) -> Target {
    let mut settings = SqliteSettings {
        cache_size: Some(1000),
        ..Default::default()
    };
    f(&mut settings);
    Target::Sqlite {
        path: path.to_path_buf(),
        settings,
    }
}

pub fn run(args: &QuickArgs) -> Result<()> {
    if args.rounds == 0 {
        return Err(Error::usage("--rounds 0: at least one round is needed"));
    }
    result::check_can_write(&args.json)?;
    let spec = spec_from_options(args.count, args.size, args.variance, "uniform", 1.0, 1)?;
    let temp;
    let (base, cleanup): (PathBuf, bool) = match &args.dir {
        Some(d) => {
            if !d.exists() {
                std::fs::create_dir_all(d).map_err(|e| Error::io("cannot create folder", d, e))?;
            } else if !d.is_dir() {
                return Err(Error::usage(format!(
                    "--dir {}: is a file, not a folder",
                    d.display()
                )));
            }
            (d.clone(), false)
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("blobbench-quick-")
                .tempdir()
                .map_err(|e| {
                    Error::io(
                        "cannot create a temporary folder in",
                        &std::env::temp_dir(),
                        e,
                    )
                })?;
            (temp.path().to_path_buf(), !args.keep)
        }
    };
    let outcome = run_in(args, &spec, &base);
    if cleanup {
        for name in [
            "quick.db",
            "quick.db-wal",
            "quick.db-shm",
            "quick.dir",
            "quick.tree",
        ] {
            let p = base.join(name);
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    } else {
        eprintln!("datasets kept in {}", base.display());
    }
    outcome
}

fn run_in(args: &QuickArgs, spec: &crate::dataset::DatasetSpec, base: &Path) -> Result<()> {
    let db = base.join("quick.db");
    let dir = base.join("quick.dir");
    let tree = base.join("quick.tree");
    eprintln!(
        "blobbench quick: {} blobs of {} +/- {} bytes in {} ({})",
        spec.count,
        args.size,
        args.variance,
        base.display(),
        crate::measure::environment::filesystem_of(base)
            .map(|f| f.fs_type)
            .unwrap_or_else(|| "?".into())
    );
    let (store, _) = crate::command::init::create_dataset(&sqlite(&db, |_| {}), spec, true)?;
    drop(store);
    crate::command::export::export(&db, &dir, FileLayout::Flat, true)?;
    crate::command::export::export(&db, &tree, FileLayout::Tree, true)?;
    let space = [
        crate::store::open(
            &Target::Sqlite {
                path: db.clone(),
                settings: Default::default(),
            },
            crate::store::Access::ReadOnly,
        )?
        .space_used()?,
        crate::store::open(
            &Target::Dir { path: dir.clone() },
            crate::store::Access::ReadOnly,
        )?
        .space_used()?,
        crate::store::open(
            &Target::Tree { path: tree.clone() },
            crate::store::Access::ReadOnly,
        )?
        .space_used()?,
    ];

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
            "read sql".into(),
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
            "read blob-api".into(),
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
            "read blob-api mmap".into(),
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
            "update wal normal".into(),
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
            "update wal full per-write txn".into(),
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
    let total_ops: u64 = cases.iter().map(|c| c.plan.count.unwrap_or(0)).sum::<u64>() * args.rounds;
    let pb = crate::command::progress::bar(total_ops, "measuring");
    let mut results: Vec<Vec<RunResult>> = (0..cases.len()).map(|_| Vec::new()).collect();
    let mut doc = ResultDocument::new("quick", Environment::capture(Some(base)));
    for round in 0..args.rounds {
        // Reads first (updates change the database's journal mode), each
        // group in alternating order.
        let (reads, writes): (Vec<usize>, Vec<usize>) =
            (0..cases.len()).partition(|&i| i < read_cases);
        for mut group in [reads, writes] {
            if round % 2 == 1 {
                group.reverse();
            }
            for i in group {
                let sub = crate::command::progress::bar(0, "");
                sub.set_draw_target(indicatif::ProgressDrawTarget::hidden());
                let mut r = execute(&cases[i].plan, Some(&sub))?;
                pb.inc(cases[i].plan.count.unwrap_or(0));
                pb.set_message(format!(
                    "round {}/{}: {}",
                    round + 1,
                    args.rounds,
                    cases[i].plan.name
                ));
                r.name = format!("{} (round {})", r.name, round + 1);
                results[i].push(r.clone());
                doc.runs.push(r);
            }
        }
    }
    pb.finish_and_clear();

    // Per-op time of a case in one round; `with_checkpoint` false drops the
    // WAL checkpoint from the total, as the fasterthanfs page's chart 4 does.
    let per_op = |r: &RunResult, with_checkpoint: bool| -> f64 {
        let rep = &r.repetitions[0];
        let total = if with_checkpoint {
            rep.ops_ns + rep.commit_ns + rep.checkpoint_ns
        } else {
            rep.ops_ns + rep.commit_ns
        };
        total as f64 / rep.ops as f64
    };
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
    doc.tables = json!({
        "quick": rows_json,
        "space_bytes": { "db": space[0], "dir": space[1], "tree": space[2] },
        "dataset": spec,
        "rounds": args.rounds,
    });
    result::write(&mut doc, &args.json)?;
    println!("result written to {}", args.json.display());
    Ok(())
}
