//! `blobbench suite internal-external`: SQLite's "Internal Versus External
//! BLOBs" study (circa 2011), its 49-case matrix measured on this machine.
//!
//! For each blob size (10k .. 1m) and page size (1024 .. 65536): about 100 MB
//! of content (count = total / size), once inside the database (internal)
//! and once as files whose names the database holds (external: the name is
//! looked up for every read, as in the study). Both read every blob in random
//! order with the page cache held at about 2 MB as the study held it: 2000
//! pages of 1024 bytes, 31 of 65536 (cache pages = 2,048,000 bytes / page
//! size, rounded down; see [`STUDY_CACHE_BYTES`]). The cell is external time / internal time: above 1 the database
//! is faster.

use std::path::PathBuf;

use crate::dataset::{SizeShape, spec_from_options};
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::result::internal_external::{
    Cell, InternalExternalTables, PageCrossover, RowPoint, cache_pages, crossings, crossover_of,
    page_choice_of,
};
use crate::result::rounds::{CaseRounds, RoundsRecord, RoundsRule};
use crate::result::{ResultDocument, ResultKind, Tables};
use crate::store::inject::Injection;
use crate::store::{ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target};
use crate::units::human_bytes;
use crate::workload::{CacheMode, Operation, RunPlan, RunResult};

use super::common::{
    DatasetState, ProbedReference, WorkDir, free_bytes, per_op_ns, plan, remove_entry, session,
};
use super::rounds::{Figure, RoundGroup, RoundPlan, run_rounds};

pub use crate::result::internal_external::{Crossover, STUDY_CACHE_BYTES};

/// The study's blob sizes (its matrix's columns).
pub const SEED_SIZES: [u64; 7] = [10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];
/// The study's page sizes (its matrix's rows).
pub const SEED_PAGE_SIZES: [u32; 7] = [1024, 2048, 4096, 8192, 16384, 32768, 65536];
/// The study's matrix (rows: page sizes 1024 .. 65536, columns: blob sizes
/// 10k .. 1m), external time / internal time.
pub const SEED_MATRIX: [[f64; 7]; 7] = [
    [1.535, 1.020, 0.608, 0.456, 0.330, 0.247, 0.233],
    [2.004, 1.437, 0.870, 0.636, 0.483, 0.372, 0.340],
    [2.261, 1.886, 1.173, 0.890, 0.701, 0.526, 0.487],
    [2.240, 1.866, 1.334, 1.035, 0.830, 0.625, 0.720],
    [2.439, 1.757, 1.292, 1.023, 0.829, 0.820, 0.598],
    [1.878, 1.843, 1.296, 0.981, 0.976, 0.675, 0.613],
    [1.256, 1.255, 1.339, 0.983, 0.769, 0.687, 0.609],
];

/// What `suite internal-external` measures, checked by the command before
/// any work.
#[derive(Debug, Clone)]
pub struct InternalExternalOptions {
    /// Folder for the datasets; None: a temporary folder.
    pub dir: Option<PathBuf>,
    /// Keep the datasets afterwards.
    pub keep: bool,
    /// Blob sizes (the matrix's columns), in bytes.
    pub sizes: Vec<u64>,
    /// Database page sizes (the matrix's rows).
    pub page_sizes: Vec<u32>,
    /// Content per case (bytes): count = total / blob size.
    pub total: u64,
    /// Page cache per database (bytes): cache_size = this / page size pages,
    /// rounded down ([`STUDY_CACHE_BYTES`] for the study's 2000 x 1024).
    pub cache_bytes: u64,
    /// How many measured rounds each cell runs, after one discarded
    /// warm-up round: a fixed count, or until its ratio is as precise as
    /// asked (`--precision`; the time budget is per blob size).
    pub rule: RoundsRule,
    /// Evict the datasets from the page cache before every read pass.
    pub cold: bool,
    /// Seed of the blob content.
    pub seed: u64,
    /// A known cost in every timed read of one case (`--inject CASE=SPEC`,
    /// a testing aid for the calibration bench), the case by its
    /// [`case_name`].
    pub inject: Option<(String, Injection)>,
}

