//! The terminal table of a `sweep` result: per workload the cases ranked
//! fastest first (the `top` fastest and slowest), each parameter's effect
//! and the fastest power-safe case; then the recommendation.

use std::fmt::Write;

use crate::measure::estimate::{Estimate, notes};
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::result::sweep::{
    Case, RankedCase, SweepState, Workload, bracketed, marginal, power_safe, ranked,
    recommendation, standings,
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
    let _ = writeln!(
        out,
        "blobbench sweep: {} cases{}, median of up to {} round(s); SQLite {}",
        cases.len(),
        if sweep.complete {
            ""
        } else {
            " (incomplete: --resume continues)"
        },
        sweep.rounds,
        doc.environment.sqlite_version
    );
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
    match recommendation(plan, &sweep.records, &cases) {
        Some((c, geo)) => {
            let settings: Vec<String> = c.iter().map(|(n, v)| format!("{n}={v}")).collect();
            let _ = writeln!(
                out,
                "recommendation: {}  ({:.2}x the fastest case{}; never synchronous=off, never journal_mode off or memory)",
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
                "recommendation: none: no power-safe case ran every workload"
            );
        }
    }
    out
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
    let standings = standings(&sweep.records, ranked, w);
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

    // Marginal effect: the median over all cases having each value.
    let mut table = Table::new(["parameter", "value", "median", "vs best value", "cases"]);
    for (name, medians) in marginal(plan, ranked) {
        let best_value = medians.iter().map(|m| m.1).fold(f64::INFINITY, f64::min);
        for (i, (v, m, n)) in medians.iter().enumerate() {
            table.row([
                if i == 0 { name.clone() } else { String::new() },
                v.clone(),
                human_duration_ns(*m),
                format!("{:.2}x", m / best_value),
                n.to_string(),
            ]);
        }
    }
    let _ = writeln!(
        out,
        "  effect of each parameter (median over the cases with that value):"
    );
    for l in table.render().lines() {
        let _ = writeln!(out, "    {l}");
    }
    match ranked.iter().find(|(c, _, _)| power_safe(c)) {
        Some((c, t, _)) => {
            let _ = writeln!(
                out,
                "  fastest power-safe: {} {} ({:.2}x the fastest)",
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
