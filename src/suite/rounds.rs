//! Cases run round after round: groups of cases that alternate their order
//! each measured round (A B C, C B A, ...) so drift on a shared machine
//! favours no side, each group stopping on its own, after a fixed count
//! (`--rounds N`) or once its figures meet a precision target
//! (`measure::precision`).

use std::time::Instant;

use crate::error::{Error, Result};
use crate::measure::estimate::{Estimate, median_estimate_sequential, paired_ratio_sequential};
use crate::measure::precision::StopReason;
use crate::progress::{Expected, Progress};
use crate::result::rounds::{CaseRounds, RoundsRecord, RoundsRule};
use crate::workload::{RunPlan, RunResult, execute};

use super::common::{DatasetState, ProbedReference, per_op_ns};

/// Cases that alternate round by round and stop together.
#[derive(Debug, Clone)]
pub struct RoundGroup {
    /// What the group measures, as printed ("reads", "durable writes").
    pub name: String,
    /// Its cases (indexes into the plans).
    pub cases: Vec<usize>,
}

/// A figure whose interval decides when its group stops: case
/// `numerator`'s time per operation over case `denominator`'s, paired round
/// by round (both in one group).
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    /// The case above the line.
    pub numerator: usize,
    /// The case below it.
    pub denominator: usize,
    /// Whether the WAL checkpoint's time counts (as in the table's row).
    pub with_checkpoint: bool,
}

/// How a suite's rounds run: discarded warm-up rounds, then measured
/// rounds as the rule says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundPlan {
    /// Discarded rounds before the measured ones.
    pub warmup: u64,
    /// When each group stops.
    pub rule: RoundsRule,
}

impl RoundPlan {
    /// One discarded warm-up round, then `rule`.
    pub fn after_warmup(rule: RoundsRule) -> RoundPlan {
        RoundPlan { warmup: 1, rule }
    }
}

/// Every case's results, one per measured round, and the rounds each took.
#[derive(Debug)]
pub struct Measured {
    /// Each case's runs, in round order.
    pub results: Vec<Vec<RunResult>>,
    /// The rule and where each case stopped.
    pub record: RoundsRecord,
}

/// What [`run_rounds_keeping`] does when case `i` fails in a round (named
/// in words, "round 2/5"): an error stops every case, a list of cases
/// (the failed one among them) leaves those out from then on while the
/// others go on.
pub type OnFailure<'a> = dyn FnMut(usize, &str, Error) -> Result<Vec<usize>> + 'a;

/// Runs every group round after round until each has stopped; `state` is
/// restored before every case, so all rounds of a case meet the same
/// database. Warm-up rounds run every case once and are not returned. A
/// failure stops everything.
pub fn run_rounds(
    cases: &[RunPlan],
    groups: &[RoundGroup],
    figures: &[Figure],
    plan: RoundPlan,
    progress: &dyn Progress,
    state: &DatasetState,
    reference: &mut ProbedReference,
) -> Result<Measured> {
    let mut stop = |_: usize, _: &str, e: Error| Err(e);
    run_rounds_keeping(
        cases, groups, figures, plan, progress, state, reference, &mut stop,
    )
}

/// [`run_rounds`] that asks `on_failure` what to do when a case fails, so
/// a suite can keep every other system's figures when one system fails.
/// A case left out keeps the results of the rounds it completed.
#[allow(clippy::too_many_arguments)]
pub fn run_rounds_keeping(
    cases: &[RunPlan],
    groups: &[RoundGroup],
    figures: &[Figure],
    plan: RoundPlan,
    progress: &dyn Progress,
    state: &DatasetState,
    reference: &mut ProbedReference,
    on_failure: &mut OnFailure,
) -> Result<Measured> {
    let mut run = Runner::new(cases, groups, figures, plan, progress);
    let mut round: u64 = 0;
    while run.stopped.iter().any(Option::is_none) {
        // None: a warm-up round; Some(k): measured round k (0-based).
        let measured = round.checked_sub(plan.warmup);
        if measured == Some(0) {
            run.measuring_since = Some(Instant::now());
        }
        for g in 0..groups.len() {
            if run.stopped[g].is_some() {
                continue;
            }
            if measured.is_some() {
                reference.samples.probe(&reference.folder);
            }
            run.group_round(g, measured, state, on_failure)?;
            if let Some(k) = measured {
                run.judge(g, k + 1);
            }
        }
        round += 1;
    }
    state.restore()?;
    progress.finish();
    Ok(run.finish())
}

