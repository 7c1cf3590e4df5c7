//! `blobbench sweep`: the cartesian parameter sweep of "Evaluating SQLite
//! Performance by Testing All Parameters", generalised.
//!
//! Every combination of the given settings (by default the article's 1152)
//! runs each workload on a fresh database. Rounds run the cases in a new
//! shuffled order each time so drift on a shared machine favours no setting.
//! The result is handed to the caller after every run (the command rewrites
//! its JSON), so an interrupted sweep continues where it stopped with
//! `--resume`: the caller passes the runs recorded before.

pub mod experiments;
pub mod params;
pub mod workloads;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::Result;
use crate::measure::estimate::Estimate;
use crate::measure::precision::StopReason;
use crate::progress::Progress;
use crate::result::rounds::{CaseRounds, RoundsRecord, RoundsRule};
use crate::result::sweep::{
    Experiment, FirstDisk, ParamEffect, SweepState, SweepTables, all_param_effects,
};
use crate::result::{ResultDocument, ResultKind, Tables};

use super::common::{WorkDir, remove_entry};
use super::rounds::judge_point;
use params::Case;

pub use crate::result::sweep::{Record, SweepPlan};

/// What `sweep` runs, checked and typed before anything runs.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// Parameters, workloads, filters and seed (recorded in the result).
    pub plan: SweepPlan,
    /// How many rounds (each runs every case and workload once): a fixed
    /// count, or until every parameter effect meets a precision target.
    pub rule: RoundsRule,
    /// Stop starting new runs after this long; None = run everything.
    pub time_budget: Option<Duration>,
    /// Folder for the databases; None = a temporary folder.
    pub dir: Option<PathBuf>,
    /// Keep the folder afterwards.
    pub keep: bool,
    /// The article's experiment the plan repeats (`--experiment N`),
    /// recorded in the result with the article's conclusion.
    pub experiment: Option<Experiment>,
    /// Experiment 7: experiment 6's runs on the first disk (`--against`).
    pub first_disk: Option<FirstDisk>,
}

/// Called with the result after every run (and once when nothing is left
/// to run), so the caller can save it: a sweep takes hours.
pub type OnRecord<'a> = &'a mut dyn FnMut(&mut ResultDocument) -> Result<()>;

/// Runs every case x workload x round not yet in `earlier` (runs recorded
/// by an interrupted sweep of the same plan); returns the result, which
/// says whether the sweep completed.
pub fn run(
    options: &SweepOptions,
    earlier: Vec<Record>,
    progress: &dyn Progress,
    on_record: OnRecord,
) -> Result<ResultDocument> {
    let work = WorkDir::new(options.dir.as_deref(), options.keep, "blobbench-sweep-")?;
    let db = work.join("sweep.db");
    let copy_db = work.join("sweep-copy.db");
    let mut doc = ResultDocument::new(
        ResultKind::Sweep,
        crate::store::capture_environment(Some(&work.path)),
        Tables::Sweep(SweepTables {
            sweep: SweepState {
                plan: options.plan.clone(),
                rounds: ceiling(options.rule),
                complete: false,
                records: earlier,
                schema: workloads::SCHEMA.into(),
                experiment: options.experiment.clone(),
                first_disk: options.first_disk.clone(),
                effects: Vec::new(),
                stopping: None,
            },
        }),
    );
    let outcome = sweep(options, &mut doc, &db, &copy_db, &work, progress, on_record);
    remove_entry(&db);
    remove_entry(&copy_db);
    work.report_kept(progress);
    outcome?;
    Ok(doc)
}

/// The sweep being recorded in the document.
fn state(doc: &mut ResultDocument) -> &mut SweepState {
    match &mut doc.tables {
        Tables::Sweep(t) => &mut t.sweep,
        _ => unreachable!("run() makes a sweep document"),
    }
}

/// The most rounds `rule` runs.
fn ceiling(rule: RoundsRule) -> u64 {
    match rule {
        RoundsRule::Fixed { rounds } => rounds,
        RoundsRule::Precision(t) => t.max_rounds,
    }
}

/// The runs of `round` not yet recorded: (case index, workload index), in
/// the round's own shuffled case order.
fn todo(plan: &SweepPlan, round: u64, cases: &[Case], records: &[Record]) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(plan.seed ^ round));
    let mut todo = Vec::new();
    for c in order {
        for (w, workload) in plan.workloads.iter().enumerate() {
            let done = records
                .iter()
                .any(|r| r.round == round && r.workload == *workload && r.case == cases[c]);
            if !done {
                todo.push((c, w));
            }
        }
    }
    todo
}

/// The records of the first `rounds` rounds: a resumed sweep holds later
/// ones too, which the judgement of an earlier round must not see.
fn rounds_up_to(records: &[Record], rounds: u64) -> Cow<'_, [Record]> {
    if records.iter().all(|r| r.round < rounds) {
        Cow::Borrowed(records)
    } else {
        Cow::Owned(
            records
                .iter()
                .filter(|r| r.round < rounds)
                .cloned()
                .collect(),
        )
    }
}

