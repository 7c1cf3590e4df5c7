//! `blobbench compare BEFORE.json AFTER.json`: what changed beyond the noise.

use crate::cli::CompareArgs;
use crate::error::{Error, Result};
use crate::report::compare::compare;
use crate::report::table::Table;
use crate::result::compare::{Change, CompareTables, Verdict};
use crate::result::{ResultDocument, Tables};
use crate::units::human_duration_ns;

/// Runs `compare`: prints every case found in both results with its
/// verdict; fails with a regression exit code under `--fail-on-slower`.
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
    let before = crate::result::load(&args.before)?;
    let after = crate::result::load(&args.after)?;
    let c = compare(&before, &after, args.threshold / 100.0);
    let describe = |doc: &ResultDocument, path: &std::path::Path| {
        format!(
            "{} ({}, host {}, {})",
            path.display(),
            doc.command,
            doc.environment.hostname,
            doc.started_at
        )
    };
    println!("before: {}", describe(&before, &args.before));
    println!("after:  {}", describe(&after, &args.after));
    if before.command != after.command {
        println!(
            "note: different commands ({} vs {}); only cases with the same settings are compared",
            before.command, after.command
        );
    }
    for (field, b, a) in &c.differences {
        println!("differs: {field}: {b} -> {a}");
    }
    if c.changes.is_empty() {
        return Err(Error::usage(format!(
            "{} and {}: no case with the same settings in both; compare results of the same command and options",
            args.before.display(),
            args.after.display()
        )));
    }
    let mut table = Table::new([
        "case",
        "figure",
        "before median [min..max] n",
        "after median [min..max] n",
        "after/before",
        "verdict",
    ]);
    for ch in &c.changes {
        table.row([
            ch.label.clone(),
            ch.figure.clone(),
            side(ch, true),
            side(ch, false),
            format!("{:.3}", ch.ratio),
            verdict(ch),
        ]);
    }
    print!("{}", table.render());
    let count = |v: Verdict| c.changes.iter().filter(|x| x.verdict == v).count();
    println!(
        "{} case(s) compared: {} faster, {} slower, {} within noise (threshold {}%; a change must also clear both sides' min..max)",
        c.changes.len(),
        count(Verdict::Better),
        count(Verdict::Worse),
        count(Verdict::WithinNoise),
        args.threshold
    );
    for (what, list) in [("before", &c.only_before), ("after", &c.only_after)] {
        if !list.is_empty() {
            let shown: Vec<&str> = list.iter().take(8).map(String::as_str).collect();
            println!(
                "only in {what}: {} case(s): {}{}",
                list.len(),
                shown.join("; "),
                if list.len() > shown.len() {
                    "; ..."
                } else {
                    ""
                }
            );
        }
    }
    let worse = count(Verdict::Worse);
    if let Some(j) = &args.json {
        let mut doc = ResultDocument::new(
            "compare",
            crate::store::capture_environment(None),
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

fn side(ch: &Change, before: bool) -> String {
    let s = if before { &ch.before } else { &ch.after };
    let f = |v: f64| {
        if ch.higher_is_better() {
            format!("{v:.0}")
        } else {
            human_duration_ns(v)
        }
    };
    if s.n > 1 {
        format!("{} [{}..{}] {}", f(s.median), f(s.min), f(s.max), s.n)
    } else {
        format!("{} 1", f(s.median))
    }
}

fn verdict(ch: &Change) -> String {
    // Speed factor: how many times faster the after side is.
    let speed = if ch.higher_is_better() {
        ch.ratio
    } else {
        1.0 / ch.ratio
    };
    match ch.verdict {
        Verdict::Better => format!("{speed:.2}x faster"),
        Verdict::Worse => format!("{:.2}x slower", 1.0 / speed),
        Verdict::WithinNoise => "within noise".into(),
    }
}
