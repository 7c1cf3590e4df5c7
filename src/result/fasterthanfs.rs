//! The `suite fasterthanfs` result's own tables: each of the page's charts
//! as a file/db ratio beside the claim the page makes, with a verdict, and
//! the disk space of each layout.

use serde::{Deserialize, Serialize};

use crate::dataset::DatasetSpec;
use crate::measure::estimate::{Estimate, Side};
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
    /// Measured rounds (the most any case ran); each ratio is the median
    /// over its cases' rounds.
    pub rounds: u64,
    /// The rule the rounds followed and where each case stopped (absent in
    /// results from before rounds could stop at a precision target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<crate::result::rounds::RoundsRecord>,
    /// mmap_size of the memory-mapped read cases (bytes).
    pub mmap_size: u64,
    /// `--cold`: the read cases were also run with the page cache dropped
    /// before each timed pass (the rows labelled "cold:").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cold: bool,
    /// With `--cold`: how the cache was emptied, as the first cold run did it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_method: Option<String>,
    /// The page's "reads are about 10x faster than writes", from this run's
    /// own read and write cases (absent in older results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_write: Vec<ReadWriteRow>,
}

/// The page's "write performance is between 5 and 15 times slower than
/// reads" (section 2.2), the range a [`ReadWriteRow`] is judged against.
pub const WRITE_OVER_READ_CLAIM: (f64, f64) = (5.0, 15.0);

/// One storage's write time per blob over its read time per blob, measured
/// round by round in the same run (the page: "Reading is about an order of
/// magnitude faster than writing, for all systems and for both SQLite and
/// direct-to-disk I/O").
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadWriteRow {
    /// "SQLite", "dir" or "tree".
    pub storage: String,
    /// The write run's name (its time per blob is the numerator).
    pub write_case: String,
    /// The read run's name (its time per blob is the denominator).
    pub read_case: String,
    /// Write time / read time, paired by round, with its interval.
    pub write_over_read: Ratio,
    /// Judged against [`WRITE_OVER_READ_CLAIM`] by the interval.
    pub verdict: Verdict,
}

/// Confirmed when the interval lies wholly inside 5..15 times, not
/// confirmed when wholly outside it, inconclusive otherwise.
pub fn judge_write_over_read(e: &Estimate) -> Verdict {
    let (low, high) = WRITE_OVER_READ_CLAIM;
    if e.low >= low && e.high <= high {
        Verdict::Confirmed
    } else if e.high < low || e.low > high {
        Verdict::NotConfirmed
    } else {
        Verdict::Inconclusive
    }
}

impl FasterThanFsTables {
    /// Every timed figure of the table (ratios and times), for the notes
    /// printed under it.
    pub fn estimates(&self) -> Vec<Estimate> {
        let mut out = Vec::new();
        for row in &self.fasterthanfs {
            if let FasterThanFsRow::Timed(r) = row {
                for ratio in [&r.dir_over_db, &r.tree_over_db] {
                    out.extend([
                        ratio.ratio(self.rounds),
                        ratio.numerator(self.rounds),
                        ratio.denominator(self.rounds),
                    ]);
                }
            }
        }
        out.extend(
            self.read_write
                .iter()
                .map(|r| r.write_over_read.ratio(self.rounds)),
        );
        out
    }
}

/// A row of the table: a timed comparison, or the disk space.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
// A table of some 17 rows: boxing the larger variant would save nothing that matters.
#[allow(clippy::large_enum_variant)]
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
    /// The claim judged against both ratios' intervals.
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
    /// The paired ratio with its 95% interval (absent in results written
    /// before intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Estimate>,
    /// The numerator's time (ns) with its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numerator: Option<Estimate>,
    /// The denominator's time (ns) with its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denominator: Option<Estimate>,
}

impl Ratio {
    /// The ratio with its interval; for an older result the median alone.
    pub fn ratio(&self, rounds: u64) -> Estimate {
        self.estimate
            .unwrap_or_else(|| Estimate::point(self.median, rounds as usize))
    }

    /// The numerator's time (ns); for an older result the median alone.
    pub fn numerator(&self, rounds: u64) -> Estimate {
        self.numerator
            .unwrap_or_else(|| Estimate::point(self.numerator_ns, rounds as usize))
    }

