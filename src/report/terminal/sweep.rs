//! The terminal table of a `sweep` result: per workload the cases ranked
//! fastest first (the `top` fastest and slowest), each parameter's effect
//! and the fastest power-safe case; then the recommendation.

use std::fmt::Write;

use crate::measure::estimate::{Estimate, notes};
use crate::report::table::Table;
use crate::report::terminal::advise::{Wording, against_default_text};
use crate::result::ResultDocument;
use crate::result::advise::{faster_beyond_noise, slower_beyond_noise};
use crate::result::sweep::{
    Baseline, Case, Check, Experiment, ParamEffect, RankedCase, SweepState, ValueTime, Workload,
    bracketed, compare_disks, default_value, power_safe, ranked, recommendation, standings,
    value_effects,
};
use crate::units::human_duration_ns;

/// The settings of a case that are not power-safe, as a note.
fn unsafe_note(case: &Case) -> String {
    let bad: Vec<String> = case
        .iter()
        .filter(|(n, v)| {
            (n == "synchronous" && v == "off")
                || (n == "journal_mode" && (v == "off" || v == "memory"))
        })
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    if bad.is_empty() {
        String::new()
    } else {
        format!("  (not power-safe: {})", bad.join(", "))
    }
}

/// The cases shown at each end of a ranking when not told otherwise (as
/// `sweep --top` by default).
pub const DEFAULT_TOP: u64 = 10;

/// The whole text `sweep` prints, from its result; `top` cases are shown at
/// each end of every ranking.
pub fn render(doc: &ResultDocument, sweep: &SweepState, top: u64) -> String {
    let mut out = String::new();
    let plan = &sweep.plan;
    let cases = plan.cases();
    let varied: Vec<&str> = plan
        .params
        .iter()
        .filter(|p| p.values.len() > 1)
        .map(|p| p.name.as_str())
        .collect();
    let fixed: Vec<String> = plan
        .params
        .iter()
        .filter(|p| p.values.len() == 1)
        .map(|p| format!("{}={}", p.name, p.values[0]))
        .collect();
    let rounds = match &sweep.stopping {
        Some(st) => format!("median of {}", st.header()),
        None => format!("median of up to {} round(s)", sweep.rounds),
    };
    let _ = writeln!(
        out,
        "blobbench sweep: {} cases{}, {rounds}; SQLite {}",
        cases.len(),
        if sweep.complete {
            ""
        } else {
            " (incomplete: --resume continues)"
        },
        doc.environment.sqlite_version
    );
    if let Some(e) = &sweep.experiment {
        experiment_header(&mut out, sweep, e);
    }
    if !sweep.schema.is_empty() {
        let _ = writeln!(
            out,
            "assumption: the article does not print its table schema; blobbench creates:"
        );
        for statement in sweep.schema.lines() {
            let _ = writeln!(out, "  {}", statement.trim());
        }
    }
    let _ = writeln!(out, "cases are written [{}]", varied.join(", "));
    if sweep.rounds == 1 {
        let _ = writeln!(
            out,
            "one round: a single slow run on a busy machine can rank a case last; --rounds 3 ranks by medians"
        );
    }
    if !fixed.is_empty() {
        let _ = writeln!(out, "fixed: {}", fixed.join(", "));
    }
    for w in &plan.workloads {
        let ranked = ranked(&sweep.records, &cases, w);
        if !ranked.is_empty() {
            workload(&mut out, sweep, w, &ranked, top);
        }
    }
    let _ = writeln!(out);
    match recommendation(plan, &sweep.records, &cases, sweep.stopping_kind()) {
        Some((c, geo)) => {
            let settings: Vec<String> = c.iter().map(|(n, v)| format!("{n}={v}")).collect();
            let _ = writeln!(
                out,
                "recommendation: {}  ({:.2}x the fastest case{}; each parameter at its default unless another value is faster beyond the noise on a workload and slower on none; never synchronous=off, never journal_mode off or memory)",
                settings.join(" "),
                geo,
                if plan.workloads.len() > 1 {
                    ", geometric mean over the workloads"
                } else {
                    ""
                }
            );
        }
        None => {
            let _ = writeln!(
                out,
                "recommendation: none: the case each parameter's effect points to (power-safe) did not run every workload"
            );
        }
    }
    if let Some(st) = &sweep.stopping {
        for l in st.lines("--max-rounds, --max-time") {
            let _ = writeln!(out, "{l}");
        }
    }
    if let Some(e) = &sweep.experiment {
        let _ = writeln!(
            out,
            "\nexperiment {}, the article beside this machine:",
            e.number
        );
        for l in beside(sweep, e) {
            let _ = writeln!(out, "  {l}");
        }
    }
    out
}

