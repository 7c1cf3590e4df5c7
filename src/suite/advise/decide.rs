//! The recommendation as a pure function of the measurements: the page size
//! (SQLite's default 4096 unless another is faster beyond the noise), the split of sizes between the database
//! and files that minimizes the expected time per operation over the user's
//! distribution and mix, and how it compares with every alternative, all
//! recomputed round by round so each figure carries its 95% interval. When
//! the fastest placement cannot be told from a simpler one (the interval of
//! their paired ratio contains 1.00), the simpler one is kept and the
//! decision says so.
//!
//! With an object store measured, the blobs outside the database may go
//! there instead of to files: the object store is chosen only when its
//! best placement is faster than the files' best beyond the noise (the
//! whole interval of their paired ratio below 1.00); otherwise local files
//! stay, being one less system to run.

use crate::measure::significance::median;
use crate::result::advise::{
    AgainstDefault, ConcurrencyAdjustment, Decision, LayoutKind, LayoutResult, MeasuredSize,
    Placement, PointResult, Spread, default_page_size, other_page_sizes,
};

/// The points with every layout's times scaled by its factors under the
/// application's concurrency (the database's factor for every page size).
pub fn under_concurrency(points: &[PointResult], adj: &ConcurrencyAdjustment) -> Vec<PointResult> {
    let mut out = points.to_vec();
    for p in &mut out {
        for l in &mut p.layouts {
            let Some(c) = adj.layouts.iter().find(|c| c.kind == l.kind) else {
                continue;
            };
            let scale = |v: &mut Vec<f64>, f: &[f64]| {
                for (r, x) in v.iter_mut().enumerate() {
                    *x *= f.get(r).or(f.last()).copied().unwrap_or(1.0);
                }
            };
            scale(&mut l.read_ns, &c.read_factor);
            scale(&mut l.write_ns, &c.write_factor);
        }
    }
    out
}

/// What point `i` would be stored as outside the database.
type Outside = LayoutKind;

fn find(p: &PointResult, kind: LayoutKind, page: Option<u32>) -> &LayoutResult {
    p.layout(kind, page)
        .expect("every point measures every layout")
}

/// Where point `i` lives when the first `inside` points are in the database.
fn placed(p: &PointResult, i: usize, page: u32, inside: usize, outside: Outside) -> &LayoutResult {
    if i < inside {
        find(p, LayoutKind::Db, Some(page))
    } else {
        find(p, outside, None)
    }
}

/// The measurements and the mix every figure of a decision is computed from.
struct Model<'a> {
    points: &'a [PointResult],
    reads: f64,
    rounds: usize,
}

