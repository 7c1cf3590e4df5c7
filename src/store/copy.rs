//! Filling a new target with a dataset, and copying one target into another.

use std::path::Path;
use std::time::Instant;

use super::contract::{SessionOptions, Store};
use super::files::FileLayout;
use super::open::{check_free_space, check_room, create, inspect};
use crate::dataset::{DatasetSpec, Manifest};
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::target::Target;

/// Loads every blob of `spec` into a new target; returns the store.
pub fn create_dataset(
    target: &Target,
    spec: &DatasetSpec,
    progress: &dyn Progress,
) -> Result<(Box<dyn Store>, u64)> {
    check_room(target, spec)?;
    let manifest = Manifest::new(spec.clone()).started();
    let mut store = create(target, &manifest)?;
    progress.start(&format!("creating {}", target.kind_name()), spec.count);
    let started = Instant::now();
    {
        let mut session = store.session(SessionOptions::default())?;
        session.begin()?;
        let mut buf = Vec::new();
        for key in spec.first_key..=spec.last_key() {
            spec.fill(key, 0, &mut buf);
            session.insert(key, &buf)?;
            crate::pause::at("dataset-blob");
            crate::interrupt::check()?;
            if key % 256 == 0 {
                progress.advance(256);
            }
        }
        crate::pause::at("dataset-before-commit");
        session.commit()?;
        session.checkpoint()?;
    }
    let load_ns = started.elapsed().as_nanos() as u64;
    crate::pause::at("dataset-before-finish");
    // Untimed: durability of the files and the completion mark, last.
    store.finish(&manifest.completed())?;
    progress.finish();
    Ok((store, load_ns))
}

/// Copies every blob of `source` into a new target `dest`, in key order;
/// returns (blobs, bytes). The source is opened read-only and never
/// changed; `dest` is created as `init` creates a target (refusing to
/// replace what blobbench did not make) and carries the source's manifest,
/// or one describing its keys when the source has none.
pub fn copy(source: &Target, dest: &Target, progress: &dyn Progress) -> Result<(u64, u64)> {
    let copied = copy_inner(source, dest, progress, false)?;
    Ok((copied.blobs, copied.bytes))
}

/// What [`copy_measured`] copied, and the disk space of both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopySummary {
    /// Blobs copied.
    pub blobs: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The source's disk space (measured once, before the copy).
    pub source_space: u64,
    /// The destination's, once complete.
    pub dest_space: u64,
}

/// [`copy`], also measuring the disk space of the source and of the
/// finished copy (`export` prints both): each end walked once, the
/// destination's walk overlapping its flush where the store can.
pub fn copy_measured(
    source: &Target,
    dest: &Target,
    progress: &dyn Progress,
) -> Result<CopySummary> {
    copy_inner(source, dest, progress, true)
}

/// The copy; the spaces are measured when `measure` (0 otherwise).
fn copy_inner(
    source: &Target,
    dest: &Target,
    progress: &dyn Progress,
    measure: bool,
) -> Result<CopySummary> {
    refuse_same(source, dest)?;
    let mut from = inspect(source)?;
    let catalog = from.catalog()?;
    from.check_scan(&catalog)?;
    let local = source.data_path().is_some() && dest.data_path().is_some();
    let source_space = match (measure, local) {
        (true, _) => from.space_used()?,
        (false, true) => from.space_used().unwrap_or(0),
        (false, false) => 0,
    };
    // The copy takes about what the source takes on disk: refused before
    // the destination is made when that cannot fit (local to local only; a
    // server's space is not the blobs' alone).
    if let (true, Some(to)) = (local, dest.data_path()) {
        let needed = source_space;
        check_free_space(
            to,
            needed,
            &format!("a copy of the {} blobs of {source}", catalog.count),
            "copy to a larger disk",
        )?;
    }
    let manifest = catalog
        .manifest
        .clone()
        .unwrap_or_else(|| Manifest::for_keys(catalog.first_key, catalog.last_key, catalog.count))
        .started();
    let mut to = create(dest, &manifest)?;
    progress.start("exporting", catalog.count);
    let mut session = to.session(SessionOptions::default())?;
    // One transaction for a database destination, as init loads one.
    session.begin()?;
    let mut bytes = 0u64;
    let mut count = 0u64;
    from.scan(&mut |key, data| {
        session.insert(key, data)?;
        count += 1;
        bytes += data.len() as u64;
        crate::pause::at("copy-blob");
        crate::interrupt::check()?;
        if count.is_multiple_of(256) {
            progress.advance(256);
        }
        Ok(())
    })?;
    session.commit()?;
    session.checkpoint()?;
    drop(session);
    crate::pause::at("copy-before-finish");
    // The copy is the same dataset: its ledger of acknowledged versions
    // comes along (before the manifest says it is whole).
    if let Some(m) = &catalog.manifest {
        match super::ledger::expectation(from.as_mut(), m)? {
            Ok(ledger) if ledger.is_empty() => {}
            Ok(ledger) => to.write_ledger(&ledger.to_text())?,
            Err(why) => super::ledger::give_up(to.as_mut(), m, &why)?,
        }
    }
    let dest_space = if measure {
        to.finish_and_measure(&manifest.completed())?
    } else {
        to.finish(&manifest.completed())?;
        0
    };
    progress.finish();
    Ok(CopySummary {
        blobs: count,
        bytes,
        source_space,
        dest_space,
    })
}

/// Refuses a copy onto its own source: creating the destination would
/// first clear the very data to be copied.
fn refuse_same(source: &Target, dest: &Target) -> Result<()> {
    let same = match (source.data_path(), dest.data_path()) {
        (Some(a), Some(b)) => {
            let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
            canon(a) == canon(b)
        }
        _ => source.to_string() == dest.to_string(),
    };
    if same {
        return Err(Error::usage(format!(
            "refusing to copy {source} onto itself: name another destination"
        )));
    }
    Ok(())
}

/// Copies every blob of the database at `db` into `dir`; returns (blobs, bytes).
pub fn export(
    db: &Path,
    dir: &Path,
    layout: FileLayout,
    progress: &dyn Progress,
) -> Result<(u64, u64)> {
    let source = Target::Sqlite {
        path: db.to_path_buf(),
        settings: Default::default(),
    };
    let path = dir.to_path_buf();
    let dest = match layout {
        FileLayout::Flat => Target::Dir { path },
        FileLayout::Tree => Target::Tree { path },
    };
    copy(&source, &dest, progress)
}
