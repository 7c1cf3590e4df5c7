//! Room on the disk for a run that adds blobs: inserts at the run's rate
//! are unbounded in a timed run, so the run keeps a stated reserve free on
//! the disk holding the dataset. It is refused at the start when the disk
//! has less (plus what a counted run's inserts will take), and it stops,
//! as `--max-errors` stops it, once free space falls under the reserve
//! plus the bytes its deletes took away (the blobs put back afterwards):
//! whatever happens, the run can still put its dataset right.

use std::path::{Path, PathBuf};

use super::MixedRunPlan;
use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::measure::space;
use crate::result::mixed_run::OpKind;
use crate::units::human_bytes;

/// The least the reserve is: room for the manifest, a database's journal
/// and a few blobs.
const LEAST_RESERVE: u64 = 1 << 20;

/// Blobs the reserve holds beyond one per operation in flight.
const SPARE_BLOBS: u64 = 16;

/// Files the reserve keeps makeable, where a filesystem counts them.
const SPARE_FILES: u64 = 256;

/// The space a run that inserts keeps free on the disk holding its data.
#[derive(Debug, Clone)]
pub(super) struct DiskReserve {
    /// Where the data is (a database file or a dataset folder).
    path: PathBuf,
    /// Bytes kept free.
    bytes: u64,
}

/// Bytes a blob of `len` bytes takes on disk, in whole 4 KiB blocks.
pub(super) fn on_disk(len: u64) -> u64 {
    len.div_ceil(4096).max(1) * 4096
}

impl DiskReserve {
    /// The reserve of a run of `plan` over `spec` at `path`, or None when
    /// the run adds nothing (no inserts) or its data is not on a local disk.
    pub fn of(plan: &MixedRunPlan, spec: &DatasetSpec, path: Option<&Path>) -> Option<Self> {
        let path = path?;
        if !plan.mix.has(OpKind::Insert) {
            return None;
        }
        let in_flight = plan.threads as u64 * u64::from(plan.batch);
        let blobs = (SPARE_BLOBS + in_flight).saturating_mul(on_disk(spec.max_size()));
        Some(DiskReserve {
            path: path.to_path_buf(),
            bytes: blobs.max(LEAST_RESERVE),
        })
    }

    /// Refuses a run the disk has no room for: less free than the
    /// reserve, plus what the inserts of a run of `--count` operations
    /// take.
    pub fn check_before(&self, plan: &MixedRunPlan, spec: &DatasetSpec) -> Result<()> {
        let Some(free) = space::free_bytes(&self.path) else {
            return Ok(());
        };
        let inserts = plan.count.map_or(0, |count| {
            let share = u64::from(plan.mix.weight(OpKind::Insert));
            let total = u64::from(plan.mix.total_weight());
            (count.saturating_mul(share)).div_ceil(total.max(1))
        });
        let needed = inserts
            .saturating_mul(on_disk(spec.max_size()))
            .saturating_add(self.bytes);
        if free >= needed {
            return Ok(());
        }
        let counted = if inserts > 0 {
            format!(
                ", and its {inserts} inserts take up to {}",
                human_bytes(needed - self.bytes)
            )
        } else {
            String::new()
        };
        Err(Error::usage(format!(
            "the disk holding {} has {} free: a run that inserts keeps {} free to put its dataset right afterwards{counted}; free some space, or run fewer inserts (--count, --mix)",
            self.path.display(),
            human_bytes(free),
            human_bytes(self.bytes),
        )))
    }

    /// Why the run must stop now: free space (or files) under the reserve
    /// plus `owed` bytes (blobs deleted, to be put back). None while there
    /// is room, or when the disk cannot tell.
    pub fn short(&self, owed: u64) -> Option<String> {
        let room = space::room(&self.path)?;
        let keep = self.bytes.saturating_add(owed);
        if room.free_bytes < keep {
            return Some(format!(
                "free space on the disk holding {} fell to {} bytes, under the {keep} bytes ({}) the run keeps to put its dataset right",
                self.path.display(),
                room.free_bytes,
                human_bytes(keep)
            ));
        }
        match room.free_files {
            Some(files) if files < SPARE_FILES => Some(format!(
                "the disk holding {} can make only {files} more files, under the {SPARE_FILES} the run keeps to put its dataset right",
                self.path.display()
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_holds_the_blobs_in_flight_and_a_floor() {
        assert_eq!(on_disk(1), 4096);
        assert_eq!(on_disk(4096), 4096);
        assert_eq!(on_disk(4097), 8192);
        let dir = tempfile::tempdir().unwrap();
        let reserve = |size: u64| DiskReserve {
            path: dir.path().to_path_buf(),
            bytes: (SPARE_BLOBS + 4)
                .saturating_mul(on_disk(size))
                .max(LEAST_RESERVE),
        };
        assert_eq!(reserve(1000).bytes, LEAST_RESERVE);
        assert_eq!(reserve(1 << 20).bytes, 20 << 20);
        // The disk holding the tests has more free than a megabyte and
        // less than an exabyte.
        assert_eq!(reserve(1000).short(0), None);
        let why = reserve(1000).short(u64::MAX / 2).unwrap();
        assert!(why.contains("free space on the disk holding"), "{why}");
    }
}
