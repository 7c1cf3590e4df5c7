//! `blobbench suite http`: the blog experiment "Serving Binary Files from
//! SQLite" in one command. One dataset (by default the blog's 2000 blobs of
//! 200..4000 KiB) in a database (in the blog's table, kvtest's, or one of
//! each) and in a folder, each served by its own `blobbench serve`
//! process, all loaded at each concurrency level (the order alternating
//! between levels), side by side with the ratio; any external server (e.g.
//! nginx over the exported files) joins the table with
//! `--extra NAME=URLFILE`.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::http::load::{LevelOutcome, LoadPlan, Order, Url, measure_level, parse_url};
use crate::measure::cache;
use crate::measure::estimate::{Estimate, paired_ratio_sequential};
use crate::measure::precision::StopReason;
use crate::progress::{Progress, Silent};
use crate::result::http::{
    HttpSystem, HttpTables, InjectedRequests, RoundFigures, describe_order, describe_sizes,
};
use crate::result::rounds::{CaseRounds, RoundsRecord, RoundsRule};
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::store::inject::Injection;
use crate::store::{self, Access, FileLayout};
use crate::target::{SqliteLayout, Target};
use crate::units::human_bytes;

use super::common::{WorkDir, sqlite};
use super::rounds::judge_point;

/// What `suite http` measures, checked by the command before any work.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The blobs both local servers serve.
    pub dataset: DatasetSpec,
    /// Concurrency levels, in the order they run.
    pub levels: Vec<usize>,
    /// How long each system is loaded at each level, in all: split into
    /// `rounds` rounds of equal length.
    pub duration: Duration,
    /// The rounds `duration` is split into: each round lasts
    /// `duration / rounds`.
    pub rounds: u32,
    /// How many measured rounds each level runs: `rounds` of them, or
    /// until a precision target is met (the systems' order alternating
    /// from round to round either way).
    pub rule: RoundsRule,
    /// Rounds of the same length run first at each level and discarded.
    pub warmup: u32,
    /// Which URL each connection asks for next: the list in order (siege's
    /// `-f` without `-i`, the blog's run) or a random one.
    pub order: Order,
    /// The SQLite tables served, one database and server each, in this
    /// order (the first is the ratios' denominator).
    pub layouts: Vec<SqliteLayout>,
    /// Servers started by the user over the same blobs, loaded as well.
    pub extras: Vec<ExtraServer>,
    /// Folder for the datasets (None: a new temporary folder).
    pub dir: Option<PathBuf>,
    /// Keep the datasets after the run.
    pub keep: bool,
    /// A known extra wait in every request of one system (SYSTEM, the
    /// injection): a testing aid for the calibration bench.
    pub inject: Option<(String, Injection)>,
}

/// A server the suite does not start (e.g. nginx over the exported files):
/// its name in the table and the URLs to load it with.
#[derive(Debug, Clone)]
pub struct ExtraServer {
    /// The column name.
    pub name: String,
    /// Every URL to request (at least one).
    pub urls: Vec<Url>,
}

/// A `blobbench serve` child process, stopped when dropped.
struct ServeProcess {
    child: Child,
    addr: String,
}

