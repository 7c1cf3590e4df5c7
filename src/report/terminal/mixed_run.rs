//! The terminal table of a mixed run: per kind of operation, how many
//! completed and how fast, p50/p99/p99.9, and every outcome that was not a
//! plain success (busy, missing, torn, stale).

use std::fmt::Write as _;

use crate::report::figures::{
    MIXED_RUN_FAILURE_HEADERS, MIXED_RUN_KIND_HEADERS, mixed_run_failure_rows, mixed_run_kind_cells,
};
use crate::report::table::Table;
use crate::result::mixed_run::MixedRunTables;
use crate::units::human_duration_ns;

/// The whole report, lines ending in "\n".
pub fn render(t: &MixedRunTables) -> String {
    let p = &t.plan;
    let mut out = String::new();
    let end = match (p.duration_ns, p.count) {
        (Some(d), Some(c)) => format!(
            "{} or {c} operations",
            humantime::format_duration(std::time::Duration::from_nanos(d))
        ),
        (Some(d), None) => {
            humantime::format_duration(std::time::Duration::from_nanos(d)).to_string()
        }
        (None, Some(c)) => format!("{c} operations"),
        (None, None) => "-".into(),
    };
    let lp = match p.rate {
        Some(r) => format!("open loop at {r} ops/s (latency from each operation's intended start)"),
        None => "closed loop".into(),
    };
    let per_transaction = if p.transactions {
        format!(", {} per transaction", p.batch)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{}: {} thread(s), mix {}{}, keys {}{per_transaction}, {end}, {lp}",
        p.target,
        p.threads,
        p.mix,
        p.workload
            .as_deref()
            .map(|w| format!(" (YCSB {w})"))
            .unwrap_or_default(),
        p.keys.describe(),
    );
    // A store without locks (files, S3) has no busy timeout to speak of.
    let _ = if p.transactions {
        writeln!(
            out,
            "writes: {}; busy timeout {}",
            p.writes,
            human_duration_ns(p.busy_timeout_ns as f64)
        )
    } else {
        writeln!(out, "writes: {}", p.writes)
    };
    let mut table = Table::new(MIXED_RUN_KIND_HEADERS);
    for k in &t.kinds {
        table.row(mixed_run_kind_cells(k));
    }
    out.push_str(&table.render());
    failures(t, &mut out);
    let _ = writeln!(
        out,
        "all operations: {:.0} per s over {}",
        t.ops_per_s(),
        human_duration_ns(t.elapsed_ns as f64)
    );
    if p.verify {
        let _ = writeln!(
            out,
            "reads checked: {} whole and legal{}; torn = bytes that are no version of the blob, stale = older than a version committed before the read began",
            t.verified,
            if t.unjudged > 0 {
                format!(
                    ", {} whole but their version not judged (more writes of the key during the read than are kept)",
                    t.unjudged
                )
            } else {
                String::new()
            }
        );
    }
    if t.lost > 0 {
        let _ = writeln!(
            out,
            "lost acknowledged writes: {} blob(s) hold a version their acknowledged writes do not allow; first: {}",
            t.lost,
            t.lost_first.as_deref().unwrap_or("")
        );
    }
    let _ = if p.transactions {
        writeln!(
            out,
            "busy = another connection held the lock past the busy timeout: the transaction was rolled back (counted, not fatal); missing = the key was deleted first"
        )
    } else {
        writeln!(out, "missing = the key was deleted first")
    };
    if let Some(s) = &t.schedule {
        let _ = writeln!(
            out,
            "schedule: asked {:.0}/s, started {:.0}/s, {} due but never started; start lag p50 {} p99 {}",
            s.target_per_s,
            s.achieved_per_s,
            s.not_started,
            human_duration_ns(s.start_lag.p50_ns as f64),
            human_duration_ns(s.start_lag.p99_ns as f64)
        );
    }
    if t.after.refilled > 0 || t.after.last_key > 0 {
        let _ = writeln!(
            out,
            "dataset after: keys {}..={}{}",
            t.after.first_key,
            t.after.last_key,
            if t.after.refilled > 0 {
                format!(
                    ", {} deleted (or not inserted) key(s) written back, untimed",
                    t.after.refilled
                )
            } else {
                String::new()
            }
        );
    }
    for n in &t.notes {
        let _ = writeln!(out, "note: {n}");
    }
    if let Some(c) = &t.cluster {
        for w in c.warnings() {
            let _ = writeln!(out, "warning: cluster: {w}");
        }
    }
    out
}

/// What failed, by kind and class, with the tails beside and without the
/// failures, the reconnections and an early stop; nothing when all went well.
fn failures(t: &MixedRunTables, out: &mut String) {
    let rows = mixed_run_failure_rows(t);
    if !rows.is_empty() {
        let mut table = Table::new(MIXED_RUN_FAILURE_HEADERS);
        for r in rows {
            table.row(r);
        }
        out.push_str(&table.render());
        let _ = writeln!(
            out,
            "failed = the operation did not succeed (timeout, lost connection, server error, ...): counted by class, the run went on; p50..max above are of the successful operations only"
        );
        for k in t.kinds.iter().filter(|k| k.failures.total() > 0) {
            if let (Some(f), Some(all)) = (&k.failed_latency, &k.latency_with_failures) {
                let d = |ns: u64| human_duration_ns(ns as f64);
                let _ = writeln!(
                    out,
                    "{}: failures took p50 {} max {}; with failures counted in, p50 {} p99 {} p99.9 {}",
                    k.name(),
                    d(f.p50_ns),
                    d(f.max_ns),
                    d(all.p50_ns),
                    d(all.p99_ns),
                    d(all.p999_ns)
                );
            }
        }
    }
    if !t.reconnects.is_empty() {
        let first = &t.reconnects[0];
        let _ = writeln!(
            out,
            "connections opened again after a failure: {} (first at {:.1} s, to {})",
            t.reconnects.len(),
            first.at_ns as f64 / 1e9,
            first.to
        );
    }
    if let Some(why) = &t.stopped_early {
        let _ = writeln!(out, "stopped early: {why}");
    }
}
