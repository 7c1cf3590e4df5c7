//! The terminal report of a `run` result: the summary line, settings, the
//! statistics table, latency, and kvtest's closing lines.

use std::fmt::Write as _;

use crate::measure::stats::Summary;
use crate::report::table::Table;
use crate::result::run::{CacheMode, KeyOrder, Operation, ReadPath, RunResult};
use crate::units::{human_bytes, human_duration_ns};

fn us(ns: f64) -> String {
    format!("{:.3}", ns / 1000.0)
}

/// Prints the human report of one run.
pub fn print_run(r: &RunResult, stats: bool) {
    print!("{}", render_run(r, stats));
}

/// The human report of one run (with each repetition's counters when
/// `stats`).
pub fn render_run(r: &RunResult, stats: bool) -> String {
    let op = if r.plan.operation == Operation::Update {
        "write"
    } else {
        "read"
    };
    let mut out = String::new();
    header(&mut out, r, op);
    for line in injection_lines(std::slice::from_ref(r)) {
        let _ = writeln!(out, "{line}");
    }
    settings(&mut out, r);
    out.push_str(&summary_table(r, op).render());
    latency(&mut out, r, op);
    let _ = writeln!(out, "disk space: {}", human_bytes(r.space_bytes));
    for line in failure_lines(r) {
        let _ = writeln!(out, "{line}");
    }
    if stats {
        repetitions(&mut out, r);
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    // kvtest's closing lines, so scripts that parse kvtest output parse ours.
    let _ = writeln!(
        out,
        "Microseconds per BLOB {op}: {:.3}",
        r.summary.time_per_op_ns.median / 1000.0
    );
    let _ = writeln!(
        out,
        "Content {op} rate: {:.1} MB/s",
        r.summary.mb_per_sec.median
    );
    out
}

/// What failed, class by class with the first message, how long the
/// failures took, and an early stop; nothing when all went well.
pub fn failure_lines(r: &RunResult) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(line) = r.failures_line() {
        lines.push(format!(
            "failed: {line}; counted, the run went on (the figures above are of the successful operations)"
        ));
        for c in &r.failures.classes {
            lines.push(format!(
                "  {} x {}: first: {}",
                c.count,
                c.class.label(),
                c.example
            ));
        }
        if let (Some(f), Some(all)) = (&r.failed_latency, &r.latency_with_failures) {
            let d = |ns: u64| human_duration_ns(ns as f64);
            lines.push(format!(
                "  failures took p50 {} max {}; with failures counted in, p50 {} p99 {} p99.9 {}",
                d(f.p50_ns),
                d(f.max_ns),
                d(all.p50_ns),
                d(all.p99_ns),
                d(all.p999_ns)
            ));
        }
    }
    if let Some(why) = &r.stopped_early {
        lines.push(format!("stopped early: {why}"));
    }
    lines
}

