//! The decision at a storage age (`advise --aging FILE --age N`): a fresh
//! calibration says little about a store that will be overwritten many
//! times (Sears, van Ingen and Gray found fragmentation decides after a few
//! overwrites), so each layout's times are scaled by how much slower the
//! same layout read and wrote at that age in a `suite aging` result, and
//! the recommendation is drawn again.
//!
//! Per advise layout: the aging series of the matching layout (sqlite for
//! blobs inside the database, sqlite-ext for files named in it, dir for
//! plain files) on the calibration folder's filesystem where the file has
//! one, at the fill with the most measured ages, and per advise size the
//! series with the nearest mean blob size. Reads, linear in age between
//! measured ages:
//!
//! - the database's factor is its read time at the age over its time at
//!   age 0: the ratio of the medians, with a bootstrap interval resampling
//!   each age's rounds on their own (rounds of two ages are never read side
//!   by side, so they are never paired);
//! - another layout's factor, where the result read the layouts' rounds
//!   side by side (paired) and has the database's series of the same
//!   filesystem, fill and size, is the database's factor times how its
//!   standing against the database moved: its read time over the
//!   database's, the median of the per-round (paired) ratios with their
//!   interval, at the age against at age 0;
//! - otherwise (a result written before the rounds were paired) its own
//!   factor, as the database's: labelled unpaired.
//!
//! A factor whose evidence is within noise (a ratio's interval contains
//! 1.00; the paired standings' intervals at the age and at age 0 overlap)
//! is not applied: the fresh measurement is kept, and the note says so.
//! One factor per layout and size scales every round of advise's own,
//! which stay paired among themselves; writes: the fill's rate over the
//! aging pass's (one pass per age, one value).

use crate::measure::estimate::Estimate;
use crate::result::advise::{
    AgedLayout, AgedSize, AgingAdjustment, Decision, LayoutKind, PointResult,
};
use crate::result::aging::{AgePoint, AgingSeries, AgingTables, RoundPairing, read_ratio};

/// A `suite aging` result and the age to decide at, as the command loaded
/// and checked them.
#[derive(Debug, Clone)]
pub struct AgingInput {
    /// The file, as given (recorded in the result).
    pub file: String,
    /// Its tables.
    pub tables: AgingTables,
    /// The storage age the application will reach: bytes overwritten over
    /// bytes stored (at least 0).
    pub age: f64,
}

/// Each advise layout that aging measures, and the aging layout measuring
/// it. (sqlite-incremental is another way to run the same database; the
/// plain sqlite series stand for advise's database layout.)
const MAP: [(LayoutKind, &str); 3] = [
    (LayoutKind::Db, "sqlite"),
    (LayoutKind::DbFiles, "sqlite-ext"),
    (LayoutKind::Files, "dir"),
];

/// The points of a series a factor can be drawn from: not after a VACUUM,
/// with reads measured, in order of the age reached.
fn usable(s: &AgingSeries) -> Vec<&AgePoint> {
    let mut v: Vec<&AgePoint> = s
        .points
        .iter()
        .filter(|p| !p.vacuumed && p.read_mb_s.iter().any(|&r| r > 0.0))
        .collect();
    v.sort_by(|a, b| a.age.total_cmp(&b.age));
    v
}

/// Why `tables` cannot adjust advise (None when it can): it needs, for at
/// least one of the layouts advise measures, a series with age 0 and at
/// least one later age measured.
pub fn unusable(tables: &AgingTables) -> Option<String> {
    if tables.series.is_empty() {
        return Some("it has no series".into());
    }
    if tables.ages.is_empty() {
        return Some("it measured no age after 0".into());
    }
    let aged = tables
        .series
        .iter()
        .filter(|s| MAP.iter().any(|(_, l)| *l == s.layout))
        .any(|s| usable(s).len() >= 2);
    (!aged).then(|| "none of its sqlite, sqlite-ext or dir series has reads at two ages".into())
}

/// The measured points a series' figures at an age are drawn from: age 0,
/// the two measured ages around the age and where it lies between them.
#[derive(Debug, Clone, Copy)]
struct Bracket<'a> {
    base: &'a AgePoint,
    lo: &'a AgePoint,
    hi: &'a AgePoint,
    /// Where the age lies from `lo` (0) to `hi` (1).
    t: f64,
    /// Beyond the last measured age (its rates held flat).
    extrapolated: bool,
}

