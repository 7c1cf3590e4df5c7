//! The `suite lob` result's own tables: every write and read sample per
//! system and blob size, their medians and means, the spikes among them, the
//! time to read 1 GB (the paper's Figure 22), each system's best blob size,
//! where time starts to grow with size, and what each system ran with
//! (`--logging`, `--cold`).
//!
//! Documents written by hand or by older versions may hold only the samples
//! (system, size, write_ns, read_ns): every other field defaults to empty.

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::FailureClass;
use crate::result::faults::systems_failed_line;
use crate::store::StoreInfo;

/// The paper's blob sizes (kvtest units: 1K = 1000 bytes), the default of
/// `--sizes`. Here rather than in the suite so `cli` names it without
/// depending on the suite.
pub const PAPER_SIZES: &str = "1K,2K,3999,5K,10K,50K,100K,500K,1M,5M,10M";

/// The systems the suite measures, in the order it runs and lists them.
pub const SYSTEMS: &[&str] = &[
    "sqlite",
    "dir",
    "postgres bytea",
    "postgres lo",
    "mariadb innodb",
    "mariadb myisam",
    "mariadb aria",
    "mariadb archive",
    "s3",
];

/// The kind-specific part of a `lob` result.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LobTables {
    /// Every sample, one entry per system and size measured.
    #[serde(default)]
    pub lob: Vec<Samples>,
    /// Samples over 10x the median of their size (kept in every mean).
    #[serde(default)]
    pub spikes: Vec<Spike>,
    /// Time to read 1 GB in blobs of each size, from the mean read time.
    #[serde(default)]
    pub read_1gb_seconds: Vec<ReadGb>,
    /// Each system's size with the lowest time per GB.
    #[serde(default)]
    pub best_size: Vec<BestSize>,
    /// Systems that were not measured, and why.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// What each measured system reported about itself, and the sizes it refused.
    #[serde(default)]
    pub stores: Vec<StoreEntry>,
    /// Different random blobs per size (`--per-size`).
    #[serde(default)]
    pub per_size: u64,
    /// `--logging`: "off" (the paper's setup: logging disabled on every
    /// system) or "on" (durable everywhere); empty in older documents,
    /// which ran SQLite durable and everything else at its defaults.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub logging: String,
    /// Whether each size's reads started cold (`--cold`): server restarted,
    /// page cache dropped; how, per size, in [`Samples::cold`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cold: bool,
    /// Median and mean of every system and size (the paper plots the mean).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<SizeSummary>,
    /// The size from which time per blob grows with size, per system and phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub growth: Vec<Growth>,
    /// The key orders measured (`--order`), the first being the one every
    /// other table is drawn from; empty in older documents, which wrote and
    /// read in ascending id order (sequential).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orders: Vec<Order>,
    /// With `--order both`: random against sequential, per system, size and
    /// phase, judged together (the paper: "We repeated BLOB read and write
    /// in different orders; however no significant difference was observed").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order_effect: Vec<OrderEffect>,
    /// Systems that failed while they were measured: where, how, and the
    /// sizes left unmeasured after it (every other system's figures are
    /// kept; absent in older documents and when nothing failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<Failed>,
}

/// A system that failed while it was measured (its server died, its disk
/// went read-only, a blob read back wrong). Its samples of the sizes before
/// are kept; the size it failed at and every later one are not measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failed {
    /// The system's name.
    pub system: String,
    /// The blob size it failed at, bytes.
    pub size: u64,
    /// The order it was measured in when it failed (absent: sequential).
    #[serde(default, skip_serializing_if = "Order::is_sequential")]
    pub order: Order,
    /// What it was doing: "setup", "write", "cold start" or "read".
    pub phase: String,
    /// How it failed.
    #[serde(flatten)]
    pub class: FailureClass,
    /// The failure's message, as one line.
    pub message: String,
    /// The later sizes it was not measured at (the suite moves on to the
    /// next system at its first failure).
    #[serde(default)]
    pub not_measured: Vec<u64>,
}

impl Failed {
    /// "connection: server disconnected": the class and the message.
    pub fn reason(&self) -> String {
        format!("{}: {}", self.class.label(), self.message)
    }

