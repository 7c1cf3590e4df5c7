//! The result of `suite replicate`: a WAL SQLite blob database written by
//! the mixed-run executor, alone and while Litestream replicates it to an
//! S3 bucket, in paired rounds; what Litestream cost (CPU, bytes uploaded,
//! the WAL it let grow), and whether a restore from the replica holds
//! exactly the source's blobs.

use serde::{Deserialize, Serialize};

use crate::dataset::DatasetSpec;
use crate::error::FailureClass;
use crate::measure::estimate::{Estimate, Stopping};
use crate::result::mixed_run::KeyDistribution;
use crate::result::rounds::{RoundsRecord, RoundsRule};

/// The two arms every round measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arm {
    /// No Litestream process at all.
    Alone,
    /// Litestream running, replicating every commit to the bucket.
    WithLitestream,
}

impl Arm {
    /// The arm's name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Arm::Alone => "alone",
            Arm::WithLitestream => "with litestream",
        }
    }
}

/// What one arm of one round measured (writes are updates and
/// read-modify-writes; reads of the mix are checked but not reported here).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ArmRound {
    /// Completed writes per second of the round.
    pub writes_per_s: f64,
    /// Writes completed.
    pub writes: u64,
    /// Blob bytes those writes wrote.
    pub written_bytes: u64,
    /// Median write time, ns.
    pub p50_ns: u64,
    /// 99th percentile write time, ns.
    pub p99_ns: u64,
    /// Writes refused by a busy lock past the busy timeout (rolled back).
    pub busy: u64,
    /// The largest the `-wal` file grew during the round, bytes.
    pub wal_peak_bytes: u64,
    /// The `-wal` file's size when the round ended, bytes: what is left to
    /// checkpoint.
    pub wal_end_bytes: u64,
}

/// Litestream's side of one round with it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LitestreamRound {
    /// From starting the process to its first sync having reached the
    /// bucket (untimed, before the round): a snapshot of the database.
    pub start_ns: u64,
    /// Litestream's CPU time (user + system) during the timed round, ns.
    pub cpu_ns: u64,
    /// Bytes it uploaded during the timed round (its PUT counter), when
    /// its metrics answered.
    pub uploaded_bytes: Option<u64>,
    /// After the round's last write: how long `litestream sync -wait` took
    /// until the replica held everything (the replica's lag), ns.
    pub catch_up_ns: u64,
    /// Its CPU time during that catch-up, ns.
    pub catch_up_cpu_ns: u64,
    /// Bytes uploaded during the catch-up.
    pub catch_up_bytes: Option<u64>,
}

/// One measured round: both arms, in the order they ran.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReplicateRound {
    /// The arm that ran first (the order alternates round by round).
    pub first: Arm,
    /// Without Litestream.
    pub alone: ArmRound,
    /// With Litestream replicating.
    pub with: ArmRound,
    /// What Litestream did in the `with` arm.
    pub litestream: LitestreamRound,
}

/// Litestream and where it replicated to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LitestreamInfo {
    /// `litestream version`.
    pub version: String,
    /// The replica: `s3://BUCKET/PREFIX at ENDPOINT` (left in the bucket).
    pub replica: String,
    /// How often Litestream ships new WAL frames, ns.
    pub sync_interval_ns: u64,
    /// The configuration file it ran with (credentials came from the
    /// environment and are not in it).
    pub config: String,
    /// The longest starting it (its control socket) or stopping it could
    /// take (`--start-timeout`), ns; 0 in older results.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_timeout_ns: u64,
    /// The longest each `litestream sync -wait` could take
    /// (`--sync-timeout`), ns; 0 in older results (a fixed 600 s).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sync_timeout_ns: u64,
    /// The longest the restore could take (`--restore-timeout`), ns; 0 in
    /// older results (none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restore_timeout_ns: u64,
}

/// Whether a bound is absent (0: an older result, written before it).
fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// What ended the suite early: Litestream killed, frozen past a bound, a
/// sync or the restore refused. The rounds measured before it are kept;
/// nothing after it ran (the restore needs a whole replica).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicateFailure {
    /// The round it happened in: "warm-up 1/1", "round 2/5", "the last
    /// round and the restore".
    pub round: String,
    /// What was going on: "alone", "start", "first sync", "timed round",
    /// "catch-up", "stop", "restore", "restore check".
    pub phase: String,
    /// How it failed.
    #[serde(flatten)]
    pub class: FailureClass,
    /// The failure's message, as one line ("litestream sync: timeout after
    /// 30 s (--sync-timeout)", "litestream: exited (signal: 9 (SIGKILL))").
    pub message: String,
    /// When it was seen, from the start of the first round, ns.
    pub at_ns: u64,
}

