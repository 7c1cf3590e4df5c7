//! `blobbench compare BEFORE.json AFTER.json`: what changed beyond the noise.

use crate::cli::CompareArgs;
use crate::error::{Error, Result};
use crate::report::compare::compare;
use crate::report::terminal;
use crate::result::compare::{CompareTables, Verdict};
use crate::result::{ResultDocument, Tables};

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
    let before = crate::result::load(&args.before)?;
    let after = crate::result::load(&args.after)?;
    let c = compare(&before, &after, args.threshold / 100.0);
    print!(
        "{}",
        terminal::compare::header((&before, &args.before), (&after, &args.after), &c)
    );
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
            args.before.display(),
            args.after.display()
        )));
    }
    print!("{}", terminal::compare::render(&c, args.threshold));
    let worse = c
        .changes
        .iter()
        .filter(|x| x.verdict == Verdict::Worse)
        .count();
    if let Some(j) = &args.json {
        environment.finish();
        let mut doc = ResultDocument::new(
            "compare",
            environment,
            Tables::Compare(CompareTables {
                compare: c,
                before: args.before.display().to_string(),
                after: args.after.display().to_string(),
            }),
        );
        crate::command::output::write_result(&mut doc, j)?;
    }
    if args.fail_on_slower && worse > 0 {
        return Err(Error::Regression(worse));
    }
    Ok(())
}
