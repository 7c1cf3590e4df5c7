//! `blobbench load`: options to load plans, one table row per level.

use std::time::Duration;

use serde_json::json;

use crate::cli::LoadArgs;
use crate::error::{Error, Result};
use crate::http::load::{LevelResult, LoadPlan, Order, Url, parse_url, run_level};
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::store::{self, Access};
use crate::target::Target;
use crate::units::human_duration_ns;

fn read_urls(args: &LoadArgs) -> Result<Vec<Url>> {
    let mut texts: Vec<String> = args.urls.clone();
    if let Some(f) = &args.url_file {
        let text = std::fs::read_to_string(f).map_err(|e| Error::io("cannot read", f, e))?;
        texts.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from),
        );
    }
    if texts.is_empty() {
        return Err(Error::usage(
            "no URL: give one or more URLs, or --urls FILE with one per line",
        ));
    }
    texts.iter().map(|t| parse_url(t)).collect()
}

fn levels(text: &str) -> Result<Vec<usize>> {
    text.split(',')
        .map(|c| match c.trim().parse::<usize>() {
            Ok(n) if (1..=100_000).contains(&n) => Ok(n),
            _ => Err(Error::usage(format!(
                "-c {text}: concurrency levels are numbers from 1 to 100000, e.g. -c 1,2,4,8"
            ))),
        })
        .collect()
}

/// Prints one level per row; shared with the http suite.
pub fn level_table(rows: &[(String, &LevelResult)]) -> Table {
    let mut t = Table::new([
        "level", "req/s", "MB/s", "p50", "p90", "p99", "p99.9", "max", "errors",
    ]);
    for (name, r) in rows {
        let l = &r.latency;
        t.row([
            name.clone(),
            format!("{:.0}", r.requests_per_s),
            format!("{:.1}", r.mb_per_s),
            human_duration_ns(l.p50_ns as f64),
            human_duration_ns(l.p90_ns as f64),
            human_duration_ns(l.p99_ns as f64),
            human_duration_ns(l.p999_ns as f64),
            human_duration_ns(l.max_ns as f64),
            if r.errors.total() == 0 {
                "0".to_string()
            } else {
                serde_json::to_string(&r.errors).unwrap_or_default()
            },
        ]);
    }
    t
}

pub fn run(args: &LoadArgs) -> Result<()> {
    let urls = read_urls(args)?;
    let levels = levels(&args.concurrency)?;
    if args.duration.is_some() && args.requests.is_some() {
        return Err(Error::usage(
            "-t and -n: give a duration or a request count, not both",
        ));
    }
    if args.requests == Some(0) {
        return Err(Error::usage("-n must be at least 1"));
    }
    if let Some(r) = args.rate
        && !(r > 0.0 && r.is_finite())
    {
        return Err(Error::usage(format!(
            "--rate {r}: requests per second must be positive"
        )));
    }
    let duration = match (args.duration, args.requests) {
        (Some(d), _) => Some(*d),
        (None, None) => Some(Duration::from_secs(10)),
        (None, Some(_)) => None,
    };
    let verify = match &args.verify {
        Some(t) => {
            let target = Target::parse(t)?;
            let mut s = store::open(&target, Access::ReadOnly)?;
            let spec = s.catalog()?.manifest.and_then(|m| m.spec);
            match spec {
                Some(spec) => Some(spec),
                None => {
                    return Err(Error::usage(format!(
                        "--verify {t}: no blobbench manifest there, so the content cannot be recomputed"
                    )));
                }
            }
        }
        None => None,
    };
    if let Some(j) = &args.json {
        crate::command::output::check_result_target(j)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the runtime", std::path::Path::new("load"), e))?;
    let mut results = Vec::new();
    for &c in &levels {
        let plan = LoadPlan {
            urls: urls.clone(),
            order: if args.order == "sequential" {
                Order::Sequential
            } else {
                Order::Random
            },
            concurrency: c,
            duration,
            requests: args.requests,
            rate: args.rate,
            timeout: *args.timeout,
            verify: verify.clone(),
        };
        let pb = crate::command::progress::bar(1000, &format!("-c {c}"));
        let r = runtime.block_on(run_level(plan, Some(&pb)));
        pb.finish_and_clear();
        results.push(r);
    }
    let rows: Vec<(String, &LevelResult)> = results
        .iter()
        .map(|r| (format!("-c {}", r.concurrency), r))
        .collect();
    println!(
        "blobbench load: {} URL(s), {} order, {}{}",
        urls.len(),
        args.order,
        match (duration, args.requests) {
            (Some(d), _) => format!("{} per level", humantime::format_duration(d)),
            (None, Some(n)) => format!("{n} requests per level"),
            _ => String::new(),
        },
        match args.rate {
            Some(r) => format!(", open loop at {r} req/s (latency from the intended send time)"),
            None => ", closed loop".into(),
        }
    );
    print!("{}", level_table(&rows).render());
    if verify.is_some() {
        println!(
            "every response checked byte for byte against {}",
            args.verify.as_deref().unwrap_or("")
        );
    }
    if let Some(j) = &args.json {
        let mut doc = ResultDocument::new(
            "load",
            crate::store::capture_environment(None),
            crate::result::Tables::Other(serde_json::Value::Null),
        );
        doc.tables = crate::result::Tables::Load(crate::result::load::LoadTables(
            json!({ "levels": results, "urls": urls.len(), "order": args.order, "rate": args.rate }),
        ));
        crate::command::output::write_result(&mut doc, j)?;
        println!("result written to {}", j.display());
    }
    let errors: u64 = results.iter().map(|r| r.errors.total()).sum();
    if errors > 0 {
        eprintln!("blobbench: {errors} requests failed (see the errors column)");
    }
    Ok(())
}