impl Bracket<'_> {
    /// The measured ages interpolated between (one when the age fell on
    /// one, or beyond the last).
    fn ages(&self) -> Vec<f64> {
        if std::ptr::eq(self.lo, self.hi) {
            vec![self.lo.age]
        } else {
            vec![self.lo.age, self.hi.age]
        }
    }
}

/// The bracket of storage age `age` in series `s`, or None when it has no
/// reads at two ages. Between two measured ages the figures are linear in
/// age; beyond the last, the last age's hold (flat).
fn bracket(s: &AgingSeries, age: f64) -> Option<Bracket<'_>> {
    let pts = usable(s);
    if pts.len() < 2 {
        return None;
    }
    let (base, last) = (pts[0], pts[pts.len() - 1]);
    let (lo, hi, t, extrapolated) = if age >= last.age {
        (last, last, 0.0, age > last.age)
    } else if age <= base.age {
        (base, base, 0.0, false)
    } else {
        let i = pts.iter().rposition(|p| p.age <= age).unwrap_or(0);
        let (lo, hi) = (pts[i], pts[i + 1]);
        if lo.age == age {
            (lo, lo, 0.0, false)
        } else {
            (lo, hi, (age - lo.age) / (hi.age - lo.age), false)
        }
    };
    Some(Bracket {
        base,
        lo,
        hi,
        t,
        extrapolated,
    })
}

/// `a + t (b - a)`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + t * (b - a)
}

/// An estimate between two, the figure and each bound linear in `t`.
fn lerp_estimate(a: Estimate, b: Estimate, t: f64) -> Estimate {
    Estimate {
        value: lerp(a.value, b.value, t),
        low: lerp(a.low, b.low, t),
        high: lerp(a.high, b.high, t),
        n: a.n.min(b.n),
        ..a
    }
}

/// 1 over an estimate: the figure inverted, the bounds swapped.
fn invert(e: Estimate) -> Estimate {
    Estimate {
        value: 1.0 / e.value,
        low: 1.0 / e.high,
        high: 1.0 / e.low,
        ..e
    }
}

/// Whether an estimate can call a ratio different from 1: an interval
/// that does not contain 1.00.
fn beyond_noise(e: &Estimate) -> bool {
    e.has_interval() && !e.contains(1.0) && e.value.is_finite()
}

/// How a layout's read factor at the age was drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadEvidence {
    /// The layout's own reads at the age against at age 0: a ratio of the
    /// medians of rounds read at different times, its interval a bootstrap
    /// of each age's rounds on their own.
    Own(Estimate),
    /// Against the database of the same group, round by round: this
    /// layout's read time over the database's (the median of the paired
    /// per-round ratios, with its interval) at age 0 and at the age.
    AgainstDatabase {
        /// The standing at age 0.
        fresh: Estimate,
        /// The standing at the age.
        aged: Estimate,
    },
}

impl ReadEvidence {
    /// Whether the evidence is within noise: the own ratio's interval
    /// contains 1.00, or the paired standings' intervals overlap.
    pub fn within_noise(&self) -> bool {
        match self {
            ReadEvidence::Own(e) => !beyond_noise(e),
            ReadEvidence::AgainstDatabase { fresh, aged } => {
                !(fresh.has_interval() && aged.has_interval()) || fresh.overlaps(aged)
            }
        }
    }

    /// The factor it gives, before the noise is judged: the own ratio, or
    /// how far the standing moved.
    fn factor(&self) -> f64 {
        match self {
            ReadEvidence::Own(e) => e.value,
            ReadEvidence::AgainstDatabase { fresh, aged } => aged.value / fresh.value,
        }
    }

    /// What it is, in words, for the note.
    fn words(&self, age: f64) -> String {
        match self {
            ReadEvidence::Own(e) => format!(
                "read time at age {age} over age 0's {} unpaired (a ratio of medians of rounds read at different times)",
                e.format_ratio()
            ),
            ReadEvidence::AgainstDatabase { fresh, aged } => format!(
                "read time over the database's, paired round by round: {} at age 0, {} at age {age}",
                fresh.format_ratio(),
                aged.format_ratio()
            ),
        }
    }
}

/// The factors of one series at `age`.
#[derive(Debug, Clone, PartialEq)]
pub struct Factors {
    /// The read time at `age` over age 0's, as applied to every round:
    /// 1.00 where the evidence is within noise.
    pub read: f64,
    /// What the read factor was drawn from.
    pub evidence: ReadEvidence,
    /// The database's factor the read factor includes, for a layout
    /// judged against the database (as applied).
    pub database: Option<f64>,
    /// The fill's write MB/s over the pass's at `age`.
    pub write: f64,
    /// The measured ages interpolated between.
    pub ages: Vec<f64>,
    /// True when `age` is beyond the last measured age.
    pub extrapolated: bool,
}

