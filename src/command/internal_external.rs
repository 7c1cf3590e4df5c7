//! `blobbench suite internal-external`: SQLite's internal vs external blobs study.

use std::io::IsTerminal;

use crate::cli::InternalExternalArgs;
use crate::error::{Error, Result};
use crate::result::Tables;
use crate::suite::common::parse_list;
use crate::suite::internal_external::InternalExternalOptions;
use crate::target::parse_page_size;
use crate::units::parse_number;

use super::output::{check_outputs, finish_environment, write_result_with_report};
use super::progress::Bars;

/// Runs `suite internal-external`: checks the options and destinations,
/// measures, prints both matrices and the rules, writes the result (and report).
pub fn run(args: &InternalExternalArgs) -> Result<()> {
    let options = options(args)?;
    check_outputs(&args.json, args.report.as_deref(), args.dir.as_deref())?;
    // compare tests each cell's internal and external case together.
    crate::command::output::warn_if_never_judged(args.rounds, 2);
    let mut doc = crate::suite::internal_external::run(&options, &Bars::new())?;
    finish_environment(&mut doc.environment);
    if let Tables::InternalExternal(t) = &doc.tables {
        // Colors only for a person at a terminal who has not opted out.
        let colors = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        print!(
            "{}",
            crate::report::terminal::internal_external::render(&doc, t, colors)
        );
    }
    write_result_with_report(&mut doc, &args.json, args.report.as_deref())?;
    println!("result written to {}", args.json.display());
    Ok(())
}

/// The lists parsed and every value checked, before any work.
fn options(args: &InternalExternalArgs) -> Result<InternalExternalOptions> {
    if args.rounds == 0 {
        return Err(Error::usage("--rounds 0: at least one round is needed"));
    }
    let sizes = parse_list("--sizes", &args.sizes, |v| {
        let n = parse_number(v)?;
        // Internal blobs are single SQLite values: its limit, asked of the library.
        let max = crate::store::max_blob_bytes();
        if n == 0 || n > max {
            return Err(Error::usage(format!(
                "--sizes {v}: a blob size from 1 to {max} (SQLite's limit per value), e.g. 10k"
            )));
        }
        Ok(n)
    })?;
    let page_sizes = parse_list("--page-sizes", &args.page_sizes, parse_page_size)?;
    if args.total == 0 {
        return Err(Error::usage("--total must be positive, e.g. --total 100M"));
    }
    if args.cache_bytes == 0 {
        return Err(Error::usage(
            "--cache-bytes must be positive, e.g. --cache-bytes 2M",
        ));
    }
    Ok(InternalExternalOptions {
        dir: args.dir.clone(),
        keep: args.keep,
        sizes,
        page_sizes,
        total: args.total,
        cache_bytes: args.cache_bytes,
        rounds: args.rounds,
        cold: args.cold,
        seed: args.seed,
    })
}
