//! What `suite aging` measures at each storage age: the blobs' fragments on
//! disk, space on the volume, and cold reads of whole blobs in random order.

use std::collections::HashMap;
use std::path::PathBuf;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::dataset::DatasetSpec;
use crate::error::Result;
use crate::measure::fragments::{self, Extent};
use crate::result::aging::{AgePoint, Fragments, SpaceUse, WritePass};
use crate::store::{self, Access, DiskLayout, SessionOptions, Store};
use crate::target::Target;
use crate::workload::timer::OpTimer;

use super::AgingOptions;
use super::volume::Volume;

/// Measures what only looks at the series' state now: fragments and
/// space. The point's age, writes and read rounds are the caller's to
/// fill in ([`read_plan`], [`read_round`], [`schedule`]).
pub fn survey(
    store: &mut Box<dyn Store>,
    spec: &DatasetSpec,
    volume: &Volume,
    keys: &[u64],
) -> Result<AgePoint> {
    volume.sync()?;
    let layout = store.disk_layout()?;
    let fragments = count_fragments(layout.as_ref());
    let usage = volume.usage()?;
    let space = SpaceUse {
        store_bytes: store.space_used()?,
        freelist_bytes: layout.as_ref().map_or(0, |l| l.freelist_bytes),
        volume_used_bytes: usage.used,
        volume_free_bytes: usage.free,
        free_space: volume.free_space(),
    };
    let stored_bytes = keys.iter().map(|&k| spec.size_of(k) as u64).sum();
    Ok(AgePoint {
        target_age: 0.0,
        age: 0.0,
        vacuumed: false,
        note: None,
        blobs: keys.len() as u64,
        stored_bytes,
        read_mb_s: Vec::new(),
        blobs_read: 0,
        writes: WritePass::default(),
        fragments,
        space,
    })
}

/// Every blob's runs on disk, through its file's extents (asked once per
/// file), summed up; SQLite's page runs beside them.
fn count_fragments(layout: Option<&DiskLayout>) -> Fragments {
    let Some(layout) = layout else {
        return unavailable("the store cannot say where its blobs lie");
    };
    let mut extents: HashMap<PathBuf, Option<Vec<Extent>>> = HashMap::new();
    let mut runs = Vec::with_capacity(layout.blobs.len());
    let mut page_runs = Vec::new();
    for blob in &layout.blobs {
        let file_extents = extents
            .entry(blob.file.clone())
            .or_insert_with(|| fragments::extents_of(&blob.file));
        let Some(e) = file_extents else {
            return unavailable(&format!(
                "the filesystem does not answer FIEMAP for {}",
                blob.file.display()
            ));
        };
        runs.push(fragments::runs_on_disk(&blob.ranges, e));
        page_runs.push(fragments::contiguous_ranges(&blob.ranges));
    }
    let mut f = summarize_runs(&runs);
    // Blobs sharing a file (a database): their page order is SQLite's.
    if extents.len() < layout.blobs.len() && !page_runs.is_empty() {
        f.page_runs_mean = Some(page_runs.iter().sum::<u64>() as f64 / page_runs.len() as f64);
    }
    f
}

/// Counts of fragments per blob, summed up.
fn summarize_runs(runs: &[u64]) -> Fragments {
    if runs.is_empty() {
        return unavailable("no blobs");
    }
    let mut sorted = runs.to_vec();
    sorted.sort_unstable();
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    Fragments {
        blobs: runs.len() as u64,
        mean: runs.iter().sum::<u64>() as f64 / runs.len() as f64,
        p50: at(0.5),
        p90: at(0.9),
        max: *sorted.last().unwrap_or(&0),
        fragmented_share: runs.iter().filter(|&&r| r > 1).count() as f64 / runs.len() as f64,
        page_runs_mean: None,
        unavailable: None,
    }
}

fn unavailable(why: &str) -> Fragments {
    Fragments {
        unavailable: Some(why.into()),
        ..Fragments::default()
    }
}

/// Every blob once, in a random order cut into the rounds asked (fewer
/// when there are fewer blobs): the keys each cold read round reads.
pub fn read_plan(keys: &[u64], options: &AgingOptions) -> Vec<Vec<u64>> {
    let mut order = keys.to_vec();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(options.seed ^ keys.len() as u64);
    order.shuffle(&mut rng);
    let rounds = (options.read_rounds as usize).clamp(1, order.len().max(1));
    let per_round = order.len().div_ceil(rounds);
    order
        .chunks(per_round.max(1))
        .map(<[u64]>::to_vec)
        .collect()
}

