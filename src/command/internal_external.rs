//! `blobbench suite internal-external`: SQLite's internal vs external blobs study.

use crate::cli::InternalExternalArgs;
use crate::error::{Error, Result};
use crate::result::Tables;
use crate::suite::internal_external::InternalExternalOptions;

use super::output::finish_environment;
use super::progress::Bars;

/// Runs `suite internal-external`: checks the options and destinations,
/// measures, prints both matrices and the rules, writes the result (and report).
pub fn run(args: &InternalExternalArgs) -> Result<()> {
    let options = options(args)?;
    crate::command::output::check_result_files(&args.outputs, args.folder.dir.as_deref())?;
    // compare tests each cell's internal and external case together.
    crate::command::output::warn_if_rule_never_judged(&options.rule, 2);
    let mut doc = crate::suite::internal_external::run(&options, &Bars::new())?;
    finish_environment(&mut doc.environment);
    crate::command::output::print_transactions(&doc);
    if let Tables::InternalExternal(t) = &doc.tables {
        // Colors only for a person at a terminal who has not opted out.
        let colors = super::streams::colors_on_stdout();
        print!(
            "{}",
            crate::report::terminal::internal_external::render(&doc, t, colors)
        );
    }
    for line in crate::report::terminal::run::injection_lines(&doc.runs) {
        println!("{line}");
    }
    crate::command::output::write_result_files(&mut doc, &args.outputs)?;
    Ok(())
}

/// The lists parsed and every value checked, before any work.
fn options(args: &InternalExternalArgs) -> Result<InternalExternalOptions> {
    let rule = args.rounds.rule(
        crate::cli::INTERNAL_EXTERNAL_ROUNDS,
        super::output::judged_floor(2),
    )?;
    let inject = crate::store::inject::parse_optional_case(args.inject.as_deref())?;
    // Internal blobs are single SQLite values: its limit, asked of the library.
    let max = crate::store::max_blob_bytes();
    if let Some(n) = args.sizes.iter().find(|&&n| n == 0 || n > max) {
        return Err(Error::usage(format!(
            "--sizes {n}: a blob size from 1 to {max} (SQLite's limit per value), e.g. 10k"
        )));
    }
    if args.total == 0 {
        return Err(Error::usage("--total must be positive, e.g. --total 100M"));
    }
    if args.cache_bytes == 0 {
        return Err(Error::usage(
            "--cache-bytes must be positive, e.g. --cache-bytes 2M",
        ));
    }
    Ok(InternalExternalOptions {
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
        sizes: args.sizes.clone(),
        page_sizes: args.page_sizes.clone(),
        total: args.total,
        cache_bytes: args.cache_bytes,
        rule,
        cold: args.cold,
        seed: args.seed,
        inject,
    })
    .and_then(|o| crate::suite::internal_external::check_injection(&o).map(|()| o))
}
