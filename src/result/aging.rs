//! The result of `suite aging`: blobs kept in SQLite and in files on a
//! volume of fixed size, filled to an occupancy and then aged (random blobs
//! replaced by new ones of sizes drawn afresh) until each storage age
//! (bytes overwritten over bytes stored), with what every age did to cold
//! reads, to fragments per blob and to space, as Sears, van Ingen and Gray
//! measured it for SQL Server and NTFS ("To BLOB or Not To BLOB",
//! MSR-TR-2006-45).

use serde::{Deserialize, Serialize};

use crate::measure::estimate::{Estimate, Method, median_estimate, paired_ratio};
use crate::measure::significance::median_ratio_interval;

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
    /// Whether round r of the layouts of one filesystem, fill and size was
    /// read side by side (paired), or each series' rounds on their own
    /// (results written before the rounds were interleaved: absent, and
    /// left out when written back so such a result reads as it was).
    #[serde(default, skip_serializing_if = "RoundPairing::is_unpaired")]
    pub pairing: RoundPairing,
}

/// How the read rounds of the layouts of one filesystem, fill and size
/// stand to each other: what a ratio between two layouts can be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundPairing {
    /// Each series ran on its own, one after another (results written
    /// before the rounds were interleaved): round r of two layouts was read
    /// minutes apart, so a ratio between them is of their medians, its
    /// interval a bootstrap resampling each side on its own.
    #[default]
    Unpaired,
    /// The layouts ran side by side, round r of each read back to back
    /// (the order alternating from round to round): a ratio is the median
    /// of the per-round ratios, its interval that of paired ratios.
    Paired,
}

impl RoundPairing {
    /// Whether the rounds were not paired (the form older results take).
    pub fn is_unpaired(&self) -> bool {
        *self == RoundPairing::Unpaired
    }

    /// "paired" or "unpaired", as printed after a ratio.
    pub fn label(self) -> &'static str {
        match self {
            RoundPairing::Unpaired => "unpaired",
            RoundPairing::Paired => "paired",
        }
    }
}

/// What "paired" and "unpaired" after a ratio mean, said once under the
/// verdicts.
pub const PAIRING_MEANING: &str = "paired = the median of per-round ratios, round r of each layout read side by side; \
unpaired = a ratio of medians of rounds read at different times (a result written before the rounds were interleaved), \
its interval a bootstrap resampling each side on its own";

/// `a` over `b` read rates: the median of the per-round ratios with their
/// interval when the rounds are paired; else the ratio of the medians with
/// a bootstrap interval resampling each side on its own (no interval from
/// fewer than 2 rounds a side).
pub fn read_ratio(a: &[f64], b: &[f64], pairing: RoundPairing) -> Estimate {
    match pairing {
        RoundPairing::Paired => paired_ratio(a, b),
        RoundPairing::Unpaired => {
            let r = median_ratio_interval(b, a, SEED);
            let n = a.len().min(b.len());
            let point = Estimate::point(r.ratio, n);
            if n < 2 || !(r.low.is_finite() && r.high.is_finite()) {
                return point;
            }
            Estimate {
                low: r.low,
                high: r.high,
                method: Method::Bootstrap,
                ..point
            }
        }
    }
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
        b => crate::units::human_bytes(b),
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
    /// total, as df counts them, less the blocks set aside past the end
    /// of the store's open files (xfs's speculative preallocation).
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
    /// What was done to the store before this point beyond the writes
    /// (how the VACUUM ran), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
        median_estimate(&self.read_mb_s)
    }
}

/// The read estimate of every point that read, over these series.
pub fn read_estimates<'a>(series: impl IntoIterator<Item = &'a AgingSeries>) -> Vec<Estimate> {
    series
        .into_iter()
        .flat_map(|s| &s.points)
        .filter(|p| !p.read_mb_s.is_empty())
        .map(AgePoint::read_estimate)
        .collect()
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

/// Up to this blob size the paper's rule says database. The paper drew
/// its rule from objects of 256K and 1M (the sizes it measured, and found
/// the database ahead at the first, the filesystem at the second), so
/// 256K itself counts: read as 256 KiB, the larger of its readings.
pub const PAPER_DATABASE_UP_TO: u64 = 256 << 10;

/// From this blob size on the paper's rule says filesystem: 1M itself
/// counts, read as 1 000 000 bytes, the smaller of its readings.
pub const PAPER_FILESYSTEM_FROM: u64 = 1_000_000;

/// Which kind of storage a layout is, as the paper divides them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The blob's bytes in the database file (sqlite, sqlite-incremental).
    Database,
    /// The blob's bytes in a file of its own (dir, sqlite-ext).
    Filesystem,
}

