//! The result of `suite aging`: blobs kept in SQLite and in files on a
//! volume of fixed size, filled to an occupancy and then aged (random blobs
//! replaced by new ones of sizes drawn afresh) until each storage age
//! (bytes overwritten over bytes stored), with what every age did to cold
//! reads, to fragments per blob and to space, as Sears, van Ingen and Gray
//! measured it for SQL Server and NTFS ("To BLOB or Not To BLOB",
//! MSR-TR-2006-45).

use serde::{Deserialize, Serialize};

use crate::measure::estimate::{Estimate, median_estimate};

/// Seed of the bootstraps behind the suite's intervals.
const SEED: u64 = 0x6167_696e;

/// The paper's conclusion, quoted from its abstract, shown beside this
/// machine's answer.
pub const PAPER_RULE: &str = "objects smaller than 256K are best stored in a database while objects larger than 1M are best stored in the filesystem; between 256K and 1M, the read:write ratio and rate of object overwrite or replacement are important factors (Sears, van Ingen, Gray, MSR-TR-2006-45, 2006: SQL Server 2005 and NTFS)";

/// The layouts the suite can age, in the order it runs and lists them.
pub const LAYOUTS: &[&str] = &["sqlite", "sqlite-incremental", "sqlite-ext", "dir"];

/// The kind-specific part of a `suite aging` result.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AgingTables {
    /// The volumes the series ran on, one per filesystem (or the folder).
    pub volumes: Vec<VolumeInfo>,
    /// Storage ages measured after age 0, as asked (`--ages`).
    pub ages: Vec<f64>,
    /// Every series: one layout, size distribution, fill and volume.
    pub series: Vec<AgingSeries>,
    /// How durable the writes were, in words (what was synced when).
    pub writes: String,
    /// How the cache was emptied before each read round.
    pub cold: String,
    /// Read rounds per point (each cold, each on different blobs).
    pub read_rounds: u64,
    /// Series not run, and why (a filesystem without its mkfs, a size that
    /// does not fit the volume).
    #[serde(default)]
    pub skipped: Vec<SkippedSeries>,
}

/// Where the series of one filesystem ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VolumeInfo {
    /// ext4, xfs, btrfs; or the type of the `--dir` folder's filesystem.
    pub fs: String,
    /// True for a loop-mounted image the suite made (occupancy exact);
    /// false for `--dir` (occupancy measured against the stated capacity,
    /// approximate: other files share that filesystem).
    pub exact: bool,
    /// The volume's size as asked (`--volume-size`, or `--capacity`), bytes.
    pub size_bytes: u64,
    /// The filesystem's own total (statvfs) once made, bytes: what
    /// occupancy is measured against.
    pub fs_bytes: u64,
    /// How it was made, in words a reader can repeat ("mkfs.ext4 -q on a
    /// 1 GiB image, losetup --direct-io=on, mount -o noatime").
    pub how: String,
    /// The mkfs tool's version line, where it said one.
    #[serde(default)]
    pub mkfs_version: Option<String>,
    /// Mount options read back from /proc/mounts.
    #[serde(default)]
    pub mount_options: Option<String>,
}

/// A series the plan named but the suite did not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedSeries {
    /// The filesystem.
    pub fs: String,
    /// The layout, or "*" for every layout.
    pub layout: String,
    /// Why.
    pub reason: String,
}

/// Blob sizes of a series: constant, or uniform in a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeRange {
    /// Smallest size, bytes.
    pub min: u64,
    /// Largest size, bytes (equal to `min` for a constant size).
    pub max: u64,
}

impl SizeRange {
    /// The mean size, bytes.
    pub fn mean(&self) -> u64 {
        (self.min + self.max) / 2
    }

    /// "256KiB" or "256KiB-1MiB", in the units `--sizes` takes.
    pub fn label(&self) -> String {
        if self.min == self.max {
            size_words(self.min)
        } else {
            format!("{}-{}", size_words(self.min), size_words(self.max))
        }
    }
}

/// A size as `--sizes` takes it: binary units where exact (256KiB, 1MiB),
/// decimal otherwise.
fn size_words(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}KiB", b >> 10),
        b => crate::units::human_bytes(b).replace(' ', ""),
    }
}

/// One layout aged on one volume: its fill, then a point per age.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgingSeries {
    /// The filesystem (a [`VolumeInfo::fs`]).
    pub fs: String,
    /// One of [`LAYOUTS`].
    pub layout: String,
    /// The blobs' sizes.
    pub sizes: SizeRange,
    /// The occupancy asked (`--fill`), 0 to 1.
    pub fill_target: f64,
    /// The occupancy reached after the fill: used over the filesystem's
    /// total, as df counts it.
    pub fill_reached: f64,
    /// The store's settings in force, in words (page size, journal mode,
    /// synchronous, auto_vacuum).
    pub settings: String,
    /// Age 0 (after the fill), then after each aging pass; for sqlite,
    /// last, the same age again after a VACUUM.
    pub points: Vec<AgePoint>,
    /// Why the series ended early (the volume filled up, a VACUUM that had
    /// no room), if it did.
    #[serde(default)]
    pub stopped: Option<String>,
}

