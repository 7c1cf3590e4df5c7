//! The terminal report of `suite aging`: the volumes the series ran on,
//! then per filesystem, fill and blob size a table with a row per layout
//! and storage age (reads with their interval, the pass's writes,
//! fragments per blob, space and free space), series that stopped early
//! and series skipped, and last this machine's verdicts beside the paper's
//! rule. `groups`, `rows` and `verdict_line` are shared with the HTML view.

use std::fmt::Write as _;

use crate::measure::estimate::{self, Estimate};
use crate::report::table::Table;
use crate::result::aging::{
    AgePoint, AgingSeries, AgingTables, Duel, Kind, PAIRING_MEANING, PAPER_RULE, SizeRange,
    Verdict, VolumeInfo, read_estimates,
};
use crate::units::human_bytes;

/// The table's headers: reads and writes in MB/s, fragments per blob.
pub(crate) const HEADERS: [&str; 11] = [
    "layout",
    "age",
    "read MB/s",
    "write",
    "frags p90,max",
    "runs",
    "frag%",
    "store",
    "freelist",
    "used",
    "free extents",
];

/// What the columns mean, printed once above the tables.
pub(crate) const LEGEND: &str = "age = bytes overwritten / bytes stored, as reached; read = cold reads of whole blobs \
in random order, median of this run's rounds [interval: exact sign-test order statistics, 95% unless another coverage is printed beside it]; write = MB/s of the pass that reached the age (the fill at age 0); \
frags = fragments per blob, mean (p90, max); runs = SQLite page runs per blob; frag% = blobs in more than one fragment; \
store = the store's allocated bytes; freelist = SQLite's free pages; used = the volume's used share; \
free extents = the filesystem's free space: count x mean size";

/// The series of one filesystem, fill and size range, in the order run.
pub(crate) struct Group<'a> {
    /// The filesystem.
    pub fs: &'a str,
    /// The occupancy asked, 0 to 1.
    pub fill: f64,
    /// The blobs' sizes.
    pub sizes: SizeRange,
    /// Its series, one per layout.
    pub series: Vec<&'a AgingSeries>,
}

impl Group<'_> {
    /// "ext4, 256K, 50% full (reached 49.7%)".
    pub fn title(&self) -> String {
        let reached: Vec<f64> = self.series.iter().map(|s| s.fill_reached * 100.0).collect();
        let lo = reached.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = reached.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let reached = if (hi - lo).abs() < 0.05 {
            format!("{lo:.1}%")
        } else {
            format!("{lo:.1}-{hi:.1}%")
        };
        format!(
            "{}, {}, {:.0}% full (reached {reached})",
            self.fs,
            self.sizes.label(),
            self.fill * 100.0
        )
    }
}

/// The series grouped by (filesystem, fill, size range), in the order run.
pub(crate) fn groups(t: &AgingTables) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for s in &t.series {
        match out
            .iter_mut()
            .find(|g| g.fs == s.fs && g.fill == s.fill_target && g.sizes == s.sizes)
        {
            Some(g) => g.series.push(s),
            None => out.push(Group {
                fs: &s.fs,
                fill: s.fill_target,
                sizes: s.sizes,
                series: vec![s],
            }),
        }
    }
    out
}

/// The whole report, lines ending in "\n", at most 120 columns but for
/// the tables' widest cells.
pub fn render(t: &AgingTables) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "blobbench suite aging: {}", describe(t));
    wrap(
        &mut out,
        &format!("writes: {}; cold reads: {}", t.writes, t.cold),
        "",
    );
    let _ = writeln!(out, "volumes:");
    for v in &t.volumes {
        wrap(&mut out, &volume_line(v), "  ");
    }
    wrap(&mut out, LEGEND, "");
    for g in groups(t) {
        let _ = writeln!(out, "\n{}", g.title());
        let mut table = Table::new(HEADERS);
        for row in rows(&g.series, volume(t, g.fs)) {
            table.row(row);
        }
        out.push_str(&table.render());
        for line in series_notes(&g.series) {
            wrap(&mut out, &line, "  ");
        }
    }
    for s in &t.skipped {
        wrap(&mut out, &skipped_line(s), "");
    }
    out.push('\n');
    wrap(&mut out, &format!("the paper: \"{PAPER_RULE}\""), "");
    verdicts(t, &mut out);
    let reads = read_estimates(&t.series);
    // Aging's rounds are --read-rounds; its disk is --work's (or --dir's).
    for note in estimate::notes_naming(&reads, "--read-rounds", "--work (or --dir)") {
        wrap(&mut out, &note, "");
    }
    out
}

