//! Measuring one representative size in every layout (inside the database at
//! each page size, as files named in the database, as plain files) with the
//! durability asked for, round after round in alternating order; and writes
//! under WAL against a rollback journal at one size. With an object store
//! (`--s3`) it is one more layout at every size, under its own prefix
//! (`advise-SIZE`) inside the run's, each write one PUT.

use std::path::PathBuf;

use crate::dataset::{SizeShape, spec_from_options};
use crate::error::{Error, Result};
use crate::progress::{Progress, Silent};
use crate::result::advise::{
    AgainstDefault, Band, ConcurrencyAdjustment, ConcurrentLayout, Durability, JournalComparison,
    LayoutKind, LayoutResult, PointResult, Spread,
};
use crate::result::faults::SystemFailure;
use crate::result::mixed_run::{KeyDistribution, OpKind};
use crate::store::{ReadPath, SessionOptions, StoreInfo, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::workload::mix::Mix;
use crate::workload::mixed_run::MixedRunPlan;
use crate::workload::run::SessionOptionsRecord;
use crate::workload::{Operation, RunResult, execute};

use super::super::common::{RemoteDatasets, WorkDir, per_op_ns, plan, remove_entry, session};
use super::AdviseOptions;
use super::sizes::size_label;

/// Writes timed per layout and round (each is its own transaction).
const MAX_WRITES: u64 = 100;

/// `synchronous` for WAL and for a rollback journal at a durability.
fn synchronous(d: Durability) -> (&'static str, &'static str) {
    match d {
        Durability::Power => ("full", "full"),
        // A rollback journal needs FULL to be safe from corruption on power loss.
        Durability::Crash => ("normal", "full"),
        Durability::None => ("off", "off"),
    }
}

/// How plain files are written at a durability: the write style and
/// whether each write is fsync()ed.
fn file_writes(d: Durability) -> (WriteStyle, bool) {
    match d {
        Durability::Power => (WriteStyle::TempRename, true),
        Durability::Crash => (WriteStyle::TempRename, false),
        Durability::None => (WriteStyle::InPlace, false),
    }
}

/// Blobs per layout at `size`: `total` bytes' worth, 10 to 1000.
pub fn blobs_for(size: u64, total: u64) -> u64 {
    (total / size.max(1)).clamp(10, 1000)
}

/// One layout to create and measure at one size.
struct Layout {
    name: String,
    kind: LayoutKind,
    page: Option<u32>,
    target: Target,
}

/// How a layout's writes are made: files as the durability asks; an
/// object store's as one PUT whatever it asks (a PUT is as durable as the
/// server makes it; the client has nothing to add).
fn writes_of(kind: LayoutKind, d: Durability) -> (WriteStyle, bool) {
    match kind {
        LayoutKind::ObjectStore => (WriteStyle::Truncate, false),
        _ => file_writes(d),
    }
}

/// Every layout at `size`: the database at each page size (WAL), files named
/// in a database, plain files, and the object store when there is one
/// (under the prefix `advise-SIZE` followed by `tag`).
fn layouts(
    size: u64,
    page_sizes: &[u32],
    work: &WorkDir,
    wal_sync: &str,
    object_store: Option<(&Target, &str)>,
) -> Vec<Layout> {
    let wal = |page: Option<u32>| SqliteSettings {
        page_size: page,
        journal_mode: Some("wal".into()),
        synchronous: Some(wal_sync.into()),
        ..Default::default()
    };
    let mut out: Vec<Layout> = page_sizes
        .iter()
        .map(|&p| Layout {
            name: format!("db {p}"),
            kind: LayoutKind::Db,
            page: Some(p),
            target: Target::sqlite(work.join(&format!("advise-{size}-{p}.db")), wal(Some(p))),
        })
        .collect();
    out.push(Layout {
        name: "db+files".into(),
        kind: LayoutKind::DbFiles,
        page: None,
        target: Target::sqlite_ext(work.join(&format!("advise-{size}-ext.db")), wal(None)),
    });
    out.push(Layout {
        name: "files".into(),
        kind: LayoutKind::Files,
        page: None,
        target: Target::dir(work.join(&format!("advise-{size}.dir"))),
    });
    if let Some(target) = object_store.and_then(|(t, tag)| t.child(&format!("advise-{size}{tag}")))
    {
        out.push(Layout {
            name: "s3".into(),
            kind: LayoutKind::ObjectStore,
            page: None,
            target,
        });
    }
    out
}

/// Measures in the work folder and keeps every run it times.
pub struct Calibrator<'a> {
    /// What to measure.
    pub options: &'a AdviseOptions,
    /// Where the datasets go.
    pub work: &'a WorkDir,
    /// Where progress goes.
    pub progress: &'a dyn Progress,
    /// Every run timed so far, for the result.
    pub runs: Vec<RunResult>,
    /// The object-store datasets made, removed after each size and on
    /// failure (unless kept).
    pub remote: RemoteDatasets,
    /// What the object store said about itself, once it was reached.
    pub object_store: Option<StoreInfo>,
    /// The object store's failure, once it failed: from then on it is
    /// left out (every local layout goes on), and at the end it is left
    /// out of every point so the decision compares whole rounds.
    pub failed: Option<SystemFailure>,
}