/// The name `--inject CASE=SPEC` gives a case: `SIZE-page-PAGE:SIDE`, the
/// blob size and page size in bytes and SIDE internal or external
/// (`100000-page-4096:external`), as its runs are named.
pub fn case_name(side: &str, size: u64, page_size: u32) -> String {
    format!("{size}-page-{page_size}:{side}")
}

/// Refuses, before any work, an `--inject` naming no case the options make,
/// with every case's name.
pub fn check_injection(options: &InternalExternalOptions) -> Result<()> {
    let Some((name, injection)) = &options.inject else {
        return Ok(());
    };
    let names: Vec<String> = options
        .sizes
        .iter()
        .flat_map(|&size| {
            options.page_sizes.iter().flat_map(move |&page| {
                ["internal", "external"].map(|side| case_name(side, size, page))
            })
        })
        .collect();
    if names.contains(name) {
        return Ok(());
    }
    Err(Error::usage(format!(
        "--inject {name}={injection}: suite internal-external has no case \"{name}\"; use one of: {}",
        names.join(", ")
    )))
}

/// One case's two read plans and the cell their times go to.
struct Pair {
    cell: usize,
    internal: RunPlan,
    external: RunPlan,
}

/// Measures every (blob size, page size) case, round after round, and
/// returns the result with the matrix and the rules derived from it.
pub fn run(options: &InternalExternalOptions, progress: &dyn Progress) -> Result<ResultDocument> {
    check_injection(options)?;
    let work = WorkDir::new(
        options.dir.as_deref(),
        options.keep,
        "blobbench-internal-external-",
    )?;
    check_free_space(options, &work)?;
    let outcome = run_in(options, &work, progress);
    work.report_kept(progress);
    outcome
}

/// Refuses to start when the disk cannot hold the datasets that exist at
/// once (one blob size's, two copies of --total per page size; all of them
/// with --keep).
fn check_free_space(options: &InternalExternalOptions, work: &WorkDir) -> Result<()> {
    let sizes_at_once = if options.keep { options.sizes.len() } else { 1 } as u64;
    let needed = options
        .total
        .saturating_mul(2)
        .saturating_mul(options.page_sizes.len() as u64)
        .saturating_mul(sizes_at_once);
    if let Some(free) = free_bytes(&work.path)
        && free < needed.saturating_add(needed / 10)
    {
        return Err(Error::usage(format!(
            "{} has {} free; this suite needs about {}: use --dir on a larger disk or a smaller --total",
            work.path.display(),
            human_bytes(free),
            human_bytes(needed)
        )));
    }
    Ok(())
}

fn run_in(
    options: &InternalExternalOptions,
    work: &WorkDir,
    progress: &dyn Progress,
) -> Result<ResultDocument> {
    let n_cases = options.sizes.len() * options.page_sizes.len();
    progress.note(&format!(
        "blobbench suite internal-external: {} cases ({} blob sizes x {} page sizes), {} of content each, in {} ({})",
        n_cases,
        options.sizes.len(),
        options.page_sizes.len(),
        human_bytes(options.total),
        work.path.display(),
        crate::measure::environment::filesystem_of(&work.path)
            .map(|f| f.fs_type)
            .unwrap_or_else(|| "?".into())
    ));
    let mut doc = ResultDocument::new(
        ResultKind::InternalExternal,
        crate::store::capture_environment(Some(&work.path)),
        Tables::Other(serde_json::Value::Null),
    );
    let mut cells: Vec<Cell> = Vec::new();
    let mut measured = Measuring {
        runs: Vec::new(),
        cases: Vec::new(),
        reference: ProbedReference::new(&work.path),
    };
    for &size in &options.sizes {
        progress.start(
            &format!("creating the {} datasets", human_bytes(size)),
            options.page_sizes.len() as u64,
        );
        let (pairs, names) = create_cases(options, work, size, &mut cells, n_cases, progress)?;
        progress.finish();
        measure_rounds(options, &pairs, &mut cells, &mut measured, progress)?;
        if !options.keep {
            // One after another: an external database's removal takes
            // its folder of blob files with it.
            for name in &names {
                remove_entry(&work.join(name));
            }
        }
    }
    doc.runs = measured.runs;
    doc.environment.reference = measured.reference.into_record();
    let record = RoundsRecord {
        rule: options.rule,
        cases: measured.cases,
    };
    doc.tables = Tables::InternalExternal(tables(options, cells, record));
    Ok(doc)
}

