//! The user's blob sizes: sampled from a folder (only stat()ed) or from a
//! description (`A..B [lognormal|uniform]`, a list), and the few bands they
//! are cut into, each measured at the mean size of its blobs.

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_distr::Distribution;

use crate::error::{Error, Result};
use crate::result::advise::{Band, SizeBand, SizeSample};
use crate::units::parse_number;

use super::super::common::parse_list;

/// Largest blob size calibrated: a band whose mean is larger is measured at
/// this size (larger ones would take minutes per layout) and the output says so.
pub const MAX_POINT: u64 = 32_000_000;

/// Sizes drawn from a range description.
/// Enough that the mean of a heavy tail's top band is stable to about 1%
/// (10k..1m log-normal: 4% with 10,000 sizes).
const DRAWN: usize = 100_000;

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
    // The first folder or entry that could not be read: the reason to give
    // when nothing could be sampled, rather than "no files found".
    let mut unreadable: Option<(std::path::PathBuf, std::io::Error)> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) if d == dir => return Err(unreadable_error(dir, &d, &e)),
            Err(e) => {
                skipped += 1;
                unreadable.get_or_insert((d.clone(), e));
                continue;
            }
        };
        for e in entries {
            let e = match e {
                Ok(e) => e,
                Err(err) => {
                    skipped += 1;
                    unreadable.get_or_insert((d.clone(), err));
                    continue;
                }
            };
            match std::fs::symlink_metadata(e.path()) {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) if m.is_file() && m.len() > 0 => sizes.push(m.len()),
                Ok(_) => skipped += 1,
                Err(err) => {
                    skipped += 1;
                    unreadable.get_or_insert((e.path(), err));
                }
            }
        }
        if sizes.len() >= 1_000_000 {
            break;
        }
    }
    if sizes.is_empty() {
        if let Some((path, e)) = unreadable {
            return Err(unreadable_error(dir, &path, &e));
        }
        return Err(Error::usage(format!(
            "--sample-dir {}: no non-empty files found; name a folder of files like the ones you will store",
            dir.display()
        )));
    }
    Ok(SizeSample::new(dir.display().to_string(), sizes, skipped))
}

/// A folder (or entry) of `--sample-dir` that could not be read, with the
/// system's reason (permission denied, ...) and the fix.
fn unreadable_error(dir: &Path, path: &Path, e: &std::io::Error) -> Error {
    let reason = match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
        None => e.to_string(),
    };
    Error::usage(format!(
        "--sample-dir {}: cannot read \"{}\": {reason}; run as a user who can read it, or name another folder",
        dir.display(),
        path.display()
    ))
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
    let sizes = if let Some((a, b)) = range.split_once("..") {
        let (a, b) = (size(a)?, size(b)?);
        if a >= b {
            return Err(bad("the range must go from smaller to larger"));
        }
        draw(a, b, shape_word.unwrap_or("lognormal"), seed).map_err(|why| bad(&why))?
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

/// Sizes from `a` to `b` in `shape`; the error says why not.
fn draw(a: u64, b: u64, shape: &str, seed: u64) -> std::result::Result<Vec<u64>, String> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    match shape {
        "lognormal" => {
            // A and B at about the 5th and 95th percentiles.
            let mu = ((a as f64).ln() + (b as f64).ln()) / 2.0;
            let sigma = ((b as f64).ln() - (a as f64).ln()) / (2.0 * 1.645);
            let d = rand_distr::LogNormal::new(mu, sigma).map_err(|e| format!("{e}"))?;
            Ok((0..DRAWN)
                .map(|_| (d.sample(&mut rng).round() as u64).clamp(1, 1 << 30))
                .collect())
        }
        "uniform" => Ok((0..DRAWN).map(|_| rng.random_range(a..=b)).collect()),
        other => Err(format!("unknown shape \"{other}\"")),
    }
}

/// The bands the sizes are cut into: `k` quantile bands of the sorted
/// sample, each costed at the mean size of its blobs (at most
/// [`MAX_POINT`]) and weighted by its share of them. Equal sizes stay in one
/// band (a cut inside a run of equal sizes moves to the nearer end of the
/// run), so a band's share is the exact fraction of blobs it holds; bands
/// whose means are within 5% of each other are merged.
///
/// Why the mean and not the band's midpoint: for blobs large enough to
/// matter, time per operation grows about linearly with size, so the mean
/// time over a band is about the time at its mean size. A heavy tail pulls
/// the mean far above the midpoint (10k..1m log-normal, top band of five:
/// midpoint 600k, mean 950k), and the midpoint under-costs it.
pub fn points(sample: &SizeSample, k: u64) -> Vec<Band> {
    let sorted = &sample.sorted;
    let n = sorted.len();
    let mut cuts: Vec<usize> = (0..=k)
        .map(|i| cut_at(sorted, (i as usize * n) / k as usize))
        .collect();
    cuts.dedup();
    let mut out: Vec<Band> = Vec::new();
    for w in cuts.windows(2) {
        let part = &sorted[w[0]..w[1]];
        let share = part.len() as f64 / n as f64;
        let mean = part.iter().map(|&s| s as f64).sum::<f64>() / part.len() as f64;
        match out.last_mut() {
            Some(last) if mean <= last.range.mean * 1.05 => {
                // One band: the mean of both, weighted by their blobs.
                let total = last.share + share;
                last.range.mean = (last.range.mean * last.share + mean * share) / total;
                last.range.max = part[part.len() - 1];
                last.share = total;
                last.size = measured_size(last.range.mean);
            }
            _ => out.push(Band {
                range: SizeBand {
                    min: part[0],
                    max: part[part.len() - 1],
                    mean,
                },
                share,
                size: measured_size(mean),
            }),
        }
    }
    out
}

