//! What a report shows for each kind of result: its charts, its tables, a
//! few summary lines, the environment and the command that produced it.
//! Everything here is read from the result JSON, never from live state, so a
//! result from another machine or an older blobbench renders the same way.

pub use super::figures::{http_systems, strip_round, text};
use std::path::Path;

mod advise;
mod aging;
mod compare;
mod fasterthanfs;
mod http;
mod internal_external;
mod lob;
mod mixed_run;
mod quick;
mod replicate;
mod scaling;
mod sweep;

use serde_json::Value;

use super::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};
use crate::measure::stats::summarize;
use crate::result::{ResultDocument, RunResult, Tables};
use crate::units::{human_bytes, human_duration_ns};

/// A table as text cells, rendered to HTML, Markdown or CSV.
#[derive(Debug, Clone)]
pub struct DataTable {
    /// File-name friendly (CSV file names), unique within the section.
    pub name: String,
    /// The caption shown above the table.
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells, as many as headers.
    pub rows: Vec<Vec<String>>,
}

impl DataTable {
    fn new(name: &str, title: impl Into<String>, headers: &[&str]) -> Self {
        DataTable {
            name: name.into(),
            title: title.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }
}

/// A chart with its caption.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File-name friendly, unique within the section.
    pub name: String,
    /// What is drawn.
    pub chart: Chart,
    /// How to read it, shown under the chart.
    pub caption: String,
}

/// One result file, ready to render.
#[derive(Debug, Clone)]
pub struct Section {
    /// Unique within the report; used for anchors and PNG file names.
    pub id: String,
    /// The kind of result in words, e.g. "quick: SQLite vs files on this machine".
    pub title: String,
    /// The result file it was drawn from.
    pub source: String,
    /// The command that produced the result, as a shell would need it typed.
    pub command_line: String,
    /// When the command started.
    pub started_at: String,
    /// A few lines that answer the result's question.
    pub summary: Vec<String>,
    /// Charts, in the order shown.
    pub figures: Vec<Figure>,
    /// Tables, in the order shown.
    pub tables: Vec<DataTable>,
    /// (what, value) lines about the machine, system and stores.
    pub environment: Vec<(String, String)>,
    /// SQLite's compile options, shown folded.
    pub compile_options: Vec<String>,
}

/// A number as the result's JSON holds it: NaN and infinities are written
/// as null, and a null is drawn as missing.
pub fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// The number at `key` of a JSON object (for kinds still read as JSON).
pub fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// The array at `key` of a JSON object, empty when absent.
pub fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The command line as a shell would need it typed.
pub fn command_line(argv: &[String]) -> String {
    let argv: Vec<String> = argv
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let a = if i == 0 {
                // The binary's path on the machine that ran it means nothing here.
                Path::new(a)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_else(|| a.to_string())
            } else {
                a.to_string()
            };
            shell_quote(&a)
        })
        .collect();
    argv.join(" ")
}

fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c) || !c.is_ascii());
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// Sections for result documents, each with the file it came from.
pub fn sections(docs: &[(ResultDocument, String)]) -> Vec<Section> {
    let mut out: Vec<Section> = docs
        .iter()
        .enumerate()
        .map(|(i, (doc, source))| section(doc, source, i))
        .collect();
    out.extend(fasterthanfs::machines(docs));
    out
}

