//! `blobbench load`: options to load plans, one table row per level.

use std::time::Duration;

use crate::cli::LoadArgs;
use crate::command::progress::Bars;
use crate::error::{Error, Result};
use crate::http::load::{LoadPlan, Order, Url, parse_url, run_level};
use crate::progress::Progress;
use crate::report::terminal;
use crate::result::load::LoadTables;
use crate::result::{ResultDocument, Tables};
use crate::store::{self, Access};
use crate::target::Target;

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

/// Runs `load`: every level against the URLs, one table row per level.
pub fn run(args: &LoadArgs) -> Result<()> {
    let urls = read_urls(args)?;
    let levels = levels(&args.concurrency)?;
    let duration = duration_of(args)?;
    let verify = verify_spec(args)?;
    if let Some(j) = &args.json {
        crate::command::output::check_result_target(j)?;
    }
    crate::http::raise_fd_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the runtime", std::path::Path::new("load"), e))?;
    let order = if args.order == "sequential" {
        Order::Sequential
    } else {
        Order::Random
    };
    // Captured before the first request, so its load average and CPU steal
    // cover the load (the client competes for the same CPUs as the server).
    let mut environment = crate::store::capture_environment(None);
    let bars = Bars::new();
    let mut results = Vec::new();
    for &c in &levels {
        let plan = LoadPlan {
            urls: urls.clone(),
            order,
            concurrency: c,
            duration,
            requests: args.requests,
            rate: args.rate,
            timeout: *args.timeout,
            verify: verify.clone(),
        };
        bars.start(&format!("-c {c}"), 1000);
        let r = runtime.block_on(run_level(plan, &bars));
        bars.finish();
        results.push(r);
    }
    crate::command::output::finish_environment(&mut environment);
    let tables = LoadTables {
        levels: results,
        urls: urls.len(),
        order,
        rate: args.rate,
    };
    print_tables(args, &tables, duration, verify.is_some());
    let errors: u64 = tables.levels.iter().map(|r| r.errors.total()).sum();
    let warnings = rate_warnings(&tables);
    if let Some(j) = &args.json {
        let mut doc = ResultDocument::new("load", environment, Tables::Load(tables));
        crate::command::output::write_result(&mut doc, j)?;
        println!("result written to {}", j.display());
    }
    if errors > 0 {
        eprintln!("blobbench: {errors} requests failed (see the errors column)");
    }
    for w in warnings {
        eprintln!("blobbench: warning: {w}");
    }
    Ok(())
}

/// Each level's duration (None: a request count), checking -t, -n and --rate.
fn duration_of(args: &LoadArgs) -> Result<Option<Duration>> {
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
    Ok(match (args.duration, args.requests) {
        (Some(d), _) => Some(*d),
        (None, None) => Some(Duration::from_secs(10)),
        (None, Some(_)) => None,
    })
}

/// The dataset `--verify` names, whose content blobbench can recompute.
fn verify_spec(args: &LoadArgs) -> Result<Option<crate::dataset::DatasetSpec>> {
    let Some(t) = &args.verify else {
        return Ok(None);
    };
    let target = Target::parse(t)?;
    let mut s = store::open(&target, Access::ReadOnly)?;
    match s.catalog()?.manifest.and_then(|m| m.spec) {
        Some(spec) => Ok(Some(spec)),
        None => Err(Error::usage(format!(
            "--verify {t}: no blobbench manifest there, so the content cannot be recomputed"
        ))),
    }
}

/// The header, the levels table, the open-loop schedule and error bursts.
fn print_tables(args: &LoadArgs, tables: &LoadTables, duration: Option<Duration>, verified: bool) {
    println!(
        "blobbench load: {} URL(s), {} order, {}{}",
        tables.urls,
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
    print!("{}", terminal::load::levels(tables).render());
    if let Some(t) = terminal::load::schedule(tables) {
        println!(
            "open loop: lag = actual send - intended start (the generator's own lateness); \
             service = send to response; the table above counts from the intended start"
        );
        print!("{}", t.render());
    }
    for line in tables
        .levels
        .iter()
        .filter_map(terminal::load::error_bursts)
    {
        println!("errors over time: {line}");
    }
    if verified {
        println!(
            "every response checked byte for byte against {}",
            args.verify.as_deref().unwrap_or("")
        );
    }
}

/// The levels whose open loop fell behind its target rate.
fn rate_warnings(tables: &LoadTables) -> Vec<String> {
    tables
        .levels
        .iter()
        .filter_map(|r| {
            let w = r.open_loop.as_ref()?.warning.as_ref()?;
            Some(format!("-c {}: {w}", r.concurrency))
        })
        .collect()
}
