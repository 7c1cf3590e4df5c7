//! The result of `suite concurrency`, the scaling suite: throughput and tail
//! latency against threads, per store layout and operation mix, each point
//! measured in rounds.

use serde::{Deserialize, Serialize};

use crate::dataset::DatasetSpec;
use crate::measure::estimate::{Estimate, Stopping};
use crate::result::faults::{SystemFailure, failed_layouts_line};
use crate::result::mixed_run::KeyDistribution;
use crate::result::rounds::RoundsRecord;

/// One store layout the suite loaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutInfo {
    /// Its name in the tables: sqlite-wal, sqlite-rollback, dir, ...
    pub name: String,
    /// The target it ran on.
    pub target: String,
    /// How it writes, in words (journal mode, synchronous, write style).
    pub writes: String,
    /// The engine's version as it reports it (SQLite's library, a server's
    /// name and version); absent in results written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// What one round of one point measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PointRound {
    /// Completed operations per second.
    pub ops_per_s: f64,
    /// Median and 99th percentile of every operation's time, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// Operations refused by a busy lock (rolled back).
    pub busy: u64,
    /// Torn or stale reads (none expected).
    pub wrong: u64,
    /// Reads checked whole and legal.
    pub verified: u64,
}

/// One layout, mix and thread count, over its rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    /// The layout's name.
    pub layout: String,
    /// The mix, as `--mix` takes it.
    pub mix: String,
    /// Worker threads.
    pub threads: usize,
    /// Every measured round, in order.
    pub rounds: Vec<PointRound>,
    /// Whether its rounds stopped on the width of their intervals
    /// (`--precision`): its intervals then use the ranks that keep 95%
    /// after such a stop.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped_on_width: bool,
}

impl ScalingPoint {
    /// Operations per second: the median of the rounds and its interval.
    pub fn rate(&self) -> Estimate {
        let v: Vec<f64> = self.rounds.iter().map(|r| r.ops_per_s).collect();
        self.stopping().median(&v)
    }

    /// How its rounds ended, which sets its intervals' ranks.
    fn stopping(&self) -> Stopping {
        if self.stopped_on_width {
            Stopping::OnWidth
        } else {
            Stopping::Fixed
        }
    }

    /// The 99th percentile, ns: the median of the rounds and its interval.
    pub fn p99(&self) -> Estimate {
        let v: Vec<f64> = self.rounds.iter().map(|r| r.p99_ns as f64).collect();
        self.stopping().median(&v)
    }

    /// Busy outcomes over every round.
    pub fn busy(&self) -> u64 {
        self.rounds.iter().map(|r| r.busy).sum()
    }

    /// Torn or stale reads over every round.
    pub fn wrong(&self) -> u64 {
        self.rounds.iter().map(|r| r.wrong).sum()
    }

    /// This point's throughput over `base`'s, paired round by round.
    pub fn speedup_over(&self, base: &ScalingPoint) -> Estimate {
        let rate = |p: &ScalingPoint| p.rounds.iter().map(|r| r.ops_per_s).collect::<Vec<_>>();
        self.stopping().ratio(&rate(self), &rate(base))
    }
}

/// The kind-specific part of a `suite concurrency` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingTables {
    /// The blobs every layout held.
    pub dataset: DatasetSpec,
    /// How keys were drawn.
    pub keys: KeyDistribution,
    /// Time per point, its rounds together, ns.
    pub duration_ns: u64,
    /// The machine's cores.
    pub cores: usize,
    /// Every layout, in the order the tables list them.
    pub layouts: Vec<LayoutInfo>,
    /// The mixes, in order.
    pub mixes: Vec<String>,
    /// The thread counts, in order.
    pub threads: Vec<usize>,
    /// Every (layout, mix, threads) point.
    pub points: Vec<ScalingPoint>,
    /// Layouts that failed (while their dataset was made, or in a round:
    /// where and why): their points from the one that failed on are left
    /// out (a partial point would not pair with the others' rounds) and
    /// their cells say why; every other layout's figures are kept. Absent
    /// when nothing failed (and in older results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<SystemFailure>,
    /// How long each round lasted, ns (absent in results from before
    /// `--precision`, whose rounds lasted `duration_ns` over their number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_ns: Option<u64>,
    /// The rounds' rule and where each point stopped (absent in results
    /// from before `--precision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<RoundsRecord>,
}

impl ScalingTables {
    /// What ran, in words: `10000 blobs of 10000 bytes per layout, keys
    /// zipf:0.99, 5s per point in 5 rounds, 2 core(s)`.
    pub fn describe(&self) -> String {
        let rounds = self.points.first().map_or(0, |p| p.rounds.len());
        let time = match (&self.stopping, self.round_ns) {
            (Some(r), Some(each))
                if matches!(r.rule, crate::result::rounds::RoundsRule::Precision(_)) =>
            {
                format!(
                    "{} per point, in rounds of {}",
                    r.header(),
                    humantime::format_duration(std::time::Duration::from_nanos(each))
                )
            }
            _ => format!(
                "{} per point in {rounds} rounds",
                humantime::format_duration(std::time::Duration::from_nanos(self.duration_ns))
            ),
        };
        format!(
            "{} blobs of {} bytes per layout, keys {}, {time}, {} core(s)",
            self.dataset.count,
            self.dataset.size,
            self.keys.describe(),
            self.cores
        )
    }

    /// The failure of layout `name`, if it failed.
    pub fn failure(&self, name: &str) -> Option<&SystemFailure> {
        self.failed.iter().find(|f| f.system == name)
    }

    /// The one line the command exits 1 with when a layout failed ("1 of
    /// 5 layouts failed: postgres-bytea (connection: ...); see the
    /// result"), else None.
    pub fn failures_line(&self) -> Option<String> {
        failed_layouts_line(&self.failed, self.layouts.len())
    }

    /// The point of `layout`, `mix` and `threads`, if it ran.
    pub fn point(&self, layout: &str, mix: &str, threads: usize) -> Option<&ScalingPoint> {
        self.points
            .iter()
            .find(|p| p.layout == layout && p.mix == mix && p.threads == threads)
    }
}
