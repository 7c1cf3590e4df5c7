//! `blobbench merge`: the results of several `load` processes (one per
//! machine) in, one load result out, printed as the load table.

use std::path::Path;

use crate::cli::MergeArgs;
use crate::error::{Error, Result};
use crate::http::load::merge::{self, Input};
use crate::report::terminal;
use crate::result::{ResultDocument, ResultKind, Tables};

/// Runs `merge`: destinations checked, every file read and lined up, the
/// levels merged, the table printed and the files asked for written.
pub fn run(args: &MergeArgs) -> Result<()> {
    if args.results.len() < 2 {
        return Err(Error::usage(
            "merge needs two or more load results, e.g. blobbench merge a.json b.json --json all.json",
        ));
    }
    for (option, out) in [("--json", &args.json), ("--report", &args.report)] {
        let Some(out) = out else { continue };
        if args.results.contains(out) {
            return Err(Error::usage(format!(
                "{option} {}: is one of the results to merge; name another file",
                out.display()
            )));
        }
    }
    if let Some(j) = &args.json {
        crate::command::output::check_result_target(j)?;
    }
    if let Some(r) = &args.report {
        crate::command::output::check_html_target("--report", r)?;
    }
    let names: Vec<String> = args
        .results
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let docs: Vec<ResultDocument> = args
        .results
        .iter()
        .map(|p| crate::result::load(p))
        .collect::<Result<_>>()?;
    let inputs: Vec<Input> = names
        .iter()
        .zip(&docs)
        .map(|(n, d)| Input::of(n, d))
        .collect::<Result<_>>()?;
    let merged = merge::merge(&inputs)?;
    print_tables(&merged.tables);
    // The machine of the first process stands for the document's; the
    // merge record names every process's.
    let environment = docs[0].environment.clone();
    let mut doc = ResultDocument::new(ResultKind::Load, environment, Tables::Load(merged.tables));
    let failed = doc_failures(&doc);
    if let Some(j) = &args.json {
        crate::command::output::write_result(&mut doc, j)?;
        println!("result written to {}", crate::command::streams::shown(j));
    }
    if let Some(r) = &args.report {
        if doc.finished_at.is_empty() {
            doc.finished_at = crate::result::now_rfc3339();
        }
        let source = args.json.as_deref().unwrap_or(Path::new("merged load"));
        crate::command::output::write_html(r, &[(doc, source.display().to_string())])?;
        println!("report written to {}", r.display());
    }
    for w in merged.warnings {
        eprintln!("blobbench: warning: {w}");
    }
    // As `load` does over the same requests: their result is written,
    // and failures are the exit status's to say.
    match failed {
        Some(line) => Err(Error::OperationsFailed(format!(
            "{line}; see the errors column"
        ))),
        None => Ok(()),
    }
}

/// The closing line when any merged request failed.
fn doc_failures(doc: &ResultDocument) -> Option<String> {
    match &doc.tables {
        Tables::Load(t) => t.failures_line(),
        _ => None,
    }
}

/// The merge's header lines, the levels table, the open-loop schedule and
/// error bursts, as `load` prints them.
fn print_tables(tables: &crate::result::load::LoadTables) {
    for line in terminal::load::merge_lines(tables) {
        println!("{line}");
    }
    print!("{}", terminal::load::levels(tables).render());
    for line in terminal::load::latency_notes(&tables.levels) {
        println!("{line}");
    }
    if let Some(t) = terminal::load::schedule(tables) {
        println!(
            "open loop, every process together: lag = actual send - intended start; service = send to response"
        );
        print!("{}", t.render());
    }
    for line in tables
        .levels
        .iter()
        .filter_map(terminal::load::error_bursts)
    {
        println!("errors over time: {line}");
    }
}
