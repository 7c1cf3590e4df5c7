//! `blobbench suite concurrency`, the scaling suite: how each layout scales
//! with threads. Throughput and p50/p99 against threads, each point a mixed run
//! (workload/mixed_run/), for read-only, 95/5 and 50/50 mixes on zipf keys,
//! SQLite (WAL and rollback journal) against a folder of files and sqlite-ext
//! (and servers when their URLs are given). Every point runs in rounds, the
//! layouts' order reversed every round, every read checked.

use super::rounds::judge_point;
use crate::measure::estimate::{Estimate, median_estimate_sequential};
use crate::measure::precision::StopReason;
use crate::result::rounds::{CaseRounds, RoundsRecord, RoundsRule};
use std::path::PathBuf;
use std::time::Duration;

use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::progress::{Progress, Silent};
use crate::result::faults::SystemFailure;
use crate::result::mixed_run::KeyDistribution;
use crate::result::scaling::{LayoutInfo, PointRound, ScalingPoint, ScalingTables};
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::store::{self, ReadPath, SessionOptions, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::units::human_bytes;
use crate::workload::mix::Mix;
use crate::workload::mixed_run::{MixedRunPlan, execute};

use super::common::WorkDir;

/// What `suite concurrency` measures, checked by the command first.
#[derive(Debug, Clone)]
pub struct ScalingOptions {
    /// The blobs every layout holds.
    pub dataset: DatasetSpec,
    /// Thread counts, in order.
    pub threads: Vec<usize>,
    /// Operation mixes, in order.
    pub mixes: Vec<Mix>,
    /// How keys are drawn.
    pub keys: KeyDistribution,
    /// Time per point, split into `rounds`.
    pub duration: Duration,
    /// The rounds `duration` is split into: each round lasts
    /// `duration / rounds`.
    pub rounds: u32,
    /// How many measured rounds each point runs: `rounds` of them, or
    /// until a precision target is met.
    pub rule: RoundsRule,
    /// How long a writer waits for a lock.
    pub busy_timeout: Duration,
    /// Servers to load as well: (name, target).
    pub servers: Vec<(String, Target)>,
    /// Folder for the datasets (None: a new temporary folder).
    pub dir: Option<PathBuf>,
    /// Keep the datasets afterwards.
    pub keep: bool,
}

/// A layout the suite loads.
struct Layout {
    name: String,
    target: Target,
    /// The file or folder it made (None for a server's table).
    entry: Option<String>,
}

/// Runs the suite.
pub fn run(options: &ScalingOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    // A server out of reach is refused before any local dataset is made.
    super::common::refuse_unreachable(options.servers.iter().map(|(_, target)| target))?;
    let work = WorkDir::new(
        options.dir.as_deref(),
        options.keep,
        "blobbench-concurrency-",
    )?;
    let layouts = layouts(&work, options);
    let names: Vec<String> = layouts.iter().filter_map(|l| l.entry.clone()).collect();
    let outcome = run_in(options, &work, &layouts, progress);
    work.remove(&names, outcome.is_err());
    work.report_kept(progress);
    outcome
}

/// The local layouts in the work folder, then the servers.
/// The layouts the suite makes on this machine (servers come on top).
pub const LOCAL_LAYOUTS: usize = 4;

fn layouts(work: &WorkDir, options: &ScalingOptions) -> Vec<Layout> {
    let sqlite = |name: &str, file: &str, wal: bool| Layout {
        name: name.into(),
        target: Target::sqlite(
            work.join(file),
            SqliteSettings {
                journal_mode: Some(if wal { "wal" } else { "delete" }.into()),
                synchronous: Some(if wal { "normal" } else { "full" }.into()),
                ..Default::default()
            },
        ),
        entry: Some(file.into()),
    };
    let mut all = vec![
        sqlite("sqlite-wal", "conc-wal.db", true),
        sqlite("sqlite-rollback", "conc-rollback.db", false),
        Layout {
            name: "dir".into(),
            target: Target::dir(work.join("conc.dir")),
            entry: Some("conc.dir".into()),
        },
        Layout {
            name: "sqlite-ext".into(),
            target: Target::sqlite_ext(work.join("conc-ext.db"), SqliteSettings::default()),
            entry: Some("conc-ext.db".into()),
        },
    ];
    debug_assert_eq!(all.len(), LOCAL_LAYOUTS);
    all.extend(options.servers.iter().map(|(name, target)| Layout {
        name: name.clone(),
        target: target.clone(),
        entry: None,
    }));
    all
}

fn run_in(
    options: &ScalingOptions,
    work: &WorkDir,
    layouts: &[Layout],
    progress: &dyn Progress,
) -> Result<ResultDocument> {
    let environment = store::capture_environment(Some(&work.path));
    let spec = &options.dataset;
    let local = layouts.iter().filter(|l| l.entry.is_some()).count() as u64;
    super::common::check_free_space(
        &work.path,
        super::common::layouts_bytes(spec, 2) * local / 2,
        ResultKind::Scaling.command(),
    )?;
    progress.note(&format!(
        "blobbench suite concurrency: {} blobs of {}, {} in all, per layout, in {}",
        spec.count,
        human_bytes(spec.size),
        human_bytes(spec.total_bytes()),
        work.path.display()
    ));
    let mut failed: Vec<Option<SystemFailure>> = vec![None; layouts.len()];
    let mut infos = Vec::new();
    for (l, slot) in layouts.iter().zip(&mut failed) {
        infos.push(match store::create_dataset(&l.target, spec, progress) {
            Ok((s, _)) => LayoutInfo {
                name: l.name.clone(),
                target: l.target.to_string(),
                writes: s.describe_writes(&session()),
                version: s.info().version,
            },
            // A server that cannot be reached (or refuses the login) before
            // anything was measured is the user's to fix: refused at once
            // (exit 2), not found out after every other layout has run.
            Err(e) if e.exit_code() == 2 => return Err(e),
            Err(e) => {
                *slot = Some(layout_failed(l, "creating its dataset", e, progress)?);
                LayoutInfo {
                    name: l.name.clone(),
                    target: l.target.to_string(),
                    writes: "not known: its dataset could not be made".into(),
                    version: None,
                }
            }
        });
    }
    let (points, stopping) = measure(options, layouts, &mut failed, progress)?;
    let tables = ScalingTables {
        dataset: spec.clone(),
        keys: options.keys,
        duration_ns: options.duration.as_nanos() as u64,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        layouts: infos,
        mixes: options.mixes.iter().map(Mix::describe).collect(),
        threads: options.threads.clone(),
        points,
        failed: failed.into_iter().flatten().collect(),
        round_ns: Some(options.duration.as_nanos() as u64 / u64::from(options.rounds.max(1))),
        stopping: Some(stopping),
    };
    Ok(ResultDocument::new(
        ResultKind::Scaling,
        environment,
        Tables::Scaling(tables),
    ))
}

/// How every layout is read and written: each operation its own
/// transaction, files replaced by rename (no torn reads). The replicate
/// suite's writers use the same.
pub(crate) fn session() -> SessionOptions {
    SessionOptions {
        read_path: ReadPath::Sql,
        per_op_transaction: true,
        write_style: WriteStyle::TempRename,
        fsync: false,
    }
}

/// What a failure of `layout` during `during` means: the layout is
/// recorded as failed and left out from then on, every other layout goes
/// on (Ok); an interruption ends the suite.
fn layout_failed(
    layout: &Layout,
    during: &str,
    e: Error,
    progress: &dyn Progress,
) -> Result<SystemFailure> {
    if matches!(e, Error::Interrupted(_)) {
        return Err(e);
    }
    let f = SystemFailure::new(&layout.name, during, &e);
    progress.note(&format!(
        "{} failed ({during}): {}; going on without it",
        f.system,
        f.reason()
    ));
    Ok(f)
}

/// Every point, round by round, the layouts' order reversed every round.
/// A layout that fails is recorded in `failed` and skipped from then on
/// (a dead server is not asked again at every point); the point it failed
/// in is left out, its earlier points are kept.
fn measure(
    options: &ScalingOptions,
    layouts: &[Layout],
    failed: &mut [Option<SystemFailure>],
    progress: &dyn Progress,
) -> Result<(Vec<ScalingPoint>, RoundsRecord)> {
    let each = options.duration / options.rounds.max(1);
    let per_point = options.rule.floor() * layouts.len() as u64;
    let point_count = (options.mixes.len() * options.threads.len()) as u64;
    progress.start("measuring", point_count * per_point);
    let mut points = Vec::new();
    let mut cases = Vec::new();
    let mut turn = 0usize;
    let mut done = 0u64;
    let mut point_index = 0u64;
    for mix in &options.mixes {
        for &threads in &options.threads {
            point_index += 1;
            let mut here: Vec<ScalingPoint> = layouts
                .iter()
                .map(|l| ScalingPoint {
                    layout: l.name.clone(),
                    mix: mix.describe(),
                    threads,
                    rounds: Vec::new(),
                    stopped_on_width: matches!(options.rule, RoundsRule::Precision(_)),
                })
                .collect();
            let since = std::time::Instant::now();
            let mut measured = 0u64;
            let (reason, widest) = loop {
                let mut order: Vec<usize> = (0..layouts.len()).collect();
                if turn % 2 == 1 {
                    order.reverse();
                }
                turn += 1;
                measured += 1;
                for i in order {
                    progress.advance(1);
                    done += 1;
                    if failed[i].is_some() {
                        continue;
                    }
                    let during = format!(
                        "threads={threads} mix {} {}",
                        mix.describe(),
                        round_label(measured, options.rule)
                    );
                    progress.message(&format!("{} {during}", layouts[i].name));
                    crate::pause::at("concurrency-round");
                    crate::interrupt::check()?;
                    // A round a signal cut short is no figure: the suite stops.
                    let round = one_round(options, &layouts[i], mix, threads, each)
                        .and_then(|r| crate::interrupt::check().map(|()| r));
                    match round {
                        Ok(r) => here[i].rounds.push(r),
                        Err(e) => {
                            failed[i] = Some(layout_failed(&layouts[i], &during, e, progress)?)
                        }
                    }
                }
                // Each live layout's rate, as the table prints it.
                let rates: Vec<Estimate> = here
                    .iter()
                    .zip(failed.iter())
                    .filter(|(_, f)| f.is_none())
                    .map(|(p, _)| {
                        let v: Vec<f64> = p.rounds.iter().map(|r| r.ops_per_s).collect();
                        median_estimate_sequential(&v)
                    })
                    .collect();
                let elapsed = since.elapsed().as_secs_f64();
                let (stop, projected, widest) =
                    judge_point(options.rule, measured, &rates, elapsed);
                if rates.is_empty() {
                    break (StopReason::Failed, None);
                }
                if let Some(reason) = stop {
                    break (reason, widest);
                }
                let later = (point_count - point_index) * per_point;
                progress.set_total(
                    done + projected.saturating_sub(measured) * layouts.len() as u64 + later,
                );
            };
            for (p, f) in here.iter().zip(failed.iter()) {
                cases.push(CaseRounds {
                    case: format!("{} {} threads={threads}", p.layout, p.mix),
                    group: format!("{} threads={threads}", p.mix),
                    rounds: p.rounds.len() as u64,
                    stopped: if f.is_some() {
                        StopReason::Failed
                    } else {
                        reason
                    },
                    half_width: if f.is_some() { None } else { widest },
                });
            }
            let whole = here.into_iter().zip(failed.iter());
            points.extend(whole.filter(|(_, f)| f.is_none()).map(|(p, _)| p));
        }
    }
    progress.finish();
    Ok((
        points,
        RoundsRecord {
            rule: options.rule,
            cases,
        },
    ))
}

/// `round 3/5` or `round 7 (of 6-30)`: where a point is, for the progress line.
fn round_label(k: u64, rule: RoundsRule) -> String {
    match rule {
        RoundsRule::Fixed { rounds } => format!("round {k}/{rounds}"),
        RoundsRule::Precision(t) => format!("round {k} (of {}-{})", t.min_rounds, t.max_rounds),
    }
}

/// One timed round of `threads` workers running `mix` on `target`, every
/// read checked, each operation its own transaction ([`session`]): how
/// this suite and the replicate suite run their rounds.
pub(crate) fn round_plan(
    target: &Target,
    (threads, mix): (usize, &Mix),
    keys: KeyDistribution,
    duration: Duration,
    busy_timeout: Duration,
) -> MixedRunPlan {
    MixedRunPlan {
        target_text: target.to_string(),
        target: target.clone(),
        threads,
        writers: 0,
        mix: mix.clone(),
        keys,
        batch: 1,
        duration: Some(duration),
        count: None,
        rate: None,
        busy_timeout,
        session: session(),
        verify: true,
        seed: 1,
        workload: None,
        max_errors: None,
    }
}

/// One round of one point: a mixed run of `each`.
fn one_round(
    options: &ScalingOptions,
    layout: &Layout,
    mix: &Mix,
    threads: usize,
    each: Duration,
) -> Result<PointRound> {
    let plan = round_plan(
        &layout.target,
        (threads, mix),
        options.keys,
        each,
        options.busy_timeout,
    );
    let t = execute(&plan, &Silent)?.without_failures()?;
    let all = crate::measure::latency::Latencies::merged(
        t.kinds
            .iter()
            .filter(|k| k.kind.is_some())
            .filter_map(|k| k.histogram.decode().ok())
            .collect::<Vec<_>>()
            .iter(),
    );
    let o = t.outcomes();
    if o.wrong() > 0 {
        return Err(Error::Verify(format!(
            "{} with {} threads ({}): {} torn or stale read(s)",
            layout.name,
            threads,
            mix.describe(),
            o.wrong()
        )));
    }
    let summary = all.summary();
    Ok(PointRound {
        ops_per_s: t.ops_per_s(),
        p50_ns: summary.p50_ns,
        p99_ns: summary.p99_ns,
        busy: o.busy,
        wrong: o.wrong(),
        verified: t.verified,
    })
}