/// Creates one blob size's datasets, internal and external, at every page
/// size; adds their (empty) cells and returns their read plans and the
/// entry names to remove afterwards.
fn create_cases(
    options: &InternalExternalOptions,
    work: &WorkDir,
    size: u64,
    cells: &mut Vec<Cell>,
    n_cases: usize,
    progress: &dyn Progress,
) -> Result<(Vec<Pair>, Vec<String>)> {
    let count = (options.total / size).max(1);
    let spec = spec_from_options(count, size, 0, SizeShape::Fixed, options.seed)?;
    let mut names = Vec::new();
    let mut pairs = Vec::new();
    for &page_size in &options.page_sizes {
        progress.message(&format!(
            "case {}/{n_cases}: {}, page {page_size}: creating",
            cells.len() + 1,
            human_bytes(size)
        ));
        let settings = SqliteSettings {
            page_size: Some(page_size),
            cache_size: Some(cache_pages(options.cache_bytes, page_size)),
            ..Default::default()
        };
        let int_name = format!("ie-{size}-{page_size}.db");
        let ext_name = format!("ie-{size}-{page_size}-ext.db");
        let internal = Target::sqlite(work.join(&int_name), settings.clone());
        let external = Target::sqlite_ext(work.join(&ext_name), settings);
        for t in [&internal, &external] {
            let (store, _) = crate::store::create_dataset(t, &spec, &crate::progress::Silent)?;
            drop(store);
        }
        names.push(int_name);
        names.push(format!("{ext_name}.files"));
        names.push(ext_name);
        progress.advance(1);
        let read = |side: &str, t: Target| {
            let name = format!("{side} {size} page {page_size}");
            let mut p = plan(
                name,
                t,
                Operation::Read,
                count,
                session(ReadPath::Sql, false, WriteStyle::Truncate, false),
                size ^ u64::from(page_size),
            );
            if options.cold {
                p.cache = CacheMode::Cold;
            }
            if let Some((case, injection)) = &options.inject
                && *case == case_name(side, size, page_size)
            {
                p.session.inject = Some(*injection);
            }
            p
        };
        cells.push(Cell {
            blob_size: size,
            page_size,
            count,
            internal_ns_per_read: Vec::new(),
            external_ns_per_read: Vec::new(),
            external_over_internal: f64::NAN,
            seed: seed_of(page_size, size),
            ratio: None,
            cache_pages: None,
        });
        pairs.push(Pair {
            cell: cells.len() - 1,
            internal: read("internal", internal),
            external: read("external", external),
        });
    }
    Ok((pairs, names))
}

