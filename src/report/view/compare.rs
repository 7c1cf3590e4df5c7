//! How a `compare` result is drawn: the speed factor per case.

use super::{DataTable, Figure, Section, ns};
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};
use crate::result::compare::{Change, CompareTables};

/// The speed factor per case as bars (whiskers: the ratios both sides'
/// spreads allow) and the cases as a table.
pub(super) fn compare(tables: &CompareTables, s: &mut Section) {
    let c = &tables.compare;
    s.summary.push(format!(
        "before: {}; after: {}; threshold {:.0}%",
        tables.before,
        tables.after,
        c.threshold * 100.0
    ));
    for (field, before, after) in &c.differences {
        s.summary
            .push(format!("differs: {field}: {before} -> {after}"));
    }
    let changes = &c.changes;
    // Speed factor: above 1 the after side is faster, whatever the figure.
    let speed = |ch: &Change, v: f64| {
        if ch.higher_is_better() { v } else { 1.0 / v }
    };
    let groups: Vec<BarGroup> = changes
        .iter()
        // A ratio written as null (not a number) has no bar.
        .filter(|ch| ch.ratio.is_finite())
        .map(|ch| {
            let (b, a) = (&ch.before, &ch.after);
            let value = speed(ch, ch.ratio);
            // Worst and best case of the ratio given both sides' ranges.
            let lo = speed(ch, a.max / b.min);
            let hi = speed(ch, a.min / b.max);
            BarGroup {
                label: format!("{} ({})", ch.label, ch.verdict.name()),
                bars: vec![Some(Bar {
                    value,
                    spread: Some((lo.min(hi), lo.max(hi))),
                })],
                marker: None,
            }
        })
        .collect();
    s.figures.push(Figure {
        name: "speed".into(),
        caption:
            "How many times faster the after side is per case (right of 1x: faster, left: slower); \
                  whiskers span the ratios the two sides' min..max allow."
                .into(),
        chart: Chart::Bars(BarChart {
            title: "after vs before: speed factor".into(),
            value_axis: AxisSpec::new("speed factor (log scale)", Scale::Log, Unit::Ratio),
            series_names: vec!["after vs before".into()],
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    });
    let mut t = DataTable::new(
        "compare",
        "Cases in both results",
        &[
            "case",
            "figure",
            "before median",
            "after median",
            "after/before",
            "verdict",
            "why",
        ],
    );
    for ch in changes {
        let f = |v: f64| {
            if ch.higher_is_better() {
                format!("{v:.0}")
            } else {
                ns(v)
            }
        };
        t.rows.push(vec![
            ch.label.clone(),
            ch.figure.clone(),
            f(ch.before.median),
            f(ch.after.median),
            format!("{:.3}", ch.ratio),
            ch.verdict.name().into(),
            ch.reason.clone(),
        ]);
    }
    s.tables.push(t);
}
