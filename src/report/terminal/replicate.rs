//! The terminal report of `suite replicate`: per arm (alone, with
//! Litestream) writes/s and p50/p99 write time with their intervals, the
//! with/alone ratios paired by round, what Litestream cost (CPU, bytes
//! uploaded, the replica's lag, the WAL it let grow), and the restore.
//! `rows` and `findings` are shared with the HTML view.

use std::fmt::Write as _;

use super::sweep::time_text;
use crate::measure::estimate::{Estimate, NOISY_ADVICE};
use crate::report::table::Table;
use crate::result::replicate::{Arm, ReplicateTables};
use crate::units::{human_bytes, human_duration_ns};

/// The table's headers.
pub(crate) const HEADERS: [&str; 5] = [
    "arm",
    "writes/s [interval]",
    "p50 write [interval]",
    "p99 write [interval]",
    "WAL peak",
];

/// The whole report, lines ending in "\n".
pub fn render(t: &ReplicateTables) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "blobbench suite replicate: {}", t.describe());
    let _ = writeln!(out, "{}: {}", t.target, t.writes);
    let _ = writeln!(
        out,
        "litestream {} -> {}, sync-interval {}",
        t.litestream.version,
        t.litestream.replica,
        human_duration_ns(t.litestream.sync_interval_ns as f64)
    );
    let mut table = Table::new(HEADERS);
    for row in rows(t) {
        table.row(row);
    }
    let _ = writeln!(out);
    out.push_str(&table.render());
    for line in findings(t) {
        let _ = writeln!(out, "{line}");
    }
    let noisy = [Arm::Alone, Arm::WithLitestream]
        .iter()
        .any(|&a| t.rate(a).noisy() || t.p99(a).noisy());
    if noisy {
        let _ = writeln!(out, "{NOISY_ADVICE}");
    }
    for line in t
        .stopping
        .iter()
        .flat_map(|r| r.lines("--max-rounds, --max-time"))
    {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// One row per arm, then the ratio with / alone (paired by round).
pub(crate) fn rows(t: &ReplicateTables) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = [Arm::Alone, Arm::WithLitestream]
        .iter()
        .map(|&a| {
            vec![
                a.name().to_string(),
                t.rate(a).format(0),
                time_text(&t.p50(a)),
                time_text(&t.p99(a)),
                human_bytes(t.wal_peak(a).value as u64),
            ]
        })
        .collect();
    rows.push(vec![
        "with / alone (paired)".into(),
        t.ratio(|r| r.writes_per_s).format_ratio(),
        t.ratio(|r| r.p50_ns as f64).format_ratio(),
        t.ratio(|r| r.p99_ns as f64).format_ratio(),
        t.ratio(|r| r.wal_peak_bytes.max(1) as f64).format_ratio(),
    ]);
    rows
}

/// What the numbers say, one sentence each: the cost, Litestream's own
/// work, what its checkpointing changed, the restore.
pub(crate) fn findings(t: &ReplicateTables) -> Vec<String> {
    let failure = failure_lines(t);
    if t.rounds.is_empty() {
        let mut out = vec!["no rounds were measured".to_string()];
        out.extend(failure);
        return out;
    }
    let mut out = failure;
    out.push(verdict(&t.ratio(|r| r.writes_per_s)));
    let upload = t.upload_per_written().map_or_else(
        || "its metrics did not say what it uploaded".to_string(),
        |u| {
            format!(
                "it uploaded {} byte(s) per byte of blobs written (round and catch-up)",
                u.format(2)
            )
        },
    );
    out.push(format!(
        "litestream: {} core(s) of CPU during the rounds; {upload}; the replica lagged {} behind the last write (litestream sync -wait); starting it and its first sync (a snapshot) took {}",
        t.litestream_cpu().format(2),
        time_text(&t.catch_up()),
        human_duration_ns(median(t.rounds.iter().map(|r| r.litestream.start_ns as f64)))
    ));
    if let Some(line) = deferred(t) {
        out.push(line);
    }
    out.push(format!(
        "checkpoints: Litestream holds a read transaction open so that no checkpoint restarts the WAL before it has copied the frames (the writers' automatic checkpoints can copy only frames older than its snapshot) and checkpoints the WAL itself; the WAL peaked at {} with it and {} alone, and {} was left to checkpoint after its rounds ({} alone: the last connection to close checkpoints it)",
        human_bytes(t.wal_peak(Arm::WithLitestream).value as u64),
        human_bytes(t.wal_peak(Arm::Alone).value as u64),
        human_bytes(median(t.rounds.iter().map(|r| r.with.wal_end_bytes as f64)) as u64),
        human_bytes(median(t.rounds.iter().map(|r| r.alone.wal_end_bytes as f64)) as u64),
    ));
    out.push(restore_line(t));
    out
}

