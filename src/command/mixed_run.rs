//! `blobbench run TARGET --threads N --mix ... --keys ...`: the edge of a mixed
//! run (worker threads mixing operations on one target, YCSB-style; `run
//! --help` lists its options under "Concurrent runs"). Arguments are checked
//! and turned into the executor's plan before any work (kvtest-only options are
//! refused with what to use instead); the table is printed and the result
//! written after.

use super::run_settings::{DEFAULT_SEED, refuse_write_options, target_from_args, write_style};
use crate::cli::RunArgs;
use crate::cli::values::{YcsbWorkload, choice_name};
use crate::error::{Error, Interruption, Result};
use crate::result::mixed_run::KeyDistribution;
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::store::{ReadPath, SessionOptions, WriteStyle};
use crate::workload::keys::YCSB_THETA;
use crate::workload::mix::Mix;
use crate::workload::mixed_run::{MixedRunPlan, NOT_PUT_RIGHT, OUT_OF_ROOM, execute};

/// How long a lock is waited for when --busy-timeout is not given.
const DEFAULT_BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether the arguments ask for a mixed run.
pub fn asked(args: &RunArgs) -> bool {
    args.threads.is_some()
        || args.mix.is_some()
        || args.keys.is_some()
        || args.workload.is_some()
        || args.batch.is_some()
        || args.duration.is_some()
        || args.rate.is_some()
        || args.writers.is_some()
}

/// Runs the mixed run the arguments describe.
pub fn run(args: &RunArgs) -> Result<()> {
    let (plan, notes) = plan_and_notes(args)?;
    if let Some(j) = &args.json {
        crate::command::output::check_result_target(j)?;
    }
    if let (true, Some(path)) = (plan.writes(), plan.target.data_path()) {
        crate::command::output::check_data_writable(path)?;
    }
    let mut environment = crate::store::capture_environment(plan.target.data_path());
    let bars = super::progress::Bars::new();
    // Ctrl-C, SIGTERM or SIGHUP stop the run (its dataset put right) and
    // its result so far is still shown and written, as fio does; the
    // command then exits 128 + the signal's number.
    let _signals = crate::interrupt::install();
    let mut tables = execute(&plan, &bars)?;
    tables.notes.extend(notes);
    environment.finish();
    print!("{}", crate::report::terminal::mixed_run::render(&tables));
    if let Some(w) = crate::measure::environment::busy_warning(&environment) {
        println!("warning: {w}");
    }
    let wrong = tables.outcomes().wrong();
    let lost = (tables.lost > 0).then(|| {
        format!(
            "{} blob(s) not at their last acknowledged version ({})",
            tables.lost,
            tables.lost_first.as_deref().unwrap_or("")
        )
    });
    let failed = crate::command::output::look_where(tables.failures_line(), args.json.as_deref());
    let put_right = !tables.notes.iter().any(|n| n.starts_with(NOT_PUT_RIGHT));
    let out_of_room = tables
        .stopped_early
        .as_deref()
        .and_then(|why| why.strip_prefix(OUT_OF_ROOM))
        .map(str::to_owned);
    if let Some(path) = &args.json {
        let mut doc =
            ResultDocument::new(ResultKind::MixedRun, environment, Tables::MixedRun(tables));
        crate::command::output::write_result(&mut doc, path)?;
    }
    if let Some(signal) = crate::interrupt::received() {
        return Err(Error::Interrupted(Interruption {
            signal,
            aftermath: interrupted_aftermath(put_right, args.json.is_some()),
        }));
    }
    if let Some(why) = out_of_room {
        // The user's to fix, as a full disk always is (exit 2); what the
        // run measured until then is above, its failures counted there.
        let dataset = if put_right {
            "its dataset was put right"
        } else {
            "its dataset could not be put right (see the note above)"
        };
        return Err(Error::usage(format!(
            "the run stopped early, {why}; {dataset} and its result so far is above: free some space, or run fewer inserts (--count, --mix)"
        )));
    }
    if wrong > 0 || lost.is_some() {
        let mut what = Vec::new();
        if wrong > 0 {
            what.push(format!(
                "{wrong} read(s) returned a torn or stale blob (see the table)"
            ));
        }
        what.extend(lost);
        what.extend(failed);
        return Err(Error::Verify(what.join("; ")));
    }
    match failed {
        Some(line) => Err(Error::OperationsFailed(line)),
        None => Ok(()),
    }
}

/// What an interrupted run did before it stopped, as a clause.
fn interrupted_aftermath(put_right: bool, written: bool) -> String {
    let dataset = if put_right {
        "its dataset was put right (ready for the next run)"
    } else {
        "its dataset could not be put right (see the note above)"
    };
    let result = if written {
        "what it measured until then is above and in the --json file"
    } else {
        "what it measured until then is above"
    };
    format!("the run stopped after its workers' current batches; {dataset}, and {result}")
}

