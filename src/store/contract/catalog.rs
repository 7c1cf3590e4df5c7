//! The keys a target holds, and the errors for keys it does not: what a
//! store reports before any work walks its keys.

use serde::{Deserialize, Serialize};

use crate::dataset::Manifest;
use crate::error::{Error, Result};

/// The keys a target holds: from its manifest, or found by scanning it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Catalog {
    /// The lowest key present.
    pub first_key: u64,
    /// The highest key present.
    pub last_key: u64,
    /// Keys present, counted (fewer than the span first..=last when keys
    /// are missing in between).
    pub count: u64,
    /// Present when the target was made by blobbench; enables --verify.
    pub manifest: Option<Manifest>,
    /// "manifest" or "scan".
    pub source: String,
}

impl Catalog {
    /// How many keys between the first and the last are absent.
    pub fn absent_keys(&self) -> u64 {
        (self.last_key.saturating_sub(self.first_key) + 1).saturating_sub(self.count)
    }

    /// Refuses work that would walk this catalog's span key by key when
    /// more than [`GAPS_ALLOWED`] keys in it are absent: a few gaps cost a
    /// lookup each (and a run stops at the first with its key named), but
    /// keys 1 and 2^62 would take for ever and as much memory as the span.
    pub fn check_gaps(&self, target: &std::path::Path) -> Result<()> {
        if self.absent_keys() > GAPS_ALLOWED {
            return Err(sparse_keys(target, self));
        }
        Ok(())
    }

    /// The catalog of keys `first..=last` (`count` of them), whose source
    /// is the manifest when one still describes them, else a scan.
    pub fn found(first_key: u64, last_key: u64, count: u64, manifest: Option<Manifest>) -> Self {
        Catalog {
            first_key,
            last_key,
            count,
            source: if manifest.is_some() {
                "manifest"
            } else {
                "scan"
            }
            .into(),
            manifest,
        }
    }
}

/// Absent keys a walk over a catalog's span may meet at most (each costs a
/// lookup, and a run's key list holds the span: a million take seconds and
/// 8 MB).
pub const GAPS_ALLOWED: u64 = 1_000_000;

/// The error for a dataset whose keys are not consecutive where the work
/// needs them to be: names the span and the count so the user sees why.
pub fn sparse_keys(target: &std::path::Path, catalog: &Catalog) -> Error {
    Error::usage(format!(
        "{} holds {} keys spread over {}..={} (the others are missing): blobbench works on consecutive keys, as blobbench init and kvtest init make them; renumber the blobs 1..{} in a copy, or use a dataset made by blobbench init",
        target.display(),
        catalog.count,
        catalog.first_key,
        catalog.last_key,
        catalog.count
    ))
}

/// The lowest key a store found, checked: blobbench's keys start at 1 (as
/// kvtest's do), and a key below that would wrap around when taken as
/// unsigned, so it is refused here, where the store first reads it.
pub(crate) fn first_key_from_one(target: &std::path::Path, first: i64) -> Result<u64> {
    if first < 1 {
        return Err(Error::usage(format!(
            "{} holds key {first}: blobbench datasets have keys from 1 up (as kvtest's); copy the blobs with keys of 1 and above into a new dataset, or use one made by blobbench init",
            target.display()
        )));
    }
    Ok(first as u64)
}

/// The error for a key the dataset does not hold.
pub(crate) fn missing_key(key: u64, target: &std::path::Path) -> Error {
    Error::MissingKey {
        key,
        target: target.to_path_buf(),
    }
}
