//! How a `suite fasterthanfs` result is drawn: each chart's ratio beside the page's claim.

use super::quick::{ratio_estimate, time_us};
use super::{DataTable, Figure, Section, finite, ratio_text};
use crate::measure::estimate::notes;
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};
use crate::result::ResultDocument;
use crate::result::fasterthanfs::{Claim, FasterThanFsRow, FasterThanFsTables, Ratio};

pub(super) fn fasterthanfs(tables: &FasterThanFsTables, _doc: &ResultDocument, s: &mut Section) {
    let rows = &tables.fasterthanfs;
    // Whiskers: the 95% interval where the result has one, else min..max.
    let ratio_bar = |r: &Ratio| {
        let e = r.ratio(tables.rounds);
        finite(r.median).map(|m| Bar {
            value: m,
            spread: if e.has_interval() {
                finite(e.low).zip(finite(e.high))
            } else {
                finite(r.min).zip(finite(r.max))
            },
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
        caption: "File time / database time per case, median of rounds with 95% interval whiskers; the dashed \
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
        &["case", "claim", "db µs/op", "dir/db", "tree/db", "verdict"],
    );
    let rounds = tables.rounds;
    for r in rows {
        let (db_per_op, dir, tree) = match r {
            FasterThanFsRow::Timed(r) => (
                time_us(&r.dir_over_db.denominator(rounds)),
                ratio_estimate(&r.dir_over_db.ratio(rounds)),
                ratio_estimate(&r.tree_over_db.ratio(rounds)),
            ),
            FasterThanFsRow::Space(r) => (
                String::new(),
                ratio_text(finite(r.dir_over_db)),
                ratio_text(finite(r.tree_over_db)),
            ),
        };
        t.rows.push(vec![
            r.case().trim().into(),
            r.claim().short(),
            db_per_op,
            dir,
            tree,
            r.verdict().as_str().into(),
        ]);
    }
    s.tables.push(t);
    if !tables.read_write.is_empty() {
        let (low, high) = crate::result::fasterthanfs::WRITE_OVER_READ_CLAIM;
        let mut rw = DataTable::new(
            "fasterthanfs-read-write",
            format!(
                "Reads vs writes: the page says writes are between {low} and {high} times slower than reads"
            ),
            &[
                "storage",
                "write / read time per blob",
                "write case",
                "read case",
                "verdict",
            ],
        );
        for r in &tables.read_write {
            rw.rows.push(vec![
                r.storage.clone(),
                ratio_estimate(&r.write_over_read.ratio(rounds)),
                r.write_case.clone(),
                r.read_case.clone(),
                r.verdict.as_str().into(),
            ]);
        }
        s.tables.push(rw);
    }
    if tables.cold {
        s.summary.push(format!(
            "--cold: the \"cold:\" rows repeat the reads with the page cache dropped before each timed pass ({})",
            tables.cold_method.as_deref().unwrap_or("method not recorded")
        ));
    }
    let all = tables.estimates();
    s.summary.extend(notes(all.iter()));
    s.summary.push(super::quick::dataset_line(&tables.dataset));
}
