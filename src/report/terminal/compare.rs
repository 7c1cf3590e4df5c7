//! The terminal report of `compare`: which results are compared and how
//! they differ, then one row per case with both sides' medians, the ratio
//! with its interval, the corrected p and the verdict, the rule behind the
//! verdicts, and the cases only one side holds.

use std::path::PathBuf;

use crate::report::figures::{median_text, p_text, percent_text, ratio_text};
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::result::compare::{Change, Comparison, Verdict};

/// The lines naming both sides' results (file, command, host, start), a
/// note when their commands differ, every field that makes them not
/// comparable, every environment difference and what makes them different
/// machines for the drift correction.
pub fn header(
    before: (&[ResultDocument], &[PathBuf]),
    after: (&[ResultDocument], &[PathBuf]),
    c: &Comparison,
) -> String {
    let describe = |(docs, paths): (&[ResultDocument], &[PathBuf])| {
        let lines: Vec<String> = docs
            .iter()
            .zip(paths)
            .map(|(doc, path)| {
                format!(
                    "{} ({}, host {}, {})",
                    path.display(),
                    doc.command,
                    doc.environment.hostname,
                    doc.started_at
                )
            })
            .collect();
        lines.join("\n        ")
    };
    let mut out = format!(
        "before: {}\nafter:  {}\n",
        describe(before),
        describe(after)
    );
    if before.0.len() > 1 || after.0.len() > 1 {
        out.push_str(&format!(
            "{} result(s) before, {} after: each sample is one result's median of the case (between runs, not rounds)\n",
            before.0.len(),
            after.0.len()
        ));
    }
    let (b0, a0) = (&before.0[0], &after.0[0]);
    if b0.command != a0.command {
        out.push_str(&format!(
            "note: different commands ({} vs {}); only cases with the same settings are compared\n",
            b0.command, a0.command
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
    let header = [
        "case",
        "figure",
        "before median (n)",
        "after median (n)",
        "after/before [95% all]",
        "p (Holm)",
        "verdict",
    ];
    let corrected = c.changes.iter().any(|ch| ch.adjusted.is_some());
    let mut table = if corrected {
        let mut h = header.to_vec();
        h.push("drift-corrected [95% all]");
        h.push("corrected verdict");
        Table::new(h)
    } else {
        Table::new(header)
    };
    for ch in &c.changes {
        let label = match &ch.injected {
            Some(how) => format!("{} (injected: {how})", ch.label),
            None => ch.label.clone(),
        };
        let mut row = vec![
            label,
            ch.figure.clone(),
            side(ch, true),
            side(ch, false),
            ratio_text(ch.ratio, ch.low, ch.high),
            ch.p_adjusted.map(p_text).unwrap_or_else(|| "-".into()),
            verdict(ch),
        ];
        if corrected {
            match &ch.adjusted {
                Some(a) => {
                    row.push(format!(
                        "{} ({})",
                        ratio_text(a.ratio, a.low, a.high),
                        a.probe
                    ));
                    row.push(verdict_text(ch, a.ratio, a.verdict));
                }
                None => row.extend(["-".to_string(), "-".to_string()]),
            }
        }
        table.row(row);
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
    if let Some(line) = samples_line(c) {
        out.push_str(&line);
    }
    if !c.drift.is_empty() {
        let probes: Vec<String> = c
            .drift
            .iter()
            .map(|d| {
                let how = if d.applied {
                    "applied"
                } else if d.moved {
                    "not applied"
                } else {
                    "within its noise"
                };
                format!(
                    "{} {} ({how})",
                    d.probe,
                    ratio_text(d.ratio, Some(d.low), Some(d.high))
                )
            })
            .collect();
        out.push_str(&format!(
            "machine reference (same fixed work in both, after/before): {}\n",
            probes.join(", ")
        ));
    }
    for (field, b, a) in &c.not_same_machine {
        out.push_str(&format!(
            "not the same machine for drift: {field}: {b} -> {a}\n"
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
        "rule: faster/slower only when the Mann-Whitney rank test, Holm-corrected within each section of cases \
compared together ({tested} case(s) tested), gives p < 0.05 and the whole interval of after/before \
(the rank test's own: pairwise log ratios) lies beyond the threshold ({}%: {factor:.2}x either way); [95% all]: the intervals of \
a section hold together 95% of the time (each at 1 - 5%/N for its N cases, as Holm corrects the test), so one wholly past \
the threshold is always a change; fewer than 4 samples a side: insufficient data\n",
        percent_text(threshold_percent / 100.0)
    )
}

/// What the samples counted in "(n)" are, and so which kind every
/// interval is: within one run, or between runs.
fn samples_line(c: &Comparison) -> Option<String> {
    let kinds: Vec<&str> = c
        .changes
        .iter()
        .flat_map(|ch| [&ch.before, &ch.after])
        .filter_map(|s| s.samples_are.as_deref())
        .collect();
    use crate::result::compare::{SAMPLES_ARE_RESULTS, SAMPLES_ARE_ROUNDS};
    let within = kinds.contains(&SAMPLES_ARE_ROUNDS);
    let between = kinds.contains(&SAMPLES_ARE_RESULTS);
    let text = match (within, between) {
        (true, false) => {
            "(n): samples a side, each a round of one run: the intervals are within that run, and a rerun of the same build can land outside them (compare several results a side, or quick --runs K, for intervals between runs)"
        }
        (false, true) => {
            "(n): samples a side, each one result's (or run's) median: the intervals are between runs"
        }
        (true, true) => {
            "(n): samples a side, the rounds of one run on one side and one median per result on the other"
        }
        (false, false) => return None,
    };
    Some(format!("{text}\n"))
}

/// One side's median and sample count.
fn side(ch: &Change, before: bool) -> String {
    let s = if before { &ch.before } else { &ch.after };
    format!("{} ({})", median_text(&ch.figure, s.median), s.n)
}

/// The verdict as a speed factor: how many times faster or slower.
pub fn verdict(ch: &Change) -> String {
    verdict_text(ch, ch.ratio, ch.verdict)
}

/// A verdict of `ch` at `ratio` (its own, or drift-corrected) as a speed factor.
fn verdict_text(ch: &Change, ratio: f64, verdict: Verdict) -> String {
    let speed = if ch.higher_is_better() {
        ratio
    } else {
        1.0 / ratio
    };
    match verdict {
        Verdict::Better => format!("{speed:.2}x faster"),
        Verdict::Worse => format!("{:.2}x slower", 1.0 / speed),
        Verdict::WithinNoise => "within noise".into(),
        Verdict::InsufficientData if crate::report::figures::single_valued(&ch.figure) => {
            "one value a side: not tested".into()
        }
        Verdict::InsufficientData => format!(
            "insufficient data ({} vs {} samples)",
            ch.before.n, ch.after.n
        ),
        Verdict::NotComparable => "not comparable".into(),
    }
}
