//! `blobbench sweep`: the cartesian parameter sweep of "Evaluating SQLite
//! Performance by Testing All Parameters", generalised.
//!
//! Every combination of the given settings (by default the article's 1152)
//! runs each workload on a fresh database. Rounds run the cases in a new
//! shuffled order each time so drift on a shared machine favours no setting.
//! The JSON result is rewritten after every run, so an interrupted sweep
//! continues where it stopped with `--resume`.

pub mod params;
pub mod report;
pub mod workloads;

use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::cli::SweepArgs;
use crate::error::{Error, Result};
use crate::result::ResultDocument;

use super::common::{WorkDir, remove_entry};
use params::{Case, Condition, Param};
use workloads::{Timing, Workload};

/// What was asked: a resumed sweep must ask the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    pub params: Vec<Param>,
    pub workloads: Vec<Workload>,
    pub filters: Vec<String>,
    pub excludes: Vec<String>,
    pub seed: u64,
}

/// One timed run of one workload under one case's settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub case: Case,
    pub workload: Workload,
    pub round: u64,
    pub timing: Timing,
}

pub fn run(args: &SweepArgs) -> Result<()> {
    if args.rounds == 0 {
        return Err(Error::usage("--rounds 0: at least one round is needed"));
    }
    let pragmas = params::known_pragmas();
    let params: Vec<Param> = if args.param.is_empty() {
        params::seed_params()
    } else {
        args.param
            .iter()
            .map(|p| params::parse_param(p, &pragmas))
            .collect::<Result<_>>()?
    };
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.name == p.name) {
            return Err(Error::usage(format!(
                "--param {}: given twice; list all values in one --param {}=a,b",
                p.name, p.name
            )));
        }
    }
    let workloads: Vec<Workload> = if args.workload.is_empty() {
        vec![Workload::Insert {
            rows: 50_000,
            rounds: 1,
        }]
    } else {
        args.workload
            .iter()
            .map(|w| Workload::parse(w))
            .collect::<Result<_>>()?
    };
    let filters: Vec<Condition> = args
        .filter
        .iter()
        .map(|f| params::parse_condition("--filter", f, &params))
        .collect::<Result<_>>()?;
    let excludes: Vec<Condition> = args
        .exclude
        .iter()
        .map(|f| params::parse_condition("--exclude", f, &params))
        .collect::<Result<_>>()?;
    let cases: Vec<Case> = params::product(&params)
        .into_iter()
        .filter(|c| filters.iter().all(|f| f.matches(c)) && !excludes.iter().any(|x| x.matches(c)))
        .collect();
    if cases.is_empty() {
        return Err(Error::usage(
            "no case is left after --filter and --exclude; loosen one of them",
        ));
    }
    let budget = match &args.time_budget {
        Some(t) => Some(humantime::parse_duration(t).map_err(|_| {
            Error::usage(format!(
                "--time-budget {t}: not a duration; use e.g. 90s, 10m, 1h30m"
            ))
        })?),
        None => None,
    };
    crate::command::output::check_outputs(&args.json, args.report.as_deref())?;
    let plan = SweepPlan {
        params: params.clone(),
        workloads: workloads.clone(),
        filters: args.filter.clone(),
        excludes: args.exclude.clone(),
        seed: args.seed,
    };
    let mut records = if args.resume {
        resume_records(&args.json, &plan)?
    } else {
        Vec::new()
    };

    let work = WorkDir::new(args.dir.as_deref(), args.keep, "blobbench-sweep-")?;
    let db = work.join("sweep.db");
    let copy_db = work.join("sweep-copy.db");
    let outcome = sweep(
        args,
        &plan,
        &cases,
        budget,
        &mut records,
        &db,
        &copy_db,
        &work,
    );
    remove_entry(&db);
    remove_entry(&copy_db);
    work.report_kept(&crate::command::progress::Bars::new());
    let complete = outcome?;
    report::print(args, &plan, &cases, &records, complete);
    println!("result written to {}", args.json.display());
    Ok(())
}