/// One blob size's cases, round after round after a discarded warm-up
/// round: each cell's internal and external reads are a group that
/// alternates its order from round to round and stops on its own (after the
/// rule's rounds, or once the cell's ratio is as precise as asked). Reads
/// leave the datasets as they were, so no state is restored between cases.
fn measure_rounds(
    options: &InternalExternalOptions,
    pairs: &[Pair],
    cells: &mut [Cell],
    measured: &mut Measuring,
    progress: &dyn Progress,
) -> Result<()> {
    let plans: Vec<RunPlan> = pairs
        .iter()
        .flat_map(|p| [p.internal.clone(), p.external.clone()])
        .collect();
    let groups: Vec<RoundGroup> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| RoundGroup {
            name: format!(
                "{}, page {}",
                human_bytes(cells[p.cell].blob_size),
                cells[p.cell].page_size
            ),
            cases: vec![2 * i, 2 * i + 1],
        })
        .collect();
    let figures: Vec<Figure> = (0..pairs.len())
        .map(|i| Figure {
            numerator: 2 * i + 1,
            denominator: 2 * i,
            with_checkpoint: false,
        })
        .collect();
    let rounds = run_rounds(
        &plans,
        &groups,
        &figures,
        RoundPlan::after_warmup(options.rule),
        progress,
        &DatasetState::capture(&[])?,
        &mut measured.reference,
    )?;
    for (i, p) in pairs.iter().enumerate() {
        let cell = &mut cells[p.cell];
        for r in &rounds.results[2 * i] {
            // What SQLite read with, as it reported it back.
            cell.cache_pages = r
                .store
                .settings
                .get("cache_size")
                .and_then(|v| v.as_i64())
                .or(cell.cache_pages);
            cell.internal_ns_per_read.push(per_op_ns(r, false));
        }
        for r in &rounds.results[2 * i + 1] {
            cell.external_ns_per_read.push(per_op_ns(r, false));
        }
    }
    measured.runs.extend(rounds.results.into_iter().flatten());
    measured.cases.extend(rounds.record.cases);
    Ok(())
}

/// What the blob sizes' rounds gathered, in the order they ran.
struct Measuring {
    /// Every run of every measured round.
    runs: Vec<RunResult>,
    /// Where each case stopped.
    cases: Vec<CaseRounds>,
    /// The machine reference, probed before each cell's every round.
    reference: ProbedReference,
}

/// The study's figure for a cell, when it measured that blob size and page size.
fn seed_of(page_size: u32, size: u64) -> Option<f64> {
    SEED_PAGE_SIZES
        .iter()
        .position(|&x| x == page_size)
        .zip(SEED_SIZES.iter().position(|&x| x == size))
        .map(|(i, j)| SEED_MATRIX[i][j])
}

/// The result's tables: every cell with its ratio, the best page size and
/// each page size's crossover.
fn tables(
    options: &InternalExternalOptions,
    mut cells: Vec<Cell>,
    record: RoundsRecord,
) -> InternalExternalTables {
    // The ratio is paired round by round, with the interval its rounds'
    // stopping calls for.
    let stopping = options.rule.stopping();
    for c in &mut cells {
        let e = stopping.ratio(&c.external_ns_per_read, &c.internal_ns_per_read);
        c.external_over_internal = e.value;
        c.ratio = Some(e);
    }
    let cell = |size: u64, page: u32| {
        cells
            .iter()
            .find(|c| c.blob_size == size && c.page_size == page)
    };
    // Best page size: SQLite's default unless another's internal read time
    // (geometric mean over blob sizes, paired round by round) is lower
    // beyond the noise.
    let best = page_choice_of(&cells);
    let crossovers = options
        .page_sizes
        .iter()
        .map(|&p| {
            let points: Vec<RowPoint> = options
                .sizes
                .iter()
                .filter_map(|&s| {
                    cell(s, p).map(|c| RowPoint {
                        size: s,
                        ratio: c.external_over_internal,
                        decided: !c.undecided(),
                    })
                })
                .collect();
            let all = crossings(&points);
            PageCrossover {
                page_size: p,
                crossover: crossover_of(&points, &all),
                crossings: all,
                within_noise_at: points
                    .iter()
                    .filter(|x| !x.decided)
                    .map(|x| x.size)
                    .collect(),
            }
        })
        .collect();
    InternalExternalTables {
        internal_external: cells,
        best_page_size: best.chosen,
        best_page_choice: Some(best),
        crossover: crossovers,
        total_bytes: options.total,
        cache_bytes: options.cache_bytes,
        rounds: record.range().1,
        stopping: Some(record),
        cold: options.cold,
    }
}