/// The verdicts under a heading per filesystem, size and fill naming what
/// the paper says there, a line per age.
fn verdicts(t: &AgingTables, out: &mut String) {
    let _ = writeln!(out, "this machine beside it:");
    let mut heading = String::new();
    let verdicts = t.verdicts();
    for v in &verdicts {
        let h = format!(
            "{}, {}, {:.0}% full: the paper says {}",
            v.fs,
            v.sizes.label(),
            v.fill_target * 100.0,
            v.paper.words()
        );
        if h != heading {
            wrap(out, &h, "  ");
            heading = h;
        }
        let line = format!(
            "age {}: {}: {}",
            v.age,
            verdict_body(v),
            v.agreement.words()
        );
        wrap(out, &line, "    ");
    }
    if verdicts.iter().any(|v| v.lead.is_some()) {
        wrap(out, &format!("ratios: {PAIRING_MEANING}"), "  ");
    }
}

/// Appends `text` as lines of at most 120 columns, each after `indent`,
/// the lines after the first indented two more; words longer than a line
/// stay whole.
fn wrap(out: &mut String, text: &str, indent: &str) {
    const WIDTH: usize = 120;
    let mut line = indent.to_string();
    let mut empty = true;
    for word in text.split(' ') {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = format!("{indent}  ");
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
}

/// The run in one line: series, filesystems, ages, read rounds.
pub(crate) fn describe(t: &AgingTables) -> String {
    let mut fs: Vec<&str> = t.volumes.iter().map(|v| v.fs.as_str()).collect();
    fs.dedup();
    let ages: Vec<String> = std::iter::once(0.0)
        .chain(t.ages.iter().copied())
        .map(|a| format!("{a}"))
        .collect();
    format!(
        "{} series on {}, storage ages {}; {} cold read round(s) per point",
        t.series.len(),
        if fs.is_empty() {
            "no volume".into()
        } else {
            fs.join(", ")
        },
        ages.join(", "),
        t.read_rounds
    )
}

/// The volume of filesystem `fs`, if the result lists it.
pub(crate) fn volume<'a>(t: &'a AgingTables, fs: &str) -> Option<&'a VolumeInfo> {
    t.volumes.iter().find(|v| v.fs == fs)
}

/// A volume in one line: what it is, whether its occupancy is exact, how
/// it was made.
pub(crate) fn volume_line(v: &VolumeInfo) -> String {
    let kind = if v.exact {
        format!(
            "{} image of its own, occupancy exact ({} as the filesystem counts it)",
            human_bytes(v.size_bytes),
            human_bytes(v.fs_bytes)
        )
    } else {
        format!(
            "a folder (--dir) of stated capacity {}, occupancy approximate: other files share that filesystem",
            human_bytes(v.size_bytes)
        )
    };
    let mut line = format!("{}: {kind}; {}", v.fs, v.how);
    if let Some(m) = &v.mkfs_version {
        let _ = write!(line, "; {m}");
    }
    if let Some(m) = &v.mount_options {
        let _ = write!(line, "; mounted {m}");
    }
    line
}

/// One row per layout and age, the point after a VACUUM labelled so.
pub(crate) fn rows(series: &[&AgingSeries], volume: Option<&VolumeInfo>) -> Vec<Vec<String>> {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(move |p| row(s, p, volume)))
        .collect()
}

/// A point's row.
fn row(s: &AgingSeries, p: &AgePoint, volume: Option<&VolumeInfo>) -> Vec<String> {
    let f = &p.fragments;
    let counted = f.blobs > 0 && f.unavailable.is_none();
    let layout = if p.vacuumed {
        format!("{} after VACUUM", s.layout)
    } else {
        s.layout.clone()
    };
    let total = volume
        .map(|v| v.fs_bytes)
        .filter(|&b| b > 0)
        .unwrap_or(p.space.volume_used_bytes + p.space.volume_free_bytes);
    vec![
        layout,
        format!("{:.2}", p.age),
        read_text(p),
        format!("{:.1}", p.writes.mb_s()),
        if counted {
            format!("{:.2} ({}, {})", f.mean, f.p90, f.max)
        } else {
            "-".into()
        },
        f.page_runs_mean
            .map(|r| format!("{r:.1}"))
            .unwrap_or_else(|| "-".into()),
        if counted {
            format!("{:.0}%", f.fragmented_share * 100.0)
        } else {
            "-".into()
        },
        human_bytes(p.space.store_bytes),
        if Kind::of(&s.layout) == Some(Kind::Database) || s.layout == "sqlite-ext" {
            human_bytes(p.space.freelist_bytes)
        } else {
            "-".into()
        },
        if total > 0 {
            format!(
                "{:.0}%",
                p.space.volume_used_bytes as f64 * 100.0 / total as f64
            )
        } else {
            "-".into()
        },
        p.space.free_space.as_ref().map_or_else(
            || "-".into(),
            |fs| format!("{} x {}", fs.extents, human_bytes(fs.mean_extent_bytes)),
        ),
    ]
}