/// The order the read rounds of several series are taken in, side by
/// side: round by round, every series that has that round, in the given
/// order on even rounds and reversed on odd ones (A B C, C B A, A B C,
/// ...), so round r of each series is read next to round r of the others
/// and drift favours none. `rounds[i]` is how many rounds series i has.
/// Returns (series, round) in reading order.
pub fn schedule(rounds: &[usize]) -> Vec<(usize, usize)> {
    let most = rounds.iter().copied().max().unwrap_or(0);
    let mut out = Vec::with_capacity(rounds.iter().sum());
    for round in 0..most {
        let mut order: Vec<usize> = (0..rounds.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        out.extend(
            order
                .into_iter()
                .filter(|&i| round < rounds[i])
                .map(|i| (i, round)),
        );
    }
    out
}

/// One cold read round: the caches emptied and the store opened anew,
/// then every blob of `keys` read whole, each read timed (into the
/// application's buffer) and each blob checked against the dataset
/// afterwards, untimed. Returns MB/s, blobs read and how the cache was
/// emptied.
pub fn read_round(
    target: &Target,
    spec: &DatasetSpec,
    volume: &Volume,
    keys: &[u64],
    buf: &mut Vec<u8>,
) -> Result<(f64, u64, String)> {
    super::interrupt::check()?;
    let cold = volume.drop_caches()?;
    let mut store = store::open(&target.for_inspection(), Access::ReadOnly)?;
    let mut session = store.session(SessionOptions {
        per_op_transaction: true,
        ..SessionOptions::default()
    })?;
    let mut timer = OpTimer::with_capacity(keys.len());
    let (mut bytes, mut read) = (0u64, 0u64);
    for &key in keys {
        timer.time(|| {
            session.read(key, &mut |d| {
                buf.clear();
                buf.extend_from_slice(d);
            })
        })?;
        spec.verify(key, buf, Some(0))?;
        bytes += buf.len() as u64;
        read += 1;
    }
    let ns = timer.total_ns();
    Ok((bytes as f64 * 1e3 / ns.max(1) as f64, read, cold))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_order_alternates_across_layouts_round_by_round() {
        // Three layouts, three rounds each: A B C, C B A, A B C.
        let s = schedule(&[3, 3, 3]);
        let layouts: Vec<usize> = s.iter().map(|&(i, _)| i).collect();
        assert_eq!(layouts, [0, 1, 2, 2, 1, 0, 0, 1, 2]);
        let rounds: Vec<usize> = s.iter().map(|&(_, r)| r).collect();
        assert_eq!(rounds, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
        // Round r of every layout is read before any layout's round r + 1.
        for w in s.windows(2) {
            assert!(w[0].1 <= w[1].1, "{s:?}");
        }
        // Two layouts: A B, B A, ...; each leads as often as it trails.
        let two = schedule(&[4, 4]);
        assert_eq!(
            two,
            [
                (0, 0),
                (1, 0),
                (1, 1),
                (0, 1),
                (0, 2),
                (1, 2),
                (1, 3),
                (0, 3)
            ]
        );
        // A layout with fewer rounds (fewer blobs than rounds) drops out
        // after its last; the others keep alternating.
        let short = schedule(&[2, 1, 2]);
        assert_eq!(short, [(0, 0), (1, 0), (2, 0), (2, 1), (0, 1)]);
        assert!(schedule(&[]).is_empty());
    }

    #[test]
    fn the_read_plan_reads_every_blob_once_in_the_rounds_asked() {
        let options = AgingOptions {
            place: super::super::Place::Dir {
                path: "/nonexistent".into(),
                capacity: 1,
            },
            fills: vec![0.5],
            sizes: Vec::new(),
            ages: Vec::new(),
            layouts: Vec::new(),
            vacuum: false,
            read_rounds: 3,
            page_size: 4096,
            durable: false,
            seed: 7,
        };
        let keys: Vec<u64> = (1..=10).collect();
        let plan = read_plan(&keys, &options);
        assert_eq!(plan.len(), 3);
        let mut all: Vec<u64> = plan.concat();
        all.sort_unstable();
        assert_eq!(all, keys);
        // Fewer blobs than rounds: a round per blob.
        assert_eq!(read_plan(&[5, 6], &options).len(), 2);
    }
}
