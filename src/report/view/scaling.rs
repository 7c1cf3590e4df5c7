//! How `suite concurrency` (the scaling suite) is drawn: throughput and p99
//! against threads, one line per layout and mix, and the table of every point.

use super::{DataTable, Figure, Section, estimate_point, interval_caption, ns};
use crate::measure::estimate::Estimate;
use crate::report::chart::{AxisSpec, Chart, LineChart, Scale, Series, Unit};
use crate::result::scaling::{ScalingPoint, ScalingTables};

/// The summary, the two charts and the table.
pub(in crate::report) fn scaling(t: &ScalingTables, s: &mut Section) {
    s.summary.push(format!(
        "{}: beyond that, threads share the cores.",
        t.describe()
    ));
    for l in &t.layouts {
        s.summary.push(format!("{}: {}.", l.name, l.writes));
    }
    for f in &t.failed {
        s.summary.push(format!(
            "FAILED {} ({}): {}; every other layout's figures are kept",
            f.system,
            f.during,
            f.reason()
        ));
    }
    let mut rate = Vec::new();
    let mut p99 = Vec::new();
    let (mut drawn_rates, mut drawn_p99s) = (Vec::new(), Vec::new());
    let mut table = DataTable::new(
        "concurrency",
        "Every point: median of this run's rounds [interval: exact sign-test order statistics, 95% unless another coverage is printed beside it]",
        &["layout", "mix", "threads", "operations/s", "p99", "busy"],
    );
    for (mi, mix) in t.mixes.iter().enumerate() {
        for (li, l) in t.layouts.iter().enumerate() {
            let points: Vec<_> = t
                .threads
                .iter()
                .filter_map(|&n| t.point(&l.name, mix, n))
                .collect();
            let line = |f: &dyn Fn(&ScalingPoint) -> Estimate, drawn: &mut Vec<Estimate>| {
                points
                    .iter()
                    .map(|p| {
                        let e = f(p);
                        drawn.push(e);
                        estimate_point(p.threads as f64, &e)
                    })
                    .collect()
            };
            rate.push(Series {
                name: format!("{} {mix}", l.name),
                points: line(&ScalingPoint::rate, &mut drawn_rates),
                dashed: mi > 0,
                color: li,
            });
            p99.push(Series {
                name: format!("{} {mix}", l.name),
                points: line(&ScalingPoint::p99, &mut drawn_p99s),
                dashed: mi > 0,
                color: li,
            });
            for &n in &t.threads {
                table.rows.push(match t.point(&l.name, mix, n) {
                    Some(p) => vec![
                        l.name.clone(),
                        mix.clone(),
                        n.to_string(),
                        p.rate().format(0),
                        ns(p.p99().value),
                        p.busy().to_string(),
                    ],
                    // A failed layout's missing points say why.
                    None => {
                        let why = t.failure(&l.name).map_or("-".to_string(), |f| f.cell());
                        vec![
                            l.name.clone(),
                            mix.clone(),
                            n.to_string(),
                            why,
                            "-".into(),
                            "-".into(),
                        ]
                    }
                });
            }
        }
    }
    let x = || AxisSpec::new("threads (log scale)", Scale::Log2, Unit::Plain);
    s.figures.push(Figure {
        name: "throughput".into(),
        caption: format!(
            "Operations per second against threads, one line per layout (color) and mix (solid: the \
             first mix; dashed: the others). {}",
            interval_caption(&drawn_rates)
        ),
        chart: Chart::Line(LineChart {
            title: "operations/s vs threads".into(),
            x: x(),
            y: AxisSpec::new("operations/s", Scale::Linear, Unit::Plain),
            series: rate,
        }),
    });
    s.figures.push(Figure {
        name: "p99".into(),
        caption: format!(
            "99th percentile of every operation's time against threads, each round's p99 taken \
             apart. {}",
            interval_caption(&drawn_p99s)
        ),
        chart: Chart::Line(LineChart {
            title: "p99 vs threads".into(),
            x: x(),
            y: AxisSpec::new("p99", Scale::Log, Unit::Nanos),
            series: p99,
        }),
    });
    s.tables.push(table);
}
