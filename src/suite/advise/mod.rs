//! `blobbench advise`: the user's question ("inside SQLite or as files, and
//! with which settings?") answered for their blob sizes on their disk.
//!
//! Sizes come from a sample folder (only stat()ed) or a description. They
//! are cut into a few quantile bands, each measured at its mean size (up to a
//! calibration cap) and carrying its share of the blobs, in every layout: inside the database at several page
//! sizes, as files named in the database, and as plain files; reads and
//! writes with the durability asked for. Then WAL is measured against a
//! rollback journal. The recommendation minimizes the expected time per
//! operation over the user's size distribution and read/write mix; every
//! figure is recomputed round by round so its spread is known. Settings
//! move from their defaults (SQLite's page size 4096; WAL, the journal
//! mode every layout is measured in) only when another is faster beyond
//! the noise; otherwise the default is kept, said to be within noise. With an
//! object store (`--s3`), it is one more layout at every size, and a
//! candidate for the blobs kept outside the database.

pub mod aging;
pub mod calibrate;
pub mod decide;
pub mod sizes;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::result::advise::{
    Advice, AdviseInput, AdviseTables, AgingAdjustment, Band, Decision, Durability, LayoutKind,
    PointResult, SizeSample,
};
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::target::Target;
use crate::units::human_bytes;

use super::common::{RemoteDatasets, WorkDir, free_bytes};
pub use aging::{AgingInput, under_aging};
use calibrate::{Calibrator, blobs_for, journal_point};
pub use decide::{decide, under_concurrency};
pub use sizes::{MAX_POINT, points, sample_dir, sample_spec};

/// What `advise` is asked, checked: every value is valid.
#[derive(Debug, Clone)]
pub struct AdviseOptions {
    /// The user's blob sizes (from a folder or a description).
    pub sample: SizeSample,
    /// Share of operations that are reads, 0 to 100.
    pub reads_percent: u64,
    /// Reads that share one database transaction; None: all of a pass's.
    pub reads_per_transaction: Option<u64>,
    /// What a write must survive.
    pub durability: Durability,
    /// Page sizes to try for blobs inside the database (at least one).
    pub page_sizes: Vec<u32>,
    /// How many representative sizes to measure, 1 to 12.
    pub points: u64,
    /// Bytes of content per size and layout (positive).
    pub total: u64,
    /// Measured rounds (at least one).
    pub rounds: u64,
    /// Folder for the calibration data; None: a new temporary folder.
    pub dir: Option<PathBuf>,
    /// Keep the calibration data afterwards.
    pub keep: bool,
    /// Seed for sampled sizes and key order.
    pub seed: u64,
    /// The application's threads at once (1: one thread, no concurrency
    /// step).
    pub threads: usize,
    /// Of them, threads that only write.
    pub writers: usize,
    /// An object store to measure as one more layout (`--s3`: a fresh
    /// prefix the command chose); each size's dataset goes under it and is
    /// removed afterwards, also on failure (unless `keep`).
    pub object_store: Option<Target>,
    /// A `suite aging` result and the storage age to decide at (`--aging`,
    /// `--age`); None: decide for a fresh store.
    pub aging: Option<AgingInput>,
}

impl AdviseOptions {
    /// The question as the result records it.
    pub fn input(&self) -> AdviseInput {
        AdviseInput {
            sample: self.sample.clone(),
            reads_percent: self.reads_percent,
            reads_per_transaction: self.reads_per_transaction,
            durability: self.durability,
            page_sizes: self.page_sizes.clone(),
            rounds: self.rounds,
            threads: self.threads,
            writers: self.writers,
            total_per_layout: self.total,
            object_store: self.object_store.as_ref().map(|t| t.to_string()),
        }
    }
}

/// A calibration ready to measure: its work folder exists, its sizes are
/// chosen and the disk has room for them.
pub struct Calibration<'a> {
    options: &'a AdviseOptions,
    work: WorkDir,
    points: Vec<Band>,
}

/// Creates the work folder, chooses the representative sizes and checks
/// there is room for them; nothing is measured yet.
pub fn prepare(options: &AdviseOptions) -> Result<Calibration<'_>> {
    let work = WorkDir::new(options.dir.as_deref(), options.keep, "blobbench-advise-")?;
    let pts = points(&options.sample, options.points);
    let layouts = options.page_sizes.len() as u64 + 2;
    let biggest = pts
        .iter()
        .map(|b| blobs_for(b.size, options.total) * b.size)
        .max()
        .unwrap_or(0);
    let kept = if options.keep { pts.len() as u64 } else { 1 };
    let needed = biggest.saturating_mul(layouts * kept).saturating_mul(12) / 10;
    if let Some(free) = free_bytes(&work.path)
        && free < needed
    {
        return Err(Error::usage(format!(
            "{} has {} free; advise needs about {}: use --dir on a larger disk or a smaller --total",
            work.path.display(),
            human_bytes(free),
            human_bytes(needed)
        )));
    }
    Ok(Calibration {
        options,
        work,
        points: pts,
    })
}

