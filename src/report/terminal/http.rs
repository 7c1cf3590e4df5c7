//! The terminal table of a `suite http` result: per level and system, the
//! requests/s, the ratio to the first system, the mean response time
//! (siege's figure, which the blog plotted), each with its interval over
//! the rounds, then p50 and p99; then the levels of any system that had
//! failed requests.

use super::load::level_table;
use super::sweep::time_text;
use crate::measure::estimate::{Estimate, NOISY_ADVICE};
use crate::report::table::Table;
use crate::result::http::{
    BLOG_FILES_OVER_SQLITE, BLOG_FILES_OVER_SQLITE_WORDS, BLOG_SETUP, HttpTables, describe_order,
    describe_sizes,
};
use crate::result::load::LevelResult;
use crate::units::human_duration_ns;

/// The whole terminal report of a `suite http` result, lines ending in "\n".
pub fn render(t: &HttpTables) -> String {
    let spec = &t.dataset;
    let on_target = t
        .stopping
        .as_ref()
        .is_some_and(|r| matches!(r.rule, crate::result::rounds::RoundsRule::Precision(_)));
    // With a precision target, the time per level is what the rounds took.
    let load = if on_target {
        "rounds per level and system as the target needed".to_string()
    } else {
        format!(
            "{} per level and system",
            humantime::format_duration(std::time::Duration::from_nanos(t.duration_ns))
        )
    };
    let mut out = format!(
        "blobbench suite http: {} blobs of {}, {}, {load}{}, keep-alive\n",
        spec.count,
        describe_sizes(spec),
        describe_order(t.url_order()),
        rounds_text(t)
    );
    for s in t.http.iter().filter(|s| s.table.is_some()) {
        let table = s.table.as_deref().unwrap_or_default();
        out.push_str(&format!("{}: {table}\n", s.system));
    }
    let table = levels_table(t);
    out.push_str(&table.render());
    let first = t.http.first().map_or("sqlite", |s| s.system.as_str());
    out.push_str(&format!(
        "req/s = successful requests per second; ratio = req/s of the system / req/s of {first} in the same round: above 1.00x the system serves more\n"
    ));
    out.push_str(
        "mean = mean response time of the answered requests (siege's \"response time\"); p50, p99 its tails over all rounds\n",
    );
    let figures = (0..t.levels()).flat_map(|i| {
        t.http
            .iter()
            .flat_map(move |s| [s.rate(i), s.mean(i), s.ratio_to(&t.http[0], i)])
    });
    let figures: Vec<Estimate> = figures.flatten().collect();
    if t.http.iter().all(|s| s.rounds.is_empty()) {
        out.push_str(
            "each level is one run of each system: no interval (rerun to see the spread)\n",
        );
    } else {
        out.push_str("[low-high] = interval over this run's rounds (exact sign-test order statistics of the rounds, of the paired per-round ratios for a ratio; 95% unless another coverage is printed beside it); a rerun can land outside it\n");
        if figures.iter().any(Estimate::noisy) {
            out.push_str(NOISY_ADVICE);
            out.push('\n');
        }
    }
    for line in t
        .stopping
        .iter()
        .flat_map(|r| r.lines("--max-rounds, --max-time (per level)"))
    {
        out.push_str(&line);
        out.push('\n');
    }
    for s in &t.http {
        if let Some(i) = &s.injected {
            let delivered = i
                .delivered_factor()
                .map(|f| format!("; delivered x{f:.3} (the waits over the requests' own time)"))
                .unwrap_or_default();
            out.push_str(&format!(
                "injected {} per request into {}: a testing aid (calibration), its figures include it{delivered}\n",
                i.inject, s.system
            ));
        }
    }
    out.push_str(&blog_lines(t));
    for s in &t.http {
        let errors: u64 = s.levels.iter().map(|r| r.errors.total()).sum();
        if errors > 0 {
            let rows: Vec<(String, &LevelResult)> = s
                .levels
                .iter()
                .map(|r| (format!("{} -c {}", s.system, r.concurrency), r))
                .collect();
            out.push_str(&format!("{} had {errors} failed requests:\n", s.system));
            out.push_str(&level_table(&rows).render());
        }
    }
    out
}

