//! `blobbench run TARGET`: kvtest's run, measured properly.

use crate::cli::{RunArgs, WriteStyleArg};
use crate::error::{Error, Result};
use crate::measure::stats::Summary;
use crate::progress::Progress;
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::store::{Access, ReadPath, WriteStyle};
use crate::target::{JOURNAL_MODES, Target, one_of, parse_cache_size};
use crate::units::{human_bytes, human_duration_ns};
use crate::workload::run::SessionOptionsRecord;
use crate::workload::{CacheMode, KeyOrder, Operation, RunPlan, RunResult, execute};

pub fn plan_from_args(args: &RunArgs) -> Result<(RunPlan, Vec<String>)> {
    let mut target = Target::parse(&args.target)?;
    let mut notes = Vec::new();
    let operation = if args.update {
        Operation::Update
    } else {
        Operation::Read
    };
    match target.sqlite_settings_mut() {
        Some(s) => {
            s.cache_size = Some(parse_cache_size(&args.cache_size)?);
            if args.mmap > 0 || s.mmap_size.is_none() {
                s.mmap_size = Some(args.mmap);
            }
            if args.nosync {
                s.synchronous = Some("off".into());
            }
            if let Some(j) = &args.jmode {
                s.journal_mode = Some(one_of("--jmode", j, JOURNAL_MODES)?);
            }
        }
        None => {
            for (given, name) in [
                (args.blob_api, "--blob-api"),
                (args.mmap > 0, "--mmap"),
                (args.nosync, "--nosync"),
                (args.jmode.is_some(), "--jmode"),
                (args.integrity_check, "--integrity-check"),
            ] {
                if given {
                    notes.push(format!("{name} ignored: it applies to database targets"));
                }
            }
        }
    }
    if args.fsync && matches!(target, Target::Sqlite { .. }) {
        notes.push(
            "--fsync ignored: SQLite durability is set by synchronous (--nosync or ?synchronous=)"
                .into(),
        );
    }
    if args.repeat == 0 {
        return Err(Error::usage(
            "--repeat 0: at least one measured repetition is needed, e.g. --repeat 3",
        ));
    }
    let order = if args.random {
        KeyOrder::Random
    } else if args.random_draws {
        KeyOrder::KvtestDraws
    } else if args.desc {
        KeyOrder::Desc
    } else {
        KeyOrder::Asc
    };
    if args.count == Some(0) {
        return Err(Error::usage("--count must be positive"));
    }
    let plan = RunPlan {
        name: format!(
            "{} {}",
            if args.update { "update" } else { "read" },
            target.kind_name()
        ),
        target,
        operation,
        order,
        count: args.count,
        start: args.start,
        max_id: args.max_id,
        session: SessionOptionsRecord {
            read_path: if args.blob_api {
                ReadPath::BlobApi
            } else {
                ReadPath::Sql
            },
            per_op_transaction: args.multitrans,
            write_style: match args.write_style {
                WriteStyleArg::Truncate => WriteStyle::Truncate,
                WriteStyleArg::InPlace => WriteStyle::InPlace,
                WriteStyleArg::Rename => WriteStyle::TempRename,
            },
            fsync: args.fsync,
        },
        repeat: args.repeat as u32,
        warmup: args.warmup as u32,
        cache: if args.cold {
            CacheMode::Cold
        } else {
            CacheMode::Warm
        },
        verify: args.verify,
        exclude_checkpoint: args.nocheckpoint,
        order_seed: args.order_seed,
    };
    Ok((plan, notes))
}

fn us(ns: f64) -> String {
    format!("{:.3}", ns / 1000.0)
}

