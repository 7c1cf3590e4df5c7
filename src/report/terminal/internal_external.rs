//! The terminal tables of a `suite internal-external` result: this
//! machine's matrix beside the 2011 study's, and the rules of thumb.

use std::fmt::Write as _;

use crate::measure::estimate::{Estimate, notes};
use crate::report::table::Table;
use crate::report::terminal::advise::page_text;
use crate::result::ResultDocument;
use crate::result::internal_external::{
    Crossing, Crossover, InternalExternalTables, RowPoint, STUDY_CACHE_BYTES, Winner, crossings,
    crossover_of,
};
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
random order, {} cache, {} (median of this run's rounds [95% interval]), paired round by round",
        human_bytes(t.total_bytes),
        if t.cold { "cold" } else { "warm" },
        t.stopping
            .as_ref()
            .map_or_else(|| format!("{} rounds", t.rounds), |r| r.header())
    );
    let _ = writeln!(out, "{}", cache_line(t, &page_sizes));
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
    for line in t
        .stopping
        .iter()
        .flat_map(|r| r.lines("--max-rounds, --max-time (per blob size)"))
    {
        let _ = writeln!(out, "{line}");
    }
    out.push_str("\nthe study (2011: SQLite 3.7.8, Linux ext4, SATA disk):\n");
    out.push_str(&study);
    out.push_str("\nrules of thumb from this machine's numbers:\n");
    let _ = writeln!(
        out,
        "  best page size for blob reads: {}",
        best_page_text(t)
    );
    crossing_lines(t, &page_sizes, &mut out);
    out.push_str(
        "the study: page size 8192 or 16384 is best; files win for blobs above about 100k\n",
    );
    out
}

/// The best page size for blob reads and how it was decided against
/// SQLite's default (the terminal and the HTML report say the same).
pub fn best_page_text(t: &InternalExternalTables) -> String {
    let c = t.page_choice();
    format!(
        "{}: {}",
        c.chosen,
        page_text(&c, "geometric mean of internal read times over blob sizes")
    )
}

/// What a row's within-noise cells mean, said once under the rows.
pub const WITHIN_NOISE_NOTE: &str = "within noise at a size: 1.00 lies inside that cell's interval, \
so neither side is claimed there";

/// Every page size's crossings of 1.00, the study's row beside each.
fn crossing_lines(t: &InternalExternalTables, page_sizes: &[u32], out: &mut String) {
    out.push_str(
        "  where the ratio crosses 1.00, per page size (the study's row at the same blob sizes in brackets):\n",
    );
    let mut noise = false;
    let mut undecided = false;
    for &p in page_sizes {
        let row = t.row(p);
        let here = t.crossings(p);
        noise |= here.iter().any(|c| !c.firm);
        undecided |= row.iter().any(|x| !x.decided);
        let study = t.study_row(p);
        let beside = if study.is_empty() {
            String::new()
        } else {
            format!("  [study: {}]", describe_row(&study, &crossings(&study)))
        };
        let _ = writeln!(out, "    {p}: {}{beside}", describe_row(&row, &here));
    }
    if noise {
        out.push_str(
            "  (within noise): a cell beside that crossing has 1.00 inside its 95% interval, so it may not be real\n",
        );
    }
    if undecided {
        let _ = writeln!(out, "  {WITHIN_NOISE_NOTE}");
    }
}

/// The page cache each page size read with, and whether it is the study's.
pub fn cache_line(t: &InternalExternalTables, page_sizes: &[u32]) -> String {
    let pages: Vec<String> = page_sizes
        .iter()
        .map(|&p| format!("{p}: {}", t.cache_pages(p)))
        .collect();
    let whose = if t.cache_bytes == STUDY_CACHE_BYTES {
        "the study's 2000 pages x 1024 bytes, 31 x 65536"
    } else {
        "the study's is --cache-bytes 2000KiB: 2000 pages x 1024 bytes, 31 x 65536"
    };
    format!(
        "page cache {} bytes per database ({whose}); cache_size in pages per page size: {}",
        t.cache_bytes,
        pages.join(", ")
    )
}

