//! One series of `suite aging`: a layout made on a fresh volume, filled to
//! its occupancy, then aged pass by pass, with a point measured at age 0
//! and after every pass.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::dataset::{DatasetSpec, Manifest, SizeDistribution};
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::result::aging::{AgePoint, AgingSeries, SizeRange, WritePass};
use crate::store::{self, Reclaim, SessionOptions, Store};
use crate::target::{SqliteSettings, Target};
use crate::workload::timer::OpTimer;

use super::volume::Volume;
use super::{AgingOptions, Case, interrupt, measure};

/// How a series keeps its blobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Inside one SQLite database (rollback journal).
    Sqlite,
    /// The same, made with auto_vacuum=incremental and
    /// `PRAGMA incremental_vacuum` at the end of every pass.
    SqliteIncremental,
    /// Files named in an SQLite database.
    SqliteExt,
    /// One file per blob in a folder.
    Dir,
}

impl Layout {
    /// Every layout, in the result's order.
    pub const ALL: [Layout; 4] = [
        Layout::Sqlite,
        Layout::SqliteIncremental,
        Layout::SqliteExt,
        Layout::Dir,
    ];

    /// Its name in results and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Sqlite => "sqlite",
            Layout::SqliteIncremental => "sqlite-incremental",
            Layout::SqliteExt => "sqlite-ext",
            Layout::Dir => "dir",
        }
    }

    /// The layout named `text`; a usage error naming the choices otherwise.
    pub fn parse(text: &str) -> Result<Layout> {
        Layout::ALL
            .into_iter()
            .find(|l| l.name() == text.trim())
            .ok_or_else(|| {
                Error::usage(format!(
                    "--layouts {text}: unknown layout; choose from {}",
                    Layout::ALL.map(Layout::name).join(", ")
                ))
            })
    }

    /// The target at the volume's root.
    fn target(self, root: &std::path::Path, page_size: u32, durable: bool) -> Target {
        let settings = SqliteSettings {
            page_size: Some(page_size),
            journal_mode: Some("delete".into()),
            synchronous: Some(if durable { "full" } else { "off" }.into()),
            auto_vacuum: (self == Layout::SqliteIncremental).then(|| "incremental".into()),
            ..SqliteSettings::default()
        };
        match self {
            Layout::Sqlite | Layout::SqliteIncremental => {
                Target::sqlite(root.join("aging.db"), settings)
            }
            Layout::SqliteExt => Target::sqlite_ext(root.join("aging.db"), settings),
            Layout::Dir => Target::dir(root.join("blobs")),
        }
    }

    /// Whether a replacement frees the old blob before writing the new one
    /// (a database row's UPDATE: the old pages are free for the new) or
    /// after (a file's safe write: the new file, then the old one goes).
    fn frees_first(self) -> bool {
        matches!(self, Layout::Sqlite | Layout::SqliteIncremental)
    }
}

/// What the writes were, in words, for the result.
pub fn describe_writes(durable: bool) -> String {
    if durable {
        "every write durable before it returns: SQLite journal_mode=delete, synchronous=full; files fsynced (temporary file, fsync, rename, fsync of the folder)".into()
    } else {
        "SQLite journal_mode=delete, synchronous=off; files written without fsync; the volume synced (syncfs) at the end of the fill and of every pass, inside the pass's time".into()
    }
}

/// The blobs of a series: keys from 1, sizes drawn per key from the range,
/// enough keys for every replacement the ages can need.
fn spec(sizes: SizeRange, volume_bytes: u64, max_age: f64, seed: u64) -> DatasetSpec {
    let fill_blobs = volume_bytes / sizes.min.max(1) + 2;
    let count = (fill_blobs as f64 * (max_age + 2.0)).ceil() as u64 + 16;
    let half = (sizes.max - sizes.min) / 2;
    DatasetSpec {
        first_key: 1,
        count,
        size: sizes.min + half,
        distribution: if half == 0 {
            SizeDistribution::Fixed
        } else {
            SizeDistribution::Uniform { variance: half }
        },
        seed,
    }
}

/// The state of a series as it is written.
struct Live {
    /// Keys present, in no order (a replacement swaps one out).
    keys: Vec<u64>,
    /// The next key never used.
    next: u64,
    /// Blob bytes present.
    bytes: u64,
    /// Blob bytes written by replacements since the fill.
    replaced: u64,
}