/// Where a point stands after `measured` rounds (`elapsed` seconds of
/// them), its figures' `estimates` made with the sequential rule (which
/// keeps 95% when rounds stop on their width): whether it stops and why,
/// the rounds it is now expected to take, and its widest relative
/// half-width. For suites whose rounds are timed loads of several systems
/// (suite http, suite concurrency).
pub fn judge_point(
    rule: RoundsRule,
    measured: u64,
    estimates: &[Estimate],
    elapsed: f64,
) -> (Option<StopReason>, u64, Option<f64>) {
    match rule {
        RoundsRule::Fixed { rounds } => (
            (measured >= rounds).then_some(StopReason::Fixed),
            rounds,
            None,
        ),
        RoundsRule::Precision(t) => {
            let widest = estimates
                .iter()
                .filter(|e| e.has_interval())
                .map(Estimate::half_width)
                .reduce(f64::max);
            (
                t.stop_after(measured, widest, elapsed),
                t.projected_rounds(measured, widest, elapsed),
                widest,
            )
        }
    }
}

/// The state of a suite's rounds while they run.
struct Runner<'a> {
    cases: &'a [RunPlan],
    groups: &'a [RoundGroup],
    figures: &'a [Figure],
    plan: RoundPlan,
    progress: &'a dyn Progress,
    expected: Expected,
    results: Vec<Vec<RunResult>>,
    left_out: Vec<bool>,
    /// Each group's end, once it has one, with its widest half-width.
    stopped: Vec<Option<(StopReason, Option<f64>)>>,
    measuring_since: Option<Instant>,
}

impl<'a> Runner<'a> {
    fn new(
        cases: &'a [RunPlan],
        groups: &'a [RoundGroup],
        figures: &'a [Figure],
        plan: RoundPlan,
        progress: &'a dyn Progress,
    ) -> Self {
        let units = cases.iter().map(|c| c.count.unwrap_or(0));
        let first_guess = plan.warmup + plan.rule.floor();
        let sets: Vec<Vec<usize>> = groups.iter().map(|g| g.cases.clone()).collect();
        let runner = Runner {
            expected: Expected::rounds(units, &sets, first_guess),
            results: (0..cases.len()).map(|_| Vec::new()).collect(),
            left_out: vec![false; cases.len()],
            stopped: vec![None; groups.len()],
            measuring_since: None,
            cases,
            groups,
            figures,
            plan,
            progress,
        };
        progress.start("measuring", runner.ops_expected(|_| first_guess));
        runner
    }

    /// The operations of every case over `rounds(group)` rounds in all.
    fn ops_expected(&self, rounds: impl Fn(usize) -> u64) -> u64 {
        self.groups
            .iter()
            .enumerate()
            .flat_map(|(g, group)| group.cases.iter().map(move |&i| (g, i)))
            .map(|(g, i)| self.cases[i].count.unwrap_or(0) * rounds(g))
            .sum()
    }

    /// Runs group `g` once, its order reversed every odd measured round.
    fn group_round(
        &mut self,
        g: usize,
        measured: Option<u64>,
        state: &DatasetState,
        on_failure: &mut OnFailure,
    ) -> Result<()> {
        let name = match (measured, self.plan.rule) {
            (None, _) => "warm-up".to_string(),
            (Some(k), RoundsRule::Fixed { rounds }) => format!("round {}/{rounds}", k + 1),
            (Some(k), RoundsRule::Precision(t)) => {
                format!("round {} (of {}-{})", k + 1, t.min_rounds, t.max_rounds)
            }
        };
        let mut order = self.groups[g].cases.clone();
        if measured.is_some_and(|k| k % 2 == 1) {
            order.reverse();
        }
        for i in order {
            let count = self.cases[i].count.unwrap_or(0);
            if self.left_out[i] {
                self.progress.advance(count);
                continue;
            }
            // A test holds the suite here to stop a server between cases.
            crate::pause::at("round-case");
            crate::interrupt::check()?;
            self.progress
                .message(&format!("{name}: {}", self.cases[i].name));
            state.restore()?;
            if let Some((current, after)) = self.expected.next(i) {
                self.progress.expect_remaining(current, after);
            }
            let started = Instant::now();
            // A case with failed operations is no figure: the suite says
            // which case failed and why.
            let run = execute(&self.cases[i], &crate::progress::Silent)
                .and_then(crate::result::run::RunResult::without_failures);
            self.progress.advance(count);
            match run {
                Ok(mut r) => {
                    self.expected.record(i, started.elapsed());
                    if let Some(k) = measured {
                        r.name = format!("{} (round {})", r.name, k + 1);
                        self.results[i].push(r);
                    }
                }
                Err(e) => {
                    for j in on_failure(i, &name, e)? {
                        self.left_out[j] = true;
                    }
                }
            }
        }
        Ok(())
    }

