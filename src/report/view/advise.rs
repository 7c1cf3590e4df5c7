//! How an `advise` result is drawn: time per operation vs blob size for
//! each layout, the page sizes side by side, and the recommendation.

use serde_json::Value;

use super::{DataTable, Figure, Section, arr, num, text};
use crate::measure::stats::summarize;
use crate::report::chart::{
    AxisSpec, Bar, BarChart, BarGroup, Chart, LineChart, Point, Scale, Series, Unit, size_label,
};
use crate::units::human_duration_ns;

fn spread(v: &Value) -> String {
    format!(
        "{:.2}x [{:.2}..{:.2}]",
        num(v, "median").unwrap_or(f64::NAN),
        num(v, "min").unwrap_or(f64::NAN),
        num(v, "max").unwrap_or(f64::NAN)
    )
}

pub fn advise(tables: &Value, s: &mut Section) {
    let a = &tables["advise"];
    let (input, decision, journal) = (&a["input"], &a["decision"], &a["journal"]);
    let reads = num(input, "reads_percent").unwrap_or(100.0) / 100.0;
    let page = num(decision, "page_size").unwrap_or(0.0);
    let points = arr(a, "points");
    let sample = &input["sample"];
    s.summary.push(format!(
        "{} blobs from {}: median {}, p10 {}, p90 {}; {:.0}% reads; durability {}",
        num(sample, "blobs").unwrap_or(0.0),
        text(sample, "source"),
        size_label(num(sample, "median").unwrap_or(0.0)),
        size_label(num(sample, "p10").unwrap_or(0.0)),
        size_label(num(sample, "p90").unwrap_or(0.0)),
        reads * 100.0,
        text(input, "durability")
    ));
    s.summary.push(match text(decision, "placement") {
        "split by size" => format!(
            "store blobs below {} inside the database, larger ones as files named in it",
            size_label(num(decision, "threshold_bytes").unwrap_or(0.0))
        ),
        "all as files" => "store the blobs as files named in the database (keeping any size range inside does \
                           not lower the expected time)"
            .into(),
        _ => "store every blob inside the database (moving any size range out to files does not lower the \
              expected time)"
            .into(),
    });
    s.summary.push(format!(
        "page_size={page}, journal_mode={}, synchronous={} (rollback journal / WAL write time: {})",
        text(journal, "best").to_uppercase(),
        text(journal, "best_synchronous").to_uppercase(),
        spread(&journal["rollback_over_wal"])
    ));
    for alt in arr(decision, "speedup_vs") {
        s.summary.push(format!(
            "vs {}: {} faster (median [min..max] over rounds)",
            alt.get(0).and_then(Value::as_str).unwrap_or(""),
            spread(&alt[1])
        ));
    }

    // Mixed time per operation vs size, per layout.
    let layout_series = |kind: &str, page: Option<f64>, name: &str, color: usize| Series {
        name: name.into(),
        dashed: false,
        color,
        points: points
            .iter()
            .filter_map(|p| {
                let l = arr(p, "layouts").iter().find(|l| {
                    text(l, "kind") == kind && page.is_none_or(|pg| num(l, "page_size") == Some(pg))
                })?;
                let r: Vec<f64> = arr(l, "read_ns").iter().filter_map(Value::as_f64).collect();
                let w: Vec<f64> = arr(l, "write_ns")
                    .iter()
                    .filter_map(Value::as_f64)
                    .collect();
                let mix: Vec<f64> = r
                    .iter()
                    .zip(&w)
                    .map(|(r, w)| reads * r + (1.0 - reads) * w)
                    .collect();
                let m = summarize(&mix);
                Some(Point::with_spread(num(p, "size")?, m.median, m.min, m.max))
            })
            .collect(),
    };
    s.figures.push(Figure {
        name: "layouts".into(),
        caption: format!(
            "Time per operation ({:.0}% reads, {:.0}% writes) at each measured size: median over rounds with \
             min..max whiskers. Where the database line is lowest, blobs of that size belong inside it.",
            reads * 100.0,
            (1.0 - reads) * 100.0
        ),
        chart: Chart::Line(LineChart {
            title: "time per operation vs blob size".into(),
            x: AxisSpec::new("blob size (bytes)", Scale::Log, Unit::Bytes),
            y: AxisSpec::new("time per operation", Scale::Log, Unit::Nanos),
            series: vec![
                layout_series("db", Some(page), &format!("inside the database (page {page})"), 0),
                layout_series("db+files", None, "files named in the database", 1),
                layout_series("files", None, "plain files", 2),
            ],
        }),
    });
    let groups: Vec<BarGroup> = arr(decision, "page_sizes")
        .iter()
        .filter_map(|ps| {
            Some(BarGroup {
                label: format!("page size {}", ps[0].as_f64()?),
                bars: vec![Some(Bar {
                    value: num(&ps[1], "median")?,
                    spread: num(&ps[1], "min").zip(num(&ps[1], "max")),
                })],
                marker: None,
            })
        })
        .collect();
    s.figures.push(Figure {
        name: "page-sizes".into(),
        caption: "Expected time per operation with every blob inside the database, relative to the best page \
                  size (1x), median over rounds with min..max whiskers."
            .into(),
        chart: Chart::Bars(BarChart {
            title: "page size: expected time relative to the best".into(),
            value_axis: AxisSpec::new("time / best page size's", Scale::Linear, Unit::Ratio),
            series_names: vec!["relative time".into()],
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    });
    let mut t = DataTable {
        name: "advise".into(),
        title: "Measurements per size and layout (median of rounds)".into(),
        headers: ["size", "share", "layout", "read", "write", "disk per blob"]
            .iter()
            .map(|h| h.to_string())
            .collect(),
        rows: Vec::new(),
    };
    for p in points {
        for l in arr(p, "layouts") {
            let med = |k: &str| {
                let v: Vec<f64> = arr(l, k).iter().filter_map(Value::as_f64).collect();
                human_duration_ns(summarize(&v).median)
            };
            t.rows.push(vec![
                size_label(num(p, "size").unwrap_or(0.0)),
                format!("{:.0}%", num(p, "share").unwrap_or(0.0) * 100.0),
                text(l, "layout").into(),
                med("read_ns"),
                med("write_ns"),
                format!(
                    "{:.0}",
                    num(l, "space_bytes").unwrap_or(0.0) / num(p, "blobs").unwrap_or(1.0)
                ),
            ]);
        }
    }
    s.tables.push(t);
}
