//! The `suite http` result's own tables: the same dataset served by each
//! system (a database, a folder, any extra server), loaded at every
//! concurrency level.

use serde::{Deserialize, Serialize};

use super::load::{LevelResult, Order};
use crate::dataset::{DatasetSpec, SizeDistribution};
use crate::measure::estimate::{Estimate, Stopping};
use crate::result::rounds::RoundsRecord;
use crate::store::inject::Injection;

/// What one measured round of one level gave one system.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoundFigures {
    /// Successful requests per second of the round's wall time.
    pub requests_per_s: f64,
    /// Mean response time of its successful requests, ns.
    pub mean_ns: f64,
}

/// One server's figures, level by level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpSystem {
    /// "sqlite-blog", "sqlite-kv", "dir", or the NAME of an
    /// `--extra NAME=URLFILE` ("sqlite" in results from before layouts).
    pub system: String,
    /// The table a database system served from, in words (absent for the
    /// others, and in results from before layouts, which used kv).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// One record per concurrency level, in the order of `-c`: every
    /// measured round of the level merged (requests, time, latencies).
    pub levels: Vec<LevelResult>,
    /// Per level (as `levels`), each measured round's figures in round
    /// order (absent in results from before rounds: one run per level).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<Vec<RoundFigures>>,
    /// A known wait injected into every request of this system (a testing
    /// aid of the calibration bench), and what it delivered over the
    /// measured rounds of every level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected: Option<InjectedRequests>,
    /// Whether its rounds stopped on the width of their intervals
    /// (`--precision`): its intervals then use the ranks that keep 95%
    /// after such a stop.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped_on_width: bool,
}

/// What `suite http --inject SYSTEM=SPEC` added to a system's requests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InjectedRequests {
    /// The injection as given (`x1.25`, `+200us`).
    pub inject: Injection,
    /// The requests' own time (sent to body read), summed, ns.
    pub own_ns: u64,
    /// The waits added after them, summed, ns.
    pub extra_ns: u64,
}

impl InjectedRequests {
    /// The requests' time with the waits over their own time.
    pub fn delivered_factor(&self) -> Option<f64> {
        (self.own_ns > 0).then(|| 1.0 + self.extra_ns as f64 / self.own_ns as f64)
    }
}

impl HttpSystem {
    /// The rounds of level `i` (empty for results from before rounds).
    fn rounds_of(&self, i: usize) -> &[RoundFigures] {
        self.rounds.get(i).map_or(&[], Vec::as_slice)
    }

    /// Requests/s at level `i`: the median of its rounds with their
    /// interval, or the level's one figure.
    pub fn rate(&self, i: usize) -> Option<Estimate> {
        let rounds: Vec<f64> = self.rounds_of(i).iter().map(|r| r.requests_per_s).collect();
        self.figure(i, &rounds, |l| l.requests_per_s)
    }

    /// The mean response time at level `i`, ns, as [`HttpSystem::rate`].
    pub fn mean(&self, i: usize) -> Option<Estimate> {
        let rounds: Vec<f64> = self.rounds_of(i).iter().map(|r| r.mean_ns).collect();
        self.figure(i, &rounds, |l| l.latency.mean_ns)
    }

    fn figure(&self, i: usize, rounds: &[f64], one: fn(&LevelResult) -> f64) -> Option<Estimate> {
        let level = self.levels.get(i)?;
        Some(if rounds.is_empty() {
            Estimate::point(one(level), 1)
        } else {
            self.stopping().median(rounds)
        })
    }

    /// How its rounds ended, which sets its intervals' ranks.
    fn stopping(&self) -> Stopping {
        if self.stopped_on_width {
            Stopping::OnWidth
        } else {
            Stopping::Fixed
        }
    }

    /// This system's requests/s over `base`'s at level `i`: the median of
    /// the per-round ratios (same round paired) with its interval.
    pub fn ratio_to(&self, base: &HttpSystem, i: usize) -> Option<Estimate> {
        let (mine, theirs) = (self.rounds_of(i), base.rounds_of(i));
        if mine.is_empty() || theirs.is_empty() {
            let (a, b) = (self.levels.get(i)?, base.levels.get(i)?);
            return Some(Estimate::point(a.requests_per_s / b.requests_per_s, 1));
        }
        let rate = |r: &[RoundFigures]| r.iter().map(|f| f.requests_per_s).collect::<Vec<_>>();
        Some(self.stopping().ratio(&rate(mine), &rate(theirs)))
    }
}