impl ReplicateFailure {
    /// "round 2/5, catch-up, at 14.2 s: timeout: litestream sync: timeout
    /// after 30 s (--sync-timeout)".
    pub fn describe(&self) -> String {
        format!(
            "{}, {}, at {:.1} s: {}: {}",
            self.round,
            self.phase,
            self.at_ns as f64 / 1e9,
            self.class.label(),
            self.message
        )
    }
}

/// The restore from the replica after a last round of writes with
/// Litestream, checked blob by blob against the source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestoreCheck {
    /// Writes of the last round, made while Litestream replicated.
    pub writes: u64,
    /// `litestream sync -wait` after them: until the replica held all, ns.
    pub catch_up_ns: u64,
    /// `litestream restore` to a new file, ns.
    pub restore_ns: u64,
    /// The restored database's size, bytes.
    pub restored_bytes: u64,
    /// Blobs in the source.
    pub blobs: u64,
    /// Restored blobs whose bytes are exactly the source's version of that
    /// blob (legal content, checked against the dataset's spec).
    pub matching: u64,
    /// The first difference found, if any ("key 7: holds version ...").
    pub first_mismatch: Option<String>,
    /// SQLite's integrity_check of the restored database ("ok").
    pub integrity: String,
}

impl RestoreCheck {
    /// Whether the restore holds every blob as the source does, and SQLite
    /// finds it sound.
    pub fn passed(&self) -> bool {
        self.matching == self.blobs && self.first_mismatch.is_none() && self.integrity == "ok"
    }
}

/// The kind-specific part of a `suite replicate` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplicateTables {
    /// The blobs in the database.
    pub dataset: DatasetSpec,
    /// The database's target string.
    pub target: String,
    /// How its writes reach the disk, in words.
    pub writes: String,
    /// Worker threads.
    pub threads: usize,
    /// The mix, as `--mix` takes it.
    pub mix: String,
    /// How keys were drawn.
    pub keys: KeyDistribution,
    /// Each arm's time per round, ns.
    pub round_ns: u64,
    /// Warm-up rounds run (both arms) and discarded.
    pub warmup: u32,
    /// Measured rounds asked for (`--rounds`); 0 in older results, whose
    /// rounds all ran.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rounds_planned: u32,
    /// The machine's cores.
    pub cores: usize,
    /// Litestream and its replica.
    pub litestream: LitestreamInfo,
    /// Every measured round, in order.
    pub rounds: Vec<ReplicateRound>,
    /// The restore check (None: it did not run).
    pub restore: Option<RestoreCheck>,
    /// What a reader must know.
    #[serde(default)]
    pub notes: Vec<String>,
    /// What ended the suite early, if anything did (absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<ReplicateFailure>,
    /// The rounds' rule and where they stopped (absent in results from
    /// before `--precision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<RoundsRecord>,
}

impl ReplicateTables {
    /// The rounds the suite set out to measure, as a failure line says
    /// them: `--rounds`, or a precision target's "6-30".
    pub fn rounds_planned_text(&self) -> String {
        match self.stopping.as_ref().map(|r| r.rule) {
            Some(RoundsRule::Precision(t)) => format!("{}-{}", t.min_rounds, t.max_rounds),
            _ => self
                .rounds_planned
                .max(self.rounds.len() as u32)
                .to_string(),
        }
    }

    /// The one line the command exits 1 with when the suite ended early:
    /// "litestream failed in round 2/5 (catch-up): timeout: ...; 1 of 5
    /// rounds measured, no restore; see the result". None when it did not.
    pub fn failures_line(&self) -> Option<String> {
        let f = self.failure.as_ref()?;
        let planned = self.rounds_planned_text();
        Some(format!(
            "suite replicate failed in {} ({}): {}: {}; {} of {planned} rounds measured, {}; see the result",
            f.round,
            f.phase,
            f.class.label(),
            f.message,
            self.rounds.len(),
            if self.restore.is_some() {
                "the restore checked"
            } else {
                "no restore"
            }
        ))
    }

    /// How the rounds ended, which sets the intervals' ranks.
    fn stopping_kind(&self) -> Stopping {
        match self.stopping.as_ref().map(|r| r.rule) {
            Some(RoundsRule::Precision(_)) => Stopping::OnWidth,
            _ => Stopping::Fixed,
        }
    }