/// Where a band boundary at index `at` of `sorted` goes: there, unless it
/// falls inside a run of equal sizes; then to the nearer end of the run.
fn cut_at(sorted: &[u64], at: usize) -> usize {
    if at == 0 || at >= sorted.len() || sorted[at - 1] != sorted[at] {
        return at.min(sorted.len());
    }
    let v = sorted[at];
    let start = sorted.partition_point(|&x| x < v);
    let end = sorted.partition_point(|&x| x <= v);
    if at - start < end - at { start } else { end }
}

/// The size a band of `mean` is measured at: the mean, at most the cap.
fn measured_size(mean: f64) -> u64 {
    (mean.round() as u64).clamp(1, MAX_POINT)
}

/// 10k, 2.5m: sizes in progress messages as the reports write them (the
/// report's own helper is out of a suite's reach).
pub fn size_label(v: u64) -> String {
    let trim = |x: f64, decimals: usize| {
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let v = v as f64;
    if v >= 1e9 {
        format!("{}g", trim(v / 1e9, 1))
    } else if v >= 1e6 {
        format!("{}m", trim(v / 1e6, 1))
    } else if v >= 1e3 {
        format!("{}k", trim(v / 1e3, 1))
    } else {
        trim(v, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lognormal_ranges_put_their_ends_near_the_5th_and_95th_percentiles() {
        let s = sample_spec("10k..2m", 7).unwrap();
        let q = |f: f64| s.sorted[((s.sorted.len() - 1) as f64 * f) as usize] as f64;
        assert!((8_000.0..12_500.0).contains(&q(0.05)), "{}", q(0.05));
        assert!((1_600_000.0..2_500_000.0).contains(&q(0.95)), "{}", q(0.95));
        let u = sample_spec("1k..3k uniform", 7).unwrap();
        assert!(u.sorted.iter().all(|&x| (1000..=3000).contains(&x)));
        let l = sample_spec("4k,40k", 1).unwrap();
        let sizes: Vec<(u64, f64)> = points(&l, 4).iter().map(|b| (b.size, b.share)).collect();
        assert_eq!(sizes, vec![(4000, 0.5), (40_000, 0.5)]);
        for bad in ["2m..10k", "10k..2m pareto", "10q", "4k,40k uniform", ""] {
            assert!(sample_spec(bad, 1).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_top_band_of_a_heavy_tail_is_costed_at_its_mean_not_its_midpoint() {
        let s = sample_spec("10k..1m", 1).unwrap();
        // Means of the top third and top fifth of the log-normal with 10k and
        // 1m at its 5th and 95th percentiles (mu = ln 100k, sigma = ln 100 /
        // 3.29): exp(mu + sigma^2/2) * (1 - Phi(z - sigma)) / share.
        for (k, mean, quantile) in [(3, 666_203.0, 5.0 / 6.0), (5, 947_717.0, 0.9)] {
            let bands = points(&s, k);
            assert_eq!(bands.len(), k as usize, "{bands:?}");
            let top = bands.last().unwrap();
            let midpoint = s.sorted[((s.sorted.len() - 1) as f64 * quantile) as usize] as f64;
            assert!((top.share - 1.0 / k as f64).abs() < 1e-3, "{top:?}");
            assert!(
                (top.size as f64 / mean - 1.0).abs() < 0.03,
                "{k} bands: top measured at {}, mean {mean}",
                top.size
            );
            assert!(top.size as f64 > 1.4 * midpoint, "{top:?} vs {midpoint}");
            assert_eq!(top.range.max, s.max);
            assert!(!top.capped());
        }
    }

    #[test]
    fn equal_sizes_stay_in_one_band_and_shares_are_exact() {
        // 40 x 2000, 20 x 50k, 10 x 400k: five bands of 14 would cut through
        // the runs; the cuts move to the runs' ends.
        let sizes: Vec<u64> = [(40, 2000), (20, 50_000), (10, 400_000)]
            .iter()
            .flat_map(|&(n, v)| std::iter::repeat_n(v, n))
            .collect();
        let bands = points(&SizeSample::new("t".into(), sizes, 0), 5);
        let got: Vec<(u64, u64, u64, f64)> = bands
            .iter()
            .map(|b| (b.range.min, b.range.max, b.size, b.share))
            .collect();
        assert_eq!(
            got,
            [
                (2000, 2000, 2000, 40.0 / 70.0),
                (50_000, 50_000, 50_000, 20.0 / 70.0),
                (400_000, 400_000, 400_000, 10.0 / 70.0)
            ]
        );
        // A band of mixed sizes is measured at their mean.
        let one = points(&SizeSample::new("t".into(), (1..=100).collect(), 0), 1);
        assert_eq!((one[0].range.min, one[0].range.max), (1, 100));
        assert_eq!((one[0].range.mean, one[0].size), (50.5, 51));
    }

    #[test]
    fn bands_above_the_cap_are_measured_at_the_cap_and_say_so() {
        let s = sample_spec("4k,100m", 1).unwrap();
        let bands = points(&s, 2);
        assert_eq!(bands.len(), 2);
        assert!(!bands[0].capped());
        assert_eq!(bands[1].size, MAX_POINT);
        assert_eq!(bands[1].range.mean, 100e6);
        assert!(bands[1].capped());
    }

    #[test]
    fn size_labels_match_the_reports() {
        let labels: Vec<String> = [
            0,
            999,
            1000,
            1500,
            19_126,
            2_500_000,
            32_000_000,
            3_000_000_000,
        ]
        .into_iter()
        .map(size_label)
        .collect();
        assert_eq!(
            labels,
            ["0", "999", "1k", "1.5k", "19.1k", "2.5m", "32m", "3g"]
        );
    }
}