    /// What a table cell of this system at `size` says, if the failure
    /// covers that size: "failed: connection: ..." at the size it failed
    /// at, "not measured (failed at 2000)" after.
    pub fn cell(&self, size: u64) -> Option<String> {
        if size == self.size {
            Some(format!("failed: {}", self.reason()))
        } else if self.not_measured.contains(&size) {
            Some(format!("not measured (failed at {})", self.size))
        } else {
            None
        }
    }
}

/// The order blobs are written and read back in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Written with ids 1, 2, 3 .. and read back in the same ascending order.
    #[default]
    Sequential,
    /// Written in a seeded random permutation of the ids and read back in
    /// another one.
    Random,
}

impl Order {
    /// The name `--order` takes and the output prints.
    pub fn name(self) -> &'static str {
        match self {
            Order::Sequential => "sequential",
            Order::Random => "random",
        }
    }

    fn is_sequential(&self) -> bool {
        *self == Order::Sequential
    }
}

/// The smallest effect of order that counts (10%: the whole interval of
/// random / sequential must lie beyond a factor of 1.10 either way). Two
/// datasets built one after the other commonly differ by 5-10% for reasons
/// unrelated to order (where their pages landed), as `compare` knows.
pub const ORDER_THRESHOLD: f64 = 0.10;

/// What the order comparison concluded for one system, size and phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrderCall {
    /// Fewer than 4 blobs a side: no test was made.
    Insufficient,
    /// No difference beyond the noise: the rank test (after Holm) does not
    /// reject, or the interval reaches inside [`ORDER_THRESHOLD`].
    WithinNoise,
    /// Random order is slower beyond the noise and the threshold.
    RandomSlower,
    /// Random order is faster beyond the noise and the threshold.
    RandomFaster,
}

/// Random against sequential order for one system, blob size and phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OrderEffect {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// "write" or "read".
    pub phase: String,
    /// Median time per blob in sequential order (ns).
    pub sequential_median_ns: f64,
    /// Median time per blob in random order (ns).
    pub random_median_ns: f64,
    /// median(random) / median(sequential), with its 95% bootstrap interval
    /// (each side resampled on its own: the blobs are not paired).
    pub ratio: f64,
    /// Lower bound of the ratio's interval.
    pub low: f64,
    /// Upper bound of the ratio's interval.
    pub high: f64,
    /// Blobs per side.
    pub n: usize,
    /// The rank test's p value after Holm's correction over every case, when tested.
    pub p_adjusted: Option<f64>,
    /// The conclusion.
    pub call: OrderCall,
}

impl OrderEffect {
    /// Whether order made a difference here beyond the noise and the threshold.
    pub fn differs(&self) -> bool {
        matches!(self.call, OrderCall::RandomSlower | OrderCall::RandomFaster)
    }

    /// `1.02x [0.95-1.10]`, as every ratio is printed.
    pub fn format_ratio(&self) -> String {
        if self.low.is_finite() && self.high.is_finite() {
            format!("{:.2}x [{:.2}-{:.2}]", self.ratio, self.low, self.high)
        } else {
            format!("{:.2}x", self.ratio)
        }
    }
}

/// How much slower than at the smallest size a blob must be, at a size and
/// every larger one, for time to count as growing with size.
pub const GROWTH_FACTOR: f64 = 1.5;

/// The paper's "size where time starts to grow with size": among
/// `(size, median ns)` points in ascending size order, the first size from
/// which on every larger size's median is over [`GROWTH_FACTOR`] times the
/// median at the smallest size. None when fewer than two sizes or when time
/// stays within that factor (or dips back under it at the largest sizes).
pub fn growth_size(points: &[(u64, f64)]) -> Option<u64> {
    let (&(_, base), rest) = points.split_first()?;
    let limit = GROWTH_FACTOR * base;
    // The suffix of sizes all above the limit; its first size is the answer.
    let above = rest.iter().rev().take_while(|(_, t)| *t > limit).count();
    (above > 0).then(|| rest[rest.len() - above].0)
}

/// Median and mean of one system's samples at one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeSummary {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// Median INSERT time.
    pub write_median_ns: f64,
    /// Mean INSERT time (the paper's figure; spikes pull it up).
    pub write_mean_ns: f64,
    /// Median SELECT time.
    pub read_median_ns: f64,
    /// Mean SELECT time (the paper's figure).
    pub read_mean_ns: f64,
}