impl ServeProcess {
    fn start(target: &str) -> Result<ServeProcess> {
        let exe = std::env::current_exe()
            .map_err(|e| Error::io("cannot find", std::path::Path::new("blobbench"), e))?;
        let mut child = Command::new(exe)
            .args(["serve", target, "--listen", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| Error::io("cannot start", std::path::Path::new("blobbench serve"), e))?;
        let mut line = String::new();
        let stderr = child.stderr.take().expect("piped");
        let mut reader = std::io::BufReader::new(stderr);
        let _ = reader.read_line(&mut line);
        let Some(addr) = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.split('/').next())
        else {
            let _ = child.kill();
            return Err(Error::usage(format!(
                "blobbench serve {target} did not start: {}",
                line.trim()
            )));
        };
        let addr = addr.to_string();
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in reader.lines() {});
        Ok(ServeProcess { child, addr })
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// One server under test and what it measured so far.
struct System {
    name: String,
    /// The table a database system serves from, in words.
    table: Option<String>,
    urls: Vec<Url>,
    /// Local files to warm before each load run.
    files: Vec<PathBuf>,
    /// Per level: the measured rounds merged, and each round's figures.
    results: Vec<(LevelOutcome, Vec<RoundFigures>)>,
    /// The wait injected into its requests, if any, and what the measured
    /// rounds delivered.
    injected: Option<InjectedRequests>,
    /// Whether its levels' rounds stopped on their intervals' width.
    stopped_on_width: bool,
}

/// Runs the suite: builds the dataset in a work folder, serves it from a
/// database and from a folder, loads every system at every level and
/// returns the result (nothing printed, nothing written but the datasets).
pub fn run(options: &HttpOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    check_injection(options)?;
    let work = WorkDir::new(options.dir.as_deref(), options.keep, "blobbench-http-")?;
    let mut names: Vec<String> = options.layouts.iter().map(|l| db_name(*l)).collect();
    let dbs: Vec<(SqliteLayout, PathBuf)> = options
        .layouts
        .iter()
        .zip(&names)
        .map(|(l, n)| (*l, work.join(n)))
        .collect();
    let dir = work.join("http.dir");
    let outcome = run_in(options, &work, &dbs, &dir, progress);
    names.push("http.dir".to_string());
    work.remove(&names, outcome.is_err());
    work.report_kept(progress);
    outcome
}

/// The systems the suite loads, by name, in table order.
fn system_names(options: &HttpOptions) -> Vec<String> {
    let mut names: Vec<String> = options.layouts.iter().map(|l| system_name(*l)).collect();
    names.push("dir".into());
    names.extend(options.extras.iter().map(|e| e.name.clone()));
    names
}

/// Checks `--inject`'s system before any work; an unknown one is refused
/// with every system's name.
pub fn check_injection(options: &HttpOptions) -> Result<()> {
    let Some((name, injection)) = &options.inject else {
        return Ok(());
    };
    let names = system_names(options);
    if names.contains(name) {
        return Ok(());
    }
    Err(Error::usage(format!(
        "--inject {name}={injection}: suite http has no system \"{name}\"; use one of: {}",
        names.join(", ")
    )))
}

/// The database file of `layout` in the work folder.
fn db_name(layout: SqliteLayout) -> String {
    format!("http-{}.db", layout.name())
}

/// The system name of the database in `layout`: `sqlite-blog`, `sqlite-kv`.
fn system_name(layout: SqliteLayout) -> String {
    format!("sqlite-{}", layout.name())
}

fn run_in(
    options: &HttpOptions,
    work: &WorkDir,
    dbs: &[(SqliteLayout, PathBuf)],
    dir: &Path,
    progress: &dyn Progress,
) -> Result<ResultDocument> {
    let environment = store::capture_environment(Some(&work.path));
    let spec = &options.dataset;
    // layouts_bytes counts one database; each further one takes as much.
    let more_dbs = super::common::layouts_bytes(spec, 0) * (dbs.len() as u64).saturating_sub(1);
    super::common::check_free_space(
        &work.path,
        super::common::layouts_bytes(spec, 1) + more_dbs,
        ResultKind::Http.command(),
    )?;
    progress.note(&format!(
        "blobbench suite http: {} blobs of {}, {} in all, in {}, {}",
        spec.count,
        describe_sizes(spec),
        human_bytes(spec.total_bytes()),
        work.path.display(),
        describe_order(options.order)
    ));
    for (layout, _) in dbs {
        progress.note(&format!("{}: {}", system_name(*layout), layout.describe()));
    }
    prepare_datasets(spec, dbs, dir, progress)?;
    let mut systems = Vec::new();
    let mut servers = Vec::new();
    for (layout, db) in dbs {
        let target = sqlite_target(*layout, db);
        let server = ServeProcess::start(&target)?;
        systems.push(local_system(
            spec,
            system_name(*layout),
            Some(layout.describe().to_string()),
            &Target::parse(&target)?,
            &server,
        )?);
        servers.push(server);
    }
    let dir_target = format!("dir:{}", dir.display());
    let server = ServeProcess::start(&dir_target)?;
    systems.push(local_system(
        spec,
        "dir".into(),
        None,
        &Target::parse(&dir_target)?,
        &server,
    )?);
    servers.push(server);
    systems.extend(options.extras.iter().map(|e| System {
        name: e.name.clone(),
        table: None,
        urls: e.urls.clone(),
        files: Vec::new(),
        results: Vec::new(),
        injected: None,
        stopped_on_width: false,
    }));
    let stopping = load_all(options, &mut systems, progress)?;
    drop(servers);
    let tables = HttpTables {
        http: systems
            .into_iter()
            .map(|s| {
                let (levels, rounds) = s
                    .results
                    .into_iter()
                    .map(|(merged, rounds)| (merged.summary(), rounds))
                    .unzip();
                HttpSystem {
                    system: s.name,
                    table: s.table,
                    levels,
                    rounds,
                    injected: s.injected,
                    stopped_on_width: s.stopped_on_width,
                }
            })
            .collect(),
        dataset: spec.clone(),
        duration_ns: options.duration.as_nanos() as u64,
        order: Some(options.order),
        warmup_rounds: Some(options.warmup),
        round_ns: Some(options.duration.as_nanos() as u64 / u64::from(options.rounds.max(1))),
        stopping: Some(stopping),
    };
    Ok(ResultDocument::new(
        ResultKind::Http,
        environment,
        Tables::Http(tables),
    ))
}

/// The target string of the database in `layout` at `db`.
fn sqlite_target(layout: SqliteLayout, db: &Path) -> String {
    format!("sqlite:{}?layout={}", db.display(), layout.name())
}

/// The dataset in a database per layout (the same blobs in each), the
/// first exported to one file per blob in `dir`.
fn prepare_datasets(
    spec: &DatasetSpec,
    dbs: &[(SqliteLayout, PathBuf)],
    dir: &Path,
    progress: &dyn Progress,
) -> Result<()> {
    for (layout, db) in dbs {
        let target = sqlite(db, |s| s.layout = Some(*layout));
        let (store, _) = store::create_dataset(&target, spec, progress)?;
        drop(store);
    }
    if let Some((_, db)) = dbs.first() {
        store::export(db, dir, FileLayout::Flat, progress)?;
    }
    Ok(())
}

/// A local server's system: every key's URL and the files behind it (to
/// warm the cache before each run).
fn local_system(
    spec: &DatasetSpec,
    name: String,
    table: Option<String>,
    target: &Target,
    server: &ServeProcess,
) -> Result<System> {
    let urls = (spec.first_key..=spec.last_key())
        .map(|k| parse_url(&format!("http://{}/blobs/{k}", server.addr)))
        .collect::<Result<Vec<Url>>>()?;
    Ok(System {
        name,
        table,
        urls,
        files: store::open(target, Access::ReadOnly)?.files()?,
        results: Vec::new(),
        injected: None,
        stopped_on_width: false,
    })
}

/// Loads every system at every level in rounds (warm-up rounds first,
/// discarded), the systems' order reversed from one round to the next, the
/// page cache warmed before each run; each level's rounds stop as the rule
/// says. Returns where each level stopped.
fn load_all(
    options: &HttpOptions,
    systems: &mut [System],
    progress: &dyn Progress,
) -> Result<RoundsRecord> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the runtime", Path::new("load"), e))?;
    let per_level = u64::from(options.warmup) + options.rule.floor();
    let n = systems.len() as u64;
    progress.start("loading", options.levels.len() as u64 * n * per_level);
    let round_time = options.duration / options.rounds.max(1);
    let mut cases = Vec::new();
    let mut turn = 0usize;
    let mut done = 0u64;
    for (l, &c) in options.levels.iter().enumerate() {
        let mut merged: Vec<Option<(LevelOutcome, Vec<RoundFigures>)>> =
            systems.iter().map(|_| None).collect();
        // Where each system's walk of its URL list is: a round goes on
        // from where the last left off, as one siege run would.
        let mut walked = vec![0u64; systems.len()];
        let mut measuring_since = None;
        let mut round = 0u32;
        let (reason, widest) = loop {
            let warmup = round < options.warmup;
            if !warmup && measuring_since.is_none() {
                measuring_since = Some(std::time::Instant::now());
            }
            let mut order: Vec<usize> = (0..systems.len()).collect();
            if turn % 2 == 1 {
                order.reverse();
            }
            turn += 1;
            for i in order {
                crate::interrupt::check()?;
                let s = &systems[i];
                progress.message(&format!(
                    "-c {c}: {} {}",
                    s.name,
                    round_label(round, options.warmup, options.rule)
                ));
                cache::warm(&s.files)?;
                let mut urls = s.urls.clone();
                let at = (walked[i] % urls.len() as u64) as usize;
                urls.rotate_left(at);
                let plan = LoadPlan {
                    urls,
                    order: options.order,
                    concurrency: c,
                    duration: Some(round_time),
                    requests: None,
                    rate: None,
                    timeout: Duration::from_secs(30),
                    verify: None,
                    max_errors: None,
                    inject: injection_for(options, &s.name),
                };
                // The level's own progress would overwrite this stage's.
                let outcome = runtime.block_on(measure_level(plan, &Silent));
                crate::interrupt::check()?;
                walked[i] += outcome.requests();
                progress.advance(1);
                done += 1;
                if !warmup {
                    add_injected(&mut systems[i].injected, &outcome);
                    add_round(&mut merged[i], outcome);
                }
            }
            round += 1;
            if warmup {
                continue;
            }
            let measured = u64::from(round - options.warmup);
            let elapsed = measuring_since.map_or(0.0, |t| t.elapsed().as_secs_f64());
            let (stop, projected, widest) = judge(options.rule, measured, &merged, elapsed);
            if let Some(reason) = stop {
                break (reason, widest);
            }
            let later_levels = (options.levels.len() - l - 1) as u64;
            progress.set_total(
                done + (projected.saturating_sub(measured) + later_levels * per_level) * n,
            );
        };
        let on_width = matches!(options.rule, RoundsRule::Precision(_));
        for (s, m) in systems.iter_mut().zip(merged) {
            let rounds = m.as_ref().map_or(0, |(_, r)| r.len() as u64);
            cases.push(CaseRounds {
                case: format!("{} c={c}", s.name),
                group: format!("c={c}"),
                rounds,
                stopped: reason,
                half_width: widest,
            });
            s.results.extend(m);
            s.stopped_on_width |= on_width;
        }
    }
    progress.finish();
    Ok(RoundsRecord {
        rule: options.rule,
        cases,
    })
}

