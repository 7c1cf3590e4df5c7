//! What a report shows for each kind of result: its charts, its tables, a
//! few summary lines, the environment and the command that produced it.
//! Everything here is read from the result JSON, never from live state, so a
//! result from another machine or an older blobbench renders the same way.

use std::path::Path;

mod advise;
mod compare;
mod fasterthanfs;
mod http;
mod internal_external;
mod lob;
mod quick;
mod sweep;

use serde_json::Value;

use super::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};
use crate::measure::stats::summarize;
use crate::result::load::LevelResult;
use crate::result::{ResultDocument, Tables};
use crate::units::{human_bytes, human_duration_ns};

/// A table as text cells, rendered to HTML, Markdown or CSV.
#[derive(Debug, Clone)]
pub struct DataTable {
    pub name: String,
    pub title: String,
    pub headers: Vec<String>,
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

#[derive(Debug, Clone)]
pub struct Figure {
    /// File-name friendly, unique within the section.
    pub name: String,
    pub chart: Chart,
    pub caption: String,
}

/// One result file, ready to render.
#[derive(Debug, Clone)]
pub struct Section {
    /// Unique within the report; used for anchors and PNG file names.
    pub id: String,
    pub title: String,
    pub source: String,
    pub command_line: String,
    pub started_at: String,
    pub summary: Vec<String>,
    pub figures: Vec<Figure>,
    pub tables: Vec<DataTable>,
    pub environment: Vec<(String, String)>,
    pub compile_options: Vec<String>,
}

pub fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

pub fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The command line as a shell would need it typed.
pub fn command_line(doc: &Value) -> String {
    let argv: Vec<String> = arr(doc, "argv")
        .iter()
        .filter_map(Value::as_str)
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

/// The HTTP systems of a result, each with its levels: the http suite's
/// list, or load's single server as "server" (none for other kinds).
pub fn http_systems(tables: &Tables) -> Vec<(&str, &[LevelResult])> {
    match tables {
        Tables::Http(t) => t
            .http
            .iter()
            .map(|s| (s.system.as_str(), s.levels.as_slice()))
            .collect(),
        Tables::Load(t) => vec![("server", t.levels.as_slice())],
        _ => Vec::new(),
    }
}

/// Sections for result documents, each with the file it came from.
pub fn sections(docs: &[(ResultDocument, String)]) -> Vec<Section> {
    docs.iter()
        .enumerate()
        .map(|(i, (doc, source))| section(doc, source, i))
        .collect()
}

/// Builds the section for one result document.
pub fn section(typed: &ResultDocument, source: &str, index: usize) -> Section {
    // Bridge while the per-kind views move to the typed result: they read
    // the document's JSON form.
    let value = serde_json::to_value(typed).unwrap_or(Value::Null);
    let doc = &value;
    let command = text(doc, "command").to_string();
    let mut s = Section {
        id: format!(
            "{}-{}",
            index + 1,
            command.replace(' ', "-").replace("suite-", "")
        ),
        title: title_of(&command),
        source: source.to_string(),
        command_line: command_line(doc),
        started_at: text(doc, "started_at").to_string(),
        summary: Vec::new(),
        figures: Vec::new(),
        tables: Vec::new(),
        environment: environment(doc),
        compile_options: arr(&doc["environment"], "sqlite_compile_options")
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
    };
    let tables = &doc["tables"];
    match command.as_str() {
        "quick" => quick::quick(tables, doc, &mut s),
        "suite fasterthanfs" => fasterthanfs::fasterthanfs(tables, doc, &mut s),
        "suite internal-external" => internal_external::internal_external(tables, &mut s),
        "suite lob" => {
            if let Tables::Lob(t) = &typed.tables {
                lob::lob(t, &mut s)
            }
        }
        "suite http" | "load" => http::http(&http_systems(&typed.tables), &mut s),
        "sweep" => {
            if let Tables::Sweep(t) = &typed.tables {
                sweep::sweep(t, &mut s)
            }
        }
        "advise" => {
            if let Tables::Advise(t) = &typed.tables {
                advise::advise(t, &mut s);
            }
        }
        "compare" => {
            if let Tables::Compare(t) = &typed.tables {
                compare::compare(t, &mut s)
            }
        }
        _ => {}
    }
    if !matches!(
        command.as_str(),
        "suite internal-external"
            | "sweep"
            | "suite lob"
            | "suite http"
            | "load"
            | "advise"
            | "compare"
    ) {
        latency_figures(doc, &mut s);
        runs_table(doc, &mut s);
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
        other => other.to_string(),
    }
}

fn environment(doc: &Value) -> Vec<(String, String)> {
    let e = &doc["environment"];
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
            text(e, "cpu_model"),
            num(e, "logical_cpus").unwrap_or(0.0),
            human_bytes(num(e, "memory_bytes").unwrap_or(0.0) as u64),
            text(e, "hostname")
        ),
    );
    put(
        "system",
        format!("{}, kernel {}", text(e, "os"), text(e, "kernel")),
    );
    if let Some(fs) = e.get("filesystem").filter(|f| f.is_object()) {
        put(
            "filesystem",
            format!(
                "{} on {} mounted at {} ({}), data in {}",
                text(fs, "fs_type"),
                text(fs, "device"),
                text(fs, "mount_point"),
                text(fs, "mount_options"),
                text(fs, "path")
            ),
        );
    }
    put("SQLite", text(e, "sqlite_version").to_string());
    put(
        "blobbench",
        format!(
            "{} ({} build)",
            text(e, "blobbench_version"),
            text(e, "build")
        ),
    );
    put(
        "ran",
        format!(
            "{} .. {}",
            text(doc, "started_at"),
            text(doc, "finished_at")
        ),
    );
    // Each distinct store's settings as it reported them (servers: version,
    // buffers, durability settings).
    let mut seen: Vec<String> = Vec::new();
    let stores = arr(doc, "runs")
        .iter()
        .map(|r| &r["store"])
        .chain(arr(&doc["tables"], "stores").iter().map(|s| &s["store"]));
    for store in stores {
        let Some(settings) = store.get("settings").and_then(Value::as_object) else {
            continue;
        };
        let kind = text(store, "kind");
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
        let line = line.join(", ");
        let key = format!("{kind}: {line}");
        if !seen.contains(&key) {
            seen.push(key);
            out.push((format!("store {kind}"), line));
        }
    }
    out
}

