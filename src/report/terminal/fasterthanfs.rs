//! The terminal table of a `suite fasterthanfs` result: each row's claim,
//! times, ratios, spread and verdict, then the claims in the page's words.

use std::fmt::Write as _;

use crate::measure::estimate::{Estimate, notes};
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::result::fasterthanfs::{
    Claim, FasterThanFsRow, FasterThanFsTables, WRITE_OVER_READ_CLAIM,
};
use crate::units::human_bytes;

/// The text `suite fasterthanfs` prints: a header line, the table and its legend.
pub fn render(doc: &ResultDocument, t: &FasterThanFsTables) -> String {
    let spec = &t.dataset;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "blobbench suite fasterthanfs: {} blobs, {} +/- {} bytes ({}), {} updates ({} with fsync), {}",
        spec.count,
        spec.size,
        super::quick::variance(spec),
        human_bytes(spec.total_bytes()),
        t.updates,
        t.durable_updates,
        t.stopping
            .as_ref()
            .map_or_else(|| format!("{} rounds", t.rounds), |r| r.header())
    );
    out.push_str(&table(t).render());
    for line in t
        .stopping
        .iter()
        .flat_map(|r| r.lines("--max-rounds, --max-time"))
    {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(
        "ratio = file time / database time (or space): above 1.00 the database is faster or smaller. \
Median of this run's rounds [interval: sign-test order statistics, 95% unless another coverage is printed beside it]; ratios paired round by round.\n",
    );
    out.push_str(
        "verdict judges dir and tree by their intervals: confirmed (both wholly on the claimed side) / \
db ahead, by less (than claimed) / not confirmed (wholly on the other side) / inconclusive (an interval straddles the claim).\n",
    );
    for line in notes(t.estimates().iter()) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str("claims:\n");
    let mut seen: Vec<&str> = Vec::new();
    for claim in t.fasterthanfs.iter().map(FasterThanFsRow::claim) {
        if !seen.contains(&claim.text()) && !matches!(claim, Claim::NotClaimed { .. }) {
            seen.push(claim.text());
            let _ = writeln!(out, "  {:>8}  {}", claim.short(), claim.text());
        }
    }
    out.push_str(&read_write(t));
    let _ = writeln!(
        out,
        "SQLite {}; reads: all {} blobs, random order, warm cache, cache_size=1000 pages; \
mmap_size={}.",
        doc.environment.sqlite_version,
        spec.count,
        human_bytes(t.mmap_size)
    );
    if t.cold {
        let _ = writeln!(
            out,
            "cold rows (--cold): the same reads, the page cache dropped before each timed pass ({}); \
the file times of a cold row are cold file reads.",
            t.cold_method.as_deref().unwrap_or("method not recorded")
        );
    }
    out
}

/// The page's "reads are about 10x faster than writes" beside this run's
/// own write/read ratios.
pub fn read_write(t: &FasterThanFsTables) -> String {
    let mut out = String::new();
    if t.read_write.is_empty() {
        return out;
    }
    let (low, high) = WRITE_OVER_READ_CLAIM;
    let _ = writeln!(
        out,
        "reads vs writes: the page says writes are 'between {low} and {high} times slower than reads' \
('about an order of magnitude'); here, write time / read time per blob:"
    );
    for r in &t.read_write {
        let _ = writeln!(
            out,
            "  {:<7} {:>22}  ({} / {})  {}",
            r.storage,
            r.write_over_read.ratio(t.rounds).format_ratio(),
            r.write_case,
            r.read_case,
            r.verdict.as_str()
        );
    }
    out
}

fn table(t: &FasterThanFsTables) -> Table {
    let mut table = Table::new([
        "case",
        "claim",
        "db µs/op",
        "dir µs/op",
        "dir/db",
        "tree µs/op",
        "tree/db",
        "verdict",
    ]);
    let us = |e: Estimate| e.scaled(1e-3).format(2);
    for row in &t.fasterthanfs {
        match row {
            FasterThanFsRow::Timed(r) => {
                let (dir, tree) = (&r.dir_over_db, &r.tree_over_db);
                table.row([
                    r.case.clone(),
                    r.claim.short(),
                    us(dir.denominator(t.rounds)),
                    us(dir.numerator(t.rounds)),
                    dir.ratio(t.rounds).format_ratio(),
                    us(tree.numerator(t.rounds)),
                    tree.ratio(t.rounds).format_ratio(),
                    r.verdict.as_str().to_string(),
                ]);
            }
            FasterThanFsRow::Space(r) => {
                let space = r.space_bytes;
                table.row([
                    "disk space, MB (du)".to_string(),
                    r.claim.short(),
                    format!("{:.1}", space.db as f64 / 1e6),
                    format!("{:.1}", space.dir as f64 / 1e6),
                    format!("{:.2}", r.dir_over_db),
                    format!("{:.1}", space.tree as f64 / 1e6),
                    format!("{:.2}", r.tree_over_db),
                    r.verdict.as_str().to_string(),
                ]);
            }
        }
    }
    table
}
