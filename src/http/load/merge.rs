//! Merging the results of several `load` processes (one per machine, or
//! several on one) into the result one generator of all their connections
//! would have written: each level's histograms summed (so its percentiles
//! are those of the union, not an average of percentiles), its counts and
//! errors summed, and its throughput counted over the common interval, the
//! time every process was loading the server, from the completion
//! timelines each process kept, on the server's clock when every process
//! measured its offset to it (from its Date headers, see clock.rs), else on
//! each machine's own. Open loop, each process's requests that fell
//! due but were never sent are in its histogram already (at their wait until
//! its level ended), so the union's tail holds them all; their counts add up
//! and any of them is warned about.

use std::time::{Duration, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::measure::latency::{EncodedHistogram, Latencies};
use crate::result::load::{
    ALIGN_WITHIN_NS, ClockOffset, ERROR_EVENTS_KEPT, Errors, LevelMerge, LevelResult, LoadTables,
    MergeRecord, MergeSource, OpenLoopStats, ProcessSpan, Timeline, WallSpan,
};
use crate::result::{ResultDocument, Tables};

/// One load result to merge.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The file it was read from, as named (for messages and the record).
    pub file: &'a str,
    /// The machine it ran on.
    pub hostname: &'a str,
    /// When it started (RFC 3339).
    pub started_at: &'a str,
    /// Its levels.
    pub tables: &'a LoadTables,
}

impl<'a> Input<'a> {
    /// The load tables of `doc`, read from `file`; a usage error naming the
    /// file when it is another kind of result.
    pub fn of(file: &'a str, doc: &'a ResultDocument) -> Result<Input<'a>> {
        let Tables::Load(tables) = &doc.tables else {
            return Err(Error::usage(format!(
                "{file}: a \"{}\" result, not a load result; merge takes files written by `blobbench load --json`",
                doc.command
            )));
        };
        Ok(Input {
            file,
            hostname: &doc.environment.hostname,
            started_at: &doc.started_at,
            tables,
        })
    }
}

/// The merged tables, and what the reader should be warned of.
#[derive(Debug, Clone)]
pub struct Merged {
    /// A `load` result's tables with its merge record.
    pub tables: LoadTables,
    /// E.g. processes that overlapped for only part of their runs.
    pub warnings: Vec<String>,
}

/// Below this share of the longest run in common, the merge warns: most of
/// the load was not simultaneous.
const LOW_OVERLAP: f64 = 0.5;

/// Merges two or more load results level by level; a usage error (naming
/// the file and the fix) when they cannot be lined up.
pub fn merge(inputs: &[Input]) -> Result<Merged> {
    if inputs.len() < 2 {
        return Err(Error::usage(
            "merge needs two or more load results, e.g. blobbench merge a.json b.json --json all.json",
        ));
    }
    for i in inputs {
        check_mergeable(i)?;
    }
    let first = &inputs[0];
    for (n, other) in inputs.iter().enumerate().skip(1) {
        check_lined_up(first, other)?;
        if let Some(same) = inputs[..n].iter().find(|i| same_run(i, other)) {
            return Err(Error::usage(format!(
                "{}: the same load as {} (its levels ran at the same instants); give each load process's result once",
                other.file, same.file
            )));
        }
    }
    let mut levels = Vec::new();
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    for l in 0..first.tables.levels.len() {
        let (level, record) = merge_level(inputs, l)?;
        if let Some(w) = overlap_warning(&record, level.concurrency) {
            warnings.push(w);
        }
        if !record.on_server_clock
            && let Some(apart) =
                clocks_apart(inputs, record.processes.iter().map(|p| p.server_clock))
        {
            warnings.push(format!(
                "-c {}: {apart}, and not every process pinned its offset to within {} ms, so the runs \
                 stay on their own clocks and the common window is misplaced by as much: synchronize the \
                 machines' clocks (NTP), or run each level longer than a few seconds",
                level.concurrency,
                ALIGN_WITHIN_NS / 1_000_000
            ));
        }
        if let Some(w) = level.open_loop.as_ref().and_then(|o| o.warning.as_ref()) {
            warnings.push(format!("-c {}: {w}", level.concurrency));
        }
        levels.push(level);
        records.push(record);
    }
    let t = first.tables;
    let mut servers: Vec<String> = inputs
        .iter()
        .flat_map(|i| i.tables.servers.iter().cloned())
        .collect();
    servers.sort();
    servers.dedup();
    let tables = LoadTables {
        levels,
        urls: t.urls,
        order: t.order,
        rate: sum_rates(inputs.iter().map(|i| i.tables.rate)),
        url_digest: t.url_digest.clone(),
        servers,
        merged: Some(MergeRecord {
            sources: inputs
                .iter()
                .map(|i| MergeSource {
                    file: i.file.to_string(),
                    hostname: i.hostname.to_string(),
                    started_at: i.started_at.to_string(),
                })
                .collect(),
            levels: records,
        }),
    };
    Ok(Merged { tables, warnings })
}

