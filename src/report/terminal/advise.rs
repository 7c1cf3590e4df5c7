//! The terminal text of an `advise` result: the header saying what is about
//! to be calibrated, and the per-size table with the recommendation, both
//! rendered from typed values (the recommendation from the result).

use std::fmt::Write;
use std::path::Path;

use crate::measure::stats::summarize;
use crate::report::chart::size_label;
use crate::report::table::Table;
use crate::result::advise::{
    Advice, AdviseInput, AgainstDefault, AgingAdjustment, Band, ConcurrencyAdjustment, Decision,
    Durability, JournalComparison, LayoutKind, Placement, SQLITE_DEFAULT_PAGE_SIZE, Spread,
    faster_beyond_noise, slower_beyond_noise,
};
use crate::units::human_duration_ns as ns;

/// What is about to be measured: the sizes, the mix, the durability, and
/// the `bands` of sizes (each measured at its mean, up to the calibration
/// cap) in every layout in `folder` (of `fs_type`).
pub fn header(input: &AdviseInput, bands: &[Band], folder: &Path, fs_type: &str) -> String {
    let s = &input.sample;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "blobbench advise: {} blobs from {}: p10 {}, median {}, p90 {}, max {}",
        s.blobs,
        s.source,
        size_label(s.p10 as f64),
        size_label(s.median as f64),
        size_label(s.p90 as f64),
        size_label(s.max as f64)
    );
    let _ = writeln!(
        out,
        "workload: {}% reads ({}), {}% writes; durability {}{}",
        input.reads_percent,
        input.read_transactions(),
        100 - input.reads_percent,
        input.durability.describe(),
        if input.threads > 1 || input.writers > 0 {
            format!(
                "; {} threads at once, {} of them writing (measured too)",
                input.threads, input.writers
            )
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        "calibration: {} sizes x {} layouts x {} rounds in {} ({})",
        bands.len(),
        input.page_sizes.len() + 2 + usize::from(input.object_store.is_some()),
        input.rounds,
        folder.display(),
        fs_type
    );
    if let Some(s3) = &input.object_store {
        let _ = writeln!(
            out,
            "object store: {s3} (one more layout; each write one PUT, as durable as the server makes it)"
        );
    }
    let _ = writeln!(
        out,
        "size bands, each measured at the mean size of its blobs:"
    );
    out.push_str(&bands_table(bands).render());
    if let Some(cap) = bands.iter().find(|b| b.capped()).map(|b| b.size) {
        let _ = writeln!(
            out,
            "note: bands with a mean above {} are measured at {} (larger blobs would take minutes per layout), \
             so their cost is underestimated",
            size_label(cap as f64),
            size_label(cap as f64)
        );
    }
    out
}

/// Each band's range, share of the blobs, mean size and the size measured
/// (marked when the calibration cap applies).
pub fn bands_table(bands: &[Band]) -> Table {
    let mut t = Table::new(["band", "share", "mean", "measured at"]);
    for b in bands {
        t.row(band_cells(b));
    }
    t
}

/// A band's cells: range, share, mean, size measured ("(cap)" when the
/// calibration cap applies). The HTML report's table shows the same.
pub fn band_cells(b: &Band) -> [String; 4] {
    [
        format!(
            "{}..{}",
            size_label(b.range.min as f64),
            size_label(b.range.max as f64)
        ),
        format!("{:.0}%", b.share * 100.0),
        size_label(b.range.mean),
        if b.capped() {
            format!("{} (cap)", size_label(b.size as f64))
        } else {
            size_label(b.size as f64)
        },
    ]
}

/// A ratio over rounds as `1.52x [1.30-1.68]` (the median alone for
/// results written before intervals).
pub(crate) fn spread_text(s: &Spread) -> String {
    s.estimate(0).format_ratio()
}

