//! `blobbench run TARGET`: kvtest's run, measured properly. Any of the
//! mixed run's options (`--threads`, `--mix`, `--keys`, ...) hands the
//! arguments to mixed_run.rs instead.

use super::run_settings::{
    DEFAULT_SEED, injection, refuse_write_options, target_with_options, write_style,
};
use crate::cli::{ColdArg, RunArgs};
use crate::error::{Error, Result};
use crate::measure::cache::WHOLE_MACHINE;
use crate::measure::environment::busy_warning;
use crate::progress::Progress;
use crate::result::run::{KeyOrder, RunTables};
use crate::result::{ResultDocument, ResultKind};
use crate::store::{ReadPath, WriteStyle};
use crate::target::Target;
use crate::workload::run::SessionOptionsRecord;
use crate::workload::{CacheMode, Operation, RunPlan, execute};

/// Turns `run`'s arguments into the executor's plan, and notes on options
/// that do not apply to the target.
pub fn plan_from_args(args: &RunArgs) -> Result<(RunPlan, Vec<String>)> {
    let (text, inject) = injection(args)?;
    let (target, notes) = target_with_options(args, &text)?;
    let operation = if args.update {
        Operation::Update
    } else {
        Operation::Read
    };
    let (mut plan, notes) = plan_with(args, target, operation, notes)?;
    plan.session.inject = inject;
    Ok((plan, notes))
}

fn plan_with(
    args: &RunArgs,
    target: Target,
    operation: Operation,
    notes: Vec<String>,
) -> Result<(RunPlan, Vec<String>)> {
    if args.repeat == 0 {
        return Err(Error::usage(
            "--repeat 0: at least one measured repetition is needed, e.g. --repeat 5",
        ));
    }
    let order = if args.random {
        KeyOrder::Random
    } else if args.random_draws {
        KeyOrder::KvtestDraws
    } else if args.desc {
        KeyOrder::Desc
    } else {
        KeyOrder::Asc
    };
    if args.count == Some(0) {
        return Err(Error::usage("--count must be positive"));
    }
    if !args.update {
        refuse_write_options(args, "add --update to time writes")?;
    }
    for (given, name) in [
        (args.busy_timeout.is_some(), "--busy-timeout"),
        (args.no_verify, "--no-verify"),
    ] {
        if given {
            return Err(Error::usage(format!(
                "{name} applies to concurrent runs (--threads, --mix, --keys, --workload, -t, ...), and this is a single-thread run: add --threads N, or leave {name} out"
            )));
        }
    }
    if args.order_seed.is_some() && order != KeyOrder::Random {
        return Err(Error::usage(
            "--order-seed seeds --random's key order, and this run visits the keys in ascending order: add --random, or leave --order-seed out",
        ));
    }
    let plan = RunPlan {
        name: format!(
            "{} {}",
            if args.update { "update" } else { "read" },
            target.kind_name()
        ),
        target,
        operation,
        order,
        count: args.count,
        start: args.start,
        max_id: args.max_id,
        session: SessionOptionsRecord {
            read_path: if args.blob_api {
                ReadPath::BlobApi
            } else {
                ReadPath::Sql
            },
            per_op_transaction: args.multitrans,
            ops_per_transaction: None,
            write_style: write_style(args, WriteStyle::Truncate),
            fsync: args.fsync,
            inject: None,
        },
        repeat: args.repeat,
        warmup: args.warmup,
        cache: match args.cold {
            None => CacheMode::Warm,
            Some(ColdArg::Auto) => CacheMode::Cold,
            Some(ColdArg::File) => CacheMode::ColdFiles,
        },
        verify: args.verify,
        exclude_checkpoint: args.nocheckpoint,
        order_seed: args.order_seed.unwrap_or(DEFAULT_SEED),
        max_errors: args.max_errors,
    };
    Ok((plan, notes))
}

/// Runs the plan the arguments describe, prints the report, checks
/// integrity when asked, and writes the result when --json is given. The
/// environment is captured before measuring and finished right after, so
/// its load average and CPU steal cover the run; a busy machine is said.
pub fn run(args: &RunArgs) -> Result<()> {
    if super::mixed_run::asked(args) {
        if let (_, Some(i)) = injection(args)? {
            return Err(Error::usage(format!(
                "inject={i} is a testing aid for single-thread runs (one timed loop); drop it, or drop --threads, --mix, --keys, --workload, --writers, --batch, -t and --rate"
            )));
        }
        return super::mixed_run::run(args);
    }
    let (plan, notes) = plan_from_args(args)?;
    if let Some(j) = &args.json {
        crate::command::output::check_result_target(j)?;
    }
    if let (true, Some(path)) = (args.update, plan.target.data_path()) {
        crate::command::output::check_data_writable(path)?;
    }
    let mut environment = crate::store::capture_environment(plan.target.data_path());
    let bars = super::progress::Bars::new();
    bars.start(&plan.name, 0);
    let mut r = execute(&plan, &bars)?;
    bars.finish();
    environment.finish();
    r.notes.extend(notes);
    if r.repetitions
        .iter()
        .any(|x| x.cache.method.starts_with(WHOLE_MACHINE))
    {
        r.notes.push(
            "--cold as root dropped the page cache of the whole machine before each repetition (every program's cached files, not only the target's); --cold=file evicts only the target's files"
                .into(),
        );
    }
    let busy = busy_warning(&environment);
    let integrity = if args.integrity_check {
        crate::store::inspect(&plan.target)?.integrity_check()?
    } else {
        None
    };
    crate::report::terminal::run::print_run(&r, args.stats);
    if let Some(i) = &integrity {
        println!("integrity-check: {i}");
    }
    if let Some(w) = &busy {
        println!("warning: {w}");
        r.notes.push(w.clone());
    }
    let failed = crate::command::output::look_where(r.failures_line(), args.json.as_deref());
    if let Some(path) = &args.json {
        let mut doc = ResultDocument::new(
            ResultKind::Run,
            environment,
            crate::result::Tables::Run(RunTables {
                integrity_check: integrity.clone(),
            }),
        );
        doc.runs.push(r);
        crate::command::output::write_result(&mut doc, path)?;
    }
    if let Some(i) = integrity.filter(|i| i != "ok") {
        return Err(Error::Verify(format!("integrity_check reported: {i}")));
    }
    match failed {
        Some(line) => Err(Error::OperationsFailed(line)),
        None => Ok(()),
    }
}