/// A load result that can be merged: written by a blobbench that keeps
/// histograms and timelines, and not a merge itself.
fn check_mergeable(i: &Input) -> Result<()> {
    if let Some(m) = &i.tables.merged {
        return Err(Error::usage(format!(
            "{}: already a merge of {} load results; merge the load results it was made from",
            i.file,
            m.sources.len()
        )));
    }
    let lacking = i.tables.levels.iter().any(|l| {
        l.histogram.is_none()
            || l.wall.is_none()
            || l.timeline.as_ref().is_none_or(|t| t.bucket_ns == 0)
            || l.open_loop.as_ref().is_some_and(|o| {
                o.send_lag_histogram.is_none() || o.service_time_histogram.is_none()
            })
    });
    if lacking || i.tables.url_digest.is_none() {
        return Err(Error::usage(format!(
            "{}: written by a blobbench whose load kept no histograms and timelines; rerun the load with blobbench {}",
            i.file,
            env!("CARGO_PKG_VERSION")
        )));
    }
    if i.tables.levels.is_empty() {
        return Err(Error::usage(format!(
            "{}: a load result without levels; give results of completed loads",
            i.file
        )));
    }
    Ok(())
}

/// Whether two results record the same run (one file given twice, or a
/// copy): every level started and ended at the same nanosecond.
fn same_run(a: &Input, b: &Input) -> bool {
    let walls = |i: &Input| i.tables.levels.iter().map(|l| l.wall).collect::<Vec<_>>();
    walls(a) == walls(b)
}

/// The concurrency levels, as -c took them.
fn c_list(t: &LoadTables) -> String {
    t.levels
        .iter()
        .map(|l| l.concurrency.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `other` ran the same levels against the same URLs as `first`.
fn check_lined_up(first: &Input, other: &Input) -> Result<()> {
    let (a, b) = (first.tables, other.tables);
    if c_list(a) != c_list(b) {
        return Err(Error::usage(format!(
            "{}: levels -c {} but {} has -c {}; run every load process with the same -c list",
            other.file,
            c_list(b),
            first.file,
            c_list(a)
        )));
    }
    let open = |t: &LoadTables| {
        t.levels
            .iter()
            .map(|l| l.rate.is_some())
            .collect::<Vec<_>>()
    };
    if open(a) != open(b) {
        let loop_of = |t: &LoadTables| match t.rate {
            Some(_) => "open loop (--rate)",
            None => "closed loop",
        };
        return Err(Error::usage(format!(
            "{}: {} but {} ran {}; run every load process in the same loop (all with --rate or none)",
            other.file,
            loop_of(b),
            first.file,
            loop_of(a)
        )));
    }
    if a.urls != b.urls || a.url_digest != b.url_digest {
        return Err(Error::usage(format!(
            "{}: asked for other URLs ({} URLs, digest {}) than {} ({} URLs, digest {}); give every load process the same URL list",
            other.file,
            b.urls,
            b.url_digest.as_deref().unwrap_or("-"),
            first.file,
            a.urls,
            a.url_digest.as_deref().unwrap_or("-"),
        )));
    }
    if a.order != b.order {
        return Err(Error::usage(format!(
            "{}: --order {:?} but {} used {:?}; run every load process with the same --order",
            other.file, b.order, first.file, a.order
        )));
    }
    Ok(())
}

fn sum_rates(rates: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    rates.fold(None, |acc, r| match (acc, r) {
        (None, r) => r,
        (Some(a), Some(r)) => Some(a + r),
        (Some(a), None) => Some(a),
    })
}

/// What one process completed within an interval of the system clock.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Within {
    /// Successful requests: whole buckets inside plus each edge bucket's
    /// overlapping share.
    pub ok: f64,
    /// Their body bytes, counted the same way.
    pub bytes: f64,
    /// Successful requests of the buckets wholly inside.
    pub ok_min: u64,
    /// Successful requests of the buckets that touch the interval at all.
    pub ok_max: u64,
}

/// The requests of a level that ran over `wall`, with completions in
/// `timeline`, that completed within `common`. Bucket i spans
/// [start + i w, start + (i+1) w), the last one cut at the level's end;
/// the requests of a bucket the interval cuts are counted by the share of
/// the bucket inside it, and the bounds say what that share could be.
pub fn within(wall: &WallSpan, timeline: &Timeline, common: &WallSpan) -> Within {
    let w = u128::from(timeline.bucket_ns.max(1));
    let (from, to) = (
        u128::from(common.start_unix_ns),
        u128::from(common.end_unix_ns),
    );
    let end = u128::from(wall.end_unix_ns);
    let mut out = Within::default();
    for (i, (&n, &b)) in timeline.ok.iter().zip(&timeline.bytes).enumerate() {
        let start = u128::from(wall.start_unix_ns) + i as u128 * w;
        let stop = (start + w).min(end).max(start);
        let share = if stop == start {
            // A bucket cut to nothing by the level's end: its completions
            // happened at that instant.
            if (from..=to).contains(&start) {
                1.0
            } else {
                0.0
            }
        } else {
            let overlap = stop.min(to).saturating_sub(start.max(from));
            overlap as f64 / (stop - start) as f64
        };
        out.ok += n as f64 * share;
        out.bytes += b as f64 * share;
        if start >= from && stop <= to {
            out.ok_min += n;
        }
        if share > 0.0 || (start < to && stop > from) {
            out.ok_max += n;
        }
    }
    out
}

/// The interval every span covers: from the latest start to the earliest
/// end (None when they do not all overlap).
pub fn common_interval(spans: &[WallSpan]) -> Option<WallSpan> {
    let start = spans.iter().map(|s| s.start_unix_ns).max()?;
    let end = spans.iter().map(|s| s.end_unix_ns).min()?;
    (start < end).then_some(WallSpan {
        start_unix_ns: start,
        end_unix_ns: end,
    })
}

/// A time of the system clock as RFC 3339 with milliseconds.
fn clock_text(unix_ns: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_nanos(unix_ns)).to_string()
}

