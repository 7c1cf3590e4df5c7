//! How `suite http` and `load` results are drawn: requests/s, the mean
//! response time (the blog's two plots, siege's two figures) and the
//! latency tails vs concurrency.

use super::{DataTable, Figure, Section, ns};
use crate::report::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};
use crate::report::terminal::sweep::time_text;
use crate::result::http::{HttpTables, describe_order, describe_sizes};
use crate::result::load::LevelResult;

/// What a `suite http` run served and how it asked, as the summary's first
/// lines: the sizes (the blog's or not), the URL order, the time per level.
pub(super) fn what_ran(t: &HttpTables, s: &mut Section) {
    let spec = &t.dataset;
    let rounds = match t.http.first().and_then(|s| s.rounds.first()).map(Vec::len) {
        Some(n) => format!(
            "{n} rounds per level and system after {} warm-up, the systems' order reversed every round; \
             the table \"over the rounds\" gives each figure's 95% interval",
            t.warmup_rounds.unwrap_or(0)
        ),
        None => "one run per level (no interval)".into(),
    };
    s.summary.push(format!(
        "{} blobs of {}; {}; {} per level and system, keep-alive; {rounds}.",
        spec.count,
        describe_sizes(spec),
        describe_order(t.url_order()),
        humantime::format_duration(std::time::Duration::from_nanos(t.duration_ns))
    ));
    for sys in t.http.iter().filter(|sys| sys.table.is_some()) {
        let table = sys.table.as_deref().unwrap_or_default();
        s.summary.push(format!("{}: {table}.", sys.system));
    }
}

/// Requests/s, the ratio to the first system and the mean response time,
/// each the median of the rounds with its 95% interval (nothing for
/// results from before rounds).
pub(super) fn intervals(t: &HttpTables, s: &mut Section) {
    let Some(base) = t.http.first().filter(|b| !b.rounds.is_empty()) else {
        return;
    };
    let ratio = format!("ratio to {} (paired rounds)", base.system);
    let mut table = DataTable::new(
        "http-rounds",
        "Over the rounds: median [95% interval]",
        &["system", "concurrency", "requests/s", &ratio, "mean"],
    );
    for i in 0..t.levels() {
        for (si, sys) in t.http.iter().enumerate() {
            let Some(level) = sys.levels.get(i) else {
                continue;
            };
            table.rows.push(vec![
                sys.system.clone(),
                level.concurrency.to_string(),
                sys.rate(i).map_or("-".into(), |e| e.format(0)),
                match sys.ratio_to(base, i) {
                    Some(r) if si > 0 => r.format_ratio(),
                    _ => "-".into(),
                },
                sys.mean(i).map_or("-".into(), |e| time_text(&e)),
            ]);
        }
    }
    s.tables.push(table);
}

/// Requests/s, mean response time and latency-tail charts and the
/// per-level table of every system (name and levels, as
/// `view::http_systems` lists them).
pub(super) fn http(systems: &[(&str, &[LevelResult])], s: &mut Section) {
    let mut rps = Vec::new();
    let mut lat = Vec::new();
    let mut mean = Vec::new();
    let mut t = DataTable::new(
        "http",
        "Requests per concurrency level",
        &[
            "system",
            "concurrency",
            "requests/s",
            "MB/s",
            "mean",
            "p50",
            "p99",
            "p99.9",
            "max",
            "ok",
            "errors",
        ],
    );
    for (i, &(name, levels)) in systems.iter().enumerate() {
        let point = |f: &dyn Fn(&LevelResult) -> f64| -> Vec<Point> {
            levels
                .iter()
                .map(|l| Point::new(l.concurrency as f64, f(l)))
                .collect()
        };
        rps.push(Series {
            name: name.to_string(),
            points: point(&|l| l.requests_per_s),
            dashed: false,
            color: i,
        });
        mean.push(Series {
            name: name.to_string(),
            points: point(&|l| l.latency.mean_ns),
            dashed: false,
            color: i,
        });
        lat.push(Series {
            name: format!("{name} p50"),
            points: point(&|l| l.latency.p50_ns as f64),
            dashed: false,
            color: i,
        });
        lat.push(Series {
            name: format!("{name} p99"),
            points: point(&|l| l.latency.p99_ns as f64),
            dashed: true,
            color: i,
        });
        for l in levels {
            let g = |v: u64| ns(v as f64);
            t.rows.push(vec![
                name.to_string(),
                l.concurrency.to_string(),
                format!("{:.0}", l.requests_per_s),
                format!("{:.1}", l.mb_per_s),
                ns(l.latency.mean_ns),
                g(l.latency.p50_ns),
                g(l.latency.p99_ns),
                g(l.latency.p999_ns),
                g(l.latency.max_ns),
                l.ok.to_string(),
                l.errors.total().to_string(),
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
        name: "mean".into(),
        caption: "Mean response time of the answered requests at each concurrency level (siege's \
                  \"response time\", the blog's second plot), over all of a level's rounds; \
                  suite http's intervals are in the table over the rounds."
            .into(),
        chart: Chart::Line(LineChart {
            title: "mean response time vs concurrency".into(),
            x: x(),
            y: AxisSpec::new("mean response time", Scale::Linear, Unit::Nanos),
            series: mean,
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
    if let Some(t) = schedule(systems) {
        s.tables.push(t);
    }
}

/// Open loop: how each level kept its schedule (None when no level ran in
/// open loop): target and achieved rate, requests not sent, the
/// generator's send lag and the service time (send to response).
fn schedule(systems: &[(&str, &[LevelResult])]) -> Option<DataTable> {
    let mut t = DataTable::new(
        "open-loop",
        "Open loop: schedule kept (lag = actual send - intended start; service = send to response)",
        &[
            "system",
            "concurrency",
            "target/s",
            "achieved/s",
            "due",
            "not sent",
            "lag p50",
            "lag p99",
            "lag max",
            "service p50",
            "service p99",
        ],
    );
    for &(name, levels) in systems {
        for l in levels {
            let Some(o) = &l.open_loop else { continue };
            let g = |v: u64| ns(v as f64);
            t.rows.push(vec![
                name.to_string(),
                l.concurrency.to_string(),
                format!("{:.0}", o.target_per_s),
                format!("{:.0}", o.achieved_per_s),
                o.due.to_string(),
                o.not_sent.to_string(),
                g(o.send_lag.p50_ns),
                g(o.send_lag.p99_ns),
                g(o.send_lag.max_ns),
                g(o.service_time.p50_ns),
                g(o.service_time.p99_ns),
            ]);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}
