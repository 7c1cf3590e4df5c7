//! How a concurrent run (`run --threads/--mix`) is shown: what ran, then one
//! row per kind of operation with its rate, tails and outcomes.

use super::{DataTable, Section, ns};
use crate::result::concurrent::ConcurrentTables;

/// The summary lines and the per-kind table.
pub(super) fn concurrent(t: &ConcurrentTables, s: &mut Section) {
    let p = &t.plan;
    s.summary.push(format!(
        "{} thread(s) on {} core(s), mix {}, keys {}, {} operation(s) per transaction; {:.0} operations/s in all.",
        p.threads,
        t.cores,
        p.mix,
        p.keys.describe(),
        p.batch,
        t.ops_per_s()
    ));
    let o = t.outcomes();
    s.summary.push(format!(
        "{} reads checked whole and legal; {} torn, {} stale; {} busy (rolled back), {} missing (deleted first).",
        t.verified, o.torn, o.stale, o.busy, o.missing
    ));
    s.summary.extend(t.notes.iter().cloned());
    let mut table = DataTable::new(
        "concurrent",
        "Per kind of operation",
        &[
            "operation",
            "done",
            "per s",
            "p50",
            "p99",
            "p99.9",
            "max",
            "busy",
            "missing",
            "torn",
            "stale",
        ],
    );
    for k in &t.kinds {
        let l = &k.latency;
        let g = |v: u64| ns(v as f64);
        table.rows.push(vec![
            k.name().to_string(),
            k.ops.to_string(),
            format!("{:.0}", k.per_s),
            g(l.p50_ns),
            g(l.p99_ns),
            g(l.p999_ns),
            g(l.max_ns),
            k.outcomes.busy.to_string(),
            k.outcomes.missing.to_string(),
            k.outcomes.torn.to_string(),
            k.outcomes.stale.to_string(),
        ]);
    }
    s.tables.push(table);
}