/// Level `l` of every input, merged, with its record.
fn merge_level(inputs: &[Input], l: usize) -> Result<(LevelResult, LevelMerge)> {
    let levels: Vec<&LevelResult> = inputs.iter().map(|i| &i.tables.levels[l]).collect();
    let shifts = server_clock_shifts(inputs, &levels);
    let on_server_clock = shifts.is_some();
    // Each process's move onto the server's clock (0: its own clock kept).
    let shifts = shifts.unwrap_or_else(|| vec![0; levels.len()]);
    let walls: Vec<WallSpan> = levels
        .iter()
        .zip(&shifts)
        .filter_map(|(r, &shift)| r.wall.map(|w| w.shifted(shift)))
        .collect();
    let c = levels[0].concurrency;
    let Some(common) = common_interval(&walls) else {
        let ran: Vec<String> = inputs
            .iter()
            .zip(&walls)
            .map(|(i, w)| {
                format!(
                    "{} from {} to {}",
                    i.file,
                    clock_text(w.start_unix_ns),
                    clock_text(w.end_unix_ns)
                )
            })
            .collect();
        let clocks = clocks_apart(inputs, levels.iter().map(|r| r.server_clock))
            .map_or(String::new(), |a| format!("; {a}"));
        return Err(Error::usage(format!(
            "level -c {c}: the load processes never ran at the same time ({}{clocks}); start them together (load --start-at), on machines whose clocks are synchronized",
            ran.join(", ")
        )));
    };
    let len_s = common.len_ns() as f64 / 1e9;
    let mut record = LevelMerge {
        concurrency_each: c,
        common,
        ok_within: 0.0,
        ok_within_bounds: [0, 0],
        bytes_within: 0.0,
        ok_per_s_within_common: 0.0,
        processes: Vec::new(),
        on_server_clock,
    };
    for ((r, wall), shift) in levels.iter().zip(&walls).zip(&shifts) {
        let timeline = r.timeline.as_ref().expect("checked mergeable");
        let got = within(wall, timeline, &common);
        record.ok_within += got.ok;
        record.bytes_within += got.bytes;
        record.ok_within_bounds[0] += got.ok_min;
        record.ok_within_bounds[1] += got.ok_max;
        record.processes.push(ProcessSpan {
            wall: *wall,
            outside_ns: wall.len_ns() - common.len_ns(),
            ok: r.ok,
            ok_within: got.ok,
            server_clock: r.server_clock,
            shifted_ns: *shift,
        });
    }
    let files: Vec<&str> = inputs.iter().map(|i| i.file).collect();
    let latency = union(&files, &levels, |r| r.histogram.as_ref())?;
    let mut errors = Errors::default();
    for r in &levels {
        errors.add(&r.errors);
    }
    let (error_events, error_events_dropped) = error_events(&levels, &walls, errors.total());
    record.ok_per_s_within_common = record.ok_within / len_s;
    let span = WallSpan {
        start_unix_ns: walls.iter().map(|w| w.start_unix_ns).min().unwrap_or(0),
        end_unix_ns: walls.iter().map(|w| w.end_unix_ns).max().unwrap_or(0),
    };
    let merged = LevelResult {
        concurrency: levels.iter().map(|r| r.concurrency).sum(),
        rate: sum_rates(levels.iter().map(|r| r.rate)),
        requests: levels.iter().map(|r| r.requests).sum(),
        ok: levels.iter().map(|r| r.ok).sum(),
        bytes: levels.iter().map(|r| r.bytes).sum(),
        // The span `requests` were made in (first start to last end), so
        // `requests / elapsed_ns` is a rate over one span; the headline
        // rate is over the common interval only (`ok_per_s_within_common`).
        elapsed_ns: span.len_ns(),
        requests_per_s: record.ok_per_s_within_common,
        mb_per_s: record.bytes_within / 1e6 / len_s,
        latency: latency.summary(),
        errors,
        open_loop: open_loop(&files, &levels)?,
        error_events,
        error_events_dropped,
        histogram: Some(latency.encode()),
        wall: Some(span),
        timeline: None,
        stopped_early: None,
        cut_at_end: levels.iter().map(|r| r.cut_at_end).sum(),
        // On the clock of the spans above; per process in the record.
        server_clock: None,
        scheduled_unix_ns: None,
    };
    Ok((merged, record))
}

