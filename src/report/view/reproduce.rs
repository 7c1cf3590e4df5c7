//! `reproduce` in a report: the ledger at the top (per document, each
//! claim's verdict, this machine's figure, the document's, and the claim's
//! words), the experiments with their scale and full-scale command; each
//! experiment's own result follows as a section of its own
//! (`report::sections`). Several machines' ledgers become one table of
//! claims x machines.

use super::{DataTable, Section};
use crate::result::ResultDocument;
use crate::result::reproduce::ReproduceTables;

/// The ledger's section: summary, one table per document, the experiments.
pub fn reproduce(t: &ReproduceTables, s: &mut Section) {
    let [holds, not, inconclusive, not_run] = t.counts();
    s.summary.push(format!(
        "{} claims of the five documents at {} scale: {holds} hold, {not} do not hold, \
{inconclusive} inconclusive, {not_run} not run.",
        t.ledger.len(),
        t.scale
    ));
    s.summary.push(t.verdict_rule.clone());
    for n in &t.not_given {
        s.summary.push(format!("not given: {n}"));
    }
    for (doc, title) in t.documents() {
        let mut table = DataTable::new(
            &format!("ledger-{doc}"),
            format!("{doc} {title}"),
            &[
                "claim", "verdict", "here", "rule", "document", "where", "words",
            ],
        );
        for c in t.ledger.iter().filter(|c| c.document == doc) {
            table.rows.push(vec![
                c.id.clone(),
                c.verdict.as_str().into(),
                c.measured_text.clone(),
                c.rule.clone(),
                c.published.clone(),
                c.place.clone(),
                c.words.clone(),
            ]);
        }
        s.tables.push(table);
    }
    let mut how = DataTable::new(
        "ledger-figures",
        "How each figure here is computed",
        &[
            "claim",
            "figure",
            "experiment",
            "scale here",
            "rerun at the documents' scale",
        ],
    );
    for c in &t.ledger {
        how.rows.push(vec![
            c.id.clone(),
            c.figure.clone(),
            c.experiment.clone(),
            c.scale.clone(),
            c.rerun.clone(),
        ]);
    }
    s.tables.push(how);
    let mut experiments = DataTable::new(
        "experiments",
        "Experiments",
        &[
            "experiment",
            "documents",
            "status",
            "took",
            "scale here",
            "documents' scale",
        ],
    );
    for e in &t.experiments {
        experiments.rows.push(vec![
            e.experiment.clone(),
            e.documents.clone(),
            e.status_text(),
            format!("{:.0} s", e.seconds),
            e.scale.clone(),
            e.full_scale.clone(),
        ]);
    }
    s.tables.push(experiments);
}

/// The ledgers of two or more machines as one table: a row per claim, a
/// column per machine (its verdict and figure). None for fewer than two.
pub fn machines(docs: &[(ResultDocument, String)]) -> Option<Section> {
    let runs: Vec<(&ResultDocument, &ReproduceTables, &str)> =
        super::side_by_side(docs, |t| match t {
            crate::result::Tables::Reproduce(t) => Some(t),
            _ => None,
        })?;
    let labels: Vec<String> = runs
        .iter()
        .map(|(doc, _, source)| format!("{} ({source})", doc.environment.hostname))
        .collect();
    let mut headers: Vec<&str> = vec!["claim", "document"];
    headers.extend(labels.iter().map(String::as_str));
    let mut table = DataTable::new(
        "machines",
        "Each claim's verdict and figure, per machine",
        &headers,
    );
    let mut ids: Vec<(&str, &str)> = Vec::new();
    for (_, t, _) in &runs {
        for c in &t.ledger {
            if !ids.iter().any(|(id, _)| *id == c.id) {
                ids.push((&c.id, &c.published));
            }
        }
    }
    for (id, published) in ids {
        let mut row = vec![id.to_string(), published.to_string()];
        for (_, t, _) in &runs {
            row.push(t.claim(id).map_or("absent".into(), |c| {
                format!("{}: {}", c.verdict.as_str(), c.measured_text)
            }));
        }
        table.rows.push(row);
    }
    let mut summary = Vec::new();
    for (label, (_, t, _)) in labels.iter().zip(&runs) {
        let [h, n, i, r] = t.counts();
        summary.push(format!(
            "{label}: {h} hold, {n} do not hold, {i} inconclusive, {r} not run ({} scale)",
            t.scale
        ));
    }
    let docs: Vec<(&ResultDocument, &str)> = runs.iter().map(|r| (r.0, r.2)).collect();
    let mut s = super::machines_section(
        "reproduce-machines",
        "reproduce: the ledger, machines side by side",
        &docs,
        &labels,
    );
    s.summary = summary;
    s.tables.push(table);
    Some(s)
}
