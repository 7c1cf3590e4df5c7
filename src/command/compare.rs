//! `blobbench compare BEFORE.json AFTER.json` (or several results a side,
//! `A1 A2 -- B1 B2`): what changed beyond the noise.

use crate::cli::CompareArgs;
use crate::error::{Error, Result};
use std::path::PathBuf;

use crate::report::compare::{compare_cases, compare_many, inconsistent_side};
use crate::report::terminal;
use crate::result::compare::{CompareTables, Verdict};
use crate::result::{ResultDocument, ResultKind, Tables};

/// Runs `compare`: prints every case found in both results with its
/// verdict; fails with a regression exit code under `--fail-on-slower` only
/// when a case is significantly slower (verdict "worse").
pub fn run(args: &CompareArgs) -> Result<()> {
    if !(args.threshold >= 0.0 && args.threshold < 1000.0) {
        return Err(Error::usage(format!(
            "--threshold {}: a percentage from 0 to 1000, e.g. --threshold 5",
            args.threshold
        )));
    }
    if let Some(j) = &args.json {
        crate::command::output::check_result_target(j)?;
    }
    // Nothing is measured here, so a busy machine is not worth a warning;
    // the record still covers the command, as every result's does.
    let mut environment = crate::store::capture_environment(None);
    let (before_files, after_files) = args.sides().map_err(Error::usage)?;
    let load = |files: &[PathBuf]| -> Result<Vec<ResultDocument>> {
        files.iter().map(|f| crate::result::load(f)).collect()
    };
    let (before, after) = (load(before_files)?, load(after_files)?);
    for (docs, files) in [(&before, before_files), (&after, after_files)] {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        if let Some(why) = inconsistent_side(docs, &names) {
            return Err(Error::usage(why));
        }
    }
    if let Some(done) = compare_ledgers(&before, &after, args)? {
        return Ok(done);
    }
    let c = compare_cases(&before, &after, args.threshold / 100.0, &args.case);
    if !args.case.is_empty() && c.changes.is_empty() {
        let every = compare_many(&before, &after, args.threshold / 100.0);
        let names: Vec<&str> = every.changes.iter().map(|x| x.label.as_str()).collect();
        return Err(Error::usage(format!(
            "--case {}: no case of both results has such a name; give part of one of: {}",
            args.case.join(" --case "),
            names.join(", ")
        )));
    }
    print!(
        "{}",
        terminal::compare::header((&before, before_files), (&after, after_files), &c)
    );
    let names = |files: &[PathBuf]| {
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if c.changes.is_empty() {
        let fields: Vec<String> = c
            .not_comparable
            .iter()
            .map(|(f, b, a)| format!("{f} {b} -> {a}"))
            .collect();
        let why = if fields.is_empty() {
            String::new()
        } else {
            format!(" (not comparable: {})", fields.join("; "))
        };
        return Err(Error::usage(format!(
            "{} and {}: no case with the same settings in both{why}; compare results of the same command and options",
            names(before_files),
            names(after_files)
        )));
    }
    print!("{}", terminal::compare::render(&c, args.threshold));
    // The uncorrected verdict fails the run unless the user accepts the
    // drift correction where a case has one.
    let worse = c
        .changes
        .iter()
        .filter(|x| {
            let corrected = x.adjusted.as_ref().filter(|_| args.allow_drift);
            corrected.map_or(x.verdict, |a| a.verdict) == Verdict::Worse
        })
        .count();
    if let Some(j) = &args.json {
        environment.finish();
        let mut doc = ResultDocument::new(
            ResultKind::Compare,
            environment,
            Tables::Compare(CompareTables {
                compare: c,
                before: names(before_files),
                after: names(after_files),
            }),
        );
        crate::command::output::write_result(&mut doc, j)?;
    }
    if args.fail_on_slower && worse > 0 {
        return Err(Error::Regression(worse));
    }
    Ok(())
}

/// Two `reproduce` results: the claims whose verdict differs first, then
/// each experiment both ran, compared as its own results would be. None
/// when the sides are not one reproduce result each.
fn compare_ledgers(
    before: &[ResultDocument],
    after: &[ResultDocument],
    args: &CompareArgs,
) -> Result<Option<()>> {
    let ([b], [a]) = (before, after) else {
        return Ok(None);
    };
    let (Tables::Reproduce(tb), Tables::Reproduce(ta)) = (&b.tables, &a.tables) else {
        return Ok(None);
    };
    if args.json.is_some() {
        return Err(Error::usage(
            "--json: compare of two reproduce results prints the ledgers side by side only; \
             leave out --json, or compare one experiment's results (each reproduce.json holds them)",
        ));
    }
    print!("{}", terminal::reproduce::compare(tb, ta));
    for eb in &tb.experiments {
        let ea = ta
            .experiments
            .iter()
            .find(|e| e.experiment == eb.experiment);
        let (Some(rb), Some(ra)) = (&eb.result, ea.and_then(|e| e.result.as_ref())) else {
            continue;
        };
        let c = compare_cases(
            std::slice::from_ref(&**rb),
            std::slice::from_ref(&**ra),
            args.threshold / 100.0,
            &args.case,
        );
        if !c.changes.is_empty() {
            println!("\n{}:", eb.experiment);
            print!("{}", terminal::compare::render(&c, args.threshold));
        }
    }
    Ok(Some(()))
}