/// The blog's own figure (files ~2.3x the requests/s of its SQLite server)
/// beside this run's ratio at the level where the files serve the most;
/// nothing without a folder and a database to compare.
fn blog_lines(t: &HttpTables) -> String {
    let Some(b) = t.blog_beside() else {
        return String::new();
    };
    let mut out = format!(
        "the blog (document 003): files ~{BLOG_FILES_OVER_SQLITE}x the requests/s of its SQLite server: \"{BLOG_FILES_OVER_SQLITE_WORDS}\" ({BLOG_SETUP})\n"
    );
    out.push_str(&format!(
        "  here: {} / {} {} at -c {}, where {} serves the most ({} req/s)",
        b.files,
        b.db,
        b.ratio.format_ratio(),
        b.concurrency,
        b.files,
        b.files_rate.format(0)
    ));
    if b.db_peak.0 != b.concurrency {
        out.push_str(&format!(
            "; {} serves the most at -c {} ({} req/s)",
            b.db,
            b.db_peak.0,
            b.db_peak.1.format(0)
        ));
    }
    out.push_str("; both served by blobbench serve, every level's ratio in the table\n");
    out
}

/// `, 5 rounds of 2s after 1 warm-up`, or nothing for a result from
/// before rounds.
fn rounds_text(t: &HttpTables) -> String {
    let Some(n) = t.http.first().and_then(|s| s.rounds.first()).map(Vec::len) else {
        return String::new();
    };
    let each = t
        .round_ns
        .map_or(t.duration_ns as f64 / n.max(1) as f64, |r| r as f64);
    let warmup = t.warmup_rounds.unwrap_or(0);
    let (taken, target) = match &t.stopping {
        Some(r) => {
            let (lo, hi) = r.range();
            let taken = if lo == hi {
                format!("{hi} rounds")
            } else {
                format!("{lo}-{hi} rounds")
            };
            let target = match &r.rule {
                crate::result::rounds::RoundsRule::Precision(p) => format!(
                    ", each level until +/-{}",
                    crate::measure::precision::percent(p.half_width)
                ),
                crate::result::rounds::RoundsRule::Fixed { .. } => String::new(),
            };
            (taken, target)
        }
        None => (format!("{n} rounds"), String::new()),
    };
    format!(
        " ({taken} of {} after {warmup} warm-up{target})",
        human_duration_ns(each)
    )
}