/// A row's crossings of 1.00 in words: one threshold, one side everywhere,
/// or, when it does not cross cleanly, every crossing in order of size.
/// Such a claim covers every cell of the row, so it is made only when every
/// cell is decided (its interval excludes 1.00); otherwise the row is said
/// size by size: where the database wins, where files do, and where it is
/// within noise.
pub fn describe_row(row: &[RowPoint], crossings: &[Crossing]) -> String {
    if row.iter().any(|p| !p.decided) {
        return by_verdict(row);
    }
    let mut sizes: Vec<u64> = row.iter().map(|p| p.size).collect();
    sizes.sort_unstable();
    let noise = |c: &Crossing| if c.firm { "" } else { " (within noise)" };
    match crossover_of(row, crossings) {
        Crossover::At(s) => format!(
            "external files start to win above about {}{}",
            size_label(s as u64),
            crossings.first().map(noise).unwrap_or_default()
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
            let (first, verb) = match crossings.first().map(|c| c.above) {
                Some(Winner::Files) => ("the database", "wins"),
                _ => ("files", "win"),
            };
            let mut seen = vec![first];
            let steps: Vec<String> = crossings
                .iter()
                .map(|c| {
                    let who = match c.above {
                        Winner::Files => "files",
                        Winner::Database => "the database",
                    };
                    let again = if seen.contains(&who) { " again" } else { "" };
                    seen.push(who);
                    format!(
                        "{who}{again} above about {}{}",
                        size_label(c.at as u64),
                        noise(c)
                    )
                })
                .collect();
            format!(
                "does not cross cleanly ({} crossing{}): {first} {verb} at {}, {}",
                crossings.len(),
                if crossings.len() == 1 { "" } else { "s" },
                size_label(*sizes.first().unwrap_or(&0)),
                steps.join(", ")
            )
        }
    }
}