    fn arm(&self, arm: Arm) -> impl Iterator<Item = &ArmRound> {
        self.rounds.iter().map(move |r| match arm {
            Arm::Alone => &r.alone,
            Arm::WithLitestream => &r.with,
        })
    }

    /// One figure of an arm, every round.
    pub fn samples(&self, arm: Arm, figure: fn(&ArmRound) -> f64) -> Vec<f64> {
        self.arm(arm).map(figure).collect()
    }

    /// An arm's writes/s: the median of the rounds and its interval.
    pub fn rate(&self, arm: Arm) -> Estimate {
        self.stopping_kind()
            .median(&self.samples(arm, |r| r.writes_per_s))
    }

    /// An arm's median write time, ns.
    pub fn p50(&self, arm: Arm) -> Estimate {
        self.stopping_kind()
            .median(&self.samples(arm, |r| r.p50_ns as f64))
    }

    /// An arm's 99th percentile write time, ns.
    pub fn p99(&self, arm: Arm) -> Estimate {
        self.stopping_kind()
            .median(&self.samples(arm, |r| r.p99_ns as f64))
    }

    /// An arm's peak WAL size, bytes.
    pub fn wal_peak(&self, arm: Arm) -> Estimate {
        self.stopping_kind()
            .median(&self.samples(arm, |r| r.wal_peak_bytes as f64))
    }

    /// with / alone of `figure`, paired round by round.
    pub fn ratio(&self, figure: fn(&ArmRound) -> f64) -> Estimate {
        self.stopping_kind().ratio(
            &self.samples(Arm::WithLitestream, figure),
            &self.samples(Arm::Alone, figure),
        )
    }

    /// Litestream's CPU time per second of the round (1.0 = one core busy).
    pub fn litestream_cpu(&self) -> Estimate {
        let secs = (self.round_ns as f64 / 1e9).max(1e-9);
        let v: Vec<f64> = self
            .rounds
            .iter()
            .map(|r| r.litestream.cpu_ns as f64 / 1e9 / secs)
            .collect();
        self.stopping_kind().median(&v)
    }

    /// Bytes Litestream uploaded per byte of blobs written in the round,
    /// when its metrics answered every round.
    pub fn upload_per_written(&self) -> Option<Estimate> {
        let v: Option<Vec<f64>> = self
            .rounds
            .iter()
            .map(|r| {
                let written = r.with.written_bytes.max(1) as f64;
                let up = r.litestream.uploaded_bytes? + r.litestream.catch_up_bytes?;
                Some(up as f64 / written)
            })
            .collect();
        v.filter(|v| !v.is_empty())
            .map(|v| self.stopping_kind().median(&v))
    }

    /// The replica's lag after each round's last write, ns.
    pub fn catch_up(&self) -> Estimate {
        let v: Vec<f64> = self
            .rounds
            .iter()
            .map(|r| r.litestream.catch_up_ns as f64)
            .collect();
        self.stopping_kind().median(&v)
    }

