//! `blobbench suite concurrency` (the scaling suite): the edge. Thread counts,
//! mixes, keys and server URLs are checked before any work; the table is
//! printed and the result written after.

use crate::cli::ScalingArgs;
use crate::command::progress::Bars;
use crate::dataset::{SizeShape, spec_from_options};
use crate::error::{Error, Result};
use crate::report::terminal;
use crate::result::Tables;
use crate::suite::scaling::ScalingOptions;
use crate::target::Target;

/// Runs `suite concurrency`. A layout that failed while it was measured
/// is in the tables and the result; the command then exits 1 with one line.
pub fn run(args: &ScalingArgs) -> Result<()> {
    let options = options(args)?;
    crate::command::output::check_result_files(&args.outputs, args.folder.dir.as_deref())?;
    let mut doc = crate::suite::scaling::run(&options, &Bars::new())?;
    crate::command::output::finish_environment(&mut doc.environment);
    crate::command::output::print_transactions(&doc);
    if let Tables::Scaling(t) = &doc.tables {
        print!("{}", terminal::scaling::render(t));
    }
    crate::command::output::write_result_files(&mut doc, &args.outputs)?;
    match doc.tables.failures_line() {
        Some(line) => Err(Error::OperationsFailed(line)),
        None => Ok(()),
    }
}

/// The suite's options from the command line.
fn options(args: &ScalingArgs) -> Result<ScalingOptions> {
    let dataset = spec_from_options(args.count, args.size, 0, SizeShape::Uniform, 1)?;
    let mixes = args.mixes.clone();
    if let Some(m) = mixes.iter().find(|m| {
        m.shares
            .iter()
            .any(|(k, _)| !matches!(k.name(), "read" | "update" | "rmw" | "scan"))
    }) {
        return Err(Error::usage(format!(
            "--mixes {}: the suite runs each layout many times over one dataset, so its mixes read, update, rmw and scan only (inserts and deletes: use run --mix)",
            m.describe()
        )));
    }
    let round = *args.duration / args.rounds;
    if round < std::time::Duration::from_millis(50) {
        return Err(Error::usage(format!(
            "-t {} over --rounds {} gives rounds of {}: a round must last at least 50ms; raise -t or lower --rounds",
            args.duration,
            args.rounds,
            humantime::format_duration(round)
        )));
    }
    let mut servers = Vec::new();
    if let Some(url) = &args.pg {
        let t = Target::parse(&with_table(url, "mode=bytea&table=concurrency_bytea"))?;
        servers.push(("postgres-bytea".to_string(), t));
    }
    if let Some(url) = &args.mysql {
        let t = Target::parse(&with_table(url, "engine=innodb&table=concurrency_innodb"))?;
        servers.push(("mariadb-innodb".to_string(), t));
    }
    if let Some(url) = &args.s3 {
        let t = Target::parse(url)?.in_folder("concurrency");
        servers.push(("s3".to_string(), t));
    }
    Ok(ScalingOptions {
        dataset,
        threads: args.threads.clone(),
        mixes,
        keys: args.keys,
        duration: *args.duration,
        rounds: args.rounds,
        rule: args.target.rule(
            u64::from(args.rounds),
            super::output::judged_floor(crate::suite::scaling::LOCAL_LAYOUTS + servers.len()),
        )?,
        busy_timeout: *args.busy_timeout,
        servers,
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
    })
}

/// `url` with the suite's own settings added to its query.
fn with_table(url: &str, settings: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{settings}")
}
