//! How `suite replicate` is drawn: the findings as the summary, writes/s
//! of both arms round by round, the table of the arms with their ratio,
//! and every round's figures.

use super::{DataTable, Figure, Section};
use crate::report::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};
use crate::report::terminal::replicate::{HEADERS, findings, rows};
use crate::result::replicate::{Arm, ReplicateTables};
use crate::units::{human_bytes, human_duration_ns};

/// The summary, the chart and the two tables.
pub(in crate::report) fn replicate(t: &ReplicateTables, s: &mut Section) {
    s.summary.push(format!("{}.", t.describe()));
    s.summary.push(format!("{}: {}.", t.target, t.writes));
    s.summary.push(format!(
        "litestream {} replicating to {}.",
        t.litestream.version, t.litestream.replica
    ));
    s.summary.extend(findings(t));
    s.summary.extend(t.notes.iter().cloned());
    let series = |arm: Arm, color: usize| Series {
        name: arm.name().into(),
        points: t
            .rounds
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let a = if arm == Arm::Alone { &r.alone } else { &r.with };
                Point::new((i + 1) as f64, a.writes_per_s)
            })
            .collect(),
        dashed: false,
        color,
    };
    s.figures.push(Figure {
        name: "writes".into(),
        caption:
            "Writes per second of each arm, round by round (the arms ran in alternating order): \
             each point is one round's figure, so no whiskers; the table below gives each arm's \
             median with its interval."
                .into(),
        chart: Chart::Line(LineChart {
            title: "writes/s alone and with litestream".into(),
            x: AxisSpec::new("round", Scale::Linear, Unit::Plain),
            y: AxisSpec::new("writes/s", Scale::Linear, Unit::Plain),
            series: vec![series(Arm::Alone, 0), series(Arm::WithLitestream, 1)],
        }),
    });
    let mut arms = DataTable::new(
        "arms",
        "Each arm: median of this run's rounds [interval: exact sign-test order statistics, 95% unless another coverage is printed beside it]; the ratio paired by round",
        &HEADERS,
    );
    arms.rows = rows(t);
    s.tables.push(arms);
    s.tables.push(rounds(t));
}

/// Every measured round.
fn rounds(t: &ReplicateTables) -> DataTable {
    let mut table = DataTable::new(
        "rounds",
        "Every round: writes/s and p99 of each arm, Litestream's CPU time, uploads and lag",
        &[
            "round",
            "first",
            "alone writes/s",
            "with writes/s",
            "alone p99",
            "with p99",
            "litestream CPU (round + catch-up)",
            "uploaded (round + catch-up)",
            "lag",
        ],
    );
    for (i, r) in t.rounds.iter().enumerate() {
        let l = &r.litestream;
        table.rows.push(vec![
            (i + 1).to_string(),
            r.first.name().into(),
            format!("{:.0}", r.alone.writes_per_s),
            format!("{:.0}", r.with.writes_per_s),
            human_duration_ns(r.alone.p99_ns as f64),
            human_duration_ns(r.with.p99_ns as f64),
            format!(
                "{} + {}",
                human_duration_ns(l.cpu_ns as f64),
                human_duration_ns(l.catch_up_cpu_ns as f64)
            ),
            match (l.uploaded_bytes, l.catch_up_bytes) {
                (Some(a), Some(b)) => format!("{} + {}", human_bytes(a), human_bytes(b)),
                _ => "-".into(),
            },
            human_duration_ns(l.catch_up_ns as f64),
        ]);
    }
    table
}