impl Calibrator<'_> {
    /// Whether layout `kind` is still measured (the object store stops at
    /// its first failure).
    fn measures(&self, kind: LayoutKind) -> bool {
        kind != LayoutKind::ObjectStore || self.failed.is_none()
    }

    /// What a failure of `layout` during `during` means: the object store
    /// is recorded as failed and left out from then on (Ok); any local
    /// layout's failure, or an interruption, ends the calibration (the
    /// decision compares the local layouts: without one there is none).
    fn layout_failed(&mut self, layout: &Layout, during: String, e: Error) -> Result<()> {
        if layout.kind != LayoutKind::ObjectStore || matches!(e, Error::Interrupted(_)) {
            return Err(e);
        }
        let f = SystemFailure::new(&layout.name, &during, &e);
        self.progress.note(&format!(
            "{} failed ({during}): {}; going on without it",
            f.system,
            f.reason()
        ));
        self.failed = Some(f);
        Ok(())
    }

    /// Runs one timed plan of `layout`; None when the object store failed
    /// (recorded), an error when a local layout did.
    fn execute(
        &mut self,
        layout: &Layout,
        p: &crate::workload::RunPlan,
    ) -> Result<Option<RunResult>> {
        match execute(p, &Silent).and_then(RunResult::without_failures) {
            Ok(r) => Ok(Some(r)),
            Err(e) => {
                self.layout_failed(layout, p.name.clone(), e)?;
                Ok(None)
            }
        }
    }
}

