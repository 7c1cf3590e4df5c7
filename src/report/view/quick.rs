//! How a `quick` result is drawn: file/db ratio bars and disk space.

use serde_json::Value;

use super::{DataTable, Figure, Section, arr, ns, num, ratio_text, text};
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};
use crate::units::human_bytes;

pub(super) fn quick(tables: &Value, _doc: &Value, s: &mut Section) {
    let rows = arr(tables, "quick");
    let groups: Vec<BarGroup> = rows
        .iter()
        .map(|r| BarGroup {
            label: text(r, "case").trim().to_string(),
            bars: vec![
                num(r, "dir_over_db").map(|v| Bar {
                    value: v,
                    spread: None,
                }),
                num(r, "tree_over_db").map(|v| Bar {
                    value: v,
                    spread: None,
                }),
            ],
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
    for r in rows {
        t.rows.push(vec![
            text(r, "case").trim().into(),
            text(r, "detail").into(),
            num(r, "db_ns_per_op").map(ns).unwrap_or_default(),
            num(r, "dir_ns_per_op").map(ns).unwrap_or_default(),
            num(r, "tree_ns_per_op").map(ns).unwrap_or_default(),
            ratio_text(num(r, "dir_over_db")),
            ratio_text(num(r, "tree_over_db")),
            num(r, "spread_pct")
                .map(|p| format!("+/-{p:.0}%"))
                .unwrap_or_default(),
        ]);
    }
    s.tables.push(t);
    space_table(&tables["space_bytes"], s);
    if let Some(d) = tables.get("dataset") {
        s.summary.push(dataset_line(d));
    }
}

pub(super) fn dataset_line(d: &Value) -> String {
    let variance = num(&d["distribution"], "variance").unwrap_or(0.0);
    format!(
        "dataset: {} blobs of {} bytes{} (seed {})",
        num(d, "count").unwrap_or(0.0),
        num(d, "size").unwrap_or(0.0),
        if variance > 0.0 {
            format!(" +/- {variance}")
        } else {
            String::new()
        },
        num(d, "seed").unwrap_or(0.0)
    )
}

pub(super) fn space_table(space: &Value, s: &mut Section) {
    let Some(obj) = space.as_object() else { return };
    let mut t = DataTable::new("space", "Disk space (du)", &["layout", "bytes", "size"]);
    for (k, v) in obj {
        let b = v.as_u64().unwrap_or(0);
        t.rows.push(vec![k.clone(), b.to_string(), human_bytes(b)]);
    }
    s.tables.push(t);
}
