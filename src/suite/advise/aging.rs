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
//! series with the nearest mean blob size. The factor is read MB/s at age 0
//! over read MB/s at the asked age, linear in age between measured ages,
//! round by round so the spread carries into the decision; writes likewise
//! from the fill's rate and the aging passes' rates.

use crate::result::advise::{
    AgedLayout, AgedSize, AgingAdjustment, Decision, LayoutKind, PointResult,
};
use crate::result::aging::{AgePoint, AgingSeries, AgingTables};

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

/// The factors of one series at `age`.
#[derive(Debug, Clone, PartialEq)]
pub struct Factors {
    /// Per read round: MB/s at age 0 over MB/s at `age`.
    pub read: Vec<f64>,
    /// The fill's write MB/s over the pass's at `age`.
    pub write: f64,
    /// The measured ages interpolated between.
    pub ages: Vec<f64>,
    /// True when `age` is beyond the last measured age.
    pub extrapolated: bool,
}

/// `a + t (b - a)`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + t * (b - a)
}

/// The factors of series `s` at storage age `age`, or None when it has no
/// reads at two ages. Between two measured ages the rates are linear in
/// age; beyond the last, the last age's rates hold (flat).
pub fn factors(s: &AgingSeries, age: f64) -> Option<Factors> {
    let pts = usable(s);
    let (base, last) = (*pts.first()?, *pts.last()?);
    if pts.len() < 2 {
        return None;
    }
    // The two measured points around `age`, and where `age` lies between.
    let (lo, hi, t, extrapolated) = if age >= last.age {
        (last, last, 0.0, age > last.age)
    } else if age <= base.age {
        (base, base, 0.0, false)
    } else {
        let i = pts.iter().rposition(|p| p.age <= age).unwrap_or(0);
        let (lo, hi) = (pts[i], pts[i + 1]);
        (lo, hi, (age - lo.age) / (hi.age - lo.age), false)
    };
    let rounds = base
        .read_mb_s
        .len()
        .min(lo.read_mb_s.len())
        .min(hi.read_mb_s.len());
    let read: Vec<f64> = (0..rounds)
        .filter_map(|r| {
            let at = lerp(lo.read_mb_s[r], hi.read_mb_s[r], t);
            let f = base.read_mb_s[r] / at;
            (f.is_finite() && f > 0.0).then_some(f)
        })
        .collect();
    if read.is_empty() {
        return None;
    }
    // Age 0's writes are the fill's; each later point's, the pass that
    // brought the store there.
    let at = lerp(lo.writes.mb_s(), hi.writes.mb_s(), t);
    let write = base.writes.mb_s() / at;
    let ages = if std::ptr::eq(lo, hi) {
        vec![lo.age]
    } else {
        vec![lo.age, hi.age]
    };
    Some(Factors {
        read,
        write: if write.is_finite() && write > 0.0 {
            write
        } else {
            1.0
        },
        ages,
        extrapolated,
    })
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
                let f = factors(s, input.age)?;
                Some(AgedSize {
                    size: p.size,
                    series: s.name(),
                    series_size: s.sizes.mean(),
                    ages: f.ages,
                    extrapolated: f.extrapolated,
                    read_factor: f.read,
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
/// point's size (the database's for every page size): read round `r` by
/// the read factor of aging round `r` modulo their count, every write by
/// the write factor. Layouts without factors stay as measured.
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