impl Calibrator<'_> {
    /// Measures the `index`th band at its size in every layout.
    pub fn point(&mut self, index: usize, band: &Band) -> Result<PointResult> {
        let o = self.options;
        let size = band.size;
        self.progress
            .message(&format!("{}: creating", size_label(size)));
        let blobs = blobs_for(size, o.total);
        let writes = blobs.min(MAX_WRITES);
        let (wal_sync, _) = synchronous(o.durability);
        let object_store = o.object_store.as_ref().filter(|_| self.failed.is_none());
        let targets = layouts(
            size,
            &o.page_sizes,
            self.work,
            wal_sync,
            object_store.map(|t| (t, "")),
        );
        let spec = spec_from_options(
            blobs,
            size,
            0,
            SizeShape::Fixed,
            o.seed.wrapping_add(index as u64),
        )?;
        let (mut results, names) = self.create(&targets, &spec)?;
        let targets: Vec<Layout> = targets
            .into_iter()
            .filter(|l| self.measures(l.kind))
            .collect();
        self.progress.advance(1);
        // One warm-up round, run and discarded: it fills the page cache and
        // settles the files, so the first measured round is like the others.
        self.progress
            .message(&format!("{}: warm-up", size_label(size)));
        let kept = self.runs.len();
        let mut scratch = results.clone();
        self.round(&targets, &mut scratch, size, (blobs, writes), 0)?;
        self.runs.truncate(kept);
        for round in 0..o.rounds as usize {
            self.progress.message(&format!(
                "{}: round {}/{}",
                size_label(size),
                round + 1,
                o.rounds
            ));
            self.round(&targets, &mut results, size, (blobs, writes), round)?;
            self.progress.advance(1);
        }
        if !o.keep {
            for n in &names {
                remove_entry(n);
            }
        }
        self.remote.remove();
        // A layout that failed in a round has fewer rounds than the others.
        results.retain(|l| self.measures(l.kind));
        Ok(PointResult {
            size,
            share: band.share,
            blobs,
            writes,
            layouts: results,
            band: Some(band.range),
        })
    }

    /// One round at one size: reads of every layout, then writes, so no read
    /// sees another layout's fresh writes; odd rounds go in reverse order.
    fn round(
        &mut self,
        targets: &[Layout],
        results: &mut [LayoutResult],
        size: u64,
        (blobs, writes): (u64, u64),
        round: usize,
    ) -> Result<()> {
        // A test holds advise here to stop a server between two rounds.
        crate::pause::at("advise-round");
        crate::interrupt::check()?;
        let seed = self.options.seed;
        let mut order: Vec<usize> = (0..targets.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for &i in &order {
            let l = &targets[i];
            if !self.measures(l.kind) {
                continue;
            }
            let p = plan(
                format!("read {} {size} (round {})", l.name, round + 1),
                l.target.clone(),
                Operation::Read,
                blobs,
                read_session(self.options.reads_per_transaction),
                seed ^ size ^ round as u64,
            );
            let Some(r) = self.execute(l, &p)? else {
                continue;
            };
            results[i].read_ns.push(per_op_ns(&r, false));
            self.runs.push(r);
        }
        for &i in &order {
            let l = &targets[i];
            if !self.measures(l.kind) {
                continue;
            }
            let per_txn = !matches!(l.kind, LayoutKind::Files | LayoutKind::ObjectStore);
            let (style, fsync) = writes_of(l.kind, self.options.durability);
            let p = plan(
                format!("write {} {size} (round {})", l.name, round + 1),
                l.target.clone(),
                Operation::Update,
                writes,
                session(ReadPath::Sql, per_txn, style, fsync),
                seed ^ size ^ (round as u64 + 100),
            );
            let Some(r) = self.execute(l, &p)? else {
                continue;
            };
            // Writes pay for their WAL checkpoint too.
            results[i].write_ns.push(per_op_ns(&r, true));
            self.runs.push(r);
        }
        Ok(())
    }

    /// Writes of blobs of `size` at `page_size` under WAL and under a
    /// rollback journal (each with the `synchronous` the durability needs),
    /// alternating order round by round.
    pub fn journals(&mut self, size: u64, page_size: u32) -> Result<JournalComparison> {
        let o = self.options;
        let (wal_sync, rollback_sync) = synchronous(o.durability);
        let blobs = blobs_for(size, o.total);
        let writes = blobs.min(MAX_WRITES);
        let spec = spec_from_options(blobs, size, 0, SizeShape::Fixed, o.seed)?;
        let path = self.work.join(&format!("advise-journal-{size}.db"));
        let target = |mode: &str, sync: &str| {
            Target::sqlite(
                path.clone(),
                SqliteSettings {
                    page_size: Some(page_size),
                    journal_mode: Some(mode.into()),
                    synchronous: Some(sync.into()),
                    ..Default::default()
                },
            )
        };
        let (store, _) =
            crate::store::create_dataset(&target("delete", rollback_sync), &spec, &Silent)?;
        drop(store);
        let modes = [("wal", wal_sync), ("delete", rollback_sync)];
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); 2];
        // Step 0 is a warm-up round, run and discarded.
        for step in 0..=o.rounds as usize {
            let round = step.saturating_sub(1);
            let order: [usize; 2] = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                let (mode, sync) = modes[i];
                let p = plan(
                    format!(
                        "write journal {mode} synchronous {sync} (round {})",
                        round + 1
                    ),
                    target(mode, sync),
                    Operation::Update,
                    writes,
                    session(ReadPath::Sql, true, WriteStyle::Truncate, false),
                    o.seed ^ (round as u64 + 200),
                );
                let r = execute(&p, &Silent)?.without_failures()?;
                if step > 0 {
                    times[i].push(per_op_ns(&r, true));
                    self.runs.push(r);
                }
            }
            if step > 0 {
                self.progress.advance(1);
            }
        }
        if !o.keep {
            remove_entry(&path);
        }
        Ok(compare_journals(size, page_size, modes, times))
    }
}