    /// The denominator's time (ns); for an older result the median alone.
    pub fn denominator(&self, rounds: u64) -> Estimate {
        self.denominator
            .unwrap_or_else(|| Estimate::point(self.denominator_ns, rounds as usize))
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

    /// Judges the dir and tree ratios by their intervals (the page's
    /// claims hold for both layouts): confirmed only when both intervals lie
    /// wholly on the claimed side, not confirmed when one lies wholly on the
    /// other side, inconclusive otherwise.
    pub fn verdict(&self, dir: &Estimate, tree: &Estimate) -> Verdict {
        let both = |t: f64, side: Side| dir.side_of(t) == side && tree.side_of(t) == side;
        let either = |t: f64, side: Side| dir.side_of(t) == side || tree.side_of(t) == side;
        match *self {
            Claim::AtLeast { ratio, .. } => {
                if both(ratio, Side::Above) {
                    Verdict::Confirmed
                } else if either(ratio, Side::Below) {
                    if both(1.0, Side::Above) {
                        Verdict::DbAheadByLess
                    } else {
                        Verdict::NotConfirmed
                    }
                } else {
                    Verdict::Inconclusive
                }
            }
            Claim::DbSlower { .. } => {
                if both(1.0, Side::Below) {
                    Verdict::Confirmed
                } else if either(1.0, Side::Above) {
                    Verdict::NotConfirmed
                } else {
                    Verdict::Inconclusive
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
    /// An interval straddles the claim: more rounds may decide it.
    #[serde(rename = "inconclusive")]
    Inconclusive,
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
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotJudged => "-",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::estimate::Method;

    fn e(low: f64, value: f64, high: f64) -> Estimate {
        Estimate {
            value,
            low,
            high,
            n: 5,
            method: Method::PairedLogOrderStatistic,
            coverage: Some(0.9375),
        }
    }

    #[test]
    fn verdicts_follow_the_interval() {
        let claim = Claim::AtLeast {
            ratio: 1.35,
            text: String::new(),
        };
        let v = |a, b| claim.verdict(&a, &b);
        assert_eq!(v(e(1.4, 1.5, 1.6), e(1.36, 1.7, 2.0)), Verdict::Confirmed);
        // The median is above the claim but the interval reaches below it.
        assert_eq!(v(e(1.2, 1.5, 1.6), e(1.4, 1.5, 1.6)), Verdict::Inconclusive);
        assert_eq!(
            v(e(1.1, 1.2, 1.3), e(1.4, 1.5, 1.6)),
            Verdict::DbAheadByLess
        );
        assert_eq!(v(e(0.9, 1.2, 1.3), e(1.4, 1.5, 1.6)), Verdict::NotConfirmed);
        assert_eq!(v(e(0.7, 0.8, 0.9), e(0.7, 0.8, 0.9)), Verdict::NotConfirmed);
        let slower = Claim::DbSlower {
            text: String::new(),
        };
        let v = |a, b| slower.verdict(&a, &b);
        assert_eq!(v(e(0.7, 0.8, 0.9), e(0.6, 0.8, 0.99)), Verdict::Confirmed);
        assert_eq!(v(e(0.7, 0.8, 1.1), e(0.7, 0.8, 0.9)), Verdict::Inconclusive);
        assert_eq!(v(e(1.0, 1.1, 1.2), e(0.7, 0.8, 0.9)), Verdict::NotConfirmed);
        // Without intervals (disk space) the point decides, as before.
        let p = |x| Estimate::point(x, 1);
        assert_eq!(claim.verdict(&p(1.4), &p(1.5)), Verdict::Confirmed);
        assert_eq!(claim.verdict(&p(1.2), &p(1.5)), Verdict::DbAheadByLess);
    }

    #[test]
    fn write_over_read_is_judged_against_five_to_fifteen() {
        assert_eq!(
            judge_write_over_read(&e(6.0, 9.0, 14.0)),
            Verdict::Confirmed
        );
        assert_eq!(
            judge_write_over_read(&e(4.0, 9.0, 14.0)),
            Verdict::Inconclusive
        );
        assert_eq!(
            judge_write_over_read(&e(1.5, 2.0, 3.0)),
            Verdict::NotConfirmed
        );
        assert_eq!(
            judge_write_over_read(&e(16.0, 20.0, 30.0)),
            Verdict::NotConfirmed
        );
    }
}
