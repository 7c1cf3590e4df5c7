//! The terminal table of a `load` result: one row per level (also used for
//! the failed levels of a `suite http` result).

use crate::report::table::Table;
use crate::result::load::{LevelResult, LoadTables};
use crate::units::human_duration_ns;

/// One labelled level per row: throughput, latency percentiles and errors
/// by kind (as JSON, only when there were any).
pub fn level_table(rows: &[(String, &LevelResult)]) -> Table {
    let mut t = Table::new([
        "level", "req/s", "MB/s", "p50", "p90", "p99", "p99.9", "max", "errors",
    ]);
    for (name, r) in rows {
        let l = &r.latency;
        t.row([
            name.clone(),
            format!("{:.0}", r.requests_per_s),
            format!("{:.1}", r.mb_per_s),
            human_duration_ns(l.p50_ns as f64),
            human_duration_ns(l.p90_ns as f64),
            human_duration_ns(l.p99_ns as f64),
            human_duration_ns(l.p999_ns as f64),
            human_duration_ns(l.max_ns as f64),
            if r.errors.total() == 0 {
                "0".to_string()
            } else {
                serde_json::to_string(&r.errors).unwrap_or_default()
            },
        ]);
    }
    t
}

/// The `load` table: each level labelled by its `-c`.
pub fn levels(tables: &LoadTables) -> Table {
    let rows: Vec<(String, &LevelResult)> = tables
        .levels
        .iter()
        .map(|r| (format!("-c {}", r.concurrency), r))
        .collect();
    level_table(&rows)
}