    /// After measured round `k` (1-based) of group `g`: whether it stops,
    /// and the rounds it is now expected to take.
    fn judge(&mut self, g: usize, k: u64) {
        let live: Vec<usize> = self.groups[g]
            .cases
            .iter()
            .copied()
            .filter(|&i| !self.left_out[i])
            .collect();
        if live.is_empty() {
            self.stopped[g] = Some((StopReason::Failed, None));
            return;
        }
        let elapsed = self
            .measuring_since
            .map_or(0.0, |t| t.elapsed().as_secs_f64());
        // A fixed count needs no interval: none is computed.
        let estimates = match self.plan.rule {
            RoundsRule::Fixed { .. } => Vec::new(),
            RoundsRule::Precision(_) => self.estimates(&live),
        };
        let (stop, projected, widest) = judge_point(self.plan.rule, k, &estimates, elapsed);
        let projected = if stop.is_some() {
            k
        } else {
            projected.max(k + 1)
        };
        for &i in &self.groups[g].cases {
            self.expected.set_runs_left(i, projected - k);
        }
        if let Some(reason) = stop {
            self.stopped[g] = Some((reason, widest));
        }
        let planned: Vec<u64> = (0..self.groups.len())
            .map(|h| {
                let done = self.results_in(h);
                if h == g {
                    self.plan.warmup + projected
                } else {
                    self.plan.warmup + done.max(self.plan.rule.floor())
                }
            })
            .collect();
        let total = self.ops_expected(|h| planned[h]);
        self.progress.set_total(total);
    }

    /// The measured rounds group `h` has so far.
    fn results_in(&self, h: usize) -> u64 {
        self.groups[h]
            .cases
            .iter()
            .map(|&i| self.results[i].len() as u64)
            .max()
            .unwrap_or(0)
    }

    /// The figures among `live` cases, with the sequential rule's
    /// intervals (each case's own median where no figure holds it).
    fn estimates(&self, live: &[usize]) -> Vec<Estimate> {
        let times = |i: usize, with_checkpoint: bool| -> Vec<f64> {
            self.results[i]
                .iter()
                .map(|r| per_op_ns(r, with_checkpoint))
                .collect()
        };
        let mut estimates: Vec<Estimate> = Vec::new();
        for f in self.figures {
            if live.contains(&f.numerator) && live.contains(&f.denominator) {
                let db = times(f.denominator, f.with_checkpoint);
                estimates.push(paired_ratio_sequential(&times(f.numerator, true), &db));
            }
        }
        for &i in live {
            let in_figure = self
                .figures
                .iter()
                .any(|f| f.numerator == i || f.denominator == i);
            if !in_figure {
                estimates.push(median_estimate_sequential(&times(i, true)));
            }
        }
        estimates
    }

    /// The results and each case's record.
    fn finish(self) -> Measured {
        let mut cases = Vec::new();
        for (g, group) in self.groups.iter().enumerate() {
            let (reason, widest) = self.stopped[g].unwrap_or((StopReason::Failed, None));
            for &i in &group.cases {
                let failed = self.left_out[i];
                cases.push((
                    i,
                    CaseRounds {
                        case: self.cases[i].name.clone(),
                        group: group.name.clone(),
                        rounds: self.results[i].len() as u64,
                        stopped: if failed { StopReason::Failed } else { reason },
                        half_width: if failed { None } else { widest },
                    },
                ));
            }
        }
        cases.sort_by_key(|(i, _)| *i);
        Measured {
            results: self.results,
            record: RoundsRecord {
                rule: self.plan.rule,
                cases: cases.into_iter().map(|(_, c)| c).collect(),
            },
        }
    }
}
