//! `blobbench advise`: the user's question ("inside SQLite or as files, and
//! with which settings?") answered for their blob sizes on their disk.
//!
//! Sizes come from a sample folder (only stat()ed) or a description. A few
//! representative sizes (quantile midpoints, each carrying its share of the
//! blobs) are measured in every layout: inside the database at several page
//! sizes, as files named in the database, and as plain files; reads and
//! writes with the durability asked for. Then WAL is measured against a
//! rollback journal. The recommendation minimizes the expected time per
//! operation over the user's size distribution and read/write mix; every
//! figure is recomputed round by round so its spread is known.

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_distr::Distribution;
use serde::Serialize;
use serde_json::json;

use crate::cli::AdviseArgs;
use crate::dataset::spec_from_options;
use crate::error::{Error, Result};
use crate::measure::stats::summarize;
use crate::report::chart::size_label;
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::store::{ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target, parse_page_size};
use crate::units::{human_bytes, parse_number};
use crate::workload::{Operation, execute};

use super::common::{WorkDir, free_bytes, parse_list, per_op_ns, plan, remove_entry, session};

/// Largest blob size calibrated; larger sizes are measured at this size.
const MAX_POINT: u64 = 32_000_000;
/// Writes timed per layout and round (each is its own transaction).
const MAX_WRITES: u64 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    Power,
    Crash,
    None,
}

impl Durability {
    fn parse(text: &str) -> Result<Durability> {
        match text {
            "power" => Ok(Durability::Power),
            "crash" => Ok(Durability::Crash),
            "none" => Ok(Durability::None),
            other => Err(Error::usage(format!(
                "--durability {other}: use power (every commit on disk), crash (no corruption on power loss, \
                 may lose the last writes) or none (data you can rebuild)"
            ))),
        }
    }

    /// synchronous for WAL, synchronous for a rollback journal.
    fn synchronous(self) -> (&'static str, &'static str) {
        match self {
            Durability::Power => ("full", "full"),
            // A rollback journal needs FULL to be safe from corruption on power loss.
            Durability::Crash => ("normal", "full"),
            Durability::None => ("off", "off"),
        }
    }

    fn file_writes(self) -> (WriteStyle, bool) {
        match self {
            Durability::Power => (WriteStyle::TempRename, true),
            Durability::Crash => (WriteStyle::TempRename, false),
            Durability::None => (WriteStyle::InPlace, false),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Durability::Power => "power: a write is on disk when it returns",
            Durability::Crash => "crash: no corruption on power loss, the last writes may be lost",
            Durability::None => "none: data that can be rebuilt",
        }
    }
}

/// Where the sizes came from and what they look like.
#[derive(Debug, Clone, Serialize)]
pub struct SizeSample {
    pub source: String,
    pub blobs: u64,
    pub total_bytes: u64,
    pub p10: u64,
    pub median: u64,
    pub p90: u64,
    pub max: u64,
    /// Entries under --sample-dir that were not regular files or could not be stat()ed.
    pub skipped: u64,
    #[serde(skip)]
    pub sorted: Vec<u64>,
}

impl SizeSample {
    fn new(source: String, mut sizes: Vec<u64>, skipped: u64) -> SizeSample {
        sizes.sort_unstable();
        let q = |f: f64| sizes[((sizes.len() - 1) as f64 * f).round() as usize];
        SizeSample {
            source,
            blobs: sizes.len() as u64,
            total_bytes: sizes.iter().sum(),
            p10: q(0.1),
            median: q(0.5),
            p90: q(0.9),
            max: *sizes.last().unwrap_or(&0),
            skipped,
            sorted: sizes,
        }
    }
}

/// The sizes of every regular file under `dir`. Nothing is opened, only
/// stat()ed, and symbolic links are not followed.
pub fn sample_dir(dir: &Path) -> Result<SizeSample> {
    if !dir.is_dir() {
        return Err(Error::usage(format!(
            "--sample-dir {}: not a folder; name a folder of files like the ones you will store",
            dir.display()
        )));
    }
    let mut sizes = Vec::new();
    let mut skipped = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            skipped += 1;
            continue;
        };
        for e in entries {
            let Ok(e) = e else {
                skipped += 1;
                continue;
            };
            match std::fs::symlink_metadata(e.path()) {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) if m.is_file() && m.len() > 0 => sizes.push(m.len()),
                _ => skipped += 1,
            }
        }
        if sizes.len() >= 1_000_000 {
            break;
        }
    }
    if sizes.is_empty() {
        return Err(Error::usage(format!(
            "--sample-dir {}: no non-empty files found; name a folder of files like the ones you will store",
            dir.display()
        )));
    }
    Ok(SizeSample::new(dir.display().to_string(), sizes, skipped))
}

