//! `blobbench suite internal-external`: SQLite's "Internal Versus External
//! BLOBs" study (circa 2011), its 49-case matrix measured on this machine.
//!
//! For each blob size (10k .. 1m) and page size (1024 .. 65536): about 100 MB
//! of content (count = total / size), once inside the database (internal)
//! and once as files whose names the database holds (external: the name is
//! looked up for every read, as in the study). Both read every blob in random
//! order with the page cache held at about 2 MB (cache pages = 2 MB / page
//! size). The cell is external time / internal time: above 1 the database
//! is faster.

use std::io::IsTerminal;

use serde_json::json;

use crate::cli::InternalExternalArgs;
use crate::dataset::spec_from_options;
use crate::error::{Error, Result};
use crate::measure::stats::summarize;
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::store::{ReadPath, WriteStyle};
use crate::target::{SqliteSettings, Target, parse_page_size};
use crate::units::{human_bytes, parse_number};
use crate::workload::{CacheMode, Operation, RunPlan, execute};

use super::common::{WorkDir, free_bytes, parse_list, per_op_ns, plan, remove_entry, session};

pub const SEED_SIZES: [u64; 7] = [10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];
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

pub fn run(args: &InternalExternalArgs) -> Result<()> {
    if args.rounds == 0 {
        return Err(Error::usage("--rounds 0: at least one round is needed"));
    }
    let sizes = parse_list("--sizes", &args.sizes, |v| {
        let n = parse_number(v)?;
        if n == 0 || n > 1 << 30 {
            return Err(Error::usage(format!(
                "--sizes {v}: a blob size from 1 to 1G, e.g. 10k"
            )));
        }
        Ok(n)
    })?;
    let page_sizes = parse_list("--page-sizes", &args.page_sizes, parse_page_size)?;
    if args.total == 0 {
        return Err(Error::usage("--total must be positive, e.g. --total 100M"));
    }
    if args.cache_bytes == 0 {
        return Err(Error::usage(
            "--cache-bytes must be positive, e.g. --cache-bytes 2M",
        ));
    }
    crate::command::output::check_outputs(&args.json, args.report.as_deref())?;
    let work = WorkDir::new(
        args.dir.as_deref(),
        args.keep,
        "blobbench-internal-external-",
    )?;
    // One blob size's datasets exist at a time (two copies of --total per page size).
    let needed =
        2 * args.total * page_sizes.len() as u64 * if args.keep { sizes.len() } else { 1 } as u64;
    if let Some(free) = free_bytes(&work.path)
        && free < needed + needed / 10
    {
        return Err(Error::usage(format!(
            "{} has {} free; this suite needs about {}: use --dir on a larger disk or a smaller --total",
            work.path.display(),
            human_bytes(free),
            human_bytes(needed)
        )));
    }
    let outcome = run_in(args, &sizes, &page_sizes, &work);
    work.report_kept(&crate::command::progress::Bars::new());
    outcome
}

struct Cell {
    size: u64,
    page_size: u32,
    count: u64,
    internal_ns: Vec<f64>,
    external_ns: Vec<f64>,
}

impl Cell {
    fn ratio(&self) -> f64 {
        let r: Vec<f64> = self
            .external_ns
            .iter()
            .zip(&self.internal_ns)
            .map(|(e, i)| e / i)
            .collect();
        summarize(&r).median
    }
}

