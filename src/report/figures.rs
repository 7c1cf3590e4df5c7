//! Reading figures out of results, and writing them as the reports do:
//! shared by the views, the terminal tables and compare, so none imports
//! another for them.

use serde_json::Value;

use crate::result::load::LevelResult;
use crate::result::{ResultDocument, Tables};

/// The string at `key` of a JSON object, empty when absent.
pub fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
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

/// A run's name without its " (round N)" suffix (and " (run K)" in a
/// result of several runs): the case it measures.
pub fn strip_round(name: &str) -> &str {
    let name = match name.rfind(" (round ") {
        Some(i) if name.ends_with(')') => &name[..i],
        _ => name,
    };
    // A run of a result of several (`quick --runs K`): "... (run 2)".
    match name.rfind(" (run ") {
        Some(i) if name.ends_with(')') && name[i + 6..name.len() - 1].parse::<u64>().is_ok() => {
            &name[..i]
        }
        _ => name,
    }
}

/// The run of a result of several independent runs a run belongs to
/// ("read sql (run 2) (round 3)" -> 2), or None.
fn run_number(name: &str) -> Option<u64> {
    let at = name.rfind(" (run ")?;
    let rest = &name[at + 6..];
    rest[..rest.find(')')?].parse().ok()
}

/// A result of several independent runs (`quick --runs K`, which records
/// how many) as one result per run, each with its own runs and reference
/// probes, its run names as a single run writes them; any other result as
/// itself.
pub fn runs_apart(doc: &ResultDocument) -> Vec<ResultDocument> {
    let k = match &doc.tables {
        crate::result::Tables::Quick(t) => t.between_runs.unwrap_or(1),
        _ => 1,
    };
    if k <= 1 {
        return vec![doc.clone()];
    }
    let probes = doc.environment.reference.as_ref().map(|r| r.per_run());
    (1..=k)
        .map(|run| {
            let mut one = doc.clone();
            one.runs = doc
                .runs
                .iter()
                .filter(|r| run_number(&r.name) == Some(run))
                .cloned()
                .map(|mut r| {
                    r.name = r.name.replacen(&format!(" (run {run})"), "", 1);
                    r
                })
                .collect();
            one.environment.reference = probes
                .as_ref()
                .and_then(|p| p.get(run as usize - 1).cloned());
            if let crate::result::Tables::Quick(t) = &mut one.tables {
                t.between_runs = None;
            }
            one
        })
        .collect()
}

/// One kind of a mixed run as table cells: operation, done, per s,
/// p50, p99, p99.9, max, busy, missing, torn, stale.
pub fn mixed_run_kind_cells(k: &crate::result::mixed_run::KindFigures) -> Vec<String> {
    let l = &k.latency;
    let o = &k.outcomes;
    let t = |ns: u64| crate::units::human_duration_ns(ns as f64);
    vec![
        k.name().to_string(),
        k.ops.to_string(),
        format!("{:.0}", k.per_s),
        t(l.p50_ns),
        t(l.p99_ns),
        t(l.p999_ns),
        t(l.max_ns),
        k.failures.total().to_string(),
        o.busy.to_string(),
        o.missing.to_string(),
        o.torn.to_string(),
        o.stale.to_string(),
    ]
}

/// One row per kind of operation and class of failure: operation, class,
/// count, the first message.
pub fn mixed_run_failure_rows(t: &crate::result::mixed_run::MixedRunTables) -> Vec<Vec<String>> {
    t.kinds
        .iter()
        .flat_map(|k| {
            k.failures.classes.iter().map(move |c| {
                vec![
                    k.name().to_string(),
                    c.class.label(),
                    c.count.to_string(),
                    c.example.clone(),
                ]
            })
        })
        .collect()
}

/// The headers of [`mixed_run_failure_rows`].
pub const MIXED_RUN_FAILURE_HEADERS: [&str; 4] =
    ["operation", "failed as", "count", "first message"];

/// The headers of [`mixed_run_kind_cells`].
pub const MIXED_RUN_KIND_HEADERS: [&str; 12] = [
    "operation",
    "done",
    "per s",
    "p50",
    "p99",
    "p99.9",
    "max",
    "failed",
    "busy",
    "missing",
    "torn",
    "stale",
];

/// The figure of an aging point's reads, as compare names it.
pub const AGING_READ_FIGURE: &str = "read MB/s";

/// The figure of an aging point's fragments per blob.
pub const AGING_FRAGMENTS_FIGURE: &str = "fragments per blob";

/// Whether a figure is one value per result by its nature (a count over
/// every blob, not a sampled rate): compare shows its ratio and does not
/// test it, and more rounds would not give it more samples.
pub fn single_valued(figure: &str) -> bool {
    figure == AGING_FRAGMENTS_FIGURE
}

/// A median as the compare report writes it for its figure: rates whole,
/// fragment counts with two decimals, times with their unit.
pub fn median_text(figure: &str, v: f64) -> String {
    match figure {
        AGING_FRAGMENTS_FIGURE => format!("{v:.2}"),
        AGING_READ_FIGURE => format!("{v:.1}"),
        "requests/s" | "writes/s" => format!("{v:.0}"),
        _ => crate::units::human_duration_ns(v),
    }
}

/// A number as the reports write ratios: two decimals, three below 0.1.
pub fn factor(v: f64) -> String {
    if v.abs() >= 0.1 || v == 0.0 || !v.is_finite() {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A ratio with its interval, as every report writes it: `1.52x [1.30-1.68]`
/// (just `1.52x` when there is no interval).
pub fn ratio_text(ratio: f64, low: Option<f64>, high: Option<f64>) -> String {
    match (low, high) {
        (Some(l), Some(h)) => format!("{}x [{}-{}]", factor(ratio), factor(l), factor(h)),
        _ => format!("{}x", factor(ratio)),
    }
}

/// A fraction as a percentage without float noise: 0.05 -> "5", 0.125 -> "12.5".
pub fn percent_text(fraction: f64) -> String {
    let text = format!("{:.2}", fraction * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A p value as the reports write it: four decimals, or "<0.0001".
pub fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_name_loses_its_round_and_its_run_of_several() {
        assert_eq!(strip_round("read sql (round 3)"), "read sql");
        assert_eq!(strip_round("read sql (run 2) (round 3)"), "read sql");
        assert_eq!(strip_round("read sql (run 2)"), "read sql");
        // A name of the user's that only looks alike keeps its words.
        assert_eq!(strip_round("read (run fast)"), "read (run fast)");
        assert_eq!(run_number("read sql (run 12) (round 3)"), Some(12));
        assert_eq!(run_number("read sql (round 3)"), None);
    }
}