/// The human report of one run.
pub fn print_run(r: &RunResult, stats: bool) {
    let op = if r.plan.operation == Operation::Update {
        "write"
    } else {
        "read"
    };
    let p = &r.plan;
    let path = if r.plan.target.is_files() {
        "file".to_string()
    } else if p.session.read_path == ReadPath::BlobApi {
        "blob API".to_string()
    } else {
        "SQL".to_string()
    };
    println!(
        "{}: {} {op}s per repetition, {} order, via {path}, {}, {} cache ({}), {} measured + {} warm-up",
        r.target,
        r.repetitions.first().map(|x| x.ops).unwrap_or(0),
        match p.order {
            KeyOrder::Asc => "ascending",
            KeyOrder::Desc => "descending",
            KeyOrder::Random => "random",
            KeyOrder::KvtestDraws => "random (kvtest's draws)",
        },
        if p.session.per_op_transaction {
            "one transaction per op"
        } else {
            "one transaction"
        },
        match p.cache {
            CacheMode::Warm => "warm",
            CacheMode::Cold => "cold",
        },
        r.repetitions
            .first()
            .map(|x| x.cache.method.as_str())
            .unwrap_or("-"),
        p.repeat,
        p.warmup
    );
    if !r.store.settings.is_empty() {
        let s: Vec<String> = r
            .store
            .settings
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k}={}",
                    v.as_str().map(str::to_string).unwrap_or(v.to_string())
                )
            })
            .collect();
        println!("settings: {}", s.join(" "));
    }
    if let Some(w) = &r.write_method {
        println!("writes: {w}");
    }
    let s = &r.summary;
    let mut t = Table::new(["", "median", "min", "max", "stddev"]);
    let row = |t: &mut Table, label: String, x: &Summary, cell: &dyn Fn(f64) -> String| {
        t.row([
            label,
            cell(x.median),
            cell(x.min),
            cell(x.max),
            cell(x.stddev),
        ]);
    };
    row(&mut t, format!("µs per {op}"), &s.time_per_op_ns, &us);
    row(&mut t, format!("{op}s/s"), &s.ops_per_sec, &|v| {
        format!("{v:.0}")
    });
    row(&mut t, "MB/s".into(), &s.mb_per_sec, &|v| format!("{v:.1}"));
    row(
        &mut t,
        "whole run incl. open/close (s)".into(),
        &s.whole_run_ns,
        &|v| format!("{:.4}", v / 1e9),
    );
    print!("{}", t.render());
    let l = &r.latency;
    println!(
        "latency per {op}: p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  spikes >10x median: {}",
        human_duration_ns(l.p50_ns as f64),
        human_duration_ns(l.p90_ns as f64),
        human_duration_ns(l.p99_ns as f64),
        human_duration_ns(l.p999_ns as f64),
        human_duration_ns(l.max_ns as f64),
        l.spikes_over_10x_median
    );
    if let Some(rep) = r.repetitions.last() {
        println!(
            "last repetition: CPU user {} system {}; commit {}; checkpoint {}{}",
            human_duration_ns(rep.cpu_user_ns as f64),
            human_duration_ns(rep.cpu_system_ns as f64),
            human_duration_ns(rep.commit_ns as f64),
            human_duration_ns(rep.checkpoint_ns as f64),
            if p.exclude_checkpoint {
                " (excluded from the total)"
            } else {
                ""
            }
        );
    }
    println!("disk space: {}", human_bytes(r.space_bytes));
    if stats {
        for (i, rep) in r.repetitions.iter().enumerate() {
            println!(
                "repetition {}: {} ops in {}, open {}, close {}; read() calls {}, write() calls {}, bytes from storage {}, to storage {}",
                i + 1,
                rep.ops,
                human_duration_ns(rep.elapsed_ns as f64),
                human_duration_ns(rep.open_ns as f64),
                human_duration_ns(rep.close_ns as f64),
                rep.io.syscr,
                rep.io.syscw,
                rep.io.read_bytes,
                rep.io.write_bytes
            );
            if !rep.engine.is_empty() {
                let e: Vec<String> = rep.engine.iter().map(|(k, v)| format!("{k} {v}")).collect();
                println!("  SQLite: {}", e.join(", "));
            }
        }
    }
    for n in &r.notes {
        println!("note: {n}");
    }
    // kvtest's closing lines, so scripts that parse kvtest output parse ours.
    let cap = if op == "write" { "write" } else { "read" };
    println!(
        "Microseconds per BLOB {cap}: {:.3}",
        s.time_per_op_ns.median / 1000.0
    );
    println!("Content {cap} rate: {:.1} MB/s", s.mb_per_sec.median);
}

pub fn run(args: &RunArgs) -> Result<()> {
    let (plan, notes) = plan_from_args(args)?;
    if let Some(j) = &args.json {
        crate::command::output::check_result_target(j)?;
    }
    let bars = super::progress::Bars::new();
    bars.start(&plan.name, 0);
    let mut r = execute(&plan, &bars)?;
    bars.finish();
    r.notes.extend(notes);
    let mut integrity = None;
    if args.integrity_check
        && let Target::Sqlite { path, .. } | Target::SqliteExt { path, .. } = &plan.target
    {
        let conn = crate::store::SqliteStore::open(path, &Default::default(), Access::ReadOnly)?;
        let mut stmt = conn
            .connection()
            .prepare("PRAGMA integrity_check")
            .map_err(|e| Error::sqlite(path, e))?;
        let lines: Vec<String> = stmt
            .query_map([], |row| row.get::<_, String>(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| Error::sqlite(path, e))?;
        integrity = Some(lines.join("; "));
    }
    print_run(&r, args.stats);
    if let Some(i) = &integrity {
        println!("integrity-check: {i}");
    }
    if let Some(path) = &args.json {
        let mut doc = ResultDocument::new(
            "run",
            crate::store::capture_environment(
                (!plan.target.is_server()).then(|| plan.target.path()),
            ),
            crate::result::Tables::Other(serde_json::Value::Null),
        );
        doc.tables = crate::result::Tables::Run(crate::result::run::RunTables(
            serde_json::json!({ "integrity_check": integrity }),
        ));
        doc.runs.push(r);
        crate::command::output::write_result(&mut doc, path)?;
    }
    if integrity.as_deref().is_some_and(|i| i != "ok") {
        return Err(Error::Verify(format!(
            "integrity_check reported: {}",
            integrity.unwrap_or_default()
        )));
    }
    Ok(())
}