/// A series under way: its store open on its volume, its blobs, and its
/// points so far. [`Running::start`] makes and fills it; then, age by age,
/// [`Running::age_to`] writes and [`Running::survey`] with the read rounds
/// the caller interleaves with the other layouts' ([`super::measure`])
/// make each point.
pub struct Running {
    /// The layout.
    pub layout: Layout,
    store: Box<dyn Store>,
    target: Target,
    spec: DatasetSpec,
    live: Live,
    stored_after_fill: u64,
    rng: Xoshiro256PlusPlus,
    /// The series as measured so far.
    pub series: AgingSeries,
    /// The state about to be measured, when it has not been: its planned
    /// age, the age reached and the pass that brought the store there.
    pending: Option<(f64, f64, WritePass)>,
}

impl Running {
    /// Makes the layout's store on `volume` and fills it to the case's
    /// occupancy; the state after the fill is the first point to measure.
    pub fn start(
        options: &AgingOptions,
        case: &Case,
        volume: &Volume,
        fs: &str,
        progress: &dyn Progress,
    ) -> Result<Running> {
        let total = volume.usage()?.total;
        let max_age = options.ages.last().copied().unwrap_or(0.0);
        let spec = spec(case.sizes, total, max_age, options.seed);
        let target = case
            .layout
            .target(volume.root(), options.page_size, options.durable);
        let manifest = Manifest::new(spec.clone()).started();
        let mut store = store::create(&target, &manifest)?;
        let settings = settings_words(&*store);
        let mut live = Live {
            keys: Vec::new(),
            next: 1,
            bytes: 0,
            replaced: 0,
        };
        let (fill_pass, fill_reached) = fill(
            &mut *store,
            &spec,
            case,
            options,
            volume,
            &mut live,
            progress,
        )?;
        let stored_after_fill = live.bytes.max(1);
        Ok(Running {
            layout: case.layout,
            store,
            target,
            spec,
            live,
            stored_after_fill,
            rng: Xoshiro256PlusPlus::seed_from_u64(options.seed ^ 0x5eed),
            series: AgingSeries {
                fs: fs.into(),
                layout: case.layout.name().into(),
                sizes: case.sizes,
                fill_target: case.fill,
                fill_reached,
                settings,
                points: Vec::new(),
                stopped: None,
            },
            pending: Some((0.0, 0.0, fill_pass)),
        })
    }

    /// Whether the series goes on (it has not stopped early).
    pub fn going(&self) -> bool {
        self.series.stopped.is_none()
    }

    /// Whether a state is waiting to be measured.
    pub fn pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Ages the store to `age`: replaces blobs until the bytes written by
    /// replacements since the fill reach `age` times the bytes stored
    /// then. A pass that fails (the volume full) stops the series with the
    /// reason; an interruption is an error.
    pub fn age_to(
        &mut self,
        age: f64,
        options: &AgingOptions,
        volume: &Volume,
        progress: &dyn Progress,
    ) -> Result<()> {
        let fs = &self.series.fs;
        let goal = (age * self.stored_after_fill as f64) as u64;
        progress.start(
            &format!("{} on {fs}: age to {age}", self.layout.name()),
            goal.saturating_sub(self.live.replaced),
        );
        let pass = age_pass(
            &mut *self.store,
            &self.spec,
            self.layout,
            options,
            volume,
            &mut self.live,
            goal,
            &mut self.rng,
            progress,
        );
        progress.finish();
        match pass {
            Ok(p) => {
                let reached = self.live.replaced as f64 / self.stored_after_fill as f64;
                self.pending = Some((age, reached, p));
            }
            Err(e @ Error::Interrupted(_)) => return Err(e),
            Err(e) => self.series.stopped = Some(format!("aging to {age} stopped: {e}")),
        }
        Ok(())
    }

    /// The waiting state's fragments and space, as a point of its age
    /// with its writes; the read rounds are added by
    /// [`Running::push_point`]. None when nothing waits.
    pub fn survey(&mut self, volume: &Volume) -> Result<Option<AgePoint>> {
        let Some((target_age, age, writes)) = self.pending.take() else {
            return Ok(None);
        };
        let point = measure::survey(&mut self.store, &self.spec, volume, &self.live.keys)?;
        Ok(Some(AgePoint {
            target_age,
            age,
            writes,
            ..point
        }))
    }