/// A row with a cell within noise, in runs of consecutive sizes: "the
/// database wins at 10k; within noise from 20k to 50k; external files win
/// from 100k to 1m" (cells whose ratio is not a number are left out).
fn by_verdict(row: &[RowPoint]) -> String {
    let mut p: Vec<RowPoint> = row
        .iter()
        .copied()
        .filter(|x| x.ratio.is_finite() && x.ratio > 0.0)
        .collect();
    p.sort_by_key(|x| x.size);
    let verdict = |x: &RowPoint| match (x.decided, x.ratio >= 1.0) {
        (false, _) => "within noise",
        (true, true) => "the database wins",
        (true, false) => "external files win",
    };
    let mut runs: Vec<(&str, u64, u64)> = Vec::new();
    for x in &p {
        match runs.last_mut() {
            Some(run) if run.0 == verdict(x) => run.2 = x.size,
            _ => runs.push((verdict(x), x.size, x.size)),
        }
    }
    runs.iter()
        .map(|&(who, from, to)| {
            if from == to {
                format!("{who} at {}", size_label(from))
            } else {
                format!("{who} from {} to {}", size_label(from), size_label(to))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
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

    fn row(ratios: &[f64]) -> Vec<RowPoint> {
        crate::result::internal_external::decided_row(ratios)
    }

    #[test]
    fn a_row_that_does_not_cross_cleanly_names_every_crossing() {
        let r = row(&[2.89, 0.50, 1.19]);
        let text = describe_row(&r, &crossings(&r));
        assert!(
            text.starts_with(
                "does not cross cleanly (2 crossings): the database wins at 10k, files above about"
            ),
            "{text}"
        );
        assert!(text.contains(", the database again above about"), "{text}");
        let r = row(&[0.5, 0.9, 1.5]);
        let text = describe_row(&r, &crossings(&r));
        assert!(
            text.starts_with(
                "does not cross cleanly (1 crossing): files win at 10k, the database above about"
            ),
            "{text}"
        );
        let r = row(&[1.5, 0.9, 0.5]);
        assert!(
            describe_row(&r, &crossings(&r)).starts_with("external files start to win above about")
        );
    }

    /// The fixture's result with `cells` in place of its own.
    fn rendered(cells: Vec<crate::result::internal_external::Cell>) -> String {
        let text = include_str!("../../../tests/fixtures/results/internal-external.json");
        let doc: ResultDocument = serde_json::from_str(text).expect("fixture");
        let crate::result::Tables::InternalExternal(mut t) = doc.tables.clone() else {
            panic!("an internal-external result")
        };
        t.internal_external = cells;
        // As an older result: the choice and the crossings come from the cells.
        t.best_page_choice = None;
        t.crossover = Vec::new();
        render(&doc, &t, false)
    }

    #[test]
    fn the_best_page_size_within_noise_keeps_4096_and_one_beyond_it_is_named() {
        use crate::result::internal_external::two_pages;
        let out = rendered(two_pages([0.90, 1.10, 0.95, 1.05, 0.92]));
        assert!(
            out.contains("best page size for blob reads: 4096: within noise: keeping SQLite's default 4096 (geometric mean of internal read times over blob sizes, 16384 / 4096: 0.95x"),
            "{out}"
        );
        let out = rendered(two_pages([0.60, 0.62, 0.59, 0.61, 0.60]));
        assert!(
            out.contains("best page size for blob reads: 16384: 16384 recommended: faster than SQLite's default 4096 beyond the noise (geometric mean of internal read times over blob sizes, 16384 / 4096: 0.60x"),
            "{out}"
        );
    }

    #[test]
    fn a_row_within_noise_is_said_size_by_size_under_the_matrix() {
        use crate::result::internal_external::test_cell;
        // Files are faster at the median at both sizes; at 10k the rounds
        // disagree (within noise), at 100k every round says files.
        let cells = vec![
            test_cell(10_000, 4096, &[100.0; 5], &[90.0, 110.0, 95.0, 105.0, 92.0]),
            test_cell(100_000, 4096, &[100.0; 5], &[50.0, 52.0, 49.0, 51.0, 50.0]),
        ];
        let out = rendered(cells);
        assert!(out.contains(" = "), "the 10k cell is marked: {out}");
        assert!(
            out.contains("    4096: within noise at 10k; external files win at 100k"),
            "{out}"
        );
        assert!(!out.contains("win at every blob size"), "{out}");
        assert!(out.contains(WITHIN_NOISE_NOTE), "{out}");
    }

    #[test]
    fn a_row_claims_a_side_only_where_every_cell_is_decided() {
        // Files ahead at the median at every size, but 10k and 50k within noise.
        let mut r = row(&[0.95, 0.98, 0.5]);
        let text = describe_row(&r, &crossings(&r));
        assert_eq!(text, "external files win at every blob size from 10k");
        r[0].decided = false;
        r[1].decided = false;
        let text = describe_row(&r, &crossings(&r));
        assert_eq!(
            text,
            "within noise from 10k to 50k; external files win at 1m"
        );
        assert!(!text.contains("every blob size"), "{text}");
        // A single fall with the cell beside it within noise: no threshold claimed.
        let mut r = row(&[1.5, 0.9, 0.5]);
        r[1].decided = false;
        assert_eq!(
            describe_row(&r, &crossings(&r)),
            "the database wins at 10k; within noise at 50k; external files win at 1m"
        );
        // The database everywhere at the median, all within noise.
        let mut r = row(&[1.05, 1.02, 1.01]);
        for x in &mut r {
            x.decided = false;
        }
        assert_eq!(describe_row(&r, &[]), "within noise from 10k to 1m");
    }
}