pub(super) fn ns(v: f64) -> String {
    human_duration_ns(v)
}

pub(super) fn ratio_text(v: Option<f64>) -> String {
    v.map(|r| format!("{r:.2}")).unwrap_or_else(|| "-".into())
}

/// A run's name without its " (round N)" suffix: the case it measures.
pub fn strip_round(name: &str) -> &str {
    match name.rfind(" (round ") {
        Some(i) if name.ends_with(')') => &name[..i],
        _ => name,
    }
}

/// Percentile plots per operation kind: one curve per run name, each
/// percentile the median over that name's rounds.
fn latency_figures(doc: &Value, s: &mut Section) {
    let runs = arr(doc, "runs");
    // Operation -> run name -> that name's runs (one per round).
    type ByName<'a> = Vec<(String, Vec<&'a Value>)>;
    let mut by_op: Vec<(String, ByName)> = Vec::new();
    for r in runs {
        let op = text(&r["plan"], "operation").to_string();
        let name = strip_round(text(r, "name")).to_string();
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
                let first = arr(&rs[0]["latency"], "percentiles");
                // Beyond 1 - 1/count every percentile is the slowest operation.
                let count = num(&rs[0]["latency"], "count").unwrap_or(0.0);
                let last_distinct = 100.0 * (1.0 - 1.0 / count.max(1.0));
                let points: Vec<Point> = first
                    .iter()
                    .enumerate()
                    .filter_map(|(k, pair)| {
                        let p = pair.get(0)?.as_f64()?;
                        if p >= 100.0 || (p > 0.0 && p > last_distinct) {
                            return None;
                        }
                        let vals: Vec<f64> = rs
                            .iter()
                            .filter_map(|r| {
                                arr(&r["latency"], "percentiles").get(k)?.get(1)?.as_f64()
                            })
                            .collect();
                        (!vals.is_empty()).then(|| Point::new(p, summarize(&vals).median))
                    })
                    .collect();
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
        let op = if op.is_empty() {
            "operation".into()
        } else {
            op
        };
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

fn runs_table(doc: &Value, s: &mut Section) {
    let runs = arr(doc, "runs");
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
    for r in runs {
        let sum = &r["summary"]["time_per_op_ns"];
        let lat = &r["latency"];
        let g = |v: &Value, k: &str| num(v, k).map(ns).unwrap_or_else(|| "-".into());
        t.rows.push(vec![
            text(r, "name").into(),
            r["target"].as_str().unwrap_or("").into(),
            g(sum, "median"),
            g(sum, "min"),
            g(sum, "max"),
            num(&r["summary"]["ops_per_sec"], "median")
                .map(|v| format!("{v:.0}"))
                .unwrap_or_default(),
            g(lat, "p50_ns"),
            g(lat, "p99_ns"),
            g(lat, "p999_ns"),
            g(lat, "max_ns"),
        ]);
    }
    s.tables.push(t);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted_for_a_shell() {
        let doc = serde_json::json!({"argv": ["/x/target/release/blobbench", "sweep", "--exclude", "a b", "it's"]});
        assert_eq!(
            command_line(&doc),
            "blobbench sweep --exclude 'a b' 'it'\\''s'"
        );
    }

    #[test]
    fn round_suffixes_are_stripped() {
        assert_eq!(strip_round("read sql (round 12)"), "read sql");
        assert_eq!(strip_round("read (sql)"), "read (sql)");
    }
}
