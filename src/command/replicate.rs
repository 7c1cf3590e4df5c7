//! `blobbench suite replicate`: the edge. The bucket URL, the Litestream
//! binary (run once: `litestream version`), the mix and the round length
//! are checked before any work; the table is printed and the result
//! written after, and a restore that did not hold the source's blobs makes
//! the command fail once the result is written.

use std::path::{Path, PathBuf};

use crate::cli::ReplicateArgs;
use crate::command::progress::Bars;
use crate::dataset::{SizeShape, spec_from_options};
use crate::error::{Error, Result};
use crate::report::terminal;
use crate::result::Tables;
use crate::suite::replicate::{Bounds, ReplicateOptions, litestream_version};
use crate::target::Target;

/// Runs `suite replicate`.
pub fn run(args: &ReplicateArgs) -> Result<()> {
    let options = options(args)?;
    crate::command::output::check_result_files(&args.outputs, args.folder.dir.as_deref())?;
    // compare tests one figure of both arms together.
    crate::command::output::warn_if_rule_never_judged(&options.rule, 2);
    let mut doc = crate::suite::replicate::run(&options, &Bars::new())?;
    crate::command::output::finish_environment(&mut doc.environment);
    let mut failed = None;
    if let Tables::Replicate(t) = &doc.tables {
        print!("{}", terminal::replicate::render(t));
        if let Some(r) = t.restore.as_ref().filter(|r| !r.passed()) {
            failed = Some(format!(
                "the restore from {} does not hold the source's blobs: {} of {} match ({}), integrity_check: {}",
                t.litestream.replica,
                r.matching,
                r.blobs,
                r.first_mismatch.as_deref().unwrap_or("-"),
                r.integrity
            ));
        }
    }
    crate::command::output::write_result_files(&mut doc, &args.outputs)?;
    // Litestream killed or frozen: the rounds before are in the result,
    // then exit 1 with one line.
    if let Some(line) = doc.tables.failures_line() {
        return Err(Error::OperationsFailed(line));
    }
    match failed {
        Some(why) => Err(Error::Verify(why)),
        None => Ok(()),
    }
}

/// The suite's options from the command line.
fn options(args: &ReplicateArgs) -> Result<ReplicateOptions> {
    let replica = match Target::parse(&args.s3)? {
        Target::S3 { bucket } => bucket,
        _ => {
            return Err(Error::usage(format!(
                "--s3 {}: not an S3 URL; give s3://BUCKET/PREFIX?endpoint=URL&region=R (scripts/start-s3.sh starts one and exports BLOBBENCH_S3_URL)",
                args.s3
            )));
        }
    };
    let litestream = find_litestream(args.litestream.as_deref())?;
    litestream_version(&litestream)?;
    let mix = args.mix.clone();
    if mix
        .shares
        .iter()
        .any(|(k, _)| !matches!(k.name(), "read" | "update" | "rmw" | "scan"))
    {
        return Err(Error::usage(format!(
            "--mix {}: the suite writes one dataset in many rounds, so its mix reads, updates, rmw and scans only (no inserts or deletes)",
            mix.describe()
        )));
    }
    if !mix
        .shares
        .iter()
        .any(|(k, _)| matches!(k.name(), "update" | "rmw"))
    {
        return Err(Error::usage(format!(
            "--mix {}: replication costs only writes; give a mix that updates, e.g. --mix update=100 or --mix read=50,update=50",
            mix.describe()
        )));
    }
    let round = *args.duration / args.rounds;
    if round < std::time::Duration::from_millis(200) {
        return Err(Error::usage(format!(
            "-t {} over --rounds {} gives rounds of {}: a round must last at least 200ms (Litestream syncs every --sync-interval); raise -t or lower --rounds",
            args.duration,
            args.rounds,
            humantime::format_duration(round)
        )));
    }
    // A server out of reach is refused now, as every command refuses one
    // before it measures anything: Litestream would retry it for minutes.
    crate::store::reach(&Target::S3 {
        bucket: replica.clone(),
    })?;
    let rule = args
        .target
        .rule(u64::from(args.rounds), super::output::judged_floor(2))?;
    Ok(ReplicateOptions {
        dataset: spec_from_options(args.count, args.size, 0, SizeShape::Uniform, 1)?,
        threads: args.threads,
        mix,
        keys: args.keys,
        round,
        rounds: args.rounds,
        rule,
        warmup: args.warmup,
        busy_timeout: *args.busy_timeout,
        replica,
        litestream,
        sync_interval: *args.sync_interval,
        bounds: Bounds {
            start: *args.start_timeout,
            sync: *args.sync_timeout,
            restore: *args.restore_timeout,
        },
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
    })
}

/// The Litestream binary: --litestream, else $BLOBBENCH_LITESTREAM, else
/// `litestream` on PATH; a one-line usage error naming the fix otherwise.
fn find_litestream(given: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("BLOBBENCH_LITESTREAM").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("litestream"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            Error::usage(
                "litestream not found (no --litestream, no BLOBBENCH_LITESTREAM, none on PATH): install it with scripts/install-litestream.sh and give --litestream \"$(scripts/install-litestream.sh)\"",
            )
        })
}
