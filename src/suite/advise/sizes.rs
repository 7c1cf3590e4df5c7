//! The user's blob sizes: sampled from a folder (only stat()ed) or from a
//! description (`A..B [lognormal|uniform]`, a list), and the few
//! representative sizes that stand for them in the calibration.

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_distr::Distribution;

use crate::error::{Error, Result};
use crate::result::advise::SizeSample;
use crate::units::parse_number;

use super::super::common::parse_list;

/// Largest blob size calibrated; larger sizes are measured at this size.
pub const MAX_POINT: u64 = 32_000_000;

/// Sizes drawn from a range description.
const DRAWN: usize = 10_000;

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
        assert_eq!(points(&l, 4), vec![(4000, 0.5), (40_000, 0.5)]);
        for bad in ["2m..10k", "10k..2m pareto", "10q", "4k,40k uniform", ""] {
            assert!(sample_spec(bad, 1).is_err(), "{bad}");
        }
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