/// One row per level and system: requests/s, the ratio to the first
/// system, the mean response time (each with its interval), p50 and p99.
fn levels_table(t: &HttpTables) -> Table {
    let first = t.http.first().map_or("sqlite", |s| s.system.as_str());
    let mut table = Table::new([
        "-c".to_string(),
        "system".into(),
        "req/s".into(),
        format!("ratio to {first}"),
        "mean".into(),
        "p50".into(),
        "p99".into(),
    ]);
    let Some(base) = t.http.first() else {
        return table;
    };
    for i in 0..t.levels() {
        for (si, s) in t.http.iter().enumerate() {
            // Every system ran the same levels in the same order.
            let Some(level) = s.levels.get(i) else {
                continue;
            };
            let ratio = match s.ratio_to(base, i) {
                Some(r) if si > 0 => r.format_ratio(),
                _ => "-".into(),
            };
            table.row([
                if si == 0 {
                    level.concurrency.to_string()
                } else {
                    String::new()
                },
                s.system.clone(),
                s.rate(i).map_or("-".into(), |e| e.format(0)),
                ratio,
                s.mean(i).map_or("-".into(), |e| time_text(&e)),
                human_duration_ns(level.latency.p50_ns as f64),
                human_duration_ns(level.latency.p99_ns as f64),
            ]);
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ResultDocument;
    use crate::result::Tables;
    use crate::result::http::RoundFigures;
    use crate::result::load::Order;

    /// The 0.1 fixture: a result written before the mean and `--order`.
    fn fixture() -> HttpTables {
        let text = include_str!("../../../tests/fixtures/results/http.json");
        let doc: ResultDocument = serde_json::from_str(text).expect("fixture");
        match doc.tables {
            Tables::Http(t) => t,
            _ => panic!("not a suite http result"),
        }
    }

    #[test]
    fn the_table_shows_each_systems_mean_beside_its_tails() {
        let t = fixture();
        let out = render(&t);
        let header = out.lines().nth(1).expect("table header");
        let mean = header.find("mean").expect(header);
        let p50 = header.find("p50").expect(header);
        assert!(mean < p50 && header.contains("ratio to sqlite"), "{header}");
        let level = &t.http[0].levels[0];
        assert!(level.latency.mean_ns > 0.0);
        let row = out.lines().nth(3).expect("first level");
        assert!(
            row.contains(&human_duration_ns(level.latency.mean_ns)),
            "{row}\n{out}"
        );
        assert!(out.contains("mean = mean response time"), "{out}");
        // One run per level: the figures alone, and the table says so.
        assert!(!row.contains('['), "{row}");
        assert!(out.contains("no interval"), "{out}");
    }

    #[test]
    fn with_rounds_every_figure_carries_its_interval() {
        let mut t = fixture();
        for (k, s) in t.http.iter_mut().enumerate() {
            s.rounds = s
                .levels
                .iter()
                .map(|_| {
                    (1..=5)
                        .map(|r| RoundFigures {
                            requests_per_s: 1000.0 * r as f64 * (k + 1) as f64,
                            mean_ns: 1e5 * r as f64,
                        })
                        .collect()
                })
                .collect();
        }
        t.warmup_rounds = Some(1);
        let out = render(&t);
        assert!(
            out.lines().next().unwrap().contains("(5 rounds of"),
            "{out}"
        );
        let second = out.lines().nth(4).expect("second system's row");
        // The second system serves twice the first in every round: the
        // paired ratio is 2 with no spread, though each rate spreads 1-5x.
        assert!(second.contains("2.00x [2.00-2.00]"), "{second}\n{out}");
        let first = out.lines().nth(3).unwrap();
        assert!(first.contains("3000 [1000-5000]"), "{first}");
        assert!(
            first.contains("300.00 µs [100.00 µs-500.00 µs] ~"),
            "{first}"
        );
        assert!(out.contains("interval over this run's rounds"), "{out}");
        assert!(out.contains(NOISY_ADVICE), "{out}");
        assert!(!out.contains("no interval"), "{out}");
    }

    #[test]
    fn the_header_names_the_order_and_older_results_say_random() {
        let mut t = fixture();
        assert!(render(&t).lines().next().unwrap().contains("random order"));
        t.order = Some(Order::Sequential);
        let first = render(&t).lines().next().unwrap().to_string();
        assert!(first.contains("sequential order"), "{first}");
        assert!(first.contains("20000 +/- 5000 bytes"), "{first}");
    }

    #[test]
    fn the_blogs_figure_is_printed_beside_the_measured_ratio() {
        let mut t = fixture();
        let out = render(&t);
        // The blog's words and figure, then this run's: dir over sqlite at
        // -c 2, where dir serves the most (17201 / 14550 req/s).
        let at = out.find("the blog (document 003)").expect(&out);
        let blog = &out[at..];
        assert!(blog.contains("files ~2.3x the requests/s"), "{blog}");
        assert!(blog.contains(BLOG_FILES_OVER_SQLITE_WORDS), "{blog}");
        assert!(
            blog.contains(
                "  here: dir / sqlite 1.18x at -c 2, where dir serves the most (17201 req/s)"
            ),
            "{blog}"
        );
        // With rounds, the ratio carries its interval.
        for (k, s) in t.http.iter_mut().enumerate() {
            s.rounds = s
                .levels
                .iter()
                .enumerate()
                .map(|(i, _)| {
                    (1..=5)
                        .map(|r| RoundFigures {
                            requests_per_s: 1000.0 * (r + i) as f64 * (1.0 + k as f64 * 1.5),
                            mean_ns: 1e5,
                        })
                        .collect()
                })
                .collect();
        }
        let out = render(&t);
        let here = out
            .lines()
            .find(|l| l.starts_with("  here: dir / sqlite 2.50x [2.50-2.50]"))
            .expect(&out);
        assert!(
            here.contains(" at -c 2, where dir serves the most"),
            "{here}"
        );
        // Without a folder there is nothing to set beside the blog's.
        t.http.retain(|s| s.system != "dir");
        assert!(!render(&t).contains("the blog"));
    }
}
