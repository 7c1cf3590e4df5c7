//! The `suite fasterthanfs` result's own tables: each of the page's charts
//! as a file/db ratio beside the claim the page makes, with a verdict, and
//! the disk space of each layout.

use serde::{Deserialize, Serialize};

use crate::dataset::DatasetSpec;
pub use crate::result::quick::SpaceBytes;

/// The kind-specific part of a `suite fasterthanfs` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FasterThanFsTables {
    /// The measured rows in the order printed, then the disk space row.
    pub fasterthanfs: Vec<FasterThanFsRow>,
    /// The dataset every layout holds.
    pub dataset: DatasetSpec,
    /// Blobs overwritten per write case without fsync.
    pub updates: u64,
    /// Blobs overwritten per write case with fsync or a transaction per write.
    pub durable_updates: u64,
    /// Measured rounds; each ratio is the median over them.
    pub rounds: u64,
    /// mmap_size of the memory-mapped read cases (bytes).
    pub mmap_size: u64,
}

/// A row of the table: a timed comparison, or the disk space.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FasterThanFsRow {
    /// A database case against a file case, ratios over rounds.
    Timed(TimedRow),
    /// Disk space of the three layouts.
    Space(SpaceRow),
}

impl FasterThanFsRow {
    /// The row's label, e.g. "chart 2: read, blob API".
    pub fn case(&self) -> &str {
        match self {
            FasterThanFsRow::Timed(r) => &r.case,
            FasterThanFsRow::Space(r) => &r.case,
        }
    }

    /// What the page claims for the row.
    pub fn claim(&self) -> &Claim {
        match self {
            FasterThanFsRow::Timed(r) => &r.claim,
            FasterThanFsRow::Space(r) => &r.claim,
        }
    }

    /// The claim judged against the measured ratios.
    pub fn verdict(&self) -> Verdict {
        match self {
            FasterThanFsRow::Timed(r) => r.verdict,
            FasterThanFsRow::Space(r) => r.verdict,
        }
    }
}

/// A database case against the same file case on the flat folder and the tree.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimedRow {
    /// The row's label.
    pub case: String,
    /// The database run's name (without its round).
    pub db_case: String,
    /// The flat folder run's name.
    pub dir_case: String,
    /// The tree run's name.
    pub tree_case: String,
    /// Whether the database time includes the WAL checkpoint.
    pub checkpoint_included: bool,
    /// What the page claims.
    pub claim: Claim,
    /// Flat folder time / database time.
    pub dir_over_db: Ratio,
    /// Tree time / database time.
    pub tree_over_db: Ratio,
    /// The claim judged against the less favourable of the two ratios.
    pub verdict: Verdict,
}

/// Disk space of the three layouts, judged against the page's figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpaceRow {
    /// "disk space".
    pub case: String,
    /// What the page claims.
    pub claim: Claim,
    /// du of each layout.
    pub space_bytes: SpaceBytes,
    /// Flat folder space / database space.
    pub dir_over_db: f64,
    /// Tree space / database space.
    pub tree_over_db: f64,
    /// The claim judged against the less favourable of the two ratios.
    pub verdict: Verdict,
}

/// Ratio of two cases' times, round by round (numerator / denominator):
/// the median and the range across rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// Median of the per-round ratios.
    pub median: f64,
    /// Smallest per-round ratio.
    pub min: f64,
    /// Largest per-round ratio.
    pub max: f64,
    /// Median of the numerator's times (ns).
    pub numerator_ns: f64,
    /// Median of the denominator's times (ns).
    pub denominator_ns: f64,
}

impl Ratio {
    /// Half the range across rounds, in percent of the median.
    pub fn spread_pct(&self) -> f64 {
        (self.max - self.min) / self.median / 2.0 * 100.0
    }
}

/// What the page says about a row, and how a measured ratio (file / db) is
/// judged against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Claim {
    /// The database is at least `ratio` times faster (or smaller).
    AtLeast {
        /// The smallest file/db ratio the claim allows.
        ratio: f64,
        /// The page's words.
        text: String,
    },
    /// The database is slower than the files.
    DbSlower {
        /// The page's words.
        text: String,
    },
    /// Measured for completeness; the page says nothing about it.
    NotClaimed {
        /// Why the row is there.
        text: String,
    },
}

impl Claim {
    /// The claim as a ratio condition: ">= 1.35", "< 1.00" or "-".
    pub fn short(&self) -> String {
        match self {
            Claim::AtLeast { ratio, .. } => format!(">= {ratio:.2}"),
            Claim::DbSlower { .. } => "< 1.00".into(),
            Claim::NotClaimed { .. } => "-".into(),
        }
    }

    /// The page's words (or why an unclaimed row is there).
    pub fn text(&self) -> &str {
        match self {
            Claim::AtLeast { text, .. } | Claim::DbSlower { text } | Claim::NotClaimed { text } => {
                text
            }
        }
    }

    /// Judges the less favourable of the dir and tree ratios: the page's
    /// claims hold for both layouts.
    pub fn verdict(&self, dir: f64, tree: f64) -> Verdict {
        match *self {
            Claim::AtLeast { ratio, .. } => {
                let worst = dir.min(tree);
                if worst >= ratio {
                    Verdict::Confirmed
                } else if worst >= 1.0 {
                    Verdict::DbAheadByLess
                } else {
                    Verdict::NotConfirmed
                }
            }
            Claim::DbSlower { .. } => {
                if dir.max(tree) < 1.0 {
                    Verdict::Confirmed
                } else {
                    Verdict::NotConfirmed
                }
            }
            Claim::NotClaimed { .. } => Verdict::NotJudged,
        }
    }
}

/// How a measured ratio compares with the page's claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// Both layouts meet the claim.
    #[serde(rename = "confirmed")]
    Confirmed,
    /// The database is ahead, by less than claimed.
    #[serde(rename = "db ahead, by less")]
    DbAheadByLess,
    /// The claim does not hold here.
    #[serde(rename = "not confirmed")]
    NotConfirmed,
    /// Nothing claimed, nothing judged.
    #[serde(rename = "-")]
    NotJudged,
}

impl Verdict {
    /// The words printed and written for the verdict.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::DbAheadByLess => "db ahead, by less",
            Verdict::NotConfirmed => "not confirmed",
            Verdict::NotJudged => "-",
        }
    }
}