impl Kind {
    /// The kind of one of [`LAYOUTS`]; None for a layout this version does
    /// not know.
    pub fn of(layout: &str) -> Option<Kind> {
        match layout {
            "sqlite" | "sqlite-incremental" => Some(Kind::Database),
            "dir" | "sqlite-ext" => Some(Kind::Filesystem),
            _ => None,
        }
    }

    /// "database" or "filesystem".
    pub fn name(self) -> &'static str {
        match self {
            Kind::Database => "database",
            Kind::Filesystem => "filesystem",
        }
    }
}

/// What the paper's rule ([`PAPER_RULE`]) predicts for a size range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaperSays {
    /// Every size up to 256K: the database.
    Database,
    /// Every size from 1M: the filesystem.
    Filesystem,
    /// Some size between 256K and 1M: it depends (read:write ratio,
    /// overwrite rate).
    Depends,
}

impl PaperSays {
    /// The prediction for blobs of `sizes`.
    pub fn for_sizes(sizes: SizeRange) -> PaperSays {
        if sizes.max <= PAPER_DATABASE_UP_TO {
            PaperSays::Database
        } else if sizes.min >= PAPER_FILESYSTEM_FROM {
            PaperSays::Filesystem
        } else {
            PaperSays::Depends
        }
    }

    /// The kind the paper says wins, None in its grey zone.
    pub fn kind(self) -> Option<Kind> {
        match self {
            PaperSays::Database => Some(Kind::Database),
            PaperSays::Filesystem => Some(Kind::Filesystem),
            PaperSays::Depends => None,
        }
    }

    /// The prediction in words.
    pub fn words(self) -> &'static str {
        match self {
            PaperSays::Database => "database up to 256K",
            PaperSays::Filesystem => "filesystem from 1M",
            PaperSays::Depends => "between 256K and 1M it depends",
        }
    }
}

/// How this machine's answer stands beside the paper's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    /// The kind the paper names read faster beyond the noise.
    Agrees,
    /// The other kind read faster beyond the noise.
    Disagrees,
    /// The paper says it depends at this size (whatever won here).
    GreyZone,
    /// The best of each kind read within each other's noise.
    WithinNoise,
    /// Only one kind was measured: nothing to set beside the paper.
    OneKind,
}

impl Agreement {
    /// "agrees", "disagrees", "in the paper's grey zone", ...
    pub fn words(self) -> &'static str {
        match self {
            Agreement::Agrees => "agrees",
            Agreement::Disagrees => "disagrees",
            Agreement::GreyZone => "in the paper's grey zone",
            Agreement::WithinNoise => "within noise: no call",
            Agreement::OneKind => "one kind measured: no call",
        }
    }
}

/// Two layouts' read rates set side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Duel {
    /// The faster layout (by the ratio: read MB/s over the slower's above
    /// 1) and its read estimate.
    pub faster: (String, Estimate),
    /// The slower one.
    pub slower: (String, Estimate),
    /// The faster's read rate over the slower's, with its interval: the
    /// median of the per-round ratios when the rounds are paired, else the
    /// ratio of the medians with a bootstrap interval.
    pub ratio: Estimate,
    /// Whether the rounds behind the ratio were read side by side.
    pub pairing: RoundPairing,
}

impl Duel {
    /// The two layouts (name, read rounds) set side by side, the faster
    /// first: the one the ratio puts above 1.
    pub fn new(a: (&str, &[f64]), b: (&str, &[f64]), pairing: RoundPairing) -> Duel {
        let ratio = read_ratio(a.1, b.1, pairing);
        let side = |(name, rounds): (&str, &[f64])| (name.to_string(), median_estimate(rounds));
        if ratio.value >= 1.0 || ratio.value.is_nan() {
            Duel {
                faster: side(a),
                slower: side(b),
                ratio,
                pairing,
            }
        } else {
            Duel {
                faster: side(b),
                slower: side(a),
                ratio: Estimate {
                    value: 1.0 / ratio.value,
                    low: 1.0 / ratio.high,
                    high: 1.0 / ratio.low,
                    ..ratio
                },
                pairing,
            }
        }
    }