/// Where time per blob starts to grow with blob size, for one system and phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Growth {
    /// The system's name.
    pub system: String,
    /// "write" or "read".
    pub phase: String,
    /// The smallest size measured, the baseline.
    pub baseline_size: u64,
    /// The median time per blob at the baseline size.
    pub baseline_median_ns: f64,
    /// The factor over the baseline that counts as growth ([`GROWTH_FACTOR`]).
    pub factor: f64,
    /// The first size from which on every larger size is over factor x
    /// baseline; None: time did not grow that much up to the largest size.
    pub size: Option<u64>,
}

/// Every per-call time of one system at one blob size, in nanoseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Samples {
    /// The system's name, one of [`SYSTEMS`].
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// Each INSERT, in the order the blobs were written.
    #[serde(deserialize_with = "nanos")]
    pub write_ns: Vec<u64>,
    /// Each SELECT by id after reconnecting, in the same order.
    #[serde(deserialize_with = "nanos")]
    pub read_ns: Vec<u64>,
    /// With `--cold`: what was done between writing and reading (server
    /// restarted, page cache dropped), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold: Option<String>,
    /// The order written and read in (absent: sequential).
    #[serde(default, skip_serializing_if = "Order::is_sequential")]
    pub order: Order,
}

/// Sample times as written: whole nanoseconds, though a hand-written
/// document may spell them as floats (100.0).
fn nanos<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    let numbers = Vec::<serde_json::Number>::deserialize(d)?;
    numbers
        .iter()
        .map(|n| {
            n.as_u64()
                .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f.round() as u64))
                .ok_or_else(|| serde::de::Error::custom(format!("{n} is not a time in ns")))
        })
        .collect()
}

/// One sample over 10x the median of its system, size and phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spike {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// "write" or "read".
    pub phase: String,
    /// Which sample (1-based, in the order timed).
    pub sample: u64,
    /// The sample's time.
    pub ns: u64,
    /// The median of its system, size and phase.
    pub median_ns: f64,
    /// The order its samples were taken in (absent: sequential).
    #[serde(default, skip_serializing_if = "Order::is_sequential")]
    pub order: Order,
}

/// Time to read 1 GB stored as blobs of one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadGb {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// Mean read time x (1 GB / size).
    pub seconds: f64,
}

/// A system's best blob size by time per GB read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BestSize {
    /// The system's name.
    pub system: String,
    /// Blob size in bytes.
    pub size: u64,
    /// Its time to read 1 GB.
    pub seconds_per_gb: f64,
}

/// A system that was not measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Skipped {
    /// The system's name.
    pub system: String,
    /// Why: no URL given, cannot connect, engine missing.
    pub reason: String,
}

/// What a measured system reported about itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreEntry {
    /// The system's name.
    pub system: String,
    /// Versions and settings, as the store read them back.
    pub store: Option<StoreInfo>,
    /// Sizes the system could not take, and why.
    #[serde(default)]
    pub notes: Vec<String>,
    /// What the system's writes ran with under `--logging`, read back from
    /// the system where it can be (journal, fsync, synchronous_commit,
    /// innodb_flush_log_at_trx_commit), and what could not be set.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub durability: String,
    /// A cluster's shape before the system's first size and after the
    /// suite, with what changed (None when it is not a cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<super::faults::ClusterRecord>,
}

impl LobTables {
    /// The blob sizes measured or attempted, in the order they were given
    /// (a size only a failed system reached is a row of its failure).
    pub fn sizes(&self) -> Vec<u64> {
        let mut sizes = Vec::new();
        let attempted = self
            .failed
            .iter()
            .flat_map(|f| std::iter::once(f.size).chain(f.not_measured.iter().copied()));
        for size in self.lob.iter().map(|s| s.size).chain(attempted) {
            if !sizes.contains(&size) {
                sizes.push(size);
            }
        }
        sizes
    }

    /// The failure of `system`, if it failed.
    pub fn failure(&self, system: &str) -> Option<&Failed> {
        self.failed.iter().find(|f| f.system == system)
    }

    /// What the cell of `system` at `size` says when the system failed
    /// there or before: see [`Failed::cell`].
    pub fn failed_cell(&self, system: &str, size: u64) -> Option<String> {
        self.failure(system)?.cell(size)
    }