/// `A..B [lognormal|uniform]` or `A,B,C`.
pub fn sample_spec(text: &str, seed: u64) -> Result<SizeSample> {
    let bad = |why: &str| {
        Error::usage(format!(
            "--sizes {text}: {why}; use A..B [lognormal|uniform] (e.g. 10k..2m) or a list (e.g. 4k,40k,400k)"
        ))
    };
    let mut words = text.split_whitespace();
    let range = words.next().ok_or_else(|| bad("empty"))?;
    let shape_word = words.next();
    let shape = shape_word.unwrap_or("lognormal");
    if words.next().is_some() {
        return Err(bad("too many words"));
    }
    let size = |v: &str| -> Result<u64> {
        let n = parse_number(v).map_err(|_| bad(&format!("\"{v}\" is not a size")))?;
        if n == 0 || n > 1 << 30 {
            return Err(bad(&format!("\"{v}\" must be from 1 to 1G")));
        }
        Ok(n)
    };
    const N: usize = 10_000;
    let sizes: Vec<u64> = if let Some((a, b)) = range.split_once("..") {
        let (a, b) = (size(a)?, size(b)?);
        if a >= b {
            return Err(bad("the range must go from smaller to larger"));
        }
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        match shape {
            "lognormal" => {
                // A and B at about the 5th and 95th percentiles.
                let mu = ((a as f64).ln() + (b as f64).ln()) / 2.0;
                let sigma = ((b as f64).ln() - (a as f64).ln()) / (2.0 * 1.645);
                let d = rand_distr::LogNormal::new(mu, sigma).map_err(|e| bad(&format!("{e}")))?;
                (0..N)
                    .map(|_| (d.sample(&mut rng).round() as u64).clamp(1, 1 << 30))
                    .collect()
            }
            "uniform" => (0..N).map(|_| rng.random_range(a..=b)).collect(),
            other => return Err(bad(&format!("unknown shape \"{other}\""))),
        }
    } else {
        if shape_word.is_some() {
            return Err(bad("a shape applies to a range A..B only"));
        }
        let list = parse_list("--sizes", range, size)?;
        list.iter()
            .cycle()
            .take(list.len() * 1000)
            .copied()
            .collect()
    };
    Ok(SizeSample::new(format!("--sizes {text}"), sizes, 0))
}

/// Representative sizes: the midpoints of `k` equal quantile bands, each
/// carrying its band's share of the blobs; bands with sizes within 5% of
/// each other are merged.
pub fn points(sample: &SizeSample, k: u64) -> Vec<(u64, f64)> {
    let n = sample.sorted.len();
    let mut out: Vec<(u64, f64)> = Vec::new();
    for i in 0..k {
        let q = (i as f64 + 0.5) / k as f64;
        let size = sample.sorted[((n - 1) as f64 * q).round() as usize].min(MAX_POINT);
        let w = 1.0 / k as f64;
        match out.last_mut() {
            Some(last) if (size as f64) <= last.0 as f64 * 1.05 => {
                // Merge into the previous point, weighting its size geometrically.
                let total = last.1 + w;
                let s = ((last.0 as f64).ln() * last.1 + (size as f64).ln() * w) / total;
                *last = (s.exp().round() as u64, total);
            }
            _ => out.push((size, w)),
        }
    }
    out
}

