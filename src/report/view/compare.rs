//! How a `compare` result is drawn: the speed factor per case with its
//! interval, and the cases with their tests and verdicts. Results written
//! before the rank test (no interval) draw the ratios both sides' min..max
//! allow as whiskers, as they did.

use super::{DataTable, Figure, Section};
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};
use crate::report::figures::{p_text, percent_text, ratio_text};
use crate::result::compare::{Change, CompareTables};

/// The speed factor per case as bars (whiskers: the ratio's interval) and
/// the cases as a table.
pub(in crate::report) fn compare(tables: &CompareTables, s: &mut Section) {
    let c = &tables.compare;
    s.summary.push(format!(
        "before: {}; after: {}; threshold {}%",
        tables.before,
        tables.after,
        percent_text(c.threshold)
    ));
    if let Some(m) = &c.method {
        s.summary.push(format!(
            "Faster/slower only when the Mann-Whitney rank test, Holm-corrected within each section of cases \
             compared together ({} case(s) tested), \
             gives p < {} and the whole {}% interval of after/before (the rank test's own, from the pairwise log ratios; {} resamples for a drift-corrected one) \
             lies beyond the threshold; fewer than {} samples a side: insufficient data.",
            m.tested,
            m.alpha,
            percent_text(m.level),
            m.resamples,
            m.min_samples
        ));
    }
    for (field, before, after) in &c.not_comparable {
        s.summary
            .push(format!("not comparable: {field}: {before} -> {after}"));
    }
    for (field, before, after) in &c.differences {
        s.summary
            .push(format!("differs: {field}: {before} -> {after}"));
    }
    for (field, before, after) in &c.not_same_machine {
        s.summary.push(format!(
            "not the same machine for drift: {field}: {before} -> {after}"
        ));
    }
    s.summary
        .extend(c.notes.iter().map(|n| format!("note: {n}")));
    s.figures.push(speed_figure(&c.changes));
    s.tables.push(cases_table(&c.changes));
}

/// Speed factor: above 1 the after side is faster, whatever the figure.
fn speed(ch: &Change, v: f64) -> f64 {
    if ch.higher_is_better() { v } else { 1.0 / v }
}

/// One bar per case with a finite ratio; whiskers are the interval, or for
/// older results the worst and best ratios both sides' ranges allow.
/// The rounds each side had, for a caption: "5", or "3-5" when cases differ.
fn rounds_a_side(changes: &[Change]) -> String {
    let ns = changes.iter().flat_map(|ch| [ch.before.n, ch.after.n]);
    match (ns.clone().min(), ns.max()) {
        (Some(lo), Some(hi)) if lo < hi => format!("{lo}-{hi}"),
        (Some(n), _) => n.to_string(),
        _ => "no".into(),
    }
}

fn speed_figure(changes: &[Change]) -> Figure {
    let groups: Vec<BarGroup> = changes
        .iter()
        // A ratio written as null (not a number) has no bar.
        .filter(|ch| ch.ratio.is_finite())
        .map(|ch| {
            let (b, a) = (&ch.before, &ch.after);
            let (lo, hi) = match (ch.low, ch.high) {
                (Some(l), Some(h)) => (speed(ch, l), speed(ch, h)),
                _ if ch.p.is_none() && ch.method.is_none() && b.n > 1 && a.n > 1 => {
                    (speed(ch, a.max / b.min), speed(ch, a.min / b.max))
                }
                _ => (f64::NAN, f64::NAN),
            };
            BarGroup {
                label: format!("{} ({})", ch.label, ch.verdict.name()),
                bars: vec![Some(Bar {
                    value: speed(ch, ch.ratio),
                    spread: (lo.is_finite() && hi.is_finite()).then(|| (lo.min(hi), lo.max(hi))),
                    noisy: false,
                })],
                marker: None,
            }
        })
        .collect();
    Figure {
        name: "speed".into(),
        caption: format!(
            "How many times faster the after side is per case (right of 1x: faster, left: slower), \
             from {} rounds a side; whiskers span the 95% interval of after/before (the rank test's \
             own; results written before it: the ratios the two sides' min..max allow).",
            rounds_a_side(changes)
        ),
        chart: Chart::Bars(BarChart {
            title: "after vs before: speed factor".into(),
            value_axis: AxisSpec::new("speed factor (log scale)", Scale::Log, Unit::Ratio),
            series_names: vec!["after vs before".into()],
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    }
}

/// Every case: medians, ratio with interval, p before and after Holm, verdict, why.
fn cases_table(changes: &[Change]) -> DataTable {
    let mut t = DataTable::new(
        "compare",
        "Cases in both results",
        &[
            "case",
            "figure",
            "before median (n)",
            "after median (n)",
            "after/before [95% all]",
            "p",
            "p (Holm)",
            "verdict",
            "why",
            "drift-corrected [95% all]",
            "corrected verdict",
        ],
    );
    for ch in changes {
        let corrected = ch.adjusted.as_ref().map_or_else(
            || ["-".to_string(), "-".to_string()],
            |a| {
                [
                    format!("{} ({} probe)", ratio_text(a.ratio, a.low, a.high), a.probe),
                    format!("{}: {}", a.verdict.name(), a.reason),
                ]
            },
        );
        let label = match &ch.injected {
            Some(how) => format!("{} (injected: {how})", ch.label),
            None => ch.label.clone(),
        };
        let f = |v: f64| crate::report::figures::median_text(&ch.figure, v);
        let p = |v: Option<f64>| v.map(p_text).unwrap_or_else(|| "-".into());
        let [corrected_ratio, corrected_verdict] = corrected;
        t.rows.push(vec![
            label,
            ch.figure.clone(),
            format!("{} ({})", f(ch.before.median), ch.before.n),
            format!("{} ({})", f(ch.after.median), ch.after.n),
            ratio_text(ch.ratio, ch.low, ch.high),
            p(ch.p),
            p(ch.p_adjusted),
            ch.verdict.name().into(),
            ch.reason.clone(),
            corrected_ratio,
            corrected_verdict,
        ]);
    }
    t
}