/// The measurements per size and layout, then the recommendation.
pub fn outcome(a: &Advice) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nper operation, median of {} rounds (db at page size {}; db+files / db is the mix's time, above 1 the database wins):",
        a.input.rounds, a.decision.page_size
    );
    out.push_str(&points_table(a).render());
    for line in failed_lines(a) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(c) = &a.concurrency {
        concurrency(&mut out, c);
    }
    if let Some(g) = &a.aging {
        aging(&mut out, g);
    }
    let threads = match &a.concurrency {
        Some(c) => format!(", {} threads ({} writing)", c.threads, c.writers),
        None => String::new(),
    };
    let age = match &a.aging {
        Some(g) => format!(", storage age {}", g.age),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "\nrecommendation for {}% reads ({}), durability {}{threads}{age}:",
        a.input.reads_percent,
        a.input.read_transactions(),
        a.input.durability
    );
    recommendation(&mut out, &a.decision, &a.journal, a.input.durability);
    if let Some(g) = &a.aging {
        let _ = writeln!(out, "  {}", aging_verdict(g, &a.decision));
    }
    out
}

/// One line per layout that failed: where, how, and that the decision was
/// made without it (the terminal and the HTML report say the same).
pub fn failed_lines(a: &Advice) -> Vec<String> {
    a.failed
        .iter()
        .map(|f| {
            format!(
                "FAILED {} ({}): {}; left out of every size and of the recommendation, which the other layouts' figures make",
                f.system,
                f.during,
                f.reason()
            )
        })
        .collect()
}

/// Whether aging changed the recommendation, in one sentence (the
/// terminal and the HTML report say the same).
pub fn aging_verdict(g: &AgingAdjustment, aged: &Decision) -> String {
    if g.changed(aged) {
        format!(
            "aging changed the recommendation: for a fresh store it would be to {} (page_size={})",
            placement_text(&g.unaged),
            g.unaged.page_size
        )
    } else {
        format!(
            "aging did not change the recommendation: a fresh store gets the same (storage age {})",
            g.age
        )
    }
}

/// One row per aged layout and size: the aging series used and the
/// factors (the HTML report's table has the same cells).
pub fn aging_rows(g: &AgingAdjustment) -> Vec<[String; 6]> {
    let mut rows = Vec::new();
    for l in &g.layouts {
        let name = kind_name(l.kind);
        for s in &l.sizes {
            let ages: Vec<String> = s.ages.iter().map(|a| format!("{a:.2}")).collect();
            rows.push([
                name.to_string(),
                size_label(s.size as f64),
                s.series.clone(),
                if s.extrapolated {
                    format!("{} (flat beyond)", ages.join(".."))
                } else {
                    ages.join("..")
                },
                spread_text(&Spread::of_ratios(&s.read_factor)),
                format!("{:.2}x", s.write_factor),
            ]);
        }
    }
    rows
}

/// A layout kind as the tables name it.
fn kind_name(kind: LayoutKind) -> &'static str {
    match kind {
        LayoutKind::Db => "db",
        LayoutKind::DbFiles => "db+files",
        LayoutKind::Files => "files",
        LayoutKind::ObjectStore => "s3",
    }
}

/// The columns of the aging adjustment's table, here and in the report.
pub(crate) const AGING_COLUMNS: [&str; 6] = [
    "layout",
    "size",
    "aging series",
    "ages measured",
    "read x",
    "write x",
];

/// The factors each layout's times were scaled by at the storage age.
fn aging(out: &mut String, g: &AgingAdjustment) {
    let _ = writeln!(
        out,
        "\nat storage age {} (from {}; this disk is {}): time per operation at that age over a fresh store's:",
        g.age, g.file, g.fs
    );
    let mut t = Table::new(AGING_COLUMNS);
    for row in aging_rows(g) {
        t.row(row);
    }
    out.push_str(&t.render());
    for l in &g.layouts {
        let _ = writeln!(
            out,
            "{}: {} series on {}, {:.0}% full (the fill with the most ages)",
            kind_name(l.kind),
            l.aging_layout,
            l.fs,
            l.fill * 100.0
        );
    }
    for n in &g.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(
        out,
        "the decision below scales each layout's times at every size by these factors (reads linear in age \
         between measured ages, flat beyond the last; writes: the fill's rate over the aging pass's); \
         aging reads cold, advise warm, so the read factors are an upper bound for blobs that stay cached"
    );
    let _ = writeln!(out, "{AGING_READS}");
}

