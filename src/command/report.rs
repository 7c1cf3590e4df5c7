//! `blobbench report`: result files in, one HTML page out (and, on request,
//! Markdown, CSV and PNG files).

use std::path::Path;

use crate::cli::ReportArgs;
use crate::error::{Error, Result};
use crate::report::sections::sections;
use crate::report::{html, png, text};

/// Marks a folder blobbench filled with charts or tables; only such a folder
/// (or an empty or new one) is written into.
const FOLDER_MARK: &str = ".blobbench-report";

/// Runs `report`: every destination checked, then the results read and
/// rendered to HTML (and Markdown, CSV, PNG when asked).
pub fn run(args: &ReportArgs) -> Result<()> {
    // Check every destination before reading or writing anything.
    crate::command::output::check_html_target("-o", &args.output)?;
    if let Some(md) = args.markdown.as_deref().filter(|p| *p != Path::new("-")) {
        crate::command::output::check_markdown_target("--markdown", md)?;
    }
    for (option, dir) in [("--csv", &args.csv), ("--png", &args.png)] {
        if let Some(d) = dir {
            check_folder(option, d)?;
        }
    }
    if args.markdown.as_ref() == Some(&args.output) {
        return Err(Error::usage(format!(
            "--markdown {}: the same file as -o; name another file",
            args.output.display()
        )));
    }
    for r in &args.results {
        if r == &args.output {
            return Err(Error::usage(format!(
                "-o {}: is one of the results; name another file for the report",
                r.display()
            )));
        }
    }
    let docs: Vec<(crate::result::ResultDocument, String)> = args
        .results
        .iter()
        .map(|p| Ok((crate::result::load(p)?, p.display().to_string())))
        .collect::<Result<_>>()?;
    let sections = sections(&docs);
    // The rasterizer needs fonts; find out before writing anything.
    let rasterizer = args
        .png
        .as_ref()
        .map(|_| png::Rasterizer::new())
        .transpose()?;

    crate::command::output::write_atomically(&args.output, html::render(&sections).as_bytes())?;
    let charts: usize = sections.iter().map(|s| s.figures.len()).sum();
    let tables: usize = sections.iter().map(|s| s.tables.len()).sum();
    println!(
        "report: {} result(s), {charts} chart(s), {tables} table(s) -> {}",
        sections.len(),
        args.output.display()
    );
    if let Some(md) = &args.markdown {
        write_markdown(&sections, md)?;
    }
    if let Some(dir) = &args.csv {
        write_csv(&sections, dir)?;
    }
    if let (Some(dir), Some(r)) = (&args.png, &rasterizer) {
        prepare_folder(dir)?;
        for s in &sections {
            for f in &s.figures {
                let path = dir.join(format!("{}-{}.png", s.id, f.name));
                crate::command::output::write_atomically(&path, &r.png(&f.chart.to_svg())?)?;
            }
        }
        println!("png: {charts} file(s) -> {}", dir.display());
    }
    Ok(())
}

/// Checks the destinations of `--markdown FILE` and `--csv DIR` before
/// any work.
pub fn check_exports(markdown: Option<&Path>, csv: Option<&Path>) -> Result<()> {
    if let Some(md) = markdown.filter(|p| *p != Path::new("-")) {
        crate::command::output::check_markdown_target("--markdown", md)?;
    }
    if let Some(dir) = csv {
        check_folder("--csv", dir)?;
    }
    Ok(())
}

/// Writes the sections' tables as Markdown to `md` (`-`: standard output).
pub fn write_markdown(sections: &[crate::report::view::Section], md: &Path) -> Result<()> {
    let text = text::markdown(sections);
    if md == Path::new("-") {
        print!("{text}");
    } else {
        crate::command::output::write_atomically(md, text.as_bytes())?;
        println!("markdown -> {}", md.display());
    }
    Ok(())
}

/// Writes each of the sections' tables as a CSV file into `dir`.
pub fn write_csv(sections: &[crate::report::view::Section], dir: &Path) -> Result<()> {
    prepare_folder(dir)?;
    let mut tables = 0;
    for s in sections {
        for t in &s.tables {
            let path = dir.join(text::csv_name(s, t));
            crate::command::output::write_atomically(&path, &text::csv(t)?)?;
            tables += 1;
        }
    }
    println!("csv: {tables} file(s) -> {}", dir.display());
    Ok(())
}

/// A folder of charts or tables: new (under a folder that takes files),
/// empty, or one blobbench filled before; and writable, proven by a probe.
fn check_folder(option: &str, dir: &Path) -> Result<()> {
    if dir.exists() {
        if !dir.is_dir() {
            return Err(Error::usage(format!(
                "{option} {}: is a file; name a folder",
                dir.display()
            )));
        }
        let empty = std::fs::read_dir(dir)
            .map_err(|e| Error::io("cannot read folder", dir, e))?
            .next()
            .is_none();
        if !empty && !dir.join(FOLDER_MARK).exists() {
            return Err(Error::usage(format!(
                "{option} {}: the folder holds files blobbench did not write; name a new or empty folder",
                dir.display()
            )));
        }
    }
    crate::command::output::check_work_dir(option, dir)
}

fn prepare_folder(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create folder", dir, e))?;
    crate::command::output::write_atomically(
        &dir.join(FOLDER_MARK),
        b"files written by blobbench report\n",
    )
}
