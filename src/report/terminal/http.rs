//! The terminal table of a `suite http` result: requests/s per system and
//! level, each system's ratio to sqlite, p50 and p99; then the levels of any
//! system that had failed requests.

use super::load::level_table;
use crate::report::table::Table;
use crate::result::http::{HttpSystem, HttpTables, size_variance};
use crate::result::load::LevelResult;
use crate::units::human_duration_ns;

/// The whole terminal report of a `suite http` result, lines ending in "\n".
pub fn render(t: &HttpTables) -> String {
    let spec = &t.dataset;
    let mut out = format!(
        "blobbench suite http: {} blobs, {} +/- {} bytes, random order, {} per level, keep-alive\n",
        spec.count,
        spec.size,
        size_variance(spec),
        humantime::format_duration(std::time::Duration::from_nanos(t.duration_ns))
    );
    out.push_str(&levels_table(t).render());
    out.push_str(
        "ratio = requests/s of the system / requests/s from sqlite: above 1.00 the system serves more\n",
    );
    for s in &t.http {
        let errors: u64 = s.levels.iter().map(|r| r.errors.total()).sum();
        if errors > 0 {
            let rows: Vec<(String, &LevelResult)> = s
                .levels
                .iter()
                .map(|r| (format!("{} -c {}", s.system, r.concurrency), r))
                .collect();
            out.push_str(&format!("{} had {errors} failed requests:\n", s.system));
            out.push_str(&level_table(&rows).render());
        }
    }
    out
}

/// One row per level: requests/s of every system, the others' ratio to the
/// first (sqlite), then p50 and p99 of every system.
fn levels_table<'a>(t: &'a HttpTables) -> Table {
    let systems = &t.http;
    let mut header = vec!["-c".to_string()];
    for s in systems {
        header.push(format!("{} req/s", s.system));
    }
    for s in systems.iter().skip(1) {
        header.push(format!("{}/sqlite", s.system));
    }
    for s in systems {
        header.push(format!("{} p50", s.system));
        header.push(format!("{} p99", s.system));
    }
    let mut table = Table::new(header);
    let Some(first) = systems.first() else {
        return table;
    };
    for (li, base) in first.levels.iter().enumerate() {
        // Every system ran the same levels in the same order.
        let level = |s: &'a HttpSystem| s.levels.get(li);
        let mut row = vec![base.concurrency.to_string()];
        for s in systems {
            row.push(level(s).map_or("-".into(), |l| format!("{:.0}", l.requests_per_s)));
        }
        for s in systems.iter().skip(1) {
            row.push(level(s).map_or("-".into(), |l| {
                format!("{:.2}", l.requests_per_s / base.requests_per_s)
            }));
        }
        for s in systems {
            for p in [
                |l: &LevelResult| l.latency.p50_ns,
                |l: &LevelResult| l.latency.p99_ns,
            ] {
                row.push(level(s).map_or("-".into(), |l| human_duration_ns(p(l) as f64)));
            }
        }
        table.row(row);
    }
    table
}
