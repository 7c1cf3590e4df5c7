//! `blobbench sweep`: every combination of SQLite settings, ranked. Checks
//! parameters, workloads, filters, the time budget and the destinations
//! before anything runs; reads the earlier runs for `--resume`; rewrites the
//! JSON after every run; prints the ranking from the result.

use std::path::Path;

use crate::cli::SweepArgs;
use crate::command::output::{warn_if_busy, write_result, write_result_with_report};
use crate::command::progress::Bars;
use crate::error::{Error, Result};
use crate::report::terminal;
use crate::result::sweep::{Experiment, FirstDisk};
use crate::result::{self, ResultDocument, Tables};
use crate::suite::sweep::experiments;
use crate::suite::sweep::params::{self, Param};
use crate::suite::sweep::workloads::Workload;
use crate::suite::sweep::{self, Record, SweepOptions, SweepPlan};

/// Runs `sweep`.
pub fn run(args: &SweepArgs) -> Result<()> {
    let options = options(args)?;
    crate::command::output::check_result_files(&args.outputs, args.folder.dir.as_deref())?;
    let to_stdout = crate::command::streams::is_stdout(&args.outputs.json);
    if args.resume && to_stdout {
        return Err(Error::usage(
            "--resume with --json -: a sweep resumes from its result file; name one with --json FILE",
        ));
    }
    let earlier = if args.resume {
        resume_records(&args.outputs.json, &options.plan)?
    } else {
        Vec::new()
    };
    // compare tests every case of a sweep together.
    crate::command::output::warn_if_rule_never_judged(&options.rule, options.plan.cases().len());
    // Every save records the load and CPU steal up to then: a sweep
    // interrupted after hours still says how busy the machine was.
    // Standard output takes one document: the last, written once below.
    let mut save = |doc: &mut ResultDocument| {
        doc.environment.finish();
        if to_stdout {
            return Ok(());
        }
        write_result(doc, &args.outputs.json)
    };
    let mut doc = sweep::run(&options, earlier, &Bars::new(), &mut save)?;
    warn_if_busy(&doc.environment);
    if args.outputs.report.is_some() || to_stdout {
        // The document as saved last, with the report drawn from it.
        write_result_with_report(&mut doc, &args.outputs.json, args.outputs.report.as_deref())?;
    }
    crate::command::output::print_transactions(&doc);
    if let Tables::Sweep(t) = &doc.tables {
        print!("{}", terminal::sweep::render(&doc, &t.sweep, args.top));
    }
    println!(
        "result written to {}",
        crate::command::streams::shown(&args.outputs.json)
    );
    Ok(())
}

/// A sweep's time budget for its rounds under a precision target when
/// --max-time is not given: its rounds are long (every case once).
const SWEEP_MAX_TIME: std::time::Duration = std::time::Duration::from_secs(3600);

/// The arguments as typed options; every mistake is a usage error here,
/// before anything runs.
fn options(args: &SweepArgs) -> Result<SweepOptions> {
    if args.rounds == 0 {
        return Err(Error::usage("--rounds 0: at least one round is needed"));
    }
    let params = parameters(&args.param)?;
    let preset = match args.experiment {
        Some(n) => Some(preset(n, args)?),
        None => None,
    };
    let workloads: Vec<Workload> = if !args.workload.is_empty() {
        args.workload.clone()
    } else if let Some((e, _)) = &preset {
        vec![e.article_workload]
    } else {
        vec![Workload::Insert {
            rows: 50_000,
            rounds: 1,
        }]
    };
    for f in &args.filter {
        params::parse_condition("--filter", f, &params)?;
    }
    for f in &args.exclude {
        params::parse_condition("--exclude", f, &params)?;
    }
    // An experiment's own filters first, then the user's narrowing.
    let mut filters: Vec<String> = preset
        .iter()
        .flat_map(|(_, f)| f.iter().map(|f| f.to_string()))
        .collect();
    filters.extend(args.filter.iter().cloned());
    let plan = SweepPlan {
        params,
        workloads,
        filters,
        excludes: args.exclude.clone(),
        seed: args.seed,
    };
    let first_disk = match &args.against {
        Some(path) => Some(first_disk(path, args.experiment, &plan)?),
        None => None,
    };
    if plan.cases().is_empty() {
        return Err(Error::usage(
            "no case is left after --filter and --exclude; loosen one of them",
        ));
    }
    let time_budget = args.time_budget.map(|t| *t);
    if time_budget.is_some_and(|b| b.is_zero()) {
        return Err(Error::usage(
            "--time-budget 0s: no case could run; give e.g. --time-budget 10m, or leave it out",
        ));
    }
    // A precision target looks at every parameter effect after each round:
    // its floor is the fewest rounds compare can judge the cases with.
    let rule = args.target.rule_within(
        args.rounds,
        crate::command::output::judged_floor(plan.cases().len()),
        SWEEP_MAX_TIME,
    )?;
    Ok(SweepOptions {
        plan,
        rule,
        time_budget,
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
        experiment: preset.map(|(e, _)| e),
        first_disk,
    })
}