/// How far to move each process's span of a level to place it on the
/// server's clock: by its measured offset, when every process loaded the
/// same one server and knows its offset to it within [`ALIGN_WITHIN_NS`];
/// else None (each span stays on its machine's clock).
fn server_clock_shifts(inputs: &[Input], levels: &[&LevelResult]) -> Option<Vec<i64>> {
    let servers = &inputs[0].tables.servers;
    if servers.len() != 1 || inputs.iter().any(|i| &i.tables.servers != servers) {
        return None;
    }
    levels
        .iter()
        .map(|r| {
            r.server_clock
                .filter(|o| o.half_width_ns() <= ALIGN_WITHIN_NS)
                .map(|o| o.mid_ns())
        })
        .collect()
}

/// "the clocks of X and Y differ by at least N s (...)" when the server's
/// Date headers, as each process bounded its offset (`clocks`, in the order
/// of `inputs`), show two machines' clocks differ by more than
/// [`ALIGN_WITHIN_NS`]; else None.
fn clocks_apart(
    inputs: &[Input],
    clocks: impl IntoIterator<Item = Option<ClockOffset>>,
) -> Option<String> {
    let known: Vec<(&str, ClockOffset)> = inputs
        .iter()
        .zip(clocks)
        .filter_map(|(i, c)| Some((i.file, c?)))
        .collect();
    // The least the offsets of a pair can differ by, over every pair.
    let (a, b, apart) = known
        .iter()
        .flat_map(|a| known.iter().map(move |b| (a, b)))
        .map(|(a, b)| (a.0, b.0, a.1.low_ns - b.1.high_ns))
        .max_by_key(|&(_, _, apart)| apart)?;
    (apart > ALIGN_WITHIN_NS).then(|| {
        format!(
            "the clocks of {a} and {b} differ by at least {:.3} s (the server's Date headers say)",
            apart as f64 / 1e9
        )
    })
}

/// The sum of one histogram of every level: the distribution of all their
/// requests together.
fn union(
    files: &[&str],
    levels: &[&LevelResult],
    histogram: impl for<'r> Fn(&'r LevelResult) -> Option<&'r EncodedHistogram>,
) -> Result<Latencies> {
    let mut all = Latencies::new();
    for (file, r) in files.iter().zip(levels) {
        let h = histogram(r).expect("checked mergeable");
        let decoded = h.decode().map_err(|e| {
            Error::usage(format!(
                "{file}: level -c {}: {e}; give the result as load wrote it",
                r.concurrency
            ))
        })?;
        all.merge(&decoded);
    }
    Ok(all)
}

/// Every process's failures, timed from the earliest start, in time order
/// (at most [`ERROR_EVENTS_KEPT`]), and how many times were not kept.
fn error_events(
    levels: &[&LevelResult],
    walls: &[WallSpan],
    total: u64,
) -> (Vec<crate::result::load::ErrorEvent>, u64) {
    let first = walls.iter().map(|w| w.start_unix_ns).min().unwrap_or(0);
    let mut events: Vec<_> = levels
        .iter()
        .zip(walls)
        .flat_map(|(r, w)| {
            let shift = w.start_unix_ns - first;
            r.error_events.iter().map(move |e| {
                let mut e = *e;
                e.at_ns = e.at_ns.saturating_add(shift);
                e
            })
        })
        .collect();
    events.sort_by_key(|e| e.at_ns);
    events.truncate(ERROR_EVENTS_KEPT);
    let dropped = total.saturating_sub(events.len() as u64);
    (events, dropped)
}

