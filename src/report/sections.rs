//! One result document as a report's section: the parts every result has
//! (title, command line, environment, the figures every run has) and what
//! its kind draws, through `report::kinds`.

use serde_json::Value;

use super::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};
use super::view::{
    DataTable, Figure, Section, command_line, estimate_point, finite, interval_caption, ns,
    strip_round,
};
use crate::measure::estimate::{Estimate, median_estimate};
use crate::result::{ResultDocument, RunResult, Tables};
use crate::units::human_bytes;

/// Sections for result documents, each with the file it came from.
pub fn sections(docs: &[(ResultDocument, String)]) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for (doc, source) in docs {
        out.push(section(doc, source, out.len()));
        // A reproduce result's experiments follow its ledger, each drawn
        // as its own result would be.
        if let Tables::Reproduce(t) = &doc.tables {
            for e in &t.experiments {
                if let Some(r) = &e.result {
                    let from = format!("{source}: {}", e.experiment);
                    out.push(section(r, &from, out.len()));
                }
            }
        }
    }
    out.extend(super::view::fasterthanfs::machines(docs));
    out.extend(super::view::reproduce::machines(docs));
    out
}

/// Builds the section for one result document: what its kind draws
/// (`report::kinds`), the figures every run has where the kind asks for
/// them, and a line for each run that failed operations or stopped early.
pub fn section(typed: &ResultDocument, source: &str, index: usize) -> Section {
    let command = typed.command.clone();
    let kind = typed.kind().map(super::kinds::of);
    let mut s = Section {
        id: format!(
            "{}-{}",
            index + 1,
            command.replace(' ', "-").replace("suite-", "")
        ),
        title: kind.map_or_else(|| command.clone(), |k| k.title.to_string()),
        source: source.to_string(),
        command_line: command_line(&typed.argv),
        started_at: typed.started_at.clone(),
        summary: Vec::new(),
        figures: Vec::new(),
        tables: Vec::new(),
        environment: environment(typed),
        compile_options: typed.environment.sqlite_compile_options.clone(),
    };
    if let Some(k) = kind {
        (k.html)(typed, &mut s);
    }
    if kind.is_none_or(|k| k.run_figures) {
        latency_figures(&typed.runs, &mut s);
        runs_table(&typed.runs, &mut s);
    }
    for r in &typed.runs {
        if let Some(line) = r.failures_line() {
            s.summary.push(format!(
                "{}: {line} (counted, the run went on; its figures are of the successful operations).",
                r.name
            ));
        }
        if let Some(why) = &r.stopped_early {
            s.summary.push(format!("{}: stopped early: {why}.", r.name));
        }
    }
    if s.figures.is_empty() && s.tables.is_empty() {
        s.summary
            .push("this result holds no figures this version of blobbench can draw".into());
    }
    s
}

fn environment(doc: &ResultDocument) -> Vec<(String, String)> {
    let e = &doc.environment;
    let mut out = Vec::new();
    let mut put = |k: &str, v: String| {
        if !v.is_empty() {
            out.push((k.to_string(), v));
        }
    };
    put(
        "machine",
        format!(
            "{} ({} logical CPUs, {} RAM), host {}",
            e.cpu_model,
            e.logical_cpus,
            human_bytes(e.memory_bytes),
            e.hostname
        ),
    );
    put("system", format!("{}, kernel {}", e.os, e.kernel));
    if let Some(fs) = &e.filesystem {
        put(
            "filesystem",
            format!(
                "{} on {} mounted at {} ({}), data in {}",
                fs.fs_type, fs.device, fs.mount_point, fs.mount_options, fs.path
            ),
        );
    }
    put("SQLite", e.sqlite_version.clone());
    put(
        "blobbench",
        format!("{} ({} build)", e.blobbench_version, e.build),
    );
    put("ran", format!("{} .. {}", doc.started_at, doc.finished_at));
    // Each distinct store's settings as it reported them (servers: version,
    // buffers, durability settings).
    let mut seen: Vec<String> = Vec::new();
    let run_stores = doc
        .runs
        .iter()
        .map(|r| (r.store.kind.clone(), r.store.settings.clone()));
    for (kind, settings) in run_stores.chain(table_stores(&doc.tables)) {
        let line = settings_line(&settings);
        let key = format!("{kind}: {line}");
        if !seen.contains(&key) {
            seen.push(key);
            out.push((format!("store {kind}"), line));
        }
    }
    out
}

/// The stores a kind's tables list besides its runs (`suite lob` lists
/// each system's store), as (kind, settings).
fn table_stores(tables: &Tables) -> Vec<(String, serde_json::Map<String, Value>)> {
    let Tables::Lob(t) = tables else {
        return Vec::new();
    };
    t.stores
        .iter()
        .filter_map(|entry| entry.store.as_ref())
        .map(|store| (store.kind.clone(), store.settings.clone()))
        .collect()
}