/// The read estimate with as many decimals as its size needs, "-" when
/// nothing was read.
fn read_text(p: &AgePoint) -> String {
    if p.read_mb_s.is_empty() {
        return "-".into();
    }
    let e = p.read_estimate();
    e.format(decimals(e.value))
}

/// Decimals that keep three or four significant digits of a rate.
pub(crate) fn decimals(v: f64) -> usize {
    match v.abs() {
        x if x >= 100.0 => 0,
        x if x >= 10.0 => 1,
        _ => 2,
    }
}

/// Under a group's table: series that stopped early and why, and why
/// fragments were not counted where they were not.
pub(crate) fn series_notes(series: &[&AgingSeries]) -> Vec<String> {
    let mut out = Vec::new();
    for s in series {
        if let Some(why) = &s.stopped {
            let last = s.points.iter().rfind(|p| !p.vacuumed);
            let at = last.map_or_else(String::new, |p| format!(" after age {:.2}", p.age));
            out.push(format!("{} stopped early{at}: {why}", s.layout));
        }
        for p in &s.points {
            if let Some(note) = &p.note {
                let when = if p.vacuumed { " after VACUUM" } else { "" };
                out.push(format!("{}{when}: {note}", s.layout));
            }
        }
        let unavailable = s
            .points
            .iter()
            .find_map(|p| p.fragments.unavailable.as_ref());
        if let Some(why) = unavailable {
            out.push(format!("{}: fragments not counted: {why}", s.layout));
        }
    }
    out
}

/// A skipped series in one line.
pub(crate) fn skipped_line(s: &crate::result::aging::SkippedSeries) -> String {
    let layout = if s.layout == "*" {
        "every layout".to_string()
    } else {
        s.layout.clone()
    };
    format!("skipped: {layout} on {}: {}", s.fs, s.reason)
}

/// "sqlite 141 [139-143]".
fn named(side: &(String, Estimate)) -> String {
    format!("{} {}", side.0, side.1.format(decimals(side.1.value)))
}

/// "sqlite faster than dir: 1.41x [1.38-1.44] paired (..)" or "sqlite
/// and dir within noise: 1.02x [0.97-1.08] paired (..)".
fn duel_text(d: &Duel) -> String {
    let figures = format!("{} vs {} MB/s", named(&d.faster), named(&d.slower));
    if d.separated() {
        format!(
            "{} faster than {}: {} ({figures})",
            d.faster.0,
            d.slower.0,
            d.ratio_text()
        )
    } else {
        format!(
            "{} and {} within noise: {} ({figures})",
            d.faster.0,
            d.slower.0,
            d.ratio_text()
        )
    }
}

/// One verdict in one line, as the HTML summary lists them: where, the
/// verdict and the paper's call.
pub(crate) fn verdict_line(v: &Verdict) -> String {
    format!(
        "{}, {}, {:.0}% full, age {}: {} | paper: {}: {}",
        v.fs,
        v.sizes.label(),
        v.fill_target * 100.0,
        v.age,
        verdict_body(v),
        v.paper.words(),
        v.agreement.words()
    )
}