    /// The one line the command exits 1 with when a system failed: "1 of
    /// 4 systems failed: mariadb innodb (connection: server disconnected);
    /// see the result". None when none did.
    pub fn failures_line(&self) -> Option<String> {
        if self.failed.is_empty() {
            return None;
        }
        let mut systems = self.measured();
        for f in &self.failed {
            if !systems.contains(&f.system) {
                systems.push(f.system.clone());
            }
        }
        let named: Vec<(String, String)> = self
            .failed
            .iter()
            .map(|f| (f.system.clone(), f.reason()))
            .collect();
        Some(systems_failed_line(&named, systems.len()))
    }

    /// The systems measured, in the order they ran (from `stores`, else from
    /// the samples of a document that has no `stores`).
    pub fn measured(&self) -> Vec<String> {
        let mut names: Vec<String> = self.stores.iter().map(|s| s.system.clone()).collect();
        if names.is_empty() {
            for s in &self.lob {
                if !names.contains(&s.system) {
                    names.push(s.system.clone());
                }
            }
        }
        names
    }

    /// The order every table but the order comparison is drawn from: the
    /// first measured (sequential in older documents).
    pub fn primary_order(&self) -> Order {
        self.orders.first().copied().unwrap_or_default()
    }

    /// The samples in the primary order, in the order they were taken.
    pub fn primary(&self) -> impl Iterator<Item = &Samples> {
        let order = self.primary_order();
        self.lob.iter().filter(move |s| s.order == order)
    }

    /// The samples of one system at one size, in the primary order.
    pub fn samples(&self, system: &str, size: u64) -> Option<&Samples> {
        self.primary()
            .find(|s| s.system == system && s.size == size)
    }

    /// The samples of one system at one size in a given order.
    pub fn samples_in(&self, system: &str, size: u64, order: Order) -> Option<&Samples> {
        self.lob
            .iter()
            .find(|s| s.system == system && s.size == size && s.order == order)
    }

    /// The order comparisons of one system where order made a difference.
    pub fn order_differences(&self, system: &str) -> Vec<&OrderEffect> {
        self.order_effect
            .iter()
            .filter(|e| e.system == system && e.differs())
            .collect()
    }
}

/// What a size the paper states is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaperWhat {
    /// The size from which time per blob grows with size (this suite's
    /// [`Growth`]).
    Growth,
    /// The blob size with the shortest time to read 1 GB (Figure 22; this
    /// suite's [`BestSize`]).
    BestSize,
    /// Where files overtake the database (the study the paper quotes).
    DbVsFiles,
}

/// Which systems measured here stand for the paper's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaperHere {
    /// These systems (the ones that ran).
    Systems(&'static [&'static str]),
    /// Every system that ran.
    Every,
    /// `sqlite` against `dir`.
    SqliteVsDir,
    /// None: the paper's system has no counterpart here, for this reason.
    None(&'static str),
}

/// A blob size the paper states in its text (document 002: Stancu-Mara,
/// Baumann, Marinov, "A Comparative Benchmark of Large Objects in
/// Relational Databases", Jacobs University TR 14, 2008). Its figures are
/// plots without values: these sentences are its only sizes.
#[derive(Debug, Clone, Copy)]
pub struct PaperSize {
    /// What the size is.
    pub what: PaperWhat,
    /// Whom the paper says it of, in its own names.
    pub paper: &'static str,
    /// The phase it is said of (None: "access", or both).
    pub phase: Option<&'static str>,
    /// The size as the paper writes it.
    pub figure: &'static str,
    /// The paper's sentence, verbatim.
    pub words: &'static str,
    /// Where in the paper.
    pub place: &'static str,
    /// What it is set beside here.
    pub here: PaperHere,
}

const PG: &[&str] = &["postgres lo", "postgres bytea"];
const MYSQL: &[&str] = &["mariadb innodb", "mariadb myisam", "mariadb archive"];
const COMMERCIAL: &str = "a commercial system the paper anonymised";