    /// What ran, in words.
    pub fn describe(&self) -> String {
        format!(
            "{} blobs of {} bytes, {} thread(s), mix {}, keys {}, {} per arm and round, {} round(s) after {} warm-up, {} core(s)",
            self.dataset.count,
            self.dataset.size,
            self.threads,
            self.mix,
            self.keys.describe(),
            humantime::format_duration(std::time::Duration::from_nanos(self.round_ns)),
            self.rounds.len(),
            self.warmup,
            self.cores
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(rate: f64, p99: u64) -> ArmRound {
        ArmRound {
            writes_per_s: rate,
            writes: rate as u64,
            written_bytes: rate as u64 * 10,
            p50_ns: p99 / 10,
            p99_ns: p99,
            busy: 0,
            wal_peak_bytes: 0,
            wal_end_bytes: 0,
        }
    }

    fn tables(pairs: &[(f64, f64)]) -> ReplicateTables {
        let ls = LitestreamRound {
            start_ns: 0,
            cpu_ns: 500_000_000,
            uploaded_bytes: Some(3000),
            catch_up_ns: 1,
            catch_up_cpu_ns: 0,
            catch_up_bytes: Some(1000),
        };
        ReplicateTables {
            dataset: DatasetSpec::fixed(1, 10, 1),
            target: "sqlite:x.db".into(),
            writes: String::new(),
            threads: 1,
            mix: "update=100".into(),
            keys: KeyDistribution::Uniform,
            round_ns: 1_000_000_000,
            warmup: 0,
            rounds_planned: pairs.len() as u32,
            cores: 2,
            litestream: LitestreamInfo {
                version: "0.5".into(),
                replica: "s3://b/p".into(),
                sync_interval_ns: 1,
                config: String::new(),
                start_timeout_ns: 0,
                sync_timeout_ns: 0,
                restore_timeout_ns: 0,
            },
            rounds: pairs
                .iter()
                .map(|&(a, w)| ReplicateRound {
                    first: Arm::Alone,
                    alone: arm(a, 10),
                    with: arm(w, 20),
                    litestream: ls,
                })
                .collect(),
            restore: None,
            notes: Vec::new(),
            failure: None,
            stopping: None,
        }
    }

    #[test]
    fn the_ratio_pairs_rounds_and_the_cost_figures_follow_the_rounds() {
        // Round by round with is half of alone, though the medians of the
        // arms (300 vs 200) would say 2/3: the ratio is paired.
        let t = tables(&[
            (100.0, 50.0),
            (300.0, 150.0),
            (500.0, 250.0),
            (200.0, 400.0),
        ]);
        let r = t.ratio(|r| r.writes_per_s);
        assert!((r.value - 0.5).abs() < 0.3, "{r:?}");
        assert_eq!(t.rate(Arm::Alone).n, 4);
        assert!((t.ratio(|r| r.p99_ns as f64).value - 2.0).abs() < 1e-9);
        assert!((t.litestream_cpu().value - 0.5).abs() < 1e-9);
        // 4000 bytes uploaded for 50 writes of 10 bytes in the first round.
        let up = t.upload_per_written().expect("every round has bytes");
        assert!(up.value > 1.0, "{up:?}");
        let mut silent = t.clone();
        silent.rounds[0].litestream.uploaded_bytes = None;
        assert!(silent.upload_per_written().is_none());
    }

    #[test]
    fn a_restore_passes_only_when_every_blob_matches_and_sqlite_agrees() {
        let mut c = RestoreCheck {
            writes: 1,
            catch_up_ns: 0,
            restore_ns: 0,
            restored_bytes: 0,
            blobs: 3,
            matching: 3,
            first_mismatch: None,
            integrity: "ok".into(),
        };
        assert!(c.passed());
        c.matching = 2;
        assert!(!c.passed());
        c.matching = 3;
        c.integrity = "*** in database main ***".into();
        assert!(!c.passed());
    }

    #[test]
    fn a_failure_keeps_the_rounds_before_and_says_where_in_one_line() {
        let mut t = tables(&[(100.0, 90.0)]);
        t.rounds_planned = 3;
        assert_eq!(t.failures_line(), None);
        t.failure = Some(ReplicateFailure {
            round: "round 2/3".into(),
            phase: "catch-up".into(),
            class: FailureClass::Timeout,
            message: "litestream sync: timeout after 30 s (--sync-timeout)".into(),
            at_ns: 14_200_000_000,
        });
        assert_eq!(
            t.failures_line().unwrap(),
            "suite replicate failed in round 2/3 (catch-up): timeout: litestream sync: timeout after 30 s (--sync-timeout); 1 of 3 rounds measured, no restore; see the result"
        );
        // Under a precision target the plan is its floor and ceiling.
        let mut target = t.clone();
        target.stopping = Some(RoundsRecord {
            rule: RoundsRule::Precision(crate::measure::precision::PrecisionTarget {
                half_width: 0.05,
                min_rounds: 6,
                max_rounds: 30,
                max_seconds: 120.0,
            }),
            cases: Vec::new(),
        });
        assert!(
            target
                .failures_line()
                .unwrap()
                .contains("; 1 of 6-30 rounds measured, no restore"),
            "{:?}",
            target.failures_line()
        );
        assert_eq!(
            t.failure.as_ref().unwrap().describe(),
            "round 2/3, catch-up, at 14.2 s: timeout: litestream sync: timeout after 30 s (--sync-timeout)"
        );
        // Typed both ways; a result from before the field loads without it.
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["failure"]["class"], "timeout", "{json}");
        assert_eq!(serde_json::from_value::<ReplicateTables>(json).unwrap(), t);
        let mut old = serde_json::to_value(tables(&[(1.0, 1.0)])).unwrap();
        let o = old.as_object_mut().unwrap();
        o.remove("failure");
        o.remove("rounds_planned");
        let back: ReplicateTables = serde_json::from_value(old).unwrap();
        assert!(back.failure.is_none() && back.failures_line().is_none());
    }
}
