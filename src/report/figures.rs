//! Reading figures out of results: shared by the views and by compare,
//! so neither imports the other for them.

use serde_json::Value;

use crate::result::Tables;
use crate::result::load::LevelResult;

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

/// A run's name without its " (round N)" suffix: the case it measures.
pub fn strip_round(name: &str) -> &str {
    match name.rfind(" (round ") {
        Some(i) if name.ends_with(')') => &name[..i],
        _ => name,
    }
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