/// Open loop: the schedules added up (targets, due, sent, not sent,
/// achieved rates) and the send lag and service time of every request
/// together; a warning naming each process that fell behind or left any
/// due request unsent.
fn open_loop(files: &[&str], levels: &[&LevelResult]) -> Result<Option<OpenLoopStats>> {
    let stats: Vec<&OpenLoopStats> = levels.iter().filter_map(|r| r.open_loop.as_ref()).collect();
    if stats.len() != levels.len() {
        return Ok(None);
    }
    let lag = union(files, levels, |r| {
        r.open_loop.as_ref()?.send_lag_histogram.as_ref()
    })?;
    let service = union(files, levels, |r| {
        r.open_loop.as_ref()?.service_time_histogram.as_ref()
    })?;
    let behind: Vec<String> = files
        .iter()
        .zip(&stats)
        .filter(|(_, o)| o.warning.is_some() || o.not_sent > 0)
        .map(|(f, o)| {
            let mut text = format!(
                "{f} achieved {:.0} of {} req/s",
                o.achieved_per_s, o.target_per_s
            );
            if o.not_sent > 0 {
                text.push_str(&format!(", {}", o.not_sent_text()));
            }
            text
        })
        .collect();
    let mut merged = OpenLoopStats {
        target_per_s: stats.iter().map(|o| o.target_per_s).sum(),
        due: stats.iter().map(|o| o.due).sum(),
        sent: stats.iter().map(|o| o.sent).sum(),
        not_sent: stats.iter().map(|o| o.not_sent).sum(),
        not_sent_share: 0.0,
        // The union holds every unsent request only when each process's
        // histogram held its own (results of an older blobbench did not).
        latency_includes_not_sent: stats
            .iter()
            .all(|o| o.latency_includes_not_sent || o.not_sent == 0),
        achieved_per_s: stats.iter().map(|o| o.achieved_per_s).sum(),
        send_lag: lag.summary(),
        service_time: service.summary(),
        send_lag_histogram: Some(lag.encode()),
        service_time_histogram: Some(service.encode()),
        warning: None,
    };
    merged.not_sent_share = merged.not_sent_share();
    let unsent = match (merged.not_sent, merged.latency_includes_not_sent) {
        (0, _) => String::new(),
        (_, true) => format!(
            "{}, each counted in the response-time percentiles at its wait until its \
             process's level ended; ",
            merged.not_sent_text()
        ),
        (_, false) => format!(
            "{}, left out of the response-time percentiles by a process's older blobbench \
             (the tail is flattered); ",
            merged.not_sent_text()
        ),
    };
    merged.warning = (!behind.is_empty()).then(|| {
        format!(
            "{unsent}generator behind in {} of {} processes ({}); raise -c or lower --rate there",
            behind.len(),
            stats.len(),
            behind.join(", ")
        )
    });
    Ok(Some(merged))
}

