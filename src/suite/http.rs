//! `blobbench suite http`: the blog experiment "Serving Binary Files from
//! SQLite" in one command. One dataset (by default the blog's 2000 blobs of
//! 200..4000 KiB) in a database and in a folder, each served by its own
//! `blobbench serve` process, both loaded at each concurrency level (the
//! order alternating between levels), side by side with the ratio; any
//! external server (e.g. nginx over the exported files) joins the table
//! with `--extra NAME=URLFILE`.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::http::load::{LevelResult, LoadPlan, Order, Url, parse_url, run_level};
use crate::measure::cache;
use crate::progress::{Progress, Silent};
use crate::result::http::{HttpSystem, HttpTables, describe_order, describe_sizes};
use crate::result::{ResultDocument, Tables};
use crate::store::{self, Access, FileLayout};
use crate::target::Target;
use crate::units::human_bytes;

use super::common::{WorkDir, sqlite};

/// What `suite http` measures, checked by the command before any work.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The blobs both local servers serve.
    pub dataset: DatasetSpec,
    /// Concurrency levels, in the order they run.
    pub levels: Vec<usize>,
    /// How long each system is loaded at each level.
    pub duration: Duration,
    /// Which URL each connection asks for next: the list in order (siege's
    /// `-f` without `-i`, the blog's run) or a random one.
    pub order: Order,
    /// Servers started by the user over the same blobs, loaded as well.
    pub extras: Vec<ExtraServer>,
    /// Folder for the datasets (None: a new temporary folder).
    pub dir: Option<PathBuf>,
    /// Keep the datasets after the run.
    pub keep: bool,
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
    urls: Vec<Url>,
    /// Local files to warm before each load run.
    files: Vec<PathBuf>,
    results: Vec<LevelResult>,
}

/// Runs the suite: builds the dataset in a work folder, serves it from a
/// database and from a folder, loads every system at every level and
/// returns the result (nothing printed, nothing written but the datasets).
pub fn run(options: &HttpOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    let work = WorkDir::new(options.dir.as_deref(), options.keep, "blobbench-http-")?;
    let db = work.join("http.db");
    let dir = work.join("http.dir");
    let outcome = run_in(options, &work, &db, &dir, progress);
    work.remove(
        &["http.db".to_string(), "http.dir".to_string()],
        outcome.is_err(),
    );
    work.report_kept(progress);
    outcome
}

fn run_in(
    options: &HttpOptions,
    work: &WorkDir,
    db: &Path,
    dir: &Path,
    progress: &dyn Progress,
) -> Result<ResultDocument> {
    let environment = store::capture_environment(Some(&work.path));
    let spec = &options.dataset;
    super::common::check_free_space(
        &work.path,
        super::common::layouts_bytes(spec, 1),
        "suite http",
    )?;
    progress.note(&format!(
        "blobbench suite http: {} blobs of {}, {} in all, in {}, {}",
        spec.count,
        describe_sizes(spec),
        human_bytes(spec.total_bytes()),
        work.path.display(),
        describe_order(options.order)
    ));
    prepare_datasets(spec, db, dir, progress)?;
    let servers = [
        ServeProcess::start(&format!("sqlite:{}", db.display()))?,
        ServeProcess::start(&format!("dir:{}", dir.display()))?,
    ];
    let mut systems = local_systems(spec, db, dir, &servers)?;
    systems.extend(options.extras.iter().map(|e| System {
        name: e.name.clone(),
        urls: e.urls.clone(),
        files: Vec::new(),
        results: Vec::new(),
    }));
    load_all(options, &mut systems, progress)?;
    drop(servers);
    let tables = HttpTables {
        http: systems
            .into_iter()
            .map(|s| HttpSystem {
                system: s.name,
                levels: s.results,
            })
            .collect(),
        dataset: spec.clone(),
        duration_ns: options.duration.as_nanos() as u64,
        order: Some(options.order),
    };
    Ok(ResultDocument::new(
        "suite http",
        environment,
        Tables::Http(tables),
    ))
}

/// The dataset in a database at `db`, exported to one file per blob in `dir`.
fn prepare_datasets(
    spec: &DatasetSpec,
    db: &Path,
    dir: &Path,
    progress: &dyn Progress,
) -> Result<()> {
    let (store, _) = store::create_dataset(&sqlite(db, |_| {}), spec, progress)?;
    drop(store);
    store::export(db, dir, FileLayout::Flat, progress)?;
    Ok(())
}

/// The database's and the folder's servers, with every key's URL and the
/// files behind them (to warm the cache before each run).
fn local_systems(
    spec: &DatasetSpec,
    db: &Path,
    dir: &Path,
    servers: &[ServeProcess; 2],
) -> Result<Vec<System>> {
    let files_of =
        |t: &Target| -> Result<Vec<PathBuf>> { store::open(t, Access::ReadOnly)?.files() };
    let db_target = sqlite(db, |_| {});
    // The folder as `blobbench serve` is given it.
    let dir_target = Target::parse(&format!("dir:{}", dir.display()))?;
    let urls_for = |addr: &str| -> Result<Vec<Url>> {
        (spec.first_key..=spec.last_key())
            .map(|k| parse_url(&format!("http://{addr}/blobs/{k}")))
            .collect()
    };
    Ok(vec![
        System {
            name: "sqlite".into(),
            urls: urls_for(&servers[0].addr)?,
            files: files_of(&db_target)?,
            results: Vec::new(),
        },
        System {
            name: "dir".into(),
            urls: urls_for(&servers[1].addr)?,
            files: files_of(&dir_target)?,
            results: Vec::new(),
        },
    ])
}

/// Loads every system at every level, alternating which system goes first
/// from one level to the next, the page cache warmed before each run.
fn load_all(options: &HttpOptions, systems: &mut [System], progress: &dyn Progress) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the runtime", Path::new("load"), e))?;
    progress.start("loading", (options.levels.len() * systems.len()) as u64);
    for (li, &c) in options.levels.iter().enumerate() {
        let mut order: Vec<usize> = (0..systems.len()).collect();
        if li % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let s = &mut systems[i];
            progress.message(&format!("-c {c}: {}", s.name));
            cache::warm(&s.files)?;
            let plan = LoadPlan {
                urls: s.urls.clone(),
                order: options.order,
                concurrency: c,
                duration: Some(options.duration),
                requests: None,
                rate: None,
                timeout: Duration::from_secs(30),
                verify: None,
            };
            // The level's own progress would overwrite this stage's.
            s.results.push(runtime.block_on(run_level(plan, &Silent)));
            progress.advance(1);
        }
    }
    progress.finish();
    Ok(())
}
