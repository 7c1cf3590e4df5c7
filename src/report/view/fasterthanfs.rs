//! How a `suite fasterthanfs` result is drawn: each chart's ratio beside the page's claim.

use super::{DataTable, Figure, Section, finite, ns, ratio_text};
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};
use crate::result::ResultDocument;
use crate::result::fasterthanfs::{Claim, FasterThanFsRow, FasterThanFsTables, Ratio};

pub(super) fn fasterthanfs(tables: &FasterThanFsTables, _doc: &ResultDocument, s: &mut Section) {
    let rows = &tables.fasterthanfs;
    let ratio_bar = |r: &Ratio| {
        finite(r.median).map(|m| Bar {
            value: m,
            spread: finite(r.min).zip(finite(r.max)),
        })
    };
    let groups: Vec<BarGroup> = rows
        .iter()
        .filter_map(|r| match r {
            FasterThanFsRow::Timed(r) => Some(r),
            FasterThanFsRow::Space(_) => None,
        })
        .map(|r| BarGroup {
            label: r.case.trim().to_string(),
            bars: vec![ratio_bar(&r.dir_over_db), ratio_bar(&r.tree_over_db)],
            marker: match r.claim {
                Claim::AtLeast { ratio, .. } => Some(ratio),
                _ => None,
            },
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
        let (db_per_op, median, range, tree) = match r {
            FasterThanFsRow::Timed(r) => {
                let d = &r.dir_over_db;
                (
                    finite(d.denominator_ns).map(ns).unwrap_or_default(),
                    ratio_text(finite(d.median)),
                    format!(
                        "{}..{}",
                        ratio_text(finite(d.min)),
                        ratio_text(finite(d.max))
                    ),
                    ratio_text(finite(r.tree_over_db.median)),
                )
            }
            FasterThanFsRow::Space(r) => (
                String::new(),
                ratio_text(finite(r.dir_over_db)),
                String::new(),
                ratio_text(finite(r.tree_over_db)),
            ),
        };
        t.rows.push(vec![
            r.case().trim().into(),
            r.claim().short(),
            db_per_op,
            median,
            range,
            tree,
            r.verdict().as_str().into(),
        ]);
    }
    s.tables.push(t);
    s.summary.push(super::quick::dataset_line(&tables.dataset));
}