impl AgingSeries {
    /// "sqlite on ext4, 256K, 50% full".
    pub fn name(&self) -> String {
        format!(
            "{} on {}, {}, {:.0}% full",
            self.layout,
            self.fs,
            self.sizes.label(),
            self.fill_target * 100.0
        )
    }

    /// The point measured at `age` (not the one after a VACUUM).
    pub fn at(&self, age: f64) -> Option<&AgePoint> {
        self.points
            .iter()
            .find(|p| !p.vacuumed && (p.target_age - age).abs() < 1e-9)
    }
}

/// What was measured at one storage age.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgePoint {
    /// The age this point was planned at.
    pub target_age: f64,
    /// The age reached: blob bytes written by replacements since the fill
    /// over the bytes stored.
    pub age: f64,
    /// True for the extra point after a full VACUUM (sqlite only).
    #[serde(default)]
    pub vacuumed: bool,
    /// Blobs stored.
    pub blobs: u64,
    /// Their bytes.
    pub stored_bytes: u64,
    /// Cold reads of whole blobs in random order: MB/s (10^6 bytes per
    /// second) per round.
    pub read_mb_s: Vec<f64>,
    /// Blobs read over all rounds (every one checked against the dataset).
    pub blobs_read: u64,
    /// The writes that brought the store to this age (none at age 0 before
    /// the fill's: then the fill's own).
    pub writes: WritePass,
    /// Fragments per blob.
    pub fragments: Fragments,
    /// Space on the volume.
    pub space: SpaceUse,
}

impl AgePoint {
    /// The read rate's median over the rounds, with its interval.
    pub fn read_estimate(&self) -> Estimate {
        median_estimate(&self.read_mb_s, SEED)
    }
}

/// The writes of one pass (the fill, or the replacements up to an age).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WritePass {
    /// Blobs written.
    pub blobs: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Wall time of the pass including the final sync of the volume, ns.
    pub ns: u64,
    /// Of it, the final sync (and any reclaim: incremental_vacuum), ns.
    pub sync_ns: u64,
}

impl WritePass {
    /// MB/s (10^6 bytes per second) over the whole pass.
    pub fn mb_s(&self) -> f64 {
        if self.ns == 0 {
            0.0
        } else {
            self.bytes as f64 * 1e3 / self.ns as f64
        }
    }
}

/// How scattered the blobs are: each blob's bytes as physically contiguous
/// runs on the volume (files: FIEMAP extents merged; SQLite: its pages'
/// places through the database file's extents).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fragments {
    /// Blobs counted (all, or none where the filesystem cannot tell).
    pub blobs: u64,
    /// Mean fragments per blob.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// The most.
    pub max: u64,
    /// Share of blobs in more than one fragment, 0 to 1.
    pub fragmented_share: f64,
    /// SQLite only: mean runs of consecutive pages per blob in the
    /// database file (the order SQLite chose, whatever the disk did).
    #[serde(default)]
    pub page_runs_mean: Option<f64>,
    /// Why nothing was counted, when nothing was.
    #[serde(default)]
    pub unavailable: Option<String>,
}

/// Space on the volume at one age.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SpaceUse {
    /// The store's allocated bytes (database file with its freelist and
    /// journal; files in allocated blocks; sqlite-ext both).
    pub store_bytes: u64,
    /// SQLite's freelist, bytes (pages free inside the database file).
    #[serde(default)]
    pub freelist_bytes: u64,
    /// The volume's used bytes (statvfs), with the filesystem's metadata.
    pub volume_used_bytes: u64,
    /// The volume's free bytes (statvfs).
    pub volume_free_bytes: u64,
    /// Free space fragmentation, where the filesystem tells it.
    #[serde(default)]
    pub free_space: Option<FreeSpace>,
}

/// The filesystem's free space in pieces (e2freefrag on ext4, xfs_db's
/// freesp on xfs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FreeSpace {
    /// Free extents.
    pub extents: u64,
    /// Their mean size, bytes.
    pub mean_extent_bytes: u64,
    /// Share of free space in extents of at least 1 MiB, 0 to 1, where the
    /// tool gives a histogram.
    #[serde(default)]
    pub share_in_1mib_or_more: Option<f64>,
    /// The tool that told it.
    pub tool: String,
}
