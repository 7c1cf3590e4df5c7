//! How a `suite lob` result is drawn: write and read time vs blob size, time to read 1 GB.

use serde_json::Value;

use super::{DataTable, Figure, Section, arr, ns, num, text};
use crate::measure::stats::summarize;
use crate::report::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};

pub(super) fn lob(tables: &Value, s: &mut Section) {
    let samples = arr(tables, "lob");
    let mut systems: Vec<String> = Vec::new();
    for x in samples {
        let name = text(x, "system").to_string();
        if !systems.contains(&name) {
            systems.push(name);
        }
    }
    let series_of = |key: &str, scale: f64| -> Vec<Series> {
        systems
            .iter()
            .enumerate()
            .map(|(i, sys)| Series {
                name: sys.clone(),
                dashed: false,
                color: i,
                points: samples
                    .iter()
                    .filter(|x| text(x, "system") == sys)
                    .filter_map(|x| {
                        let v: Vec<f64> = arr(x, key).iter().filter_map(Value::as_f64).collect();
                        let size = num(x, "size")?;
                        (!v.is_empty()).then(|| {
                            let m = summarize(&v);
                            Point::with_spread(size, m.median * scale, m.min * scale, m.max * scale)
                        })
                    })
                    .collect(),
            })
            .collect()
    };
    for (key, what) in [("write_ns", "write"), ("read_ns", "read")] {
        s.figures.push(Figure {
            name: what.into(),
            caption: format!(
                "Time to {what} one blob vs blob size, log-log, median with min..max whiskers over the \
                 blobs of each size."
            ),
            chart: Chart::Line(LineChart {
                title: format!("{what} time per blob vs blob size"),
                x: AxisSpec::new("blob size (bytes)", Scale::Log, Unit::Bytes),
                y: AxisSpec::new(format!("time per {what}"), Scale::Log, Unit::Nanos),
                series: series_of(key, 1.0),
            }),
        });
    }
    let per_gb: Vec<Series> = systems
        .iter()
        .enumerate()
        .map(|(i, sys)| Series {
            name: sys.clone(),
            dashed: false,
            color: i,
            points: arr(tables, "read_1gb_seconds")
                .iter()
                .filter(|x| text(x, "system") == sys)
                .filter_map(|x| Some(Point::new(num(x, "size")?, num(x, "seconds")?)))
                .collect(),
        })
        .collect();
    s.figures.push(Figure {
        name: "read-1gb".into(),
        caption: "Time to read 1 GB of content stored as blobs of each size (median read time x blobs per GB), \
                  as in the 2008 comparative LOB benchmark."
            .into(),
        chart: Chart::Line(LineChart {
            title: "time to read 1 GB vs blob size".into(),
            x: AxisSpec::new("blob size (bytes)", Scale::Log, Unit::Bytes),
            y: AxisSpec::new("seconds per GB", Scale::Log, Unit::Seconds),
            series: per_gb,
        }),
    });
    let mut t = DataTable::new(
        "lob",
        "Write and read time per blob",
        &[
            "system",
            "size",
            "write median",
            "write max",
            "read median",
            "read max",
        ],
    );
    for x in samples {
        let m = |k: &str| {
            let v: Vec<f64> = arr(x, k).iter().filter_map(Value::as_f64).collect();
            (!v.is_empty()).then(|| summarize(&v))
        };
        let (w, r) = (m("write_ns"), m("read_ns"));
        t.rows.push(vec![
            text(x, "system").into(),
            num(x, "size").unwrap_or(0.0).to_string(),
            w.as_ref().map(|s| ns(s.median)).unwrap_or_default(),
            w.as_ref().map(|s| ns(s.max)).unwrap_or_default(),
            r.as_ref().map(|s| ns(s.median)).unwrap_or_default(),
            r.as_ref().map(|s| ns(s.max)).unwrap_or_default(),
        ]);
    }
    s.tables.push(t);
    for b in arr(tables, "best_size") {
        s.summary.push(format!(
            "best blob size for {}: {} ({:.2} s per GB read)",
            text(b, "system"),
            crate::report::chart::size_label(num(b, "size").unwrap_or(0.0)),
            num(b, "seconds_per_gb").unwrap_or(0.0)
        ));
    }
    for k in arr(tables, "skipped") {
        s.summary.push(format!(
            "skipped {}: {}",
            text(k, "system"),
            text(k, "reason")
        ));
    }
}