/// One layout's measurements at one size, one value per round.
#[derive(Debug, Clone, Serialize)]
pub struct LayoutResult {
    pub layout: String,
    /// "db", "db+files" or "files".
    pub kind: &'static str,
    pub page_size: Option<u32>,
    pub read_ns: Vec<f64>,
    pub write_ns: Vec<f64>,
    pub space_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PointResult {
    pub size: u64,
    pub share: f64,
    pub blobs: u64,
    pub writes: u64,
    pub layouts: Vec<LayoutResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    fn of(v: &[f64]) -> Spread {
        let s = summarize(v);
        Spread {
            median: s.median,
            min: s.min,
            max: s.max,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    pub page_size: u32,
    /// Expected time per operation of each page size relative to the best.
    pub page_sizes: Vec<(u32, Spread)>,
    /// Blobs at or above this size go to files; None with `inside_below`
    /// describing "all inside" (u64::MAX) or "all files" (0).
    pub threshold_bytes: Option<f64>,
    /// How many of the measured points go inside the database.
    pub points_inside: usize,
    pub placement: &'static str,
    /// Expected time per operation of the recommendation.
    pub expected_ns: Spread,
    /// How many times faster the recommendation is than each alternative.
    pub speedup_vs: Vec<(String, Spread)>,
    /// Bytes on disk per blob, recommendation and alternatives.
    pub disk_per_blob: Vec<(String, f64)>,
}

fn mix_cost(l: &LayoutResult, round: usize, reads: f64) -> f64 {
    reads * l.read_ns[round] + (1.0 - reads) * l.write_ns[round]
}

fn find<'a>(p: &'a PointResult, kind: &str, page: Option<u32>) -> &'a LayoutResult {
    p.layouts
        .iter()
        .find(|l| l.kind == kind && (page.is_none() || l.page_size == page))
        .expect("every point measures every layout")
}

/// Where point `i` lives when the first `inside` points are in the database.
fn placed<'a>(
    p: &'a PointResult,
    i: usize,
    page: u32,
    inside: usize,
    outside: &str,
) -> &'a LayoutResult {
    if i < inside {
        find(p, "db", Some(page))
    } else {
        find(p, outside, None)
    }
}

/// Expected time per operation over the distribution, round by round, when
/// the first `inside` points live in the database at `page` and the rest in
/// `outside` ("db+files" or "files").
fn expected(
    points: &[PointResult],
    page: u32,
    inside: usize,
    outside: &str,
    reads: f64,
    round: usize,
) -> f64 {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| p.share * mix_cost(placed(p, i, page, inside, outside), round, reads))
        .sum()
}

fn disk(points: &[PointResult], page: u32, inside: usize, outside: &str) -> f64 {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let l = placed(p, i, page, inside, outside);
            p.share * l.space_bytes as f64 / p.blobs as f64
        })
        .sum()
}

