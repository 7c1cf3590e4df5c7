//! How a `compare` result is drawn: the speed factor per case.

use serde_json::Value;

use super::{DataTable, Figure, Section, arr, ns, num, text};
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};

pub(super) fn compare(tables: &Value, s: &mut Section) {
    let c = &tables["compare"];
    s.summary.push(format!(
        "before: {}; after: {}; threshold {:.0}%",
        text(tables, "before"),
        text(tables, "after"),
        num(c, "threshold").unwrap_or(0.0) * 100.0
    ));
    for d in arr(c, "differences") {
        let f = |i: usize| d.get(i).and_then(Value::as_str).unwrap_or("").to_string();
        s.summary
            .push(format!("differs: {}: {} -> {}", f(0), f(1), f(2)));
    }
    let changes = arr(c, "changes");
    // Speed factor: above 1 the after side is faster, whatever the figure.
    let speed = |ch: &Value, v: f64| {
        if text(ch, "figure") == "requests/s" {
            v
        } else {
            1.0 / v
        }
    };
    let groups: Vec<BarGroup> = changes
        .iter()
        .filter_map(|ch| {
            let (b, a) = (&ch["before"], &ch["after"]);
            let value = speed(ch, num(ch, "ratio")?);
            // Worst and best case of the ratio given both sides' ranges.
            let lo = speed(ch, num(a, "max")? / num(b, "min")?);
            let hi = speed(ch, num(a, "min")? / num(b, "max")?);
            Some(BarGroup {
                label: format!("{} ({})", text(ch, "label"), text(ch, "verdict")),
                bars: vec![Some(Bar {
                    value,
                    spread: Some((lo.min(hi), lo.max(hi))),
                })],
                marker: None,
            })
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
        let f = |side: &str| {
            let v = num(&ch[side], "median").unwrap_or(f64::NAN);
            if text(ch, "figure") == "requests/s" {
                format!("{v:.0}")
            } else {
                ns(v)
            }
        };
        t.rows.push(vec![
            text(ch, "label").into(),
            text(ch, "figure").into(),
            f("before"),
            f("after"),
            format!("{:.3}", num(ch, "ratio").unwrap_or(f64::NAN)),
            text(ch, "verdict").into(),
            text(ch, "reason").into(),
        ]);
    }
    s.tables.push(t);
}