/// `--against FILE`: experiment 6's runs on the first disk, for experiment 7.
fn first_disk(path: &Path, experiment: Option<u8>, plan: &SweepPlan) -> Result<FirstDisk> {
    if experiment != Some(experiments::OTHER_DISK) {
        return Err(Error::usage(format!(
            "--against {}: only with --experiment {} (experiment 6 on another disk)",
            path.display(),
            experiments::OTHER_DISK
        )));
    }
    let doc = result::load(path)?;
    let Tables::Sweep(t) = doc.tables else {
        return Err(Error::usage(format!(
            "--against {}: not a sweep result; name the --json of --experiment 6",
            path.display()
        )));
    };
    if t.sweep.plan != *plan || t.sweep.records.is_empty() {
        return Err(Error::usage(format!(
            "--against {}: not a run of these cases and workload; run --experiment 6 with the \
same --workload, --filter, --exclude and --seed on the first disk",
            path.display()
        )));
    }
    Ok(FirstDisk {
        source: path.display().to_string(),
        records: t.sweep.records,
    })
}

/// Experiment `n` and its filters; experiment 7 (another disk) needs `--dir`.
fn preset(n: u8, args: &SweepArgs) -> Result<(Experiment, Vec<&'static str>)> {
    let found = experiments::experiment(n).ok_or_else(|| {
        Error::usage(format!(
            "--experiment {n}: the article has experiments 1 to {}",
            experiments::COUNT
        ))
    })?;
    if n == experiments::OTHER_DISK && args.folder.dir.is_none() {
        return Err(Error::usage(format!(
            "--experiment {n} repeats experiment 6 on another disk (the article's HDD): \
give --dir DIR on that disk, e.g. --dir /mnt/hdd/bench"
        )));
    }
    Ok(found)
}

/// `--param` as given, or the seed article's parameters; each name once.
fn parameters(given: &[String]) -> Result<Vec<Param>> {
    if given.is_empty() {
        return Ok(params::seed_params());
    }
    let pragmas = params::known_pragmas();
    let params: Vec<Param> = given
        .iter()
        .map(|p| params::parse_param(p, &pragmas))
        .collect::<Result<_>>()?;
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.name == p.name) {
            return Err(Error::usage(format!(
                "--param {}: given twice; list all values in one --param {}=a,b",
                p.name, p.name
            )));
        }
    }
    Ok(params)
}

/// The runs an earlier sweep of the same plan recorded in `path`.
fn resume_records(path: &Path, plan: &SweepPlan) -> Result<Vec<Record>> {
    if !path.exists() {
        eprintln!(
            "--resume: {} does not exist yet; starting a new sweep",
            path.display()
        );
        return Ok(Vec::new());
    }
    let doc = result::load(path)?;
    let Tables::Sweep(t) = doc.tables else {
        return Err(Error::usage(format!(
            "--resume: {} is not a sweep result; name the sweep's --json file",
            path.display()
        )));
    };
    if t.sweep.plan != *plan {
        return Err(Error::usage(format!(
            "--resume: {} holds a sweep with other parameters, workloads, filters or seed; \
rerun with the same options or write to a new --json file",
            path.display()
        )));
    }
    Ok(t.sweep.records)
}
