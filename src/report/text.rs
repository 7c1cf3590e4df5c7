//! The report's tables as text: Markdown (for a README or a ticket) and CSV
//! (one file per table, for a spreadsheet).

use std::fmt::Write as _;

use super::view::{DataTable, Section};
use crate::error::{Error, Result};

/// The first line of every Markdown report; a later report may replace a
/// file that starts with it, and no other.
pub const MARKDOWN_MARK: &str = "<!-- blobbench report -->";

/// Every section as Markdown: heading, source and command line, summary
/// bullets, tables and the environment.
pub fn markdown(sections: &[Section]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{MARKDOWN_MARK}");
    for s in sections {
        let _ = writeln!(out, "\n## {}\n", s.title);
        let _ = writeln!(
            out,
            "From `{}`, started {}. Rerun with:\n\n```sh\n{}\n```\n",
            s.source, s.started_at, s.command_line
        );
        for l in &s.summary {
            let _ = writeln!(out, "- {l}");
        }
        for t in &s.tables {
            let _ = writeln!(out, "\n### {}\n", t.title);
            md_table(&mut out, &t.headers, &t.rows);
        }
        let _ = writeln!(out, "\n### Environment\n");
        let rows: Vec<Vec<String>> = s
            .environment
            .iter()
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect();
        md_table(&mut out, &["".to_string(), "".to_string()], &rows);
    }
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn md_table(out: &mut String, headers: &[String], rows: &[Vec<String>]) {
    let line = |cells: &[String]| {
        format!(
            "| {} |",
            cells
                .iter()
                .map(|c| md_cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    let _ = writeln!(out, "{}", line(headers));
    let _ = writeln!(
        out,
        "|{}|",
        headers
            .iter()
            .enumerate()
            .map(|(i, _)| if i == 0 { " --- " } else { " ---: " })
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in rows {
        let _ = writeln!(out, "{}", line(r));
    }
}

/// One CSV document for a table.
pub fn csv(t: &DataTable) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| Error::usage(format!("cannot write CSV for {}: {e}", t.title));
    w.write_record(&t.headers).map_err(fail)?;
    for r in &t.rows {
        w.write_record(r).map_err(fail)?;
    }
    w.into_inner()
        .map_err(|e| Error::usage(format!("cannot write CSV for {}: {e}", t.title)))
}

/// The file name a section's table gets in `--csv DIR`.
pub fn csv_name(s: &Section, t: &DataTable) -> String {
    format!("{}-{}.csv", s.id, t.name)
}
