//! The terminal table of a `quick` result: per case the database's and the
//! files' time per operation, their ratios and the disk space, with the
//! lines that say how to read them.

use std::fmt::Write as _;

use crate::dataset::{DatasetSpec, SizeDistribution};
use crate::measure::estimate::notes;
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::result::quick::{QuickEstimates, QuickTables};
use crate::units::human_bytes;

/// The text `quick` prints: a header line, the table and its legend.
pub fn render(doc: &ResultDocument, t: &QuickTables) -> String {
    let spec = &t.dataset;
    let s3 = t.object_store.as_ref();
    let s3_column = t.has_object_store();
    // A failed side's cells say why, cut to a table's width (whole below).
    let failed_cell = |name: &str| {
        t.failure(name).map(|f| {
            let cell = f.cell();
            if cell.chars().count() > 40 {
                format!("{}...", cell.chars().take(37).collect::<String>())
            } else {
                cell
            }
        })
    };
    let mut headers = vec![
        "case",
        "db µs/op",
        "dir µs/op",
        "dir/db",
        "tree µs/op",
        "tree/db",
    ];
    if s3_column {
        headers.extend(["s3 µs/op", "s3/db"]);
    }
    let mut table = Table::new(headers);
    let estimates: Vec<QuickEstimates> = t.quick.iter().map(|r| r.estimates(t.rounds)).collect();
    for (r, e) in t.quick.iter().zip(&estimates) {
        let mut cells = vec![
            r.case.clone(),
            e.db_ns_per_op.scaled(1e-3).format(2),
            e.dir_ns_per_op.scaled(1e-3).format(2),
            e.dir_over_db.format_ratio(),
            e.tree_ns_per_op.scaled(1e-3).format(2),
            e.tree_over_db.format_ratio(),
        ];
        if let Some(cell) = failed_cell("s3") {
            cells.extend([cell, String::new()]);
        } else if s3.is_some() {
            let missing = || "-".to_string();
            cells.push(
                e.s3_ns_per_op
                    .map_or_else(missing, |x| x.scaled(1e-3).format(2)),
            );
            cells.push(e.s3_over_db.map_or_else(missing, |x| x.format_ratio()));
        }
        table.row(cells);
    }
    let space = t.space_bytes;
    let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
    let rel = |b: u64| format!("{:.2}", b as f64 / space.db as f64);
    let mut cells = vec![
        "disk space (MB, du)".to_string(),
        mb(space.db),
        mb(space.dir),
        rel(space.dir),
        mb(space.tree),
        rel(space.tree),
    ];
    if let Some(o) = s3 {
        cells.extend([mb(o.space_bytes), rel(o.space_bytes)]);
    } else if s3_column {
        cells.extend(["-".to_string(), "-".to_string()]);
    }
    table.row(cells);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "blobbench quick: {} blobs, {} +/- {} bytes, {} (median of this run's rounds [interval]; ratios paired round by round)",
        spec.count,
        spec.size,
        variance(spec),
        match (t.between_runs, &t.stopping) {
            (Some(k), _) => format!(
                "{k} runs of {}, each on a fresh dataset (figures: the median run; [interval] between the runs)",
                runs_rounds(t)
            ),
            (None, Some(r)) => r.header(),
            (None, None) => format!("{} rounds", t.rounds),
        }
    );
    out.push_str(&table.render());
    for f in &t.failed {
        let _ = writeln!(
            out,
            "FAILED {} ({}): {}; every other side's figures are kept",
            f.system,
            f.during,
            f.reason()
        );
    }
    if t.quick.is_empty() && t.failed.iter().any(|f| f.system != "s3") {
        out.push_str(
            "no case rows: each row compares the database, the folder and the tree, and one of them failed\n",
        );
    }
    out.push_str(
        "ratio = file time / database time (or file space / database space): above 1.00 the database is faster or smaller.\n",
    );
    for line in t.transaction_scope().unwrap_or_default() {
        let _ = writeln!(out, "{line}");
    }
    if let Some(o) = s3 {
        let _ = writeln!(
            out,
            "s3: {} ({}); s3/db as the files' ratios; its space is the objects' bytes (what the server uses on its disks is not visible)",
            o.store.path.display(),
            o.store
                .version
                .as_deref()
                .unwrap_or("server did not name itself")
        );
    }
    for line in notes(
        estimates
            .iter()
            .flat_map(|e| e.all())
            .collect::<Vec<_>>()
            .iter(),
    ) {
        let _ = writeln!(out, "{line}");
    }
    for line in t
        .stopping
        .iter()
        .chain(&t.run_stopping)
        .flat_map(|r| r.lines("--max-rounds, --max-time"))
    {
        let _ = writeln!(out, "{line}");
    }
    // The update rows' details say how each side writes.
    for r in t.quick.iter().filter(|r| !r.case.starts_with("read")) {
        let _ = writeln!(out, "{}: {}", r.case, r.detail_text());
    }
    let _ = writeln!(
        out,
        "content: {}; SQLite {}",
        human_bytes(spec.total_bytes()),
        doc.environment.sqlite_version
    );
    for line in super::run::injection_lines(&doc.runs) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The +/- of a uniform size distribution (0 for fixed sizes), as given.
pub(super) fn variance(spec: &DatasetSpec) -> u64 {
    match spec.distribution {
        SizeDistribution::Uniform { variance } => variance,
        _ => 0,
    }
}

/// The rounds the runs of a `--runs K` result took: "6-11 rounds".
fn runs_rounds(t: &QuickTables) -> String {
    let (lo, hi) = t
        .run_stopping
        .iter()
        .map(|r| r.range())
        .fold((u64::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
    if hi == 0 {
        format!("{} rounds", t.rounds)
    } else if lo == hi {
        format!("{hi} rounds")
    } else {
        format!("{lo}-{hi} rounds")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Tables;
    use crate::result::quick::DURABLE_CASE;

    fn fixture() -> (ResultDocument, QuickTables) {
        let text = include_str!("../../../tests/fixtures/results/quick.json");
        let doc: ResultDocument = serde_json::from_str(text).expect("fixture");
        let Tables::Quick(t) = doc.tables.clone() else {
            panic!("not a quick result");
        };
        (doc, t)
    }

    #[test]
    fn the_durable_row_says_whether_its_checkpoint_is_counted() {
        let (doc, mut t) = fixture();
        // The fixture predates the checkpoint in the durable row: said so.
        let out = render(&doc, &t);
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{DURABLE_CASE}:")))
            .expect(&out);
        assert!(line.contains("without the WAL checkpoint"), "{line}");
        // A result that counts it says so, and nothing more.
        let row = t.quick.iter_mut().find(|r| r.case == DURABLE_CASE).unwrap();
        row.detail = "db: WAL+FULL txn per write, WAL checkpoint included; files: x".into();
        let out = render(&doc, &t);
        assert!(
            out.contains(&format!(
                "{DURABLE_CASE}: db: WAL+FULL txn per write, WAL checkpoint included; files: x\n"
            )),
            "{out}"
        );
    }
}
