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

use super::AgingOptions;
use super::volume::Volume;

/// Measures the series' state now: fragments and space first (they only
/// look), then the cold read rounds. The point's age and writes are the
/// caller's to fill in. Returns it with how the cache was emptied.
pub fn point(
    store: &mut Box<dyn Store>,
    target: &Target,
    spec: &DatasetSpec,
    volume: &Volume,
    keys: &[u64],
    options: &AgingOptions,
) -> Result<(AgePoint, String)> {
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
    let (read_mb_s, blobs_read, cold) = read_rounds(target, spec, volume, keys, options)?;
    Ok((
        AgePoint {
            target_age: 0.0,
            age: 0.0,
            vacuumed: false,
            note: None,
            blobs: keys.len() as u64,
            stored_bytes,
            read_mb_s,
            blobs_read,
            writes: WritePass::default(),
            fragments,
            space,
        },
        cold,
    ))
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

/// Reads every blob once, whole, in a random order cut into rounds; before
/// each round the caches are emptied and the store opened anew, so each
/// round starts cold. Each read is timed (into the application's buffer);
/// each blob is checked against the dataset afterwards, untimed. Returns
/// MB/s per round, blobs read and how the cache was emptied.
fn read_rounds(
    target: &Target,
    spec: &DatasetSpec,
    volume: &Volume,
    keys: &[u64],
    options: &AgingOptions,
) -> Result<(Vec<f64>, u64, String)> {
    let mut order = keys.to_vec();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(options.seed ^ keys.len() as u64);
    order.shuffle(&mut rng);
    let rounds = (options.read_rounds as usize).clamp(1, order.len().max(1));
    let per_round = order.len().div_ceil(rounds);
    let mut rates = Vec::with_capacity(rounds);
    let mut cold = String::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut read = 0;
    for slice in order.chunks(per_round.max(1)) {
        super::interrupt::check()?;
        cold = volume.drop_caches()?;
        let mut store = store::open(&target.for_inspection(), Access::ReadOnly)?;
        let mut session = store.session(SessionOptions {
            per_op_transaction: true,
            ..SessionOptions::default()
        })?;
        let (mut ns, mut bytes) = (0u64, 0u64);
        for &key in slice {
            let started = std::time::Instant::now();
            session.read(key, &mut |d| {
                buf.clear();
                buf.extend_from_slice(d);
            })?;
            ns += started.elapsed().as_nanos() as u64;
            spec.verify(key, &buf, Some(0))?;
            bytes += buf.len() as u64;
            read += 1;
        }
        rates.push(bytes as f64 * 1e3 / ns.max(1) as f64);
    }
    Ok((rates, read, cold))
}
