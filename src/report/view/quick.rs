//! How a `quick` result is drawn: file/db ratio bars and disk space (with
//! the object store's beside them when it was measured).

use super::{DataTable, Figure, Section};
use crate::dataset::{DatasetSpec, SizeDistribution};
use crate::measure::estimate::{Estimate, notes};
use crate::report::chart::{AxisSpec, BarChart, BarGroup, Chart, Scale, Unit};
use crate::result::ResultDocument;
use crate::result::quick::{QuickTables, SpaceBytes};
use crate::units::human_bytes;

pub(in crate::report) fn quick(tables: &QuickTables, _doc: &ResultDocument, s: &mut Section) {
    let rows = &tables.quick;
    let s3 = tables.has_object_store();
    let s3_failed = tables.failure("s3").map(|f| f.cell());
    let mut drawn: Vec<Estimate> = Vec::new();
    let groups: Vec<BarGroup> = rows
        .iter()
        .map(|r| {
            let e = r.estimates(tables.rounds);
            let mut ratios = vec![Some(e.dir_over_db), Some(e.tree_over_db)];
            if s3 {
                ratios.push(e.s3_over_db);
            }
            drawn.extend(ratios.iter().flatten());
            BarGroup {
                label: r.case.trim().to_string(),
                bars: ratios
                    .iter()
                    .map(|e| e.as_ref().and_then(super::estimate_bar))
                    .collect(),
                marker: None,
            }
        })
        .collect();
    s.figures.push(Figure {
        name: "ratios".into(),
        caption: format!(
            "File time / database time for each case. {} Right of the line at 1x the database is \
             faster; left of it the files are.",
            super::interval_caption(&drawn)
        ),
        chart: Chart::Bars(BarChart {
            title: "files vs SQLite: file time / database time".into(),
            value_axis: AxisSpec::new(
                "file time / database time (log scale)",
                Scale::Log,
                Unit::Ratio,
            ),
            series_names: if s3 {
                vec!["flat folder".into(), "tree".into(), "object store".into()]
            } else {
                vec!["flat folder".into(), "tree".into()]
            },
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    });
    let mut columns = vec![
        "case",
        "detail",
        "db µs/op",
        "dir µs/op",
        "tree µs/op",
        "dir/db",
        "tree/db",
    ];
    if s3 {
        columns.extend(["s3 µs/op", "s3/db"]);
    }
    let mut t = DataTable::new("quick", "SQLite vs files", &columns);
    let mut all = Vec::new();
    for r in rows {
        let e = r.estimates(tables.rounds);
        all.extend(e.all());
        let mut cells = vec![
            r.case.trim().into(),
            r.detail_text(),
            time_us(&e.db_ns_per_op),
            time_us(&e.dir_ns_per_op),
            time_us(&e.tree_ns_per_op),
            ratio_estimate(&e.dir_over_db),
            ratio_estimate(&e.tree_over_db),
        ];
        if let Some(cell) = &s3_failed {
            cells.extend([cell.clone(), cell.clone()]);
        } else if s3 {
            cells.push(e.s3_ns_per_op.as_ref().map(time_us).unwrap_or_default());
            cells.push(
                e.s3_over_db
                    .as_ref()
                    .map_or_else(|| "-".into(), ratio_estimate),
            );
        }
        t.rows.push(cells);
    }
    s.tables.push(t);
    s.summary
        .extend(tables.transaction_scope().unwrap_or_default());
    s.summary.extend(notes(all.iter()));
    space_table(&tables.space_bytes, s);
    if let Some(o) = &tables.object_store {
        if let Some(space) = s.tables.last_mut() {
            let b = o.space_bytes;
            space.rows.push(vec![
                "s3 (objects' bytes)".into(),
                b.to_string(),
                human_bytes(b),
            ]);
        }
        s.summary.push(format!(
            "object store: {} ({}); ratios to the database as the files' are",
            o.store.path.display(),
            o.store
                .version
                .as_deref()
                .unwrap_or("server did not name itself")
        ));
    }
    for f in &tables.failed {
        s.summary.push(format!(
            "FAILED {} ({}): {}; every other side's figures are kept",
            f.system,
            f.during,
            f.reason()
        ));
    }
    s.summary.push(dataset_line(&tables.dataset));
}

pub(super) fn dataset_line(d: &DatasetSpec) -> String {
    let variance = match d.distribution {
        SizeDistribution::Uniform { variance } => variance,
        _ => 0,
    };
    format!(
        "dataset: {} blobs of {} bytes{} (seed {})",
        d.count,
        d.size,
        if variance > 0 {
            format!(" +/- {variance}")
        } else {
            String::new()
        },
        d.seed
    )
}

pub(super) fn space_table(space: &SpaceBytes, s: &mut Section) {
    let mut t = DataTable::new("space", "Disk space (du)", &["layout", "bytes", "size"]);
    for (k, b) in space.entries() {
        t.rows
            .push(vec![k.to_string(), b.to_string(), human_bytes(b)]);
    }
    s.tables.push(t);
}

/// A time per operation (ns) in µs with its interval, blank when not finite.
pub(super) fn time_us(e: &Estimate) -> String {
    super::finite(e.value)
        .map(|_| e.scaled(1e-3).format(2))
        .unwrap_or_default()
}

/// A ratio as `1.52x [1.30-1.68]`, `-` when not finite.
pub(super) fn ratio_estimate(e: &Estimate) -> String {
    super::finite(e.value)
        .map(|_| e.format_ratio())
        .unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use crate::result::quick::DURABLE_CASE;
    use crate::result::{ResultDocument, Tables};

    #[test]
    fn the_reports_durable_row_says_whether_its_checkpoint_is_counted() {
        let text = include_str!("../../../tests/fixtures/results/quick.json");
        let mut doc: ResultDocument = serde_json::from_str(text).expect("fixture");
        let html =
            crate::report::html::render(&[crate::report::sections::section(&doc, "quick.json", 0)]);
        assert!(html.contains("without the WAL checkpoint"));
        let Tables::Quick(t) = &mut doc.tables else {
            panic!("not a quick result");
        };
        let row = t.quick.iter_mut().find(|r| r.case == DURABLE_CASE).unwrap();
        row.detail = "db: WAL+FULL txn per write, WAL checkpoint included; files: x".into();
        let html =
            crate::report::html::render(&[crate::report::sections::section(&doc, "quick.json", 0)]);
        assert!(html.contains("WAL checkpoint included; files: x"));
        assert!(!html.contains("without the WAL checkpoint"));
    }
}
