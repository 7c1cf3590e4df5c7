//! `reproduce` for the terminal: the ledger, document by document (the
//! document's figure, this machine's with its interval, the rule and the
//! verdict), the experiments with their scale and the command that reruns
//! each at the documents' scale, and the verdict rule; and two ledgers
//! side by side for `compare`, claims whose verdict differs first.

use std::fmt::Write as _;

use crate::report::table::Table;
use crate::result::reproduce::{ClaimRow, ReproduceTables};

/// The whole ledger as `reproduce` prints it.
pub fn render(t: &ReproduceTables) -> String {
    let mut out = String::new();
    let [holds, not, inconclusive, not_run] = t.counts();
    let _ = writeln!(
        out,
        "\nreproduce: {} claims of the five documents at {} scale: {holds} hold, {not} do not hold, \
{inconclusive} inconclusive, {not_run} not run",
        t.ledger.len(),
        t.scale
    );
    for (doc, title) in t.documents() {
        let _ = writeln!(out, "\n{doc} {title}");
        // The document's words and a list of sizes can run long: they wrap.
        let mut table = Table::new(["claim", "document", "here", "rule", "verdict"])
            .left_aligned()
            .wrap_column(1, 56)
            .wrap_column(2, 44);
        for c in t.ledger.iter().filter(|c| c.document == doc) {
            table.row([
                c.id.clone(),
                c.published.clone(),
                c.measured_text.clone(),
                c.rule.clone(),
                c.verdict.as_str().to_string(),
            ]);
        }
        out.push_str(&table.render());
    }
    out.push_str(&experiments(t));
    let _ = writeln!(out, "\n{}", t.verdict_rule);
    if !t.not_given.is_empty() {
        let _ = writeln!(out, "not given (their claims are not run):");
        for n in &t.not_given {
            let _ = writeln!(out, "  {n}");
        }
    }
    let _ = writeln!(
        out,
        "budget {}, took {}; each claim's words and figure: `blobbench report reproduce.json`",
        humantime::format_duration(std::time::Duration::from_secs(t.budget_seconds as u64)),
        humantime::format_duration(std::time::Duration::from_secs(t.seconds as u64))
    );
    out
}

/// The experiments: status, scale, time and the full-scale command.
fn experiments(t: &ReproduceTables) -> String {
    let mut table = Table::new([
        "experiment",
        "documents",
        "status",
        "scale here",
        "took",
        "documents' scale",
    ]);
    for e in &t.experiments {
        table.row([
            e.experiment.clone(),
            e.documents.clone(),
            e.status_text(),
            e.scale.clone(),
            format!("{:.0} s", e.seconds),
            e.full_scale.clone(),
        ]);
    }
    format!("\nexperiments\n{}", table.render())
}

/// Two ledgers side by side: the claims whose verdict differs first, then
/// the others, each with both figures.
pub fn compare(before: &ReproduceTables, after: &ReproduceTables) -> String {
    let rows = pairs(before, after);
    let differs = rows.iter().filter(|r| r.differs).count();
    let mut out = format!(
        "\nreproduce: {differs} of {} claims differ in verdict (listed first)\n",
        rows.len()
    );
    let mut table =
        Table::new(["claim", "before", "verdict", "after", "verdict", ""]).left_aligned();
    for r in rows {
        table.row([
            r.id,
            r.before.0,
            r.before.1,
            r.after.0,
            r.after.1,
            if r.differs {
                "differs".into()
            } else {
                String::new()
            },
        ]);
    }
    out.push_str(&table.render());
    out
}

/// One claim in two ledgers.
struct Pair {
    id: String,
    before: (String, String),
    after: (String, String),
    differs: bool,
}

fn pairs(before: &ReproduceTables, after: &ReproduceTables) -> Vec<Pair> {
    let cell = |c: Option<&ClaimRow>| {
        c.map_or(("-".into(), "absent".into()), |c| {
            (c.measured_text.clone(), c.verdict.as_str().to_string())
        })
    };
    let mut ids: Vec<&str> = before.ledger.iter().map(|c| c.id.as_str()).collect();
    for c in &after.ledger {
        if !ids.contains(&c.id.as_str()) {
            ids.push(&c.id);
        }
    }
    let mut rows: Vec<Pair> = ids
        .into_iter()
        .map(|id| {
            let (b, a) = (before.claim(id), after.claim(id));
            Pair {
                id: id.to_string(),
                differs: b.map(|c| c.verdict) != a.map(|c| c.verdict),
                before: cell(b),
                after: cell(a),
            }
        })
        .collect();
    // Stable: the documents' order within each group.
    rows.sort_by_key(|r| !r.differs);
    rows
}