/// The recommendation from the measurements: a pure function of them.
pub fn decide(points: &[PointResult], page_sizes: &[u32], reads: f64, rounds: usize) -> Decision {
    let per_round = |f: &dyn Fn(usize) -> f64| (0..rounds).map(f).collect::<Vec<f64>>();
    let all_inside =
        |page: u32| per_round(&|r| expected(points, page, points.len(), "files", reads, r));
    // Best page size: lowest expected time with every blob inside.
    let page_size = *page_sizes
        .iter()
        .min_by(|a, b| {
            let (x, y) = (Spread::of(&all_inside(**a)), Spread::of(&all_inside(**b)));
            x.median.total_cmp(&y.median)
        })
        .expect("at least one page size");
    let best = all_inside(page_size);
    let page_table = page_sizes
        .iter()
        .map(|&p| {
            let v = all_inside(p);
            let rel: Vec<f64> = v.iter().zip(&best).map(|(a, b)| a / b).collect();
            (p, Spread::of(&rel))
        })
        .collect();
    // The split: the first `inside` points in the database, the rest as files
    // named in it; the cheapest split wins.
    let n = points.len();
    let split_cost = |k: usize| {
        Spread::of(&per_round(&|r| {
            expected(points, page_size, k, "db+files", reads, r)
        }))
        .median
    };
    let inside = (0..=n)
        .min_by(|a, b| split_cost(*a).total_cmp(&split_cost(*b)))
        .unwrap_or(n);
    let threshold_bytes = (inside > 0 && inside < n).then(|| {
        let (lo, hi) = (&points[inside - 1], &points[inside]);
        let ratio = |p: &PointResult| {
            let e = Spread::of(&per_round(&|r| {
                mix_cost(find(p, "db+files", None), r, reads)
            }))
            .median;
            let d = Spread::of(&per_round(&|r| {
                mix_cost(find(p, "db", Some(page_size)), r, reads)
            }))
            .median;
            e / d
        };
        let (r1, r2) = (ratio(lo), ratio(hi));
        let (l1, l2) = ((lo.size as f64).ln(), (hi.size as f64).ln());
        if r1 > 1.0 && r2 < 1.0 {
            (l1 + (r1 - 1.0) / (r1 - r2) * (l2 - l1)).exp()
        } else {
            ((l1 + l2) / 2.0).exp()
        }
    });
    let placement = match inside {
        0 => "all as files",
        i if i == n => "all inside the database",
        _ => "split by size",
    };
    let rec = per_round(&|r| expected(points, page_size, inside, "db+files", reads, r));
    let mut speedup_vs = Vec::new();
    let mut alternatives: Vec<(String, Vec<f64>, f64)> = vec![
        (
            format!("all inside the database (page {page_size})"),
            all_inside(page_size),
            disk(points, page_size, n, "db+files"),
        ),
        (
            "all as files named in the database".into(),
            per_round(&|r| expected(points, page_size, 0, "db+files", reads, r)),
            disk(points, page_size, 0, "db+files"),
        ),
        (
            "plain files, no database".into(),
            per_round(&|r| expected(points, page_size, 0, "files", reads, r)),
            disk(points, page_size, 0, "files"),
        ),
    ];
    if page_size != 4096 && page_sizes.contains(&4096) {
        alternatives.push((
            "all inside at SQLite's default page size 4096".into(),
            all_inside(4096),
            disk(points, 4096, n, "db+files"),
        ));
    }
    let mut disk_per_blob = vec![(
        "recommendation".to_string(),
        disk(points, page_size, inside, "db+files"),
    )];
    for (name, cost, space) in alternatives {
        let is_rec = match inside {
            0 => name.starts_with("all as files"),
            i if i == n => name.starts_with("all inside the database"),
            _ => false,
        };
        if is_rec {
            continue;
        }
        let s: Vec<f64> = cost.iter().zip(&rec).map(|(a, b)| a / b).collect();
        speedup_vs.push((name.clone(), Spread::of(&s)));
        disk_per_blob.push((name, space));
    }
    Decision {
        page_size,
        page_sizes: page_table,
        threshold_bytes,
        points_inside: inside,
        placement,
        expected_ns: Spread::of(&rec),
        speedup_vs,
        disk_per_blob,
    }
}

pub fn run(args: &AdviseArgs) -> Result<()> {
    let durability = Durability::parse(&args.durability)?;
    if args.reads > 100 {
        return Err(Error::usage(format!(
            "--reads {}: a percentage from 0 to 100, e.g. --reads 90",
            args.reads
        )));
    }
    if args.rounds == 0 {
        return Err(Error::usage("--rounds 0: at least one round is needed"));
    }
    if !(1..=12).contains(&args.points) {
        return Err(Error::usage(format!(
            "--points {}: from 1 to 12 representative sizes",
            args.points
        )));
    }
    if args.total == 0 {
        return Err(Error::usage("--total must be positive, e.g. --total 32M"));
    }
    let page_sizes = parse_list("--page-sizes", &args.page_sizes, parse_page_size)?;
    let sample = match (&args.sample_dir, &args.sizes) {
        (Some(d), _) => sample_dir(d)?,
        (None, Some(s)) => sample_spec(s, args.seed)?,
        (None, None) => {
            return Err(Error::usage(
                "say what your blobs look like: --sample-dir DIR (a folder of real files) or --sizes 10k..2m",
            ));
        }
    };
    crate::command::output::check_outputs(&args.json, args.report.as_deref())?;
    if let (Some(sample_dir), Some(dir)) = (&args.sample_dir, &args.dir)
        && resolved(dir).starts_with(resolved(sample_dir))
    {
        return Err(Error::usage(format!(
            "--dir {}: inside --sample-dir; calibration data must not go into the folder being sampled",
            dir.display()
        )));
    }
    let work = WorkDir::new(args.dir.as_deref(), args.keep, "blobbench-advise-")?;
    let pts = points(&sample, args.points);
    let layouts = page_sizes.len() as u64 + 2;
    let biggest = pts
        .iter()
        .map(|&(s, _)| blobs_for(s, args.total) * s)
        .max()
        .unwrap_or(0);
    let needed = biggest * layouts * if args.keep { pts.len() as u64 } else { 1 } * 12 / 10;
    if let Some(free) = free_bytes(&work.path)
        && free < needed
    {
        return Err(Error::usage(format!(
            "{} has {} free; advise needs about {}: use --dir on a larger disk or a smaller --total",
            work.path.display(),
            human_bytes(free),
            human_bytes(needed)
        )));
    }
    let outcome = calibrate(args, durability, &sample, &pts, &page_sizes, &work);
    work.report_kept(&crate::command::progress::Bars::new());
    outcome
}

