//! `blobbench reproduce`: every claim of the five documents measured here.
//! Checks the budget, the servers and the destinations before any work,
//! then prints the ledger and writes reproduce.json (and the report and
//! Markdown asked for).

use std::path::Path;

use crate::cli::ReproduceArgs;
use crate::error::{Error, Result};
use crate::result::Tables;
use crate::result::lob::Order;
use crate::suite::lob::{self, LobOptions};
use crate::suite::reproduce::{self, ReproduceOptions};

use super::output::finish_environment;
use super::progress::Bars;

/// Runs `reproduce`.
pub fn run(args: &ReproduceArgs) -> Result<()> {
    let options = options(args)?;
    let mut doc = reproduce::run(&options, &Bars::new())?;
    finish_environment(&mut doc.environment);
    if let Tables::Reproduce(t) = &doc.tables {
        print!("{}", crate::report::terminal::reproduce::render(t));
    }
    let files = &args.outputs;
    super::output::write_result_with_report(&mut doc, &files.json, files.report.as_deref())?;
    println!(
        "result written to {}",
        crate::command::streams::shown(&files.json)
    );
    // --csv: every table, the experiments' too.
    let csv_only = crate::cli::TableFileArgs {
        markdown: None,
        csv: files.export.csv.clone(),
    };
    super::output::write_exports(&doc, &files.json, &csv_only)?;
    if let Some(md) = &files.export.markdown {
        let source = args.outputs.json.display().to_string();
        // The ledger only, for pasting into an issue: the experiments'
        // tables are in the report and the JSON.
        let ledger = crate::report::sections::section(&doc, &source, 0);
        let text = crate::report::text::markdown(std::slice::from_ref(&ledger));
        if md == Path::new("-") {
            print!("{text}");
        } else {
            super::output::write_atomically(md, text.as_bytes())?;
            println!("markdown -> {}", md.display());
        }
    }
    // Failures are outcomes: everything is written first, then the exit
    // status says one happened.
    match doc.tables.failures_line() {
        Some(line) => Err(Error::OperationsFailed(format!(
            "{line}; see {}",
            args.outputs.json.display()
        ))),
        None => Ok(()),
    }
}

/// Every option checked, and every destination, before any work; a
/// server given that cannot be reached is refused here (exit 2).
fn options(args: &ReproduceArgs) -> Result<ReproduceOptions> {
    super::output::check_result_files(&args.outputs, args.folder.dir.as_deref())?;
    let servers = lob::servers(
        args.servers.pg.as_deref(),
        args.servers.mysql.as_deref(),
        args.servers.s3.as_deref(),
        None,
        None,
    )?;
    let mut servers_missing = Vec::new();
    for (given, what) in [
        (
            args.servers.pg.is_some(),
            "--pg URL: PostgreSQL (bytea, large objects) in suite lob, for document 002's claims on PostgreSQL",
        ),
        (
            args.servers.mysql.is_some(),
            "--mysql URL: MariaDB/MySQL (InnoDB, MyISAM, ARCHIVE) in suite lob, for document 002's claims on MySQL",
        ),
        (
            args.servers.s3.is_some(),
            "--s3 URL: an object-store column in suite lob (no claim depends on it)",
        ),
    ] {
        if !given {
            servers_missing.push(what.to_string());
        }
    }
    // SAFETY: geteuid has no failure modes.
    let root = unsafe { libc::geteuid() == 0 };
    Ok(ReproduceOptions {
        budget: *args.budget,
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
        lob: LobOptions {
            sizes: Vec::new(),
            per_size: 1,
            local: super::lob::local(),
            servers,
            dir: args.folder.dir.clone(),
            keep: args.folder.keep,
            durable: false,
            cold: false,
            orders: vec![Order::Sequential],
        },
        servers_missing,
        aging_work: root.then(std::env::temp_dir),
    })
}
