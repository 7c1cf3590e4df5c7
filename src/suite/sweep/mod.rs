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

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::Result;
use crate::progress::Progress;
use crate::result::sweep::{Experiment, FirstDisk, SweepState, SweepTables, all_param_effects};
use crate::result::{ResultDocument, ResultKind, Tables};

use super::common::{WorkDir, remove_entry};
use params::Case;

pub use crate::result::sweep::{Record, SweepPlan};

/// What `sweep` runs, checked and typed before anything runs.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// Parameters, workloads, filters and seed (recorded in the result).
    pub plan: SweepPlan,
    /// Runs of every case and workload (at least 1).
    pub rounds: u64,
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
                rounds: options.rounds,
                complete: false,
                records: earlier,
                schema: workloads::SCHEMA.into(),
                experiment: options.experiment.clone(),
                first_disk: options.first_disk.clone(),
                effects: Vec::new(),
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

/// The runs not yet recorded: (round, case index, workload index), each
/// round in its own shuffled case order.
fn todo(options: &SweepOptions, cases: &[Case], records: &[Record]) -> Vec<(u64, usize, usize)> {
    let plan = &options.plan;
    let mut todo = Vec::new();
    for round in 0..options.rounds {
        let mut order: Vec<usize> = (0..cases.len()).collect();
        order.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(plan.seed ^ round));
        for c in order {
            for (w, workload) in plan.workloads.iter().enumerate() {
                let done = records
                    .iter()
                    .any(|r| r.round == round && r.workload == *workload && r.case == cases[c]);
                if !done {
                    todo.push((round, c, w));
                }
            }
        }
    }
    todo
}

/// Runs what is not yet recorded in `doc`, handing it to `on_record` after
/// every run; stops early when the time budget is spent.
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
    let todo = todo(options, &cases, &state(doc).records);
    let total = cases.len() * plan.workloads.len() * options.rounds as usize;
    progress.note(&format!(
        "blobbench sweep: {} cases x {} workload(s) x {} round(s) = {total} runs{} in {}",
        cases.len(),
        plan.workloads.len(),
        options.rounds,
        if todo.len() < total {
            format!(
                " ({} done before, {} to go)",
                total - todo.len(),
                todo.len()
            )
        } else {
            String::new()
        },
        work.path.display()
    ));
    if todo.is_empty() {
        let state = state(doc);
        state.complete = true;
        state.effects = all_param_effects(plan, &state.records);
        return on_record(doc);
    }
    // Rows and blobs for every workload, generated once, outside the timed runs.
    let prepared: Vec<workloads::Prepared> = plan
        .workloads
        .iter()
        .map(|w| workloads::prepare(w, plan.seed))
        .collect();
    progress.start("sweeping", todo.len() as u64);
    let started = Instant::now();
    for (i, &(round, c, w)) in todo.iter().enumerate() {
        crate::pause::at("sweep-run");
        crate::interrupt::check()?;
        if let Some(b) = options.time_budget
            && started.elapsed() > b
        {
            progress.note(&format!(
                "time budget {} reached: {} of {} runs left; rerun with --resume to continue",
                humantime::format_duration(b),
                todo.len() - i,
                total
            ));
            let state = state(doc);
            state.complete = false;
            state.effects = all_param_effects(plan, &state.records);
            on_record(doc)?;
            break;
        }
        let workload = &plan.workloads[w];
        progress.message(&format!(
            "{} {}",
            workload.describe(),
            params::bracketed(&cases[c], &plan.params)
        ));
        let timing = workloads::run(workload, &prepared[w], &cases[c], db, copy_db)?;
        let state = state(doc);
        state.records.push(Record {
            case: cases[c].clone(),
            workload: *workload,
            round,
            timing,
        });
        state.complete = i + 1 == todo.len();
        // Each parameter's effect, decided once the last run is in.
        if state.complete {
            state.effects = all_param_effects(plan, &state.records);
        }
        on_record(doc)?;
        progress.advance(1);
    }
    progress.finish();
    Ok(())
}
