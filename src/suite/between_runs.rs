//! Several independent runs in one invocation (`quick --runs K`), merged
//! into one result whose intervals are between the runs. Rounds inside one
//! run share its conditions (where the dataset's pages landed, the disk's
//! state, what else ran); a rerun differs by more than they reveal. Each
//! run here starts from a fresh dataset, and each figure is the median of
//! the runs' own figures, with the sign-test interval of the runs: the
//! between-run interval (Kalibera and Jones, "Rigorous benchmarking in
//! reasonable time", 2013: the variance lives between runs).

use crate::measure::estimate::{Estimate, between_runs};
use crate::measure::reference::MachineReference;
use crate::result::quick::{QuickEstimates, QuickRow};
use crate::result::{ResultDocument, Tables};

/// Merges K single-run quick results (in the order run) into one: every
/// run's runs, renamed "... (run k) (round r)"; each run's reference
/// probes, marked apart; the rows every run has, each figure the median of
/// the runs' figures with the interval between them. Sides that failed in
/// any run are failed in the whole.
pub fn merge_quick(docs: Vec<ResultDocument>) -> ResultDocument {
    let k = docs.len() as u64;
    let mut merged = docs[0].clone();
    merged.runs.clear();
    let mut reference = MachineReference::default();
    let mut stopping = Vec::new();
    let mut failed = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let tag = format!(" (run {})", i + 1);
        merged.runs.extend(doc.runs.iter().cloned().map(|mut r| {
            r.name = match r.name.rfind(" (round ") {
                Some(at) => format!("{}{tag}{}", &r.name[..at], &r.name[at..]),
                None => format!("{}{tag}", r.name),
            };
            r
        }));
        if let Some(r) = &doc.environment.reference {
            reference.append_run(r);
        }
        if let Tables::Quick(t) = &doc.tables {
            stopping.extend(t.stopping.clone());
            for f in &t.failed {
                if !failed
                    .iter()
                    .any(|g: &crate::result::faults::SystemFailure| g.system == f.system)
                {
                    failed.push(f.clone());
                }
            }
        }
    }
    merged.environment.reference = (!reference.cpu_ns.is_empty()).then_some(reference);
    let tables: Vec<&crate::result::quick::QuickTables> = docs
        .iter()
        .filter_map(|d| match &d.tables {
            Tables::Quick(t) => Some(t),
            _ => None,
        })
        .collect();
    if let Tables::Quick(t) = &mut merged.tables {
        t.quick = rows_between(&tables);
        t.rounds = tables.iter().map(|t| t.rounds).max().unwrap_or(0);
        t.stopping = None;
        t.between_runs = Some(k);
        t.run_stopping = stopping;
        t.failed = failed;
    }
    merged
}

/// The rows every run has, each figure between the runs.
fn rows_between(tables: &[&crate::result::quick::QuickTables]) -> Vec<QuickRow> {
    let Some(first) = tables.first() else {
        return Vec::new();
    };
    first
        .quick
        .iter()
        .filter_map(|row| {
            let same: Vec<QuickEstimates> = tables
                .iter()
                .map(|t| {
                    t.quick
                        .iter()
                        .find(|r| r.case == row.case)
                        .map(|r| r.estimates(t.rounds))
                })
                .collect::<Option<_>>()?;
            let of = |f: fn(&QuickEstimates) -> Estimate| -> Estimate {
                between_runs(&same.iter().map(|e| f(e).value).collect::<Vec<_>>())
            };
            let optional = |f: fn(&QuickEstimates) -> Option<Estimate>| -> Option<Estimate> {
                let v: Option<Vec<f64>> = same.iter().map(|e| f(e).map(|x| x.value)).collect();
                v.map(|v| between_runs(&v))
            };
            let e = QuickEstimates {
                db_ns_per_op: of(|e| e.db_ns_per_op),
                dir_ns_per_op: of(|e| e.dir_ns_per_op),
                tree_ns_per_op: of(|e| e.tree_ns_per_op),
                dir_over_db: of(|e| e.dir_over_db),
                tree_over_db: of(|e| e.tree_over_db),
                s3_ns_per_op: optional(|e| e.s3_ns_per_op),
                s3_over_db: optional(|e| e.s3_over_db),
            };
            Some(QuickRow::of(row.case.clone(), row.detail.clone(), e))
        })
        .collect()
}