fn resume_records(path: &std::path::Path, plan: &SweepPlan) -> Result<Vec<Record>> {
    if !path.exists() {
        eprintln!(
            "--resume: {} does not exist yet; starting a new sweep",
            path.display()
        );
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("cannot read", path, e))?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::Json {
        path: path.to_path_buf(),
        source: e,
    })?;
    if doc["command"] != "sweep" {
        return Err(Error::usage(format!(
            "--resume: {} is not a sweep result; name the sweep's --json file",
            path.display()
        )));
    }
    let earlier: SweepPlan = serde_json::from_value(doc["tables"]["sweep"]["plan"].clone())
        .map_err(|e| Error::Json {
            path: path.to_path_buf(),
            source: e,
        })?;
    if earlier != *plan {
        return Err(Error::usage(format!(
            "--resume: {} holds a sweep with other parameters, workloads, filters or seed; \
rerun with the same options or write to a new --json file",
            path.display()
        )));
    }
    serde_json::from_value(doc["tables"]["sweep"]["records"].clone()).map_err(|e| Error::Json {
        path: path.to_path_buf(),
        source: e,
    })
}

/// Runs what is not yet in `records`; returns whether the sweep completed.
#[allow(clippy::too_many_arguments)]
fn sweep(
    args: &SweepArgs,
    plan: &SweepPlan,
    cases: &[Case],
    budget: Option<Duration>,
    records: &mut Vec<Record>,
    db: &std::path::Path,
    copy_db: &std::path::Path,
    work: &WorkDir,
) -> Result<bool> {
    let mut todo: Vec<(u64, usize, usize)> = Vec::new();
    for round in 0..args.rounds {
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
    let total = cases.len() * plan.workloads.len() * args.rounds as usize;
    eprintln!(
        "blobbench sweep: {} cases x {} workload(s) x {} round(s) = {total} runs{} in {}",
        cases.len(),
        plan.workloads.len(),
        args.rounds,
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
    );
    // Rows and blobs for every workload, generated once, outside the timed runs.
    let prepared: Vec<workloads::Prepared> = plan
        .workloads
        .iter()
        .map(|w| workloads::prepare(w, plan.seed))
        .collect();
    let mut doc = ResultDocument::new(
        "sweep",
        crate::store::capture_environment(Some(&work.path)),
        crate::result::Tables::Other(serde_json::Value::Null),
    );
    let pb = crate::command::progress::bar(todo.len() as u64, "sweeping");
    let started = Instant::now();
    let mut complete = true;
    for (i, &(round, c, w)) in todo.iter().enumerate() {
        if let Some(b) = budget
            && started.elapsed() > b
        {
            pb.suspend(|| {
                eprintln!(
                    "time budget {} reached: {} of {} runs left; rerun with --resume to continue",
                    humantime::format_duration(b),
                    todo.len() - i,
                    total
                )
            });
            complete = false;
            save(&mut doc, args, plan, records, false)?;
            break;
        }
        pb.set_message(format!(
            "{} {}",
            plan.workloads[w].describe(),
            params::bracketed(&cases[c], &plan.params)
        ));
        let timing = workloads::run(&plan.workloads[w], &prepared[w], &cases[c], db, copy_db)?;
        records.push(Record {
            case: cases[c].clone(),
            workload: plan.workloads[w],
            round,
            timing,
        });
        save(&mut doc, args, plan, records, i + 1 == todo.len())?;
        pb.inc(1);
    }
    pb.finish_and_clear();
    if todo.is_empty() {
        save(&mut doc, args, plan, records, true)?;
    }
    if args.report.is_some() {
        // The document as saved last, with the report drawn from it.
        crate::command::output::write_result_with_report(
            &mut doc,
            &args.json,
            args.report.as_deref(),
        )?;
    }
    Ok(complete)
}

fn save(
    doc: &mut ResultDocument,
    args: &SweepArgs,
    plan: &SweepPlan,
    records: &[Record],
    complete: bool,
) -> Result<()> {
    doc.tables = crate::result::Tables::Sweep(crate::result::sweep::SweepTables(json!({
        "sweep": {
            "plan": plan,
            "rounds": args.rounds,
            "complete": complete,
            "records": records,
        }
    })));
    crate::command::output::write_result(doc, &args.json)
}