/// The path with symbolic links and `..` resolved as far as it exists, the
/// rest appended: where a folder is or would be created.
fn resolved(path: &Path) -> std::path::PathBuf {
    let mut existing = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|f| f.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    out.extend(rest.iter().rev());
    out
}

fn blobs_for(size: u64, total: u64) -> u64 {
    (total / size.max(1)).clamp(10, 1000)
}

fn calibrate(
    args: &AdviseArgs,
    durability: Durability,
    sample: &SizeSample,
    pts: &[(u64, f64)],
    page_sizes: &[u32],
    work: &WorkDir,
) -> Result<()> {
    let reads = args.reads as f64 / 100.0;
    println!(
        "blobbench advise: {} blobs from {}: p10 {}, median {}, p90 {}, max {}",
        sample.blobs,
        sample.source,
        size_label(sample.p10 as f64),
        size_label(sample.median as f64),
        size_label(sample.p90 as f64),
        size_label(sample.max as f64)
    );
    println!(
        "workload: {}% reads, {}% writes; durability {}",
        args.reads,
        100 - args.reads,
        durability.describe()
    );
    println!(
        "calibration: {} sizes x {} layouts x {} rounds in {} ({})",
        pts.len(),
        page_sizes.len() + 2,
        args.rounds,
        work.path.display(),
        crate::measure::environment::filesystem_of(&work.path)
            .map(|f| f.fs_type)
            .unwrap_or_else(|| "?".into())
    );
    if pts.iter().any(|&(s, _)| s == MAX_POINT) {
        println!(
            "note: blobs above {} are calibrated at {} (larger ones would take minutes per layout)",
            size_label(MAX_POINT as f64),
            size_label(MAX_POINT as f64)
        );
    }
    let mut doc = ResultDocument::new(
        "advise",
        crate::store::capture_environment(Some(&work.path)),
        crate::result::Tables::Other(serde_json::Value::Null),
    );
    let (wal_sync, _) = durability.synchronous();
    let (style, fsync) = durability.file_writes();
    let rounds = args.rounds as usize;
    let steps = pts.len() as u64 * (1 + args.rounds) + args.rounds;
    let pb = crate::command::progress::bar(steps, "calibrating");
    let mut results: Vec<PointResult> = Vec::new();
    for (pi, &(size, share)) in pts.iter().enumerate() {
        pb.set_message(format!("{}: creating", size_label(size as f64)));
        let blobs = blobs_for(size, args.total);
        let writes = blobs.min(MAX_WRITES);
        let spec = spec_from_options(blobs, size, 0, "fixed", 1.0, args.seed + pi as u64)?;
        let mut targets: Vec<(String, &'static str, Option<u32>, Target)> = Vec::new();
        let wal = |page: Option<u32>| SqliteSettings {
            page_size: page,
            journal_mode: Some("wal".into()),
            synchronous: Some(wal_sync.into()),
            ..Default::default()
        };
        for &p in page_sizes {
            targets.push((
                format!("db {p}"),
                "db",
                Some(p),
                Target::Sqlite {
                    path: work.join(&format!("advise-{size}-{p}.db")),
                    settings: wal(Some(p)),
                },
            ));
        }
        targets.push((
            "db+files".into(),
            "db+files",
            None,
            Target::SqliteExt {
                path: work.join(&format!("advise-{size}-ext.db")),
                settings: wal(None),
            },
        ));
        targets.push((
            "files".into(),
            "files",
            None,
            Target::Dir {
                path: work.join(&format!("advise-{size}.dir")),
            },
        ));
        let mut names = Vec::new();
        let mut layouts = Vec::new();
        for (name, kind, page, t) in &targets {
            let (store, _) = crate::store::create_dataset(t, &spec, &crate::progress::Silent)?;
            let space_bytes = store.space_used()?;
            drop(store);
            layouts.push(LayoutResult {
                layout: name.clone(),
                kind,
                page_size: *page,
                read_ns: Vec::new(),
                write_ns: Vec::new(),
                space_bytes,
            });
            let path = t.path().to_path_buf();
            names.push(path.clone());
            if *kind == "db+files" {
                let mut files = path.into_os_string();
                files.push(".files");
                names.push(files.into());
            }
        }
        pb.inc(1);
        for round in 0..rounds {
            pb.set_message(format!(
                "{}: round {}/{}",
                size_label(size as f64),
                round + 1,
                rounds
            ));
            let mut order: Vec<usize> = (0..targets.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            // Reads of every layout, then writes, so no read sees another layout's fresh writes.
            for &i in &order {
                let (name, _, _, t) = &targets[i];
                let p = plan(
                    format!("read {name} {size} (round {})", round + 1),
                    t.clone(),
                    Operation::Read,
                    blobs,
                    session(ReadPath::Sql, false, WriteStyle::Truncate, false),
                    args.seed ^ size ^ round as u64,
                );
                let r = execute(&p, &crate::progress::Silent)?;
                layouts[i].read_ns.push(per_op_ns(&r, false));
                doc.runs.push(r);
            }
            for &i in &order {
                let (name, kind, _, t) = &targets[i];
                let per_txn = *kind != "files";
                let p = plan(
                    format!("write {name} {size} (round {})", round + 1),
                    t.clone(),
                    Operation::Update,
                    writes,
                    session(ReadPath::Sql, per_txn, style, fsync),
                    args.seed ^ size ^ (round as u64 + 100),
                );
                let r = execute(&p, &crate::progress::Silent)?;
                // Writes pay for their WAL checkpoint too.
                layouts[i].write_ns.push(per_op_ns(&r, true));
                doc.runs.push(r);
            }
            pb.inc(1);
        }
        results.push(PointResult {
            size,
            share,
            blobs,
            writes,
            layouts,
        });
        if !args.keep {
            for n in &names {
                remove_entry(n);
            }
        }
    }
    let decision = decide(&results, page_sizes, reads, rounds);

    // WAL against a rollback journal, at the size carrying the most blobs,
    // with the chosen page size.
    // Ties (equal shares) go to the middle size.
    let middle = (pts.len() - 1) as f64 / 2.0;
    let (journal_point, _) = *pts
        .iter()
        .enumerate()
        .max_by(|(i, a), (k, b)| {
            a.1.total_cmp(&b.1).then(
                (*k as f64 - middle)
                    .abs()
                    .total_cmp(&(*i as f64 - middle).abs()),
            )
        })
        .map(|(_, p)| p)
        .expect("at least one point");
    pb.set_message("journal modes".to_string());
    let journal = compare_journals(
        args,
        durability,
        journal_point,
        decision.page_size,
        work,
        &mut doc,
        &pb,
    )?;
    pb.finish_and_clear();

    print_outcome(args, durability, &results, &decision, &journal);
    doc.tables = crate::result::Tables::Advise(crate::result::advise::AdviseTables(json!({
        "advise": {
            "input": {
                "sample": sample,
                "reads_percent": args.reads,
                "durability": durability,
                "page_sizes": page_sizes,
                "rounds": args.rounds,
                "total_per_layout": args.total,
            },
            "points": results,
            "decision": decision,
            "journal": journal,
        }
    })));
    crate::command::output::write_result_with_report(&mut doc, &args.json, args.report.as_deref())?;
    println!("result written to {}", args.json.display());
    Ok(())
}

#[derive(Debug, Clone, Serialize)]
pub struct JournalComparison {
    pub size: u64,
    pub page_size: u32,
    /// (journal_mode, synchronous, write ns per round)
    pub modes: Vec<(String, String, Vec<f64>)>,
    pub best: String,
    pub best_synchronous: String,
    /// Rollback time / WAL time per round.
    pub rollback_over_wal: Spread,
}

fn compare_journals(
    args: &AdviseArgs,
    durability: Durability,
    size: u64,
    page_size: u32,
    work: &WorkDir,
    doc: &mut ResultDocument,
    pb: &indicatif::ProgressBar,
) -> Result<JournalComparison> {
    let (wal_sync, rollback_sync) = durability.synchronous();
    let blobs = blobs_for(size, args.total);
    let writes = blobs.min(MAX_WRITES);
    let spec = spec_from_options(blobs, size, 0, "fixed", 1.0, args.seed)?;
    let path = work.join(&format!("advise-journal-{size}.db"));
    let target = |mode: &str, sync: &str| Target::Sqlite {
        path: path.clone(),
        settings: SqliteSettings {
            page_size: Some(page_size),
            journal_mode: Some(mode.into()),
            synchronous: Some(sync.into()),
            ..Default::default()
        },
    };
    let (store, _) = crate::store::create_dataset(
        &target("delete", rollback_sync),
        &spec,
        &crate::progress::Silent,
    )?;
    drop(store);
    let modes = [("wal", wal_sync), ("delete", rollback_sync)];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); 2];
    for round in 0..args.rounds as usize {
        let order: [usize; 2] = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let (mode, sync) = modes[i];
            let p = plan(
                format!(
                    "write journal {mode} synchronous {sync} (round {})",
                    round + 1
                ),
                target(mode, sync),
                Operation::Update,
                writes,
                session(ReadPath::Sql, true, WriteStyle::Truncate, false),
                args.seed ^ (round as u64 + 200),
            );
            let r = execute(&p, &crate::progress::Silent)?;
            times[i].push(per_op_ns(&r, true));
            doc.runs.push(r);
        }
        pb.inc(1);
    }
    if !args.keep {
        remove_entry(&path);
    }
    let ratio: Vec<f64> = times[1].iter().zip(&times[0]).map(|(d, w)| d / w).collect();
    let ratio = Spread::of(&ratio);
    let wal_wins = ratio.median >= 1.0;
    Ok(JournalComparison {
        size,
        page_size,
        modes: modes
            .iter()
            .zip(times)
            .map(|((m, s), t)| (m.to_string(), s.to_string(), t))
            .collect(),
        best: if wal_wins { "wal" } else { "delete" }.into(),
        best_synchronous: if wal_wins { wal_sync } else { rollback_sync }.into(),
        rollback_over_wal: ratio,
    })
}

