//! `blobbench suite http`: serving blobs over HTTP, SQLite vs files. The
//! edge: options checked (levels, extra servers' URL files, destinations)
//! before any work, the table printed and the result written after.

use crate::cli::HttpSuiteArgs;
use crate::cli::values::{ExtraServerArg, TableChoice};
use crate::command::progress::Bars;
use crate::dataset::{SizeShape, spec_from_options};
use crate::error::{Error, Result};
use crate::http::load::{Order, parse_url};
use crate::report::terminal;
use crate::result::Tables;
use crate::suite::http::{ExtraServer, HttpOptions};
use crate::target::SqliteLayout;

/// Runs `suite http`.
pub fn run(args: &HttpSuiteArgs) -> Result<()> {
    let options = options(args)?;
    crate::suite::http::check_injection(&options)?;
    crate::command::output::check_result_files(&args.outputs, args.folder.dir.as_deref())?;
    // compare tests the systems of one level together: the databases, the folder, the extras.
    let systems = options.layouts.len() + 1 + options.extras.len();
    crate::command::output::warn_if_rule_never_judged(&options.rule, systems);
    let mut doc = crate::suite::http::run(&options, &Bars::new())?;
    crate::command::output::finish_environment(&mut doc.environment);
    if let Tables::Http(t) = &doc.tables {
        print!("{}", terminal::http::render(t));
    }
    crate::command::output::write_result_files(&mut doc, &args.outputs)?;
    Ok(())
}

/// The suite's options from the command line; every URL file is read here.
fn options(args: &HttpSuiteArgs) -> Result<HttpOptions> {
    let dataset = spec_from_options(
        args.count,
        args.size,
        args.variance(),
        SizeShape::Uniform,
        1,
    )?;
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
    let extras: Vec<ExtraServer> = args.extra.iter().map(extra_server).collect::<Result<_>>()?;
    let systems = match args.layout {
        TableChoice::Both => 2,
        _ => 1,
    } + 1
        + extras.len();
    let rule = args
        .target
        .rule(u64::from(args.rounds), super::output::judged_floor(systems))?;
    Ok(HttpOptions {
        dataset,
        levels: args.concurrency.clone(),
        duration: *args.duration,
        rounds: args.rounds,
        rule,
        warmup: args.warmup,
        order: Order::from(args.order),
        layouts: match args.layout {
            TableChoice::Blog => vec![SqliteLayout::Blog],
            TableChoice::Kv => vec![SqliteLayout::Kv],
            TableChoice::Both => vec![SqliteLayout::Blog, SqliteLayout::Kv],
        },
        extras,
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
        inject: crate::store::inject::parse_optional_case(args.inject.as_deref())?,
    })
}

/// `--extra NAME=URLFILE`: the name and the URLs the file lists (one per
/// line; blank lines and # comments skipped).
fn extra_server(extra: &ExtraServerArg) -> Result<ExtraServer> {
    let text = crate::command::load::read_url_file("--extra", &extra.file)?;
    let urls = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(parse_url)
        .collect::<Result<Vec<_>>>()?;
    if urls.is_empty() {
        let file = extra.file.display();
        return Err(Error::usage(format!(
            "--extra {}={file}: {file} holds no URL",
            extra.name
        )));
    }
    Ok(ExtraServer {
        name: extra.name.clone(),
        urls,
    })
}
