//! `blobbench suite lob`: the 2008 comparative benchmark of large objects in
//! relational databases (Jacobs University TR 14), on this machine.
//!
//! For each blob size (1K .. 10M) and each system that can be reached:
//! `per_size` different random blobs are inserted one by one (each its own
//! statement and transaction, timed at the database call only; the blobs
//! are generated before), then the connection is closed, reopened, and each
//! blob is read back whole by id, timed the same way. Every sample is kept:
//! the result lists the spikes (samples over 10x their median) and redoes
//! the paper's Figure 22: the time to read 1 GB extrapolated from each
//! size's mean read time, and each system's best blob size.

use crate::dataset::{DatasetSpec, Manifest};
use crate::error::{Error, Result};
use crate::measure::stats::summarize;
use crate::progress::Progress;
use crate::result::lob::{BestSize, LobTables, ReadGb, Samples, Skipped, Spike, StoreEntry};
use crate::result::{ResultDocument, Tables};
use crate::store::{self, Access, SessionOptions, StoreInfo};
use crate::target::Target;
use crate::workload::timer::OpTimer;

use super::common::{WorkDir, remove_entry};

/// What `suite lob` measures, checked and typed before anything runs.
#[derive(Debug, Clone)]
pub struct LobOptions {
    /// Blob sizes in bytes, in the order to measure and list them.
    pub sizes: Vec<u64>,
    /// Different random blobs per size (at least 1).
    pub per_size: u64,
    /// The systems kept in the work folder (sqlite, dir), in order.
    pub local: Vec<Local>,
    /// The server systems (postgres, mariadb engines), reachable or not.
    pub servers: Vec<Server>,
    /// Folder for the sqlite and dir systems; None = a temporary folder.
    pub dir: Option<std::path::PathBuf>,
    /// Keep the folder afterwards.
    pub keep: bool,
}

/// A system the suite keeps in its work folder: the caller says which
/// backend, the suite says where.
#[derive(Debug, Clone)]
pub struct Local {
    /// One of [`SYSTEMS`](crate::result::lob::SYSTEMS).
    pub name: String,
    /// The entry in the work folder (a database file, a folder of files).
    pub entry: String,
    /// The target at that entry's path.
    pub target: fn(std::path::PathBuf) -> Target,
}

/// A server system: its name and its target, or why it is skipped.
#[derive(Debug, Clone)]
pub struct Server {
    /// One of [`SYSTEMS`](crate::result::lob::SYSTEMS).
    pub name: String,
    /// The target to measure, or the reason it is not measured.
    pub reach: Reach,
}

/// Whether a system is measured.
#[derive(Debug, Clone)]
pub enum Reach {
    /// Measured at this target.
    Target(Target),
    /// Not measured, for this reason (e.g. "no --pg URL given").
    Skipped(String),
}

/// The server systems for the URLs given (`--pg`, `--mysql`): each
/// postgres mode and mariadb engine in its own table. A malformed URL is
/// the user's to fix: the error comes before anything runs.
pub fn servers(pg: Option<&str>, mysql: Option<&str>) -> Result<Vec<Server>> {
    let mut out = Vec::new();
    for mode in ["bytea", "lo"] {
        let ours = format!("mode={mode}&table=lob_{mode}");
        out.push(server(&format!("postgres {mode}"), pg, "--pg", &ours)?);
    }
    for engine in ["innodb", "myisam", "aria", "archive"] {
        let ours = format!("engine={engine}&table=lob_{engine}");
        out.push(server(
            &format!("mariadb {engine}"),
            mysql,
            "--mysql",
            &ours,
        )?);
    }
    Ok(out)
}

fn server(name: &str, url: Option<&str>, option: &str, ours: &str) -> Result<Server> {
    let reach = match url {
        None => Reach::Skipped(format!("no {option} URL given")),
        Some(url) => {
            let sep = if url.contains('?') { '&' } else { '?' };
            Reach::Target(Target::parse(&format!("{url}{sep}{ours}"))?)
        }
    };
    Ok(Server {
        name: name.into(),
        reach,
    })
}