/// What read fastest: the two fastest, the best of each kind when they are
/// not those two, and the point after VACUUM.
fn verdict_body(v: &Verdict) -> String {
    let mut line = String::new();
    match (&v.lead, v.ranking.first()) {
        (Some(d), _) => line.push_str(&duel_text(d)),
        (None, Some(only)) => {
            let _ = write!(line, "only {} MB/s measured", named(only));
        }
        (None, None) => line.push_str("nothing read"),
    }
    let same = |a: &Duel, b: &Duel| a.faster.0 == b.faster.0 && a.slower.0 == b.slower.0;
    if let Some(k) = &v.kinds
        && !v.lead.as_ref().is_some_and(|l| same(l, k))
    {
        match v.winner() {
            Some(kind) => {
                let _ = write!(
                    line,
                    "; {} faster: {} over {} {}",
                    kind.name(),
                    k.faster.0,
                    k.slower.0,
                    k.ratio_text()
                );
            }
            None => {
                let _ = write!(
                    line,
                    "; database and filesystem within noise ({} vs {}: {})",
                    k.faster.0,
                    k.slower.0,
                    k.ratio_text()
                );
            }
        }
    }
    if let Some(vac) = &v.vacuumed {
        let _ = write!(
            line,
            "; {} after VACUUM {} MB/s",
            vac.0,
            vac.1.format(decimals(vac.1.value))
        );
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::aging::SkippedSeries;
    use crate::result::aging::sample::{point, series, tables};

    const FAST: [f64; 5] = [140.0, 142.0, 139.0, 141.0, 143.0];
    const SLOW: [f64; 5] = [100.0, 101.0, 99.0, 102.0, 98.0];

    fn aged() -> AgingTables {
        let mut sqlite = series(
            "sqlite",
            100_000,
            vec![point(0.0, &FAST), point(1.0, &SLOW)],
        );
        let mut vacuumed = point(1.0, &FAST);
        vacuumed.vacuumed = true;
        vacuumed.fragments.page_runs_mean = Some(1.5);
        sqlite.points.push(vacuumed);
        let mut dir = series("dir", 100_000, vec![point(0.0, &SLOW)]);
        dir.stopped = Some("the volume filled up".into());
        let mut t = tables(vec![sqlite, dir]);
        t.skipped.push(SkippedSeries {
            fs: "xfs".into(),
            layout: "*".into(),
            reason: "mkfs.xfs not found".into(),
        });
        t
    }

    #[test]
    fn a_row_per_point_with_vacuum_stops_skips_and_verdicts() {
        let out = render(&aged());
        // Three sqlite points and one dir point, each a row of its own.
        let rows: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("sqlite") || l.starts_with("dir "))
            .collect();
        assert_eq!(rows.len(), 4, "{out}");
        assert!(rows[0].contains("141 [139-143]"), "{out}");
        assert!(
            rows[1].starts_with("sqlite ") && rows[1].contains("1.02"),
            "{out}"
        );
        assert!(rows[2].starts_with("sqlite after VACUUM"), "{out}");
        assert!(rows[2].contains("1.5"), "page runs shown: {out}");
        assert!(
            rows[3].contains("2.00 (4, 9)") && rows[3].contains("40%"),
            "{out}"
        );
        assert!(rows[3].contains("12 x 2.1 MB"), "{out}");
        assert!(
            out.contains("dir stopped early after age 0.02: the volume filled up"),
            "{out}"
        );
        assert!(
            out.contains("skipped: every layout on xfs: mkfs.xfs not found"),
            "{out}"
        );
        assert!(
            out.contains("ext4: 67.1 MB image of its own, occupancy exact"),
            "{out}"
        );
        let words: Vec<&str> = out.split_whitespace().collect();
        assert!(words.join(" ").contains(PAPER_RULE), "quoted whole: {out}");
        assert!(
            out.contains("  ext4, 100.0 kB, 50% full: the paper says database up to 256K\n"),
            "{out}"
        );
        assert!(
            out.contains("    age 0: sqlite faster than dir: 1.41x"),
            "{out}"
        );
        // The ratio with its interval, labelled: this result's rounds were
        // not read side by side.
        let text = words.join(" ");
        assert!(
            text.contains(
                "age 0: sqlite faster than dir: 1.41x [1.38-1.44] unpaired (sqlite 141 [139-143]"
            ),
            "{out}"
        );
        assert!(text.contains("MB/s): agrees "), "{out}");
        assert!(
            text.contains("ratios: paired = the median of per-round ratios"),
            "{out}"
        );
        // Age 1: only sqlite was measured, with its VACUUM point apart.
        assert!(text.contains("age 1: only sqlite 100 [98-102]"), "{out}");
        assert!(
            text.contains("MB/s measured; sqlite after VACUUM 141"),
            "{out}"
        );
        for line in out.lines() {
            assert!(
                line.chars().count() <= 120,
                "wider than 120 columns: {line}"
            );
        }
    }

    #[test]
    fn overlapping_reads_are_within_noise() {
        let near = [138.0, 145.0, 136.0, 141.0, 144.0];
        let t = tables(vec![
            series("sqlite", 2 << 20, vec![point(0.0, &FAST)]),
            series("dir", 2 << 20, vec![point(0.0, &near)]),
        ]);
        let out = render(&t);
        let text = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains("sqlite and dir within noise: 1.00x ["),
            "{out}"
        );
        assert!(out.contains("the paper says filesystem from 1M"), "{out}");
        assert!(text.contains("MB/s): within noise: no call"), "{out}");
    }

    #[test]
    fn paired_rounds_are_labelled_paired_and_their_ratio_is_per_round() {
        // Per-round ratios 2, 0.5, 2, 2, 2: paired, 2.00x; the medians'
        // ratio would be 1.50x.
        let mut t = tables(vec![
            series(
                "sqlite",
                100_000,
                vec![point(0.0, &[100.0, 200.0, 300.0, 400.0, 500.0])],
            ),
            series(
                "dir",
                100_000,
                vec![point(0.0, &[50.0, 400.0, 150.0, 200.0, 250.0])],
            ),
        ]);
        t.pairing = crate::result::aging::RoundPairing::Paired;
        let text = render(&t).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains("within noise: 2.00x [0.50-2.00]"), "{text}");
        assert!(text.contains(" paired (sqlite 300"), "{text}");
        assert!(!text.contains("1.50x"), "{text}");
    }
}
