//! Groups of options several commands share, each defined once and
//! flattened into its commands. A command whose wording differs (what its
//! folder holds, its result file's default name) says so with `mut_arg`
//! on its own struct, so every --help stays as specific as before.

use std::path::PathBuf;

use clap::Args;

/// `--dir` and `--keep`: where a command that makes its own data puts it,
/// and whether it stays afterwards.
#[derive(Args, Debug)]
pub struct WorkFolderArgs {
    /// Folder for the datasets, on the disk you want measured (created if missing, when its parent
    /// exists); the datasets are removed afterwards unless --keep [default: a new temporary folder]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Keep the datasets after the run (in --dir, or in the temporary folder, which is then named)
    #[arg(long)]
    pub keep: bool,
}

/// `--json` and `--report`: the result file every suite writes (its
/// default name set by each command) and the HTML report it may add.
#[derive(Args, Debug)]
pub struct ResultFileArgs {
    /// Where to write the JSON result
    #[arg(long, value_name = "FILE")]
    pub json: PathBuf,
    /// Also write an HTML report with charts to FILE
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// The result's tables as Markdown or CSV
    #[command(flatten)]
    pub export: TableFileArgs,
}

/// `--markdown` and `--csv`: the result's tables written straight from
/// the measuring command (as hyperfine's --export-markdown), the same files
/// `blobbench report RESULT --markdown FILE --csv DIR` writes.
#[derive(Args, Debug, Default)]
pub struct TableFileArgs {
    /// Also write the result's tables as Markdown to FILE (- for standard output)
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub markdown: Option<PathBuf>,
    /// Also write each of the result's tables as a CSV file into DIR (new, empty, or one blobbench wrote)
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub csv: Option<PathBuf>,
}

/// `--pg`, `--mysql` and `--s3`: the servers `suite lob` measures beside
/// sqlite and dir (`reproduce` passes them on to it).
#[derive(Args, Debug)]
pub struct LobServerArgs {
    /// PostgreSQL URL, e.g. postgres://USER@HOST:PORT/DB (tables lob_bytea, lob_lo)
    #[arg(long, value_name = "URL", value_parser = super::values::postgres_url)]
    pub pg: Option<String>,
    /// MariaDB/MySQL URL, e.g. mysql://USER:PASS@HOST:PORT/DB (tables lob_innodb, ...)
    #[arg(long, value_name = "URL", value_parser = super::values::mysql_url)]
    pub mysql: Option<String>,
    /// S3 bucket, e.g. s3://BUCKET/PREFIX?endpoint=http://127.0.0.1:8333 (objects under PREFIX/lob;
    /// credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE)
    #[arg(long, value_name = "URL", value_parser = super::values::s3_url)]
    pub s3: Option<String>,
}

/// `--rounds`, `--precision`, `--min-rounds`, `--max-rounds`, `--max-time`:
/// how many measured rounds a suite runs, after one discarded warm-up
/// round. Each command sets its default with [`RoundsArgs::rule`].
#[derive(Args, Debug)]
pub struct RoundsArgs {
    /// Exactly N measured rounds of every case, after one discarded warm-up round (instead of
    /// stopping at a precision target)
    #[arg(long, value_name = "N", help_heading = "Rounds", value_parser = crate::units::number_in::<u64>(1, crate::units::MAX_ROUNDS), conflicts_with_all = ["precision", "min_rounds", "max_rounds", "max_time"])]
    pub rounds: Option<u64>,
    /// Run rounds until every ratio the table prints has an interval within +/-P% of it (each
    /// group of alternating cases stops on its own, on the interval's width only, never on its
    /// verdict; the intervals printed keep 95% after stopping)
    #[arg(long, value_name = "P%", help_heading = "Rounds", value_parser = super::values::precision)]
    pub precision: Option<f64>,
    /// Rounds every case runs before the precision is looked at (6 or more) [default: 6, or the
    /// fewest at which compare can judge all the command's cases together, if more]
    #[arg(long, value_name = "N", help_heading = "Rounds", value_parser = crate::units::number_in::<u64>(crate::result::rounds::MIN_FLOOR, crate::units::MAX_ROUNDS))]
    pub min_rounds: Option<u64>,
    /// Rounds after which a group stops, precise or not [default: 30]
    #[arg(long, value_name = "N", help_heading = "Rounds", value_parser = crate::units::number_in::<u64>(crate::result::rounds::MIN_FLOOR, crate::units::MAX_ROUNDS))]
    pub max_rounds: Option<u64>,
    /// Time the measured rounds may take: past it no group starts a round beyond its
    /// --min-rounds (the command's default is in its help)
    #[arg(long, value_name = "DURATION", help_heading = "Rounds", value_parser = crate::units::duration_in(std::time::Duration::from_secs(1), std::time::Duration::from_secs(7 * 86_400)))]
    pub max_time: Option<humantime::Duration>,
}

