//! The terminal table of a `suite http` result: requests/s per system and
//! level, each system's ratio to sqlite, the mean response time (siege's
//! figure, which the blog plotted), p50 and p99; then the levels of any
//! system that had failed requests.

use super::load::level_table;
use crate::report::table::Table;
use crate::result::http::{HttpSystem, HttpTables, describe_order, describe_sizes};
use crate::result::load::LevelResult;
use crate::units::human_duration_ns;

/// The whole terminal report of a `suite http` result, lines ending in "\n".
pub fn render(t: &HttpTables) -> String {
    let spec = &t.dataset;
    let mut out = format!(
        "blobbench suite http: {} blobs of {}, {}, {} per level, keep-alive\n",
        spec.count,
        describe_sizes(spec),
        describe_order(t.url_order()),
        humantime::format_duration(std::time::Duration::from_nanos(t.duration_ns))
    );
    for s in t.http.iter().filter(|s| s.table.is_some()) {
        let table = s.table.as_deref().unwrap_or_default();
        out.push_str(&format!("{}: {table}\n", s.system));
    }
    out.push_str(&levels_table(t).render());
    let first = t.http.first().map_or("sqlite", |s| s.system.as_str());
    out.push_str(&format!(
        "ratio = requests/s of the system / requests/s from {first}: above 1.00 the system serves more\n"
    ));
    out.push_str(
        "mean = mean response time of the answered requests (siege's \"response time\"); p50, p99 its tails\n\
         each level is one run of each system: no interval (rerun to see the spread)\n",
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
/// first (sqlite), then the mean, p50 and p99 of every system.
fn levels_table<'a>(t: &'a HttpTables) -> Table {
    let systems = &t.http;
    let mut header = vec!["-c".to_string()];
    for s in systems {
        header.push(format!("{} req/s", s.system));
    }
    let first = systems.first().map_or("sqlite", |s| s.system.as_str());
    for s in systems.iter().skip(1) {
        header.push(format!("{}/{first}", s.system));
    }
    for s in systems {
        header.push(format!("{} mean", s.system));
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
                |l: &LevelResult| l.latency.mean_ns,
                |l: &LevelResult| l.latency.p50_ns as f64,
                |l: &LevelResult| l.latency.p99_ns as f64,
            ] {
                row.push(level(s).map_or("-".into(), |l| human_duration_ns(p(l))));
            }
        }
        table.row(row);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ResultDocument;
    use crate::result::Tables;
    use crate::result::load::Order;

    /// The 0.1 fixture: a result written before the mean and `--order`.
    fn fixture() -> HttpTables {
        let text = include_str!("../../../tests/fixtures/results/http.json");
        let doc: ResultDocument = serde_json::from_str(text).expect("fixture");
        match doc.tables {
            Tables::Http(t) => t,
            _ => panic!("not a suite http result"),
        }
    }

    #[test]
    fn the_table_shows_each_systems_mean_beside_its_tails() {
        let t = fixture();
        let out = render(&t);
        let header = out.lines().nth(1).expect("table header");
        let mean = header.find("sqlite mean").expect(header);
        let p50 = header.find("sqlite p50").expect(header);
        assert!(mean < p50 && header.contains("dir mean"), "{header}");
        let level = &t.http[0].levels[0];
        assert!(level.latency.mean_ns > 0.0);
        let row = out.lines().nth(3).expect("first level");
        assert!(
            row.contains(&human_duration_ns(level.latency.mean_ns)),
            "{row}\n{out}"
        );
        assert!(out.contains("mean = mean response time"), "{out}");
    }

    #[test]
    fn the_header_names_the_order_and_older_results_say_random() {
        let mut t = fixture();
        assert!(render(&t).lines().next().unwrap().contains("random order"));
        t.order = Some(Order::Sequential);
        let first = render(&t).lines().next().unwrap().to_string();
        assert!(first.contains("sequential order"), "{first}");
        assert!(first.contains("20000 +/- 5000 bytes"), "{first}");
    }
}