    /// The keys of each cold read round of the state now.
    pub fn read_plan(&self, options: &AgingOptions) -> Vec<Vec<u64>> {
        measure::read_plan(&self.live.keys, options)
    }

    /// One cold read round of `keys`: MB/s, blobs read, how the cache was
    /// emptied.
    pub fn read_round(
        &self,
        volume: &Volume,
        keys: &[u64],
        buf: &mut Vec<u8>,
    ) -> Result<(f64, u64, String)> {
        measure::read_round(&self.target, &self.spec, volume, keys, buf)
    }

    /// Adds a measured point to the series.
    pub fn push_point(&mut self, point: AgePoint) {
        self.series.points.push(point);
    }

    /// For the sqlite layout when asked (`options.vacuum`) and the series
    /// went the whole way: a full VACUUM after the last age and a point
    /// measured after it, alone (no other layout has such a point; it is
    /// shown apart, not ranked). A VACUUM without room on the volume ends
    /// the series with the reason.
    pub fn vacuum_point(&mut self, volume: &Volume, options: &AgingOptions) -> Result<()> {
        if !(options.vacuum && self.layout == Layout::Sqlite && self.going()) {
            return Ok(());
        }
        // VACUUM's rollback journal holds every page of the database: on a
        // volume with less free space than that it cannot run, and an
        // application in that place would keep the journal in memory for it.
        let (synced, ns) = OpTimer::once(|| {
            let done = match self.store.reclaim(Reclaim::Full) {
                Err(e) if e.to_string().contains("no room") => {
                    self.store.reclaim(Reclaim::FullJournalInMemory)
                }
                other => other,
            };
            volume.sync().map(|()| done)
        });
        let done = synced?;
        let done = match done {
            Ok(done) => done,
            Err(e) => {
                self.series.stopped = Some(format!("VACUUM after the last age failed: {e}"));
                return Ok(());
            }
        };
        let mut point = measure::survey(&mut self.store, &self.spec, volume, &self.live.keys)?;
        let mut buf = Vec::new();
        for keys in self.read_plan(options) {
            let (rate, read, _) = self.read_round(volume, &keys, &mut buf)?;
            point.read_mb_s.push(rate);
            point.blobs_read += read;
        }
        let last_age = self.series.points.last().map_or(0.0, |p| p.target_age);
        self.series.points.push(AgePoint {
            target_age: last_age,
            age: self.live.replaced as f64 / self.stored_after_fill as f64,
            vacuumed: true,
            note: done,
            writes: WritePass {
                blobs: 0,
                bytes: point.space.store_bytes,
                ns,
                sync_ns: ns,
            },
            ..point
        });
        Ok(())
    }
}

/// The store's settings read back, in words.
fn settings_words(store: &dyn Store) -> String {
    let info = store.info();
    let words: Vec<String> = ["page_size", "journal_mode", "synchronous", "auto_vacuum"]
        .iter()
        .filter_map(|k| info.settings.get(*k).map(|v| format!("{k}={}", plain(v))))
        .collect();
    if words.is_empty() {
        format!("{}: one file per blob", info.kind)
    } else {
        format!("{}: {}", info.kind, words.join(", "))
    }
}