    /// Whether the faster one is faster beyond the noise: the whole
    /// interval of the ratio above 1 (never without an interval).
    pub fn separated(&self) -> bool {
        self.ratio.has_interval() && self.ratio.low > 1.0
    }

    /// "1.41x [1.38-1.44] paired": the ratio with its interval and whether
    /// its rounds were paired.
    pub fn ratio_text(&self) -> String {
        format!("{} {}", self.ratio.format_ratio(), self.pairing.label())
    }
}

/// This machine's answer for one filesystem, fill, size range and age,
/// beside the paper's rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The filesystem.
    pub fs: String,
    /// The occupancy asked, 0 to 1.
    pub fill_target: f64,
    /// The blobs' sizes.
    pub sizes: SizeRange,
    /// The storage age (as planned).
    pub age: f64,
    /// Every layout measured at this age, fastest read first (the point
    /// after a VACUUM left out).
    pub ranking: Vec<(String, Estimate)>,
    /// The two fastest layouts, when two were measured.
    pub lead: Option<Duel>,
    /// The best database layout against the best filesystem layout, when
    /// both kinds were measured.
    pub kinds: Option<Duel>,
    /// What the paper predicts for these sizes.
    pub paper: PaperSays,
    /// How this machine's answer stands beside it.
    pub agreement: Agreement,
    /// sqlite after a VACUUM at this age, shown apart from the ranking.
    pub vacuumed: Option<(String, Estimate)>,
}

impl Verdict {
    /// The kind that read faster beyond the noise, if one did.
    pub fn winner(&self) -> Option<Kind> {
        let duel = self.kinds.as_ref().filter(|d| d.separated())?;
        Kind::of(&duel.faster.0)
    }
}

impl AgingTables {
    /// For each (filesystem, fill, size range) in the order first run and
    /// each age measured, which layout reads fastest and whether that
    /// agrees with the paper's rule.
    pub fn verdicts(&self) -> Vec<Verdict> {
        let mut groups: Vec<(&str, f64, SizeRange)> = Vec::new();
        for s in &self.series {
            let g = (s.fs.as_str(), s.fill_target, s.sizes);
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        let mut out = Vec::new();
        for (fs, fill, sizes) in groups {
            let series: Vec<&AgingSeries> = self
                .series
                .iter()
                .filter(|s| s.fs == fs && s.fill_target == fill && s.sizes == sizes)
                .collect();
            let mut ages: Vec<f64> = series
                .iter()
                .flat_map(|s| s.points.iter().filter(|p| !p.vacuumed))
                .map(|p| p.target_age)
                .collect();
            ages.sort_by(f64::total_cmp);
            ages.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
            for age in ages {
                out.push(verdict_at(&series, (fs, fill, sizes), age, self.pairing));
            }
        }
        out
    }
}

/// The verdict of one group of series at one age.
fn verdict_at(
    series: &[&AgingSeries],
    group: (&str, f64, SizeRange),
    age: f64,
    pairing: RoundPairing,
) -> Verdict {
    let mut measured: Vec<(&str, &[f64], Estimate)> = series
        .iter()
        .filter_map(|s| {
            let p = s.at(age).filter(|p| !p.read_mb_s.is_empty())?;
            Some((s.layout.as_str(), p.read_mb_s.as_slice(), p.read_estimate()))
        })
        .collect();
    measured.sort_by(|a, b| b.2.value.total_cmp(&a.2.value));
    let ranking: Vec<(String, Estimate)> = measured
        .iter()
        .map(|(l, _, e)| (l.to_string(), *e))
        .collect();
    let duel = |a: &(&str, &[f64], Estimate), b: &(&str, &[f64], Estimate)| {
        Duel::new((a.0, a.1), (b.0, b.1), pairing)
    };
    let lead = (measured.len() >= 2).then(|| duel(&measured[0], &measured[1]));
    // Sorted by median, so the first of each kind is its best.
    let best = |k: Kind| measured.iter().find(|(l, _, _)| Kind::of(l) == Some(k));
    let kinds = match (best(Kind::Database), best(Kind::Filesystem)) {
        (Some(d), Some(f)) => Some(duel(d, f)),
        _ => None,
    };
    let paper = PaperSays::for_sizes(group.2);
    let winner = kinds
        .as_ref()
        .filter(|d| d.separated())
        .and_then(|d| Kind::of(&d.faster.0));
    let agreement = match (&kinds, paper.kind(), winner) {
        (None, _, _) => Agreement::OneKind,
        (Some(_), None, _) => Agreement::GreyZone,
        (Some(_), Some(_), None) => Agreement::WithinNoise,
        (Some(_), Some(said), Some(won)) if said == won => Agreement::Agrees,
        _ => Agreement::Disagrees,
    };
    let vacuumed = series.iter().find_map(|s| {
        let p = s
            .points
            .iter()
            .find(|p| p.vacuumed && (p.target_age - age).abs() < 1e-9 && !p.read_mb_s.is_empty())?;
        Some((s.layout.clone(), p.read_estimate()))
    });
    Verdict {
        fs: group.0.to_string(),
        fill_target: group.1,
        sizes: group.2,
        age,
        ranking,
        lead,
        kinds,
        paper,
        agreement,
        vacuumed,
    }
}

/// Hand-built tables for the tests of this module and of the report.
#[cfg(test)]
pub(crate) mod sample {
    use super::*;

