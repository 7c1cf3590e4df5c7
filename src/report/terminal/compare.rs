//! The terminal report of `compare`: which results are compared and how
//! they differ, then one row per case with both sides' medians, the ratio
//! with its interval, the corrected p and the verdict, the rule behind the
//! verdicts, and the cases only one side holds.

use std::path::Path;

use crate::report::compare::{median_text, p_text, percent_text, ratio_text};
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::result::compare::{Change, Comparison, Verdict};

/// The lines naming both results (file, command, host, start), a note when
/// their commands differ, every field that makes them not comparable and
/// every environment difference.
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
    for (field, b, a) in &c.not_comparable {
        out.push_str(&format!("not comparable: {field}: {b} -> {a}\n"));
    }
    for (field, b, a) in &c.differences {
        out.push_str(&format!("differs: {field}: {b} -> {a}\n"));
    }
    out
}

/// The cases table, the count of each verdict, the rule
/// (`threshold_percent` as the user gave it), the notes and the cases found
/// on one side only.
pub fn render(c: &Comparison, threshold_percent: f64) -> String {
    let mut table = Table::new([
        "case",
        "figure",
        "before median (n)",
        "after median (n)",
        "after/before [95%]",
        "p (Holm)",
        "verdict",
    ]);
    for ch in &c.changes {
        table.row([
            ch.label.clone(),
            ch.figure.clone(),
            side(ch, true),
            side(ch, false),
            ratio_text(ch.ratio, ch.low, ch.high),
            ch.p_adjusted.map(p_text).unwrap_or_else(|| "-".into()),
            verdict(ch),
        ]);
    }
    let mut out = table.render();
    let count = |v: Verdict| c.changes.iter().filter(|x| x.verdict == v).count();
    out.push_str(&format!(
        "{} case(s) compared: {} faster, {} slower, {} within noise, {} insufficient data, {} not comparable\n",
        c.changes.len(),
        count(Verdict::Better),
        count(Verdict::Worse),
        count(Verdict::WithinNoise),
        count(Verdict::InsufficientData),
        count(Verdict::NotComparable),
    ));
    out.push_str(&legend(c, threshold_percent));
    if !c.drift.is_empty() {
        let probes: Vec<String> = c
            .drift
            .iter()
            .map(|d| {
                format!(
                    "{} {}",
                    d.probe,
                    ratio_text(d.ratio, Some(d.low), Some(d.high))
                )
            })
            .collect();
        let how = if c.drift.iter().any(|d| d.applied) {
            "changes are called only beyond it"
        } else {
            "two machines: shown, not allowed for"
        };
        out.push_str(&format!(
            "machine reference (same fixed work in both, after/before): {} ({how})\n",
            probes.join(", ")
        ));
    }
    for note in &c.notes {
        out.push_str(&format!("note: {note}\n"));
    }
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

/// The rule behind the verdicts, in words.
fn legend(c: &Comparison, threshold_percent: f64) -> String {
    let tested = c.method.as_ref().map_or(0, |m| m.tested);
    let factor = 1.0 + threshold_percent / 100.0;
    format!(
        "rule: faster/slower only when the Mann-Whitney rank test, Holm-corrected over the {tested} case(s) \
tested, gives p < 0.05 and the whole 95% bootstrap interval of after/before (ratio of medians) lies beyond \
the threshold ({}%: {factor:.2}x either way); fewer than 4 samples a side: insufficient data\n",
        percent_text(threshold_percent / 100.0)
    )
}

/// One side's median and sample count.
fn side(ch: &Change, before: bool) -> String {
    let s = if before { &ch.before } else { &ch.after };
    format!("{} ({})", median_text(&ch.figure, s.median), s.n)
}

/// The verdict as a speed factor: how many times faster or slower.
pub fn verdict(ch: &Change) -> String {
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
        Verdict::InsufficientData if crate::report::compare::single_valued(&ch.figure) => {
            "one value a side: not tested".into()
        }
        Verdict::InsufficientData => format!(
            "insufficient data ({} vs {} samples)",
            ch.before.n, ch.after.n
        ),
        Verdict::NotComparable => "not comparable".into(),
    }
}