/// Seconds each layout runs per round at the application's concurrency.
const MIXED_RUN_ROUND: std::time::Duration = std::time::Duration::from_secs(1);

impl Calibrator<'_> {
    /// Every layout at `size` (the database at `page`) with the
    /// application's threads, `writers` of them updating and the rest
    /// reading, round by round in alternating order; each layout's time per
    /// read and per write as one thread sees it, over its one-thread time
    /// at the same size in `results`.
    pub fn concurrency(
        &mut self,
        size: u64,
        page: u32,
        results: &[PointResult],
    ) -> Result<ConcurrencyAdjustment> {
        let o = self.options;
        let single = results
            .iter()
            .find(|p| p.size == size)
            .expect("the common size was measured");
        let (wal_sync, _) = synchronous(o.durability);
        let object_store = o.object_store.as_ref().filter(|_| self.failed.is_none());
        let targets = layouts(
            size,
            &[page],
            self.work,
            wal_sync,
            object_store.map(|t| (t, "-threads")),
        );
        let blobs = blobs_for(size, o.total);
        let spec = spec_from_options(blobs, size, 0, SizeShape::Fixed, o.seed ^ 0xc0)?;
        let (created, names) = self.create(&targets, &spec)?;
        let targets: Vec<Layout> = targets
            .into_iter()
            .filter(|l| self.measures(l.kind))
            .collect();
        let mut measured: Vec<ConcurrentLayout> = created
            .iter()
            .map(|l| ConcurrentLayout {
                layout: l.layout.clone(),
                kind: l.kind,
                reads_per_s: Vec::new(),
                writes_per_s: Vec::new(),
                busy: 0,
                read_factor: Vec::new(),
                write_factor: Vec::new(),
            })
            .collect();
        for round in 0..o.rounds as usize {
            let mut order: Vec<usize> = (0..targets.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                if !self.measures(targets[i].kind) {
                    continue;
                }
                let (style, fsync) = writes_of(targets[i].kind, o.durability);
                let plan = MixedRunPlan {
                    target_text: targets[i].target.to_string(),
                    target: targets[i].target.clone(),
                    threads: o.threads,
                    writers: o.writers,
                    mix: Mix::read_only(),
                    keys: KeyDistribution::Uniform,
                    batch: 1,
                    duration: Some(MIXED_RUN_ROUND),
                    count: None,
                    rate: None,
                    busy_timeout: std::time::Duration::from_secs(5),
                    session: SessionOptions {
                        read_path: ReadPath::Sql,
                        per_op_transaction: true,
                        write_style: style,
                        fsync,
                    },
                    verify: true,
                    seed: o.seed ^ round as u64,
                    workload: None,
                    max_errors: None,
                };
                let t = match crate::workload::mixed_run::execute(&plan, &Silent)
                    .and_then(crate::result::mixed_run::MixedRunTables::without_failures)
                {
                    Ok(t) => t,
                    Err(e) => {
                        let during = format!(
                            "{} threads, round {} of {}",
                            o.threads,
                            round + 1,
                            targets[i].name
                        );
                        self.layout_failed(&targets[i], during, e)?;
                        continue;
                    }
                };
                let per_s = |k: OpKind| {
                    t.kinds
                        .iter()
                        .find(|f| f.kind == Some(k))
                        .map_or(0.0, |f| f.per_s)
                };
                let m = &mut measured[i];
                m.reads_per_s.push(per_s(OpKind::Read));
                m.writes_per_s.push(per_s(OpKind::Update));
                m.busy += t.outcomes().busy;
            }
            self.progress.advance(1);
        }
        measured.retain(|m| self.measures(m.kind));
        for m in &mut measured {
            let one = single
                .layout(m.kind, (m.kind == LayoutKind::Db).then_some(page))
                .expect("every point measures every layout");
            let readers = (o.threads - o.writers) as f64;
            m.read_factor = factors(&m.reads_per_s, &one.read_ns, readers);
            m.write_factor = factors(&m.writes_per_s, &one.write_ns, o.writers as f64);
        }
        if !o.keep {
            for n in &names {
                remove_entry(n);
            }
        }
        self.remote.remove();
        Ok(ConcurrencyAdjustment {
            threads: o.threads,
            writers: o.writers,
            size,
            page_size: page,
            layouts: measured,
        })
    }
}