    /// A point at `age` whose read rounds are `reads` MB/s, with 2
    /// fragments per blob on average.
    pub fn point(age: f64, reads: &[f64]) -> AgePoint {
        AgePoint {
            target_age: age,
            age: age + 0.02,
            vacuumed: false,
            note: None,
            blobs: 100,
            stored_bytes: 100 << 18,
            read_mb_s: reads.to_vec(),
            blobs_read: 500,
            writes: WritePass {
                blobs: 100,
                bytes: 100 << 18,
                ns: 2_000_000_000,
                sync_ns: 100_000_000,
            },
            fragments: Fragments {
                blobs: 100,
                mean: 2.0,
                p50: 1,
                p90: 4,
                max: 9,
                fragmented_share: 0.4,
                page_runs_mean: None,
                unavailable: None,
            },
            space: SpaceUse {
                store_bytes: 30 << 20,
                freelist_bytes: 0,
                volume_used_bytes: 32 << 20,
                volume_free_bytes: 32 << 20,
                free_space: Some(FreeSpace {
                    extents: 12,
                    mean_extent_bytes: 2 << 20,
                    share_in_1mib_or_more: Some(0.9),
                    tool: "e2freefrag".into(),
                }),
            },
        }
    }

    /// A series of `layout` on ext4 at 50% with blobs of `size` bytes.
    pub fn series(layout: &str, size: u64, points: Vec<AgePoint>) -> AgingSeries {
        AgingSeries {
            fs: "ext4".into(),
            layout: layout.into(),
            sizes: SizeRange {
                min: size,
                max: size,
            },
            fill_target: 0.5,
            fill_reached: 0.497,
            settings: "page_size=4096".into(),
            points,
            stopped: None,
        }
    }

