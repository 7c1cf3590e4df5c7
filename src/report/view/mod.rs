//! What a report shows for each kind of result: its charts, its tables, a
//! few summary lines, the environment and the command that produced it
//! (one file per kind; `report::sections` puts a result's section
//! together). Everything here is read from the result JSON, never from
//! live state, so a result from another machine or an older blobbench
//! renders the same way.

pub use super::figures::{http_systems, strip_round, text};
use crate::measure::estimate::{Estimate, Method, coverage_text};
use crate::report::chart::{Bar, Point};
use std::path::Path;

pub(super) mod advise;
pub(super) mod aging;
pub(super) mod compare;
pub(super) mod fasterthanfs;
pub(super) mod http;
pub(super) mod internal_external;
pub(super) mod lob;
pub(super) mod mixed_run;
pub(super) mod quick;
pub(super) mod replicate;
pub(super) mod reproduce;
pub(super) mod scaling;
pub(super) mod sweep;

use serde_json::Value;

use super::chart::Chart;
use crate::units::human_duration_ns;

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
    /// An empty table with these headers.
    pub(in crate::report) fn new(name: &str, title: impl Into<String>, headers: &[&str]) -> Self {
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

/// A section that sets several machines' results side by side: their
/// files, each machine's own command (one a line: any of them reruns its
/// part), start times, and one line of environment per machine, under
/// `labels` (one per result); the caller adds what it draws.
pub(super) fn machines_section(
    id: &str,
    title: &str,
    runs: &[(&crate::result::ResultDocument, &str)],
    labels: &[String],
) -> Section {
    Section {
        id: id.into(),
        title: title.into(),
        source: runs.iter().map(|r| r.1).collect::<Vec<_>>().join(", "),
        command_line: runs
            .iter()
            .map(|r| command_line(&r.0.argv))
            .collect::<Vec<_>>()
            .join("\n"),
        started_at: runs
            .iter()
            .map(|r| r.0.started_at.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        summary: Vec::new(),
        figures: Vec::new(),
        tables: Vec::new(),
        environment: runs
            .iter()
            .zip(labels)
            .map(|((doc, _), label)| {
                let e = &doc.environment;
                (
                    label.clone(),
                    format!(
                        "{} ({} logical CPUs), kernel {}, SQLite {}",
                        e.cpu_model, e.logical_cpus, e.kernel, e.sqlite_version
                    ),
                )
            })
            .collect(),
        compile_options: Vec::new(),
    }
}

/// The results of one kind among `docs`, each with its tables and the file
/// it came from: what a "machines side by side" section draws. None for
/// fewer than two, where there is nothing to set side by side.
pub fn side_by_side<T>(
    docs: &[(crate::result::ResultDocument, String)],
    tables: fn(&crate::result::Tables) -> Option<&T>,
) -> Option<Vec<(&crate::result::ResultDocument, &T, &str)>> {
    let runs: Vec<_> = docs
        .iter()
        .filter_map(|(d, src)| tables(&d.tables).map(|t| (d, t, src.as_str())))
        .collect();
    (runs.len() >= 2).then_some(runs)
}

/// A number as the result's JSON holds it: NaN and infinities are written
/// as null, and a null is drawn as missing.
pub fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// An estimate's interval as a whisker's ends, where it has one.
fn whisker(e: &Estimate) -> Option<(f64, f64)> {
    e.has_interval()
        .then(|| finite(e.low).zip(finite(e.high)))
        .flatten()
}

/// A bar for an estimate: its median, its interval as the whisker (where
/// the result has one) and the terminal's noisy mark.
pub(in crate::report) fn estimate_bar(e: &Estimate) -> Option<Bar> {
    finite(e.value).map(|value| Bar {
        value,
        spread: whisker(e),
        noisy: e.noisy(),
    })
}

/// A line chart's point for an estimate at `x`: as [`estimate_bar`] draws
/// a bar.
pub(in crate::report) fn estimate_point(x: f64, e: &Estimate) -> Point {
    Point {
        x,
        y: e.value,
        spread: whisker(e),
        noisy: e.noisy(),
    }
}

/// What a chart's whiskers are, for its caption: "median of 15 rounds;
/// whiskers: 95% sign-test interval over this run's rounds", from the
/// estimates drawn (their rounds and the coverage their interval has).
pub(in crate::report) fn interval_caption<'a>(
    estimates: impl IntoIterator<Item = &'a Estimate>,
) -> String {
    interval_caption_over(estimates, "rounds")
}

/// [`interval_caption`] for medians over something else than rounds (the
/// blobs of each size): "median of 100 blobs; whiskers: 95% sign-test
/// interval over this run's blobs".
pub(in crate::report) fn interval_caption_over<'a>(
    estimates: impl IntoIterator<Item = &'a Estimate>,
    over: &str,
) -> String {
    let drawn: Vec<&Estimate> = estimates.into_iter().collect();
    let rounds = drawn.iter().map(|e| e.n).max().unwrap_or(0);
    match rounds {
        0 => return "No interval: this result has none.".into(),
        1 => return "One measurement per point: no interval.".into(),
        _ => {}
    }
    let with_interval = drawn.iter().find(|e| e.has_interval());
    let whiskers = match with_interval {
        Some(e) => {
            let coverage = e.coverage.map_or("95%".to_string(), coverage_text);
            match e.method {
                Method::Bootstrap | Method::PairedLogBootstrap => {
                    format!(
                        "whiskers: {coverage} bootstrap interval (nominal) over this run's {over}"
                    )
                }
                Method::BetweenRuns => {
                    format!(
                        "whiskers: where a rerun of {} runs lands ({coverage}: the runs' sign-test interval, widened)",
                        e.n
                    )
                }
                _ => format!("whiskers: {coverage} sign-test interval over this run's {over}"),
            }
        }
        None => format!("no interval (too few {over})"),
    };
    let noisy = if drawn.iter().any(|e| e.noisy()) {
        "; ~ marks a noisy figure (interval wider than +/-25%)"
    } else {
        ""
    };
    let over = if with_interval.is_some_and(|e| e.method == Method::BetweenRuns) {
        "runs (each the median of its rounds)"
    } else {
        over
    };
    format!("Median of {rounds} {over}; {whiskers}{noisy}.")
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

pub(super) fn ns(v: f64) -> String {
    human_duration_ns(v)
}

pub(super) fn ratio_text(v: Option<f64>) -> String {
    v.map(|r| format!("{r:.2}")).unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::estimate::median_estimate;
    use crate::report::chart::{AxisSpec, LineChart, Scale, Series, Unit};

    /// A line chart's point drawn from an estimate carries its interval as
    /// the whisker and the terminal's `~` when noisy, as bars do.
    #[test]
    fn estimate_points_draw_their_interval_and_noisy_mark() {
        let steady = median_estimate(&[100.0, 101.0, 99.0, 100.0, 102.0, 98.0, 100.0]);
        let noisy = median_estimate(&[100.0, 300.0, 30.0, 100.0, 250.0, 40.0, 100.0]);
        assert!(steady.has_interval() && !steady.noisy() && noisy.noisy());
        let chart = LineChart {
            title: "t".into(),
            x: AxisSpec::new("x", Scale::Linear, Unit::Plain),
            y: AxisSpec::new("y", Scale::Linear, Unit::Plain),
            series: vec![Series {
                name: "s".into(),
                points: vec![estimate_point(1.0, &steady), estimate_point(2.0, &noisy)],
                dashed: false,
                color: 0,
            }],
        };
        let svg = chart.to_svg();
        assert_eq!(svg.matches("class=\"whisker\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"noisy\"").count(), 1, "{svg}");
        let caption = interval_caption(&[steady, noisy]);
        assert!(
            caption.starts_with("Median of 7 rounds; whiskers: ")
                && caption.contains("~ marks a noisy figure"),
            "{caption}"
        );
        assert_eq!(
            interval_caption(&[Estimate::point(5.0, 1)]),
            "One measurement per point: no interval."
        );
    }

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