fn plain(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// Session options of the series' writes.
fn write_session(options: &AgingOptions) -> SessionOptions {
    SessionOptions {
        per_op_transaction: false,
        fsync: options.durable,
        ..SessionOptions::default()
    }
}

/// Inserts blobs, each in its own transaction, until the volume is as full
/// as asked: the next blob would overshoot the target by more than half
/// its size. Between syncs the volume's use is estimated as its use at
/// the last sync plus the blob bytes written since (statvfs lags behind
/// buffered writes on btrfs); near the target the volume is synced and
/// asked again. Space a filesystem set aside past the end of a growing
/// file that stays open (xfs's speculative preallocation, given back at
/// close or under pressure) is not counted as used. Returns the pass
/// (every sync inside its time) and the occupancy reached.
#[allow(clippy::too_many_arguments)]
fn fill(
    store: &mut dyn Store,
    spec: &DatasetSpec,
    case: &Case,
    options: &AgingOptions,
    volume: &Volume,
    live: &mut Live,
    progress: &dyn Progress,
) -> Result<(WritePass, f64)> {
    let open_files = store.files()?;
    let usage = volume.usage()?;
    let goal = (case.fill * usage.total as f64) as u64;
    progress.start(
        &format!("{}: fill to {:.0}%", case.layout.name(), case.fill * 100.0),
        goal.saturating_sub(usage.used),
    );
    let mut pass = WritePass::default();
    let mut writes = OpTimer::with_capacity(0);
    let mut buf = Vec::new();
    let mut session = store.session(write_session(options))?;
    let mut synced = usage.used;
    let mut since_sync = 0u64;
    loop {
        interrupt::check()?;
        let key = live.next;
        let size = spec.size_of(key) as u64;
        if synced + since_sync + size / 2 >= goal {
            // Close enough by the estimate: ask the volume after a sync.
            pass.sync_ns += timed_sync(volume)?;
            synced = data_used(volume, &open_files)?;
            since_sync = 0;
            if synced + size / 2 >= goal {
                break;
            }
        }
        spec.fill(key, 0, &mut buf);
        writes.time(|| {
            session.begin_write()?;
            session.insert(key, &buf)?;
            session.commit()
        })?;
        pass.blobs += 1;
        pass.bytes += size;
        live.keys.push(key);
        live.next += 1;
        live.bytes += size;
        since_sync += size;
        progress.advance(size);
    }
    drop(session);
    pass.sync_ns += timed_sync(volume)?;
    pass.ns = writes.total_ns() + pass.sync_ns;
    let total = volume.usage()?.total.max(1);
    let reached = data_used(volume, &open_files)? as f64 / total as f64;
    progress.finish();
    Ok((pass, reached))
}

/// The volume's used bytes without the blocks allocated past the end of
/// `files` (a filesystem's speculative preallocation for a file that
/// keeps growing): what the data holds.
fn data_used(volume: &Volume, files: &[std::path::PathBuf]) -> Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let past_end: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| (m.blocks() * 512).saturating_sub(m.size().next_multiple_of(4096)))
        .sum();
    Ok(volume.usage()?.used.saturating_sub(past_end))
}

/// Syncs the volume; returns how long it took, ns.
fn timed_sync(volume: &Volume) -> Result<u64> {
    let (synced, ns) = OpTimer::once(|| volume.sync());
    synced.map(|()| ns)
}

/// Replaces random blobs by new ones (a new key, so a new size) until the
/// bytes written by replacements reach `goal`. Only the store's calls and
/// the final reclaim and sync are timed, not making the new blob's bytes.
#[allow(clippy::too_many_arguments)]
fn age_pass(
    store: &mut dyn Store,
    spec: &DatasetSpec,
    layout: Layout,
    options: &AgingOptions,
    volume: &Volume,
    live: &mut Live,
    goal: u64,
    rng: &mut Xoshiro256PlusPlus,
    progress: &dyn Progress,
) -> Result<WritePass> {
    let mut pass = WritePass::default();
    let mut writes = OpTimer::with_capacity(0);
    let mut buf = Vec::new();
    let mut session = store.session(write_session(options))?;
    while live.replaced < goal && !live.keys.is_empty() {
        interrupt::check()?;
        let slot = rng.random_range(0..live.keys.len());
        let old = live.keys[slot];
        let new = live.next;
        spec.fill(new, 0, &mut buf);
        writes.time(|| {
            session.begin_write()?;
            if layout.frees_first() {
                session.delete(old)?;
                session.insert(new, &buf)?;
            } else {
                session.insert(new, &buf)?;
                session.delete(old)?;
            }
            session.commit()
        })?;
        let size = buf.len() as u64;
        live.keys[slot] = new;
        live.next += 1;
        live.bytes = live.bytes + size - spec.size_of(old) as u64;
        live.replaced += size;
        pass.blobs += 1;
        pass.bytes += size;
        progress.advance(size);
        crate::pause::at("aging-replaced");
    }
    drop(session);
    let (reclaimed, sync_ns) = OpTimer::once(|| {
        if layout == Layout::SqliteIncremental {
            store.reclaim(Reclaim::Incremental)?;
        }
        volume.sync()
    });
    reclaimed?;
    pass.sync_ns = sync_ns;
    pass.ns = writes.total_ns() + pass.sync_ns;
    Ok(pass)
}