impl Factors {
    /// Whether the read evidence was within noise (the factor not applied).
    pub fn within_noise(&self) -> bool {
        self.evidence.within_noise()
    }
}

/// Series `s`'s own read time at the bracket's age over its time at age 0,
/// with the interval of rounds read at different times (never paired:
/// interpolated between the two measured ages figure and bounds alike).
fn own_read(b: &Bracket) -> Estimate {
    // Rates at the age over age 0's, then inverted into times.
    let rate = |p: &AgePoint| read_ratio(&p.read_mb_s, &b.base.read_mb_s, RoundPairing::Unpaired);
    invert(lerp_estimate(rate(b.lo), rate(b.hi), b.t))
}

/// The write factor: the fill's write MB/s over the pass's at the age (1
/// where the file has no write rates).
fn write_factor(b: &Bracket) -> f64 {
    // Age 0's writes are the fill's; each later point's, the pass that
    // brought the store there.
    let at = lerp(b.lo.writes.mb_s(), b.hi.writes.mb_s(), b.t);
    let write = b.base.writes.mb_s() / at;
    if write.is_finite() && write > 0.0 {
        write
    } else {
        1.0
    }
}

/// The factors of series `s` at storage age `age` from its own reads, or
/// None when it has no reads at two ages.
pub fn factors(s: &AgingSeries, age: f64) -> Option<Factors> {
    let b = bracket(s, age)?;
    let evidence = ReadEvidence::Own(own_read(&b));
    Some(finish(&b, evidence, None))
}

/// The factors of series `s` at `age` judged against `db`, the database's
/// series of the same filesystem, fill and size whose rounds were read
/// side by side with `s`'s; None when `db` lacks a point at one of the
/// ages `s` is drawn from (then `s` is judged on its own).
pub fn factors_against(s: &AgingSeries, db: &AgingSeries, age: f64) -> Option<Factors> {
    let b = bracket(s, age)?;
    let db_bracket = bracket(db, age)?;
    let database = applied(&ReadEvidence::Own(own_read(&db_bracket)));
    // This layout's time over the database's, round by round: the
    // database's rate over this layout's.
    let standing = |p: &AgePoint| {
        let d = db.at(p.target_age).filter(|d| !d.read_mb_s.is_empty())?;
        Some(read_ratio(&d.read_mb_s, &p.read_mb_s, RoundPairing::Paired))
    };
    let fresh = standing(b.base)?;
    let aged = lerp_estimate(standing(b.lo)?, standing(b.hi)?, b.t);
    let evidence = ReadEvidence::AgainstDatabase { fresh, aged };
    Some(finish(&b, evidence, Some(database)))
}

/// The factor a piece of evidence gives, as applied: 1.00 within noise.
fn applied(e: &ReadEvidence) -> f64 {
    let f = e.factor();
    if e.within_noise() || !f.is_finite() || f <= 0.0 {
        1.0
    } else {
        f
    }
}

fn finish(b: &Bracket, evidence: ReadEvidence, database: Option<f64>) -> Factors {
    let read = applied(&evidence) * database.unwrap_or(1.0);
    Factors {
        read,
        evidence,
        database,
        write: write_factor(b),
        ages: b.ages(),
        extrapolated: b.extrapolated,
    }
}

/// The note on one layout's read factor at one size: the evidence, and
/// whether it was applied or within noise (the fresh measurement kept).
fn read_note(kind: LayoutKind, size: u64, age: f64, f: &Factors) -> String {
    let head = format!(
        "{}, {}: {}",
        kind_words(kind),
        crate::units::human_bytes(size),
        f.evidence.words(age)
    );
    match (f.within_noise(), f.database) {
        (true, None) => format!("{head}: within noise: not applied, the fresh reads kept"),
        (true, Some(d)) => format!(
            "{head}: within noise: the fresh standing against the database kept, read x {d:.2} (the database's own)"
        ),
        (false, None) => format!("{head}: applied, read x {:.2}", f.read),
        (false, Some(d)) => format!(
            "{head}: applied, read x {:.2} (the standing's move {:.2} x the database's own {d:.2})",
            f.read,
            f.read / d
        ),
    }
}

