//! `blobbench run TARGET`: kvtest's run, measured properly.

use crate::cli::{ColdArg, RunArgs, WriteStyleArg};
use crate::error::{Error, Result};
use crate::measure::cache::WHOLE_MACHINE;
use crate::measure::environment::busy_warning;
use crate::progress::Progress;
use crate::result::ResultDocument;
use crate::result::run::RunTables;
use crate::store::inject::Injection;
use crate::store::{ReadPath, WriteStyle};
use crate::target::{Target, split_injection};
use crate::workload::run::SessionOptionsRecord;
use crate::workload::{CacheMode, KeyOrder, Operation, RunPlan, execute};

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

/// The target string without its `?inject=SPEC` (a testing aid: a known
/// extra cost per timed operation), and the injection parsed.
fn injection(args: &RunArgs) -> Result<(String, Option<Injection>)> {
    let (text, spec) = split_injection(&args.target)?;
    Ok((text, spec.as_deref().map(Injection::parse).transpose()?))
}

/// The target with the SQLite settings `run`'s kvtest options ask for
/// (--cache-size, --mmap, --nosync, --jmode, --nocheckpoint), and notes on
/// those that do not apply to it.
pub fn target_from_args(args: &RunArgs) -> Result<(Target, Vec<String>)> {
    target_with_options(args, &args.target)
}

/// As [`target_from_args`], for the target string `text`.
fn target_with_options(args: &RunArgs, text: &str) -> Result<(Target, Vec<String>)> {
    let mut target = Target::parse(text)?;
    let mut notes = Vec::new();
    match target.sqlite_settings_mut() {
        Some(s) => {
            s.cache_size = Some(args.cache_size);
            if args.mmap > 0 || s.mmap_size.is_none() {
                s.mmap_size = Some(args.mmap);
            }
            if args.nosync {
                s.synchronous = Some("off".into());
            }
            if let Some(j) = &args.jmode {
                s.journal_mode = Some(j.clone());
            }
            if args.nocheckpoint {
                // As kvtest: no checkpoint inside the timed COMMIT; the
                // executor times the one after it on its own.
                s.wal_autocheckpoint = Some(0);
            }
        }
        None => {
            for (given, name) in [
                (args.blob_api, "--blob-api"),
                (args.mmap > 0, "--mmap"),
                (args.nosync, "--nosync"),
                (args.jmode.is_some(), "--jmode"),
                (args.integrity_check, "--integrity-check"),
            ] {
                if given {
                    notes.push(format!("{name} ignored: it applies to database targets"));
                }
            }
        }
    }
    if args.fsync && matches!(target, Target::Sqlite { .. }) {
        notes.push(
            "--fsync ignored: SQLite durability is set by synchronous (--nosync or ?synchronous=)"
                .into(),
        );
    }
    if args.write_style.is_some()
        && !matches!(
            target,
            Target::Dir { .. } | Target::Tree { .. } | Target::SqliteExt { .. }
        )
    {
        notes.push(
            "--write-style ignored: it says how files are rewritten (dir:, tree:, sqlite-ext: targets)"
                .into(),
        );
    }
    Ok((target, notes))
}

/// Refuses --fsync and --write-style for a run that writes nothing (they
/// say how writes are made); `fix` says how to make it write.
pub fn refuse_write_options(args: &RunArgs, fix: &str) -> Result<()> {
    let given = [
        (args.fsync, "--fsync"),
        (args.write_style.is_some(), "--write-style"),
    ];
    for (given, name) in given {
        if given {
            return Err(Error::usage(format!(
                "{name} says how blobs are written, and this run only reads: {fix}, or leave {name} out"
            )));
        }
    }
    Ok(())
}

/// How `--write-style` rewrites files (`default` when not given).
pub fn write_style(args: &RunArgs, default: WriteStyle) -> WriteStyle {
    match args.write_style {
        None => default,
        Some(WriteStyleArg::Truncate) => WriteStyle::Truncate,
        Some(WriteStyleArg::InPlace) => WriteStyle::InPlace,
        Some(WriteStyleArg::Rename) => WriteStyle::TempRename,
    }
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
        order_seed: args.order_seed.unwrap_or(super::concurrent::DEFAULT_SEED),
        max_errors: args.max_errors,
    };
    Ok((plan, notes))
}

/// Runs the plan the arguments describe, prints the report, checks
/// integrity when asked, and writes the result when --json is given. The
/// environment is captured before measuring and finished right after, so
/// its load average and CPU steal cover the run; a busy machine is said.
pub fn run(args: &RunArgs) -> Result<()> {
    if super::concurrent::asked(args) {
        if let (_, Some(i)) = injection(args)? {
            return Err(Error::usage(format!(
                "inject={i} is a testing aid for single-thread runs (one timed loop); drop it, or drop --threads, --mix, --keys, --workload, --writers, --batch, -t and --rate"
            )));
        }
        return super::concurrent::run(args);
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
            "run",
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
