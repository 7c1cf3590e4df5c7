//! How `suite http` and `load` results are drawn: requests/s, the mean
//! response time (the blog's two plots, siege's two figures) and the
//! latency tails vs concurrency.

use super::{DataTable, Figure, Section, estimate_point, interval_caption, ns};
use crate::measure::estimate::Estimate;
use crate::report::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};
use crate::report::terminal::sweep::time_text;
use crate::result::http::{
    BLOG_FILES_OVER_SQLITE, BLOG_FILES_OVER_SQLITE_WORDS, BLOG_SETUP, HttpSystem, HttpTables,
    describe_order, describe_sizes,
};
use crate::result::load::LevelResult;

/// What a `suite http` run served and how it asked, as the summary's first
/// lines: the sizes (the blog's or not), the URL order, the time per level.
pub(in crate::report) fn what_ran(t: &HttpTables, s: &mut Section) {
    let spec = &t.dataset;
    let rounds = match t.http.first().and_then(|s| s.rounds.first()).map(Vec::len) {
        Some(n) => format!(
            "{n} rounds per level and system after {} warm-up, the systems' order reversed every round; \
             the table \"over the rounds\" gives each figure's interval over this run's rounds",
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
    blog(t, s);
}

/// The blog's own figure (files ~2.3x the requests/s of its SQLite server)
/// beside this run's ratio, as a summary line and a table of the two.
fn blog(t: &HttpTables, s: &mut Section) {
    let Some(b) = t.blog_beside() else {
        return;
    };
    let here = format!(
        "{} / {} at -c {}, where {} serves the most ({} requests/s){}; both served by blobbench serve",
        b.files,
        b.db,
        b.concurrency,
        b.files,
        b.files_rate.format(0),
        if b.db_peak.0 == b.concurrency {
            String::new()
        } else {
            format!(
                "; {} serves the most at -c {} ({} requests/s)",
                b.db,
                b.db_peak.0,
                b.db_peak.1.format(0)
            )
        }
    );
    s.summary.push(format!(
        "The blog: files ~{BLOG_FILES_OVER_SQLITE}x the requests/s of its SQLite server; here {} ({} / {} at -c {}).",
        b.ratio.format_ratio(),
        b.files,
        b.db,
        b.concurrency
    ));
    let mut table = DataTable::new(
        "http-blog",
        "The blog's figure beside this run's: files' requests/s over the database's",
        &["source", "files / database", "how"],
    );
    table.rows.push(vec![
        "the blog (document 003, published)".into(),
        format!("~{BLOG_FILES_OVER_SQLITE}x"),
        format!("\"{BLOG_FILES_OVER_SQLITE_WORDS}\" ({BLOG_SETUP})"),
    ]);
    table
        .rows
        .push(vec!["this run".into(), b.ratio.format_ratio(), here]);
    s.tables.push(table);
}

/// Requests/s, the ratio to the first system and the mean response time,
/// each the median of the rounds with its interval (nothing for
/// results from before rounds).
pub(in crate::report) fn intervals(t: &HttpTables, s: &mut Section) {
    let Some(base) = t.http.first().filter(|b| !b.rounds.is_empty()) else {
        return;
    };
    let ratio = format!("ratio to {} (paired rounds)", base.system);
    let mut table = DataTable::new(
        "http-rounds",
        "Over this run's rounds: median [interval]",
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
/// `view::http_systems` lists them). `rounds`: suite http's result, whose
/// rounds give the requests/s and mean points their intervals (load
/// measures each level once).
pub(in crate::report) fn http(
    systems: &[(&str, &[LevelResult])],
    rounds: Option<&HttpTables>,
    s: &mut Section,
) {
    let mut rps = Vec::new();
    let mut lat = Vec::new();
    let mut mean = Vec::new();
    let (mut drawn_rates, mut drawn_means) = (Vec::new(), Vec::new());
    let mut t = DataTable::new(
        "http",
        format!("Requests per concurrency level{}", open_loop_label(systems)),
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
        let system = rounds.and_then(|t| t.http.get(i));
        // Each level's estimate over the rounds, or its one figure.
        let estimated = |over_rounds: &dyn Fn(&HttpSystem, usize) -> Option<Estimate>,
                         one: fn(&LevelResult) -> f64,
                         drawn: &mut Vec<Estimate>|
         -> Vec<Point> {
            levels
                .iter()
                .enumerate()
                .map(|(li, l)| {
                    let e = system
                        .and_then(|sys| over_rounds(sys, li))
                        .unwrap_or_else(|| Estimate::point(one(l), 1));
                    drawn.push(e);
                    estimate_point(l.concurrency as f64, &e)
                })
                .collect()
        };
        rps.push(Series {
            name: name.to_string(),
            points: estimated(&HttpSystem::rate, |l| l.requests_per_s, &mut drawn_rates),
            dashed: false,
            color: i,
        });
        mean.push(Series {
            name: name.to_string(),
            points: estimated(&HttpSystem::mean, |l| l.latency.mean_ns, &mut drawn_means),
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
        caption: format!(
            "Requests per second at each concurrency level (closed loop: each connection sends its \
             next request when the answer arrives). {}",
            interval_caption(&drawn_rates)
        ),
        chart: Chart::Line(LineChart {
            title: "requests/s vs concurrency".into(),
            x: x(),
            y: AxisSpec::new("requests/s", Scale::Linear, Unit::Plain),
            series: rps,
        }),
    });
    s.figures.push(Figure {
        name: "mean".into(),
        caption: format!(
            "Mean response time of the answered requests at each concurrency level (siege's \
             \"response time\", the blog's second plot), each round's mean taken apart. {}",
            interval_caption(&drawn_means)
        ),
        chart: Chart::Line(LineChart {
            title: "mean response time vs concurrency".into(),
            x: x(),
            y: AxisSpec::new("mean response time", Scale::Linear, Unit::Nanos),
            series: mean,
        }),
    });
    s.figures.push(Figure {
        name: "latency".into(),
        caption: "Response time at each concurrency level: median (solid) and 99th percentile \
                  (dashed) of every answered request of the level, all its rounds pooled: \
                  percentiles of one distribution, so no whiskers (the charts above have the \
                  rounds' intervals)."
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
    for &(_, levels) in systems {
        s.summary
            .extend(crate::report::terminal::load::latency_notes(levels));
        s.summary.extend(
            crate::report::terminal::load::open_loop_warnings(levels)
                .into_iter()
                .map(|w| format!("Warning: {w}")),
        );
    }
}

/// Open loop: what the percentiles of the levels table count, for its
/// title (nothing for a closed loop).
fn open_loop_label(systems: &[(&str, &[LevelResult])]) -> &'static str {
    let open: Vec<_> = systems
        .iter()
        .flat_map(|(_, levels)| levels.iter())
        .filter_map(|l| l.open_loop.as_ref())
        .collect();
    if open.is_empty() {
        ""
    } else if open
        .iter()
        .all(|o| o.latency_includes_not_sent || o.not_sent == 0)
    {
        " (open loop: response times from each request's intended start, including every request \
         never sent at its wait until the level's end)"
    } else {
        " (open loop: response times from each request's intended start, of the sent requests \
         only: requests never sent are left out, see the summary)"
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
                crate::report::terminal::load::not_sent_cell(o),
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

#[cfg(test)]
mod tests {
    use crate::result::http::BLOG_FILES_OVER_SQLITE_WORDS;
    use crate::result::{ResultDocument, ResultKind, Tables};

    #[test]
    fn an_open_loop_load_with_one_request_not_sent_warns_in_the_report() {
        let level = crate::report::terminal::load::tests::open_level(
            1,
            Some("1 of 100 due requests (1.0%) not sent (generator behind)"),
        );
        let doc = ResultDocument::new(
            ResultKind::Load,
            crate::measure::environment::Environment::default(),
            Tables::Load(crate::result::load::LoadTables {
                levels: vec![level],
                urls: 1,
                order: crate::result::load::Order::Random,
                rate: Some(100.0),
                url_digest: None,
                servers: vec![],
                merged: None,
            }),
        );
        let section = crate::report::sections::section(&doc, "load.json", 0);
        assert!(
            section
                .summary
                .iter()
                .any(|l| l
                    == "Warning: -c 2: 1 of 100 due requests (1.0%) not sent (generator behind)"),
            "{:?}",
            section.summary
        );
        let levels = section.tables.iter().find(|t| t.name == "http").unwrap();
        assert!(
            levels
                .title
                .contains("including every request never sent at its wait"),
            "{}",
            levels.title
        );
        let schedule = section
            .tables
            .iter()
            .find(|t| t.name == "open-loop")
            .unwrap();
        assert_eq!(schedule.rows[0][5], "1 (1.0%)");
        let html = crate::report::html::render(&[section]);
        assert!(html.contains("1 of 100 due requests (1.0%) not sent"));
    }

    #[test]
    fn the_report_sets_the_blogs_figure_beside_the_measured_ratio() {
        let text = include_str!("../../../tests/fixtures/results/http.json");
        let doc: ResultDocument = serde_json::from_str(text).expect("fixture");
        assert!(matches!(doc.tables, Tables::Http(_)));
        let section = crate::report::sections::section(&doc, "http.json", 0);
        let table = section
            .tables
            .iter()
            .find(|t| t.name == "http-blog")
            .expect("the blog's table");
        assert_eq!(table.rows[0][1], "~2.3x");
        assert_eq!(table.rows[1][1], "1.18x");
        assert!(
            table.rows[1][2].starts_with("dir / sqlite at -c 2"),
            "{:?}",
            table.rows[1]
        );
        let html = crate::report::html::render(&[section]);
        assert!(html.contains("~2.3x"));
        assert!(html.contains("1.18x"));
        assert!(html.contains("The possible throughput (transaction/second)"));
        assert!(BLOG_FILES_OVER_SQLITE_WORDS.contains("~2.3 times"));
    }
}