/// The plan from the arguments (kvtest-only options are refused), and notes on options that do not apply to its target (a
/// database's settings given for files, ...), printed with the table.
fn plan_and_notes(args: &RunArgs) -> Result<(MixedRunPlan, Vec<String>)> {
    refuse_kvtest_options(args)?;
    let (target, notes) = target_from_args(args)?;
    let (preset_mix, preset_keys) = match args.workload {
        Some(w) => {
            let (mix, keys) = ycsb(w);
            (Some(Mix::parse(mix)?), Some(keys))
        }
        None => (None, None),
    };
    let mix = match &args.mix {
        Some(m) => m.clone(),
        None => preset_mix.unwrap_or_else(Mix::read_only),
    };
    let keys = args
        .keys
        .or(preset_keys)
        .unwrap_or(KeyDistribution::Uniform);
    let count = args.count;
    let duration = args.duration.map(|d| *d);
    let plan = MixedRunPlan {
        target_text: args.target.clone(),
        target,
        threads: args.threads.unwrap_or(1),
        writers: args.writers.unwrap_or(0),
        mix,
        keys,
        batch: args.batch.unwrap_or(1),
        duration: if duration.is_none() && count.is_none() {
            Some(std::time::Duration::from_secs(10))
        } else {
            duration
        },
        count,
        rate: args.rate,
        busy_timeout: args.busy_timeout.map_or(DEFAULT_BUSY_TIMEOUT, |d| *d),
        session: SessionOptions {
            read_path: if args.blob_api {
                ReadPath::BlobApi
            } else {
                ReadPath::Sql
            },
            per_op_transaction: true,
            // A reader never sees a blob half replaced unless asked for.
            write_style: write_style(args, WriteStyle::TempRename),
            fsync: args.fsync,
        },
        verify: !args.no_verify,
        seed: args.order_seed.unwrap_or(DEFAULT_SEED),
        workload: args.workload.map(choice_name),
        max_errors: args.max_errors,
    };
    if !plan.writes() {
        refuse_write_options(
            args,
            "give a --mix that writes (update, rmw, insert, delete) or --writers N",
        )?;
    }
    Ok((plan, notes))
}

/// YCSB's core workloads: (mix, key distribution), as its workload files
/// define them (workloads a-f; zipfian request distribution unless said).
fn ycsb(workload: YcsbWorkload) -> (&'static str, KeyDistribution) {
    let zipf = KeyDistribution::Zipf { theta: YCSB_THETA };
    match workload {
        YcsbWorkload::YcsbA => ("read=50,update=50", zipf),
        YcsbWorkload::YcsbB => ("read=95,update=5", zipf),
        YcsbWorkload::YcsbC => ("read=100", zipf),
        YcsbWorkload::YcsbD => (
            "read=95,insert=5",
            KeyDistribution::Latest { theta: YCSB_THETA },
        ),
        YcsbWorkload::YcsbE => ("scan=95,insert=5", zipf),
        YcsbWorkload::YcsbF => ("read=50,rmw=50", zipf),
    }
}

/// kvtest-style options have no meaning in a mixed run: each is
/// refused with what does the same there.
fn refuse_kvtest_options(args: &RunArgs) -> Result<()> {
    let refused: [(bool, &str, &str); 8] = [
        (args.update, "--update", "--mix update=100"),
        (args.asc, "--asc", "--keys (uniform, zipf, latest, hotspot)"),
        (
            args.desc,
            "--desc",
            "--keys (uniform, zipf, latest, hotspot)",
        ),
        (args.random, "--random", "--keys uniform"),
        (args.random_draws, "--random-draws", "--keys uniform"),
        (
            args.start.is_some() || args.max_id.is_some(),
            "--start/--max-id",
            "the whole dataset",
        ),
        (
            args.multitrans,
            "--multitrans",
            "--batch 1 (the default: each operation its own transaction)",
        ),
        (
            args.cold.is_some(),
            "--cold",
            "a warm run (cold concurrent runs are not supported)",
        ),
    ];
    for (given, name, instead) in refused {
        if given {
            return Err(Error::usage(format!(
                "{name} applies to the kvtest-style run; with --threads/--mix use {instead}"
            )));
        }
    }
    if args.nocheckpoint {
        return Err(Error::usage(
            "--nocheckpoint applies to the kvtest-style run; a concurrent run leaves checkpoints to SQLite (set ?wal_autocheckpoint= on the target)",
        ));
    }
    Ok(())
}
