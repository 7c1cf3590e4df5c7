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

/// Open loop: how each level kept its schedule, one row per level (None
/// for a closed-loop run): target and achieved rate, requests due, sent
/// and not sent, the generator's send lag, and the service time (send to
/// response) beside the response time of the main table.
pub fn schedule(tables: &LoadTables) -> Option<Table> {
    let mut t = Table::new([
        "level",
        "target/s",
        "achieved/s",
        "due",
        "sent",
        "not sent",
        "lag p50",
        "lag p99",
        "lag max",
        "service p50",
        "service p99",
    ]);
    let mut any = false;
    for r in &tables.levels {
        let Some(o) = &r.open_loop else { continue };
        any = true;
        t.row([
            format!("-c {}", r.concurrency),
            format!("{:.0}", o.target_per_s),
            format!("{:.0}", o.achieved_per_s),
            o.due.to_string(),
            o.sent.to_string(),
            o.not_sent.to_string(),
            human_duration_ns(o.send_lag.p50_ns as f64),
            human_duration_ns(o.send_lag.p99_ns as f64),
            human_duration_ns(o.send_lag.max_ns as f64),
            human_duration_ns(o.service_time.p50_ns as f64),
            human_duration_ns(o.service_time.p99_ns as f64),
        ]);
    }
    any.then_some(t)
}

/// A merged load result (`blobbench merge`): which processes it combines,
/// and per level the common interval its throughput counts over and how
/// much of each process's run fell outside it (nothing for one process's
/// result).
pub fn merge_lines(tables: &LoadTables) -> Vec<String> {
    let Some(m) = &tables.merged else {
        return Vec::new();
    };
    let sources: Vec<String> = m
        .sources
        .iter()
        .map(|s| format!("{} (host {})", s.file, s.hostname))
        .collect();
    let mut lines = vec![format!(
        "{} load processes merged: {}; latency percentiles are of all their requests together, \
         requests/s and MB/s count what completed while all of them were loading",
        m.sources.len(),
        sources.join(", ")
    )];
    for (level, r) in tables.levels.iter().zip(&m.levels) {
        let len = r.common.len_ns() as f64;
        let outside: Vec<String> = m
            .sources
            .iter()
            .zip(&r.processes)
            .map(|(s, p)| {
                format!(
                    "{} {:.2} s ({:.0}%)",
                    s.file,
                    p.outside_ns as f64 / 1e9,
                    p.outside_ns as f64 / p.wall.len_ns().max(1) as f64 * 100.0
                )
            })
            .collect();
        let clock = humantime::format_rfc3339_millis(
            std::time::UNIX_EPOCH + std::time::Duration::from_nanos(r.common.start_unix_ns),
        );
        lines.push(format!(
            "-c {} = {} x -c {}: all loading from {clock} for {:.2} s; outside it: {}; \
             {:.0} of {} successful requests completed within it ({}..{} by whole buckets: \
             {:.0}..{:.0} req/s)",
            level.concurrency,
            r.processes.len(),
            r.concurrency_each,
            len / 1e9,
            outside.join(", "),
            r.ok_within,
            level.ok,
            r.ok_within_bounds[0],
            r.ok_within_bounds[1],
            r.ok_within_bounds[0] as f64 / (len / 1e9).max(1e-9),
            r.ok_within_bounds[1] as f64 / (len / 1e9).max(1e-9),
        ));
    }
    lines
}

/// Width of the windows in which [`error_bursts`] looks for the busiest.
const BURST_WINDOW_NS: u64 = 100_000_000;

/// When a level's failures happened: first, last, and the busiest 100 ms
/// window, so a burst is told from a steady trickle (None without errors).
pub fn error_bursts(r: &LevelResult) -> Option<String> {
    let first = r.error_events.first()?;
    let last = r.error_events.last()?;
    let mut counts = std::collections::BTreeMap::<u64, u64>::new();
    for e in &r.error_events {
        *counts.entry(e.at_ns / BURST_WINDOW_NS).or_default() += 1;
    }
    let (window, n) = counts
        .iter()
        .max_by_key(|&(w, n)| (*n, std::cmp::Reverse(*w)))
        .map(|(w, n)| (*w, *n))?;
    let at = |ns: u64| format!("{:.2} s", ns as f64 / 1e9);
    let mut line = format!(
        "-c {}: {} errors from {} to {}; the busiest 100 ms ({} to {}) had {n}",
        r.concurrency,
        r.errors.total(),
        at(first.at_ns),
        at(last.at_ns),
        at(window * BURST_WINDOW_NS),
        at((window + 1) * BURST_WINDOW_NS),
    );
    if r.error_events_dropped > 0 {
        line.push_str(&format!(
            " (times kept for the first {} only)",
            r.error_events.len()
        ));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::latency::Latencies;
    use crate::result::load::{ErrorEvent, ErrorKind, Errors};

    #[test]
    fn the_busiest_window_of_errors_is_named() {
        let at = [
            50_000_000,
            410_000_000,
            420_000_000,
            430_000_000,
            900_000_000,
        ];
        let mut errors = Errors::default();
        let events = at
            .iter()
            .map(|&at_ns| {
                errors.count(ErrorKind::Timeout);
                ErrorEvent {
                    at_ns,
                    kind: ErrorKind::Timeout,
                }
            })
            .collect();
        let r = LevelResult {
            concurrency: 4,
            rate: None,
            requests: 10,
            ok: 5,
            bytes: 0,
            elapsed_ns: 1_000_000_000,
            requests_per_s: 5.0,
            mb_per_s: 0.0,
            latency: Latencies::new().summary(),
            errors,
            open_loop: None,
            error_events: events,
            error_events_dropped: 0,
            histogram: None,
            wall: None,
            timeline: None,
        };
        let line = error_bursts(&r).unwrap();
        assert!(line.contains("5 errors from 0.05 s to 0.90 s"), "{line}");
        assert!(line.contains("0.40 s to 0.50 s) had 3"), "{line}");
        let quiet = LevelResult {
            error_events: vec![],
            ..r
        };
        assert_eq!(error_bursts(&quiet), None);
    }
}