/// After `measured` rounds of a level (see [`judge_point`]): its figures
/// are each system's requests/s over the first's, paired round by round.
fn judge(
    rule: RoundsRule,
    measured: u64,
    merged: &[Option<(LevelOutcome, Vec<RoundFigures>)>],
    elapsed: f64,
) -> (Option<StopReason>, u64, Option<f64>) {
    let rates = |m: &Option<(LevelOutcome, Vec<RoundFigures>)>| -> Vec<f64> {
        m.as_ref()
            .map(|(_, r)| r.iter().map(|f| f.requests_per_s).collect())
            .unwrap_or_default()
    };
    let base = merged.first().map(rates).unwrap_or_default();
    let ratios: Vec<Estimate> = merged
        .iter()
        .skip(1)
        .map(|m| paired_ratio_sequential(&rates(m), &base))
        .collect();
    judge_point(rule, measured, &ratios, elapsed)
}

/// The injection `--inject` names for `system`, if it names that one.
fn injection_for(options: &HttpOptions, system: &str) -> Option<Injection> {
    options
        .inject
        .as_ref()
        .filter(|(name, _)| name == system)
        .map(|(_, i)| *i)
}

/// Adds what a measured round's injection delivered to its system's sum.
fn add_injected(sum: &mut Option<InjectedRequests>, outcome: &LevelOutcome) {
    let (Some(inject), Some(d)) = (outcome.plan_injection(), outcome.injected()) else {
        return;
    };
    let s = sum.get_or_insert(InjectedRequests {
        inject,
        own_ns: 0,
        extra_ns: 0,
    });
    s.own_ns += d.own_ns;
    s.extra_ns += d.extra_ns;
}

/// `warm-up 1/1`, `round 3/5`, `round 7 (of 6-30)`: where the suite is,
/// for the progress line.
fn round_label(round: u32, warmup: u32, rule: RoundsRule) -> String {
    if round < warmup {
        return format!("warm-up {}/{warmup}", round + 1);
    }
    let k = round - warmup + 1;
    match rule {
        RoundsRule::Fixed { rounds } => format!("round {k}/{rounds}"),
        RoundsRule::Precision(t) => format!("round {k} (of {}-{})", t.min_rounds, t.max_rounds),
    }
}

/// Adds a measured round to a level's merged outcome and its rounds.
fn add_round(level: &mut Option<(LevelOutcome, Vec<RoundFigures>)>, outcome: LevelOutcome) {
    let figures = RoundFigures {
        requests_per_s: outcome.requests_per_s(),
        mean_ns: outcome.mean_ns(),
    };
    match level {
        Some((merged, rounds)) => {
            merged.merge(outcome);
            rounds.push(figures);
        }
        None => *level = Some((outcome, vec![figures])),
    }
}