fn run_in(
    args: &InternalExternalArgs,
    sizes: &[u64],
    page_sizes: &[u32],
    work: &WorkDir,
) -> Result<()> {
    let n_cases = sizes.len() * page_sizes.len();
    eprintln!(
        "blobbench suite internal-external: {} cases ({} blob sizes x {} page sizes), {} of content each, in {} ({})",
        n_cases,
        sizes.len(),
        page_sizes.len(),
        human_bytes(args.total),
        work.path.display(),
        crate::measure::environment::filesystem_of(&work.path)
            .map(|f| f.fs_type)
            .unwrap_or_else(|| "?".into())
    );
    let mut doc = ResultDocument::new(
        "suite internal-external",
        crate::store::capture_environment(Some(&work.path)),
        crate::result::Tables::Other(serde_json::Value::Null),
    );
    // One step per case for creating its two datasets, one per round for reading them.
    let steps = n_cases as u64 * (1 + args.rounds);
    let pb = indicatif::ProgressBar::new(steps);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg:40} [{bar:30}] {percent:>3}% ({eta} left)")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut cells: Vec<Cell> = Vec::new();
    let mut case_no = 0;
    for &size in sizes {
        let count = (args.total / size).max(1);
        let spec = spec_from_options(count, size, 0, "fixed", 1.0, args.seed)?;
        let mut names = Vec::new();
        let mut plans: Vec<(usize, RunPlan, RunPlan)> = Vec::new();
        for &page_size in page_sizes {
            case_no += 1;
            pb.set_message(format!(
                "case {case_no}/{n_cases}: {}, page {page_size}: creating",
                human_bytes(size)
            ));
            let settings = SqliteSettings {
                page_size: Some(page_size),
                cache_size: Some((args.cache_bytes / u64::from(page_size)).max(1) as i64),
                ..Default::default()
            };
            let int_name = format!("ie-{size}-{page_size}.db");
            let ext_name = format!("ie-{size}-{page_size}-ext.db");
            let internal = Target::Sqlite {
                path: work.join(&int_name),
                settings: settings.clone(),
            };
            let external = Target::SqliteExt {
                path: work.join(&ext_name),
                settings,
            };
            for t in [&internal, &external] {
                let (store, _) = crate::store::create_dataset(t, &spec, &crate::progress::Silent)?;
                drop(store);
            }
            names.push(int_name);
            names.push(format!("{ext_name}.files"));
            names.push(ext_name);
            pb.inc(1);
            let read = |name: String, t: Target| {
                let mut p = plan(
                    name,
                    t,
                    Operation::Read,
                    count,
                    session(ReadPath::Sql, false, WriteStyle::Truncate, false),
                    size ^ u64::from(page_size),
                );
                if args.cold {
                    p.cache = CacheMode::Cold;
                }
                p
            };
            cells.push(Cell {
                size,
                page_size,
                count,
                internal_ns: Vec::new(),
                external_ns: Vec::new(),
            });
            plans.push((
                cells.len() - 1,
                read(format!("internal {size} page {page_size}"), internal),
                read(format!("external {size} page {page_size}"), external),
            ));
        }
        // Rounds over this blob size's cases; internal and external swap
        // places and the page sizes reverse from one round to the next.
        for round in 0..args.rounds {
            let mut order: Vec<usize> = (0..plans.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                let (cell, internal, external) = &plans[i];
                pb.set_message(format!(
                    "case {}/{n_cases}: {}, page {}: round {}/{}",
                    case_no - plans.len() + i + 1,
                    human_bytes(size),
                    cells[*cell].page_size,
                    round + 1,
                    args.rounds
                ));
                let pair = if round % 2 == 0 {
                    [internal, external]
                } else {
                    [external, internal]
                };
                for p in pair {
                    let mut r = execute(p, &crate::progress::Silent)?;
                    let t = per_op_ns(&r, false);
                    if std::ptr::eq(p, internal) {
                        cells[*cell].internal_ns.push(t);
                    } else {
                        cells[*cell].external_ns.push(t);
                    }
                    r.name = format!("{} (round {})", r.name, round + 1);
                    doc.runs.push(r);
                }
                pb.inc(1);
            }
        }
        if !args.keep {
            for name in &names {
                remove_entry(&work.join(name));
            }
        }
    }
    pb.finish_and_clear();
    report(args, sizes, page_sizes, &cells, &mut doc)
}

/// Where the ratio crosses 1.00 going up in blob size, interpolated on a log
/// scale of size between the two measured sizes around it.
pub fn crossover(points: &[(u64, f64)]) -> Crossover {
    if points.iter().all(|&(_, r)| r >= 1.0) {
        return Crossover::DatabaseEverywhere;
    }
    if points.iter().all(|&(_, r)| r < 1.0) {
        return Crossover::FilesEverywhere;
    }
    for w in points.windows(2) {
        let ((s1, r1), (s2, r2)) = (w[0], w[1]);
        if r1 >= 1.0 && r2 < 1.0 {
            let (l1, l2) = ((s1 as f64).ln(), (s2 as f64).ln());
            let at = l1 + (r1 - 1.0) / (r1 - r2) * (l2 - l1);
            return Crossover::At(at.exp());
        }
    }
    Crossover::Mixed
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Crossover {
    /// External files start to win above this blob size (bytes).
    At(f64),
    DatabaseEverywhere,
    FilesEverywhere,
    /// Files win first and the database later: no single threshold.
    Mixed,
}

impl Crossover {
    fn describe(&self, sizes: &[u64]) -> String {
        match self {
            Crossover::At(s) => format!(
                "external files start to win above about {}",
                size_label(*s as u64)
            ),
            Crossover::DatabaseEverywhere => format!(
                "the database wins at every blob size up to {}",
                size_label(*sizes.last().unwrap_or(&0))
            ),
            Crossover::FilesEverywhere => format!(
                "external files win at every blob size from {}",
                size_label(*sizes.first().unwrap_or(&0))
            ),
            Crossover::Mixed => {
                "no single threshold (files win below a size where the database wins)".into()
            }
        }
    }
}

/// Sizes the way the study labels them: 10k, 500k, 1m (x1000).
fn size_label(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}m", n / 1_000_000)
    } else if n >= 1000 {
        format!("{}k", (n as f64 / 1000.0).round() as u64)
    } else {
        n.to_string()
    }
}

fn color(ratio: f64, text: String, enabled: bool) -> String {
    if !enabled {
        return text;
    }
    // Green: the database is faster (the study's green cells); red: files are.
    let code = if ratio >= 1.0 { "32" } else { "31" };
    format!("\x1b[{code}m{text}\x1b[0m")
}

