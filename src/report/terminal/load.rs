//! The terminal table of a `load` result: one row per level (also used for
//! the failed levels of a `suite http` result).

use crate::report::table::Table;
use crate::result::load::{LevelMerge, LevelResult, LoadTables, MergeRecord, percent};
use crate::units::human_duration_ns;

/// One labelled level per row: throughput, latency percentiles ("-" for a
/// level with no response to time) and errors by kind in words.
pub fn level_table(rows: &[(String, &LevelResult)]) -> Table {
    let mut t = Table::new([
        "level", "req/s", "MB/s", "p50", "p90", "p99", "p99.9", "max", "errors",
    ]);
    for (name, r) in rows {
        let l = &r.latency;
        // Nothing answered (and, open loop, nothing left unsent): no time
        // to show, where a 0 would read as instant.
        let timed = r.ok > 0 || r.open_loop.as_ref().is_some_and(|o| o.not_sent > 0);
        let time = |ns: u64| {
            if timed {
                human_duration_ns(ns as f64)
            } else {
                "-".to_string()
            }
        };
        t.row([
            name.clone(),
            format!("{:.0}", r.requests_per_s),
            format!("{:.1}", r.mb_per_s),
            time(l.p50_ns),
            time(l.p90_ns),
            time(l.p99_ns),
            time(l.p999_ns),
            time(l.max_ns),
            if r.errors.total() == 0 {
                "0".to_string()
            } else {
                r.errors.describe()
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
            not_sent_cell(o),
            human_duration_ns(o.send_lag.p50_ns as f64),
            human_duration_ns(o.send_lag.p99_ns as f64),
            human_duration_ns(o.send_lag.max_ns as f64),
            human_duration_ns(o.service_time.p50_ns as f64),
            human_duration_ns(o.service_time.p99_ns as f64),
        ]);
    }
    any.then_some(t)
}

/// The "not sent" cell of a schedule row: the count, and its share of the
/// due requests when any.
pub fn not_sent_cell(o: &crate::result::load::OpenLoopStats) -> String {
    match o.not_sent {
        0 => "0".into(),
        n => format!("{n} ({})", percent(o.not_sent_share())),
    }
}

/// Open loop: what the response-time percentiles of the levels count (from
/// each request's intended start, and the requests never sent at their
/// wait), and how many were not sent at each level (nothing for a closed
/// What each level did past its -t (`asked`): how long it ran beyond it
/// (its rates divide by the whole span) and the requests cut a second
/// after it, so that no rate is read as -t's without saying so.
pub fn end_notes(levels: &[LevelResult], asked: Option<std::time::Duration>) -> Vec<String> {
    let mut lines = Vec::new();
    for r in levels {
        let ran = r.elapsed_ns as f64 / 1e9;
        if let Some(d) = asked
            && ran > d.as_secs_f64() + 0.05
        {
            lines.push(format!(
                "-c {}: ran {ran:.2} s for -t {}: requests in flight at -t had up to a second more, and its rates divide by the whole {ran:.2} s",
                r.concurrency,
                humantime::format_duration(d)
            ));
        }
        if r.cut_at_end > 0 {
            lines.push(format!(
                "-c {}: {} request(s) still in flight a second after -t were cut there (in no figure: neither answered nor failed)",
                r.concurrency, r.cut_at_end
            ));
        }
    }
    lines
}

/// loop).
pub fn latency_notes(levels: &[LevelResult]) -> Vec<String> {
    let open: Vec<(&LevelResult, &crate::result::load::OpenLoopStats)> = levels
        .iter()
        .filter_map(|r| Some((r, r.open_loop.as_ref()?)))
        .collect();
    if open.is_empty() {
        return Vec::new();
    }
    let unsent: Vec<String> = open
        .iter()
        .filter(|(_, o)| o.not_sent > 0)
        .map(|(r, o)| format!("-c {}: {}", r.concurrency, o.not_sent_text()))
        .collect();
    if unsent.is_empty() {
        return vec![
            "open loop: the response-time percentiles count from each request's intended start; \
             every due request was sent"
                .into(),
        ];
    }
    let mut lines = Vec::new();
    if open
        .iter()
        .any(|(_, o)| o.not_sent > 0 && o.latency_includes_not_sent)
    {
        lines.push(
            "open loop: the response-time percentiles count from each request's intended start \
             and include the requests never sent, each at its wait from its intended start to the \
             level's end (as wrk2 does)"
                .into(),
        );
    }
    let left_out: Vec<String> = open
        .iter()
        .filter(|(_, o)| o.not_sent > 0 && !o.latency_includes_not_sent)
        .map(|(r, _)| format!("-c {}", r.concurrency))
        .collect();
    if !left_out.is_empty() {
        lines.push(format!(
            "open loop: at {} the response-time percentiles cover the sent requests only (a \
             result of an older blobbench left those never sent out: the tail is flattered)",
            left_out.join(", ")
        ));
    }
    lines.push(format!("not sent: {}", unsent.join("; ")));
    lines
}

/// Open loop: one warning per level that left any due request unsent or
/// fell below its target rate, as the result keeps it (computed from the
/// counts for a result whose older blobbench kept none at a few unsent).
pub fn open_loop_warnings(levels: &[LevelResult]) -> Vec<String> {
    levels
        .iter()
        .filter_map(|r| {
            let o = r.open_loop.as_ref()?;
            let w = match (&o.warning, o.not_sent) {
                (Some(w), _) => w.clone(),
                (None, 0) => return None,
                (None, _) => format!("{} (generator behind)", o.not_sent_text()),
            };
            Some(format!("-c {}: {w}", r.concurrency))
        })
        .collect()
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
        lines.push(format!(
            "-c {}: {}; share of those requests: {}",
            level.concurrency,
            clock_line(m, r),
            shares(m, r)
        ));
    }
    lines
}

