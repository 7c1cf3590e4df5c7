//! How a `quick` result is drawn: file/db ratio bars and disk space.

use super::{DataTable, Figure, Section, ns, ratio_text};
use crate::dataset::{DatasetSpec, SizeDistribution};
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};
use crate::result::ResultDocument;
use crate::result::quick::{QuickTables, SpaceBytes};
use crate::units::human_bytes;

pub(super) fn quick(tables: &QuickTables, _doc: &ResultDocument, s: &mut Section) {
    let rows = &tables.quick;
    let bar = |v: f64| {
        super::finite(v).map(|value| Bar {
            value,
            spread: None,
        })
    };
    let groups: Vec<BarGroup> = rows
        .iter()
        .map(|r| BarGroup {
            label: r.case.trim().to_string(),
            bars: vec![bar(r.dir_over_db), bar(r.tree_over_db)],
            marker: None,
        })
        .collect();
    s.figures.push(Figure {
        name: "ratios".into(),
        caption: "File time / database time for each case (median of rounds). Right of the line at 1x the \
                  database is faster; left of it the files are."
            .into(),
        chart: Chart::Bars(BarChart {
            title: "files vs SQLite: file time / database time".into(),
            value_axis: AxisSpec::new(
                "file time / database time (log scale)",
                Scale::Log,
                Unit::Ratio,
            ),
            series_names: vec!["flat folder".into(), "tree".into()],
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    });
    let mut t = DataTable::new(
        "quick",
        "SQLite vs files",
        &[
            "case",
            "detail",
            "db per op",
            "dir per op",
            "tree per op",
            "dir/db",
            "tree/db",
            "spread",
        ],
    );
    let time = |v: f64| super::finite(v).map(ns).unwrap_or_default();
    for r in rows {
        t.rows.push(vec![
            r.case.trim().into(),
            r.detail.clone(),
            time(r.db_ns_per_op),
            time(r.dir_ns_per_op),
            time(r.tree_ns_per_op),
            ratio_text(super::finite(r.dir_over_db)),
            ratio_text(super::finite(r.tree_over_db)),
            super::finite(r.spread_pct)
                .map(|p| format!("+/-{p:.0}%"))
                .unwrap_or_default(),
        ]);
    }
    s.tables.push(t);
    space_table(&tables.space_bytes, s);
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
