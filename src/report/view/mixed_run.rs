//! How a mixed run (`run --threads/--mix`) is shown: what ran, then one
//! row per kind of operation with its rate, tails and outcomes.

use super::{DataTable, Section};
use crate::report::figures::{
    MIXED_RUN_FAILURE_HEADERS, MIXED_RUN_KIND_HEADERS, mixed_run_failure_rows, mixed_run_kind_cells,
};
use crate::result::mixed_run::MixedRunTables;

/// The summary lines and the per-kind table.
pub(in crate::report) fn mixed_run(t: &MixedRunTables, s: &mut Section) {
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
    if t.lost > 0 {
        s.summary.push(format!(
            "Lost acknowledged writes: {} blob(s) hold a version their acknowledged writes do not allow (first: {}).",
            t.lost,
            t.lost_first.as_deref().unwrap_or("")
        ));
    }
    if let Some(line) = t.failures_line() {
        s.summary.push(format!(
            "Failed operations: {line} (counted, the run went on; latencies are of the successful operations)."
        ));
    }
    if let Some(why) = &t.stopped_early {
        s.summary.push(format!("Stopped early: {why}."));
    }
    if let Some(c) = &t.cluster {
        s.summary
            .extend(c.warnings().into_iter().map(|w| format!("Cluster: {w}.")));
    }
    s.summary.extend(t.notes.iter().cloned());
    let mut table = DataTable::new(
        "concurrent",
        "Per kind of operation",
        &MIXED_RUN_KIND_HEADERS,
    );
    for k in &t.kinds {
        table.rows.push(mixed_run_kind_cells(k));
    }
    s.tables.push(table);
    let failures = mixed_run_failure_rows(t);
    if !failures.is_empty() {
        let mut table = DataTable::new(
            "concurrent-failures",
            "Failed operations by class",
            &MIXED_RUN_FAILURE_HEADERS,
        );
        table.rows = failures;
        s.tables.push(table);
    }
}