/// A store's settings as `key=value, ...` (page counts left out: they say
/// how big the data is, not how the store is set up).
fn settings_line(settings: &serde_json::Map<String, Value>) -> String {
    let line: Vec<String> = settings
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "page_count" | "freelist_count"))
        .map(|(k, v)| {
            format!(
                "{k}={}",
                v.as_str().map(String::from).unwrap_or(v.to_string())
            )
        })
        .collect();
    line.join(", ")
}

/// Percentile plots per operation kind: one curve per run name, each
/// percentile the median over that name's rounds.
fn latency_figures(runs: &[RunResult], s: &mut Section) {
    // Operation -> run name -> that name's runs (one per round).
    type ByName<'a> = Vec<(String, Vec<&'a RunResult>)>;
    let mut by_op: Vec<(String, ByName)> = Vec::new();
    for r in runs {
        let op = operation_name(r).to_string();
        let name = strip_round(&r.name).to_string();
        let op_entry = match by_op.iter_mut().position(|(o, _)| *o == op) {
            Some(i) => &mut by_op[i].1,
            None => {
                by_op.push((op.clone(), Vec::new()));
                &mut by_op.last_mut().expect("just pushed").1
            }
        };
        match op_entry.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(r),
            None => op_entry.push((name, vec![r])),
        }
    }
    for (op, names) in by_op {
        let mut drawn = Vec::new();
        let series: Vec<Series> = names
            .iter()
            .enumerate()
            .filter_map(|(i, (name, rs))| {
                let points = percentile_points(rs, &mut drawn);
                (!points.is_empty()).then(|| Series {
                    name: name.clone(),
                    points,
                    dashed: false,
                    color: i,
                })
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        s.figures.push(Figure {
            name: format!("latency-{op}"),
            caption: format!(
                "Latency of each {op} by percentile (HDR histogram), each percentile taken per \
                 round. {} A curve that turns up steeply at the right shows rare slow operations \
                 (spikes).",
                interval_caption(&drawn)
            ),
            chart: Chart::Line(LineChart {
                title: format!("{op} latency by percentile"),
                x: AxisSpec::new("percentile", Scale::Nines, Unit::Percentile),
                y: AxisSpec::new(format!("time per {op}"), Scale::Log, Unit::Nanos),
                series,
            }),
        });
    }
}

/// The operation a run timed, as results name it.
fn operation_name(r: &RunResult) -> &'static str {
    match r.plan.operation {
        crate::result::run::Operation::Read => "read",
        crate::result::run::Operation::Update => "update",
    }
}

/// One run name's percentile curve: at each percentile of the first
/// round's curve, the median over its rounds with its interval (each kept
/// in `drawn` too, for the caption).
fn percentile_points(rs: &[&RunResult], drawn: &mut Vec<Estimate>) -> Vec<Point> {
    // Beyond 1 - 1/count every percentile is the slowest operation.
    let count = rs[0].latency.count as f64;
    let last_distinct = 100.0 * (1.0 - 1.0 / count.max(1.0));
    rs[0]
        .latency
        .percentiles
        .iter()
        .enumerate()
        .filter_map(|(k, &(p, _))| {
            let p = finite(p)?;
            if p >= 100.0 || (p > 0.0 && p > last_distinct) {
                return None;
            }
            let vals: Vec<f64> = rs
                .iter()
                .filter_map(|r| r.latency.percentiles.get(k).map(|&(_, v)| v as f64))
                .collect();
            (!vals.is_empty()).then(|| {
                let e = median_estimate(&vals);
                drawn.push(e);
                estimate_point(p, &e)
            })
        })
        .collect()
}

fn runs_table(runs: &[RunResult], s: &mut Section) {
    if runs.is_empty() {
        return;
    }
    let mut t = DataTable::new(
        "runs",
        "Runs",
        &[
            "run",
            "target",
            "time/op median",
            "min",
            "max",
            "ops/s",
            "p50",
            "p99",
            "p99.9",
            "max op",
        ],
    );
    let time = |v: f64| finite(v).map(ns).unwrap_or_else(|| "-".into());
    let nanos = |v: u64| ns(v as f64);
    for r in runs {
        let sum = &r.summary.time_per_op_ns;
        let lat = &r.latency;
        t.rows.push(vec![
            r.name.clone(),
            r.target.clone(),
            time(sum.median),
            time(sum.min),
            time(sum.max),
            finite(r.summary.ops_per_sec.median)
                .map(|v| format!("{v:.0}"))
                .unwrap_or_default(),
            nanos(lat.p50_ns),
            nanos(lat.p99_ns),
            nanos(lat.p999_ns),
            nanos(lat.max_ns),
        ]);
    }
    s.tables.push(t);
}