/// How the read factors were judged, said under the aging table here and
/// in the report.
pub(crate) const AGING_READS: &str = "read x: the database's read time at the age over age 0's (unpaired: two \
ages are never read side by side); another layout's, where the aging result read the layouts' rounds side by side, \
the database's times the move of its standing against the database (paired round by round), else its own \
(unpaired); a factor whose interval contains 1.00, or whose standings' intervals at the age and at age 0 overlap, \
is within noise and not applied: the fresh measurement is kept";

/// Each layout at the application's concurrency and the factors the
/// decision scaled its times by.
fn concurrency(out: &mut String, c: &ConcurrencyAdjustment) {
    let _ = writeln!(
        out,
        "\nat your concurrency: {} threads, {} of them writing, at {} (db at page size {}); time per operation as one thread sees it, over one thread's:",
        c.threads,
        c.writers,
        size_label(c.size as f64),
        c.page_size
    );
    let mut t = Table::new(["layout", "reads/s", "writes/s", "busy", "read x", "write x"]);
    for l in &c.layouts {
        let med = |v: &[f64]| summarize(v).median;
        t.row([
            l.layout.clone(),
            format!("{:.0}", med(&l.reads_per_s)),
            format!("{:.0}", med(&l.writes_per_s)),
            l.busy.to_string(),
            spread_text(&Spread::of_ratios(&l.read_factor)),
            spread_text(&Spread::of_ratios(&l.write_factor)),
        ]);
    }
    out.push_str(&t.render());
    let _ = writeln!(
        out,
        "the decision below scales every size's times of a layout by its factors (assumed to hold at every size); \
         beyond {} cores, threads also wait for a core",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
}

/// Medians per size and layout at the chosen page size, and the mix's
/// files/database ratio with its spread.
fn points_table(a: &Advice) -> Table {
    let reads = a.input.reads_percent as f64 / 100.0;
    let s3_failed = a.failed.first().map(|f| {
        let cell = f.cell();
        if cell.chars().count() > 40 {
            format!("{}...", cell.chars().take(37).collect::<String>())
        } else {
            cell
        }
    });
    let s3 = s3_failed.is_some()
        || a.points
            .iter()
            .any(|p| p.layout(LayoutKind::ObjectStore, None).is_some());
    let mut headers = vec![
        "size",
        "share",
        "read db",
        "read db+files",
        "read files",
        "write db",
        "write db+files",
        "write files",
        "db+files / db",
    ];
    if s3 {
        headers.extend(["read s3", "write s3", "s3 / db"]);
    }
    let mut t = Table::new(headers);
    let med = |v: &[f64]| ns(summarize(v).median);
    for p in &a.points {
        let (Some(db), Some(ext), Some(files)) = (
            p.layout(LayoutKind::Db, Some(a.decision.page_size)),
            p.layout(LayoutKind::DbFiles, None),
            p.layout(LayoutKind::Files, None),
        ) else {
            continue;
        };
        // The mix's time of `l` over the database's, round by round.
        let over_db = |l: &crate::result::advise::LayoutResult| {
            let ratio: Vec<f64> = (0..db.read_ns.len())
                .map(|r| l.mix_ns(r, reads) / db.mix_ns(r, reads))
                .collect();
            spread_text(&Spread::of_ratios(&ratio))
        };
        let mut cells = vec![
            size_label(p.size as f64),
            format!("{:.0}%", p.share * 100.0),
            med(&db.read_ns),
            med(&ext.read_ns),
            med(&files.read_ns),
            med(&db.write_ns),
            med(&ext.write_ns),
            med(&files.write_ns),
            over_db(ext),
        ];
        if s3 {
            match (p.layout(LayoutKind::ObjectStore, None), &s3_failed) {
                (Some(o), _) => cells.extend([med(&o.read_ns), med(&o.write_ns), over_db(o)]),
                (None, Some(cell)) => cells.extend([cell.clone(), String::new(), String::new()]),
                (None, None) => cells.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        t.row(cells);
    }
    t
}

/// Where the blobs go, in one sentence (the terminal and the HTML report
/// say the same).
pub fn placement_text(d: &Decision) -> String {
    let below = |x: Option<f64>| size_label(x.unwrap_or(0.0));
    match d.placement {
        Placement::Split => format!(
            "store blobs below {} inside the database, larger ones as files named in it{}",
            below(d.threshold_bytes),
            threshold_span(d)
        ),
        Placement::SplitObjectStore => format!(
            "store blobs below {} inside the database, larger ones in the object store (keyed by their row's id){}",
            below(d.threshold_bytes),
            threshold_span(d)
        ),
        Placement::AllFiles => {
            "store the blobs as files named in the database (keeping any size range inside \
             does not lower the expected time)"
                .into()
        }
        Placement::AllObjectStore => {
            "store the blobs in the object store (keeping any size range inside the \
             database does not lower the expected time, and files are slower beyond the noise)"
                .into()
        }
        Placement::AllInside => {
            "store every blob inside the database (moving any size range out to files does \
             not lower the expected time)"
                .into()
        }
        Placement::PlainFiles => {
            "store the blobs as plain files, no database (faster than every placement with a \
             database beyond the noise; but no transaction holds a file and its metadata together: \
             after a crash one can be left without the other)"
                .into()
        }
    }
}

/// Where the threshold is known to lie: between the two sizes measured
/// either side, each with the band of sizes it stands for.
fn threshold_span(d: &Decision) -> String {
    let Some([lo, hi]) = d.threshold_between else {
        return String::new();
    };
    let label = |s: u64| size_label(s as f64);
    let stands = |m: &crate::result::advise::MeasuredSize| match m.band {
        Some(b) if b.min != b.max => format!(
            "{} (for blobs {}..{})",
            label(m.size),
            label(b.min),
            label(b.max)
        ),
        _ => label(m.size),
    };
    format!(
        " (the threshold is where the files' time over the database's crosses 1 between the sizes measured \
         either side, {} and {}: any size between them is as well supported)",
        stands(&lo),
        stands(&hi)
    )
}

/// Why an interval that is not slower beyond the noise moved no decision:
/// it holds 1.00, or (over one run's rounds) it does not pass the margin a
/// rerun can move a figure by.
fn undecided_why(e: &crate::measure::estimate::Estimate) -> String {
    if e.contains(1.0) {
        return "the interval contains 1.00".into();
    }
    let f = e.rerun_factor();
    format!(
        "an interval over one run's rounds decides only past {:.2}x or {:.2}x: two runs here can differ by {:.0}%",
        1.0 / f,
        f,
        crate::measure::estimate::WITHIN_RUN_MARGIN * 100.0
    )
}

/// Placement, page size, journal mode and the comparison with every
/// alternative.
fn recommendation(out: &mut String, d: &Decision, j: &JournalComparison, durability: Durability) {
    let _ = writeln!(out, "  {}", placement_text(d));
    let pages: Vec<String> = d
        .page_sizes
        .iter()
        .filter(|(p, _)| *p != d.page_size)
        .map(|(p, s)| format!("{p}: {}", spread_text(s)))
        .collect();
    let _ = writeln!(
        out,
        "  page_size={}            (time per operation of the others, relative: {})",
        d.page_size,
        pages.join(", ")
    );
    if let Some(v) = page_verdict(d) {
        let _ = writeln!(out, "    page size: {v}");
    }
    if let [w, r, ..] = j.modes.as_slice() {
        let (mode, sync) = journal_setting(j);
        let _ = writeln!(
            out,
            "  journal_mode={}, synchronous={}   (writes of {} blobs: {}+{} takes {} the time of {}+{})",
            mode.to_uppercase(),
            sync.to_uppercase(),
            size_label(j.size as f64),
            r.0.to_uppercase(),
            r.1.to_uppercase(),
            spread_text(&j.rollback_over_wal),
            w.0.to_uppercase(),
            w.1.to_uppercase()
        );
        let _ = writeln!(out, "    journal mode: {}", journal_verdict(j));
    }
    if durability == Durability::None {
        out.push_str(
            "  (synchronous=OFF: a power loss can corrupt the database; only for data you can rebuild)\n",
        );
    }
    let rec_disk = d.disk_per_blob.first().map_or(f64::NAN, |r| r.1);
    for ((name, s), (_, space)) in d.speedup_vs.iter().zip(d.disk_per_blob.iter().skip(1)) {
        if name.contains("object store") || d.placement.outside() == LayoutKind::ObjectStore {
            // The objects' bytes are all a client sees of the server's disks.
            let _ = writeln!(
                out,
                "  vs {name}: {} faster, disk not comparable (objects count only their bytes; the server's own use is not visible)",
                spread_text(s)
            );
            let _ = space;
            continue;
        }
        let saving = 1.0 - rec_disk / space;
        let _ = writeln!(
            out,
            "  vs {name}: {} faster, {} disk",
            spread_text(s),
            if saving >= 0.0 {
                format!("{:.0}% less", saving * 100.0)
            } else {
                format!("{:.0}% more", -saving * 100.0)
            }
        );
    }
    for note in &d.within_noise {
        let _ = writeln!(out, "  {note}");
    }
    let e = d.expected_ns.estimate(0);
    let _ = writeln!(
        out,
        "  expected time per operation: {}{} (median of rounds [95% interval])",
        ns(e.value),
        if e.has_interval() {
            format!(" [{}-{}]", ns(e.low), ns(e.high))
        } else {
            String::new()
        }
    );
    let mut all: Vec<_> = d.speedup_vs.iter().map(|(_, s)| s.estimate(0)).collect();
    all.extend(d.page_sizes.iter().map(|(_, s)| s.estimate(0)));
    all.push(j.rollback_over_wal.estimate(0));
    for line in crate::measure::estimate::notes(all.iter().filter(|e| e.has_interval())) {
        let _ = writeln!(out, "  {line}");
    }
}

/// How a decision against a default is worded.
pub(crate) struct Wording<'a> {
    /// The default, named: "SQLite's default 4096".
    pub default: &'a str,
    /// The figure compared: "write time".
    pub what: &'a str,
    /// What a value faster beyond the noise is: "recommended".
    pub verb: &'a str,
    /// Why the simpler of two values that cannot be told apart is kept:
    /// "nearer the default".
    pub simpler: &'a str,
}

/// A setting decided against its default, in one sentence (`name` writes a
/// value). The advise, `suite internal-external` and `sweep` reports all
/// say it this way.
pub(crate) fn against_default_text<T: Clone + PartialEq>(
    c: &AgainstDefault<T>,
    name: &dyn Fn(&T) -> String,
    w: &Wording,
) -> String {
    let lowest = |keep: &dyn Fn(&crate::measure::estimate::Estimate) -> bool| {
        c.others
            .iter()
            .filter(|o| keep(&o.1))
            .min_by(|a, b| a.1.value.total_cmp(&b.1.value))
    };
    let (default, what) = (w.default, w.what);
    let chosen = name(&c.chosen);
    // "expected time, 16384 / 4096: 0.95x [0.90-1.10]": the ratio last, so
    // whatever follows an interval reads as part of it.
    let ratio = |v: &T, e: &crate::measure::estimate::Estimate| {
        format!(
            "{what}, {} / {}: {}",
            name(v),
            name(&c.default),
            e.format_ratio()
        )
    };
    match (c.changed(), c.within_noise) {
        (true, within) => {
            let r = c
                .vs_default(&c.chosen)
                .map_or_else(|| "?".into(), |e| ratio(&c.chosen, &e));
            let mut s = format!(
                "{chosen} {}: faster than {default} beyond the noise ({r})",
                w.verb
            );
            if let Some((f, e)) = lowest(&faster_beyond_noise).filter(|_| within) {
                s.push_str(&format!(
                    "; {} is within noise of it ({}), so {chosen}, {}, is kept",
                    name(f),
                    ratio(f, e),
                    w.simpler
                ));
            }
            s
        }
        (false, true) => match lowest(&|e| !slower_beyond_noise(e)) {
            Some((f, e)) if e.has_interval() => format!(
                "within noise: keeping {default} ({}; {})",
                ratio(f, e),
                undecided_why(e)
            ),
            // Nothing to decide by: the default stays whatever the median says.
            Some((f, e)) => format!(
                "no interval to decide by ({}): keeping {default} ({})",
                if e.n == 1 {
                    "one round"
                } else {
                    "an older result"
                },
                ratio(f, e)
            ),
            None => format!("within noise: keeping {default}"),
        },
        (false, false) => match lowest(&|_| true) {
            Some((f, e)) if c.others.len() == 1 => format!(
                "{default} kept: {} is slower beyond the noise ({})",
                name(f),
                ratio(f, e)
            ),
            Some((f, e)) => format!(
                "{default} kept: every other is slower beyond the noise (the nearest: {})",
                ratio(f, e)
            ),
            None => format!("{default}, the only one measured"),
        },
    }
}

/// The wording of a page size decided against SQLite's default (advise
/// and `suite internal-external`): `what` is the figure compared.
pub(crate) fn page_text(c: &AgainstDefault<u32>, what: &str) -> String {
    against_default_text(
        c,
        &|p: &u32| p.to_string(),
        &Wording {
            default: &default_page_label(c.default),
            what,
            verb: "recommended",
            simpler: "nearer the default",
        },
    )
}

/// How the page size was decided against SQLite's default, in one
/// sentence (the terminal and the HTML report say the same); None for a
/// result from before the decision was recorded.
pub fn page_verdict(d: &Decision) -> Option<String> {
    let c = d.page_choice.as_ref()?;
    Some(page_text(c, "expected time with every blob inside"))
}

/// The page size every other had to beat, named: "SQLite's default 4096",
/// or "8192 (the size tried nearest SQLite's default 4096)".
pub(crate) fn default_page_label(default: u32) -> String {
    if default == SQLITE_DEFAULT_PAGE_SIZE {
        format!("SQLite's default {default}")
    } else {
        format!("{default} (the size tried nearest SQLite's default {SQLITE_DEFAULT_PAGE_SIZE})")
    }
}

/// The journal mode and synchronous setting recommended: the decision
/// against WAL (for an older result, derived from its ratio).
pub fn journal_setting(j: &JournalComparison) -> (String, String) {
    let mode = j.choice().chosen;
    let sync = j
        .modes
        .iter()
        .find(|m| m.0 == mode)
        .map_or_else(|| j.best_synchronous.clone(), |m| m.1.clone());
    (mode, sync)
}

/// How the journal mode was decided against WAL, in one sentence (the
/// terminal and the HTML report say the same).
pub fn journal_verdict(j: &JournalComparison) -> String {
    let c = j.choice();
    against_default_text(
        &c,
        &|m: &String| m.to_uppercase(),
        &Wording {
            default: &format!(
                "{} (the mode every layout above was measured in)",
                c.default.to_uppercase()
            ),
            what: "write time",
            verb: "recommended",
            simpler: "the simpler",
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::advise::{SizeBand, SizeSample};

    #[test]
    fn the_header_shows_every_band_and_says_when_the_cap_applies() {
        let input = AdviseInput {
            sample: SizeSample::new("t".into(), vec![4000, 100_000_000], 0),
            reads_percent: 90,
            reads_per_transaction: Some(1),
            durability: Durability::Power,
            page_sizes: vec![4096],
            rounds: 1,
            threads: 1,
            writers: 0,
            total_per_layout: 1,
            object_store: None,
        };
        let band = |min: u64, max: u64, mean: f64, size: u64| Band {
            range: SizeBand { min, max, mean },
            share: 0.5,
            size,
        };
        let bands = [
            band(4000, 4000, 4000.0, 4000),
            band(60_000_000, 140_000_000, 100e6, 32_000_000),
        ];
        let text = header(&input, &bands, Path::new("/x"), "ext4");
        assert!(text.contains("4k..4k"), "{text}");
        assert!(text.contains("60m..140m"), "{text}");
        assert!(text.contains("100m"), "{text}");
        assert!(text.contains("32m (cap)"), "{text}");
        assert!(text.contains("note: bands with a mean above 32m"), "{text}");
        let text = header(&input, &bands[..1], Path::new("/x"), "ext4");
        assert!(!text.contains("cap"), "{text}");
    }

    /// A decision whose page size was chosen from 16384's per-round ratios
    /// to 4096.
    fn decision(per_round: &[f64]) -> Decision {
        let vs = Spread::of_ratios(per_round);
        let c = AgainstDefault::decide(4096, vec![(16384, vs.estimate(5))]);
        Decision {
            threshold_between: None,
            page_size: c.chosen,
            page_sizes: vec![(4096, Spread::of_ratios(&[1.0; 5])), (16384, vs)],
            threshold_bytes: None,
            points_inside: 1,
            placement: Placement::AllInside,
            expected_ns: Spread::of(&[100.0; 5]),
            speedup_vs: Vec::new(),
            disk_per_blob: vec![("recommendation".into(), 1000.0)],
            within_noise: Vec::new(),
            page_choice: Some(c),
        }
    }

    #[test]
    fn a_threshold_is_said_with_the_sizes_measured_either_side_and_their_bands() {
        let mut d = decision(&[1.0; 5]);
        d.placement = Placement::Split;
        d.threshold_bytes = Some(833_300.0);
        let band = SizeBand {
            min: 300_000,
            max: 8_400_000,
            mean: 1_000_000.0,
        };
        d.threshold_between = Some([
            crate::result::advise::MeasuredSize {
                size: 512_000,
                band: None,
            },
            crate::result::advise::MeasuredSize {
                size: 1_000_000,
                band: Some(band),
            },
        ]);
        let text = placement_text(&d);
        assert!(text.starts_with("store blobs below 833.3k"), "{text}");
        assert!(
            text.contains("512k and 1m (for blobs 300k..8.4m)"),
            "{text}"
        );
    }

    fn journal(per_round: &[f64]) -> JournalComparison {
        let ratio = Spread::of_ratios(per_round);
        JournalComparison {
            size: 50_000,
            page_size: 4096,
            modes: vec![
                ("wal".into(), "normal".into(), vec![100.0; 5]),
                (
                    "delete".into(),
                    "full".into(),
                    per_round.iter().map(|r| r * 100.0).collect(),
                ),
            ],
            best: "delete".into(),
            best_synchronous: "full".into(),
            rollback_over_wal: ratio,
            // An older result: decided again from its ratio.
            mode_choice: None,
        }
    }

    fn recommended(d: &Decision, j: &JournalComparison) -> String {
        let mut out = String::new();
        recommendation(&mut out, d, j, Durability::Crash);
        out
    }

    #[test]
    fn page_size_and_journal_within_noise_keep_the_defaults_and_say_so() {
        // Faster at the median, slower in two rounds of five.
        let overlapping = [0.90, 1.10, 0.95, 1.05, 0.92];
        let out = recommended(&decision(&overlapping), &journal(&overlapping));
        assert!(out.contains("  page_size=4096 "), "{out}");
        assert!(
            out.contains(
                "    page size: within noise: keeping SQLite's default 4096 (expected time with every blob inside, 16384 / 4096: 0.95x"
            ),
            "{out}"
        );
        assert!(out.contains("the interval contains 1.00)"), "{out}");
        assert!(
            out.contains("  journal_mode=WAL, synchronous=NORMAL "),
            "{out}"
        );
        assert!(
            out.contains("    journal mode: within noise: keeping WAL (the mode every layout above was measured in) (write time, DELETE / WAL: 0.95x"),
            "{out}"
        );
    }

    #[test]
    fn page_size_and_journal_faster_beyond_the_noise_are_recommended() {
        let separated = [0.60, 0.62, 0.59, 0.61, 0.60];
        let out = recommended(&decision(&separated), &journal(&separated));
        assert!(out.contains("  page_size=16384 "), "{out}");
        assert!(
            out.contains("    page size: 16384 recommended: faster than SQLite's default 4096 beyond the noise (expected time with every blob inside, 16384 / 4096: 0.60x"),
            "{out}"
        );
        assert!(
            out.contains("  journal_mode=DELETE, synchronous=FULL "),
            "{out}"
        );
        assert!(
            out.contains("    journal mode: DELETE recommended: faster than WAL"),
            "{out}"
        );
        assert!(!out.contains("within noise"), "{out}");
        // Slower beyond the noise: the defaults, not within noise.
        let slower = [1.5, 1.6, 1.4, 1.5, 1.55];
        let out = recommended(&decision(&slower), &journal(&slower));
        assert!(
            out.contains("page size: SQLite's default 4096 kept: 16384 is slower beyond the noise (expected time with every blob inside, 16384 / 4096: 1.50x"),
            "{out}"
        );
        assert!(out.contains("journal_mode=WAL"), "{out}");
        assert!(!out.contains("within noise"), "{out}");
    }
}