/// A warning when the processes overlapped for less than half of the
/// longest run: most of their load was not simultaneous.
fn overlap_warning(record: &LevelMerge, concurrency: usize) -> Option<String> {
    let longest = record.processes.iter().map(|p| p.wall.len_ns()).max()?;
    let share = record.common.len_ns() as f64 / longest.max(1) as f64;
    (share < LOW_OVERLAP).then(|| {
        format!(
            "-c {concurrency}: the processes ran together for only {:.0}% of the longest run; \
             throughput counts that interval alone: start them closer together",
            share * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ResultKind;
    use crate::result::load::{Order, TIMELINE_BUCKET_NS};

    const T0: u64 = 1_700_000_000_000_000_000;
    const MS: u64 = 1_000_000;

    /// A closed-loop level of `c` connections that ran `len_ms` from
    /// `start`, completing `per_bucket` requests of 1000 bytes in every
    /// 100 ms bucket, each taking `latency_ns`.
    fn level(c: usize, start: u64, len_ms: u64, per_bucket: u64, latency_ns: u64) -> LevelResult {
        let mut timeline = Timeline::new(TIMELINE_BUCKET_NS);
        let mut lat = Latencies::new();
        for b in 0..len_ms / 100 {
            for k in 0..per_bucket {
                timeline.record(b * 100 * MS + k * MS, 1000);
                lat.record(latency_ns + k);
            }
        }
        let ok = lat.count();
        LevelResult {
            concurrency: c,
            rate: None,
            requests: ok + 1,
            ok,
            bytes: ok * 1000,
            elapsed_ns: len_ms * MS,
            requests_per_s: ok as f64 / (len_ms as f64 / 1000.0),
            mb_per_s: 0.0,
            latency: lat.summary(),
            errors: Errors {
                timeout: 1,
                ..Errors::default()
            },
            open_loop: None,
            error_events: vec![crate::result::load::ErrorEvent {
                at_ns: 10 * MS,
                kind: crate::result::load::ErrorKind::Timeout,
            }],
            error_events_dropped: 0,
            cut_at_end: 0,
            server_clock: None,
            scheduled_unix_ns: None,
            stopped_early: None,
            histogram: Some(lat.encode()),
            wall: Some(WallSpan {
                start_unix_ns: start,
                end_unix_ns: start + len_ms * MS,
            }),
            timeline: Some(timeline),
        }
    }

    fn tables(levels: Vec<LevelResult>) -> LoadTables {
        LoadTables {
            levels,
            urls: 10,
            order: Order::Random,
            rate: None,
            url_digest: Some("00112233aabbccdd".into()),
            servers: vec!["127.0.0.1:8080".into()],
            merged: None,
        }
    }

    fn input<'a>(file: &'a str, t: &'a LoadTables) -> Input<'a> {
        Input {
            file,
            hostname: "host",
            started_at: "2026-01-01T00:00:00Z",
            tables: t,
        }
    }

    fn usage(r: Result<Merged>) -> String {
        match r {
            Err(Error::Usage(m)) => m,
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn summed_histograms_give_the_percentiles_of_the_union() {
        let a = tables(vec![level(2, T0, 2000, 30, 1_000_000)]);
        let b = tables(vec![level(2, T0 + MS, 2000, 10, 9_000_000)]);
        let m = merge(&[input("a.json", &a), input("b.json", &b)]).unwrap();
        let l = &m.tables.levels[0];
        // What one histogram of every request would say.
        let mut all = Latencies::new();
        for h in [&a.levels[0], &b.levels[0]] {
            all.merge(&h.histogram.as_ref().unwrap().decode().unwrap());
        }
        assert_eq!(l.latency, all.summary());
        assert_eq!(l.latency.count, 600 + 200);
        // 3 of 4 requests took about 1 ms, so the median is one of them and
        // the 90th percentile one of the slow ones: no average of the two
        // processes' percentiles gives that.
        assert!((1_000_000..1_001_000).contains(&l.latency.p50_ns), "{l:?}");
        assert!(l.latency.p90_ns >= 9_000_000, "{l:?}");
        assert_eq!((l.ok, l.requests, l.errors.timeout), (800, 802, 2));
        assert_eq!(l.concurrency, 4);
        assert_eq!(l.error_events.len(), 2);
        let record = m.tables.merged.unwrap();
        assert_eq!(record.sources.len(), 2);
        assert_eq!(record.levels[0].concurrency_each, 2);
    }

    #[test]
    fn throughput_is_counted_over_the_common_interval() {
        // a runs 0..2 s, b 0.5..2.5 s: both ran from 0.5 to 2 s.
        let a = tables(vec![level(1, T0, 2000, 10, 1000)]);
        let b = tables(vec![level(1, T0 + 500 * MS, 2000, 10, 1000)]);
        let m = merge(&[input("a.json", &a), input("b.json", &b)]).unwrap();
        let r = &m.tables.merged.as_ref().unwrap().levels[0];
        assert_eq!(r.common.start_unix_ns, T0 + 500 * MS);
        assert_eq!(r.common.end_unix_ns, T0 + 2000 * MS);
        // 15 buckets of 10 requests each, from each process.
        assert_eq!(r.ok_within, 300.0);
        assert_eq!(r.ok_within_bounds, [300, 300]);
        assert_eq!(r.bytes_within, 300_000.0);
        let l = &m.tables.levels[0];
        assert!((l.requests_per_s - 200.0).abs() < 1e-9, "{l:?}");
        assert!((l.mb_per_s - 0.2).abs() < 1e-9, "{l:?}");
        // elapsed_ns is the span of every request (0 to 2.5 s), the rate's
        // span is in its name.
        assert_eq!(l.elapsed_ns, 2500 * MS);
        assert!((r.ok_per_s_within_common - l.requests_per_s).abs() < 1e-9);
        let outside: Vec<u64> = r.processes.iter().map(|p| p.outside_ns).collect();
        assert_eq!(outside, [500 * MS, 500 * MS]);
        // Each ran 1.5 of 2 s together: no warning.
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    }

    #[test]
    fn a_bucket_the_interval_cuts_counts_by_its_share() {
        // b starts 550 ms after a: a's bucket 0.5..0.6 s and b's last
        // bucket in common (1.95..2.05 s) are each cut in half.
        let wall_a = WallSpan {
            start_unix_ns: T0,
            end_unix_ns: T0 + 2000 * MS,
        };
        let common = WallSpan {
            start_unix_ns: T0 + 550 * MS,
            end_unix_ns: T0 + 2000 * MS,
        };
        let a = level(1, T0, 2000, 10, 1000);
        let got = within(&wall_a, a.timeline.as_ref().unwrap(), &common);
        assert_eq!(got.ok, 145.0);
        assert_eq!((got.ok_min, got.ok_max), (140, 150));
        // The bucket cut by the level's end counts up to the end only.
        let short = WallSpan {
            start_unix_ns: T0,
            end_unix_ns: T0 + 1950 * MS,
        };
        let cut = WallSpan {
            start_unix_ns: T0 + 1925 * MS,
            end_unix_ns: T0 + 1950 * MS,
        };
        let mut t = Timeline::new(TIMELINE_BUCKET_NS);
        for _ in 0..10 {
            t.record(1920 * MS, 7);
        }
        let got = within(&short, &t, &cut);
        assert_eq!(got.ok, 5.0, "25 of the bucket's 50 ms");
        assert_eq!(got.bytes, 35.0);
        assert_eq!(
            common_interval(&[wall_a, short, cut]),
            Some(cut),
            "latest start, earliest end"
        );
    }

    /// `level` run open loop at `rate` req/s, its sends `lag_ns` late;
    /// `behind`, 40 of its 100 due requests were not sent and are in its
    /// histogram at 500 ms each.
    fn open(start: u64, rate: f64, lag_ns: u64, behind: bool) -> LevelResult {
        let mut r = level(2, start, 1000, 10, 100_000);
        let mut lag = Latencies::new();
        let mut service = Latencies::new();
        for k in 0..r.ok {
            lag.record(lag_ns + k);
            service.record(90_000 + k);
        }
        if behind {
            let mut all = r.histogram.as_ref().unwrap().decode().unwrap();
            for _ in 0..40 {
                all.record(500_000_000);
            }
            r.latency = all.summary();
            r.histogram = Some(all.encode());
        }
        r.rate = Some(rate);
        r.open_loop = Some(OpenLoopStats {
            target_per_s: rate,
            due: 100,
            sent: if behind { 60 } else { 100 },
            not_sent: if behind { 40 } else { 0 },
            not_sent_share: if behind { 0.4 } else { 0.0 },
            latency_includes_not_sent: true,
            achieved_per_s: if behind { 60.0 } else { 100.0 },
            send_lag: lag.summary(),
            service_time: service.summary(),
            send_lag_histogram: Some(lag.encode()),
            service_time_histogram: Some(service.encode()),
            warning: behind.then(|| "behind".to_string()),
        });
        r
    }

    #[test]
    fn open_loop_schedules_add_up() {
        let mut a = tables(vec![open(T0, 100.0, 1_000, false)]);
        let mut b = tables(vec![open(T0 + MS, 100.0, 50_000, true)]);
        a.rate = Some(100.0);
        b.rate = Some(100.0);
        let m = merge(&[input("a.json", &a), input("b.json", &b)]).unwrap();
        assert_eq!(m.tables.rate, Some(200.0));
        let l = &m.tables.levels[0];
        assert_eq!(l.rate, Some(200.0));
        let o = l.open_loop.as_ref().unwrap();
        assert_eq!(
            (o.target_per_s, o.due, o.sent, o.not_sent),
            (200.0, 200, 160, 40)
        );
        assert_eq!(o.achieved_per_s, 160.0);
        // Half the sends were about 1 µs late, half about 50 µs.
        assert_eq!(o.send_lag.count, 200);
        assert!(
            o.send_lag.p90_ns >= 50_000 && o.send_lag.min_ns < 1_100,
            "{o:?}"
        );
        assert_eq!(o.service_time.count, 200);
        // b's 40 requests not sent are in the union's tail, at their wait.
        assert_eq!(l.latency.count, 100 + 100 + 40, "{l:?}");
        assert!(l.latency.p90_ns >= 500_000_000, "{l:?}");
        assert!(o.latency_includes_not_sent);
        assert_eq!(o.not_sent_share, 0.2);
        let w = o.warning.as_deref().unwrap();
        assert!(
            w.starts_with("40 of 200 due requests (20%) not sent, each counted in the")
                && w.contains(
                    "1 of 2 processes (b.json achieved 60 of 100 req/s, \
                     40 of 100 due requests (40%) not sent)"
                ),
            "{w}"
        );
        assert!(
            m.warnings.iter().any(|x| x.starts_with("-c 4: 40 of 200")),
            "merge warns on the terminal too: {:?}",
            m.warnings
        );
        // One request unsent, in a process that otherwise kept up, is
        // warned about all the same; and a process whose older blobbench
        // kept its unsent requests out of its histogram makes the union's
        // percentiles say so.
        let mut c = tables(vec![open(T0 + 2 * MS, 100.0, 1_000, false)]);
        c.rate = Some(100.0);
        let co = c.levels[0].open_loop.as_mut().unwrap();
        (co.sent, co.not_sent, co.latency_includes_not_sent) = (99, 1, false);
        let m = merge(&[input("a.json", &a), input("c.json", &c)]).unwrap();
        let o = m.tables.levels[0].open_loop.as_ref().unwrap();
        assert_eq!((o.not_sent, o.latency_includes_not_sent), (1, false));
        let w = o.warning.as_deref().unwrap();
        assert!(
            w.starts_with("1 of 200 due requests (0.50%) not sent, left out of")
                && w.contains("(c.json achieved 100 of 100 req/s, 1 of 100 due requests"),
            "{w}"
        );
        // Closed loop beside open loop does not merge.
        let closed = tables(vec![level(2, T0, 1000, 10, 1000)]);
        let e = usage(merge(&[input("a.json", &a), input("c.json", &closed)]));
        assert!(
            e.starts_with("c.json: closed loop but a.json ran open loop"),
            "{e}"
        );
    }

    #[test]
    fn runs_that_never_overlap_are_refused() {
        let a = tables(vec![level(1, T0, 2000, 10, 1000)]);
        let b = tables(vec![level(1, T0 + 2000 * MS, 2000, 10, 1000)]);
        let m = usage(merge(&[input("a.json", &a), input("b.json", &b)]));
        assert!(m.contains("never ran at the same time"), "{m}");
        assert!(
            m.contains("a.json from") && m.contains("b.json from"),
            "{m}"
        );
        // Barely overlapping: merged, with a warning.
        let c = tables(vec![level(1, T0 + 1500 * MS, 2000, 10, 1000)]);
        let merged = merge(&[input("a.json", &a), input("c.json", &c)]).unwrap();
        assert_eq!(merged.warnings.len(), 1, "{:?}", merged.warnings);
        assert!(merged.warnings[0].contains("25%"), "{:?}", merged.warnings);
    }

    #[test]
    fn results_that_do_not_line_up_are_refused() {
        let a = tables(vec![level(1, T0, 2000, 10, 1000)]);
        let two = tables(vec![
            level(1, T0, 2000, 10, 1000),
            level(2, T0 + 2000 * MS, 2000, 10, 1000),
        ]);
        let m = usage(merge(&[input("a.json", &a), input("b.json", &two)]));
        assert!(
            m.starts_with("b.json: levels -c 1,2 but a.json has -c 1"),
            "{m}"
        );
        let mut other_urls = a.clone();
        other_urls.url_digest = Some("ffff".into());
        let m = usage(merge(&[input("a.json", &a), input("b.json", &other_urls)]));
        assert!(m.contains("same URL list"), "{m}");
        let mut old = a.clone();
        old.levels[0].histogram = None;
        let m = usage(merge(&[input("a.json", &a), input("old.json", &old)]));
        assert!(
            m.starts_with("old.json: ") && m.contains("rerun the load"),
            "{m}"
        );
        let m = usage(merge(&[input("a.json", &a)]));
        assert!(m.contains("two or more"), "{m}");
        let m = usage(merge(&[input("a.json", &a), input("b.json", &a)]));
        assert!(m.starts_with("b.json: the same load as a.json"), "{m}");
        let b = tables(vec![level(1, T0 + MS, 2000, 10, 1000)]);
        let merged = merge(&[input("a.json", &a), input("b.json", &b)]).unwrap();
        let m = usage(merge(&[
            input("a.json", &a),
            input("m.json", &merged.tables),
        ]));
        assert!(m.starts_with("m.json: already a merge of 2"), "{m}");
        let doc = ResultDocument::new(
            ResultKind::Run,
            crate::measure::environment::Environment::default(),
            Tables::Other(serde_json::Value::Null),
        );
        let e = Input::of("run.json", &doc).unwrap_err().to_string();
        assert!(
            e.contains("run.json: a \"run\" result, not a load result"),
            "{e}"
        );
    }
}