fn spread_text(s: &Spread) -> String {
    format!("{:.2}x [{:.2}..{:.2}]", s.median, s.min, s.max)
}

fn print_outcome(
    args: &AdviseArgs,
    durability: Durability,
    points: &[PointResult],
    d: &Decision,
    j: &JournalComparison,
) {
    let ns = crate::units::human_duration_ns;
    let reads = args.reads as f64 / 100.0;
    let mut t = Table::new([
        "size",
        "share",
        "read db",
        "read db+files",
        "read files",
        "write db",
        "write db+files",
        "write files",
        "db+files / db",
    ]);
    for p in points {
        let db = find(p, "db", Some(d.page_size));
        let ext = find(p, "db+files", None);
        let files = find(p, "files", None);
        let med = |v: &[f64]| ns(summarize(v).median);
        let ratio: Vec<f64> = (0..db.read_ns.len())
            .map(|r| mix_cost(ext, r, reads) / mix_cost(db, r, reads))
            .collect();
        t.row([
            size_label(p.size as f64),
            format!("{:.0}%", p.share * 100.0),
            med(&db.read_ns),
            med(&ext.read_ns),
            med(&files.read_ns),
            med(&db.write_ns),
            med(&ext.write_ns),
            med(&files.write_ns),
            spread_text(&Spread::of(&ratio)),
        ]);
    }
    println!(
        "\nper operation, median of {} rounds (db at page size {}; db+files / db is the mix's time, above 1 the database wins):",
        args.rounds, d.page_size
    );
    print!("{}", t.render());
    println!(
        "\nrecommendation for {}% reads, durability {}:",
        args.reads, args.durability
    );
    match (d.placement, d.threshold_bytes) {
        ("split by size", Some(x)) => println!(
            "  store blobs below {} inside the database, larger ones as files named in it",
            size_label(x)
        ),
        ("all as files", _) => println!(
            "  store the blobs as files named in the database (keeping any size range inside does not lower the expected time)"
        ),
        _ => println!(
            "  store every blob inside the database (moving any size range out to files does not lower the expected time)"
        ),
    }
    let pages: Vec<String> = d
        .page_sizes
        .iter()
        .filter(|(p, _)| *p != d.page_size)
        .map(|(p, s)| format!("{p}: {}", spread_text(s)))
        .collect();
    println!(
        "  page_size={}            (time per operation of the others, relative: {})",
        d.page_size,
        pages.join(", ")
    );
    let (w, r) = (&j.modes[0], &j.modes[1]);
    println!(
        "  journal_mode={}, synchronous={}   (writes of {} blobs: {}+{} takes {} the time of {}+{})",
        j.best.to_uppercase(),
        j.best_synchronous.to_uppercase(),
        size_label(j.size as f64),
        r.0.to_uppercase(),
        r.1.to_uppercase(),
        spread_text(&j.rollback_over_wal),
        w.0.to_uppercase(),
        w.1.to_uppercase()
    );
    if durability == Durability::None {
        println!(
            "  (synchronous=OFF: a power loss can corrupt the database; only for data you can rebuild)"
        );
    }
    let rec_disk = d.disk_per_blob[0].1;
    for ((name, s), (_, space)) in d.speedup_vs.iter().zip(d.disk_per_blob.iter().skip(1)) {
        let saving = 1.0 - rec_disk / space;
        println!(
            "  vs {name}: {} faster, {} disk",
            spread_text(s),
            if saving >= 0.0 {
                format!("{:.0}% less", saving * 100.0)
            } else {
                format!("{:.0}% more", -saving * 100.0)
            }
        );
    }
    println!(
        "  expected time per operation: {} [{}..{}] (speed-ups: median [min..max] over rounds)",
        ns(d.expected_ns.median),
        ns(d.expected_ns.min),
        ns(d.expected_ns.max)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(kind: &'static str, page: Option<u32>, read: f64, write: f64) -> LayoutResult {
        LayoutResult {
            layout: kind.into(),
            kind,
            page_size: page,
            read_ns: vec![read, read * 1.1],
            write_ns: vec![write, write * 1.1],
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
                layout("db", Some(4096), db4096, db4096),
                layout("db", Some(16384), db16384, db16384),
                layout("db+files", None, ext, ext),
                layout("files", None, ext * 1.2, ext * 1.2),
            ],
        }
    }

    #[test]
    fn lognormal_ranges_put_their_ends_near_the_5th_and_95th_percentiles() {
        let s = sample_spec("10k..2m", 7).unwrap();
        let q = |f: f64| s.sorted[((s.sorted.len() - 1) as f64 * f) as usize] as f64;
        assert!((8_000.0..12_500.0).contains(&q(0.05)), "{}", q(0.05));
        assert!((1_600_000.0..2_500_000.0).contains(&q(0.95)), "{}", q(0.95));
        let u = sample_spec("1k..3k uniform", 7).unwrap();
        assert!(u.sorted.iter().all(|&x| (1000..=3000).contains(&x)));
        let l = sample_spec("4k,40k", 1).unwrap();
        assert_eq!(points(&l, 4), vec![(4000, 0.5), (40_000, 0.5)]);
        for bad in ["2m..10k", "10k..2m pareto", "10q", "4k,40k uniform", ""] {
            assert!(sample_spec(bad, 1).is_err(), "{bad}");
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
        let d = decide(&pts, &[4096, 16384], 0.9, 2);
        assert_eq!(d.page_size, 16384);
        assert_eq!(d.points_inside, 2);
        assert_eq!(d.placement, "split by size");
        let x = d.threshold_bytes.unwrap();
        assert!(x > 50_000.0 && x < 200_000.0, "{x}");
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
        let d = decide(&pts, &[4096, 16384], 0.5, 2);
        assert_eq!(d.placement, "all inside the database");
        assert!(d.threshold_bytes.is_none());
    }
}
