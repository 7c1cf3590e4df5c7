//! What a report shows for each kind of result: its charts, its tables, a
//! few summary lines, the environment and the command that produced it.
//! Everything here is read from the result JSON, never from live state, so a
//! result from another machine or an older blobbench renders the same way.

use std::path::Path;

use serde_json::Value;

use super::chart::{
    AxisSpec, Bar, BarChart, BarGroup, Chart, Heatmap, LineChart, Point, Scale, Series, Unit,
};
use crate::error::{Error, Result};
use crate::measure::stats::summarize;
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

/// Reads a result file, refusing anything that is not a blobbench result.
pub fn load(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("cannot read", path, e))?;
    let value: Value = serde_json::from_str(&text).map_err(|_| {
        Error::usage(format!(
            "{}: not JSON; give result files written by --json",
            path.display()
        ))
    })?;
    if value.get("schema").and_then(Value::as_str) != Some(super::result::SCHEMA) {
        return Err(Error::usage(format!(
            "{}: not a blobbench result (no \"schema\": \"blobbench-result\"); give files written by --json",
            path.display()
        )));
    }
    let version = value
        .get("schema_version")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if version > u64::from(super::result::SCHEMA_VERSION) {
        return Err(Error::usage(format!(
            "{}: result schema version {version} is newer than this blobbench understands ({}); update blobbench",
            path.display(),
            super::result::SCHEMA_VERSION
        )));
    }
    Ok(value)
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

/// The HTTP systems of a result: the http suite's list, or load's single
/// server as a one-system list.
pub fn http_systems(doc: &Value) -> Vec<Value> {
    let tables = &doc["tables"];
    if text(doc, "command") == "load" {
        vec![serde_json::json!({"system": "server", "levels": tables["levels"]})]
    } else {
        arr(tables, "http").to_vec()
    }
}

/// Sections for result documents, each with the file it came from.
pub fn sections(docs: &[(Value, String)]) -> Vec<Section> {
    docs.iter()
        .enumerate()
        .map(|(i, (doc, source))| section(doc, source, i))
        .collect()
}