/// `--precision`, `--min-rounds`, `--max-rounds`, `--max-time` for a
/// command whose `--rounds` also sets the length of a round (a time split
/// into rounds: suite http, suite concurrency): with a precision option the
/// rounds keep their length and their number follows the target.
#[derive(Args, Debug)]
pub struct PrecisionArgs {
    /// Run each point's rounds until every figure it prints has an interval within +/-P% of it
    /// (on the interval's width only, never its verdict; the intervals printed keep 95% after
    /// stopping) [default: --rounds rounds, no target; 5% when --min-rounds, --max-rounds or
    /// --max-time is given]
    #[arg(long, value_name = "P%", help_heading = "Rounds", value_parser = super::values::precision)]
    pub precision: Option<f64>,
    /// Rounds every point runs before the precision is looked at (6 or more) [default: 6, or
    /// the fewest at which compare can judge the point's systems together, if more]
    #[arg(long, value_name = "N", help_heading = "Rounds", value_parser = crate::units::number_in::<u64>(crate::result::rounds::MIN_FLOOR, crate::units::MAX_ROUNDS))]
    pub min_rounds: Option<u64>,
    /// Rounds after which a point stops, precise or not [default: 30]
    #[arg(long, value_name = "N", help_heading = "Rounds", value_parser = crate::units::number_in::<u64>(crate::result::rounds::MIN_FLOOR, crate::units::MAX_ROUNDS))]
    pub max_rounds: Option<u64>,
    /// Time a point's measured rounds may take: past it no round starts beyond --min-rounds
    /// [default: 2m per point]
    #[arg(long, value_name = "DURATION", help_heading = "Rounds", value_parser = crate::units::duration_in(std::time::Duration::from_secs(1), std::time::Duration::from_secs(7 * 86_400)))]
    pub max_time: Option<humantime::Duration>,
}

/// The target a [`PrecisionArgs`] command aims at when only a floor, a
/// ceiling or a time is given: +/-5% within 2 minutes per point.
const POINT_PRECISION: f64 = 0.05;
const POINT_MAX_TIME: std::time::Duration = std::time::Duration::from_secs(120);

impl PrecisionArgs {
    /// `rounds` fixed rounds, or the precision target the options ask for
    /// (its floor at least `judged_floor`, as [`RoundsArgs::rule`]).
    pub fn rule(
        &self,
        rounds: u64,
        judged_floor: u64,
    ) -> crate::error::Result<crate::result::rounds::RoundsRule> {
        self.rule_within(rounds, judged_floor, POINT_MAX_TIME)
    }

    /// As [`PrecisionArgs::rule`], with `max_time` the time budget when
    /// --max-time is not given (a sweep's rounds are long).
    pub fn rule_within(
        &self,
        rounds: u64,
        judged_floor: u64,
        max_time: std::time::Duration,
    ) -> crate::error::Result<crate::result::rounds::RoundsRule> {
        RoundsArgs {
            rounds: None,
            precision: self.precision,
            min_rounds: self.min_rounds,
            max_rounds: self.max_rounds,
            max_time: self.max_time,
        }
        .rule(
            DefaultRounds::Fixed {
                rounds,
                precision: POINT_PRECISION,
                max_time,
            },
            judged_floor,
        )
    }
}

/// A command's rounds when the user sets none.
#[derive(Debug, Clone, Copy)]
pub enum DefaultRounds {
    /// A fixed count, unless a precision option is given (then a target
    /// of `precision` with the rest of the precision defaults).
    Fixed {
        /// The rounds.
        rounds: u64,
        /// The target when only --min-rounds, --max-rounds or --max-time is given.
        precision: f64,
        /// The time budget of a precision target.
        max_time: std::time::Duration,
    },
    /// A precision target.
    Precision {
        /// +/- this share of the figure.
        precision: f64,
        /// The time budget.
        max_time: std::time::Duration,
    },
}

/// The floor and ceiling of rounds when none are given.
const DEFAULT_MIN_ROUNDS: u64 = crate::result::rounds::MIN_FLOOR;
const DEFAULT_MAX_ROUNDS: u64 = 30;

impl RoundsArgs {
    /// The rule the options ask for, `default` where they say nothing;
    /// a precision target's floor is `judged_floor` (the fewest rounds
    /// compare can judge the command's cases with) or 6, whichever is
    /// more, unless --min-rounds says otherwise. --min-rounds above
    /// --max-rounds is refused.
    pub fn rule(
        &self,
        default: DefaultRounds,
        judged_floor: u64,
    ) -> crate::error::Result<crate::result::rounds::RoundsRule> {
        use crate::result::rounds::{PrecisionTarget, RoundsRule};
        if let Some(rounds) = self.rounds {
            return Ok(RoundsRule::Fixed { rounds });
        }
        let asked = self.precision.is_some()
            || self.min_rounds.is_some()
            || self.max_rounds.is_some()
            || self.max_time.is_some();
        let (precision, max_time) = match default {
            DefaultRounds::Fixed { rounds, .. } if !asked => {
                return Ok(RoundsRule::Fixed { rounds });
            }
            DefaultRounds::Fixed {
                precision,
                max_time,
                ..
            }
            | DefaultRounds::Precision {
                precision,
                max_time,
            } => (precision, max_time),
        };
        // A default floor gives way to a --max-rounds below it (the
        // command then says compare could not judge so few); only a
        // --min-rounds the user gave is refused above it.
        let default_floor = DEFAULT_MIN_ROUNDS.max(judged_floor);
        let min_rounds = match (self.min_rounds, self.max_rounds) {
            (Some(n), _) => n,
            (None, Some(max)) => default_floor.min(max),
            (None, None) => default_floor,
        };
        let max_rounds = self
            .max_rounds
            .unwrap_or(DEFAULT_MAX_ROUNDS.max(min_rounds));
        if min_rounds > max_rounds {
            return Err(crate::error::Error::usage(format!(
                "--min-rounds {min_rounds} is above --max-rounds {max_rounds}: raise --max-rounds or lower --min-rounds"
            )));
        }
        Ok(RoundsRule::Precision(PrecisionTarget {
            half_width: self.precision.unwrap_or(precision),
            min_rounds,
            max_rounds,
            max_seconds: self.max_time.map_or(max_time, |d| *d).as_secs_f64(),
        }))
    }
}