/// Every size the paper's text states, in its order within each kind. The
/// paper's PostgreSQL wrote large objects (pg_largeobject, LOBLKSIZE:
/// `postgres lo` here; `postgres bytea` is its other variant, TOAST) and
/// its MySQL ran InnoDB, MyISAM and Archive (MariaDB's Aria is not in it).
pub const PAPER_STATED: &[PaperSize] = &[
    PaperSize {
        what: PaperWhat::Growth,
        paper: "SystemA",
        phase: None,
        figure: "above 100K",
        words: "The threshold where access time starts to correlate significantly with BLOB size is above 100K.",
        place: "section 4.1",
        here: PaperHere::None(COMMERCIAL),
    },
    PaperSize {
        what: PaperWhat::Growth,
        paper: "SystemB",
        phase: Some("write"),
        figure: "approximately 50K",
        words: "The threshold where write times increase starts to correlate with the BLOB size is approximately 50K.",
        place: "section 4.2",
        here: PaperHere::None(COMMERCIAL),
    },
    PaperSize {
        what: PaperWhat::Growth,
        paper: "PostgreSQL",
        phase: Some("write"),
        figure: "about 50K",
        words: "The threshold at which write time starts to increase significantly with BLOB size is about 50K.",
        place: "section 4.3",
        here: PaperHere::Systems(PG),
    },
    PaperSize {
        what: PaperWhat::Growth,
        paper: "PostgreSQL",
        phase: Some("read"),
        figure: "about 50-100K",
        words: "The threshold where we observe that read time tends to depend on the BLOB size is about 50-100K.",
        place: "section 4.3",
        here: PaperHere::Systems(PG),
    },
    PaperSize {
        what: PaperWhat::Growth,
        paper: "every system",
        phase: None,
        figure: "beyond 50k",
        words: "Generally speaking, BLOB performance started to depend only on BLOB size once the basic tuning and sizing parameters are exceeded sufficiently, that is: beyond 50k.",
        place: "section 6",
        here: PaperHere::Every,
    },
    PaperSize {
        what: PaperWhat::BestSize,
        paper: "MySQL",
        phase: None,
        figure: "about 100K to 1M",
        words: "For the champion, MySQL, there is a weak minimum at a BLOB size of about 100K to 1M.",
        place: "section 6, Figure 22",
        here: PaperHere::Systems(MYSQL),
    },
    PaperSize {
        what: PaperWhat::BestSize,
        paper: "PostgreSQL and SystemB",
        phase: None,
        figure: "between 1M and 10M",
        words: "Both PostgreSQL and SystemB seem to have its best performance with somewhat larger BLOBs, between 1M and 10M.",
        place: "section 6, Figure 22",
        here: PaperHere::Systems(PG),
    },
    PaperSize {
        what: PaperWhat::BestSize,
        paper: "SystemA",
        phase: None,
        figure: "1M+ (no clear optimum)",
        words: "No clear optimum is visible for SystemA; values of 1M+ seem appropriate, though.",
        place: "section 6, Figure 22",
        here: PaperHere::None(COMMERCIAL),
    },
    // The paper's "[7]" here is its reference [10]: Sears, van Ingen,
    // Gray, "To BLOB or Not To BLOB" (2006), on Windows/NTFS.
    PaperSize {
        what: PaperWhat::DbVsFiles,
        paper: "Sears, van Ingen, Gray (quoted)",
        phase: None,
        figure: "less than 256KB: a database; over about one MB: a file system",
        words: "In [7] authors compare DBMS and file system by addressing fragmentation; they conclude that BLOBs of less than 256KB should be stored in a database while BLOBs over about one MB are more efficiently handled by a file system; in the grey zone inbetween application considerations prevail.",
        place: "section 1",
        here: PaperHere::SqliteVsDir,
    },
];

/// Where one system's median time per blob overtakes another's, sizes
/// ascending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overtake {
    /// Faster at this size and every larger one, not at the size before.
    From(u64),
    /// Faster at every size measured.
    Everywhere,
    /// Not faster at the largest size measured.
    Nowhere,
}

/// Among `(size, a's median, b's median)` in ascending size order, where
/// `a` becomes faster than `b` for good; None without points.
pub fn overtakes(points: &[(u64, f64, f64)]) -> Option<Overtake> {
    if points.is_empty() {
        return None;
    }
    let faster = points.iter().rev().take_while(|(_, a, b)| a < b).count();
    Some(if faster == points.len() {
        Overtake::Everywhere
    } else if faster == 0 {
        Overtake::Nowhere
    } else {
        Overtake::From(points[points.len() - faster].0)
    })
}