    /// Tables of these series on one exact 64 MiB ext4 volume.
    pub fn tables(series: Vec<AgingSeries>) -> AgingTables {
        AgingTables {
            volumes: vec![VolumeInfo {
                fs: "ext4".into(),
                exact: true,
                size_bytes: 64 << 20,
                fs_bytes: 60 << 20,
                how: "mkfs.ext4 -q on a 64 MiB image, mount -o noatime".into(),
                mkfs_version: None,
                mount_options: Some("rw,noatime".into()),
            }],
            ages: vec![1.0],
            series,
            writes: "each blob synced".into(),
            cold: "drop_caches".into(),
            read_rounds: 5,
            skipped: Vec::new(),
            pairing: RoundPairing::Unpaired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sample::{point, series, tables};
    use super::*;

    const FAST: [f64; 5] = [140.0, 142.0, 139.0, 141.0, 143.0];
    const SLOW: [f64; 5] = [100.0, 101.0, 99.0, 102.0, 98.0];
    const NEAR: [f64; 5] = [138.0, 145.0, 136.0, 141.0, 144.0];

    #[test]
    fn the_paper_is_set_beside_the_faster_kind() {
        // 100K blobs: the paper says database. sqlite faster: agrees.
        let t = tables(vec![
            series(
                "sqlite",
                100_000,
                vec![point(0.0, &FAST), point(1.0, &SLOW)],
            ),
            series("dir", 100_000, vec![point(0.0, &SLOW), point(1.0, &FAST)]),
        ]);
        let v = t.verdicts();
        assert_eq!(v.len(), 2, "{v:?}");
        assert_eq!(v[0].paper, PaperSays::Database);
        assert_eq!(v[0].agreement, Agreement::Agrees);
        assert_eq!(v[0].winner(), Some(Kind::Database));
        let lead = v[0].lead.as_ref().unwrap();
        assert_eq!(lead.faster.0, "sqlite");
        assert!(lead.separated());
        assert!((lead.ratio.value - 141.0 / 100.0).abs() < 1e-9, "{lead:?}");
        // After aging dir reads faster: disagrees.
        assert_eq!(v[1].age, 1.0);
        assert_eq!(v[1].agreement, Agreement::Disagrees);
        assert_eq!(v[1].winner(), Some(Kind::Filesystem));
    }

    #[test]
    fn overlapping_intervals_make_no_call() {
        let t = tables(vec![
            series("sqlite", 2 << 20, vec![point(0.0, &FAST)]),
            series("dir", 2 << 20, vec![point(0.0, &NEAR)]),
        ]);
        let v = &t.verdicts()[0];
        assert_eq!(v.paper, PaperSays::Filesystem);
        assert!(!v.lead.as_ref().unwrap().separated(), "{v:?}");
        assert_eq!(v.agreement, Agreement::WithinNoise);
        assert_eq!(v.winner(), None);
    }

    #[test]
    fn kinds_are_judged_by_their_best_and_vacuum_is_apart() {
        // sqlite and sqlite-incremental tie; both beat dir; 512K is grey.
        let mut sqlite = series("sqlite", 512 << 10, vec![point(0.0, &FAST)]);
        let mut vacuumed = point(0.0, &SLOW);
        vacuumed.vacuumed = true;
        sqlite.points.push(vacuumed);
        let t = tables(vec![
            sqlite,
            series("sqlite-incremental", 512 << 10, vec![point(0.0, &NEAR)]),
            series("sqlite-ext", 512 << 10, vec![point(0.0, &SLOW)]),
        ]);
        let v = t.verdicts();
        assert_eq!(v.len(), 1, "the vacuumed point is no age of its own");
        let v = &v[0];
        assert_eq!(v.ranking.len(), 3);
        assert!(!v.lead.as_ref().unwrap().separated());
        assert_eq!(v.winner(), Some(Kind::Database));
        assert_eq!(v.kinds.as_ref().unwrap().slower.0, "sqlite-ext");
        assert_eq!(v.agreement, Agreement::GreyZone);
        assert_eq!(v.vacuumed.as_ref().unwrap().1.value, 100.0);
        // One kind alone: nothing to set beside the paper.
        let one = tables(vec![series("dir", 1000, vec![point(0.0, &FAST)])]);
        assert_eq!(one.verdicts()[0].agreement, Agreement::OneKind);
    }

    #[test]
    fn the_fastest_over_the_next_carries_its_interval_and_whether_it_is_paired() {
        // Per-round ratios 2, 0.5, 2, 2, 2: paired, their median is 2; the
        // medians' ratio (300 over 200) is 1.5.
        let a = [100.0, 200.0, 300.0, 400.0, 500.0];
        let b = [50.0, 400.0, 150.0, 200.0, 250.0];
        let mut t = tables(vec![
            series("sqlite", 100_000, vec![point(0.0, &a)]),
            series("dir", 100_000, vec![point(0.0, &b)]),
        ]);
        // A result from before the rounds were paired: the ratio of the
        // medians, a bootstrap interval, labelled unpaired.
        let old = t.verdicts()[0].lead.clone().unwrap();
        assert_eq!(old.pairing, RoundPairing::Unpaired);
        assert!((old.ratio.value - 1.5).abs() < 1e-9, "{old:?}");
        assert!(old.ratio.has_interval(), "{old:?}");
        assert!(old.ratio.low < old.ratio.high, "{old:?}");
        let text = old.ratio_text();
        assert!(
            text.starts_with("1.50x [") && text.ends_with(" unpaired"),
            "{text}"
        );
        // Paired: the median of the per-round ratios, labelled paired.
        t.pairing = RoundPairing::Paired;
        let new = t.verdicts()[0].lead.clone().unwrap();
        assert_eq!(new.faster.0, "sqlite");
        assert!((new.ratio.value - 2.0).abs() < 1e-9, "{new:?}");
        assert!(new.ratio.has_interval(), "{new:?}");
        let text = new.ratio_text();
        assert!(
            text.starts_with("2.00x [") && text.ends_with(" paired"),
            "{text}"
        );
    }

    #[test]
    fn paired_rounds_see_through_drift_that_unpaired_ones_cannot() {
        // The machine slows round by round; dir reads 10% slower than
        // sqlite in every round. The medians' intervals overlap, the
        // per-round ratios do not move.
        let sqlite: Vec<f64> = (0..8).map(|r| 100.0 + 10.0 * r as f64).collect();
        let dir: Vec<f64> = sqlite.iter().map(|x| x / 1.1).collect();
        let mut t = tables(vec![
            series("sqlite", 100_000, vec![point(0.0, &sqlite)]),
            series("dir", 100_000, vec![point(0.0, &dir)]),
        ]);
        let v = &t.verdicts()[0];
        assert!(!v.lead.as_ref().unwrap().separated(), "{v:?}");
        assert_eq!(v.agreement, Agreement::WithinNoise);
        t.pairing = RoundPairing::Paired;
        let v = &t.verdicts()[0];
        let lead = v.lead.as_ref().unwrap();
        assert!(lead.separated(), "{lead:?}");
        assert!((lead.ratio.value - 1.1).abs() < 1e-9, "{lead:?}");
        assert_eq!(v.agreement, Agreement::Agrees);
        // The faster is the one the ratio puts above 1, whichever way the
        // layouts are listed.
        let swapped = Duel::new(("dir", &dir), ("sqlite", &sqlite), RoundPairing::Paired);
        assert_eq!(swapped.faster.0, "sqlite");
        assert!((swapped.ratio.value - 1.1).abs() < 1e-9, "{swapped:?}");
        assert!(
            swapped.ratio.low <= swapped.ratio.value && swapped.ratio.value <= swapped.ratio.high
        );
    }

    #[test]
    fn a_result_without_the_pairing_field_loads_as_unpaired() {
        let mut json = serde_json::to_value(tables(Vec::new())).unwrap();
        json.as_object_mut().unwrap().remove("pairing");
        let t: AgingTables = serde_json::from_value(json).unwrap();
        assert_eq!(t.pairing, RoundPairing::Unpaired);
        let mut paired = tables(Vec::new());
        paired.pairing = RoundPairing::Paired;
        let json = serde_json::to_value(&paired).unwrap();
        assert_eq!(json["pairing"], "paired");
    }

    #[test]
    fn the_rule_counts_256k_and_1m_as_the_paper_measured_them() {
        let says = |min, max| PaperSays::for_sizes(SizeRange { min, max });
        assert_eq!(says(100_000, 255_999), PaperSays::Database);
        assert_eq!(says(256_000, 256_000), PaperSays::Database);
        assert_eq!(says(256 << 10, 256 << 10), PaperSays::Database);
        assert_eq!(says((256 << 10) + 1, 512 << 10), PaperSays::Depends);
        assert_eq!(says(999_999, 999_999), PaperSays::Depends);
        assert_eq!(says(1 << 20, 1 << 20), PaperSays::Filesystem);
        assert_eq!(says(1_000_000, 1_000_000), PaperSays::Filesystem);
        assert_eq!(says(100_000, 2 << 20), PaperSays::Depends);
    }
}