/// What experiment `e` runs: its title, workload and every assumption.
fn experiment_header(out: &mut String, sweep: &SweepState, e: &Experiment) {
    let _ = writeln!(
        out,
        "experiment {} of the article: \"{}\" ({} cases in the article)",
        e.number, e.title, e.article_cases
    );
    for w in &sweep.plan.workloads {
        let _ = writeln!(
            out,
            "  workload: {}{}",
            w.describe(),
            if *w == e.article_workload {
                " (the article's)".to_string()
            } else {
                format!(
                    " (--workload; the article's: {})",
                    e.article_workload.describe()
                )
            }
        );
    }
    for a in &e.assumptions {
        let _ = writeln!(out, "  assumption: {a}");
    }
}

/// The article's conclusion and figures (labelled as the article's), then
/// this machine's answer to each of the experiment's checks.
pub(crate) fn beside(sweep: &SweepState, e: &Experiment) -> Vec<String> {
    let (f, s) = (&e.article_fastest, &e.article_slowest);
    let mut lines = vec![
        format!("the article's conclusion: \"{}\"", e.article_conclusion),
        format!(
            "the article's figures ({}, {} cases, one run each): fastest {} {}, slowest {} {} ({:.2}x the fastest)",
            e.article_workload.describe(),
            e.article_cases,
            human_duration_ns(f.seconds * 1e9),
            f.case,
            human_duration_ns(s.seconds * 1e9),
            s.case,
            s.seconds / f.seconds
        ),
    ];
    let cases = sweep.plan.cases();
    for w in &sweep.plan.workloads {
        let ranked = ranked(&sweep.records, &cases, w);
        if ranked.is_empty() {
            lines.push(format!(
                "this machine ({}): nothing measured yet",
                w.describe()
            ));
            continue;
        }
        lines.push(format!(
            "this machine ({}, {} cases, median of {} round(s)):",
            w.describe(),
            ranked.len(),
            sweep.rounds
        ));
        for c in &e.checks {
            lines.push(format!("  {}", check(sweep, e, w, &ranked, c)));
        }
        if let Some(l) = disks(sweep, e, w, &cases) {
            lines.push(format!("  {l}"));
        }
    }
    lines
}

/// Experiment 7: this disk against the first (`--against`), or what that needs.
fn disks(sweep: &SweepState, e: &Experiment, w: &Workload, cases: &[Case]) -> Option<String> {
    let Some(first) = &sweep.first_disk else {
        return (e.number == 7).then(|| {
            "against the first disk: not measured; give --against FIRST.json, the result of \
--experiment 6 run there with the same options"
                .to_string()
        });
    };
    Some(
        match compare_disks(&sweep.records, &first.records, cases, w) {
            Some(d) => format!(
                "against the first disk ({}): this disk takes {} its time (median over {} cases); \
the cases rank {} (Spearman {:.2}; 1 = the same order)",
                first.source,
                d.slowdown.format_ratio(),
                d.cases,
                if d.spearman >= 0.7 {
                    "alike"
                } else if d.spearman >= 0.3 {
                    "somewhat alike"
                } else {
                    "differently"
                },
                d.spearman
            ),
            None => format!(
                "against the first disk ({}): fewer than two cases measured on both",
                first.source
            ),
        },
    )
}