/// One system under test: a name and its target, or why it was skipped.
struct System {
    name: String,
    target: Option<Target>,
    skipped: Option<String>,
    /// What the store reported about itself (versions, settings).
    info: Option<StoreInfo>,
    /// Sizes this system could not take, and why.
    notes: Vec<String>,
}

impl System {
    fn new(name: &str, target: Option<Target>, skipped: Option<String>) -> System {
        System {
            name: name.into(),
            target,
            skipped,
            info: None,
            notes: Vec::new(),
        }
    }
}

/// Runs the suite: every reachable system at every size; returns the result.
pub fn run(options: &LobOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    let work = WorkDir::new(options.dir.as_deref(), options.keep, "blobbench-lob-")?;
    let entries: Vec<std::path::PathBuf> =
        options.local.iter().map(|l| work.join(&l.entry)).collect();
    let mut systems: Vec<System> = options
        .local
        .iter()
        .zip(&entries)
        .map(|(l, path)| System::new(&l.name, Some((l.target)(path.clone())), None))
        .collect();
    for s in &options.servers {
        systems.push(match &s.reach {
            Reach::Target(t) => System::new(&s.name, Some(t.clone()), None),
            Reach::Skipped(why) => System::new(&s.name, None, Some(why.clone())),
        });
    }
    progress.note(&format!(
        "blobbench suite lob: {} sizes x {} blobs per size, in {}",
        options.sizes.len(),
        options.per_size,
        work.path.display()
    ));
    let outcome = measure(options, &mut systems, progress);
    for path in &entries {
        remove_entry(path);
    }
    work.report_kept(progress);
    let samples = outcome?;
    let tables = tables(&options.sizes, options.per_size, &systems, samples);
    Ok(ResultDocument::new(
        "suite lob",
        store::capture_environment(Some(&work.path)),
        Tables::Lob(tables),
    ))
}

/// Measures every size on every system that has a target.
fn measure(
    options: &LobOptions,
    systems: &mut [System],
    progress: &dyn Progress,
) -> Result<Vec<Samples>> {
    let sizes = &options.sizes;
    let runnable = systems.iter().filter(|s| s.target.is_some()).count() as u64;
    progress.start("measuring", runnable * sizes.len() as u64);
    let mut all = Vec::new();
    for system in systems.iter_mut() {
        let Some(target) = system.target.clone() else {
            continue;
        };
        for (i, &size) in sizes.iter().enumerate() {
            progress.message(&format!("{} {size} bytes", system.name));
            match measure_one(&target, size, options.per_size, i as u64 + 1) {
                Ok((write_ns, read_ns, info)) => {
                    system.info.get_or_insert(info);
                    all.push(Samples {
                        system: system.name.clone(),
                        size,
                        write_ns,
                        read_ns,
                    })
                }
                // An unreachable server or a missing engine skips the system, with the reason.
                Err(e @ (Error::Connect { .. } | Error::Usage(_))) if i == 0 => {
                    system.skipped = Some(e.to_string());
                    progress.advance(sizes.len() as u64);
                    break;
                }
                // A size the system refuses (max_allowed_packet): noted, the rest goes on.
                Err(e @ Error::Usage(_)) => system.notes.push(format!("{size} bytes: {e}")),
                Err(e) => {
                    progress.finish();
                    return Err(e);
                }
            }
            progress.advance(1);
        }
    }
    progress.finish();
    Ok(all)
}

/// Inserts `count` blobs of `size` bytes one by one, reconnects, reads them
/// back by id; returns the per-call times.
fn measure_one(
    target: &Target,
    size: u64,
    count: u64,
    seed: u64,
) -> Result<(Vec<u64>, Vec<u64>, StoreInfo)> {
    let spec = DatasetSpec::fixed(count, size, seed);
    // Different random content for every blob, generated before any timing.
    let blobs: Vec<Vec<u8>> = (1..=count)
        .map(|k| {
            let mut b = Vec::new();
            spec.fill(k, 0, &mut b);
            b
        })
        .collect();
    let (write_ns, info) = write_all(target, &spec, &blobs)?;
    // Reads in a separate phase, on a new connection.
    let read_ns = read_all(target, &spec)?;
    Ok((write_ns, read_ns, info))
}

