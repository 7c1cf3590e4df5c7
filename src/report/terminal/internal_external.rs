//! The terminal tables of a `suite internal-external` result: this
//! machine's matrix beside the 2011 study's, and the rules of thumb.

use std::fmt::Write as _;

use crate::measure::estimate::{Estimate, notes};
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::result::internal_external::{Crossover, InternalExternalTables};
use crate::units::human_bytes;

/// The text `suite internal-external` prints; `colors` paints each ratio
/// green (the database is faster) or red (files are).
pub fn render(doc: &ResultDocument, t: &InternalExternalTables, colors: bool) -> String {
    let sizes = t.sizes();
    let page_sizes = t.page_sizes();
    // Each cell: the ratio (for its colour) and its text.
    let matrix = |value: &dyn Fn(u64, u32) -> Option<(f64, String)>| {
        let mut table = Table::new(
            std::iter::once("page size".to_string()).chain(sizes.iter().map(|&s| size_label(s))),
        );
        for &p in &page_sizes {
            let mut row = vec![p.to_string()];
            for &s in &sizes {
                row.push(match value(s, p) {
                    Some((r, text)) => color(r, text, colors),
                    None => "-".into(),
                });
            }
            table.row(row);
        }
        table.render()
    };
    let here = matrix(&|s, p| {
        t.cell(s, p).map(|c| {
            let e = c.ratio_estimate();
            let mark = if c.undecided() { " =" } else { "" };
            (e.value, format!("{}{mark}", e.format_ratio()))
        })
    });
    let study = matrix(&|s, p| {
        t.cell(s, p)
            .and_then(|c| c.seed)
            .map(|r| (r, format!("{r:.3}")))
    });
    let estimates: Vec<Estimate> = t
        .internal_external
        .iter()
        .map(|c| c.ratio_estimate())
        .collect();

    let mut out = String::new();
    let _ = writeln!(
        out,
        "blobbench suite internal-external: external time / internal time, {} of content per case, \
cache {} per database, random order, {} cache, median of {} rounds [95% interval], paired round by round",
        human_bytes(t.total_bytes),
        human_bytes(t.cache_bytes),
        if t.cold { "cold" } else { "warm" },
        t.rounds
    );
    out.push_str(
        "above 1: reading blobs stored in the database is faster; below 1: separate files are faster\n",
    );
    let _ = writeln!(
        out,
        "\nthis machine (SQLite {}):",
        doc.environment.sqlite_version
    );
    out.push_str(&here);
    if t.internal_external.iter().any(|c| c.undecided()) {
        out.push_str(
            "= : the 95% interval contains 1.00: neither is faster beyond the noise here\n",
        );
    }
    for line in notes(estimates.iter()) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str("\nthe study (2011: SQLite 3.7.8, Linux ext4, SATA disk):\n");
    out.push_str(&study);
    out.push_str("\nrules of thumb from this machine's numbers:\n");
    let best = t.best_page_size;
    let _ = writeln!(
        out,
        "  best page size for blob reads: {best} (lowest internal read time over all blob sizes)"
    );
    let mut shown = vec![best];
    if best != 4096 && page_sizes.contains(&4096) {
        shown.push(4096); // SQLite's default page size
    }
    for p in shown {
        if let Some(c) = t.crossover.iter().find(|c| c.page_size == p) {
            let _ = writeln!(out, "  page size {p}: {}", describe(&c.crossover, &sizes));
        }
    }
    out.push_str(
        "the study: page size 8192 or 16384 is best; files win for blobs above about 100k\n",
    );
    out
}

/// A crossover in words, for the blob sizes measured.
fn describe(c: &Crossover, sizes: &[u64]) -> String {
    match c {
        Crossover::At(s) => format!(
            "external files start to win above about {}",
            size_label(*s as u64)
        ),
        Crossover::DatabaseEverywhere => format!(
            "the database wins at every blob size up to {}",
            size_label(*sizes.last().unwrap_or(&0))
        ),
        Crossover::FilesEverywhere => format!(
            "external files win at every blob size from {}",
            size_label(*sizes.first().unwrap_or(&0))
        ),
        Crossover::Mixed => {
            "no single threshold (files win below a size where the database wins)".into()
        }
    }
}

/// Sizes the way the study labels them: 10k, 500k, 1m (x1000).
fn size_label(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}m", n / 1_000_000)
    } else if n >= 1000 {
        format!("{}k", (n as f64 / 1000.0).round() as u64)
    } else {
        n.to_string()
    }
}

fn color(ratio: f64, text: String, enabled: bool) -> String {
    if !enabled {
        return text;
    }
    // Green: the database is faster (the study's green cells); red: files are.
    let code = if ratio >= 1.0 { "32" } else { "31" };
    format!("\x1b[{code}m{text}\x1b[0m")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(size_label(10_000), "10k");
        assert_eq!(size_label(1_000_000), "1m");
        assert_eq!(size_label(75_400), "75k");
    }
}
