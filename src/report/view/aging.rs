//! How `suite aging` is drawn: per filesystem, fill and blob size, read
//! MB/s against storage age (one line per layout, whiskers the interval
//! over this run's rounds) and fragments per blob against storage age; the table of
//! every point as the terminal prints it; the verdicts beside the paper's
//! rule, quoted.

use super::{DataTable, Figure, Section, estimate_point, interval_caption};
use crate::measure::estimate::Estimate;
use crate::report::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};
use crate::report::terminal::aging::{
    Group, HEADERS, LEGEND, decimals, describe, groups, rows, series_notes, skipped_line,
    verdict_line, volume, volume_line,
};
use crate::result::aging::{
    AgePoint, AgingTables, LAYOUTS, PAIRING_MEANING, PAPER_RULE, Verdict, read_estimates,
};

/// The summary, two charts per group, a table per group and the verdicts.
pub(in crate::report) fn aging(t: &AgingTables, s: &mut Section) {
    s.summary.push(format!("{}.", describe(t)));
    s.summary
        .push(format!("writes: {}; cold reads: {}.", t.writes, t.cold));
    for v in &t.volumes {
        s.summary.push(format!("volume {}.", volume_line(v)));
    }
    s.summary
        .push(format!("The paper's rule: \"{PAPER_RULE}\""));
    let verdicts = t.verdicts();
    s.summary.extend(verdicts.iter().map(verdict_line));
    s.summary.extend(t.skipped.iter().map(skipped_line));
    for (i, g) in groups(t).iter().enumerate() {
        // File-name friendly: PNG and CSV files are named after it.
        let id = format!(
            "{}-{}-{:.0}",
            g.fs,
            g.sizes.label().replace(' ', ""),
            g.fill * 100.0
        );
        s.figures.push(reads_figure(g, &id));
        s.figures.push(fragments_figure(g, &id));
        let mut table = DataTable::new(
            &format!("aging-{}", i + 1),
            format!("{}: {LEGEND}", g.title()),
            &HEADERS,
        );
        table.rows = rows(&g.series, volume(t, g.fs));
        s.tables.push(table);
        s.summary.extend(
            series_notes(&g.series)
                .into_iter()
                .map(|n| format!("{}: {n}", g.title())),
        );
    }
    s.tables.push(verdicts_table(&verdicts));
}

/// The layout's color, the same in every chart.
fn color(layout: &str) -> usize {
    LAYOUTS
        .iter()
        .position(|l| *l == layout)
        .unwrap_or(LAYOUTS.len())
}

/// One line per layout of `y` against the age reached; the points after a
/// VACUUM as a dashed line of their own, from the point before it at the
/// same age (what the VACUUM changed).
fn lines(g: &Group, y: impl Fn(&AgePoint) -> Option<Point>) -> Vec<Series> {
    let mut out = Vec::new();
    for s in &g.series {
        for vacuumed in [false, true] {
            let points: Vec<Point> = s
                .points
                .iter()
                .filter(|p| p.vacuumed == vacuumed)
                .flat_map(|p| {
                    let before = vacuumed.then(|| s.at(p.target_age)).flatten();
                    before.into_iter().chain(std::iter::once(p))
                })
                .filter_map(&y)
                .collect();
            if points.len() < 1 + usize::from(vacuumed) {
                continue;
            }
            out.push(Series {
                name: if vacuumed {
                    format!("{} after VACUUM", s.layout)
                } else {
                    s.layout.clone()
                },
                points,
                dashed: vacuumed,
                color: color(&s.layout),
            });
        }
    }
    out
}

/// Read MB/s against storage age, whiskers the interval over this run's rounds.
fn reads_figure(g: &Group, id: &str) -> Figure {
    let series = lines(g, |p| {
        (!p.read_mb_s.is_empty()).then(|| estimate_point(p.age, &p.read_estimate()))
    });
    let drawn = read_estimates(g.series.iter().copied());
    Figure {
        name: format!("read-{id}"),
        caption: format!(
            "{}: cold reads of whole blobs in random order, MB/s against storage age (bytes \
             overwritten / bytes stored). {} Dashed: sqlite after a full VACUUM.",
            g.title(),
            interval_caption(&drawn)
        ),
        chart: Chart::Line(LineChart {
            title: format!("read MB/s vs storage age: {}", g.title()),
            x: AxisSpec::new("storage age", Scale::Linear, Unit::Plain),
            y: AxisSpec::new("read MB/s", Scale::Linear, Unit::Plain),
            series,
        }),
    }
}

/// Fragments per blob (mean, whiskers median to p90) against storage age.
fn fragments_figure(g: &Group, id: &str) -> Figure {
    let series = lines(g, |p| {
        let f = &p.fragments;
        (f.blobs > 0 && f.unavailable.is_none())
            .then(|| Point::with_spread(p.age, f.mean, f.p50 as f64, f.p90 as f64))
    });
    Figure {
        name: format!("fragments-{id}"),
        caption: format!(
            "{}: fragments per blob against storage age (physically contiguous runs on the \
             volume: FIEMAP extents for files, the database file's extents under each blob's \
             pages for SQLite); the mean, whiskers from the median to the 90th percentile (the most is in the table).",
            g.title()
        ),
        chart: Chart::Line(LineChart {
            title: format!("fragments per blob vs storage age: {}", g.title()),
            x: AxisSpec::new("storage age", Scale::Linear, Unit::Plain),
            y: AxisSpec::new("fragments per blob", Scale::Linear, Unit::Plain),
            series,
        }),
    }
}

/// A layout's read estimate as "sqlite 141 [139-143]".
fn named(side: &(String, Estimate)) -> String {
    format!("{} {}", side.0, side.1.format(decimals(side.1.value)))
}

/// Every verdict as a row: the two fastest, the kinds, the paper's call.
fn verdicts_table(verdicts: &[Verdict]) -> DataTable {
    let mut table = DataTable::new(
        "aging-verdicts",
        format!(
            "Which layout reads fastest at each age (read MB/s, median of this run's rounds [interval]; \
             fastest/next: the fastest's reads over the next's, faster only when the whole interval of \
             the ratio lies above 1; {PAIRING_MEANING}), beside the paper's rule: \"{PAPER_RULE}\""
        ),
        &[
            "filesystem",
            "sizes",
            "fill",
            "age",
            "fastest",
            "next",
            "fastest/next",
            "faster kind",
            "after VACUUM",
            "paper says",
            "this machine",
        ],
    );
    for v in verdicts {
        let dash = || "-".to_string();
        table.rows.push(vec![
            v.fs.clone(),
            v.sizes.label(),
            format!("{:.0}%", v.fill_target * 100.0),
            format!("{}", v.age),
            // The two the ratio sets side by side (the first by the
            // ratio, which a median's order can differ from).
            v.lead
                .as_ref()
                .map(|d| &d.faster)
                .or(v.ranking.first())
                .map_or_else(dash, named),
            v.lead.as_ref().map_or_else(dash, |d| named(&d.slower)),
            v.lead.as_ref().map_or_else(dash, |d| {
                let call = if d.separated() { "" } else { " (within noise)" };
                format!("{}{call}", d.ratio_text())
            }),
            match (&v.kinds, v.winner()) {
                (None, _) => dash(),
                (Some(_), Some(k)) => k.name().into(),
                (Some(_), None) => "within noise".into(),
            },
            v.vacuumed.as_ref().map_or_else(dash, named),
            v.paper.words().into(),
            v.agreement.words().into(),
        ]);
    }
    table
}