/// The series of `layout` that can give factors, on the filesystem `fs`
/// when the file has any there (else the first filesystem listed, said in
/// `notes`), at the fill with the most measured ages.
fn chosen<'a>(
    tables: &'a AgingTables,
    layout: &str,
    fs: &str,
    notes: &mut Vec<String>,
) -> Vec<&'a AgingSeries> {
    let all: Vec<&AgingSeries> = tables
        .series
        .iter()
        .filter(|s| s.layout == layout && usable(s).len() >= 2)
        .collect();
    let Some(first) = all.first() else {
        return Vec::new();
    };
    let on = if all.iter().any(|s| s.fs == fs) {
        fs
    } else {
        notes.push(format!(
            "no {layout} series on {fs}: used the ones on {}",
            first.fs
        ));
        first.fs.as_str()
    };
    let on_fs: Vec<&AgingSeries> = all.into_iter().filter(|s| s.fs == on).collect();
    // The fill whose series measured the most ages (the first such fill).
    let ages_of = |fill: f64| {
        on_fs
            .iter()
            .filter(|s| s.fill_target == fill)
            .map(|s| usable(s).len())
            .max()
            .unwrap_or(0)
    };
    let mut fill = on_fs[0].fill_target;
    for s in &on_fs {
        if ages_of(s.fill_target) > ages_of(fill) {
            fill = s.fill_target;
        }
    }
    on_fs
        .into_iter()
        .filter(|s| s.fill_target == fill)
        .collect()
}

/// The series whose mean blob size is nearest `size` on a log scale.
fn nearest<'a>(series: &[&'a AgingSeries], size: u64) -> Option<&'a AgingSeries> {
    let dist = |s: &AgingSeries| {
        ((s.sizes.mean().max(1) as f64) / size.max(1) as f64)
            .ln()
            .abs()
    };
    series
        .iter()
        .copied()
        .min_by(|a, b| dist(a).total_cmp(&dist(b)))
}

/// Every advise layout's factors at `input.age` for the sizes of `points`,
/// with what was assumed; `fs` is the calibration folder's filesystem.
/// `unaged` is the decision without aging, kept for the record.
pub fn adjustment(
    input: &AgingInput,
    fs: &str,
    points: &[PointResult],
    unaged: Decision,
) -> AgingAdjustment {
    let mut notes = Vec::new();
    let mut layouts = Vec::new();
    for (kind, name) in MAP {
        let series = chosen(&input.tables, name, fs, &mut notes);
        let Some(first) = series.first() else {
            notes.push(format!(
                "{} has no {name} series with reads at two ages: {} not aged",
                input.file,
                kind_words(kind)
            ));
            continue;
        };
        let sizes = points
            .iter()
            .filter_map(|p| {
                let s = nearest(&series, p.size)?;
                let f = judged(&input.tables, s, input.age)?;
                notes.push(read_note(kind, p.size, input.age, &f));
                Some(AgedSize {
                    size: p.size,
                    series: s.name(),
                    series_size: s.sizes.mean(),
                    ages: f.ages,
                    extrapolated: f.extrapolated,
                    read_factor: vec![f.read],
                    write_factor: f.write,
                })
            })
            .collect();
        layouts.push(AgedLayout {
            kind,
            aging_layout: name.into(),
            fs: first.fs.clone(),
            fill: first.fill_target,
            sizes,
        });
    }
    if points
        .iter()
        .any(|p| p.layout(LayoutKind::ObjectStore, None).is_some())
    {
        notes.push("the object store is not aged (suite aging does not measure one)".into());
    }
    AgingAdjustment {
        file: input.file.clone(),
        age: input.age,
        fs: fs.into(),
        layouts,
        notes,
        unaged,
    }
}

/// The factors of series `s` at `age`: against the database's series of
/// the same filesystem, fill and size where the result read their rounds
/// side by side, else from its own reads.
fn judged(tables: &AgingTables, s: &AgingSeries, age: f64) -> Option<Factors> {
    let db = tables.series.iter().find(|d| {
        d.layout == DATABASE && d.fs == s.fs && d.fill_target == s.fill_target && d.sizes == s.sizes
    });
    match db {
        Some(db) if tables.pairing == RoundPairing::Paired && s.layout != DATABASE => {
            factors_against(s, db, age).or_else(|| factors(s, age))
        }
        _ => factors(s, age),
    }
}

/// The aging layout every other is judged against: blobs inside the
/// database (advise's default, the simplest: one file).
const DATABASE: &str = "sqlite";

/// A layout kind in words, for notes.
fn kind_words(kind: LayoutKind) -> &'static str {
    match kind {
        LayoutKind::Db => "blobs inside the database",
        LayoutKind::DbFiles => "files named in the database",
        LayoutKind::Files => "plain files",
        LayoutKind::ObjectStore => "the object store",
    }
}