impl LobTables {
    /// Where one system's time per blob grows with size in `phase`: as the
    /// result recorded it, else from its samples (results from before it
    /// was recorded). None when the system has no samples.
    pub fn growth_of(&self, system: &str, phase: &str) -> Option<Growth> {
        if let Some(g) = self
            .growth
            .iter()
            .find(|g| g.system == system && g.phase == phase)
        {
            return Some(g.clone());
        }
        let points = self.medians(system, phase);
        let &(baseline_size, baseline_median_ns) = points.first()?;
        Some(Growth {
            system: system.into(),
            phase: phase.into(),
            baseline_size,
            baseline_median_ns,
            factor: GROWTH_FACTOR,
            size: growth_size(&points),
        })
    }

    /// One system's median time per blob at each size in `phase`
    /// ("write" or "read"), sizes ascending, in the primary order.
    pub fn medians(&self, system: &str, phase: &str) -> Vec<(u64, f64)> {
        let mut points: Vec<(u64, f64)> = self
            .primary()
            .filter(|x| x.system == system)
            .filter_map(|x| {
                let v = if phase == "write" {
                    &x.write_ns
                } else {
                    &x.read_ns
                };
                let v: Vec<f64> = v.iter().map(|&n| n as f64).collect();
                (!v.is_empty())
                    .then(|| crate::measure::stats::summarize(&v).median)
                    .map(|m| (x.size, m))
            })
            .collect();
        points.sort_by_key(|p| p.0);
        points
    }

    /// Where `a`'s median time per blob overtakes `b`'s in `phase`, over
    /// the sizes both were measured at.
    pub fn overtake(&self, a: &str, b: &str, phase: &str) -> Option<Overtake> {
        let theirs = self.medians(b, phase);
        let points: Vec<(u64, f64, f64)> = self
            .medians(a, phase)
            .into_iter()
            .filter_map(|(size, m)| {
                theirs
                    .iter()
                    .find(|(s, _)| *s == size)
                    .map(|&(_, n)| (size, m, n))
            })
            .collect();
        overtakes(&points)
    }

    /// What this run measured beside one of the paper's sizes, one entry
    /// per system (or pair) measured, sizes written by `size`; empty when
    /// none of the systems it stands beside ran.
    pub fn beside_paper(&self, p: &PaperSize, size: &dyn Fn(u64) -> String) -> Vec<String> {
        let measured = self.measured();
        let systems: Vec<&str> = match p.here {
            PaperHere::Systems(list) => list
                .iter()
                .copied()
                .filter(|s| measured.iter().any(|m| m == s))
                .collect(),
            PaperHere::Every => measured.iter().map(String::as_str).collect(),
            PaperHere::SqliteVsDir => return self.db_vs_files(size),
            PaperHere::None(_) => return Vec::new(),
        };
        let sizes = self.sizes();
        let (smallest, largest) = (sizes.iter().min(), sizes.iter().max());
        systems
            .into_iter()
            .filter_map(|system| match p.what {
                PaperWhat::Growth => {
                    let phases: Vec<&str> = match p.phase {
                        Some(ph) => vec![ph],
                        None => vec!["write", "read"],
                    };
                    let texts: Vec<String> = phases
                        .iter()
                        .filter_map(|ph| self.growth_of(system, ph))
                        .map(|g| {
                            let prefix = if p.phase.is_some() {
                                String::new()
                            } else {
                                format!("{} ", g.phase)
                            };
                            match g.size {
                                Some(s) => format!("{prefix}from {}", size(s)),
                                None => format!(
                                    "{prefix}flat (within {}x of {})",
                                    g.factor,
                                    size(g.baseline_size)
                                ),
                            }
                        })
                        .collect();
                    (!texts.is_empty()).then(|| format!("{system} {}", texts.join(", ")))
                }
                PaperWhat::BestSize => {
                    self.best_size.iter().find(|b| b.system == system).map(|b| {
                        let edge = if Some(&b.size) == largest && sizes.len() > 1 {
                            ", the largest size measured"
                        } else if Some(&b.size) == smallest && sizes.len() > 1 {
                            ", the smallest size measured"
                        } else {
                            ""
                        };
                        format!(
                            "{system} {} ({:.2} s per GB{edge})",
                            size(b.size),
                            b.seconds_per_gb
                        )
                    })
                }
                PaperWhat::DbVsFiles => None,
            })
            .collect()
    }