/// Each blob INSERTed as its own statement and transaction, each timed.
fn write_all(
    target: &Target,
    spec: &DatasetSpec,
    blobs: &[Vec<u8>],
) -> Result<(Vec<u64>, StoreInfo)> {
    let mut store = store::create(target, &Manifest::new(spec.clone()))?;
    let info = store.info();
    // No begin(): each INSERT is its own statement and transaction.
    let mut session = store.session(SessionOptions {
        per_op_transaction: true,
        ..Default::default()
    })?;
    let mut timer = OpTimer::with_capacity(blobs.len());
    for (k, blob) in (1..).zip(blobs) {
        timer.time(|| session.insert(k, blob))?;
    }
    Ok((timer.nanos(), info))
}

/// Each blob read back whole by id into the application's buffer, each
/// timed; verified outside the timed call.
fn read_all(target: &Target, spec: &DatasetSpec) -> Result<Vec<u64>> {
    let mut buf: Vec<u8> = Vec::with_capacity(spec.size as usize);
    let mut scratch = Vec::new();
    let mut store = store::open(&target.for_inspection(), Access::ReadOnly)?;
    let mut session = store.session(SessionOptions {
        per_op_transaction: true,
        ..Default::default()
    })?;
    let mut timer = OpTimer::with_capacity(spec.count as usize);
    for k in 1..=spec.count {
        // Into the application's buffer, as SELECT ... INTO :buffer does.
        timer.time(|| {
            session.read(k, &mut |d| {
                buf.clear();
                buf.extend_from_slice(d);
            })
        })?;
        spec.verify(k, &buf, Some(0), &mut scratch)?;
    }
    Ok(timer.nanos())
}

fn median(v: &[u64]) -> f64 {
    summarize(&v.iter().map(|&x| x as f64).collect::<Vec<_>>()).median
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len().max(1) as f64
}

/// The result's tables: the samples, their spikes, Figure 22 and the best
/// size of each measured system.
fn tables(sizes: &[u64], per_size: u64, systems: &[System], samples: Vec<Samples>) -> LobTables {
    let measured: Vec<&System> = systems.iter().filter(|s| s.skipped.is_none()).collect();
    // Figure 22: time to read 1 GB in blobs of each size, from the mean.
    let mut read_1gb_seconds = Vec::new();
    for &size in sizes {
        for s in &measured {
            if let Some(x) = samples
                .iter()
                .find(|x| x.system == s.name && x.size == size)
            {
                read_1gb_seconds.push(ReadGb {
                    system: s.name.clone(),
                    size,
                    seconds: mean(&x.read_ns) * (1e9 / size as f64) / 1e9,
                });
            }
        }
    }
    let best_size = measured
        .iter()
        .filter_map(|s| {
            read_1gb_seconds
                .iter()
                .filter(|g| g.system == s.name)
                .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
                .map(|g| BestSize {
                    system: s.name.clone(),
                    size: g.size,
                    seconds_per_gb: g.seconds,
                })
        })
        .collect();
    LobTables {
        spikes: spikes(&samples),
        read_1gb_seconds,
        best_size,
        skipped: systems
            .iter()
            .filter_map(|s| {
                s.skipped.as_ref().map(|r| Skipped {
                    system: s.name.clone(),
                    reason: r.clone(),
                })
            })
            .collect(),
        stores: measured
            .iter()
            .map(|s| StoreEntry {
                system: s.name.clone(),
                store: s.info.clone(),
                notes: s.notes.clone(),
            })
            .collect(),
        per_size,
        lob: samples,
    }
}

/// Samples over 10x the median of their size: the paper kept them in its
/// averages (675 ms among 0.26 ms writes), so they are listed, not dropped.
fn spikes(samples: &[Samples]) -> Vec<Spike> {
    let mut spikes = Vec::new();
    for s in samples {
        for (phase, v) in [("write", &s.write_ns), ("read", &s.read_ns)] {
            let m = median(v);
            for (i, &x) in v.iter().enumerate() {
                if x as f64 > 10.0 * m {
                    spikes.push(Spike {
                        system: s.system.clone(),
                        size: s.size,
                        phase: phase.into(),
                        sample: i as u64 + 1,
                        ns: x,
                        median_ns: m,
                    });
                }
            }
        }
    }
    spikes
}
