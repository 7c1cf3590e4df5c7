//! How a `suite fasterthanfs` result is drawn: each chart's ratio beside the page's claim.

use serde_json::Value;

use super::{DataTable, Figure, Section, arr, ns, num, ratio_text, text};
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};

pub(super) fn fasterthanfs(tables: &Value, _doc: &Value, s: &mut Section) {
    let rows = arr(tables, "fasterthanfs");
    let ratio_bar = |v: &Value| {
        num(v, "median").map(|m| Bar {
            value: m,
            spread: num(v, "min").zip(num(v, "max")),
        })
    };
    let groups: Vec<BarGroup> = rows
        .iter()
        .filter(|r| r["dir_over_db"].is_object())
        .map(|r| BarGroup {
            label: text(r, "case").trim().to_string(),
            bars: vec![ratio_bar(&r["dir_over_db"]), ratio_bar(&r["tree_over_db"])],
            marker: (text(&r["claim"], "kind") == "at-least")
                .then(|| num(&r["claim"], "ratio"))
                .flatten(),
        })
        .collect();
    s.figures.push(Figure {
        name: "ratios".into(),
        caption: "File time / database time per case, median of rounds with min..max whiskers; the dashed \
                  mark is the ratio the fasterthanfs page claims. Right of 1x the database is faster."
            .into(),
        chart: Chart::Bars(BarChart {
            title: "35% faster than the filesystem? file time / database time".into(),
            value_axis: AxisSpec::new(
                "file time / database time (log scale)",
                Scale::Log,
                Unit::Ratio,
            ),
            series_names: vec!["flat folder".into(), "tree".into()],
            groups,
            reference: Some(1.0),
            marker_label: Some("the page's claim".into()),
        }),
    });
    let mut t = DataTable::new(
        "fasterthanfs",
        "Claims and measurements",
        &[
            "case",
            "claim",
            "db per op",
            "dir/db",
            "dir/db min..max",
            "tree/db",
            "verdict",
        ],
    );
    for r in rows {
        let d = &r["dir_over_db"];
        let claim = &r["claim"];
        let claim_text = match text(claim, "kind") {
            "at-least" => format!(">= {:.2}", num(claim, "ratio").unwrap_or(0.0)),
            "db-slower" => "< 1.00".into(),
            _ => "-".into(),
        };
        let (median, range) = if d.is_object() {
            (
                ratio_text(num(d, "median")),
                format!(
                    "{}..{}",
                    ratio_text(num(d, "min")),
                    ratio_text(num(d, "max"))
                ),
            )
        } else {
            (ratio_text(d.as_f64()), String::new())
        };
        let tree = &r["tree_over_db"];
        t.rows.push(vec![
            text(r, "case").trim().into(),
            claim_text,
            num(d, "denominator_ns").map(ns).unwrap_or_default(),
            median,
            range,
            ratio_text(num(tree, "median").or_else(|| tree.as_f64())),
            text(r, "verdict").into(),
        ]);
    }
    s.tables.push(t);
    if let Some(d) = tables.get("dataset") {
        s.summary.push(super::quick::dataset_line(d));
    }
}