/// Builds the section for one result document.
pub fn section(doc: &Value, source: &str, index: usize) -> Section {
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
        "quick" => quick(tables, doc, &mut s),
        "suite fasterthanfs" => fasterthanfs(tables, doc, &mut s),
        "suite internal-external" => internal_external(tables, &mut s),
        "suite lob" => lob(tables, &mut s),
        "suite http" | "load" => http(&http_systems(doc), &mut s),
        "sweep" => sweep(tables, &mut s),
        "advise" => super::advise_view::advise(tables, &mut s),
        "compare" => compare(tables, &mut s),
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

fn ns(v: f64) -> String {
    human_duration_ns(v)
}

fn ratio_text(v: Option<f64>) -> String {
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

fn quick(tables: &Value, _doc: &Value, s: &mut Section) {
    let rows = arr(tables, "quick");
    let groups: Vec<BarGroup> = rows
        .iter()
        .map(|r| BarGroup {
            label: text(r, "case").trim().to_string(),
            bars: vec![
                num(r, "dir_over_db").map(|v| Bar {
                    value: v,
                    spread: None,
                }),
                num(r, "tree_over_db").map(|v| Bar {
                    value: v,
                    spread: None,
                }),
            ],
            marker: None,
        })
        .collect();
    s.figures.push(Figure {
        name: "ratios".into(),
        caption: "File time / database time for each case (median of rounds). Right of the line at 1x the \
                  database is faster; left of it the files are."
            .into(),
        chart: Chart::Bars(BarChart {
            title: "files vs SQLite: file time / database time".into(),
            value_axis: AxisSpec::new(
                "file time / database time (log scale)",
                Scale::Log,
                Unit::Ratio,
            ),
            series_names: vec!["flat folder".into(), "tree".into()],
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    });
    let mut t = DataTable::new(
        "quick",
        "SQLite vs files",
        &[
            "case",
            "detail",
            "db per op",
            "dir per op",
            "tree per op",
            "dir/db",
            "tree/db",
            "spread",
        ],
    );
    for r in rows {
        t.rows.push(vec![
            text(r, "case").trim().into(),
            text(r, "detail").into(),
            num(r, "db_ns_per_op").map(ns).unwrap_or_default(),
            num(r, "dir_ns_per_op").map(ns).unwrap_or_default(),
            num(r, "tree_ns_per_op").map(ns).unwrap_or_default(),
            ratio_text(num(r, "dir_over_db")),
            ratio_text(num(r, "tree_over_db")),
            num(r, "spread_pct")
                .map(|p| format!("+/-{p:.0}%"))
                .unwrap_or_default(),
        ]);
    }
    s.tables.push(t);
    space_table(&tables["space_bytes"], s);
    if let Some(d) = tables.get("dataset") {
        s.summary.push(dataset_line(d));
    }
}

fn dataset_line(d: &Value) -> String {
    let variance = num(&d["distribution"], "variance").unwrap_or(0.0);
    format!(
        "dataset: {} blobs of {} bytes{} (seed {})",
        num(d, "count").unwrap_or(0.0),
        num(d, "size").unwrap_or(0.0),
        if variance > 0.0 {
            format!(" +/- {variance}")
        } else {
            String::new()
        },
        num(d, "seed").unwrap_or(0.0)
    )
}

fn space_table(space: &Value, s: &mut Section) {
    let Some(obj) = space.as_object() else { return };
    let mut t = DataTable::new("space", "Disk space (du)", &["layout", "bytes", "size"]);
    for (k, v) in obj {
        let b = v.as_u64().unwrap_or(0);
        t.rows.push(vec![k.clone(), b.to_string(), human_bytes(b)]);
    }
    s.tables.push(t);
}

fn fasterthanfs(tables: &Value, _doc: &Value, s: &mut Section) {
    let rows = arr(tables, "fasterthanfs");
    let ratio_bar = |v: &Value| {
        num(v, "median").map(|m| Bar {
            value: m,
            spread: num(v, "min").zip(num(v, "max")),
        })
    };
    let groups: Vec<BarGroup> = rows
        .iter()
        .filter(|r| r["dir_over_db"].is_object())
        .map(|r| BarGroup {
            label: text(r, "case").trim().to_string(),
            bars: vec![ratio_bar(&r["dir_over_db"]), ratio_bar(&r["tree_over_db"])],
            marker: (text(&r["claim"], "kind") == "at-least")
                .then(|| num(&r["claim"], "ratio"))
                .flatten(),
        })
        .collect();
    s.figures.push(Figure {
        name: "ratios".into(),
        caption: "File time / database time per case, median of rounds with min..max whiskers; the dashed \
                  mark is the ratio the fasterthanfs page claims. Right of 1x the database is faster."
            .into(),
        chart: Chart::Bars(BarChart {
            title: "35% faster than the filesystem? file time / database time".into(),
            value_axis: AxisSpec::new(
                "file time / database time (log scale)",
                Scale::Log,
                Unit::Ratio,
            ),
            series_names: vec!["flat folder".into(), "tree".into()],
            groups,
            reference: Some(1.0),
            marker_label: Some("the page's claim".into()),
        }),
    });
    let mut t = DataTable::new(
        "fasterthanfs",
        "Claims and measurements",
        &[
            "case",
            "claim",
            "db per op",
            "dir/db",
            "dir/db min..max",
            "tree/db",
            "verdict",
        ],
    );
    for r in rows {
        let d = &r["dir_over_db"];
        let claim = &r["claim"];
        let claim_text = match text(claim, "kind") {
            "at-least" => format!(">= {:.2}", num(claim, "ratio").unwrap_or(0.0)),
            "db-slower" => "< 1.00".into(),
            _ => "-".into(),
        };
        let (median, range) = if d.is_object() {
            (
                ratio_text(num(d, "median")),
                format!(
                    "{}..{}",
                    ratio_text(num(d, "min")),
                    ratio_text(num(d, "max"))
                ),
            )
        } else {
            (ratio_text(d.as_f64()), String::new())
        };
        let tree = &r["tree_over_db"];
        t.rows.push(vec![
            text(r, "case").trim().into(),
            claim_text,
            num(d, "denominator_ns").map(ns).unwrap_or_default(),
            median,
            range,
            ratio_text(num(tree, "median").or_else(|| tree.as_f64())),
            text(r, "verdict").into(),
        ]);
    }
    s.tables.push(t);
    if let Some(d) = tables.get("dataset") {
        s.summary.push(dataset_line(d));
    }
}

fn internal_external(tables: &Value, s: &mut Section) {
    let cells = arr(tables, "internal_external");
    let mut sizes: Vec<u64> = cells
        .iter()
        .filter_map(|c| c["blob_size"].as_u64())
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut pages: Vec<u64> = cells
        .iter()
        .filter_map(|c| c["page_size"].as_u64())
        .collect();
    pages.sort_unstable();
    pages.dedup();
    let find = |size: u64, page: u64| {
        cells.iter().find(|c| {
            c["blob_size"].as_u64() == Some(size) && c["page_size"].as_u64() == Some(page)
        })
    };
    let matrix: Vec<Vec<super::chart::MatrixCell>> = pages
        .iter()
        .map(|&p| {
            sizes
                .iter()
                .map(|&z| {
                    let c = find(z, p)?;
                    let v = num(c, "external_over_internal")?;
                    Some((v, num(c, "seed").map(|seed| format!("study {seed:.2}"))))
                })
                .collect()
        })
        .collect();
    s.figures.push(Figure {
        name: "matrix".into(),
        caption: "External read time / internal read time per blob size and page size. Green: the database \
                  (internal) is faster; red: external files are. Below each value, the 2011 study's figure."
            .into(),
        chart: Chart::Matrix(Heatmap {
            title: "internal vs external: external time / internal time".into(),
            row_label: "page size".into(),
            col_label: "blob size".into(),
            rows: pages.iter().map(u64::to_string).collect(),
            cols: sizes
                .iter()
                .map(|&z| super::chart::size_label(z as f64))
                .collect(),
            cells: matrix,
            neutral: 1.0,
            legend: "green > 1: keep blobs inside the database; red < 1: keep them as files".into(),
        }),
    });
    let mut t = DataTable::new(
        "internal_external",
        "External time / internal time",
        &[
            "blob size",
            "page size",
            "blobs",
            "internal per read",
            "external per read",
            "external/internal",
            "study",
        ],
    );
    for c in cells {
        let med = |k: &str| {
            let v: Vec<f64> = arr(c, k).iter().filter_map(Value::as_f64).collect();
            (!v.is_empty()).then(|| ns(summarize(&v).median))
        };
        t.rows.push(vec![
            num(c, "blob_size").unwrap_or(0.0).to_string(),
            num(c, "page_size").unwrap_or(0.0).to_string(),
            num(c, "count").unwrap_or(0.0).to_string(),
            med("internal_ns_per_read").unwrap_or_default(),
            med("external_ns_per_read").unwrap_or_default(),
            format!(
                "{:.3}",
                num(c, "external_over_internal").unwrap_or(f64::NAN)
            ),
            num(c, "seed")
                .map(|v| format!("{v:.3}"))
                .unwrap_or_default(),
        ]);
    }
    s.tables.push(t);
    if let Some(p) = num(tables, "best_page_size") {
        s.summary
            .push(format!("best page size for blob reads: {p}"));
    }
    for c in arr(tables, "crossover") {
        let page = num(c, "page_size").unwrap_or(0.0);
        let line = match &c["crossover"] {
            Value::Object(o) => match o.get("at").and_then(Value::as_f64) {
                Some(at) => format!(
                    "page size {page}: external files start to win above about {}",
                    super::chart::size_label(at)
                ),
                None => continue,
            },
            Value::String(k) => format!("page size {page}: {}", k.replace('-', " ")),
            _ => continue,
        };
        s.summary.push(line);
    }
}

fn lob(tables: &Value, s: &mut Section) {
    let samples = arr(tables, "lob");
    let mut systems: Vec<String> = Vec::new();
    for x in samples {
        let name = text(x, "system").to_string();
        if !systems.contains(&name) {
            systems.push(name);
        }
    }
    let series_of = |key: &str, scale: f64| -> Vec<Series> {
        systems
            .iter()
            .enumerate()
            .map(|(i, sys)| Series {
                name: sys.clone(),
                dashed: false,
                color: i,
                points: samples
                    .iter()
                    .filter(|x| text(x, "system") == sys)
                    .filter_map(|x| {
                        let v: Vec<f64> = arr(x, key).iter().filter_map(Value::as_f64).collect();
                        let size = num(x, "size")?;
                        (!v.is_empty()).then(|| {
                            let m = summarize(&v);
                            Point::with_spread(size, m.median * scale, m.min * scale, m.max * scale)
                        })
                    })
                    .collect(),
            })
            .collect()
    };
    for (key, what) in [("write_ns", "write"), ("read_ns", "read")] {
        s.figures.push(Figure {
            name: what.into(),
            caption: format!(
                "Time to {what} one blob vs blob size, log-log, median with min..max whiskers over the \
                 blobs of each size."
            ),
            chart: Chart::Line(LineChart {
                title: format!("{what} time per blob vs blob size"),
                x: AxisSpec::new("blob size (bytes)", Scale::Log, Unit::Bytes),
                y: AxisSpec::new(format!("time per {what}"), Scale::Log, Unit::Nanos),
                series: series_of(key, 1.0),
            }),
        });
    }
    let per_gb: Vec<Series> = systems
        .iter()
        .enumerate()
        .map(|(i, sys)| Series {
            name: sys.clone(),
            dashed: false,
            color: i,
            points: arr(tables, "read_1gb_seconds")
                .iter()
                .filter(|x| text(x, "system") == sys)
                .filter_map(|x| Some(Point::new(num(x, "size")?, num(x, "seconds")?)))
                .collect(),
        })
        .collect();
    s.figures.push(Figure {
        name: "read-1gb".into(),
        caption: "Time to read 1 GB of content stored as blobs of each size (median read time x blobs per GB), \
                  as in the 2008 comparative LOB benchmark."
            .into(),
        chart: Chart::Line(LineChart {
            title: "time to read 1 GB vs blob size".into(),
            x: AxisSpec::new("blob size (bytes)", Scale::Log, Unit::Bytes),
            y: AxisSpec::new("seconds per GB", Scale::Log, Unit::Seconds),
            series: per_gb,
        }),
    });
    let mut t = DataTable::new(
        "lob",
        "Write and read time per blob",
        &[
            "system",
            "size",
            "write median",
            "write max",
            "read median",
            "read max",
        ],
    );
    for x in samples {
        let m = |k: &str| {
            let v: Vec<f64> = arr(x, k).iter().filter_map(Value::as_f64).collect();
            (!v.is_empty()).then(|| summarize(&v))
        };
        let (w, r) = (m("write_ns"), m("read_ns"));
        t.rows.push(vec![
            text(x, "system").into(),
            num(x, "size").unwrap_or(0.0).to_string(),
            w.as_ref().map(|s| ns(s.median)).unwrap_or_default(),
            w.as_ref().map(|s| ns(s.max)).unwrap_or_default(),
            r.as_ref().map(|s| ns(s.median)).unwrap_or_default(),
            r.as_ref().map(|s| ns(s.max)).unwrap_or_default(),
        ]);
    }
    s.tables.push(t);
    for b in arr(tables, "best_size") {
        s.summary.push(format!(
            "best blob size for {}: {} ({:.2} s per GB read)",
            text(b, "system"),
            super::chart::size_label(num(b, "size").unwrap_or(0.0)),
            num(b, "seconds_per_gb").unwrap_or(0.0)
        ));
    }
    for k in arr(tables, "skipped") {
        s.summary.push(format!(
            "skipped {}: {}",
            text(k, "system"),
            text(k, "reason")
        ));
    }
}

fn http(systems: &[Value], s: &mut Section) {
    let mut levels_seen: Vec<f64> = Vec::new();
    let mut rps = Vec::new();
    let mut lat = Vec::new();
    let mut t = DataTable::new(
        "http",
        "Requests per concurrency level",
        &[
            "system",
            "concurrency",
            "requests/s",
            "MB/s",
            "p50",
            "p99",
            "p99.9",
            "max",
            "ok",
            "errors",
        ],
    );
    for (i, sys) in systems.iter().enumerate() {
        let name = text(sys, "system").to_string();
        let levels = arr(sys, "levels");
        let point = |f: &dyn Fn(&Value) -> Option<f64>| -> Vec<Point> {
            levels
                .iter()
                .filter_map(|l| Some(Point::new(num(l, "concurrency")?, f(l)?)))
                .collect()
        };
        rps.push(Series {
            name: name.clone(),
            points: point(&|l| num(l, "requests_per_s")),
            dashed: false,
            color: i,
        });
        lat.push(Series {
            name: format!("{name} p50"),
            points: point(&|l| num(&l["latency"], "p50_ns")),
            dashed: false,
            color: i,
        });
        lat.push(Series {
            name: format!("{name} p99"),
            points: point(&|l| num(&l["latency"], "p99_ns")),
            dashed: true,
            color: i,
        });
        for l in levels {
            if let Some(c) = num(l, "concurrency")
                && !levels_seen.contains(&c)
            {
                levels_seen.push(c);
            }
            let errors: u64 = l["errors"]
                .as_object()
                .map(|o| o.values().filter_map(Value::as_u64).sum())
                .unwrap_or(0);
            let g = |k: &str| num(&l["latency"], k).map(ns).unwrap_or_default();
            t.rows.push(vec![
                name.clone(),
                num(l, "concurrency").unwrap_or(0.0).to_string(),
                format!("{:.0}", num(l, "requests_per_s").unwrap_or(0.0)),
                format!("{:.1}", num(l, "mb_per_s").unwrap_or(0.0)),
                g("p50_ns"),
                g("p99_ns"),
                g("p999_ns"),
                g("max_ns"),
                num(l, "ok").unwrap_or(0.0).to_string(),
                errors.to_string(),
            ]);
        }
    }
    let x = || {
        AxisSpec::new(
            "concurrent connections (log scale)",
            Scale::Log2,
            Unit::Plain,
        )
    };
    s.figures.push(Figure {
        name: "requests".into(),
        caption: "Requests per second at each concurrency level (closed loop: each connection sends its next \
                  request when the answer arrives)."
            .into(),
        chart: Chart::Line(LineChart {
            title: "requests/s vs concurrency".into(),
            x: x(),
            y: AxisSpec::new("requests/s", Scale::Linear, Unit::Plain),
            series: rps,
        }),
    });
    s.figures.push(Figure {
        name: "latency".into(),
        caption:
            "Response time at each concurrency level: median (solid) and 99th percentile (dashed)."
                .into(),
        chart: Chart::Line(LineChart {
            title: "response time vs concurrency".into(),
            x: x(),
            y: AxisSpec::new("response time", Scale::Log, Unit::Nanos),
            series: lat,
        }),
    });
    s.tables.push(t);
}

fn sweep(tables: &Value, s: &mut Section) {
    use crate::suite::sweep::report::{marginal, ranked, recommendation};
    use crate::suite::sweep::{Record, SweepPlan, params};
    let sw = &tables["sweep"];
    let (Ok(plan), Ok(records)) = (
        serde_json::from_value::<SweepPlan>(sw["plan"].clone()),
        serde_json::from_value::<Vec<Record>>(sw["records"].clone()),
    ) else {
        s.summary
            .push("this sweep result could not be read by this version of blobbench".into());
        return;
    };
    let cases = params::product(&plan.params);
    const TOP: usize = 10;
    for (wi, w) in plan.workloads.iter().enumerate() {
        let ranked = ranked(&records, &cases, w);
        if ranked.is_empty() {
            continue;
        }
        let best = ranked[0].1;
        let shown: Vec<usize> = if ranked.len() <= 2 * TOP {
            (0..ranked.len()).collect()
        } else {
            (0..TOP).chain(ranked.len() - TOP..ranked.len()).collect()
        };
        let groups: Vec<BarGroup> = shown
            .iter()
            .map(|&i| {
                let (c, t, _) = &ranked[i];
                let spread = {
                    let v: Vec<f64> = records
                        .iter()
                        .filter(|r| r.workload == *w && r.case == *c)
                        .map(|r| r.timing.ns as f64)
                        .collect();
                    let m = summarize(&v);
                    (v.len() > 1).then_some((m.min, m.max))
                };
                BarGroup {
                    label: format!(
                        "{}. {}{}",
                        i + 1,
                        params::bracketed(c, &plan.params),
                        if params::power_safe(c) { "" } else { " *" }
                    ),
                    bars: vec![Some(Bar { value: *t, spread })],
                    marker: None,
                }
            })
            .collect();
        s.figures.push(Figure {
            name: format!("ranked-{}", wi + 1),
            caption: format!(
                "{}: cases ranked fastest first (median over rounds, min..max whiskers){}. * = not power-safe. \
                 Cases are written [{}].",
                w.describe(),
                if ranked.len() > 2 * TOP {
                    format!("; the {TOP} fastest and the {TOP} slowest of {}", ranked.len())
                } else {
                    String::new()
                },
                plan.params
                    .iter()
                    .filter(|p| p.values.len() > 1)
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            chart: Chart::Bars(BarChart {
                title: format!("{}: time per case", w.describe()),
                value_axis: AxisSpec::new("time", Scale::Linear, Unit::Nanos),
                series_names: vec!["median time".into()],
                groups,
                reference: None,
                marker_label: None,
            }),
        });
        let effects = marginal(&plan, &ranked);
        let groups: Vec<BarGroup> = effects
            .iter()
            .flat_map(|(p, values)| {
                let best_value = values.iter().map(|v| v.1).fold(f64::INFINITY, f64::min);
                values.iter().map(move |(v, m, _)| BarGroup {
                    label: format!("{p}={v}"),
                    bars: vec![Some(Bar {
                        value: m / best_value,
                        spread: None,
                    })],
                    marker: None,
                })
            })
            .collect();
        if !groups.is_empty() {
            s.figures.push(Figure {
                name: format!("effect-{}", wi + 1),
                caption: format!(
                    "{}: each parameter value's median time over the cases having it, relative to that \
                     parameter's best value (1x). Long bars are the settings that matter.",
                    w.describe()
                ),
                chart: Chart::Bars(BarChart {
                    title: format!("{}: effect of each parameter", w.describe()),
                    value_axis: AxisSpec::new("median time / best value's", Scale::Linear, Unit::Ratio),
                    series_names: vec!["relative median time".into()],
                    groups,
                    reference: Some(1.0),
                    marker_label: None,
                }),
            });
        }
        let mut t = DataTable::new(
            &format!("sweep-{}", wi + 1),
            format!("{}: ranked cases", w.describe()),
            &["rank", "case", "median", "vs fastest", "runs", "power-safe"],
        );
        for (i, (c, tm, n)) in ranked.iter().enumerate() {
            t.rows.push(vec![
                (i + 1).to_string(),
                c.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                ns(*tm),
                format!("{:.2}", tm / best),
                n.to_string(),
                if params::power_safe(c) { "yes" } else { "no" }.into(),
            ]);
        }
        s.tables.push(t);
    }
    match recommendation(&plan, &records, &cases) {
        Some((c, geo)) => s.summary.push(format!(
            "recommendation: {} ({geo:.2}x the fastest case; power-safe)",
            c.iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        )),
        None => s
            .summary
            .push("recommendation: none: no power-safe case ran every workload".into()),
    }
    if sw["complete"] == Value::Bool(false) {
        s.summary
            .push("incomplete sweep: --resume continues it".into());
    }
}

fn compare(tables: &Value, s: &mut Section) {
    let c = &tables["compare"];
    s.summary.push(format!(
        "before: {}; after: {}; threshold {:.0}%",
        text(tables, "before"),
        text(tables, "after"),
        num(c, "threshold").unwrap_or(0.0) * 100.0
    ));
    for d in arr(c, "differences") {
        let f = |i: usize| d.get(i).and_then(Value::as_str).unwrap_or("").to_string();
        s.summary
            .push(format!("differs: {}: {} -> {}", f(0), f(1), f(2)));
    }
    let changes = arr(c, "changes");
    // Speed factor: above 1 the after side is faster, whatever the figure.
    let speed = |ch: &Value, v: f64| {
        if text(ch, "figure") == "requests/s" {
            v
        } else {
            1.0 / v
        }
    };
    let groups: Vec<BarGroup> = changes
        .iter()
        .filter_map(|ch| {
            let (b, a) = (&ch["before"], &ch["after"]);
            let value = speed(ch, num(ch, "ratio")?);
            // Worst and best case of the ratio given both sides' ranges.
            let lo = speed(ch, num(a, "max")? / num(b, "min")?);
            let hi = speed(ch, num(a, "min")? / num(b, "max")?);
            Some(BarGroup {
                label: format!("{} ({})", text(ch, "label"), text(ch, "verdict")),
                bars: vec![Some(Bar {
                    value,
                    spread: Some((lo.min(hi), lo.max(hi))),
                })],
                marker: None,
            })
        })
        .collect();
    s.figures.push(Figure {
        name: "speed".into(),
        caption:
            "How many times faster the after side is per case (right of 1x: faster, left: slower); \
                  whiskers span the ratios the two sides' min..max allow."
                .into(),
        chart: Chart::Bars(BarChart {
            title: "after vs before: speed factor".into(),
            value_axis: AxisSpec::new("speed factor (log scale)", Scale::Log, Unit::Ratio),
            series_names: vec!["after vs before".into()],
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    });
    let mut t = DataTable::new(
        "compare",
        "Cases in both results",
        &[
            "case",
            "figure",
            "before median",
            "after median",
            "after/before",
            "verdict",
            "why",
        ],
    );
    for ch in changes {
        let f = |side: &str| {
            let v = num(&ch[side], "median").unwrap_or(f64::NAN);
            if text(ch, "figure") == "requests/s" {
                format!("{v:.0}")
            } else {
                ns(v)
            }
        };
        t.rows.push(vec![
            text(ch, "label").into(),
            text(ch, "figure").into(),
            f("before"),
            f("after"),
            format!("{:.3}", num(ch, "ratio").unwrap_or(f64::NAN)),
            text(ch, "verdict").into(),
            text(ch, "reason").into(),
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