/// One line per case of `runs` that had a known extra cost injected into
/// its operations (a testing aid; each case once, however many rounds).
pub fn injection_lines(runs: &[RunResult]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for r in runs {
        if let Some(i) = r.plan.session.inject {
            let line = format!(
                "injected {i} per operation into {}: a testing aid (calibration), the times include it{}",
                r.plan.name,
                delivered(r)
            );
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    lines
}

/// "; delivered x1.101 (...)": what the injecting session spun over the
/// operations' own time in the run's repetitions, as the factor or the
/// extra per operation it names. Empty for a result without the record.
fn delivered(r: &RunResult) -> String {
    let (own, extra, ops) = r
        .repetitions
        .iter()
        .filter_map(|rep| rep.injected.map(|i| (i.own_ns, i.extra_ns, rep.ops)))
        .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    if own == 0 || ops == 0 {
        return String::new();
    }
    if r.plan.session.inject_factor().is_some() {
        format!(
            "; delivered x{:.3} (the spins over the operations' own time, {} repetition(s))",
            1.0 + extra as f64 / own as f64,
            r.repetitions.len()
        )
    } else {
        format!(
            "; delivered {} per operation on average",
            crate::units::human_duration_ns((extra / ops) as f64)
        )
    }
}

/// The transactions a suite's database runs used, by operation: a line
/// for its header ("transactions: reads: one transaction (6 runs); ..."),
/// none when no run reached a database. It can flip a files-against-SQLite
/// answer, so every suite names it.
pub fn transaction_lines(runs: &[RunResult]) -> Vec<String> {
    let mut seen: Vec<(&str, String, usize)> = Vec::new();
    let databases = ["sqlite", "sqlite-ext", "postgres", "mysql"];
    for r in runs
        .iter()
        .filter(|r| databases.contains(&r.store.kind.as_str()))
    {
        let op = match r.plan.operation {
            Operation::Read => "reads",
            Operation::Update => "writes",
        };
        let words = r.plan.session.transaction_words();
        match seen.iter_mut().find(|(o, w, _)| *o == op && *w == words) {
            Some(entry) => entry.2 += 1,
            None => seen.push((op, words, 1)),
        }
    }
    if seen.is_empty() {
        return Vec::new();
    }
    let parts: Vec<String> = seen
        .iter()
        .map(|(op, words, n)| format!("{op}: {words} ({n} run{})", if *n == 1 { "" } else { "s" }))
        .collect();
    vec![format!(
        "transactions of the database runs (a repetition's ops; files have none): {}",
        parts.join("; ")
    )]
}

/// What was run: target, operations, order, read path, transactions, cache.
fn header(out: &mut String, r: &RunResult, op: &str) {
    let p = &r.plan;
    let path = if r.plan.target.is_files() {
        "file".to_string()
    } else if r.store.kind == "s3" {
        "S3 GET".to_string()
    } else if r.store.kind == "memory" {
        "memory".to_string()
    } else if p.session.read_path == ReadPath::BlobApi {
        "blob API".to_string()
    } else {
        "SQL".to_string()
    };
    let _ = writeln!(
        out,
        "{}: {} {op}s per repetition, {} order, via {path}, {}, {} cache ({}), {} measured + {} warm-up",
        r.target,
        r.repetitions.first().map(|x| x.ops).unwrap_or(0),
        match p.order {
            KeyOrder::Asc => "ascending",
            KeyOrder::Desc => "descending",
            KeyOrder::Random => "random",
            KeyOrder::KvtestDraws => "random (kvtest's draws)",
        },
        p.session.transaction_words(),
        match p.cache {
            CacheMode::Warm => "warm",
            CacheMode::Cold | CacheMode::ColdFiles => "cold",
        },
        r.repetitions
            .first()
            .map(|x| x.cache.method.as_str())
            .unwrap_or("-"),
        p.repeat,
        p.warmup
    );
}

/// The settings read back from the store and how writes reach the disk.
fn settings(out: &mut String, r: &RunResult) {
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
        let _ = writeln!(out, "settings: {}", s.join(" "));
    }
    if let Some(w) = &r.write_method {
        let _ = writeln!(out, "writes: {w}");
    }
}

/// Time per operation, rate, MB/s and whole-run time over the repetitions.
fn summary_table(r: &RunResult, op: &str) -> Table {
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
    t
}

/// Latency percentiles, and where the last repetition's time went.
fn latency(out: &mut String, r: &RunResult, op: &str) {
    let l = &r.latency;
    let _ = writeln!(
        out,
        "latency per {op}: p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  spikes >10x median: {}",
        human_duration_ns(l.p50_ns as f64),
        human_duration_ns(l.p90_ns as f64),
        human_duration_ns(l.p99_ns as f64),
        human_duration_ns(l.p999_ns as f64),
        human_duration_ns(l.max_ns as f64),
        l.spikes_over_10x_median
    );
    if let Some(rep) = r.repetitions.last() {
        let _ = writeln!(
            out,
            "last repetition: ops {}; commit {}; checkpoint {}{}; CPU user {} system {}",
            human_duration_ns(rep.ops_ns as f64),
            human_duration_ns(rep.commit_ns as f64),
            human_duration_ns(rep.checkpoint_ns as f64),
            if r.plan.exclude_checkpoint {
                " (excluded from the total)"
            } else {
                ""
            },
            human_duration_ns(rep.cpu_user_ns as f64),
            human_duration_ns(rep.cpu_system_ns as f64),
        );
    }
    if let Some(s) = &r.startup {
        let _ = writeln!(
            out,
            "start-up before the first timed {op}: {} from {} (cache preparation of {} left out)",
            human_duration_ns(s.ns as f64),
            s.from,
            human_duration_ns(s.cache_ns as f64),
        );
    }
}

/// Each repetition's counters (`--stats`).
fn repetitions(out: &mut String, r: &RunResult) {
    for (i, rep) in r.repetitions.iter().enumerate() {
        let _ = writeln!(
            out,
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
            let _ = writeln!(out, "  SQLite: {}", e.join(", "));
        }
    }
}