/// Per round: `threads` threads' time per operation at `per_s` in all,
/// over the one-thread time `single_ns` of the same round (1 without
/// threads doing it).
fn factors(per_s: &[f64], single_ns: &[f64], threads: f64) -> Vec<f64> {
    per_s
        .iter()
        .zip(single_ns)
        .map(|(&rate, &one)| {
            if threads == 0.0 || rate <= 0.0 || one <= 0.0 {
                1.0
            } else {
                threads / rate * 1e9 / one
            }
        })
        .collect()
}

impl Calibrator<'_> {
    /// Creates every layout's dataset; returns their (still empty) results
    /// with each one's space, and every local name to remove afterwards
    /// (object-store datasets are tracked in `remote`).
    fn create(
        &mut self,
        targets: &[Layout],
        spec: &crate::dataset::DatasetSpec,
    ) -> Result<(Vec<LayoutResult>, Vec<PathBuf>)> {
        let mut names = Vec::new();
        let mut results = Vec::new();
        for l in targets {
            if l.target.is_server() {
                self.remote.track(&l.target);
            }
            // Nested work: the calibration's own stage stays on screen.
            let made = crate::store::create_dataset(&l.target, spec, &Silent)
                .and_then(|(store, _)| Ok((store.space_used()?, store)));
            let (space_bytes, store) = match made {
                Ok(made) => made,
                Err(e) => {
                    let during =
                        format!("creating {} blobs of {}", spec.count, size_label(spec.size));
                    self.layout_failed(l, during, e)?;
                    continue;
                }
            };
            if l.kind == LayoutKind::ObjectStore && self.object_store.is_none() {
                self.object_store = Some(store.info());
            }
            drop(store);
            results.push(LayoutResult {
                layout: l.name.clone(),
                kind: l.kind,
                page_size: l.page,
                read_ns: Vec::new(),
                write_ns: Vec::new(),
                space_bytes,
            });
            if l.target.is_server() {
                continue;
            }
            let path = l.target.path().to_path_buf();
            names.push(path.clone());
            if l.kind == LayoutKind::DbFiles {
                let mut files = path.into_os_string();
                files.push(".files");
                names.push(files.into());
            }
        }
        Ok((results, names))
    }
}

/// The comparison from WAL's and the rollback journal's write times (WAL
/// first): WAL, the mode every layout was measured in, is kept unless the
/// rollback journal's writes are faster beyond the noise (the whole
/// interval of their paired ratio below 1.00).
fn compare_journals(
    size: u64,
    page_size: u32,
    modes: [(&str, &str); 2],
    times: Vec<Vec<f64>>,
) -> JournalComparison {
    let ratio: Vec<f64> = times[1].iter().zip(&times[0]).map(|(d, w)| d / w).collect();
    let ratio = Spread::of_ratios(&ratio);
    let choice = AgainstDefault::decide(
        modes[0].0.to_string(),
        vec![(
            modes[1].0.to_string(),
            ratio.estimate(times[0].len() as u64),
        )],
    );
    let best = if choice.changed() { modes[1] } else { modes[0] };
    JournalComparison {
        size,
        page_size,
        modes: modes
            .iter()
            .zip(times)
            .map(|((m, s), t)| (m.to_string(), s.to_string(), t))
            .collect(),
        best: best.0.into(),
        best_synchronous: best.1.into(),
        rollback_over_wal: ratio,
        mode_choice: Some(choice),
    }
}

