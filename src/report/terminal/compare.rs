//! The terminal report of `compare`: which results are compared and how
//! they differ, then one row per case with both sides' spread and the
//! verdict, and the cases only one side holds.

use std::path::Path;

use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::result::compare::{Change, Comparison, Verdict};
use crate::units::human_duration_ns;

/// The lines naming both results (file, command, host, start), a note when
/// their commands differ, and every environment or dataset difference.
pub fn header(
    before: (&ResultDocument, &Path),
    after: (&ResultDocument, &Path),
    c: &Comparison,
) -> String {
    let describe = |(doc, path): (&ResultDocument, &Path)| {
        format!(
            "{} ({}, host {}, {})",
            path.display(),
            doc.command,
            doc.environment.hostname,
            doc.started_at
        )
    };
    let mut out = format!(
        "before: {}\nafter:  {}\n",
        describe(before),
        describe(after)
    );
    if before.0.command != after.0.command {
        out.push_str(&format!(
            "note: different commands ({} vs {}); only cases with the same settings are compared\n",
            before.0.command, after.0.command
        ));
    }
    for (field, b, a) in &c.differences {
        out.push_str(&format!("differs: {field}: {b} -> {a}\n"));
    }
    out
}

/// The cases table, the count of each verdict (`threshold_percent` as the
/// user gave it) and the cases found on one side only.
pub fn render(c: &Comparison, threshold_percent: f64) -> String {
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
    let mut out = table.render();
    let count = |v: Verdict| c.changes.iter().filter(|x| x.verdict == v).count();
    out.push_str(&format!(
        "{} case(s) compared: {} faster, {} slower, {} within noise (threshold {}%; a change must also clear both sides' min..max)\n",
        c.changes.len(),
        count(Verdict::Better),
        count(Verdict::Worse),
        count(Verdict::WithinNoise),
        threshold_percent
    ));
    for (what, list) in [("before", &c.only_before), ("after", &c.only_after)] {
        if !list.is_empty() {
            let shown: Vec<&str> = list.iter().take(8).map(String::as_str).collect();
            out.push_str(&format!(
                "only in {what}: {} case(s): {}{}\n",
                list.len(),
                shown.join("; "),
                if list.len() > shown.len() {
                    "; ..."
                } else {
                    ""
                }
            ));
        }
    }
    out
}

/// One side's median [min..max] n (just the median and 1 for one sample).
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

/// The verdict as a speed factor: how many times faster or slower.
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