/// Which clock a merged level's spans are on, and each process's offset
/// to the server's as its Date headers bound it.
fn clock_line(m: &MergeRecord, r: &LevelMerge) -> String {
    let offsets: Vec<String> = m
        .sources
        .iter()
        .zip(&r.processes)
        .map(|(s, p)| match p.server_clock {
            Some(o) => format!(
                "{} {:+.3} s (±{:.0} ms)",
                s.file,
                o.mid_ns() as f64 / 1e9,
                o.half_width_ns() as f64 / 1e6
            ),
            None => format!("{} unknown", s.file),
        })
        .collect();
    let placed = if r.on_server_clock {
        "runs placed on the server's clock"
    } else {
        "runs on each machine's own clock"
    };
    format!(
        "{placed}; the server's clock against each machine's (its Date headers): {}",
        offsets.join(", ")
    )
}

/// Each process's share of the successful requests that completed while
/// all were loading.
fn shares(m: &MergeRecord, r: &LevelMerge) -> String {
    m.sources
        .iter()
        .zip(&r.processes)
        .map(|(s, p)| {
            format!(
                "{} {:.0}%",
                s.file,
                p.ok_within / r.ok_within.max(1e-9) * 100.0
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How late each level started after its slot (`load --start-at`).
pub fn schedule_line(levels: &[LevelResult], slot: std::time::Duration) -> String {
    let late: Vec<String> = levels
        .iter()
        .filter_map(|r| {
            let late = r.wall?.start_unix_ns as i128 - i128::from(r.scheduled_unix_ns?);
            Some(format!("-c {} {:.1} ms", r.concurrency, late as f64 / 1e6))
        })
        .collect();
    let first = levels
        .first()
        .and_then(|r| r.scheduled_unix_ns)
        .unwrap_or(0);
    format!(
        "--start-at {}, a level every {:.1} s: started after their slots by {}",
        humantime::format_rfc3339_millis(
            std::time::UNIX_EPOCH + std::time::Duration::from_nanos(first)
        ),
        slot.as_secs_f64(),
        late.join(", ")
    )
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
pub(crate) mod tests {
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
            cut_at_end: 0,
            server_clock: None,
            scheduled_unix_ns: None,
            stopped_early: None,
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

    /// An open-loop level of 100 due requests at 100 req/s, `not_sent` of
    /// them never sent; `warning` as the result keeps it.
    pub(crate) fn open_level(not_sent: u64, warning: Option<&str>) -> LevelResult {
        let none = Latencies::new().summary();
        LevelResult {
            concurrency: 2,
            rate: Some(100.0),
            requests: 100 - not_sent,
            ok: 100 - not_sent,
            bytes: 0,
            elapsed_ns: 1_000_000_000,
            requests_per_s: (100 - not_sent) as f64,
            mb_per_s: 0.0,
            latency: none.clone(),
            errors: Errors::default(),
            open_loop: Some(crate::result::load::OpenLoopStats {
                target_per_s: 100.0,
                due: 100,
                sent: 100 - not_sent,
                not_sent,
                not_sent_share: not_sent as f64 / 100.0,
                latency_includes_not_sent: true,
                achieved_per_s: (100 - not_sent) as f64,
                send_lag: none.clone(),
                service_time: none,
                send_lag_histogram: None,
                service_time_histogram: None,
                warning: warning.map(String::from),
            }),
            error_events: vec![],
            error_events_dropped: 0,
            cut_at_end: 0,
            server_clock: None,
            scheduled_unix_ns: None,
            stopped_early: None,
            histogram: None,
            wall: None,
            timeline: None,
        }
    }

    #[test]
    fn one_request_not_sent_is_labelled_and_warned_about() {
        let one = open_level(
            1,
            Some("1 of 100 due requests (1.0%) not sent (generator behind)"),
        );
        let notes = latency_notes(std::slice::from_ref(&one));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].contains("include the requests never sent, each at its wait"),
            "{notes:?}"
        );
        assert_eq!(
            notes[1],
            "not sent: -c 2: 1 of 100 due requests (1.0%) not sent"
        );
        let warnings = open_loop_warnings(std::slice::from_ref(&one));
        assert_eq!(
            warnings,
            ["-c 2: 1 of 100 due requests (1.0%) not sent (generator behind)"]
        );
        let tables = LoadTables {
            levels: vec![one.clone()],
            urls: 1,
            order: crate::result::load::Order::Random,
            rate: Some(100.0),
            url_digest: None,
            servers: vec![],
            merged: None,
        };
        let t = schedule(&tables).unwrap().render();
        assert!(t.contains("1 (1.0%)"), "{t}");
        // A result of an older blobbench: no warning kept at a few unsent,
        // and its percentiles without them; both said.
        let mut old = one;
        let o = old.open_loop.as_mut().unwrap();
        (o.warning, o.latency_includes_not_sent, o.not_sent_share) = (None, false, 0.0);
        let notes = latency_notes(std::slice::from_ref(&old));
        assert!(
            notes[0].contains("at -c 2 the response-time percentiles cover the sent requests only"),
            "{notes:?}"
        );
        assert_eq!(
            open_loop_warnings(std::slice::from_ref(&old)),
            ["-c 2: 1 of 100 due requests (1.0%) not sent (generator behind)"]
        );
        // Everything sent: a label, no warning; closed loop: neither.
        let all = open_level(0, None);
        let notes = latency_notes(std::slice::from_ref(&all));
        assert!(
            notes[0].ends_with("every due request was sent"),
            "{notes:?}"
        );
        assert!(open_loop_warnings(std::slice::from_ref(&all)).is_empty());
        let closed = LevelResult {
            open_loop: None,
            rate: None,
            ..all
        };
        assert!(latency_notes(std::slice::from_ref(&closed)).is_empty());
    }
}