/// The kind-specific part of a `suite http` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpTables {
    /// Every system, the databases first (the first is the ratios'
    /// denominator).
    pub http: Vec<HttpSystem>,
    /// The blobs every system served.
    pub dataset: DatasetSpec,
    /// How long each system was loaded at each level, its measured rounds
    /// together (each round lasted this over their number).
    pub duration_ns: u64,
    /// In which order each connection took its next URL (absent in results
    /// written before `--order` existed: those always requested random keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
    /// Rounds run before the measured ones at each level, and discarded
    /// (absent in results from before rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_rounds: Option<u32>,
    /// How long each round lasted, ns (absent in results from before
    /// `--precision`, whose rounds lasted `duration_ns` over their number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_ns: Option<u64>,
    /// The rounds' rule and where each level stopped (absent in results
    /// from before `--precision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<RoundsRecord>,
}

impl HttpTables {
    /// How many concurrency levels ran (every system ran them all).
    pub fn levels(&self) -> usize {
        self.http.first().map_or(0, |s| s.levels.len())
    }

    /// The URL order the run used (random for results older than `--order`).
    pub fn url_order(&self) -> Order {
        self.order.unwrap_or(Order::Random)
    }
}

/// The blog's one figure for throughput (document 003, "Serving Binary
/// Files from SQLite", the paragraph under its two plots): the files'
/// transactions/s over its SQLite server's, "~2.3 times". Its plots are
/// images; its text gives no other figure.
pub const BLOG_FILES_OVER_SQLITE: f64 = 2.3;
/// The blog's sentence with [`BLOG_FILES_OVER_SQLITE`], verbatim.
pub const BLOG_FILES_OVER_SQLITE_WORDS: &str =
    "The possible throughput (transaction/second) of the filesystem is ~2.3 times higher.";
/// How the blog measured it (document 003: its Go server, the siege line
/// and the laptop it names): the sizes are [`BLOG_SIZE`]'s.
pub const BLOG_SETUP: &str = "its Go server (net/http's file server vs go-sqlite3 via sqlx), \
     2000 files of 200 KB..4 MB, `siege -c N -b --time=10s` at several concurrency levels, \
     an i7-8565U laptop with 16 GB";

/// This run's figure for the blog's: the files' requests/s over the
/// database's at the level where the files serve the most (their
/// "possible throughput").
#[derive(Debug, Clone, PartialEq)]
pub struct BlogBeside {
    /// The files' system ("dir").
    pub files: String,
    /// The database system in the ratio's denominator (the blog's table
    /// when it ran).
    pub db: String,
    /// The concurrency level where the files' median requests/s is highest.
    pub concurrency: usize,
    /// The files' requests/s there.
    pub files_rate: Estimate,
    /// files / db requests/s there, paired round by round.
    pub ratio: Estimate,
    /// The level where the database serves the most, and its requests/s.
    pub db_peak: (usize, Estimate),
}

impl HttpTables {
    /// The figure beside the blog's ~2.3x: None without a `dir` system or
    /// a database to divide by.
    pub fn blog_beside(&self) -> Option<BlogBeside> {
        let files = self.http.iter().find(|s| s.system == "dir")?;
        let db = self
            .http
            .iter()
            .find(|s| s.system == "sqlite-blog")
            .or_else(|| self.http.iter().find(|s| s.system.starts_with("sqlite")))?;
        let peak = |s: &HttpSystem| -> Option<(usize, Estimate)> {
            (0..s.levels.len())
                .filter_map(|i| s.rate(i).map(|e| (i, e)))
                .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
        };
        let (i, files_rate) = peak(files)?;
        let (j, db_rate) = peak(db)?;
        Some(BlogBeside {
            files: files.system.clone(),
            db: db.system.clone(),
            concurrency: files.levels[i].concurrency,
            files_rate,
            ratio: files.ratio_to(db, i)?,
            db_peak: (db.levels[j].concurrency, db_rate),
        })
    }
}

/// The blog's blob sizes: `head -c {n}K` with n uniform in 200..4000, so
/// 200 KiB..4000 KiB (binary units), written here as the middle +/- half
/// the span in bytes.
pub const BLOG_SIZE: u64 = 2100 * 1024;
/// The +/- around [`BLOG_SIZE`] that spans the blog's 200..4000 KiB.
pub const BLOG_VARIANCE: u64 = 1900 * 1024;

/// Whether a dataset's sizes are the blog's 200..4000 KiB.
pub fn blog_sizes(spec: &DatasetSpec) -> bool {
    spec.size == BLOG_SIZE && size_variance(spec) == BLOG_VARIANCE
}

