//! `blobbench quick`: about a minute, SQLite vs files on this machine (and
//! an object store beside them with `--s3`).

use std::path::Path;

use crate::cli::QuickArgs;
use crate::dataset::{SizeShape, spec_from_options};
use crate::error::{Error, Result};
use crate::result::Tables;
use crate::suite::quick::QuickOptions;

use super::output::{check_outputs, finish_environment, write_result_with_report};
use super::progress::Bars;

/// Runs `quick`: checks the options and destinations, measures, prints the
/// table and writes the result and (unless `--report none`) the report.
pub fn run(args: &QuickArgs) -> Result<()> {
    // compare tests quick's cases together: 11, and 3 more with --s3.
    let cases = if args.s3.is_some() { 14 } else { 11 };
    let rule = args
        .rounds
        .rule(crate::cli::QUICK_ROUNDS, super::output::judged_floor(cases))?;
    let inject = crate::store::inject::parse_optional_case(args.inject.as_deref())?;
    if let Some((case, _)) = &inject
        && case.ends_with(":s3")
        && args.s3.is_none()
    {
        return Err(Error::usage(format!(
            "--inject {case}=...: the s3 side runs only with --s3 URL; add it, or name a db, dir or tree case"
        )));
    }
    let report = report_path(args);
    check_outputs(&args.json, report, args.folder.dir.as_deref())?;
    crate::command::output::check_exports(&args.export)?;
    crate::command::output::warn_if_rule_never_judged(&rule, cases);
    let object_store = match &args.s3 {
        Some(url) => Some(super::object_store::fresh_prefix(url, "quick")?),
        None => None,
    };
    let options = QuickOptions {
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
        spec: spec_from_options(
            args.count,
            args.size,
            args.variance(),
            SizeShape::Uniform,
            1,
        )?,
        rule,
        runs: args.runs,
        object_store,
        inject,
    };
    crate::suite::quick::check_injection(&options)?;
    let mut doc = crate::suite::quick::run(&options, &Bars::new())?;
    finish_environment(&mut doc.environment);
    if let Tables::Quick(t) = &doc.tables {
        print!("{}", crate::report::terminal::quick::render(&doc, t));
    }
    write_result_with_report(&mut doc, &args.json, report)?;
    println!("result written to {}", super::streams::shown(&args.json));
    crate::command::output::write_exports(&doc, &args.json, &args.export)?;
    // A side that failed is in the table and the result; then exit 1.
    match doc.tables.failures_line() {
        Some(line) => Err(Error::OperationsFailed(line)),
        None => Ok(()),
    }
}

/// `--report none` turns the default report off.
fn report_path(args: &QuickArgs) -> Option<&Path> {
    args.report.as_deref().filter(|p| *p != Path::new("none"))
}
