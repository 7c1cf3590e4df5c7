//! `blobbench reproduce`: every experiment of the five documents (and the
//! aging study, as root) at a scale chosen to fit a time budget, each
//! through its own suite's library entry point, then the ledger of every
//! claim ([`ledger::CLAIMS`]) judged from their results.
//!
//! An experiment that cannot run here (a server not given, not root, a
//! budget too small for its volumes) is recorded as not run with what to
//! pass; one that fails is recorded with its error and the others go on.
//! Only Ctrl-C (or SIGTERM, SIGHUP) stops the whole command.

pub mod ledger;
pub mod scale;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::dataset::{SizeShape, spec_from_options};
use crate::error::{Error, Result};
use crate::http::load::Order;
use crate::progress::Progress;
use crate::result::http::{BLOG_SIZE, BLOG_VARIANCE};
use crate::result::internal_external::STUDY_CACHE_BYTES;
use crate::result::reproduce::{ExperimentRecord, ExperimentStatus, ReproduceTables, VERDICT_RULE};
use crate::result::sweep::{SweepPlan, Workload};
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::target::SqliteLayout;

use super::aging::{AgingOptions, Layout, Place};
use super::fasterthanfs::FasterThanFsOptions;
use super::http::HttpOptions;
use super::internal_external::InternalExternalOptions;
use super::lob::LobOptions;
use super::sweep::SweepOptions;
use crate::result::rounds::RoundsRule;
use ledger::{CLAIMS, Experiment};
use scale::Scale;

/// What `reproduce` runs, checked by the command before any work.
#[derive(Debug, Clone)]
pub struct ReproduceOptions {
    /// The time the whole should fit in; picks the [`Scale`].
    pub budget: Duration,
    /// Folder for every experiment's data; None: a temporary folder each.
    pub dir: Option<PathBuf>,
    /// Keep the datasets afterwards.
    pub keep: bool,
    /// `suite lob`'s systems: sqlite and dir, and the servers given
    /// (sizes and blobs per size are set by the scale).
    pub lob: LobOptions,
    /// The server options not given, each with what to pass
    /// ("--pg URL: PostgreSQL bytea and large objects in suite lob").
    pub servers_missing: Vec<String>,
    /// Where the aging suite's loop-mounted volumes go: Some as root,
    /// None otherwise (the aging study is then not run).
    pub aging_work: Option<PathBuf>,
}

/// A progress that puts the experiment and the budget left before every
/// bar the experiment's suite draws.
struct Prefixed<'a> {
    inner: &'a dyn Progress,
    prefix: String,
}

impl Progress for Prefixed<'_> {
    fn start(&self, label: &str, total: u64) {
        self.inner.start(&format!("{} {label}", self.prefix), total);
    }
    fn set_total(&self, total: u64) {
        self.inner.set_total(total);
    }
    fn message(&self, text: &str) {
        self.inner.message(text);
    }
    fn advance(&self, n: u64) {
        self.inner.advance(n);
    }
    fn expect_remaining(&self, current: f64, after: f64) {
        self.inner.expect_remaining(current, after);
    }
    fn finish(&self) {
        self.inner.finish();
    }
    fn note(&self, text: &str) {
        self.inner.note(text);
    }
}