/// Every decided figure of the effects: each value's time over its
/// default's, paired by round.
fn effect_ratios(effects: &[ParamEffect]) -> Vec<Estimate> {
    effects
        .iter()
        .flat_map(|e| e.decision.others.iter().map(|(_, est)| *est))
        .collect()
}

/// Where the rounds ended, one entry per parameter effect (all share the
/// sweep's rounds, as every case runs in each).
fn stopping(
    rule: RoundsRule,
    effects: &[ParamEffect],
    rounds: u64,
    end: (StopReason, Option<f64>),
) -> RoundsRecord {
    RoundsRecord {
        rule,
        cases: effects
            .iter()
            .map(|e| CaseRounds {
                case: format!("{} on {}", e.param, e.workload.describe()),
                group: "the sweep".into(),
                rounds,
                stopped: end.0,
                half_width: end.1,
            })
            .collect(),
    }
}

/// Runs what is not yet recorded in `doc`, round by round, handing it to
/// `on_record` after every run; after each round the rule says whether
/// the rounds end (a fixed count, or every parameter effect within the
/// precision target); stops early when the time budget is spent.
fn sweep(
    options: &SweepOptions,
    doc: &mut ResultDocument,
    db: &Path,
    copy_db: &Path,
    work: &WorkDir,
    progress: &dyn Progress,
    on_record: OnRecord,
) -> Result<()> {
    let plan = &options.plan;
    let cases = plan.cases();
    let per_round = (cases.len() * plan.workloads.len()) as u64;
    let done_before = state(doc).records.len() as u64;
    announce(options, per_round, done_before, work, progress);
    // Rows and blobs for every workload, generated once, outside the timed runs.
    let prepared: Vec<workloads::Prepared> = plan
        .workloads
        .iter()
        .map(|w| workloads::prepare(w, plan.seed))
        .collect();
    let kind = options.rule.stopping();
    progress.start(
        "sweeping",
        (options.rule.floor() * per_round).saturating_sub(done_before),
    );
    let started = Instant::now();
    for round in 0..ceiling(options.rule) {
        for (c, w) in todo(plan, round, &cases, &state(doc).records) {
            crate::pause::at("sweep-run");
            crate::interrupt::check()?;
            if let Some(b) = options.time_budget
                && started.elapsed() > b
            {
                progress.note(&format!(
                    "time budget {} reached in round {}; rerun with --resume to continue",
                    humantime::format_duration(b),
                    round + 1,
                ));
                let state = state(doc);
                state.complete = false;
                state.effects = all_param_effects(plan, &state.records, kind);
                progress.finish();
                return on_record(doc);
            }
            let workload = &plan.workloads[w];
            progress.message(&format!(
                "round {} {} {}",
                round + 1,
                workload.describe(),
                params::bracketed(&cases[c], &plan.params)
            ));
            let timing = workloads::run(workload, &prepared[w], &cases[c], db, copy_db)?;
            state(doc).records.push(Record {
                case: cases[c].clone(),
                workload: *workload,
                round,
                timing,
            });
            on_record(doc)?;
            progress.advance(1);
        }
        let measured = round + 1;
        // A fixed count needs no figure to end; a target looks at them all.
        let effects = match options.rule {
            RoundsRule::Fixed { rounds } if measured < rounds => Vec::new(),
            _ => all_param_effects(plan, &rounds_up_to(&state(doc).records, measured), kind),
        };
        let elapsed = started.elapsed().as_secs_f64();
        let (stop, projected, widest) =
            judge_point(options.rule, measured, &effect_ratios(&effects), elapsed);
        if let Some(reason) = stop {
            let state = state(doc);
            state.complete = true;
            state.stopping = Some(stopping(options.rule, &effects, measured, (reason, widest)));
            state.effects = effects;
            progress.finish();
            return on_record(doc);
        }
        progress.set_total((projected * per_round).saturating_sub(done_before));
    }
    unreachable!("a rule ends its rounds at its ceiling at the latest")
}

/// The sweep's size, said before it starts.
fn announce(
    options: &SweepOptions,
    per_round: u64,
    done_before: u64,
    work: &WorkDir,
    progress: &dyn Progress,
) {
    let plan = &options.plan;
    let rounds = match options.rule {
        RoundsRule::Fixed { rounds } => format!("{rounds} round(s) = {} runs", rounds * per_round),
        RoundsRule::Precision(t) => format!(
            "rounds of {per_round} runs until every parameter effect is within {}",
            t.describe()
        ),
    };
    progress.note(&format!(
        "blobbench sweep: {} cases x {} workload(s) x {rounds}{} in {}",
        plan.cases().len(),
        plan.workloads.len(),
        if done_before > 0 {
            format!(" ({done_before} runs done before)")
        } else {
            String::new()
        },
        work.path.display()
    ));
}
