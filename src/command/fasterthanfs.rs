//! `blobbench suite fasterthanfs`: SQLite's "35% Faster Than The Filesystem" page.

use crate::cli::FasterThanFsArgs;
use crate::dataset::{SizeShape, spec_from_options};
use crate::error::{Error, Result};
use crate::result::Tables;
use crate::suite::fasterthanfs::FasterThanFsOptions;

use super::output::finish_environment;
use super::progress::Bars;

/// compare tests the page's cases of one dataset together.
const FASTERTHANFS_CASES: usize = 25;

/// Runs `suite fasterthanfs`: checks the options and destinations,
/// measures, prints the table and writes the result (and report).
pub fn run(args: &FasterThanFsArgs) -> Result<()> {
    let options = options(args)?;
    crate::command::output::warn_if_rule_never_judged(&options.rule, FASTERTHANFS_CASES);
    let mut doc = crate::suite::fasterthanfs::run(&options, &Bars::new())?;
    finish_environment(&mut doc.environment);
    crate::command::output::print_transactions(&doc);
    if let Tables::FasterThanFs(t) = &doc.tables {
        print!("{}", crate::report::terminal::fasterthanfs::render(&doc, t));
    }
    for line in crate::report::terminal::run::injection_lines(&doc.runs) {
        println!("{line}");
    }
    crate::command::output::write_result_files(&mut doc, &args.outputs)?;
    Ok(())
}

/// The options, every one checked (and the destinations too) before any work.
fn options(args: &FasterThanFsArgs) -> Result<FasterThanFsOptions> {
    let rule = args.rounds.rule(
        crate::cli::FASTERTHANFS_ROUNDS,
        super::output::judged_floor(FASTERTHANFS_CASES),
    )?;
    let inject = crate::store::inject::parse_optional_case(args.inject.as_deref())?;
    crate::command::output::check_result_files(&args.outputs, args.folder.dir.as_deref())?;
    let spec = spec_from_options(
        args.count,
        args.size,
        args.variance(),
        SizeShape::Uniform,
        1,
    )?;
    let updates = args.updates.unwrap_or((spec.count / 10).max(1));
    let durable = args.durable_updates.unwrap_or((spec.count / 100).max(1));
    for (name, n) in [("--updates", updates), ("--durable-updates", durable)] {
        if n == 0 || n > spec.count {
            return Err(Error::usage(format!(
                "{name} {n}: must be between 1 and --count ({})",
                spec.count
            )));
        }
    }
    let options = FasterThanFsOptions {
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
        spec,
        updates,
        durable_updates: durable,
        rule,
        cold: args.cold,
        inject,
    };
    crate::suite::fasterthanfs::check_injection(&options)?;
    Ok(options)
}
