//! The sweep's answer: cases ranked fastest first in the article's bracketed
//! notation, each parameter's marginal effect, and the fastest power-safe
//! setting as the recommendation.

use crate::cli::SweepArgs;
use crate::measure::stats::summarize;
use crate::report::table::Table;
use crate::units::human_duration_ns;

use super::params::{self, Case, power_safe};
use super::workloads::Workload;
use super::{Record, SweepPlan};

/// Median time of each case for one workload, fastest first.
pub fn ranked(records: &[Record], cases: &[Case], w: &Workload) -> Vec<(Case, f64, usize)> {
    let mut out: Vec<(Case, f64, usize)> = cases
        .iter()
        .filter_map(|c| {
            let times: Vec<f64> = records
                .iter()
                .filter(|r| r.workload == *w && r.case == *c)
                .map(|r| r.timing.ns as f64)
                .collect();
            (!times.is_empty()).then(|| (c.clone(), summarize(&times).median, times.len()))
        })
        .collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

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

pub fn print(
    args: &SweepArgs,
    plan: &SweepPlan,
    cases: &[Case],
    records: &[Record],
    complete: bool,
) {
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
    println!(
        "blobbench sweep: {} cases{}, median of up to {} round(s); SQLite {}",
        cases.len(),
        if complete {
            ""
        } else {
            " (incomplete: --resume continues)"
        },
        args.rounds,
        rusqlite::version()
    );
    println!("cases are written [{}]", varied.join(", "));
    if args.rounds == 1 {
        println!(
            "one round: a single slow run on a busy machine can rank a case last; --rounds 3 ranks by medians"
        );
    }
    if !fixed.is_empty() {
        println!("fixed: {}", fixed.join(", "));
    }
    for w in &plan.workloads {
        let ranked = ranked(records, cases, w);
        if ranked.is_empty() {
            continue;
        }
        let best = ranked[0].1;
        println!("\n{} ({} cases measured)", w.describe(), ranked.len());
        let top = args.top.max(1) as usize;
        let line = |i: usize, (c, t, _): &(Case, f64, usize)| {
            println!(
                "  {:>4}  {} took {:>10} ({:.2}x)  {}{}",
                i + 1,
                w.describe(),
                human_duration_ns(*t),
                t / best,
                params::bracketed(c, &plan.params),
                unsafe_note(c)
            );
        };
        for (i, r) in ranked.iter().enumerate().take(top) {
            line(i, r);
        }
        if ranked.len() > 2 * top {
            println!("  ...[snip]...");
        }
        let tail_start = ranked.len().saturating_sub(top).max(top);
        for (i, r) in ranked.iter().enumerate().skip(tail_start) {
            line(i, r);
        }

        // Marginal effect: the median over all cases having each value.
        let mut table = Table::new(["parameter", "value", "median", "vs best value", "cases"]);
        for (name, medians) in marginal(plan, &ranked) {
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
        println!("  effect of each parameter (median over the cases with that value):");
        for l in table.render().lines() {
            println!("    {l}");
        }
        match ranked.iter().find(|(c, _, _)| power_safe(c)) {
            Some((c, t, _)) => {
                println!(
                    "  fastest power-safe: {} {} ({:.2}x the fastest)",
                    params::bracketed(c, &plan.params),
                    human_duration_ns(*t),
                    t / best
                );
            }
            None => println!("  no power-safe case was measured"),
        }
    }
    let n_workloads = plan.workloads.len();
    let pick = recommendation(plan, records, cases);
    println!();
    match pick {
        Some((c, geo)) => {
            let settings: Vec<String> = c.iter().map(|(n, v)| format!("{n}={v}")).collect();
            println!(
                "recommendation: {}  ({:.2}x the fastest case{}; never synchronous=off, never journal_mode off or memory)",
                settings.join(" "),
                geo,
                if n_workloads > 1 {
                    ", geometric mean over the workloads"
                } else {
                    ""
                }
            );
        }
        None => println!("recommendation: none: no power-safe case ran every workload"),
    }
}

/// A parameter value, the median time of the cases having it, and how many.
pub type ValueMedian = (String, f64, usize);

/// Each varied parameter's values with the median time over the ranked
/// cases having that value (and how many cases that is).
pub fn marginal(
    plan: &SweepPlan,
    ranked: &[(Case, f64, usize)],
) -> Vec<(String, Vec<ValueMedian>)> {
    plan.params
        .iter()
        .filter(|p| p.values.len() > 1)
        .map(|p| {
            let medians = p
                .values
                .iter()
                .map(|v| {
                    let t: Vec<f64> = ranked
                        .iter()
                        .filter(|(c, _, _)| c.iter().any(|(n, x)| *n == p.name && x == v))
                        .map(|(_, t, _)| *t)
                        .collect();
                    (v.clone(), summarize(&t).median, t.len())
                })
                .filter(|(_, _, n)| *n > 0)
                .collect();
            (p.name.clone(), medians)
        })
        .collect()
}

/// The power-safe case with the lowest geometric mean of (time / fastest
/// time) over the workloads, among those that ran every workload.
pub fn recommendation(plan: &SweepPlan, records: &[Record], cases: &[Case]) -> Option<(Case, f64)> {
    let mut overall: Vec<(Case, Vec<f64>)> = Vec::new();
    for w in &plan.workloads {
        let ranked = ranked(records, cases, w);
        let Some(best) = ranked.first().map(|r| r.1) else {
            continue;
        };
        for (c, t, _) in ranked.iter().filter(|(c, _, _)| power_safe(c)) {
            match overall.iter_mut().find(|(o, _)| o == c) {
                Some((_, v)) => v.push(t / best),
                None => overall.push((c.clone(), vec![t / best])),
            }
        }
    }
    let n_workloads = plan.workloads.len();
    overall
        .into_iter()
        .filter(|(_, v)| v.len() == n_workloads)
        .map(|(c, v)| {
            let geo = (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
            (c, geo)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
}
