//! `blobbench suite http`: serving blobs over HTTP, SQLite vs files. The
//! edge: options checked (levels, extra servers' URL files, destinations)
//! before any work, the table printed and the result written after.

use crate::cli::HttpSuiteArgs;
use crate::command::progress::Bars;
use crate::dataset::spec_from_options;
use crate::error::{Error, Result};
use crate::http::load::{Order, parse_url};
use crate::report::terminal;
use crate::result::Tables;
use crate::suite::http::{ExtraServer, HttpOptions};
use crate::target::SqliteLayout;

/// Runs `suite http`.
pub fn run(args: &HttpSuiteArgs) -> Result<()> {
    let options = options(args)?;
    crate::command::output::check_outputs(&args.json, args.report.as_deref(), args.dir.as_deref())?;
    // compare tests the systems of one level together: the databases, the folder, the extras.
    let systems = options.layouts.len() + 1 + options.extras.len();
    crate::command::output::warn_if_never_judged(u64::from(options.rounds), systems);
    let mut doc = crate::suite::http::run(&options, &Bars::new())?;
    crate::command::output::finish_environment(&mut doc.environment);
    if let Tables::Http(t) = &doc.tables {
        print!("{}", terminal::http::render(t));
    }
    crate::command::output::write_result_with_report(&mut doc, &args.json, args.report.as_deref())?;
    println!("result written to {}", args.json.display());
    Ok(())
}

/// The suite's options from the command line; every URL file is read here.
fn options(args: &HttpSuiteArgs) -> Result<HttpOptions> {
    let dataset = spec_from_options(args.count, args.size, args.variance(), "uniform", 1.0, 1)?;
    let levels: Vec<usize> = args
        .concurrency
        .split(',')
        .map(|c| match c.trim().parse::<usize>() {
            Ok(n) if (1..=10_000).contains(&n) => Ok(n),
            _ => Err(Error::usage(format!(
                "-c {}: concurrency levels are numbers from 1 to 10000, e.g. -c 1,4,16",
                args.concurrency
            ))),
        })
        .collect::<Result<_>>()?;
    if args.duration.is_zero() {
        return Err(Error::usage(
            "--duration 0s: each level must last a while, e.g. --duration 10s",
        ));
    }
    let round = *args.duration / args.rounds;
    if round < std::time::Duration::from_millis(10) {
        return Err(Error::usage(format!(
            "-t {} over --rounds {} gives rounds of {}: a round must last at least 10ms; raise -t or lower --rounds",
            args.duration,
            args.rounds,
            humantime::format_duration(round)
        )));
    }
    let extras = args
        .extra
        .iter()
        .map(|e| extra_server(e))
        .collect::<Result<_>>()?;
    Ok(HttpOptions {
        dataset,
        levels,
        duration: *args.duration,
        rounds: args.rounds,
        warmup: args.warmup,
        order: if args.order == "random" {
            Order::Random
        } else {
            Order::Sequential
        },
        layouts: match args.layout.as_str() {
            "blog" => vec![SqliteLayout::Blog],
            "kv" => vec![SqliteLayout::Kv],
            _ => vec![SqliteLayout::Blog, SqliteLayout::Kv],
        },
        extras,
        dir: args.dir.clone(),
        keep: args.keep,
    })
}

/// `--extra NAME=URLFILE`: the name and the URLs the file lists (one per
/// line; blank lines and # comments skipped).
fn extra_server(e: &str) -> Result<ExtraServer> {
    let Some((name, file)) = e.split_once('=') else {
        return Err(Error::usage(format!(
            "--extra {e}: expected NAME=URLFILE, e.g. --extra nginx=nginx-urls.txt"
        )));
    };
    let text = crate::command::load::read_url_file("--extra", std::path::Path::new(file))?;
    let urls = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(parse_url)
        .collect::<Result<Vec<_>>>()?;
    if urls.is_empty() {
        return Err(Error::usage(format!("--extra {e}: {file} holds no URL")));
    }
    Ok(ExtraServer {
        name: name.to_string(),
        urls,
    })
}