/// The row in one word: where files start to win when the ratio crosses
/// 1.00 once going up in blob size (interpolated on a log scale of size
/// between the two measured sizes around it), one side everywhere, or Mixed
/// when it crosses more than once or rises through 1.00.
pub fn crossover(points: &[(u64, f64)]) -> Crossover {
    let row: Vec<RowPoint> = points
        .iter()
        .map(|&(size, ratio)| RowPoint {
            size,
            ratio,
            decided: true,
        })
        .collect();
    crossover_of(&row, &crossings(&row))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossover_interpolates_on_log_size() {
        // The study's 4096 row crosses 1.00 between 50k (1.173) and 100k (0.890).
        let row: Vec<(u64, f64)> = SEED_SIZES.iter().copied().zip(SEED_MATRIX[2]).collect();
        let Crossover::At(s) = crossover(&row) else {
            panic!("expected a crossover")
        };
        assert!(s > 50_000.0 && s < 100_000.0, "{s}");
        // 0.173 of the 0.283 drop: 61% of the way from ln 50k to ln 100k.
        let expected = (50_000f64.ln() + 0.173 / 0.283 * (2f64).ln()).exp();
        assert!((s - expected).abs() < 1.0);
        assert_eq!(
            crossover(&[(10, 1.2), (20, 1.1)]),
            Crossover::DatabaseEverywhere
        );
        assert_eq!(
            crossover(&[(10, 0.9), (20, 0.8)]),
            Crossover::FilesEverywhere
        );
        assert_eq!(crossover(&[(10, 0.9), (20, 1.1)]), Crossover::Mixed);
        // A fall and a later rise is no threshold (the first fall alone said
        // "files win above 62k" though the database wins again at 1m).
        assert_eq!(
            crossover(&[(10_000, 2.89), (100_000, 0.50), (1_000_000, 1.19)]),
            Crossover::Mixed
        );
    }

    fn options(inject: Option<&str>) -> InternalExternalOptions {
        InternalExternalOptions {
            dir: None,
            keep: false,
            sizes: vec![1000, 4000],
            page_sizes: vec![1024, 4096],
            total: 8000,
            cache_bytes: STUDY_CACHE_BYTES,
            rule: RoundsRule::Fixed { rounds: 1 },
            cold: false,
            seed: 1,
            inject: inject.map(|t| crate::store::inject::parse_case(t).unwrap()),
        }
    }

    #[test]
    fn an_injection_goes_into_exactly_the_case_it_names() {
        let o = options(Some("4000-page-1024:external=x1.25"));
        check_injection(&o).unwrap();
        let work = WorkDir::new(None, false, "blobbench-ie-test-").unwrap();
        let mut cells = Vec::new();
        let mut injected = Vec::new();
        for &size in &o.sizes {
            let (pairs, _) =
                create_cases(&o, &work, size, &mut cells, 4, &crate::progress::Silent).unwrap();
            for p in pairs.iter().flat_map(|p| [&p.internal, &p.external]) {
                if p.session.inject.is_some() {
                    injected.push(p.name.clone());
                }
            }
        }
        assert_eq!(injected, ["external 4000 page 1024"]);
        let e = check_injection(&options(Some("4000-page-8192:external=x1.25"))).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("has no case \"4000-page-8192:external\""),
            "{text}"
        );
        assert!(
            text.contains("use one of: 1000-page-1024:internal, 1000-page-1024:external"),
            "{text}"
        );
    }

    #[test]
    fn the_study_cache_is_2000_pages_at_1024_and_31_at_65536() {
        let pages: Vec<i64> = SEED_PAGE_SIZES
            .iter()
            .map(|&p| cache_pages(STUDY_CACHE_BYTES, p))
            .collect();
        assert_eq!(pages, [2000, 1000, 500, 250, 125, 62, 31]);
        // The old default of 2,000,000 bytes gave 1953 and 30.
        assert_eq!(cache_pages(2_000_000, 1024), 1953);
        assert_eq!(cache_pages(2_000_000, 65536), 30);
    }
}