/// Where the article's case `written` ranks here, as ", the article's ... ranks 3 of 16 here".
fn article_rank(sweep: &SweepState, ranked: &[RankedCase], who: &str, written: &str) -> String {
    match ranked
        .iter()
        .position(|(c, _, _)| bracketed(c, &sweep.plan.params) == written)
    {
        Some(0) if who == "fastest" => format!("; the article's {who} too"),
        Some(i) if i + 1 == ranked.len() && who == "slowest" => {
            format!("; the article's {who} too")
        }
        Some(i) => format!(
            "; the article's {who} {written} ranks {} of {} here",
            i + 1,
            ranked.len()
        ),
        None => format!("; the article's {who} {written} did not run here"),
    }
}

/// This machine's answer to one check, from the ranking of workload `w`.
fn check(
    sweep: &SweepState,
    e: &Experiment,
    w: &Workload,
    ranked: &[RankedCase],
    c: &Check,
) -> String {
    let params = &sweep.plan.params;
    let standings = standings(&sweep.records, ranked, w, sweep.stopping_kind());
    let last = ranked.len() - 1;
    match c {
        Check::Fastest => format!(
            "fastest: {} {}{}",
            time_text(&standings[0].time),
            bracketed(&ranked[0].0, params),
            article_rank(sweep, ranked, "fastest", &e.article_fastest.case)
        ),
        Check::Slowest => format!(
            "slowest: {} {} ({} the fastest){}",
            time_text(&standings[last].time),
            bracketed(&ranked[last].0, params),
            standings[last].vs_fastest.format_ratio(),
            article_rank(sweep, ranked, "slowest", &e.article_slowest.case)
        ),
        Check::Spread => {
            let tied = standings.iter().skip(1).filter(|s| s.tied).count();
            format!(
                "spread: the slowest takes {} the fastest's time; {tied} of the other {} cases cannot be told apart from the fastest",
                standings[last].vs_fastest.format_ratio(),
                last
            )
        }
        Check::Value { param } => value_line(sweep, w, param),
    }
}

/// `journal_mode: wal fastest (1.2 ms [..]); truncate 1.08x [1.02-1.15]`.
fn value_line(sweep: &SweepState, w: &Workload, param: &str) -> String {
    let effects = value_effects(&sweep.records, w, param, sweep.stopping_kind());
    let Some(best) = effects.first() else {
        return format!("{param}: not measured");
    };
    if effects.len() == 1 {
        return format!("{param}: only {} ran", best.value.to_ascii_uppercase());
    }
    let others: Vec<String> = effects[1..]
        .iter()
        .map(|v| {
            format!(
                "{} takes {}{}",
                v.value.to_ascii_uppercase(),
                v.vs_best.format_ratio(),
                if v.vs_best.has_interval() && v.vs_best.contains(1.0) {
                    " (cannot be told apart)"
                } else if !v.vs_best.has_interval() {
                    " (one round: no interval)"
                } else {
                    ""
                }
            )
        })
        .collect();
    format!(
        "{param}: {} fastest ({}, median over its {} case(s) per round); against it {}",
        best.value.to_ascii_uppercase(),
        time_text(&best.time),
        best.cases,
        others.join(", ")
    )
}

/// What a value's time over its parameter's default's says: an effect only
/// where the interval lies past 1.00 by more than a rerun could move it
/// (`Estimate::rerun_factor`).
pub(crate) fn effect_word(vs_default: &Estimate) -> &'static str {
    if faster_beyond_noise(vs_default) {
        "faster"
    } else if slower_beyond_noise(vs_default) {
        "slower"
    } else if vs_default.has_interval() {
        "within noise"
    } else {
        "no interval"
    }
}

