//! How `suite http` and `load` results are drawn: requests/s and latency vs concurrency.

use serde_json::Value;

use super::{DataTable, Figure, Section, arr, ns, num, text};
use crate::report::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};

pub(super) fn http(systems: &[Value], s: &mut Section) {
    let mut levels_seen: Vec<f64> = Vec::new();
    let mut rps = Vec::new();
    let mut lat = Vec::new();
    let mut t = DataTable::new(
        "http",
        "Requests per concurrency level",
        &[
            "system",
            "concurrency",
            "requests/s",
            "MB/s",
            "p50",
            "p99",
            "p99.9",
            "max",
            "ok",
            "errors",
        ],
    );
    for (i, sys) in systems.iter().enumerate() {
        let name = text(sys, "system").to_string();
        let levels = arr(sys, "levels");
        let point = |f: &dyn Fn(&Value) -> Option<f64>| -> Vec<Point> {
            levels
                .iter()
                .filter_map(|l| Some(Point::new(num(l, "concurrency")?, f(l)?)))
                .collect()
        };
        rps.push(Series {
            name: name.clone(),
            points: point(&|l| num(l, "requests_per_s")),
            dashed: false,
            color: i,
        });
        lat.push(Series {
            name: format!("{name} p50"),
            points: point(&|l| num(&l["latency"], "p50_ns")),
            dashed: false,
            color: i,
        });
        lat.push(Series {
            name: format!("{name} p99"),
            points: point(&|l| num(&l["latency"], "p99_ns")),
            dashed: true,
            color: i,
        });
        for l in levels {
            if let Some(c) = num(l, "concurrency")
                && !levels_seen.contains(&c)
            {
                levels_seen.push(c);
            }
            let errors: u64 = l["errors"]
                .as_object()
                .map(|o| o.values().filter_map(Value::as_u64).sum())
                .unwrap_or(0);
            let g = |k: &str| num(&l["latency"], k).map(ns).unwrap_or_default();
            t.rows.push(vec![
                name.clone(),
                num(l, "concurrency").unwrap_or(0.0).to_string(),
                format!("{:.0}", num(l, "requests_per_s").unwrap_or(0.0)),
                format!("{:.1}", num(l, "mb_per_s").unwrap_or(0.0)),
                g("p50_ns"),
                g("p99_ns"),
                g("p999_ns"),
                g("max_ns"),
                num(l, "ok").unwrap_or(0.0).to_string(),
                errors.to_string(),
            ]);
        }
    }
    let x = || {
        AxisSpec::new(
            "concurrent connections (log scale)",
            Scale::Log2,
            Unit::Plain,
        )
    };
    s.figures.push(Figure {
        name: "requests".into(),
        caption: "Requests per second at each concurrency level (closed loop: each connection sends its next \
                  request when the answer arrives)."
            .into(),
        chart: Chart::Line(LineChart {
            title: "requests/s vs concurrency".into(),
            x: x(),
            y: AxisSpec::new("requests/s", Scale::Linear, Unit::Plain),
            series: rps,
        }),
    });
    s.figures.push(Figure {
        name: "latency".into(),
        caption:
            "Response time at each concurrency level: median (solid) and 99th percentile (dashed)."
                .into(),
        chart: Chart::Line(LineChart {
            title: "response time vs concurrency".into(),
            x: x(),
            y: AxisSpec::new("response time", Scale::Log, Unit::Nanos),
            series: lat,
        }),
    });
    s.tables.push(t);
}