/// The sizes as a reader of the blog would write them: `200..4000 KiB
/// (the blog's)` for the blog's, else `SIZE +/- VARIANCE bytes`.
pub fn describe_sizes(spec: &DatasetSpec) -> String {
    if blog_sizes(spec) {
        return format!(
            "{}..{} KiB, uniform (the blog's `head -c {{200..4000}}K`)",
            (BLOG_SIZE - BLOG_VARIANCE) / 1024,
            (BLOG_SIZE + BLOG_VARIANCE) / 1024
        );
    }
    match size_variance(spec) {
        0 => format!("{} bytes", spec.size),
        v => format!("{} +/- {v} bytes", spec.size),
    }
}

/// What `order` means for the suite's loads, as the header lines say it.
pub fn describe_order(order: Order) -> &'static str {
    match order {
        Order::Sequential => {
            "sequential order (the URL list in key order, round and round, as siege -f without -i)"
        }
        Order::Random => "random order (a random URL per request, as siege -i)",
    }
}

/// The +/- of a dataset's sizes as `--variance` gave it (0 for fixed sizes),
/// as the suite's header lines show it.
pub fn size_variance(spec: &DatasetSpec) -> u64 {
    match spec.distribution {
        SizeDistribution::Uniform { variance } => variance,
        SizeDistribution::Fixed | SizeDistribution::LogNormal { .. } => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{SizeShape, spec_from_options};

    #[test]
    fn the_blogs_sizes_are_200_to_4000_kib() {
        let spec =
            spec_from_options(2000, BLOG_SIZE, BLOG_VARIANCE, SizeShape::Uniform, 1).unwrap();
        let sizes: Vec<usize> = (1..=2000).map(|k| spec.size_of(k)).collect();
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!((200 * 1024..210 * 1024).contains(min), "{min}");
        assert!((3990 * 1024..=4000 * 1024).contains(max), "{max}");
        assert!(blog_sizes(&spec));
        assert!(describe_sizes(&spec).starts_with("200..4000 KiB"));
        let kb = spec_from_options(2000, 2_100_000, 1_900_000, SizeShape::Uniform, 1).unwrap();
        assert!(!blog_sizes(&kb));
        assert_eq!(describe_sizes(&kb), "2100000 +/- 1900000 bytes");
    }

    #[test]
    fn results_before_order_read_as_random() {
        let spec = spec_from_options(1, 10, 0, SizeShape::Uniform, 1).unwrap();
        let t = HttpTables {
            http: Vec::new(),
            dataset: spec,
            duration_ns: 1,
            order: None,
            warmup_rounds: None,
            round_ns: None,
            stopping: None,
        };
        assert_eq!(t.url_order(), Order::Random);
        let text = serde_json::to_string(&t).unwrap();
        assert!(!text.contains("order"), "{text}");
    }

    /// A system with one level per (concurrency, requests/s), the rest
    /// of each level as the http fixture's first.
    fn system(name: &str, rates: &[(usize, f64)]) -> HttpSystem {
        let text = include_str!("../../tests/fixtures/results/http.json");
        let doc: crate::result::ResultDocument = serde_json::from_str(text).expect("fixture");
        let crate::result::Tables::Http(t) = doc.tables else {
            panic!("not a suite http result");
        };
        let template = t.http[0].levels[0].clone();
        let level = |&(c, r): &(usize, f64)| LevelResult {
            concurrency: c,
            requests_per_s: r,
            ..template.clone()
        };
        HttpSystem {
            system: name.into(),
            table: None,
            levels: rates.iter().map(level).collect(),
            rounds: Vec::new(),
            injected: None,
            stopped_on_width: false,
        }
    }

    #[test]
    fn the_blogs_figure_is_set_beside_dir_over_the_blogs_table_at_the_files_peak() {
        let spec = spec_from_options(1, 10, 0, SizeShape::Uniform, 1).unwrap();
        let mut t = HttpTables {
            http: vec![
                system("sqlite-kv", &[(1, 100.0), (8, 300.0)]),
                system("sqlite-blog", &[(1, 100.0), (8, 200.0)]),
                system("dir", &[(1, 150.0), (8, 500.0)]),
            ],
            dataset: spec,
            duration_ns: 1,
            order: None,
            warmup_rounds: None,
            round_ns: None,
            stopping: None,
        };
        let b = t.blog_beside().expect("dir and a database");
        assert_eq!((b.files.as_str(), b.db.as_str()), ("dir", "sqlite-blog"));
        assert_eq!(b.concurrency, 8);
        assert_eq!(b.ratio.value, 2.5);
        assert_eq!(b.db_peak.0, 8);
        // Without the blog's table, the first database.
        t.http.remove(1);
        assert_eq!(t.blog_beside().unwrap().db, "sqlite-kv");
        t.http.retain(|s| s.system != "dir");
        assert!(t.blog_beside().is_none());
    }
}