/// Calibrates and decides: the whole `advise`, without a header.
pub fn run(options: &AdviseOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    prepare(options)?.run(progress)
}

impl Calibration<'_> {
    /// The folder the datasets go in.
    pub fn folder(&self) -> &Path {
        &self.work.path
    }

    /// The bands of sizes to measure: each one's range, share, mean and
    /// the size measured.
    pub fn points(&self) -> &[Band] {
        &self.points
    }

    /// Measures every point and the journal modes, decides, and says what
    /// was kept; the folder is removed on return unless kept.
    pub fn run(self, progress: &dyn Progress) -> Result<ResultDocument> {
        let outcome = self.measure(progress);
        self.work.report_kept(progress);
        if let (true, Some(t)) = (self.options.keep, &self.options.object_store) {
            progress.note(&format!("object-store datasets kept under {t}"));
        }
        outcome
    }

    /// The decision at the age `input` asks for, from the `fresh` points
    /// (already at the application's concurrency) and their decision,
    /// which the adjustment keeps.
    fn aged(
        &self,
        input: &AgingInput,
        fresh: &[PointResult],
        unaged: Decision,
    ) -> (Decision, Option<AgingAdjustment>) {
        let o = self.options;
        let fs = crate::measure::environment::filesystem_of(&self.work.path)
            .map_or_else(|| "?".to_string(), |f| f.fs_type);
        let adj = aging::adjustment(input, &fs, fresh, unaged);
        let decision = decide(
            &under_aging(fresh, &adj),
            &o.page_sizes,
            o.reads_percent as f64 / 100.0,
            o.rounds as usize,
        );
        (decision, Some(adj))
    }

    fn measure(&self, progress: &dyn Progress) -> Result<ResultDocument> {
        let o = self.options;
        let mut doc = ResultDocument::new(
            ResultKind::Advise,
            crate::store::capture_environment(Some(&self.work.path)),
            Tables::Other(serde_json::Value::Null),
        );
        let concurrent = if o.threads > 1 || o.writers > 0 {
            o.rounds
        } else {
            0
        };
        let steps = self.points.len() as u64 * (1 + o.rounds) + o.rounds + concurrent;
        progress.start("calibrating", steps);
        let mut c = Calibrator {
            options: o,
            work: &self.work,
            progress,
            runs: Vec::new(),
            remote: RemoteDatasets::new(o.keep),
            object_store: None,
            failed: None,
        };
        let mut results = Vec::new();
        for (i, band) in self.points.iter().enumerate() {
            results.push(c.point(i, band)?);
        }
        let reads = o.reads_percent as f64 / 100.0;
        without_failed(&c, &mut results);
        let single = decide(&results, &o.page_sizes, reads, o.rounds as usize);
        let common = journal_point(&self.points);
        // At the application's concurrency, each layout's slowdown scales
        // its times at every size before deciding again.
        let concurrency = if o.threads > 1 || o.writers > 0 {
            progress.message("concurrency");
            Some(c.concurrency(common, single.page_size, &results)?)
        } else {
            None
        };
        // The object store may have failed under concurrency: then every
        // decision is made without it.
        without_failed(&c, &mut results);
        let single = match &concurrency {
            Some(_) => decide(&results, &o.page_sizes, reads, o.rounds as usize),
            None => single,
        };
        let at_concurrency = concurrency
            .as_ref()
            .map(|adj| under_concurrency(&results, adj));
        let fresh = at_concurrency.as_deref().unwrap_or(&results);
        let decision = match &concurrency {
            Some(_) => decide(fresh, &o.page_sizes, reads, o.rounds as usize),
            None => single,
        };
        // At the storage age the application will reach, each layout's
        // times scaled by what aging did to it, and decided again.
        let (decision, aging) = match &o.aging {
            Some(input) => self.aged(input, fresh, decision),
            None => (decision, None),
        };
        // WAL against a rollback journal, at the size carrying the most
        // blobs, with the chosen page size.
        progress.message("journal modes");
        let journal = c.journals(common, decision.page_size)?;
        progress.finish();
        doc.runs = std::mem::take(&mut c.runs);
        if c.failed.is_some() {
            // The object store's rounds before its failure pair with
            // nothing: left out (every other layout is local).
            doc.runs.retain(|r| !r.plan.target.is_server());
        }
        doc.tables = Tables::Advise(AdviseTables {
            advise: Box::new(Advice {
                input: o.input(),
                points: results,
                decision,
                journal,
                concurrency,
                object_store: c.object_store.take(),
                aging,
                failed: c.failed.take().into_iter().collect(),
            }),
        });
        Ok(doc)
    }
}

/// Leaves a failed layout out of every point, so each decision compares
/// layouts measured in every round at every size.
fn without_failed(c: &Calibrator, points: &mut [PointResult]) {
    if c.failed.is_some() {
        for p in points {
            p.layouts.retain(|l| l.kind != LayoutKind::ObjectStore);
        }
    }
}