impl Model<'_> {
    /// Expected time per operation over the distribution in `round`, when
    /// the first `inside` points live in the database at `page` and the rest
    /// in `outside`.
    fn expected(&self, page: u32, inside: usize, outside: Outside, round: usize) -> f64 {
        self.points
            .iter()
            .enumerate()
            .map(|(i, p)| p.share * placed(p, i, page, inside, outside).mix_ns(round, self.reads))
            .sum()
    }

    /// [`Model::expected`] for every round.
    fn per_round(&self, page: u32, inside: usize, outside: Outside) -> Vec<f64> {
        (0..self.rounds)
            .map(|r| self.expected(page, inside, outside, r))
            .collect()
    }

    /// Every blob inside the database at `page`, per round.
    fn all_inside(&self, page: u32) -> Vec<f64> {
        self.per_round(page, self.points.len(), LayoutKind::Files)
    }

    /// Bytes on disk per blob over the distribution.
    fn disk(&self, page: u32, inside: usize, outside: Outside) -> f64 {
        self.points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let l = placed(p, i, page, inside, outside);
                p.share * l.space_bytes as f64 / p.blobs as f64
            })
            .sum()
    }

    /// One layout's median mixed time at one point.
    fn median_mix(&self, l: &LayoutResult) -> f64 {
        let v: Vec<f64> = (0..self.rounds).map(|r| l.mix_ns(r, self.reads)).collect();
        median(&v)
    }

    /// The page size with every blob inside: SQLite's default (or the size
    /// tried nearest it) unless another's expected time is below the
    /// default's beyond the noise, their paired ratio's whole interval
    /// below 1.00; a median alone never moves it.
    fn page_choice(&self, page_sizes: &[u32]) -> AgainstDefault<u32> {
        let default = default_page_size(page_sizes);
        let base = self.all_inside(default);
        let others = other_page_sizes(page_sizes, default)
            .into_iter()
            .map(|p| {
                let rel: Vec<f64> = self
                    .all_inside(p)
                    .iter()
                    .zip(&base)
                    .map(|(a, b)| a / b)
                    .collect();
                (p, Spread::of_ratios(&rel).estimate(self.rounds as u64))
            })
            .collect();
        AgainstDefault::decide(default, others)
    }

    /// Each page size's expected time relative to `best`'s, round by round.
    fn page_table(&self, page_sizes: &[u32], best: u32) -> Vec<(u32, Spread)> {
        let best = self.all_inside(best);
        page_sizes
            .iter()
            .map(|&p| {
                let rel: Vec<f64> = self
                    .all_inside(p)
                    .iter()
                    .zip(&best)
                    .map(|(a, b)| a / b)
                    .collect();
                (p, Spread::of_ratios(&rel))
            })
            .collect()
    }

    /// How many of the smallest points go inside: the first `inside` points
    /// in the database, the rest in `outside`; the cheapest split wins.
    fn split(&self, page: u32, outside: Outside) -> usize {
        let n = self.points.len();
        let cost = |k: usize| median(&self.per_round(page, k, outside));
        (0..=n)
            .min_by(|a, b| cost(*a).total_cmp(&cost(*b)))
            .unwrap_or(n)
    }

    /// Where the blobs outside the database go: the object store when every
    /// point measured it and its best split is faster than the files' best
    /// beyond the noise; files named in the database otherwise. Returns the
    /// choice, its split and what was said.
    fn outside(&self, page: u32) -> (Outside, usize, Vec<String>) {
        let files = self.split(page, LayoutKind::DbFiles);
        let measured = self
            .points
            .iter()
            .all(|p| p.layout(LayoutKind::ObjectStore, None).is_some());
        if !measured {
            return (LayoutKind::DbFiles, files, Vec::new());
        }
        let objects = self.split(page, LayoutKind::ObjectStore);
        let rel: Vec<f64> = self
            .per_round(page, objects, LayoutKind::ObjectStore)
            .iter()
            .zip(&self.per_round(page, files, LayoutKind::DbFiles))
            .map(|(a, b)| a / b)
            .collect();
        let s = Spread::of_ratios(&rel);
        let e = s.estimate(self.rounds as u64);
        // Only an interval wholly below 1.00 picks the object store: a
        // second system to run has to earn its place.
        let beyond_noise = if e.has_interval() {
            e.high < 1.0
        } else {
            e.value < 1.0
        };
        if beyond_noise {
            return (LayoutKind::ObjectStore, objects, Vec::new());
        }
        // Faster at the median but not beyond the noise: said, not chosen.
        let note = (e.value < 1.0).then(|| {
            format!(
                "object store vs files for the blobs outside the database: {} the time, within noise; keeping the simpler files",
                e.format_ratio()
            )
        });
        (LayoutKind::DbFiles, files, note.into_iter().collect())
    }

    /// The simplest placement that cannot be told from the fastest (`inside`
    /// points in the database, the rest in `outside`): every blob inside
    /// the database first (one file, one transaction), then every blob
    /// outside; the split only when it is faster beyond the noise. Returns
    /// the points inside and what was said.
    fn simplest(&self, page: u32, inside: usize, outside: Outside) -> (usize, Vec<String>) {
        let n = self.points.len();
        let fastest = self.per_round(page, inside, outside);
        let name = |k: usize| match (k, outside) {
            (0, LayoutKind::ObjectStore) => "all in the object store",
            (0, _) => "all as files",
            (k, _) if k == n => "all inside the database",
            _ => "split by size",
        };
        let mut simpler = vec![n];
        if inside != n {
            simpler.push(0);
        }
        for k in simpler.into_iter().filter(|&k| k != inside) {
            let rel: Vec<f64> = self
                .per_round(page, k, outside)
                .iter()
                .zip(&fastest)
                .map(|(a, b)| a / b)
                .collect();
            let s = Spread::of_ratios(&rel);
            if s.within_noise() {
                let e = s.estimate(self.rounds as u64);
                let note = format!(
                    "{} vs {}: {} the time, within noise, either is fine; keeping the simpler {}",
                    name(k),
                    name(inside),
                    e.format_ratio(),
                    name(k)
                );
                return (k, vec![note]);
            }
        }
        (inside, Vec::new())
    }

    /// The size between the last point inside and the first outside where
    /// files start to win: where the files/database ratio crosses 1 on a log
    /// scale, or the geometric midpoint when it does not cross between them.
    fn threshold(&self, page: u32, inside: usize, outside: Outside) -> Option<f64> {
        let n = self.points.len();
        (inside > 0 && inside < n).then(|| {
            let (lo, hi) = (&self.points[inside - 1], &self.points[inside]);
            let ratio = |p: &PointResult| {
                self.median_mix(find(p, outside, None))
                    / self.median_mix(find(p, LayoutKind::Db, Some(page)))
            };
            let (r1, r2) = (ratio(lo), ratio(hi));
            let (l1, l2) = ((lo.size as f64).ln(), (hi.size as f64).ln());
            if r1 > 1.0 && r2 < 1.0 {
                (l1 + (r1 - 1.0) / (r1 - r2) * (l2 - l1)).exp()
            } else {
                ((l1 + l2) / 2.0).exp()
            }
        })
    }

    /// The alternatives to the recommendation: name, expected time per
    /// round, disk per blob.
    fn alternatives(&self, page: u32, page_sizes: &[u32]) -> Vec<(String, Vec<f64>, f64)> {
        let n = self.points.len();
        let mut out = vec![
            (
                format!("all inside the database (page {page})"),
                self.all_inside(page),
                self.disk(page, n, LayoutKind::DbFiles),
            ),
            (
                "all as files named in the database".into(),
                self.per_round(page, 0, LayoutKind::DbFiles),
                self.disk(page, 0, LayoutKind::DbFiles),
            ),
            (
                "plain files, no database".into(),
                self.per_round(page, 0, LayoutKind::Files),
                self.disk(page, 0, LayoutKind::Files),
            ),
        ];
        if self
            .points
            .iter()
            .all(|p| p.layout(LayoutKind::ObjectStore, None).is_some())
        {
            out.push((
                "all in the object store".into(),
                self.per_round(page, 0, LayoutKind::ObjectStore),
                self.disk(page, 0, LayoutKind::ObjectStore),
            ));
        }
        if page != 4096 && page_sizes.contains(&4096) {
            out.push((
                "all inside at SQLite's default page size 4096".into(),
                self.all_inside(4096),
                self.disk(4096, n, LayoutKind::DbFiles),
            ));
        }
        out
    }
}