/// How much of Litestream's work came after the rounds' last writes (its
/// catch-up), when that is most of it: the replica fell behind, so the
/// timed rounds saw only part of what replication costs.
fn deferred(t: &ReplicateTables) -> Option<String> {
    let cpu_round: u64 = t.rounds.iter().map(|r| r.litestream.cpu_ns).sum();
    let cpu_after: u64 = t.rounds.iter().map(|r| r.litestream.catch_up_cpu_ns).sum();
    let share = cpu_after as f64 / ((cpu_round + cpu_after) as f64).max(1.0);
    let bytes: Option<(u64, u64)> = t.rounds.iter().try_fold((0, 0), |(a, b), r| {
        Some((
            a + r.litestream.uploaded_bytes?,
            b + r.litestream.catch_up_bytes?,
        ))
    });
    let up_share = bytes.map(|(a, b)| b as f64 / ((a + b) as f64).max(1.0));
    (share > 0.5 || up_share.is_some_and(|u| u > 0.5)).then(|| {
        format!(
            "deferred: {:.0}% of Litestream's CPU time{} came after the rounds' last writes: the replica fell behind the writers, so the timed rounds carried only part of replication's cost; longer rounds (-t) show more of its steady state",
            share * 100.0,
            up_share
                .map(|u| format!(" and {:.0}% of its uploads", u * 100.0))
                .unwrap_or_default()
        )
    })
}

/// The cost in words, following the interval.
fn verdict(ratio: &Estimate) -> String {
    let r = ratio.format_ratio();
    if !ratio.has_interval() {
        format!("writes/s with litestream over alone: {r} (one round: no interval)")
    } else if ratio.high < 1.0 {
        format!(
            "writes/s with litestream over alone: {r}: replication costs the writers {:.0}% of their throughput",
            (1.0 - ratio.value) * 100.0
        )
    } else if ratio.low > 1.0 {
        format!("writes/s with litestream over alone: {r}: faster with it (see the lines below)")
    } else {
        format!("writes/s with litestream over alone: {r}: within noise")
    }
}

/// The restore check in one line.
/// What ended the suite early, and the bounds its waits had; nothing
/// when it ran to its end.
fn failure_lines(t: &ReplicateTables) -> Vec<String> {
    let Some(f) = &t.failure else {
        return Vec::new();
    };
    let l = &t.litestream;
    let secs = |ns: u64| crate::result::faults::seconds(std::time::Duration::from_nanos(ns));
    vec![
        format!(
            "FAILED {}; {} of {} rounds were measured before it and are kept below; nothing after it ran",
            f.describe(),
            t.rounds.len(),
            t.rounds_planned_text()
        ),
        format!(
            "waits on litestream were bounded: start/stop {}, each sync {}, the restore {} (--start-timeout, --sync-timeout, --restore-timeout)",
            secs(l.start_timeout_ns),
            secs(l.sync_timeout_ns),
            secs(l.restore_timeout_ns),
        ),
    ]
}

fn restore_line(t: &ReplicateTables) -> String {
    let Some(r) = &t.restore else {
        return if t.failure.is_some() {
            "restore: not run (the suite failed before it)".into()
        } else {
            "restore: not run".into()
        };
    };
    format!(
        "restore: after {} writes with litestream and {} of catch-up, litestream restore wrote {} in {}; {} of {} blobs are exactly the source's version{}; integrity_check {}: {}",
        r.writes,
        human_duration_ns(r.catch_up_ns as f64),
        human_bytes(r.restored_bytes),
        human_duration_ns(r.restore_ns as f64),
        r.matching,
        r.blobs,
        r.first_mismatch
            .as_deref()
            .map(|m| format!(" (first difference: {m})"))
            .unwrap_or_default(),
        r.integrity,
        if r.passed() { "PASSED" } else { "FAILED" }
    )
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = values.collect();
    if v.is_empty() {
        0.0
    } else {
        crate::measure::significance::median(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables of `n` rounds whose Litestream did `after` of its CPU time
    /// and uploads after the round.
    fn tables(n: usize, round: u64, after: u64) -> ReplicateTables {
        let arm = serde_json::json!({"writes_per_s": 100.0, "writes": 100, "written_bytes": 1000,
            "p50_ns": 1000, "p99_ns": 5000, "busy": 0, "wal_peak_bytes": 4096, "wal_end_bytes": 0});
        let round = serde_json::json!({"first": "alone", "alone": arm, "with": arm, "litestream": {
            "start_ns": 1, "cpu_ns": round, "uploaded_bytes": round, "catch_up_ns": 1,
            "catch_up_cpu_ns": after, "catch_up_bytes": after}});
        serde_json::from_value(serde_json::json!({
            "dataset": crate::dataset::DatasetSpec::fixed(10, 100, 1),
            "target": "sqlite:x.db", "writes": "", "threads": 1, "mix": "update=100",
            "keys": {"kind": "uniform"}, "round_ns": 1_000_000_000u64, "warmup": 0, "cores": 2,
            "litestream": {"version": "0.5.17", "replica": "s3://b/p", "sync_interval_ns": 1, "config": ""},
            "rounds": vec![round; n], "restore": null}))
        .unwrap()
    }

    #[test]
    fn work_left_for_the_catch_up_is_called_out_only_when_it_is_most_of_it() {
        let behind = render(&tables(3, 100, 300));
        assert!(
            behind.contains("deferred: 75% of Litestream's CPU time and 75% of its uploads"),
            "{behind}"
        );
        let kept_up = render(&tables(3, 300, 100));
        assert!(!kept_up.contains("deferred"), "{kept_up}");
        assert!(kept_up.contains("with / alone (paired)"), "{kept_up}");
        assert!(kept_up.contains("restore: not run"), "{kept_up}");
    }
}