    /// Where files (`dir`) overtake the database (`sqlite`) per blob, to
    /// write and to read; empty unless both ran.
    fn db_vs_files(&self, size: &dyn Fn(u64) -> String) -> Vec<String> {
        ["write", "read"]
            .iter()
            .filter_map(|phase| {
                self.overtake("dir", "sqlite", phase).map(|o| match o {
                    Overtake::From(s) => format!(
                        "{phase}: dir faster than sqlite (median per blob) from {} on",
                        size(s)
                    ),
                    Overtake::Everywhere => {
                        format!("{phase}: dir faster than sqlite at every size measured")
                    }
                    Overtake::Nowhere => {
                        format!("{phase}: dir not faster than sqlite at the largest size measured")
                    }
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_system_marks_its_cells_and_sums_up_in_one_line() {
        let samples = |system: &str, size| Samples {
            system: system.into(),
            size,
            write_ns: vec![1],
            read_ns: vec![1],
            cold: None,
            order: Order::Sequential,
        };
        let entry = |system: &str| StoreEntry {
            system: system.into(),
            store: None,
            notes: Vec::new(),
            durability: String::new(),
            cluster: None,
        };
        let mut t = LobTables {
            lob: vec![
                samples("sqlite", 1000),
                samples("sqlite", 2000),
                samples("mariadb innodb", 1000),
            ],
            stores: vec![entry("sqlite"), entry("mariadb innodb")],
            ..Default::default()
        };
        assert_eq!(t.failures_line(), None);
        t.failed.push(Failed {
            system: "mariadb innodb".into(),
            size: 2000,
            order: Order::Sequential,
            phase: "write".into(),
            class: FailureClass::Connection,
            message: "server disconnected".into(),
            not_measured: vec![3000],
        });
        assert_eq!(
            t.failures_line().unwrap(),
            "1 of 2 systems failed: mariadb innodb (connection: server disconnected); see the result"
        );
        assert_eq!(
            t.failed_cell("mariadb innodb", 2000).unwrap(),
            "failed: connection: server disconnected"
        );
        assert_eq!(
            t.failed_cell("mariadb innodb", 3000).unwrap(),
            "not measured (failed at 2000)"
        );
        assert_eq!(t.failed_cell("mariadb innodb", 1000), None);
        assert_eq!(t.failed_cell("sqlite", 2000), None);
        // A size only the failed system reached is still a row.
        assert_eq!(t.sizes(), [1000, 2000, 3000]);
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["failed"][0]["class"], "connection", "{json}");
        let back: LobTables = serde_json::from_value(json).unwrap();
        assert_eq!(back.failed, t.failed);
    }

    #[test]
    fn growth_size_is_where_time_leaves_the_small_sizes_for_good() {
        // Flat, then growing from 100K on: a dip back under 1.5x before it
        // (the 10K spike) does not count, the lasting rise does.
        let p = [
            (1_000, 100.0),
            (10_000, 200.0),
            (50_000, 140.0),
            (100_000, 151.0),
            (1_000_000, 900.0),
        ];
        assert_eq!(growth_size(&p), Some(100_000));
        // Exactly 1.5x is not "more than".
        assert_eq!(growth_size(&[(1, 10.0), (2, 15.0)]), None);
        assert_eq!(growth_size(&[(1, 10.0), (2, 15.1)]), Some(2));
        // Flat, falling at the end, one size, none: no growth size.
        assert_eq!(growth_size(&[(1, 10.0), (2, 11.0), (3, 12.0)]), None);
        assert_eq!(growth_size(&[(1, 10.0), (2, 40.0), (3, 12.0)]), None);
        assert_eq!(growth_size(&[(1, 10.0)]), None);
        assert_eq!(growth_size(&[]), None);
    }

    #[test]
    fn samples_load_as_whole_nanoseconds_and_write_back_as_integers() {
        let t: LobTables = serde_json::from_value(serde_json::json!({
            "lob": [{"system": "sqlite", "size": 1000, "write_ns": [100.0, 31469], "read_ns": []}]
        }))
        .unwrap();
        assert_eq!(t.lob[0].write_ns, vec![100, 31469]);
        assert_eq!(t.measured(), vec!["sqlite".to_string()]);
        assert_eq!(t.sizes(), vec![1000]);
        let back = serde_json::to_value(&t).unwrap();
        assert_eq!(back["lob"][0]["write_ns"], serde_json::json!([100, 31469]));
        let negative = serde_json::json!({"lob": [{"system": "x", "size": 1, "write_ns": [-1], "read_ns": []}]});
        assert!(serde_json::from_value::<LobTables>(negative).is_err());
    }

    #[test]
    fn overtakes_is_where_one_side_is_faster_for_good() {
        let p = |v: &[(u64, f64, f64)]| overtakes(v);
        // Slower, then faster from 100K on (a faster dip at 10K does not count).
        assert_eq!(
            p(&[
                (1, 5.0, 1.0),
                (10, 1.0, 2.0),
                (50, 3.0, 2.0),
                (100, 1.0, 2.0),
                (1000, 1.0, 9.0)
            ]),
            Some(Overtake::From(100))
        );
        assert_eq!(
            p(&[(1, 1.0, 2.0), (2, 1.0, 2.0)]),
            Some(Overtake::Everywhere)
        );
        assert_eq!(p(&[(1, 1.0, 2.0), (2, 2.0, 2.0)]), Some(Overtake::Nowhere));
        assert_eq!(p(&[]), None);
    }

    /// One system's samples at each size: every blob takes `(write, read)`.
    fn samples(system: &str, points: &[(u64, u64, u64)]) -> Vec<Samples> {
        points
            .iter()
            .map(|&(size, w, r)| Samples {
                system: system.into(),
                size,
                write_ns: vec![w; 3],
                read_ns: vec![r; 3],
                cold: None,
                order: Order::Sequential,
            })
            .collect()
    }

    #[test]
    fn the_papers_sizes_are_set_beside_this_runs() {
        let mut t = LobTables::default();
        t.lob.extend(samples(
            "sqlite",
            &[(1_000, 10, 10), (100_000, 20, 20), (1_000_000, 90, 90)],
        ));
        t.lob.extend(samples(
            "dir",
            &[(1_000, 30, 5), (100_000, 25, 6), (1_000_000, 40, 40)],
        ));
        t.lob.extend(samples(
            "postgres lo",
            &[(1_000, 10, 10), (100_000, 11, 40), (1_000_000, 40, 90)],
        ));
        t.best_size.push(BestSize {
            system: "postgres lo".into(),
            size: 1_000_000,
            seconds_per_gb: 0.09,
        });
        let size = |b: u64| format!("{b} B");
        let stated = |what, paper: &str, phase| {
            PAPER_STATED
                .iter()
                .find(|p| p.what == what && p.paper == paper && p.phase == phase)
                .unwrap()
        };
        // Growth, computed from the samples of a result that did not record it.
        let pg_write = stated(PaperWhat::Growth, "PostgreSQL", Some("write"));
        assert_eq!(pg_write.figure, "about 50K");
        assert_eq!(
            t.beside_paper(pg_write, &size),
            ["postgres lo from 1000000 B"]
        );
        let pg_read = stated(PaperWhat::Growth, "PostgreSQL", Some("read"));
        assert_eq!(
            t.beside_paper(pg_read, &size),
            ["postgres lo from 100000 B"]
        );
        let every = stated(PaperWhat::Growth, "every system", None);
        assert_eq!(
            t.beside_paper(every, &size)[0],
            "sqlite write from 100000 B, read from 100000 B"
        );
        assert_eq!(
            t.beside_paper(every, &size)[1],
            "dir write flat (within 1.5x of 1000 B), read from 1000000 B"
        );
        let best = stated(PaperWhat::BestSize, "PostgreSQL and SystemB", None);
        assert_eq!(best.figure, "between 1M and 10M");
        assert_eq!(
            t.beside_paper(best, &size),
            ["postgres lo 1000000 B (0.09 s per GB, the largest size measured)"]
        );
        // No MariaDB ran: nothing beside MySQL's.
        let mysql = stated(PaperWhat::BestSize, "MySQL", None);
        assert!(t.beside_paper(mysql, &size).is_empty());
        let files = PAPER_STATED
            .iter()
            .find(|p| p.what == PaperWhat::DbVsFiles)
            .unwrap();
        assert!(files.words.contains("less than 256KB") && files.words.contains("about one MB"));
        assert_eq!(
            t.beside_paper(files, &size),
            [
                "write: dir faster than sqlite (median per blob) from 1000000 B on",
                "read: dir faster than sqlite at every size measured"
            ]
        );
    }
}
