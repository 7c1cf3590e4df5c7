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
        if lo.age == age {
            (lo, lo, 0.0, false)
        } else {
            (lo, hi, (age - lo.age) / (hi.age - lo.age), false)
        }
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

    #[test]
    fn factors_interpolate_linearly_in_age_and_hold_flat_beyond_the_last() {
        // Reads 100 -> 80 (age 1) -> 40 (age 4); writes 50 -> 25 -> 25.
        let s = series(
            "ext4",
            "dir",
            1 << 20,
            0.5,
            vec![
                pt(0.0, &[100.0, 200.0], 50.0),
                pt(1.0, &[80.0, 160.0], 25.0),
                pt(4.0, &[40.0, 50.0], 25.0),
            ],
        );
        let f = factors(&s, 0.0).unwrap();
        assert_eq!(f.read, vec![1.0, 1.0]);
        assert!(close(f.write, 1.0));
        let f = factors(&s, 1.0).unwrap();
        assert!(close(f.read[0], 1.25) && close(f.read[1], 1.25), "{f:?}");
        assert!(close(f.write, 2.0));
        assert_eq!(f.ages, vec![1.0]);
        // Age 2.5: halfway between 80 and 40 is 60; 160 and 50: 105.
        let f = factors(&s, 2.5).unwrap();
        assert!(close(f.read[0], 100.0 / 60.0), "{f:?}");
        assert!(close(f.read[1], 200.0 / 105.0), "{f:?}");
        assert_eq!(f.ages, vec![1.0, 4.0]);
        assert!(!f.extrapolated);
        // Age 0.5: between the fill (100) and age 1 (80): 90.
        let f = factors(&s, 0.5).unwrap();
        assert!(close(f.read[0], 100.0 / 90.0), "{f:?}");
        assert!(close(f.write, 50.0 / 37.5), "{f:?}");
        // Beyond age 4: age 4's rates, said to be extrapolated.
        let f = factors(&s, 10.0).unwrap();
        assert!(close(f.read[0], 2.5) && close(f.read[1], 4.0), "{f:?}");
        assert!(f.extrapolated);
        assert_eq!(f.ages, vec![4.0]);
        // Exactly the last age is measured, not extrapolated.
        assert!(!factors(&s, 4.0).unwrap().extrapolated);
    }

    #[test]
    fn factors_skip_vacuumed_points_and_need_two_ages() {
        let mut vacuumed = pt(1.0, &[500.0], 50.0);
        vacuumed.vacuumed = true;
        let s = series(
            "ext4",
            "sqlite",
            1 << 18,
            0.5,
            vec![pt(0.0, &[100.0], 50.0), pt(1.0, &[50.0], 50.0), vacuumed],
        );
        let f = factors(&s, 1.0).unwrap();
        assert!(
            close(f.read[0], 2.0),
            "the VACUUM's point is not age 1: {f:?}"
        );
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
}