/// Builds the section for one result document.
pub fn section(typed: &ResultDocument, source: &str, index: usize) -> Section {
    let command = typed.command.clone();
    let mut s = Section {
        id: format!(
            "{}-{}",
            index + 1,
            command.replace(' ', "-").replace("suite-", "")
        ),
        title: title_of(&command),
        source: source.to_string(),
        command_line: command_line(&typed.argv),
        started_at: typed.started_at.clone(),
        summary: Vec::new(),
        figures: Vec::new(),
        tables: Vec::new(),
        environment: environment(typed),
        compile_options: typed.environment.sqlite_compile_options.clone(),
    };
    match &typed.tables {
        Tables::Quick(t) => quick::quick(t, typed, &mut s),
        Tables::FasterThanFs(t) => fasterthanfs::fasterthanfs(t, typed, &mut s),
        Tables::InternalExternal(t) => internal_external::internal_external(t, &mut s),
        Tables::Lob(t) => lob::lob(t, &mut s),
        Tables::Http(t) => {
            http::what_ran(t, &mut s);
            http::http(&http_systems(&typed.tables), &mut s);
            http::intervals(t, &mut s)
        }
        Tables::Load(t) => {
            s.summary
                .extend(crate::report::terminal::load::merge_lines(t));
            http::http(&http_systems(&typed.tables), &mut s)
        }
        Tables::Sweep(t) => sweep::sweep(t, &mut s),
        Tables::Advise(t) => advise::advise(t, &mut s),
        Tables::Compare(t) => compare::compare(t, &mut s),
        Tables::MixedRun(t) => mixed_run::mixed_run(t, &mut s),
        Tables::Scaling(t) => scaling::scaling(t, &mut s),
        Tables::Replicate(t) => replicate::replicate(t, &mut s),
        Tables::Aging(t) => aging::aging(t, &mut s),
        Tables::Run(_) | Tables::Init(_) | Tables::Other(_) => {}
    }
    if !matches!(
        command.as_str(),
        "suite internal-external"
            | "sweep"
            | "suite lob"
            | "suite aging"
            | "suite http"
            | "load"
            | "advise"
            | "compare"
    ) {
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

fn title_of(command: &str) -> String {
    match command {
        "quick" => "quick: SQLite vs files on this machine".into(),
        "suite fasterthanfs" => "suite fasterthanfs: \"35% faster than the filesystem\"".into(),
        "suite internal-external" => "suite internal-external: internal vs external blobs".into(),
        "suite lob" => "suite lob: large objects in every store".into(),
        "suite http" => "suite http: serving blobs over HTTP".into(),
        "load" => "load: an HTTP server under load".into(),
        "sweep" => "sweep: SQLite settings ranked".into(),
        "run" => "run: measured operations on a target".into(),
        "advise" => "advise: where to keep your blobs".into(),
        "compare" => "compare: what changed beyond the noise".into(),
        "run concurrent" => "run: threads mixing operations on one dataset".into(),
        "suite concurrency" => "suite concurrency: many threads at once".into(),
        "suite replicate" => "suite replicate: SQLite replicated to S3 by Litestream".into(),
        "suite aging" => "suite aging: blobs in SQLite and in files as they age".into(),
        other => other.to_string(),
    }
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

pub(super) fn ns(v: f64) -> String {
    human_duration_ns(v)
}

pub(super) fn ratio_text(v: Option<f64>) -> String {
    v.map(|r| format!("{r:.2}")).unwrap_or_else(|| "-".into())
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
        let series: Vec<Series> = names
            .iter()
            .enumerate()
            .filter_map(|(i, (name, rs))| {
                let points = percentile_points(rs);
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
                "Latency of each {op} by percentile (HDR histogram; median over rounds). A curve that turns up \
                 steeply at the right shows rare slow operations (spikes)."
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
/// round's curve, the median over its rounds.
fn percentile_points(rs: &[&RunResult]) -> Vec<Point> {
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
            (!vals.is_empty()).then(|| Point::new(p, summarize(&vals).median))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted_for_a_shell() {
        let argv: Vec<String> = [
            "/x/target/release/blobbench",
            "sweep",
            "--exclude",
            "a b",
            "it's",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            command_line(&argv),
            "blobbench sweep --exclude 'a b' 'it'\\''s'"
        );
    }

    #[test]
    fn round_suffixes_are_stripped() {
        assert_eq!(strip_round("read sql (round 12)"), "read sql");
        assert_eq!(strip_round("read (sql)"), "read (sql)");
    }
}
