//! How a `sweep` result is drawn: ranked cases and each parameter's effect.

use super::{DataTable, Figure, Section, interval_caption};
use crate::measure::estimate::Estimate;
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};
use crate::result::sweep::{
    ParamEffect, RankedCase, SweepState, SweepTables, Workload, bracketed, power_safe, product,
    ranked, recommendation, standings,
};

/// Cases shown at each end of a ranking chart.
const TOP: usize = 10;

pub(in crate::report) fn sweep(tables: &SweepTables, s: &mut Section) {
    let sw = &tables.sweep;
    let (plan, records) = (&sw.plan, &sw.records);
    let cases = product(&plan.params);
    for (wi, w) in plan.workloads.iter().enumerate() {
        let ranked = ranked(records, &cases, w);
        if ranked.is_empty() {
            continue;
        }
        let shown: Vec<usize> = if ranked.len() <= 2 * TOP {
            (0..ranked.len()).collect()
        } else {
            (0..TOP).chain(ranked.len() - TOP..ranked.len()).collect()
        };
        s.figures.push(ranked_figure(sw, wi, w, &ranked, &shown));
        let effects = sw.effects_on(w);
        if let Some(f) = effect_figure(wi, w, &effects) {
            s.figures.push(f);
        }
        s.tables.push(ranked_table(wi, w, &ranked, sw));
        if !effects.is_empty() {
            s.tables.push(effect_table(wi, w, &effects));
        }
        for e in &effects {
            s.summary.push(format!(
                "{}: {}",
                w.describe(),
                crate::report::terminal::sweep::effect_text(e)
            ));
        }
    }
    match recommendation(plan, records, &cases, sw.stopping_kind()) {
        Some((c, geo)) => s.summary.push(format!(
            "recommendation: {} ({geo:.2}x the fastest case; power-safe; each parameter at its default unless another value is faster beyond the noise)",
            c.iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        )),
        None => s
            .summary
            .push("recommendation: none: the case each parameter's effect points to (power-safe) did not run every workload".into()),
    }
    if let Some(e) = &sw.experiment {
        s.summary.push(format!(
            "experiment {} of the article: {}",
            e.number, e.title
        ));
        s.summary
            .extend(e.assumptions.iter().map(|a| format!("assumption: {a}")));
        s.summary
            .extend(crate::report::terminal::sweep::beside(sw, e));
    }
    if !sw.schema.is_empty() {
        s.summary.push(format!(
            "assumption: the article does not print its table schema; blobbench creates: {}",
            sw.schema.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    if !sw.complete {
        s.summary
            .push("incomplete sweep: --resume continues it".into());
    }
}

/// The cases ranked fastest first as bars (the `shown` ranks), with
/// min..max whiskers over the rounds.
fn ranked_figure(
    sw: &SweepState,
    wi: usize,
    w: &Workload,
    ranked: &[RankedCase],
    shown: &[usize],
) -> Figure {
    let (plan, records) = (&sw.plan, &sw.records);
    let standings = standings(records, ranked, w, sw.stopping_kind());
    let groups: Vec<BarGroup> = shown
        .iter()
        .map(|&i| {
            let (c, t, _) = &ranked[i];
            let e = standings[i].time;
            let spread = e.has_interval().then_some((e.low, e.high));
            BarGroup {
                label: format!(
                    "{}. {}{}",
                    i + 1,
                    bracketed(c, &plan.params),
                    if power_safe(c) { "" } else { " *" }
                ),
                bars: vec![Some(Bar {
                    value: *t,
                    spread,
                    noisy: e.noisy(),
                })],
                marker: None,
            }
        })
        .collect();
    Figure {
        name: format!("ranked-{}", wi + 1),
        caption: format!(
            "{}: cases ranked fastest first{}. {} * = not power-safe. Cases are written [{}].",
            w.describe(),
            if ranked.len() > 2 * TOP {
                format!(
                    "; the {TOP} fastest and the {TOP} slowest of {}",
                    ranked.len()
                )
            } else {
                String::new()
            },
            interval_caption(shown.iter().map(|&i| &standings[i].time)),
            plan.params
                .iter()
                .filter(|p| p.values.len() > 1)
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        chart: Chart::Bars(BarChart {
            title: format!("{}: time per case", w.describe()),
            value_axis: AxisSpec::new("time", Scale::Linear, Unit::Nanos),
            series_names: vec!["median time".into()],
            groups,
            reference: None,
            marker_label: None,
        }),
    }
}

/// Each parameter value's time over its parameter's default's, paired
/// round by round, with interval whiskers; None when no parameter varies.
fn effect_figure(wi: usize, w: &Workload, effects: &[ParamEffect]) -> Option<Figure> {
    let drawn: Vec<Estimate> = effects
        .iter()
        .flat_map(|e| {
            e.values
                .iter()
                .filter_map(|v| e.decision.vs_default(&v.value))
        })
        .collect();
    let groups: Vec<BarGroup> = effects
        .iter()
        .flat_map(|e| {
            e.values.iter().map(move |v| {
                let vs = e.decision.vs_default(&v.value);
                BarGroup {
                    label: format!("{}={}", e.param, v.value),
                    bars: vec![Some(Bar {
                        value: vs.map_or(1.0, |r| r.value),
                        spread: vs.filter(|r| r.has_interval()).map(|r| (r.low, r.high)),
                        noisy: vs.is_some_and(|r| r.noisy()),
                    })],
                    marker: None,
                }
            })
        })
        .collect();
    (!groups.is_empty()).then(|| Figure {
        name: format!("effect-{}", wi + 1),
        caption: format!(
            "{}: each parameter value's time (per round the median over the cases having it) over its \
             parameter's default's (1x), paired round by round. {} A whisker across 1x is within \
             noise: no effect is claimed and the default is kept.",
            w.describe(),
            interval_caption(&drawn)
        ),
        chart: Chart::Bars(BarChart {
            title: format!("{}: effect of each parameter", w.describe()),
            value_axis: AxisSpec::new("time / the default's", Scale::Linear, Unit::Ratio),
            series_names: vec!["relative time".into()],
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    })
}

/// Each parameter value's time, its ratio to the default's and the effect
/// that ratio supports.
fn effect_table(wi: usize, w: &Workload, effects: &[ParamEffect]) -> DataTable {
    use crate::report::terminal::sweep::effect_cells;
    let mut t = DataTable::new(
        &format!("sweep-effects-{}", wi + 1),
        format!(
            "{}: effect of each parameter (each value's time over its parameter's default's, paired round by \
             round; an effect is stated only where the interval excludes 1.00)",
            w.describe()
        ),
        &[
            "parameter",
            "value",
            "time",
            "vs default",
            "effect",
            "cases",
        ],
    );
    for e in effects {
        for v in &e.values {
            let mut row = vec![e.param.clone()];
            row.extend(effect_cells(e, v));
            t.rows.push(row);
        }
    }
    t
}

/// Every ranked case as a table row.
fn ranked_table(wi: usize, w: &Workload, ranked: &[RankedCase], sw: &SweepState) -> DataTable {
    let records = &sw.records;
    let standings = standings(records, ranked, w, sw.stopping_kind());
    let mut t = DataTable::new(
        &format!("sweep-{}", wi + 1),
        format!(
            "{}: ranked cases (median of rounds [95% interval]; = : cannot be told apart from the fastest)",
            w.describe()
        ),
        &["rank", "case", "median", "vs fastest", "runs", "power-safe"],
    );
    for (i, ((c, _, n), st)) in ranked.iter().zip(&standings).enumerate() {
        t.rows.push(vec![
            format!("{}{}", i + 1, if i > 0 && st.tied { " =" } else { "" }),
            c.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            crate::report::terminal::sweep::time_text(&st.time),
            st.vs_fastest.format_ratio(),
            n.to_string(),
            if power_safe(c) { "yes" } else { "no" }.into(),
        ]);
    }
    t
}