/// Runs every experiment at the budget's scale, then judges every claim.
pub fn run(options: &ReproduceOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    let scale = Scale::for_budget(options.budget);
    let started = Instant::now();
    // A budget the smallest scale cannot meet is said now; any other
    // holds: once it is spent, no experiment starts.
    let enforced = match Scale::below_the_smallest(options.budget) {
        Some(why) => {
            progress.note(&format!("note: {why}"));
            false
        }
        None => true,
    };
    let mut experiments: Vec<ExperimentRecord> = Vec::new();
    for (i, &e) in Experiment::ALL.iter().enumerate() {
        crate::interrupt::check()?;
        let left = options.budget.saturating_sub(started.elapsed());
        let prefix = format!(
            "[{}/{} {}, {} of the budget left]",
            i + 1,
            Experiment::ALL.len(),
            e.command(),
            humantime::format_duration(Duration::from_secs(left.as_secs()))
        );
        progress.note(&format!("{prefix} scale: {}", scale_words(e, scale)));
        let step = Prefixed {
            inner: progress,
            prefix,
        };
        let before = started.elapsed();
        let outcome = if enforced && left.is_zero() {
            Ok(Outcome::NotRun(format!(
                "the budget ({}) was spent before it could start: give a larger --budget",
                humantime::format_duration(options.budget)
            )))
        } else {
            run_one(e, scale, options, &step)
        };
        let seconds = (started.elapsed() - before).as_secs_f64();
        let (status, reason, result) = match outcome {
            Ok(Outcome::Ran(mut doc)) => {
                // Finished as its own command would finish it.
                doc.environment.finish();
                doc.finished_at = crate::result::now_rfc3339();
                (ExperimentStatus::Ran, String::new(), Some(doc))
            }
            Ok(Outcome::NotRun(why)) => (ExperimentStatus::NotRun, why, None),
            Err(e @ Error::Interrupted(_)) => return Err(e),
            Err(e) => (ExperimentStatus::Failed, e.to_string(), None),
        };
        if status != ExperimentStatus::Ran {
            progress.note(&format!(
                "{}: {}: {reason}",
                e.command(),
                status_word(status)
            ));
        }
        experiments.push(ExperimentRecord {
            experiment: e.command().into(),
            documents: e.documents().into(),
            status,
            reason,
            scale: scale_words(e, scale),
            full_scale: e.full_scale().into(),
            seconds,
            result,
        });
    }
    let ledger = CLAIMS
        .iter()
        .map(|c| {
            let record = experiments
                .iter()
                .find(|x| x.experiment == c.experiment.command());
            let result = record.and_then(|r| r.result.as_deref());
            let why = record.map_or(String::new(), |r| match r.status {
                ExperimentStatus::Failed => format!("{} failed: {}", r.experiment, r.reason),
                _ => r.reason.clone(),
            });
            ledger::evaluate(c, result, &why, &scale_words(c.experiment, scale))
        })
        .collect();
    let mut doc = ResultDocument::new(
        ResultKind::Reproduce,
        crate::store::capture_environment(options.dir.as_deref()),
        Tables::Reproduce(ReproduceTables {
            ledger,
            experiments,
            budget_seconds: options.budget.as_secs_f64(),
            scale: scale.name().into(),
            seconds: started.elapsed().as_secs_f64(),
            verdict_rule: VERDICT_RULE.into(),
            not_given: options.servers_missing.clone(),
        }),
    );
    doc.environment.finish();
    Ok(doc)
}

fn status_word(s: ExperimentStatus) -> &'static str {
    match s {
        ExperimentStatus::Ran => "ran",
        ExperimentStatus::NotRun => "not run",
        ExperimentStatus::Failed => "failed",
    }
}

/// What an experiment gave.
enum Outcome {
    Ran(Box<ResultDocument>),
    NotRun(String),
}

fn run_one(
    e: Experiment,
    scale: Scale,
    options: &ReproduceOptions,
    progress: &dyn Progress,
) -> Result<Outcome> {
    let ran = |doc: Result<ResultDocument>| doc.map(|d| Outcome::Ran(Box::new(d)));
    match e {
        Experiment::FasterThanFs => ran(super::fasterthanfs::run(
            &fasterthanfs(scale, options)?,
            progress,
        )),
        Experiment::InternalExternal => ran(super::internal_external::run(
            &internal_external(scale, options),
            progress,
        )),
        Experiment::Lob => {
            let (sizes, per_size) = scale.lob();
            let lob = LobOptions {
                sizes,
                per_size,
                ..options.lob.clone()
            };
            ran(super::lob::run(&lob, progress))
        }
        Experiment::Http => ran(super::http::run(&http(scale, options)?, progress)),
        Experiment::Sweep => {
            let sweep = sweep(scale, options)?;
            ran(super::sweep::run(&sweep, Vec::new(), progress, &mut |_| {
                Ok(())
            }))
        }
        Experiment::Aging => match (&options.aging_work, aging(scale, options)) {
            (None, _) => Ok(Outcome::NotRun(
                "needs root (loop-mounted volumes): run `sudo blobbench reproduce`".into(),
            )),
            (Some(_), None) => Ok(Outcome::NotRun(
                "its volumes take minutes: give --budget 5m or more".into(),
            )),
            (Some(_), Some(aging)) => ran(super::aging::run(&aging, progress)),
        },
    }
}