/// The points with every aged layout's times scaled by its factors at the
/// point's size (the database's for every page size): every read by the
/// read factor (one value, so advise's rounds keep their own pairing; an
/// adjustment written before held one per aging round, applied round `r`
/// by factor `r` modulo their count), every write by the write factor.
/// Layouts without factors stay as measured.
pub fn under_aging(points: &[PointResult], adj: &AgingAdjustment) -> Vec<PointResult> {
    let mut out = points.to_vec();
    for p in &mut out {
        for l in &mut p.layouts {
            let Some(a) = adj
                .layouts
                .iter()
                .find(|a| a.kind == l.kind)
                .and_then(|a| a.sizes.iter().find(|s| s.size == p.size))
            else {
                continue;
            };
            let n = a.read_factor.len().max(1);
            for (r, x) in l.read_ns.iter_mut().enumerate() {
                *x *= a.read_factor.get(r % n).copied().unwrap_or(1.0);
            }
            for x in &mut l.write_ns {
                *x *= a.write_factor;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::advise::{LayoutResult, Placement};
    use crate::result::aging::{Fragments, SizeRange, SpaceUse, WritePass};

    /// A point at `age` reading `reads` MB/s per round, its pass writing
    /// at `write` MB/s.
    fn pt(age: f64, reads: &[f64], write: f64) -> AgePoint {
        AgePoint {
            target_age: age,
            age,
            vacuumed: false,
            note: None,
            blobs: 10,
            stored_bytes: 1,
            read_mb_s: reads.to_vec(),
            blobs_read: 10,
            writes: WritePass {
                blobs: 10,
                bytes: 1_000_000,
                // 10^6 bytes at `write` MB/s.
                ns: (1e9 / write) as u64,
                sync_ns: 0,
            },
            fragments: Fragments::default(),
            space: SpaceUse::default(),
        }
    }

    fn series(fs: &str, layout: &str, size: u64, fill: f64, points: Vec<AgePoint>) -> AgingSeries {
        AgingSeries {
            fs: fs.into(),
            layout: layout.into(),
            sizes: SizeRange {
                min: size,
                max: size,
            },
            fill_target: fill,
            fill_reached: fill,
            settings: String::new(),
            points,
            stopped: None,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Five rounds around `rate`, 2% apart at most.
    fn rounds(rate: f64) -> Vec<f64> {
        [1.0, 1.01, 0.99, 1.02, 0.98]
            .iter()
            .map(|w| rate * w)
            .collect()
    }

    #[test]
    fn factors_interpolate_linearly_in_age_and_hold_flat_beyond_the_last() {
        // Reads 100 -> 80 (age 1) -> 40 (age 4); writes 50 -> 25 -> 25.
        let s = series(
            "ext4",
            "dir",
            1 << 20,
            0.5,
            vec![
                pt(0.0, &rounds(100.0), 50.0),
                pt(1.0, &rounds(80.0), 25.0),
                pt(4.0, &rounds(40.0), 25.0),
            ],
        );
        // Age 0 against itself: 1.00 and within noise.
        let f = factors(&s, 0.0).unwrap();
        assert!(f.within_noise(), "{f:?}");
        assert_eq!(f.read, 1.0);
        assert!(close(f.write, 1.0));
        let f = factors(&s, 1.0).unwrap();
        assert!(!f.within_noise(), "{f:?}");
        assert!(close(f.read, 1.25), "{f:?}");
        assert!(close(f.write, 2.0));
        assert_eq!(f.ages, vec![1.0]);
        // Unpaired (two ages are never read side by side): its interval
        // is a bootstrap of each age's rounds, around the medians' ratio.
        let ReadEvidence::Own(e) = f.evidence else {
            panic!("{f:?}")
        };
        assert!(e.low < 1.25 && 1.25 < e.high && e.low > 1.0, "{e:?}");
        // Age 2.5: halfway between 80 and 40 is 60.
        let f = factors(&s, 2.5).unwrap();
        assert!(close(f.read, 100.0 / 60.0), "{f:?}");
        assert_eq!(f.ages, vec![1.0, 4.0]);
        assert!(!f.extrapolated);
        // Age 0.5: between the fill (100) and age 1 (80): 90.
        let f = factors(&s, 0.5).unwrap();
        assert!(close(f.read, 100.0 / 90.0), "{f:?}");
        assert!(close(f.write, 50.0 / 37.5), "{f:?}");
        // Beyond age 4: age 4's rates, said to be extrapolated.
        let f = factors(&s, 10.0).unwrap();
        assert!(close(f.read, 2.5), "{f:?}");
        assert!(f.extrapolated);
        assert_eq!(f.ages, vec![4.0]);
        // Exactly the last age is measured, not extrapolated.
        assert!(!factors(&s, 4.0).unwrap().extrapolated);
    }

    #[test]
    fn factors_skip_vacuumed_points_and_need_two_ages() {
        let mut vacuumed = pt(1.0, &rounds(500.0), 50.0);
        vacuumed.vacuumed = true;
        let s = series(
            "ext4",
            "sqlite",
            1 << 18,
            0.5,
            vec![
                pt(0.0, &rounds(100.0), 50.0),
                pt(1.0, &rounds(50.0), 50.0),
                vacuumed,
            ],
        );
        let f = factors(&s, 1.0).unwrap();
        assert!(close(f.read, 2.0), "the VACUUM's point is not age 1: {f:?}");
        let alone = series(
            "ext4",
            "sqlite",
            1 << 18,
            0.5,
            vec![pt(0.0, &[100.0], 50.0)],
        );
        assert!(factors(&alone, 1.0).is_none());
        let tables = AgingTables {
            ages: vec![1.0],
            series: vec![alone],
            ..Default::default()
        };
        assert!(unusable(&tables).unwrap().contains("two ages"));
        assert!(
            unusable(&AgingTables::default())
                .unwrap()
                .contains("no series")
        );
        // One round an age: no interval, so nothing beyond the noise.
        let one = series(
            "ext4",
            "dir",
            1 << 18,
            0.5,
            vec![pt(0.0, &[100.0], 50.0), pt(1.0, &[50.0], 50.0)],
        );
        let f = factors(&one, 1.0).unwrap();
        assert!(f.within_noise() && f.read == 1.0, "{f:?}");
    }

    /// Reads of `size` in `fs`'s `layout` at `fill` dropping to `aged`
    /// MB/s from 100 at age 4.
    fn aged(fs: &str, layout: &str, size: u64, fill: f64, aged: f64) -> AgingSeries {
        series(
            fs,
            layout,
            size,
            fill,
            vec![pt(0.0, &[100.0; 3], 50.0), pt(4.0, &[aged; 3], 50.0)],
        )
    }

    fn layout(kind: LayoutKind, page: Option<u32>, ns: f64) -> LayoutResult {
        LayoutResult {
            layout: format!("{kind:?}"),
            kind,
            page_size: page,
            read_ns: vec![ns, ns * 1.01, ns * 0.99],
            write_ns: vec![ns, ns * 1.01, ns * 0.99],
            space_bytes: 1000,
        }
    }

    fn point(size: u64, db: f64, files: f64) -> PointResult {
        PointResult {
            size,
            share: 0.5,
            blobs: 10,
            writes: 10,
            layouts: vec![
                layout(LayoutKind::Db, Some(4096), db),
                layout(LayoutKind::DbFiles, None, files),
                layout(LayoutKind::Files, None, files),
            ],
            band: None,
        }
    }

    #[test]
    fn the_series_is_chosen_by_filesystem_then_fill_then_nearest_size() {
        let tables = AgingTables {
            ages: vec![4.0],
            series: vec![
                // xfs first in the file: used only when ext4 has none.
                aged("xfs", "dir", 1 << 20, 0.5, 10.0),
                aged("ext4", "dir", 256 << 10, 0.5, 50.0),
                aged("ext4", "dir", 1 << 20, 0.5, 25.0),
                // A fill with fewer ages than 50%'s: not used.
                series("ext4", "dir", 1 << 20, 0.9, vec![pt(0.0, &[100.0], 50.0)]),
                aged("xfs", "sqlite", 1 << 20, 0.9, 100.0),
            ],
            ..Default::default()
        };
        let input = AgingInput {
            file: "a.json".into(),
            tables,
            age: 4.0,
        };
        let pts = [point(200_000, 1.0, 1.0), point(3_000_000, 1.0, 1.0)];
        let adj = adjustment(&input, "ext4", &pts, decide_fresh(&pts));
        let dir = adj
            .layouts
            .iter()
            .find(|l| l.kind == LayoutKind::Files)
            .unwrap();
        assert_eq!((dir.fs.as_str(), dir.fill), ("ext4", 0.5));
        // 200 KB is nearest 256K; 3 MB nearest 1M.
        assert_eq!(dir.sizes[0].series_size, 256 << 10, "{:?}", dir.sizes[0]);
        assert_eq!(dir.sizes[1].series_size, 1 << 20, "{:?}", dir.sizes[1]);
        assert!(close(dir.sizes[0].read_factor[0], 2.0));
        assert!(close(dir.sizes[1].read_factor[0], 4.0));
        // sqlite exists on xfs only: used, and said.
        let db = adj
            .layouts
            .iter()
            .find(|l| l.kind == LayoutKind::Db)
            .unwrap();
        assert_eq!((db.fs.as_str(), db.fill), ("xfs", 0.9));
        assert!(
            adj.notes
                .iter()
                .any(|n| n.contains("no sqlite series on ext4")),
            "{:?}",
            adj.notes
        );
        // sqlite-ext is missing: not aged, and said.
        assert!(adj.layouts.iter().all(|l| l.kind != LayoutKind::DbFiles));
        assert!(
            adj.notes.iter().any(|n| n.contains("no sqlite-ext series")),
            "{:?}",
            adj.notes
        );
    }

    fn decide_fresh(pts: &[PointResult]) -> Decision {
        super::super::decide(pts, &[4096], 1.0, 3)
    }

    #[test]
    fn files_slowing_with_age_move_the_large_blobs_back_into_the_database() {
        // Fresh: large blobs read faster as files (60 vs 100).
        let pts = vec![point(10_000, 10.0, 30.0), point(1_000_000, 100.0, 60.0)];
        let fresh = decide_fresh(&pts);
        assert_eq!(fresh.placement, Placement::Split);
        // By age 4 files read at a third of their speed; SQLite stays flat.
        let mut tables = AgingTables {
            ages: vec![4.0],
            ..Default::default()
        };
        for (layout, rate) in [
            ("sqlite", 100.0),
            ("sqlite-ext", 100.0 / 3.0),
            ("dir", 100.0 / 3.0),
        ] {
            tables.series.push(aged("ext4", layout, 1 << 20, 0.5, rate));
        }
        let input = AgingInput {
            file: "a.json".into(),
            tables,
            age: 4.0,
        };
        let adj = adjustment(&input, "ext4", &pts, fresh);
        let scaled = under_aging(&pts, &adj);
        let ext = scaled[1].layout(LayoutKind::DbFiles, None).unwrap();
        assert!(close(ext.read_ns[0], 180.0), "{ext:?}");
        let db = scaled[1].layout(LayoutKind::Db, Some(4096)).unwrap();
        assert!(close(db.read_ns[0], 100.0), "{db:?}");
        let d = decide_fresh(&scaled);
        assert_eq!(d.placement, Placement::AllInside);
        assert!(adj.changed(&d));
        assert!(!adj.changed(&adj.unaged.clone()));
    }

    /// Layouts' series of one group read side by side: sqlite flat at
    /// 100 MB/s, sqlite-ext and dir at 100 over `fresh[r]` in round r at
    /// age 0 and over `aged[r]` at age 4 (their read time over the
    /// database's, round by round).
    fn paired(fresh: &[f64], aged: &[f64]) -> AgingTables {
        let db = [100.0; 5];
        let over = |q: &[f64]| q.iter().map(|x| 100.0 / x).collect::<Vec<f64>>();
        let mut tables = AgingTables {
            ages: vec![4.0],
            pairing: RoundPairing::Paired,
            ..Default::default()
        };
        tables.series.push(series(
            "ext4",
            "sqlite",
            1 << 20,
            0.5,
            vec![pt(0.0, &db, 50.0), pt(4.0, &db, 50.0)],
        ));
        for layout in ["sqlite-ext", "dir"] {
            tables.series.push(series(
                "ext4",
                layout,
                1 << 20,
                0.5,
                vec![pt(0.0, &over(fresh), 50.0), pt(4.0, &over(aged), 50.0)],
            ));
        }
        tables
    }

    #[test]
    fn aging_within_noise_keeps_the_fresh_choice_and_says_so() {
        // Fresh: large blobs as files (85 against the database's 100).
        let pts = vec![point(10_000, 10.0, 30.0), point(1_000_000, 100.0, 85.0)];
        let fresh = decide_fresh(&pts);
        assert_eq!(fresh.placement, Placement::Split, "{fresh:?}");
        let fresh_standing = [0.85, 1.0, 1.15, 0.95, 1.05];
        // At age 4 files' time over the database's is 1.25 at the median,
        // but its interval [1.10-1.40] overlaps age 0's [0.85-1.15]:
        // within noise, not applied, the fresh choice kept.
        let noisy = paired(&fresh_standing, &[1.1, 1.25, 1.4, 1.2, 1.3]);
        let input = AgingInput {
            file: "a.json".into(),
            tables: noisy,
            age: 4.0,
        };
        let adj = adjustment(&input, "ext4", &pts, fresh.clone());
        let files = adj
            .layouts
            .iter()
            .find(|l| l.kind == LayoutKind::DbFiles)
            .unwrap();
        assert_eq!(files.sizes[1].read_factor, vec![1.0], "{files:?}");
        let note = adj
            .notes
            .iter()
            .find(|n| n.starts_with("files named in the database, 1.0 MB"))
            .unwrap_or_else(|| panic!("{:?}", adj.notes));
        assert!(note.contains("paired round by round"), "{note}");
        assert!(note.contains("within noise"), "{note}");
        let d = decide_fresh(&under_aging(&pts, &adj));
        assert_eq!(d.placement, fresh.placement);
        assert!(!adj.changed(&d), "{d:?}");
        // Applied, the same median would have moved them inside.
        let s = &input.tables.series[1];
        let f = factors_against(s, &input.tables.series[0], 4.0).unwrap();
        assert!(
            f.within_noise() && close(f.evidence.factor(), 1.25),
            "{f:?}"
        );
        // Beyond the noise (age 4's interval [1.50-1.70] clear of age 0's):
        // applied, and the large blobs go back into the database.
        let clear = paired(&fresh_standing, &[1.5, 1.6, 1.7, 1.55, 1.65]);
        let input = AgingInput {
            file: "a.json".into(),
            tables: clear,
            age: 4.0,
        };
        let adj = adjustment(&input, "ext4", &pts, fresh.clone());
        let files = adj
            .layouts
            .iter()
            .find(|l| l.kind == LayoutKind::DbFiles)
            .unwrap();
        assert!(close(files.sizes[1].read_factor[0], 1.6), "{files:?}");
        assert!(
            adj.notes.iter().any(|n| n.contains("applied, read x 1.60")),
            "{:?}",
            adj.notes
        );
        let d = decide_fresh(&under_aging(&pts, &adj));
        assert_eq!(d.placement, Placement::AllInside, "{d:?}");
        assert!(adj.changed(&d));
    }

    #[test]
    fn paired_rounds_see_a_layout_fall_behind_through_drift_that_hides_it_alone() {
        // Each round the machine runs at another speed (x0.6 to x1.4),
        // differently at each age; dir reads at the database's rate in
        // every round at age 0 and 1.3 times slower at age 4.
        let drift0 = [1.0, 1.4, 0.6, 1.2, 0.8];
        let drift4 = [0.7, 1.3, 1.2, 0.6, 1.4];
        let mut tables = AgingTables {
            ages: vec![4.0],
            pairing: RoundPairing::Paired,
            ..Default::default()
        };
        let scaled = |k: f64, d: &[f64]| d.iter().map(|x| k * x).collect::<Vec<f64>>();
        tables.series.push(series(
            "ext4",
            "sqlite",
            1 << 20,
            0.5,
            vec![
                pt(0.0, &scaled(100.0, &drift0), 50.0),
                pt(4.0, &scaled(100.0, &drift4), 50.0),
            ],
        ));
        tables.series.push(series(
            "ext4",
            "dir",
            1 << 20,
            0.5,
            vec![
                pt(0.0, &scaled(100.0, &drift0), 50.0),
                pt(4.0, &scaled(100.0 / 1.3, &drift4), 50.0),
            ],
        ));
        let (db, dir) = (&tables.series[0], &tables.series[1]);
        // Alone, dir's slowdown is lost in the drift: within noise.
        assert!(factors(dir, 4.0).unwrap().within_noise());
        // Against the database round by round: 1.3 times the time, exactly.
        let f = factors_against(dir, db, 4.0).unwrap();
        assert!(!f.within_noise(), "{f:?}");
        assert!(close(f.read, 1.3), "{f:?}");
        let ReadEvidence::AgainstDatabase { fresh, aged } = &f.evidence else {
            panic!("{f:?}")
        };
        assert!(close(fresh.value, 1.0) && close(aged.value, 1.3), "{f:?}");
        // judged() takes that route for a paired result only.
        assert!(close(judged(&tables, dir, 4.0).unwrap().read, 1.3));
        tables.pairing = RoundPairing::Unpaired;
        let f = judged(&tables, &tables.series[1], 4.0).unwrap();
        assert!(matches!(f.evidence, ReadEvidence::Own(_)), "{f:?}");
        assert_eq!(f.read, 1.0);
    }
}