/// One value's row of the effect table after its parameter's name: value,
/// time, ratio to the default's, effect and cases (the terminal and the
/// HTML report print the same cells).
pub(crate) fn effect_cells(e: &ParamEffect, v: &ValueTime) -> [String; 5] {
    let vs = e.decision.vs_default(&v.value);
    [
        v.value.clone(),
        time_text(&v.time),
        vs.map_or_else(|| "-".into(), |r| r.format_ratio()),
        match vs {
            Some(r) => effect_word(&r).into(),
            None => baseline_word(e.baseline).into(),
        },
        v.cases.to_string(),
    ]
}

/// What the value the others are compared with is.
pub(crate) fn baseline_word(b: Baseline) -> &'static str {
    match b {
        Baseline::Default => "(default)",
        Baseline::FirstGiven => "(first given)",
    }
}

/// A parameter's effect in one sentence: which value is kept and why (the
/// terminal and the HTML report say the same).
pub(crate) fn effect_text(e: &ParamEffect) -> String {
    let p = &e.param;
    let d = &e.decision.default;
    let default = match (e.baseline, default_value(p)) {
        (Baseline::Default, _) => format!("the default {p}={d}"),
        (Baseline::FirstGiven, Some(sqlite)) => {
            format!("{p}={d} (the first value given; the default {sqlite} was not measured)")
        }
        (Baseline::FirstGiven, None) => format!("{p}={d} (the first value given)"),
    };
    let mut s = format!(
        "{p}: {}",
        against_default_text(
            &e.decision,
            &|v: &String| format!("{p}={v}"),
            &Wording {
                default: &default,
                what: "time",
                verb: "wins",
                simpler: "given earlier",
            },
        )
    );
    if e.decision.changed() && !power_safe(&vec![(p.clone(), e.decision.chosen.clone())]) {
        s.push_str(" (not power-safe)");
    }
    s
}

/// A time with its interval: `1.23 ms [1.10 ms-1.40 ms]`, the figure alone
/// without one.
pub(crate) fn time_text(e: &Estimate) -> String {
    let mut s = human_duration_ns(e.value);
    if e.has_interval() {
        s.push_str(&format!(
            " [{}-{}]",
            human_duration_ns(e.low),
            human_duration_ns(e.high)
        ));
    }
    if e.noisy() {
        s.push_str(" ~");
    }
    s
}

