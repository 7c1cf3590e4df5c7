//! `blobbench load`: options to load plans, one table row per level.

use std::time::Duration;

use crate::cli::LoadArgs;
use crate::cli::values::choice_name;
use crate::command::progress::Bars;
use crate::error::{Error, Result};
use crate::http::load::schedule::Schedule;
use crate::http::load::{LoadPlan, Order, Url, parse_url, run_level};
use crate::progress::Progress;
use crate::report::terminal;
use crate::result::load::LoadTables;
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::store::{self, Access};
use crate::target::Target;

fn read_urls(args: &LoadArgs) -> Result<Vec<Url>> {
    let mut texts: Vec<String> = args.urls.clone();
    if let Some(f) = &args.url_file {
        let text = read_url_file("--urls", f)?;
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

/// A file of URLs as text; a folder, or a file that is not text, is a
/// usage error naming the file and what it should hold.
pub fn read_url_file(option: &str, f: &std::path::Path) -> Result<String> {
    if f.is_dir() {
        return Err(Error::usage(format!(
            "{option} {}: is a folder; name a text file with one URL per line",
            f.display()
        )));
    }
    let bytes = std::fs::read(f).map_err(|e| Error::io("cannot read", f, e))?;
    String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!(
            "{option} {}: not a text file; name a text file with one URL per line",
            f.display()
        ))
    })
}

/// Runs `load`: every level against the URLs, one table row per level.
pub fn run(args: &LoadArgs) -> Result<()> {
    let urls = read_urls(args)?;
    let duration = duration_of(args)?;
    // -n conflicts with --start-at: a duration is there whenever a start is.
    let schedule = match (args.start_at, duration) {
        (Some(at), Some(d)) => Some(Schedule::new(at, d)?),
        _ => None,
    };
    let verify = verify_spec(args)?;
    if let Some(j) = &args.json {
        crate::command::output::check_result_target(j)?;
    }
    crate::http::raise_fd_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the runtime", std::path::Path::new("load"), e))?;
    let order = Order::from(args.order);
    // Captured before the first request, so its load average and CPU steal
    // cover the load (the client competes for the same CPUs as the server).
    let mut environment = crate::store::capture_environment(None);
    let bars = Bars::new();
    let mut results = Vec::new();
    let max_errors = args.max_errors;
    for (i, &c) in args.concurrency.iter().enumerate() {
        let plan = LoadPlan {
            urls: urls.clone(),
            order,
            concurrency: c,
            duration,
            requests: args.requests,
            rate: args.rate,
            timeout: *args.timeout,
            verify: verify.clone(),
            max_errors,
            inject: None,
        };
        bars.start(&format!("-c {c}"), 1000);
        let scheduled = schedule.map(|s| s.wait_for(i, &bars));
        let mut r = runtime.block_on(run_level(plan, &bars));
        r.scheduled_unix_ns = scheduled;
        bars.finish();
        results.push(r);
    }
    crate::command::output::finish_environment(&mut environment);
    let tables = LoadTables {
        levels: results,
        urls: urls.len(),
        order,
        rate: args.rate,
        url_digest: Some(crate::http::load::url_digest(&urls)),
        servers: crate::http::load::servers(&urls),
        merged: None,
    };
    print_tables(args, &tables, duration, verify.is_some());
    for l in &tables.levels {
        if let Some(why) = &l.stopped_early {
            println!("-c {}: stopped early: {why}", l.concurrency);
        }
    }
    if let Some(s) = schedule {
        println!(
            "{}",
            terminal::load::schedule_line(&tables.levels, s.slot())
        );
    }
    let failure = failure(&tables, &urls, verify.is_some());
    let warnings = rate_warnings(&tables);
    if let Some(j) = &args.json {
        let mut doc = ResultDocument::new(ResultKind::Load, environment, Tables::Load(tables));
        crate::command::output::write_result(&mut doc, j)?;
        println!("result written to {}", crate::command::streams::shown(j));
    }
    for w in warnings {
        eprintln!("blobbench: warning: {w}");
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Exit status 1, with one summary line, when any request failed (after
/// the result is written): "12 of 40,000 requests failed: 10 timeout, 2
/// server error 503; see the errors column". A level with no successful
/// request at all, or --verify finding a body of the wrong length or bytes,
/// says so instead.
fn failure(tables: &LoadTables, urls: &[Url], verified: bool) -> Option<Error> {
    let server = urls.first().map(|u| u.authority.as_str()).unwrap_or("load");
    let wrong: u64 = tables
        .levels
        .iter()
        .map(|r| r.errors.content + r.errors.length)
        .sum();
    // Wrong bytes are the more telling news, even when nothing succeeded.
    if verified && wrong > 0 {
        return Some(Error::Verify(format!(
            "{wrong} response(s) from {server} had the wrong length or bytes (--verify); the server does not serve the dataset as stored"
        )));
    }
    if let Some(r) = tables
        .levels
        .iter()
        .find(|r| r.ok == 0 && r.requests == 0 && r.cut_at_end > 0)
    {
        return Some(Error::server(
            std::path::Path::new(server),
            format!(
                "none of the {} requests at -c {} was answered a second after -t, where they were cut; check that the server is up and answers within -t",
                r.cut_at_end, r.concurrency
            ),
        ));
    }
    if let Some(r) = tables.levels.iter().find(|r| r.ok == 0 && r.requests > 0) {
        return Some(Error::server(
            std::path::Path::new(server),
            format!(
                "every one of the {} requests at -c {} failed ({}); check that the server is up and the URLs are right",
                r.requests,
                r.concurrency,
                r.errors.describe()
            ),
        ));
    }
    tables
        .failures_line()
        .map(|line| Error::OperationsFailed(format!("{line}; see the errors column")))
}

/// The slowest open loop: one request per 1000 s (slower would never send
/// within a level; the schedule's times must stay representable).
const MIN_RATE: f64 = 0.001;
/// The fastest open loop: far beyond what one machine's generator sends.
const MAX_RATE: f64 = 10_000_000.0;

/// Each level's duration (None: a request count), checking -t, -n, --rate
/// and --timeout.
fn duration_of(args: &LoadArgs) -> Result<Option<Duration>> {
    if args.requests == Some(0) {
        return Err(Error::usage("-n must be at least 1"));
    }
    if let Some(r) = args.rate
        && !(MIN_RATE..=MAX_RATE).contains(&r)
    {
        return Err(Error::usage(format!(
            "--rate {r}: requests per second from {MIN_RATE} to {MAX_RATE}, e.g. --rate 500"
        )));
    }
    if args.duration.is_some_and(|d| d.is_zero()) {
        return Err(Error::usage(
            "-t 0s: a level must last a while, e.g. -t 10s (or give -n REQUESTS)",
        ));
    }
    if args.timeout.is_zero() {
        return Err(Error::usage(
            "--timeout 0s: every request would time out; give e.g. --timeout 10s",
        ));
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
        choice_name(args.order),
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
    for line in terminal::load::latency_notes(&tables.levels) {
        println!("{line}");
    }
    for line in terminal::load::end_notes(&tables.levels, duration) {
        println!("{line}");
    }
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