fn report(
    args: &InternalExternalArgs,
    sizes: &[u64],
    page_sizes: &[u32],
    cells: &[Cell],
    doc: &mut ResultDocument,
) -> Result<()> {
    let colors = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let cell = |size: u64, page: u32| cells.iter().find(|c| c.size == size && c.page_size == page);
    let header = |first: &str| {
        std::iter::once(first.to_string())
            .chain(sizes.iter().map(|&s| size_label(s)))
            .collect::<Vec<_>>()
    };

    let mut here = Table::new(header("page size"));
    for &p in page_sizes {
        let mut row = vec![p.to_string()];
        for &s in sizes {
            row.push(match cell(s, p) {
                Some(c) => {
                    let r = c.ratio();
                    color(r, format!("{r:.3}"), colors)
                }
                None => "-".into(),
            });
        }
        here.row(row);
    }
    let mut seed = Table::new(header("page size"));
    for &p in page_sizes {
        let mut row = vec![p.to_string()];
        for &s in sizes {
            let v = SEED_PAGE_SIZES
                .iter()
                .position(|&x| x == p)
                .zip(SEED_SIZES.iter().position(|&x| x == s))
                .map(|(i, j)| SEED_MATRIX[i][j]);
            row.push(match v {
                Some(r) => color(r, format!("{r:.3}"), colors),
                None => "-".into(),
            });
        }
        seed.row(row);
    }

    // Best page size: the lowest internal read time, as a geometric mean over
    // blob sizes (each size's times are on their own scale).
    let geo_internal = |p: u32| -> f64 {
        let logs: Vec<f64> = sizes
            .iter()
            .filter_map(|&s| cell(s, p))
            .map(|c| summarize(&c.internal_ns).median.ln())
            .collect();
        (logs.iter().sum::<f64>() / logs.len().max(1) as f64).exp()
    };
    let best = *page_sizes
        .iter()
        .min_by(|a, b| geo_internal(**a).total_cmp(&geo_internal(**b)))
        .expect("at least one page size");
    let crossovers: Vec<(u32, Crossover)> = page_sizes
        .iter()
        .map(|&p| {
            let points: Vec<(u64, f64)> = sizes
                .iter()
                .filter_map(|&s| cell(s, p).map(|c| (s, c.ratio())))
                .collect();
            (p, crossover(&points))
        })
        .collect();
    let crossover_at = |p: u32| crossovers.iter().find(|(q, _)| *q == p).map(|(_, c)| *c);

    println!(
        "blobbench suite internal-external: external time / internal time, {} of content per case, \
cache {} per database, random order, {} cache, median of {} rounds",
        human_bytes(args.total),
        human_bytes(args.cache_bytes),
        if args.cold { "cold" } else { "warm" },
        args.rounds
    );
    println!(
        "above 1: reading blobs stored in the database is faster; below 1: separate files are faster"
    );
    println!("\nthis machine (SQLite {}):", rusqlite::version());
    print!("{}", here.render());
    println!("\nthe study (2011: SQLite 3.7.8, Linux ext4, SATA disk):");
    print!("{}", seed.render());
    println!("\nrules of thumb from this machine's numbers:");
    println!(
        "  best page size for blob reads: {best} (lowest internal read time over all blob sizes)"
    );
    let mut shown = vec![best];
    if best != 4096 && page_sizes.contains(&4096) {
        shown.push(4096); // SQLite's default page size
    }
    for p in shown {
        if let Some(c) = crossover_at(p) {
            println!("  page size {p}: {}", c.describe(sizes));
        }
    }
    println!("the study: page size 8192 or 16384 is best; files win for blobs above about 100k");

    doc.tables = crate::result::Tables::InternalExternal(
        crate::result::internal_external::InternalExternalTables(json!({
            "internal_external": cells.iter().map(|c| json!({
                "blob_size": c.size,
                "page_size": c.page_size,
                "count": c.count,
                "internal_ns_per_read": c.internal_ns,
                "external_ns_per_read": c.external_ns,
                "external_over_internal": c.ratio(),
                "seed": SEED_PAGE_SIZES.iter().position(|&x| x == c.page_size)
                    .zip(SEED_SIZES.iter().position(|&x| x == c.size))
                    .map(|(i, j)| SEED_MATRIX[i][j]),
            })).collect::<Vec<_>>(),
            "best_page_size": best,
            "crossover": crossovers.iter().map(|(p, c)| json!({"page_size": p, "crossover": c})).collect::<Vec<_>>(),
            "total_bytes": args.total,
            "cache_bytes": args.cache_bytes,
            "rounds": args.rounds,
            "cold": args.cold,
        })),
    );
    crate::command::output::write_result_with_report(doc, &args.json, args.report.as_deref())?;
    println!("result written to {}", args.json.display());
    Ok(())
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
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(10_000), "10k");
        assert_eq!(size_label(1_000_000), "1m");
        assert_eq!(size_label(75_400), "75k");
    }
}