/// The scale of one experiment, in words (recorded beside each claim).
pub fn scale_words(e: Experiment, scale: Scale) -> String {
    match e {
        Experiment::FasterThanFs => {
            let (count, rounds) = scale.fasterthanfs();
            format!("{count} blobs of 10k +/- 2k, {rounds} rounds")
        }
        Experiment::InternalExternal => {
            let (sizes, pages, total, rounds) = scale.internal_external();
            format!(
                "{} blob sizes x {} page sizes, {} per case, {rounds} rounds",
                sizes.len(),
                pages.len(),
                crate::units::human_bytes(total)
            )
        }
        Experiment::Lob => {
            let (sizes, per_size) = scale.lob();
            format!("{} sizes, {per_size} blobs per size", sizes.len())
        }
        Experiment::Http => {
            let (count, levels, duration, rounds) = scale.http();
            format!(
                "{count} blobs of 200..4000 KiB, -c {}, {} per level in {rounds} rounds",
                levels
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                humantime::format_duration(duration)
            )
        }
        Experiment::Sweep => {
            let (params, rows, copies, rounds) = scale.sweep();
            format!(
                "{} cases, insert {rows} rows twice and insert + {copies} copies, {rounds} rounds",
                1u64 << params.len()
            )
        }
        Experiment::Aging => match scale.aging() {
            Some((ages, rounds)) => format!(
                "ext4 1 GiB at 50%, 256KiB and 1MiB, sqlite and dir, ages {}, {rounds} read rounds",
                ages.iter()
                    .map(|a| format!("{a}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            None => "not at this budget".into(),
        },
    }
}

fn fasterthanfs(scale: Scale, o: &ReproduceOptions) -> Result<FasterThanFsOptions> {
    let (count, rounds) = scale.fasterthanfs();
    Ok(FasterThanFsOptions {
        dir: o.dir.clone(),
        keep: o.keep,
        spec: spec_from_options(count, 10_000, 2_000, SizeShape::Uniform, 1)?,
        updates: (count / 10).max(1),
        durable_updates: (count / 100).max(1),
        rule: crate::result::rounds::RoundsRule::Fixed { rounds },
        cold: false,
        inject: None,
    })
}

fn internal_external(scale: Scale, o: &ReproduceOptions) -> InternalExternalOptions {
    let (sizes, page_sizes, total, rounds) = scale.internal_external();
    InternalExternalOptions {
        dir: o.dir.clone(),
        keep: o.keep,
        sizes,
        page_sizes,
        total,
        cache_bytes: STUDY_CACHE_BYTES,
        rule: crate::result::rounds::RoundsRule::Fixed { rounds },
        cold: false,
        seed: 1,
        inject: None,
    }
}

fn http(scale: Scale, o: &ReproduceOptions) -> Result<HttpOptions> {
    let (count, levels, duration, rounds) = scale.http();
    Ok(HttpOptions {
        dataset: spec_from_options(count, BLOG_SIZE, BLOG_VARIANCE, SizeShape::Uniform, 1)?,
        levels,
        duration,
        rounds,
        warmup: 1,
        order: Order::Sequential,
        layouts: vec![SqliteLayout::Blog],
        extras: Vec::new(),
        dir: o.dir.clone(),
        keep: o.keep,
        rule: crate::result::rounds::RoundsRule::Fixed {
            rounds: u64::from(rounds),
        },
        inject: None,
    })
}

fn sweep(scale: Scale, o: &ReproduceOptions) -> Result<SweepOptions> {
    let (params, rows, copies, rounds) = scale.sweep();
    let pragmas = super::sweep::params::known_pragmas();
    let params = params
        .iter()
        .map(|p| super::sweep::params::parse_param(p, &pragmas))
        .collect::<Result<Vec<_>>>()?;
    Ok(SweepOptions {
        plan: SweepPlan {
            params,
            workloads: vec![
                Workload::Insert { rows, rounds: 2 },
                Workload::InsertCopy { rows, copies },
            ],
            filters: Vec::new(),
            excludes: Vec::new(),
            seed: 1,
        },
        rule: RoundsRule::Fixed { rounds },
        time_budget: None,
        dir: o.dir.clone(),
        keep: o.keep,
        experiment: None,
        first_disk: None,
    })
}

fn aging(scale: Scale, o: &ReproduceOptions) -> Option<AgingOptions> {
    let (ages, read_rounds) = scale.aging()?;
    Some(AgingOptions {
        place: Place::Loop {
            fs: vec![super::aging::volume::Fs::Ext4],
            size: 1 << 30,
            work: o.aging_work.clone()?,
        },
        fills: vec![0.5],
        sizes: vec![
            crate::result::aging::SizeRange {
                min: 256 << 10,
                max: 256 << 10,
            },
            crate::result::aging::SizeRange {
                min: 1 << 20,
                max: 1 << 20,
            },
        ],
        ages,
        layouts: vec![Layout::Sqlite, Layout::Dir],
        vacuum: false,
        read_rounds,
        page_size: 4096,
        durable: false,
        seed: 1,
    })
}