/// The size the journal modes are compared at: the band carrying the most
/// blobs; near-ties (shares within 1%, as equal quantile bands are up to a
/// few blobs of equal size) go to the band nearest the middle.
pub fn journal_point(points: &[Band]) -> u64 {
    let middle = (points.len() - 1) as f64 / 2.0;
    let most = points.iter().map(|b| b.share).fold(0.0, f64::max);
    points
        .iter()
        .enumerate()
        .filter(|(_, b)| b.share >= most * 0.99)
        // The nearest the middle; of two as near, the larger (as before).
        .max_by(|(i, _), (k, _)| {
            (*k as f64 - middle)
                .abs()
                .total_cmp(&(*i as f64 - middle).abs())
        })
        .map(|(_, b)| b.size)
        .expect("at least one point")
}

/// Reads in the transaction the user's application has: each its own
/// (1), a commit after every N, or all of a pass in one (None). Files and
/// object stores have no transaction: the same reads whatever it is.
fn read_session(per_transaction: Option<u64>) -> SessionOptionsRecord {
    let mut s = session(
        ReadPath::Sql,
        per_transaction == Some(1),
        WriteStyle::Truncate,
        false,
    );
    s.ops_per_transaction = per_transaction.filter(|&n| n > 1);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::advise::SizeBand;

    fn bands(shares: &[f64]) -> Vec<Band> {
        shares
            .iter()
            .enumerate()
            .map(|(i, &share)| Band {
                range: SizeBand {
                    min: i as u64,
                    max: i as u64,
                    mean: i as f64,
                },
                share,
                size: 1000 * (i as u64 + 1),
            })
            .collect()
    }

    /// WAL's write times every round, and the rollback journal's at
    /// `factor` of them per round.
    fn journals(factor: [f64; 5]) -> JournalComparison {
        let wal = vec![1000.0, 1300.0, 900.0, 1200.0, 1100.0];
        let rollback = wal.iter().zip(factor).map(|(w, f)| w * f).collect();
        compare_journals(
            50_000,
            4096,
            [("wal", "normal"), ("delete", "full")],
            vec![wal, rollback],
        )
    }

    #[test]
    fn a_rollback_journal_within_noise_of_wal_keeps_wal() {
        // 5% faster at the median, slower in two rounds of five.
        let j = journals([0.90, 1.10, 0.95, 1.05, 0.92]);
        assert!(j.rollback_over_wal.median < 1.0);
        assert_eq!(
            (j.best.as_str(), j.best_synchronous.as_str()),
            ("wal", "normal")
        );
        let c = j.mode_choice.expect("decided against WAL");
        assert_eq!((c.default.as_str(), c.chosen.as_str()), ("wal", "wal"));
        assert!(c.within_noise);
    }

    #[test]
    fn a_rollback_journal_faster_beyond_the_noise_is_recommended() {
        let j = journals([0.60, 0.62, 0.59, 0.61, 0.60]);
        assert_eq!(
            (j.best.as_str(), j.best_synchronous.as_str()),
            ("delete", "full")
        );
        let c = j.mode_choice.unwrap();
        assert!(c.changed() && !c.within_noise, "{c:?}");
        // Slower beyond the noise: WAL, and not within noise.
        let c = journals([1.5, 1.6, 1.4, 1.5, 1.55]).mode_choice.unwrap();
        assert_eq!(c.chosen, "wal");
        assert!(!c.within_noise);
    }

    #[test]
    fn journals_are_compared_at_the_biggest_band_near_ties_going_to_the_middle() {
        assert_eq!(journal_point(&bands(&[0.6, 0.2, 0.2])), 1000);
        // Equal but for a blob or two: the middle band.
        assert_eq!(
            journal_point(&bands(&[0.20001, 0.2, 0.19999, 0.2, 0.2])),
            3000
        );
        assert_eq!(journal_point(&bands(&[0.25; 4])), 3000);
    }
}