/// One workload: its ranking, each parameter's effect, the fastest
/// power-safe case.
fn workload(out: &mut String, sweep: &SweepState, w: &Workload, ranked: &[RankedCase], top: u64) {
    let plan = &sweep.plan;
    let best = ranked[0].1;
    let _ = writeln!(out, "\n{} ({} cases measured)", w.describe(), ranked.len());
    let top = top.max(1) as usize;
    let standings = standings(&sweep.records, ranked, w, sweep.stopping_kind());
    let line = |out: &mut String, i: usize, (c, _, _): &RankedCase| {
        let st = &standings[i];
        let _ = writeln!(
            out,
            "  {:>4}{} {} took {:>10} ({})  {}{}",
            i + 1,
            if i > 0 && st.tied { "=" } else { " " },
            w.describe(),
            time_text(&st.time),
            st.vs_fastest.format_ratio(),
            bracketed(c, &plan.params),
            unsafe_note(c)
        );
    };
    for (i, r) in ranked.iter().enumerate().take(top) {
        line(out, i, r);
    }
    if ranked.len() > 2 * top {
        let _ = writeln!(out, "  ...[snip]...");
    }
    let tail_start = ranked.len().saturating_sub(top).max(top);
    for (i, r) in ranked.iter().enumerate().skip(tail_start) {
        line(out, i, r);
    }
    let tied = standings.iter().skip(1).filter(|s| s.tied).count();
    if tied > 0 {
        let _ = writeln!(
            out,
            "  = : {tied} case(s) cannot be told apart from the fastest (the interval of their paired ratio contains 1.00)"
        );
    }
    for l in notes(
        standings
            .iter()
            .flat_map(|s| [s.time, s.vs_fastest])
            .collect::<Vec<_>>()
            .iter(),
    ) {
        let _ = writeln!(out, "  {l}");
    }

    // Each parameter's effect, against its default, paired round by round.
    let effects = sweep.effects_on(w);
    let mut table = Table::new([
        "parameter",
        "value",
        "time",
        "vs default",
        "effect",
        "cases",
    ]);
    for e in &effects {
        for (i, v) in e.values.iter().enumerate() {
            let name = if i == 0 {
                e.param.clone()
            } else {
                String::new()
            };
            let [value, time, vs, effect, cases] = effect_cells(e, v);
            table.row([name, value, time, vs, effect, cases]);
        }
    }
    let _ = writeln!(
        out,
        "  effect of each parameter (per round the median over the cases with that value; each value's time \
         over its parameter's default's, paired round by round; an effect is stated only where the interval excludes 1.00):"
    );
    for l in table.render().lines() {
        let _ = writeln!(out, "    {l}");
    }
    for e in &effects {
        let _ = writeln!(out, "  {}", effect_text(e));
    }
    match ranked.iter().find(|(c, _, _)| power_safe(c)) {
        Some((c, t, _)) => {
            let _ = writeln!(
                out,
                "  fastest power-safe at the median: {} {} ({:.2}x the fastest; a median, not a decision: the recommendation follows each parameter's effect)",
                bracketed(c, &plan.params),
                human_duration_ns(*t),
                t / best
            );
        }
        None => {
            let _ = writeln!(out, "  no power-safe case was measured");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::advise::AgainstDefault;
    use crate::result::sweep::ValueTime;

    /// synchronous: normal against full at `normal`'s per-round ratios.
    fn effect(name: &str, default: &str, other: &str, per_round: &[f64]) -> ParamEffect {
        let ones = vec![1.0; per_round.len()];
        let vs = crate::measure::estimate::paired_ratio(per_round, &ones);
        let time = |v: &str| ValueTime {
            value: v.into(),
            time: crate::measure::estimate::median_estimate(&[100.0; 5]),
            cases: 2,
        };
        ParamEffect {
            workload: Workload::BlobRead { count: 1, size: 1 },
            param: name.into(),
            baseline: Baseline::Default,
            values: vec![time(other), time(default)],
            decision: AgainstDefault::decide(default.into(), vec![(other.into(), vs)]),
        }
    }

    #[test]
    fn an_effect_within_noise_keeps_the_default_and_says_so() {
        let e = effect(
            "synchronous",
            "full",
            "normal",
            &[0.90, 1.10, 0.95, 1.05, 0.92],
        );
        let text = effect_text(&e);
        assert!(
            text.starts_with("synchronous: within noise: keeping the default synchronous=full (time, synchronous=normal / synchronous=full: 0.95x"),
            "{text}"
        );
        assert_eq!(effect_word(&e.decision.others[0].1), "within noise");
    }

    #[test]
    fn an_effect_beyond_the_noise_is_stated_and_an_unsafe_one_marked() {
        let separated = [0.50, 0.52, 0.49, 0.51, 0.50];
        let e = effect("journal_mode", "delete", "wal", &separated);
        let text = effect_text(&e);
        assert!(
            text.starts_with("journal_mode: journal_mode=wal wins: faster than the default journal_mode=delete beyond the noise (time, journal_mode=wal / journal_mode=delete: 0.50x"),
            "{text}"
        );
        assert!(!text.contains("power-safe"), "{text}");
        assert_eq!(effect_word(&e.decision.others[0].1), "faster");
        let e = effect("synchronous", "full", "off", &separated);
        assert!(
            effect_text(&e).ends_with("(not power-safe)"),
            "{}",
            effect_text(&e)
        );
    }
}