/// The recommendation from the measurements: a pure function of them.
pub fn decide(points: &[PointResult], page_sizes: &[u32], reads: f64, rounds: usize) -> Decision {
    let m = Model {
        points,
        reads,
        rounds,
    };
    let n = points.len();
    let page_choice = m.page_choice(page_sizes);
    let page_size = page_choice.chosen;
    let (outside, fastest, mut within_noise) = m.outside(page_size);
    let (inside, noted) = m.simplest(page_size, fastest, outside);
    within_noise.extend(noted);
    let objects = outside == LayoutKind::ObjectStore;
    let mut placement = match inside {
        0 if objects => Placement::AllObjectStore,
        0 => Placement::AllFiles,
        i if i == n => Placement::AllInside,
        _ if objects => Placement::SplitObjectStore,
        _ => Placement::Split,
    };
    let mut rec = m.per_round(page_size, inside, outside);
    let (mut inside, mut outside) = (inside, outside);
    // Plain files are a candidate too: chosen when faster beyond the noise
    // than the best placement with a database, and said what they give up.
    let plain = m.per_round(page_size, 0, LayoutKind::Files);
    let rel: Vec<f64> = plain.iter().zip(&rec).map(|(a, b)| a / b).collect();
    let vs = Spread::of_ratios(&rel);
    if vs.below_one() {
        within_noise.push(format!(
            "plain files, no database vs {}: {} the time, faster beyond the noise, so recommended; \
             they keep no transaction with the metadata (a crash can leave a file without its row or \
             a row without its file): if that matters, keep {}, at {:.2}x their time",
            placement.as_str(),
            vs.estimate(rounds as u64).format_ratio(),
            placement.as_str(),
            1.0 / vs.median,
        ));
        (placement, rec, inside, outside) = (Placement::PlainFiles, plain, 0, LayoutKind::Files);
    }
    let mut speedup_vs = Vec::new();
    let mut disk_per_blob = vec![(
        "recommendation".to_string(),
        m.disk(page_size, inside, outside),
    )];
    for (name, cost, space) in m.alternatives(page_size, page_sizes) {
        // The alternative that is the recommendation itself is not compared.
        let is_rec = match placement {
            Placement::AllFiles => name.starts_with("all as files"),
            Placement::AllInside => name.starts_with("all inside the database"),
            Placement::AllObjectStore => name.starts_with("all in the object store"),
            Placement::PlainFiles => name.starts_with("plain files"),
            Placement::Split | Placement::SplitObjectStore => false,
        };
        if is_rec {
            continue;
        }
        let s: Vec<f64> = cost.iter().zip(&rec).map(|(a, b)| a / b).collect();
        speedup_vs.push((name.clone(), Spread::of_ratios(&s)));
        disk_per_blob.push((name, space));
    }
    let threshold_bytes = m.threshold(page_size, inside, outside);
    let measured = |p: &PointResult| MeasuredSize {
        size: p.size,
        band: p.band,
    };
    Decision {
        page_size,
        page_sizes: m.page_table(page_sizes, page_size),
        threshold_between: threshold_bytes
            .map(|_| [measured(&points[inside - 1]), measured(&points[inside])]),
        threshold_bytes,
        points_inside: inside,
        placement,
        expected_ns: Spread::of(&rec),
        speedup_vs,
        disk_per_blob,
        within_noise,
        page_choice: Some(page_choice),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(kind: LayoutKind, page: Option<u32>, read: f64, write: f64) -> LayoutResult {
        LayoutResult {
            layout: format!("{kind:?}"),
            kind,
            page_size: page,
            read_ns: vec![read, read * 1.1, read * 0.95, read * 1.05, read],
            write_ns: vec![write, write * 1.1, write * 0.95, write * 1.05, write],
            space_bytes: 1000,
        }
    }

    /// A layout whose reads and writes both take `rounds`, round by round.
    fn measured<const N: usize>(
        kind: LayoutKind,
        page: Option<u32>,
        rounds: [f64; N],
    ) -> LayoutResult {
        LayoutResult {
            layout: format!("{kind:?}"),
            kind,
            page_size: page,
            read_ns: rounds.to_vec(),
            write_ns: rounds.to_vec(),
            space_bytes: 1000,
        }
    }

    fn point(size: u64, db4096: f64, db16384: f64, ext: f64) -> PointResult {
        PointResult {
            size,
            share: 0.25,
            blobs: 10,
            writes: 10,
            layouts: vec![
                layout(LayoutKind::Db, Some(4096), db4096, db4096),
                layout(LayoutKind::Db, Some(16384), db16384, db16384),
                layout(LayoutKind::DbFiles, None, ext, ext),
                layout(LayoutKind::Files, None, ext * 1.2, ext * 1.2),
            ],
            band: None,
        }
    }

    #[test]
    fn a_database_that_wins_small_and_loses_large_gives_a_threshold_between() {
        // db cheaper below 100k, files cheaper above; 16384 beats 4096 everywhere.
        let pts = vec![
            point(10_000, 20.0, 10.0, 30.0),
            point(50_000, 40.0, 20.0, 35.0),
            point(200_000, 200.0, 100.0, 60.0),
            point(1_000_000, 900.0, 500.0, 200.0),
        ];
        let d = decide(&pts, &[4096, 16384], 0.9, 5);
        assert_eq!(d.page_size, 16384);
        assert_eq!(d.points_inside, 2);
        assert_eq!(d.placement, "split by size");
        let x = d.threshold_bytes.unwrap();
        assert!(x > 50_000.0 && x < 200_000.0, "{x}");
        // The threshold is said with the two sizes measured either side.
        let [lo, hi] = d.threshold_between.expect("the sizes either side");
        assert_eq!((lo.size, hi.size), (50_000, 200_000));
        // Faster than every alternative, by the expected amounts.
        for (name, s) in &d.speedup_vs {
            assert!(s.median > 1.0, "{name}: {s:?}");
        }
        let all_in = &d.speedup_vs[0];
        assert!(all_in.0.starts_with("all inside"));
        let expected = (10.0 + 20.0 + 100.0 + 500.0) / (10.0 + 20.0 + 60.0 + 200.0);
        assert!((all_in.1.median - expected).abs() < 1e-9, "{all_in:?}");
        // The database winning everywhere: everything inside, no threshold.
        let pts: Vec<PointResult> = [10_000, 50_000]
            .iter()
            .map(|&s| point(s, 20.0, 10.0, 30.0))
            .collect();
        let d = decide(&pts, &[4096, 16384], 0.5, 5);
        assert_eq!(d.placement, "all inside the database");
        assert!(d.threshold_bytes.is_none() && d.threshold_between.is_none());
        assert!(d.within_noise.is_empty());
    }

    #[test]
    fn a_split_within_noise_of_all_inside_keeps_everything_inside() {
        // The split is 1% faster on average, but round to round the two
        // swap places: the interval of their ratio contains 1.00.
        let point = |size, db: [f64; 5], ext: [f64; 5]| PointResult {
            size,
            share: 0.5,
            blobs: 10,
            writes: 10,
            layouts: vec![
                measured(LayoutKind::Db, Some(4096), db),
                measured(LayoutKind::DbFiles, None, ext),
                measured(LayoutKind::Files, None, ext.map(|x| x * 2.0)),
            ],
            band: None,
        };
        let pts = vec![
            point(10_000, [10.0; 5], [30.0; 5]),
            point(
                1_000_000,
                [100.0, 100.0, 100.0, 100.0, 100.0],
                [90.0, 115.0, 95.0, 110.0, 98.0],
            ),
        ];
        let m = Model {
            points: &pts,
            reads: 1.0,
            rounds: 5,
        };
        assert_eq!(
            m.split(4096, LayoutKind::DbFiles),
            1,
            "the split is faster at the median"
        );
        let d = decide(&pts, &[4096], 1.0, 5);
        assert_eq!(d.placement, "all inside the database");
        assert_eq!(d.within_noise.len(), 1, "{:?}", d.within_noise);
        assert!(d.within_noise[0].contains("within noise, either is fine"));
        // Clearly faster (every round): the split stays.
        let pts = vec![
            point(10_000, [10.0; 5], [30.0; 5]),
            point(1_000_000, [100.0; 5], [50.0, 52.0, 49.0, 51.0, 50.0]),
        ];
        let d = decide(&pts, &[4096], 1.0, 5);
        assert_eq!(d.placement, "split by size");
        assert!(d.within_noise.is_empty());
    }

    /// Points whose 16384-page database takes `db16384` per round against a
    /// steady 4096 (with files far slower, so every blob stays inside).
    fn pages(db16384: [f64; 5]) -> Vec<PointResult> {
        [10_000, 100_000]
            .iter()
            .map(|&size| PointResult {
                size,
                share: 0.5,
                blobs: 10,
                writes: 10,
                layouts: vec![
                    measured(LayoutKind::Db, Some(4096), [100.0; 5]),
                    measured(LayoutKind::Db, Some(16384), db16384),
                    measured(LayoutKind::DbFiles, None, [1000.0; 5]),
                    measured(LayoutKind::Files, None, [1000.0; 5]),
                ],
                band: None,
            })
            .collect()
    }

    #[test]
    fn a_page_size_within_noise_of_the_default_keeps_4096() {
        // 16384 is 5% faster at the median, slower in two rounds of five.
        let d = decide(
            &pages([90.0, 110.0, 95.0, 105.0, 92.0]),
            &[4096, 16384],
            0.5,
            5,
        );
        assert_eq!(d.page_size, 4096, "{:?}", d.page_choice);
        let c = d.page_choice.as_ref().expect("decided against the default");
        assert_eq!((c.default, c.chosen), (4096, 4096));
        assert!(c.within_noise);
        let (p, e) = c.fastest_other().unwrap();
        assert_eq!(*p, 16384);
        assert!(e.value < 1.0 && e.contains(1.0), "{e:?}");
        // The page-size table is relative to the page size kept.
        assert!(
            d.page_sizes
                .iter()
                .any(|(p, s)| *p == 4096 && s.median == 1.0)
        );
        // Given in another order, the default is still the one kept.
        let d = decide(
            &pages([90.0, 110.0, 95.0, 105.0, 92.0]),
            &[16384, 4096],
            0.5,
            5,
        );
        assert_eq!(d.page_size, 4096);
    }

    #[test]
    fn a_page_size_faster_beyond_the_noise_is_recommended() {
        let d = decide(
            &pages([60.0, 62.0, 59.0, 61.0, 60.0]),
            &[4096, 16384],
            0.5,
            5,
        );
        assert_eq!(d.page_size, 16384);
        let c = d.page_choice.as_ref().unwrap();
        assert!(c.changed() && !c.within_noise, "{c:?}");
        let e = c.vs_default(&16384).unwrap();
        assert!(e.high < 1.0, "{e:?}");
        // Without 4096 tried, the nearest size tried is the default.
        let d = decide(&pages([60.0, 62.0, 59.0, 61.0, 60.0]), &[16384], 0.5, 5);
        assert_eq!(d.page_size, 16384);
        assert!(!d.page_choice.unwrap().within_noise);
    }

    /// Blobs outside the database go to the object store only when that is
    /// faster than files beyond the noise; the decision can then pick it.
    #[test]
    fn the_object_store_is_picked_only_when_faster_beyond_noise() {
        let with_s3 = |s3_large: [f64; 5]| {
            let point = |size, db: f64, ext: f64, s3: [f64; 5]| PointResult {
                size,
                share: 0.5,
                blobs: 10,
                writes: 10,
                layouts: vec![
                    measured(LayoutKind::Db, Some(4096), [db; 5]),
                    measured(LayoutKind::DbFiles, None, [ext; 5]),
                    measured(LayoutKind::Files, None, [ext * 1.1; 5]),
                    measured(LayoutKind::ObjectStore, None, s3),
                ],
                band: None,
            };
            vec![
                point(10_000, 10.0, 30.0, [500.0; 5]),
                point(1_000_000, 100.0, 60.0, s3_large),
            ]
        };
        // Large blobs: the object store takes half the files' time every round.
        let d = decide(&with_s3([30.0, 31.0, 29.0, 30.5, 29.5]), &[4096], 1.0, 5);
        assert_eq!(d.placement, Placement::SplitObjectStore);
        assert_eq!(d.points_inside, 1);
        assert!(d.threshold_bytes.is_some());
        let vs_files = d
            .speedup_vs
            .iter()
            .find(|(n, _)| n == "all as files named in the database")
            .expect("files compared");
        assert!(vs_files.1.median > 1.0, "{vs_files:?}");
        // A little faster at the median, slower in some rounds: files stay.
        let d = decide(&with_s3([55.0, 70.0, 50.0, 66.0, 58.0]), &[4096], 1.0, 5);
        assert_eq!(d.placement, Placement::Split);
        assert!(
            d.within_noise
                .iter()
                .any(|n| n.contains("object store vs files")),
            "{:?}",
            d.within_noise
        );
        // Slower everywhere: files, and the object store is an alternative.
        let d = decide(&with_s3([900.0; 5]), &[4096], 1.0, 5);
        assert_eq!(d.placement, Placement::Split);
        assert!(d.within_noise.is_empty(), "{:?}", d.within_noise);
        let vs = d
            .speedup_vs
            .iter()
            .find(|(n, _)| n == "all in the object store")
            .expect("the object store compared");
        assert!(vs.1.median > 1.0, "{vs:?}");
        // Faster at every size: everything goes there.
        let mut pts = with_s3([20.0; 5]);
        pts[0].layouts[3].read_ns = vec![5.0, 5.1, 4.9, 5.0, 5.05];
        pts[0].layouts[3].write_ns = pts[0].layouts[3].read_ns.clone();
        let d = decide(&pts, &[4096], 1.0, 5);
        assert_eq!(d.placement, Placement::AllObjectStore);
        assert!(
            !d.speedup_vs
                .iter()
                .any(|(n, _)| n == "all in the object store"),
            "{:?}",
            d.speedup_vs
        );
    }

    // Plain files, no database, as a candidate.

    /// Two sizes; the database and files named in it take `db`, plain
    /// files `plain`, round by round.
    fn points(db: [f64; 7], plain: [f64; 7]) -> Vec<PointResult> {
        [10_000, 1_000_000]
            .map(|size| PointResult {
                size,
                share: 0.5,
                blobs: 10,
                writes: 10,
                layouts: vec![
                    measured(LayoutKind::Db, Some(4096), db),
                    measured(LayoutKind::DbFiles, None, db.map(|x| x * 1.5)),
                    measured(LayoutKind::Files, None, plain),
                ],
                band: None,
            })
            .to_vec()
    }

    /// The advise case of issue 53: plain files at 0.30x of the
    /// recommendation must not stand beside "every blob inside the
    /// database" unchosen.
    #[test]
    fn plain_files_faster_beyond_the_noise_are_recommended_with_what_they_give_up() {
        let db = [100.0, 104.0, 97.0, 101.0, 99.0, 103.0, 98.0];
        let d = decide(&points(db, db.map(|x| x * 0.3)), &[4096], 1.0, 7);
        assert_eq!(d.placement, Placement::PlainFiles, "{d:?}");
        assert_eq!((d.points_inside, d.threshold_bytes), (0, None));
        assert!((d.expected_ns.median - 30.0).abs() < 1.0, "{d:?}");
        let note = d
            .within_noise
            .iter()
            .find(|n| n.starts_with("plain files, no database vs all inside the database"))
            .unwrap_or_else(|| panic!("{:?}", d.within_noise));
        assert!(note.contains("no transaction with the metadata"), "{note}");
        // Every alternative is slower than the recommendation now.
        assert!(
            d.speedup_vs.iter().all(|(_, s)| s.median > 1.0),
            "{:?}",
            d.speedup_vs
        );
        assert!(
            !d.speedup_vs
                .iter()
                .any(|(n, _)| n.starts_with("plain files"))
        );
    }

    #[test]
    fn plain_files_faster_only_within_the_noise_leave_the_database_in_place() {
        let db = [100.0, 104.0, 97.0, 101.0, 99.0, 103.0, 98.0];
        // Faster at the median, slower in two rounds of seven.
        let plain = [95.0, 110.0, 92.0, 97.0, 96.0, 108.0, 94.0];
        let d = decide(&points(db, plain), &[4096], 1.0, 7);
        assert_eq!(d.placement, Placement::AllInside, "{d:?}");
        let vs = d
            .speedup_vs
            .iter()
            .find(|(n, _)| n.starts_with("plain files"))
            .expect("plain files compared");
        assert!(vs.1.median < 1.0 && vs.1.within_noise(), "{vs:?}");
    }
}
