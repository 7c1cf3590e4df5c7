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

use std::path::Path;

use serde::Serialize;
use serde_json::json;

use crate::cli::FasterThanFsArgs;
use crate::dataset::spec_from_options;
use crate::error::{Error, Result};
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::store::{ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::units::human_bytes;
use crate::workload::{Operation, RunPlan};

use super::common::{self, Ratio, ThreeLayouts, WorkDir, per_op_ns, plan, ratio, session, sqlite};

/// What the page says about a row, and how a measured ratio (file / db) is
/// judged against it.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Claim {
    /// The database is at least `ratio` times faster (or smaller).
    AtLeast { ratio: f64, text: &'static str },
    /// The database is slower than the files.
    DbSlower { text: &'static str },
    /// Measured for completeness; the page says nothing about it.
    NotClaimed { text: &'static str },
}

impl Claim {
    fn short(&self) -> String {
        match self {
            Claim::AtLeast { ratio, .. } => format!(">= {ratio:.2}"),
            Claim::DbSlower { .. } => "< 1.00".into(),
            Claim::NotClaimed { .. } => "-".into(),
        }
    }

    fn text(&self) -> &'static str {
        match self {
            Claim::AtLeast { text, .. } | Claim::DbSlower { text } | Claim::NotClaimed { text } => {
                text
            }
        }
    }

    /// Judges the less favourable of the dir and tree ratios: the page's
    /// claims hold for both layouts.
    pub fn verdict(&self, dir: f64, tree: f64) -> &'static str {
        match *self {
            Claim::AtLeast { ratio, .. } => {
                let worst = dir.min(tree);
                if worst >= ratio {
                    "confirmed"
                } else if worst >= 1.0 {
                    "db ahead, by less"
                } else {
                    "not confirmed"
                }
            }
            Claim::DbSlower { .. } => {
                if dir.max(tree) < 1.0 {
                    "confirmed"
                } else {
                    "not confirmed"
                }
            }
            Claim::NotClaimed { .. } => "-",
        }
    }
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

const HEADLINE_READ: f64 = 1.35;
/// The page's own figures: 1,228,800,000 bytes (du -k of test1.dir) over
/// 1,024,512,000 (test1.db).
const SPACE_RATIO: f64 = 1_228_800_000.0 / 1_024_512_000.0;

pub fn run(args: &FasterThanFsArgs) -> Result<()> {
    if args.rounds == 0 {
        return Err(Error::usage("--rounds 0: at least one round is needed"));
    }
    crate::command::output::check_outputs(&args.json, args.report.as_deref())?;
    let spec = spec_from_options(args.count, args.size, args.variance, "uniform", 1.0, 1)?;
    let updates = args.updates.unwrap_or((spec.count / 10).max(1));
    let durable = args.durable_updates.unwrap_or((spec.count / 100).max(1));
    for (name, n) in [("--updates", updates), ("--durable-updates", durable)] {
        if n == 0 || n > spec.count {
            return Err(Error::usage(format!(
                "{name} {n}: must be between 1 and --count ({})",
                spec.count
            )));
        }
    }
    let work = WorkDir::new(args.dir.as_deref(), args.keep, "blobbench-fasterthanfs-")?;
    let outcome = run_in(args, &spec, &work, updates, durable);
    work.remove(&ThreeLayouts::names("fasterthanfs"));
    work.report_kept(&crate::command::progress::Bars::new());
    outcome
}

fn run_in(
    args: &FasterThanFsArgs,
    spec: &crate::dataset::DatasetSpec,
    work: &WorkDir,
    updates: u64,
    durable: u64,
) -> Result<()> {
    let layouts = ThreeLayouts::create(
        work,
        "fasterthanfs",
        spec,
        "blobbench suite fasterthanfs",
        &crate::command::progress::Bars::new(),
    )?;
    let (db, space) = (layouts.db.clone(), layouts.space);
    let dir_t = Target::Dir { path: layouts.dir };
    let tree_t = Target::Tree { path: layouts.tree };

    let n = spec.count;
    // The whole database memory-mapped, with room to spare, as the page's chart 3.
    let mmap = std::fs::metadata(&db)
        .map(|m| m.len() * 2)
        .unwrap_or(1 << 31);
    let mut cases: Vec<RunPlan> = Vec::new();
    let read = |path, per_op| session(path, per_op, WriteStyle::Truncate, false);
    let mmapped = |s: &mut SqliteSettings| s.mmap_size = Some(mmap);
    let db_read = |name: &str, path, per_op, map: bool| {
        plan(
            name,
            sqlite(&db, |s| {
                if map {
                    mmapped(s)
                }
            }),
            Operation::Read,
            n,
            read(path, per_op),
            11,
        )
    };
    let sql = push(&mut cases, db_read("read sql", ReadPath::Sql, false, false));
    let blob = push(
        &mut cases,
        db_read("read blob-api", ReadPath::BlobApi, false, false),
    );
    let mapped = push(
        &mut cases,
        db_read("read blob-api mmap", ReadPath::BlobApi, false, true),
    );
    let sql_mt = push(
        &mut cases,
        db_read("read sql multitrans", ReadPath::Sql, true, false),
    );
    let blob_mt = push(
        &mut cases,
        db_read("read blob-api multitrans", ReadPath::BlobApi, true, false),
    );
    let mapped_mt = push(
        &mut cases,
        db_read(
            "read blob-api mmap multitrans",
            ReadPath::BlobApi,
            true,
            true,
        ),
    );
    // Files are read the same way whatever the database's read path.
    let file_read = |t: &Target| {
        plan(
            format!("read {}", t.kind_name()),
            t.clone(),
            Operation::Read,
            n,
            read(ReadPath::Sql, false),
            11,
        )
    };
    let reads = FileCase {
        dir: push(&mut cases, file_read(&dir_t)),
        tree: push(&mut cases, file_read(&tree_t)),
    };
    let read_group: Vec<usize> = (0..cases.len()).collect();

    let db_write = |name: &str, journal: &str, sync: &str, per_op: bool, count: u64, seed| {
        let (journal, sync) = (journal.to_string(), sync.to_string());
        plan(
            name,
            sqlite(&db, move |s| {
                s.journal_mode = Some(journal);
                s.synchronous = Some(sync);
            }),
            Operation::Update,
            count,
            session(ReadPath::Sql, per_op, WriteStyle::Truncate, false),
            seed,
        )
    };
    let first_write = cases.len();
    let wal_normal = push(
        &mut cases,
        db_write("update wal normal", "wal", "normal", false, updates, 12),
    );
    let off_off = push(
        &mut cases,
        db_write(
            "update journal off sync off",
            "off",
            "off",
            false,
            updates,
            12,
        ),
    );
    let wal_normal_mt = push(
        &mut cases,
        db_write(
            "update wal normal multitrans",
            "wal",
            "normal",
            true,
            updates,
            12,
        ),
    );
    let wal_full = push(
        &mut cases,
        db_write("update wal full", "wal", "full", false, updates, 12),
    );
    let wal_full_mt = push(
        &mut cases,
        db_write(
            "update wal full multitrans",
            "wal",
            "full",
            true,
            durable,
            13,
        ),
    );
    let file_write = |cases: &mut Vec<RunPlan>, style: WriteStyle, fsync: bool| {
        let count = if fsync { durable } else { updates };
        let seed = if fsync { 13 } else { 12 };
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
            dir: one(&dir_t),
            tree: one(&tree_t),
        }
    };
    let truncate = file_write(&mut cases, WriteStyle::Truncate, false);
    let in_place = file_write(&mut cases, WriteStyle::InPlace, false);
    let rename = file_write(&mut cases, WriteStyle::TempRename, false);
    let truncate_sync = file_write(&mut cases, WriteStyle::Truncate, true);
    let in_place_sync = file_write(&mut cases, WriteStyle::InPlace, true);
    let rename_sync = file_write(&mut cases, WriteStyle::TempRename, true);
    let write_group: Vec<usize> = (first_write..cases.len()).collect();

    let multitrans_claim = Claim::DbSlower {
        text: "--multitrans: 'much slower, and uncompetitive with direct disk I/O'",
    };
    let rows = [
        Row {
            label: "chart 1: read, SQL statement",
            db: sql,
            files: reads,
            with_checkpoint: false,
            claim: Claim::AtLeast {
                ratio: 1.0,
                text: "chart 1: 'SQLite still out-performs direct reads'",
            },
        },
        Row {
            label: "chart 2: read, blob API",
            db: blob,
            files: reads,
            with_checkpoint: false,
            claim: Claim::AtLeast {
                ratio: HEADLINE_READ,
                text: "headline: reads '35% faster' (kvtest --blob-api)",
            },
        },
        Row {
            label: "chart 3: read, blob API + mmap",
            db: mapped,
            files: reads,
            with_checkpoint: false,
            claim: Claim::AtLeast {
                ratio: 2.0,
                text: "chart 3: 'twice as fast' (Mac, Android), 10x (Windows)",
            },
        },
        Row {
            label: "read, SQL, txn per read",
            db: sql_mt,
            files: reads,
            with_checkpoint: false,
            claim: multitrans_claim,
        },
        Row {
            label: "read, blob API, txn per read",
            db: blob_mt,
            files: reads,
            with_checkpoint: false,
            claim: multitrans_claim,
        },
        Row {
            label: "read, blob API + mmap, txn per read",
            db: mapped_mt,
            files: reads,
            with_checkpoint: false,
            claim: multitrans_claim,
        },
        Row {
            label: "chart 4: update WAL+NORMAL vs fopen wb",
            db: wal_normal,
            files: truncate,
            with_checkpoint: false,
            claim: Claim::AtLeast {
                ratio: HEADLINE_READ,
                text: "headline: writes '35% faster'; 1 txn, timer stopped before the checkpoint",
            },
        },
        Row {
            label: "  same, checkpoint included",
            db: wal_normal,
            files: truncate,
            with_checkpoint: true,
            claim: Claim::NotClaimed {
                text: "the page stops its timer before the WAL checkpoint",
            },
        },
        Row {
            label: "  WAL+NORMAL vs overwrite in place",
            db: wal_normal,
            files: in_place,
            with_checkpoint: false,
            claim: Claim::NotClaimed {
                text: "another file write style (no fsync)",
            },
        },
        Row {
            label: "  WAL+NORMAL vs temp + rename",
            db: wal_normal,
            files: rename,
            with_checkpoint: false,
            claim: Claim::NotClaimed {
                text: "another file write style (no fsync)",
            },
        },
        Row {
            label: "chart 5: journal OFF, sync OFF vs fopen wb",
            db: off_off,
            files: truncate,
            with_checkpoint: false,
            claim: Claim::AtLeast {
                ratio: 1.0,
                text: "chart 5: SQLite faster on an equal (unsafe) footing",
            },
        },
        Row {
            label: "update WAL+NORMAL, txn per write",
            db: wal_normal_mt,
            files: truncate,
            with_checkpoint: false,
            claim: multitrans_claim,
        },
        Row {
            label: "fair: WAL+FULL 1 txn vs fopen wb + fsync",
            db: wal_full,
            files: truncate_sync,
            with_checkpoint: true,
            claim: Claim::AtLeast {
                ratio: 10.0,
                text: "fsync on each file: 'about 10 times or more slower than writes to SQLite'",
            },
        },
        Row {
            label: "  WAL+FULL 1 txn vs in place + fsync",
            db: wal_full,
            files: in_place_sync,
            with_checkpoint: true,
            claim: Claim::NotClaimed {
                text: "another file write style (fsync)",
            },
        },
        Row {
            label: "  WAL+FULL 1 txn vs temp + fsync + rename",
            db: wal_full,
            files: rename_sync,
            with_checkpoint: true,
            claim: Claim::NotClaimed {
                text: "another file write style (fsync, then fsync of the folder)",
            },
        },
        Row {
            label: "durable: WAL+FULL txn per write vs temp+fsync+rename",
            db: wal_full_mt,
            files: rename_sync,
            with_checkpoint: true,
            claim: Claim::NotClaimed {
                text: "not on the page: every write durable on both sides",
            },
        },
    ];

    let mut doc = ResultDocument::new(
        "suite fasterthanfs",
        crate::store::capture_environment(Some(&work.path)),
        crate::result::Tables::Other(serde_json::Value::Null),
    );
    let results = common::run_rounds(
        &cases,
        &[read_group, write_group],
        args.rounds,
        "measuring",
        &crate::command::progress::Bars::new(),
        |group| {
            // Reads in the next round meet a rollback-journal database, as on
            // the page, whatever journal mode the last write case left.
            if group == 1 {
                set_journal_mode(&db, "delete")?;
            }
            Ok(())
        },
    )?;
    for r in results.iter().flatten() {
        doc.runs.push(r.clone());
    }

    let times = |case: usize, with_checkpoint: bool| -> Vec<f64> {
        results[case]
            .iter()
            .map(|r| per_op_ns(r, with_checkpoint))
            .collect()
    };
    let mut table = Table::new([
        "case",
        "claim",
        "db µs/op",
        "dir µs/op",
        "dir/db",
        "tree µs/op",
        "tree/db",
        "spread",
        "verdict",
    ]);
    let mut rows_json = Vec::new();
    for row in &rows {
        let db_t = times(row.db, row.with_checkpoint);
        let dir_r: Ratio = ratio(&times(row.files.dir, true), &db_t);
        let tree_r: Ratio = ratio(&times(row.files.tree, true), &db_t);
        let spread = [dir_r, tree_r]
            .iter()
            .map(|r| (r.max - r.min) / r.median / 2.0 * 100.0)
            .fold(0.0, f64::max);
        let verdict = row.claim.verdict(dir_r.median, tree_r.median);
        table.row([
            row.label.to_string(),
            row.claim.short(),
            format!("{:.2}", dir_r.denominator_ns / 1e3),
            format!("{:.2}", dir_r.numerator_ns / 1e3),
            format!("{:.2}", dir_r.median),
            format!("{:.2}", tree_r.numerator_ns / 1e3),
            format!("{:.2}", tree_r.median),
            format!("±{spread:.0}%"),
            verdict.to_string(),
        ]);
        rows_json.push(json!({
            "case": row.label,
            "db_case": cases[row.db].name,
            "dir_case": cases[row.files.dir].name,
            "tree_case": cases[row.files.tree].name,
            "checkpoint_included": row.with_checkpoint,
            "claim": row.claim,
            "dir_over_db": dir_r,
            "tree_over_db": tree_r,
            "verdict": verdict,
        }));
    }
    let space_claim = Claim::AtLeast {
        ratio: SPACE_RATIO,
        text: "'about 20% less disk space' (1,228,800,000 vs 1,024,512,000 bytes)",
    };
    let (dir_s, tree_s) = (
        space[1] as f64 / space[0] as f64,
        space[2] as f64 / space[0] as f64,
    );
    let space_verdict = space_claim.verdict(dir_s, tree_s);
    table.row([
        "disk space, MB (du)".to_string(),
        space_claim.short(),
        format!("{:.1}", space[0] as f64 / 1e6),
        format!("{:.1}", space[1] as f64 / 1e6),
        format!("{dir_s:.2}"),
        format!("{:.1}", space[2] as f64 / 1e6),
        format!("{tree_s:.2}"),
        String::new(),
        space_verdict.to_string(),
    ]);

    println!(
        "blobbench suite fasterthanfs: {} blobs, {} +/- {} bytes ({}), {} updates ({} with fsync), {} rounds",
        spec.count,
        args.size,
        args.variance,
        human_bytes(spec.total_bytes()),
        updates,
        durable,
        args.rounds
    );
    print!("{}", table.render());
    println!(
        "ratio = file time / database time (or space): above 1.00 the database is faster or smaller. \
Median of rounds; spread = half the range of the ratio across rounds."
    );
    println!(
        "verdict judges the less favourable of dir and tree: confirmed / db ahead, by less (than claimed) / not confirmed."
    );
    println!("claims:");
    let mut seen = Vec::new();
    for claim in rows.iter().map(|r| r.claim).chain([space_claim]) {
        if !seen.contains(&claim.text()) && !matches!(claim, Claim::NotClaimed { .. }) {
            seen.push(claim.text());
            println!("  {:>8}  {}", claim.short(), claim.text());
        }
    }
    println!(
        "SQLite {}; reads: all {} blobs, random order, warm cache, cache_size=1000 pages; \
mmap_size={}.",
        rusqlite::version(),
        spec.count,
        human_bytes(mmap)
    );
    rows_json.push(json!({
        "case": "disk space",
        "claim": space_claim,
        "space_bytes": { "db": space[0], "dir": space[1], "tree": space[2] },
        "dir_over_db": dir_s,
        "tree_over_db": tree_s,
        "verdict": space_verdict,
    }));
    doc.tables = crate::result::Tables::FasterThanFs(
        crate::result::fasterthanfs::FasterThanFsTables(json!({
            "fasterthanfs": rows_json,
            "dataset": spec,
            "updates": updates,
            "durable_updates": durable,
            "rounds": args.rounds,
            "mmap_size": mmap,
        })),
    );
    crate::command::output::write_result_with_report(&mut doc, &args.json, args.report.as_deref())?;
    println!("result written to {}", args.json.display());
    Ok(())
}

fn push(cases: &mut Vec<RunPlan>, plan: RunPlan) -> usize {
    cases.push(plan);
    cases.len() - 1
}

/// Untimed: leaves the database in `mode` for the next case.
fn set_journal_mode(db: &Path, mode: &str) -> Result<()> {
    let conn = rusqlite::Connection::open(db).map_err(|e| Error::sqlite(db, e))?;
    conn.query_row(&format!("PRAGMA journal_mode={mode}"), [], |_| Ok(()))
        .map_err(|e| Error::sqlite(db, e))?;
    Ok(())
}
