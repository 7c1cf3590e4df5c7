//! The ledger: every quantitative claim of the five documents (the seeds
//! 000-004), written once, each with where it stands, its words, the
//! document's figure, how this machine's figure is computed from which
//! experiment's result, and the side of that figure the claim is on.
//!
//! A claim is judged by the interval of this machine's figure
//! ([`Rule::judge`]), widened by what a rerun could move it: it holds when
//! the whole of that lies on the claim's side, does not hold when it lies
//! on the other side, and is inconclusive otherwise
//! ([`crate::result::reproduce::VERDICT_RULE`]).

use crate::measure::estimate::{Estimate, paired_ratio};
use crate::measure::stats::summarize;
use crate::result::fasterthanfs::{FasterThanFsRow, FasterThanFsTables};
use crate::result::http::{BLOG_FILES_OVER_SQLITE, HttpTables};
use crate::result::internal_external::InternalExternalTables;
use crate::result::lob::LobTables;
use crate::result::reproduce::{ClaimRow, ClaimVerdict};
use crate::result::sweep::{SweepTables, Workload};
use crate::result::{ResultDocument, Tables};

/// The experiments the claims are measured by, in the order `reproduce` runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Experiment {
    /// `suite fasterthanfs` (document 001).
    FasterThanFs,
    /// `suite internal-external` (document 000).
    InternalExternal,
    /// `suite lob` (document 002).
    Lob,
    /// `suite http` (document 003).
    Http,
    /// `sweep` (document 004).
    Sweep,
    /// `suite aging` (the fragmentation study document 002 quotes).
    Aging,
}

impl Experiment {
    /// Every experiment, in the order run.
    pub const ALL: [Experiment; 6] = [
        Experiment::FasterThanFs,
        Experiment::InternalExternal,
        Experiment::Lob,
        Experiment::Http,
        Experiment::Sweep,
        Experiment::Aging,
    ];

    /// The command it is.
    pub fn command(self) -> &'static str {
        match self {
            Experiment::FasterThanFs => "suite fasterthanfs",
            Experiment::InternalExternal => "suite internal-external",
            Experiment::Lob => "suite lob",
            Experiment::Http => "suite http",
            Experiment::Sweep => "sweep",
            Experiment::Aging => "suite aging",
        }
    }

    /// The documents it reproduces.
    pub fn documents(self) -> &'static str {
        match self {
            Experiment::FasterThanFs => "001",
            Experiment::InternalExternal => "000",
            Experiment::Lob => "002",
            Experiment::Http => "003",
            Experiment::Sweep => "004",
            Experiment::Aging => "002 (Sears, van Ingen, Gray, quoted)",
        }
    }

    /// The command that runs it at the documents' scale.
    pub fn full_scale(self) -> &'static str {
        match self {
            Experiment::FasterThanFs => "blobbench suite fasterthanfs",
            Experiment::InternalExternal => "blobbench suite internal-external",
            Experiment::Lob => "blobbench suite lob --pg URL --mysql URL",
            Experiment::Http => "blobbench suite http",
            Experiment::Sweep => "blobbench sweep",
            Experiment::Aging => "sudo blobbench suite aging",
        }
    }
}

/// The side of this machine's figure a claim is on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// The figure is at least this.
    AtLeast(f64),
    /// The figure is below this.
    Below(f64),
    /// The figure lies in this range.
    Between(f64, f64),
    /// The figure is a choice (a page size, a best size, a trend): the
    /// measure says whether it is the claim's and whether it is firm.
    Choice,
}

impl Rule {
    /// The rule as a condition on the figure.
    pub fn text(self) -> String {
        match self {
            Rule::AtLeast(t) => format!(">= {t:.2}"),
            Rule::Below(t) => format!("< {t:.2}"),
            Rule::Between(a, b) => format!("{a:.2}..{b:.2}"),
            Rule::Choice => "the claim's choice".into(),
        }
    }

    /// The verdict the figure gives: by its whole interval, widened by what
    /// a rerun could move it ([`Estimate::rerun_reach`]: 10% each way for
    /// an interval over one run's rounds), so that a firm verdict survives
    /// an immediate rerun. A range claim ("about X", "no noticeable
    /// impact") holds on the plain interval inside it, as the range is
    /// itself the claim's allowance for noise, and fails on the widened one
    /// wholly outside it.
    pub fn judge(self, figure: &Figure) -> ClaimVerdict {
        let e = match figure {
            Figure::Number(e) => e,
            Figure::Choice { in_claim, firm, .. } => {
                return match (firm, in_claim) {
                    (false, _) => ClaimVerdict::Inconclusive,
                    (true, true) => ClaimVerdict::Holds,
                    (true, false) => ClaimVerdict::DoesNotHold,
                };
            }
        };
        let (low, high) = e.rerun_reach();
        match self {
            Rule::AtLeast(t) if low >= t => ClaimVerdict::Holds,
            Rule::AtLeast(t) if high < t => ClaimVerdict::DoesNotHold,
            Rule::Below(t) if high < t => ClaimVerdict::Holds,
            Rule::Below(t) if low >= t => ClaimVerdict::DoesNotHold,
            Rule::Between(a, b) if e.low >= a && e.high <= b => ClaimVerdict::Holds,
            Rule::Between(a, b) if high < a || low > b => ClaimVerdict::DoesNotHold,
            _ => ClaimVerdict::Inconclusive,
        }
    }
}

/// This machine's figure for a claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// A ratio with its interval.
    Number(Estimate),
    /// A choice: what was found, whether it is the claim's, whether the
    /// interval (or the figure, where there is none) decides it.
    Choice {
        /// What was found, in words.
        text: String,
        /// Whether it is what the claim says.
        in_claim: bool,
        /// Whether it is decided beyond the noise.
        firm: bool,
    },
}

/// How a claim's figure is read out of its experiment's tables: the
/// figure, or why there is none ("give --pg URL").
pub type Measure = fn(&Tables) -> Result<Figure, String>;

/// One claim of one document.
pub struct Claim {
    /// Stable short name.
    pub id: &'static str,
    /// The document's number ("001").
    pub document: &'static str,
    /// Where in the document.
    pub place: &'static str,
    /// The claim in the document's words.
    pub words: &'static str,
    /// The document's figure with its unit.
    pub published: &'static str,
    /// The experiment that measures it.
    pub experiment: Experiment,
    /// What this machine's figure is, computed from which table.
    pub figure: &'static str,
    /// The claim's side of the figure.
    pub rule: Rule,
    /// The command that reruns it at the document's scale, where it is
    /// narrower than the experiment's.
    pub rerun: Option<&'static str>,
    /// Reads the figure.
    pub measure: Measure,
}

/// The five documents' titles, by number.
pub const DOCUMENTS: [(&str, &str); 5] = [
    ("000", "SQLite: Internal Versus External BLOBs (2011)"),
    ("001", "SQLite: 35% Faster Than The Filesystem (2017)"),
    (
        "002",
        "Stancu-Mara, Baumann, Marinov: A Comparative Benchmark of Large Objects in Relational Databases (2008)",
    ),
    ("003", "Libove Blog: Serving Binary Files from SQLite"),
    (
        "004",
        "Evaluating SQLite Performance by Testing All Parameters",
    ),
];

/// The title of document `n`.
pub fn title(n: &str) -> &'static str {
    DOCUMENTS.iter().find(|d| d.0 == n).map_or("", |d| d.1)
}

/// "about X": within this factor of X either way.
pub const ABOUT: f64 = 1.25;
/// "no noticeable impact": within this factor of 1 either way.
pub const NO_IMPACT: f64 = 1.10;

/// Every claim, in the documents' order.
pub const CLAIMS: &[Claim] = &[
    // 000: Internal Versus External BLOBs.
    Claim {
        id: "000-small-in-db",
        document: "000",
        place: "rules of thumb, under the matrix",
        words: "For BLOBs smaller than 100KB, reads are faster when the BLOBs are stored directly in the database file.",
        published: "external/internal read time 1.334 at 50k, page size 8192 (1.17-2.44 at 10k-50k, pages 4096-16384)",
        experiment: Experiment::InternalExternal,
        figure: "external / internal read time at the largest blob size below 100 KB measured, page size 8192 (or the nearest measured)",
        rule: Rule::AtLeast(1.0),
        rerun: None,
        measure: |t| ie_edge(t, true),
    },
    Claim {
        id: "000-large-in-files",
        document: "000",
        place: "rules of thumb, under the matrix",
        words: "For BLOBs larger than 100KB, reads from a separate file are faster.",
        published: "external/internal read time 0.830 at 200k, page size 8192 (0.23-0.98 above 100k)",
        experiment: Experiment::InternalExternal,
        figure: "external / internal read time at the smallest blob size above 100 KB measured, page size 8192 (or the nearest measured)",
        rule: Rule::Below(1.0),
        rerun: None,
        measure: |t| ie_edge(t, false),
    },
    Claim {
        id: "000-page-8192-16384",
        document: "000",
        place: "rules of thumb, under the matrix",
        words: "A database page size of 8192 or 16384 gives the best performance for large BLOB I/O.",
        published: "page size 8192 or 16384",
        experiment: Experiment::InternalExternal,
        figure: "the page size whose internal reads are fastest, decided against SQLite's default 4096 by the interval of their paired ratio (geometric mean over blob sizes)",
        rule: Rule::Choice,
        rerun: None,
        measure: ie_best_page,
    },
    // 001: 35% Faster Than The Filesystem.
    Claim {
        id: "001-read-35",
        document: "001",
        place: "headline; section 2.1, chart 2 (kvtest run --blob-api)",
        words: "SQLite reads and writes small blobs (for example, thumbnail images) 35% faster than the same blobs can be read from or written to individual files on disk",
        published: "1.35x (file read time / database read time, 10k blobs, blob API)",
        experiment: Experiment::FasterThanFs,
        figure: "flat folder / database time per blob, random reads by the blob API, paired by round",
        rule: Rule::AtLeast(1.35),
        rerun: None,
        measure: |t| ftfs_ratio(t, "chart 2: read, blob API"),
    },
    Claim {
        id: "001-read-sql",
        document: "001",
        place: "section 2.1, chart 1",
        words: "You can omit that option to compare the performance of SQLite running SQL statements. In that case, the SQLite still out-performs direct reads",
        published: "above 1.0x on every system of chart 1 (about 1.35x on Android to about 5x on Windows 10)",
        experiment: Experiment::FasterThanFs,
        figure: "flat folder / database time per blob, random reads by SQL statement",
        rule: Rule::AtLeast(1.0),
        rerun: None,
        measure: |t| ftfs_ratio(t, "chart 1: read, SQL statement"),
    },
    Claim {
        id: "001-read-mmap-2x",
        document: "001",
        place: "section 2.1, chart 3",
        words: "reading blob content out of SQLite can be twice as fast as reading from individual files on disk for Mac and Android",
        published: "2x (Mac, Android); 10x (Windows)",
        experiment: Experiment::FasterThanFs,
        figure: "flat folder / database time per blob, blob API on a memory-mapped database",
        rule: Rule::AtLeast(2.0),
        rerun: None,
        measure: |t| ftfs_ratio(t, "chart 3: read, blob API + mmap"),
    },
    Claim {
        id: "001-write-35",
        document: "001",
        place: "headline; section 2.2, chart 4",
        words: "SQLite reads and writes small blobs (for example, thumbnail images) 35% faster than the same blobs can be read from or written to individual files on disk",
        published: "1.35x (file write time / database write time)",
        experiment: Experiment::FasterThanFs,
        figure: "flat folder (fopen wb) / database (WAL + NORMAL) time per overwrite, checkpoint excluded",
        rule: Rule::AtLeast(1.35),
        rerun: None,
        measure: |t| ftfs_ratio(t, "chart 4: update WAL+NORMAL vs fopen wb"),
    },
    Claim {
        id: "001-write-unsafe",
        document: "001",
        place: "section 2.2, chart 5",
        words: "transactions are disabled (PRAGMA journal_mode=OFF) and PRAGMA synchronous is set to OFF. These settings put SQLite on an equal footing with direct-to-disk writes",
        published: "SQLite faster than direct writes (chart 5; 'competitive with, and usually faster')",
        experiment: Experiment::FasterThanFs,
        figure: "flat folder / database time per overwrite, journal OFF and synchronous OFF",
        rule: Rule::AtLeast(1.0),
        rerun: None,
        measure: |t| ftfs_ratio(t, "chart 5: journal OFF, sync OFF vs fopen wb"),
    },
    Claim {
        id: "001-space-20",
        document: "001",
        place: "headline; section 1",
        words: "a single SQLite database holding 10-kilobyte blobs uses about 20% less disk space than storing the blobs in individual files",
        published: "1.20x (1,228,800,000 bytes of files / 1,024,512,000 bytes of database)",
        experiment: Experiment::FasterThanFs,
        figure: "du of the flat folder / du of the database (one figure, no rounds)",
        rule: Rule::AtLeast(1_228_800_000.0 / 1_024_512_000.0),
        rerun: None,
        measure: ftfs_space,
    },
    Claim {
        id: "001-write-read-sqlite",
        document: "001",
        place: "section 2.2; conclusion 3",
        words: "On all systems, using both direct I/O and SQLite, write performance is between 5 and 15 times slower than reads.",
        published: "5x-15x (write time / read time), SQLite",
        experiment: Experiment::FasterThanFs,
        figure: "the database's overwrite time (WAL + NORMAL) / its read time (SQL), per blob, paired by round",
        rule: Rule::Between(5.0, 15.0),
        rerun: None,
        measure: |t| ftfs_write_read(t, "SQLite"),
    },
    Claim {
        id: "001-write-read-files",
        document: "001",
        place: "section 2.2; conclusion 3",
        words: "Reading is about an order of magnitude faster than writing, for all systems and for both SQLite and direct-to-disk I/O.",
        published: "5x-15x (write time / read time), files",
        experiment: Experiment::FasterThanFs,
        figure: "the flat folder's overwrite time (fopen wb) / its read time, per blob, paired by round",
        rule: Rule::Between(5.0, 15.0),
        rerun: None,
        measure: |t| ftfs_write_read(t, "dir"),
    },
    Claim {
        id: "001-fsync-10x",
        document: "001",
        place: "section 2.2",
        words: "invoking fsync() or FlushFileBuffers() on each file written causes direct-to-disk storage to be about 10 times or more slower than writes to SQLite",
        published: "10x or more (file write time with fsync / database write time)",
        experiment: Experiment::FasterThanFs,
        figure: "flat folder with fsync per file / database (WAL + FULL, one transaction, checkpoint included) time per overwrite",
        rule: Rule::AtLeast(10.0),
        rerun: None,
        measure: |t| ftfs_ratio(t, "fair: WAL+FULL 1 txn vs fopen wb + fsync"),
    },
    Claim {
        id: "001-multitrans",
        document: "001",
        place: "section 1 (kvtest --multitrans)",
        words: "The --multitrans option makes SQLite much slower, and uncompetitive with direct disk I/O.",
        published: "below 1.0x (file time / database time)",
        experiment: Experiment::FasterThanFs,
        figure: "flat folder / database time per blob, SQL reads with one transaction per read",
        rule: Rule::Below(1.0),
        rerun: None,
        measure: |t| ftfs_ratio(t, "read, SQL, txn per read"),
    },
    // 002: the 2008 large-object benchmark.
    Claim {
        id: "002-write-mysql-first",
        document: "002",
        place: "section 5.1, Figures 18-19",
        words: "We observe that MySQL has by far the best results, and very stable over the complete range. PostgreSQL shows a similar behavior, but substantially slower.",
        published: "PostgreSQL write time / MySQL write time above 1 (plots, no values)",
        experiment: Experiment::Lob,
        figure: "PostgreSQL / MariaDB time per blob written, each its fastest storage, paired by size and blob, all sizes",
        rule: Rule::AtLeast(1.0),
        rerun: None,
        measure: |t| lob_pg_over_mysql(t, &["write"]),
    },
    Claim {
        id: "002-read-mysql-first",
        document: "002",
        place: "section 5.2, Figures 20-21",
        words: "The overall ranking is as before: MySQL followed by PostgreSQL, then SystemB (except for the spikes), finally SystemA.",
        published: "PostgreSQL read time / MySQL read time above 1 (plots, no values)",
        experiment: Experiment::Lob,
        figure: "PostgreSQL / MariaDB time per blob read, each its fastest storage, paired by size and blob, all sizes",
        rule: Rule::AtLeast(1.0),
        rerun: None,
        measure: |t| lob_pg_over_mysql(t, &["read"]),
    },
    Claim {
        id: "002-mysql-champion",
        document: "002",
        place: "section 6",
        words: "open-source DBMSs outperform commercial DBMSs in most situations, with MySQL being the clear champion",
        published: "MySQL fastest of the four systems (plots, no values)",
        experiment: Experiment::Lob,
        figure: "PostgreSQL / MariaDB time per blob, writes and reads together, paired by size and blob",
        rule: Rule::AtLeast(1.0),
        rerun: None,
        measure: |t| lob_pg_over_mysql(t, &["write", "read"]),
    },
    Claim {
        id: "002-mysql-best-size",
        document: "002",
        place: "section 6, Figure 22",
        words: "For the champion, MySQL, there is a weak minimum at a BLOB size of about 100K to 1M.",
        published: "100K-1M (time to read 1 GB, extrapolated from the mean)",
        experiment: Experiment::Lob,
        figure: "the blob size with the shortest time to read 1 GB, from the mean per blob as the paper extrapolates (no interval), MariaDB's fastest engine",
        rule: Rule::Choice,
        rerun: None,
        measure: |t| lob_best_size(t, MYSQL, "--mysql URL", 100_000, 1_000_000),
    },
    Claim {
        id: "002-pg-best-size",
        document: "002",
        place: "section 6, Figure 22",
        words: "Both PostgreSQL and SystemB seem to have its best performance with somewhat larger BLOBs, between 1M and 10M.",
        published: "1M-10M (time to read 1 GB)",
        experiment: Experiment::Lob,
        figure: "the blob size with the shortest time to read 1 GB, from the mean (no interval), PostgreSQL's faster storage",
        rule: Rule::Choice,
        rerun: None,
        measure: |t| lob_best_size(t, PG, "--pg URL", 1_000_000, 10_000_000),
    },
    Claim {
        id: "002-pg-write-50k",
        document: "002",
        place: "section 4.3",
        words: "The threshold at which write time starts to increase significantly with BLOB size is about 50K.",
        published: "about 50K",
        experiment: Experiment::Lob,
        figure: "the smallest size from which PostgreSQL's median write time stays 1.5x above its smallest size's (large objects), between the paper's neighbours 10K and 100K",
        rule: Rule::Choice,
        rerun: None,
        measure: |t| lob_growth(t, &["postgres lo"], "--pg URL", "write"),
    },
    Claim {
        id: "002-pg-read-50-100k",
        document: "002",
        place: "section 4.3",
        words: "The threshold where we observe that read time tends to depend on the BLOB size is about 50-100K.",
        published: "about 50-100K",
        experiment: Experiment::Lob,
        figure: "the smallest size from which PostgreSQL's median read time stays 1.5x above its smallest size's (large objects), between 10K and 100K",
        rule: Rule::Choice,
        rerun: None,
        measure: |t| lob_growth(t, &["postgres lo"], "--pg URL", "read"),
    },
    Claim {
        id: "002-size-beyond-50k",
        document: "002",
        place: "section 6",
        words: "BLOB performance started to depend only on BLOB size once the basic tuning and sizing parameters are exceeded sufficiently, that is: beyond 50k.",
        published: "beyond 50k",
        experiment: Experiment::Lob,
        figure: "for every system measured (sqlite and dir always), the smallest size from which its median time stays 1.5x above its smallest size's, writes and reads: all between 10K and 100K",
        rule: Rule::Choice,
        rerun: None,
        measure: lob_every_growth,
    },
    Claim {
        id: "002-db-below-256k",
        document: "002",
        place: "section 1, quoting Sears, van Ingen, Gray (2006)",
        words: "they conclude that BLOBs of less than 256KB should be stored in a database",
        published: "below 256 KB: the database faster",
        experiment: Experiment::Lob,
        figure: "dir / sqlite time per blob read at the largest size at or below 256 KB measured, paired by blob",
        rule: Rule::AtLeast(1.0),
        rerun: None,
        measure: |t| lob_files_over_db(t, false),
    },
    Claim {
        id: "002-files-above-1m",
        document: "002",
        place: "section 1, quoting Sears, van Ingen, Gray (2006)",
        words: "while BLOBs over about one MB are more efficiently handled by a file system",
        published: "above about 1 MB: the file system faster",
        experiment: Experiment::Lob,
        figure: "dir / sqlite time per blob read at every size of 1 MB or more measured, paired by size and blob",
        rule: Rule::Below(1.0),
        rerun: None,
        measure: |t| lob_files_over_db(t, true),
    },
    Claim {
        id: "002-fragments-with-age",
        document: "002",
        place: "section 1, quoting Sears, van Ingen, Gray: they 'compare DBMS and file system by addressing fragmentation'",
        words: "In [7] authors compare DBMS and file system by addressing fragmentation",
        published: "the database fragments as its blobs are overwritten (storage age)",
        experiment: Experiment::Aging,
        figure: "the SQLite layout's mean fragments per blob (its largest blob size) at its last storage age, before any VACUUM, against age 0 (a count, no interval)",
        rule: Rule::Choice,
        rerun: None,
        measure: aging_fragments,
    },
    // 003: the blog.
    Claim {
        id: "003-files-2.3x",
        document: "003",
        place: "the paragraph under the two plots",
        words: "The possible throughput (transaction/second) of the filesystem is ~2.3 times higher.",
        published: "2.3x (files' requests/s / SQLite's, at the files' best level)",
        experiment: Experiment::Http,
        figure: "dir / sqlite-blog requests/s at the level where dir serves the most, paired by round (\"about\": within 1.25x of 2.3)",
        rule: Rule::Between(
            BLOG_FILES_OVER_SQLITE / ABOUT,
            BLOG_FILES_OVER_SQLITE * ABOUT,
        ),
        rerun: None,
        measure: http_files_over_db,
    },
    Claim {
        id: "003-low-load-small",
        document: "003",
        place: "the paragraph under the two plots",
        words: "For a low throughput system (such as my blog) the difference between SQLite and the filesystem is small enough to not care about.",
        published: "a small difference at concurrency 1 (plots, no value)",
        experiment: Experiment::Http,
        figure: "dir / sqlite-blog requests/s at the lowest concurrency level, paired by round (small: within 1.25x)",
        rule: Rule::Between(1.0 / ABOUT, ABOUT),
        rerun: None,
        measure: http_low_load,
    },
    Claim {
        id: "003-latency-grows-slower",
        document: "003",
        place: "the paragraph under the two plots",
        words: "The response time grows slower with increased concurrency.",
        published: "the files' response time grows slower than SQLite's (plots, no value)",
        experiment: Experiment::Http,
        figure: "sqlite-blog's growth of mean response time from the lowest to the highest level / dir's, paired by round",
        rule: Rule::AtLeast(1.0),
        rerun: None,
        measure: http_latency_growth,
    },
    // 004: testing all parameters.
    Claim {
        id: "004-nomutex",
        document: "004",
        place: "Insert 500,000 rows twice (SSD)",
        words: "NOMUTEX is consistently faster than FULLMUTEX",
        published: "NOMUTEX faster (every top-10 case of the 50,000-row runs is NOMUTEX)",
        experiment: Experiment::Sweep,
        figure: "FULLMUTEX / NOMUTEX insert time (per round the median over the cases having each), paired by round",
        rule: Rule::AtLeast(1.0),
        rerun: Some("blobbench sweep --experiment 2"),
        measure: |t| sweep_ratio(t, false, &[], "open_mode", "fullmutex", "nomutex"),
    },
    Claim {
        id: "004-large-page",
        document: "004",
        place: "Insert 50,000 rows (SSD)",
        words: "A large page size (8192 KB) seems to be in common with faster inserts.",
        published: "page size 8192 in every top-10 case (113.7-116.2 ms)",
        experiment: Experiment::Sweep,
        figure: "page size 1024 / 8192 insert time, paired by round",
        rule: Rule::AtLeast(1.0),
        rerun: Some("blobbench sweep --experiment 1"),
        measure: |t| sweep_ratio(t, false, &[], "page_size", "1024", "8192"),
    },
    Claim {
        id: "004-truncate-inserts",
        document: "004",
        place: "Insert 50,000 rows twice; Insert 500,000 rows twice (SSD)",
        words: "The takeaway is that TRUNCATE journal mode beats WAL on an SSD when purely inserting.",
        published: "TRUNCATE faster (199.2 ms fastest; WAL cases 418-845 ms)",
        experiment: Experiment::Sweep,
        figure: "WAL / TRUNCATE insert time, paired by round",
        rule: Rule::AtLeast(1.0),
        rerun: Some("blobbench sweep --experiment 2"),
        measure: |t| sweep_ratio(t, false, &[], "journal_mode", "wal", "truncate"),
    },
    Claim {
        id: "004-wal-copy",
        document: "004",
        place: "Insert, copy 50,000 rows 10x (SSD)",
        words: "Journal mode WAL edged out TRUNCATE for this scenario.",
        published: "WAL faster (1.554 s fastest, WAL)",
        experiment: Experiment::Sweep,
        figure: "TRUNCATE / WAL insert-and-copy time, paired by round",
        rule: Rule::AtLeast(1.0),
        rerun: Some("blobbench sweep --experiment 6"),
        measure: |t| sweep_ratio(t, true, &[], "journal_mode", "truncate", "wal"),
    },
    Claim {
        id: "004-normal-vs-full",
        document: "004",
        place: "Insert, copy 500,000 rows 10x: Full vs. Normal Sync (SSD); Results",
        words: "NORMAL synchronous mode is much faster. ... NORMAL was clearly faster (27.5s vs. 35.7s).",
        published: "1.29x (35.65 s / 27.53 s, FULL / NORMAL, WAL)",
        experiment: Experiment::Sweep,
        figure: "synchronous FULL / NORMAL insert-and-copy time in WAL mode, paired by round",
        rule: Rule::AtLeast(1.0),
        rerun: Some("blobbench sweep --experiment 8"),
        measure: |t| {
            sweep_ratio(
                t,
                true,
                &[("journal_mode", "wal")],
                "synchronous",
                "full",
                "normal",
            )
        },
    },
    Claim {
        id: "004-locking-no-impact",
        document: "004",
        place: "Results: Locking mode",
        words: "Locking mode had no noticeable impact on performance due to the single-thread-per-database model",
        published: "no noticeable impact (EXCLUSIVE / NORMAL about 1.0)",
        experiment: Experiment::Sweep,
        figure: "locking_mode EXCLUSIVE / NORMAL insert time, paired by round (no impact: within 1.10x)",
        rule: Rule::Between(1.0 / NO_IMPACT, NO_IMPACT),
        rerun: Some("blobbench sweep --experiment 4"),
        measure: |t| sweep_ratio(t, false, &[], "locking_mode", "exclusive", "normal"),
    },
    Claim {
        id: "004-transaction-no-difference",
        document: "004",
        place: "Results: Transaction mode",
        words: "There is no performance difference between this [IMMEDIATE] and an exclusive transaction here.",
        published: "no difference (EXCLUSIVE / IMMEDIATE about 1.0)",
        experiment: Experiment::Sweep,
        figure: "transaction EXCLUSIVE / IMMEDIATE insert time, paired by round (no difference: within 1.10x)",
        rule: Rule::Between(1.0 / NO_IMPACT, NO_IMPACT),
        rerun: Some("blobbench sweep --experiment 4"),
        measure: |t| sweep_ratio(t, false, &[], "transaction", "exclusive", "immediate"),
    },
    Claim {
        id: "004-cache-no-effect",
        document: "004",
        place: "Results: Journal mode",
        words: "The cache size didn't affect performance so I capped it at 1000 pages.",
        published: "no effect (8000 / 1000 pages about 1.0)",
        experiment: Experiment::Sweep,
        figure: "cache_size 8000 / 1000 pages insert time, paired by round (no effect: within 1.10x)",
        rule: Rule::Between(1.0 / NO_IMPACT, NO_IMPACT),
        rerun: Some("blobbench sweep"),
        measure: |t| sweep_ratio(t, false, &[], "cache_size", "8000", "1000"),
    },
];

/// Evaluates one claim against its experiment's result; `why_not` says
/// why there is none (the experiment did not run or failed).
pub fn evaluate(
    claim: &Claim,
    result: Option<&ResultDocument>,
    why_not: &str,
    scale: &str,
) -> ClaimRow {
    let figure = match result {
        Some(doc) => (claim.measure)(&doc.tables),
        None => Err(why_not.to_string()),
    };
    let (measured, measured_text, verdict) = match &figure {
        Ok(f @ Figure::Number(e)) => (Some(*e), e.format_ratio(), claim.rule.judge(f)),
        Ok(f @ Figure::Choice { text, .. }) => (None, text.clone(), claim.rule.judge(f)),
        Err(why) => (None, format!("not run: {why}"), ClaimVerdict::NotRun),
    };
    ClaimRow {
        id: claim.id.into(),
        document: claim.document.into(),
        title: title(claim.document).into(),
        place: claim.place.into(),
        words: claim.words.into(),
        published: claim.published.into(),
        figure: claim.figure.into(),
        rule: claim.rule.text(),
        measured,
        measured_text,
        verdict,
        experiment: claim.experiment.command().into(),
        scale: scale.into(),
        rerun: claim.rerun.unwrap_or(claim.experiment.full_scale()).into(),
    }
}

// ---- fasterthanfs (001) ----

fn ftfs(t: &Tables) -> Result<&FasterThanFsTables, String> {
    match t {
        Tables::FasterThanFs(t) => Ok(t),
        _ => Err("not a suite fasterthanfs result".into()),
    }
}

/// The flat folder's ratio (file time / database time) of the row `case`.
fn ftfs_ratio(t: &Tables, case: &str) -> Result<Figure, String> {
    let t = ftfs(t)?;
    t.fasterthanfs
        .iter()
        .find_map(|r| match r {
            FasterThanFsRow::Timed(r) if r.case == case => {
                Some(Figure::Number(r.dir_over_db.ratio(t.rounds)))
            }
            _ => None,
        })
        .ok_or_else(|| format!("the result has no row \"{case}\""))
}

fn ftfs_space(t: &Tables) -> Result<Figure, String> {
    let t = ftfs(t)?;
    t.fasterthanfs
        .iter()
        .find_map(|r| match r {
            FasterThanFsRow::Space(s) => Some(Figure::Number(Estimate::point(s.dir_over_db, 1))),
            _ => None,
        })
        .ok_or_else(|| "the result has no disk space row".into())
}

fn ftfs_write_read(t: &Tables, storage: &str) -> Result<Figure, String> {
    let t = ftfs(t)?;
    t.read_write
        .iter()
        .find(|r| r.storage == storage)
        .map(|r| Figure::Number(r.write_over_read.ratio(t.rounds)))
        .ok_or_else(|| format!("the result has no write/read row for {storage}"))
}

// ---- internal-external (000) ----

fn ie(t: &Tables) -> Result<&InternalExternalTables, String> {
    match t {
        Tables::InternalExternal(t) => Ok(t),
        _ => Err("not a suite internal-external result".into()),
    }
}

/// The page size measured nearest 8192 (the study's best).
fn page_near_8192(t: &InternalExternalTables) -> Option<u32> {
    t.page_sizes()
        .into_iter()
        .min_by_key(|p| (i64::from(*p) - 8192).abs())
}

/// The cell at the edge of 100 KB: the largest size below it (`below`) or
/// the smallest above it, at page size 8192.
fn ie_edge(t: &Tables, below: bool) -> Result<Figure, String> {
    let t = ie(t)?;
    let sizes = t.sizes();
    let size = if below {
        sizes.iter().copied().filter(|&s| s < 100_000).max()
    } else {
        sizes.iter().copied().filter(|&s| s > 100_000).min()
    }
    .ok_or_else(|| {
        format!(
            "no blob size {} 100 KB was measured",
            if below { "below" } else { "above" }
        )
    })?;
    let page = page_near_8192(t).ok_or("no page size was measured")?;
    t.cell(size, page)
        .map(|c| Figure::Number(c.ratio_estimate()))
        .ok_or_else(|| format!("no cell at {size} bytes, page size {page}"))
}

fn ie_best_page(t: &Tables) -> Result<Figure, String> {
    let t = ie(t)?;
    let pages = t.page_sizes();
    if !pages.contains(&8192) && !pages.contains(&16384) {
        return Err("page sizes 8192 and 16384 were not measured".into());
    }
    let choice = t.page_choice();
    let in_claim = matches!(choice.chosen, 8192 | 16384);
    let text = if choice.within_noise {
        format!("{} (within noise of the others)", choice.chosen)
    } else {
        format!("{} (beyond noise)", choice.chosen)
    };
    Ok(Figure::Choice {
        text,
        in_claim,
        firm: !choice.within_noise,
    })
}

// ---- lob (002) ----

const PG: &[&str] = &["postgres lo", "postgres bytea"];
const MYSQL: &[&str] = &["mariadb innodb", "mariadb myisam", "mariadb archive"];

fn lob(t: &Tables) -> Result<&LobTables, String> {
    match t {
        Tables::Lob(t) => Ok(t),
        _ => Err("not a suite lob result".into()),
    }
}

/// The samples of `system` at `size` in `phase`, ns.
fn lob_samples(t: &LobTables, system: &str, size: u64, phase: &str) -> Vec<f64> {
    t.samples(system, size)
        .map(|s| {
            if phase == "write" {
                &s.write_ns
            } else {
                &s.read_ns
            }
        })
        .map(|v| v.iter().map(|&n| n as f64).collect())
        .unwrap_or_default()
}

/// Of `systems`, the one measured here with the lowest sum of median
/// times over every size and phase (the paper used each system's best
/// setup); None when none ran.
fn fastest_of(t: &LobTables, systems: &[&str]) -> Option<String> {
    let measured = t.measured();
    systems
        .iter()
        .filter(|s| measured.iter().any(|m| m == *s) && t.failure(s).is_none())
        .map(|s| {
            let total: f64 = ["write", "read"]
                .iter()
                .flat_map(|p| t.medians(s, p))
                .map(|(_, m)| m)
                .sum();
            (s.to_string(), total)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(s, _)| s)
}

/// `a`'s samples over `b`'s, paired by size, phase and blob (the i-th blob
/// of a size is the same blob in every system), at the sizes `keep` takes.
fn paired_samples(
    t: &LobTables,
    a: &str,
    b: &str,
    phases: &[&str],
    keep: impl Fn(u64) -> bool,
) -> Option<Estimate> {
    let (mut num, mut den) = (Vec::new(), Vec::new());
    for size in t.sizes().into_iter().filter(|&s| keep(s)) {
        for phase in phases {
            let (x, y) = (
                lob_samples(t, a, size, phase),
                lob_samples(t, b, size, phase),
            );
            for (p, q) in x.iter().zip(&y) {
                num.push(*p);
                den.push(*q);
            }
        }
    }
    (!num.is_empty()).then(|| paired_ratio(&num, &den))
}

fn lob_pg_over_mysql(t: &Tables, phases: &[&str]) -> Result<Figure, String> {
    let t = lob(t)?;
    let (pg, my) = match (fastest_of(t, PG), fastest_of(t, MYSQL)) {
        (Some(pg), Some(my)) => (pg, my),
        (None, None) => {
            return Err(
                "PostgreSQL and MariaDB/MySQL not measured: give --pg URL and --mysql URL".into(),
            );
        }
        (None, _) => return Err("PostgreSQL not measured: give --pg URL".into()),
        (_, None) => return Err("MariaDB/MySQL not measured: give --mysql URL".into()),
    };
    paired_samples(t, &pg, &my, phases, |_| true)
        .map(Figure::Number)
        .ok_or_else(|| format!("{pg} and {my} share no size"))
}

fn lob_best_size(
    t: &Tables,
    systems: &[&str],
    option: &str,
    low: u64,
    high: u64,
) -> Result<Figure, String> {
    let t = lob(t)?;
    let system = fastest_of(t, systems).ok_or_else(|| format!("not measured: give {option}"))?;
    let best = t
        .best_size
        .iter()
        .find(|b| b.system == system)
        .ok_or_else(|| format!("{system}: no best size recorded"))?;
    let sizes = t.sizes();
    let edge = sizes.iter().max() == Some(&best.size) || sizes.iter().min() == Some(&best.size);
    Ok(Figure::Choice {
        text: format!(
            "{system}: {} ({:.2} s per GB{})",
            crate::units::human_bytes(best.size),
            best.seconds_per_gb,
            if edge {
                ", an edge of the sizes measured"
            } else {
                ""
            }
        ),
        in_claim: (low..=high).contains(&best.size),
        firm: best_size_decides(best.size, &sizes, low, high),
    })
}

/// Whether a best size decides a claim of a best between `low` and `high`.
/// A best at an edge of the sizes measured may only be the best of those
/// tried: where the claim's range reaches past that edge, the sizes beyond
/// it were never measured and the choice decides nothing.
fn best_size_decides(best: u64, sizes: &[u64], low: u64, high: u64) -> bool {
    let largest = sizes.iter().max() == Some(&best);
    let smallest = sizes.iter().min() == Some(&best);
    !((largest && high > best) || (smallest && low < best))
}

/// Whether a growth size is "about 50K": above the paper's 10K, at most 100K.
fn about_50k(size: Option<u64>) -> bool {
    size.is_some_and(|s| s > 10_000 && s <= 100_000)
}

fn growth_text(system: &str, phase: &str, size: Option<u64>) -> String {
    match size {
        Some(s) => format!("{system} {phase} from {}", crate::units::human_bytes(s)),
        None => format!("{system} {phase} flat"),
    }
}

fn lob_growth(t: &Tables, systems: &[&str], option: &str, phase: &str) -> Result<Figure, String> {
    let t = lob(t)?;
    let system = systems
        .iter()
        .find(|s| t.measured().iter().any(|m| m == *s))
        .ok_or_else(|| format!("not measured: give {option}"))?;
    let g = t
        .growth_of(system, phase)
        .ok_or_else(|| format!("{system}: no {phase} samples"))?;
    Ok(Figure::Choice {
        text: growth_text(system, phase, g.size),
        in_claim: about_50k(g.size),
        firm: true,
    })
}

fn lob_every_growth(t: &Tables) -> Result<Figure, String> {
    let t = lob(t)?;
    let mut texts = Vec::new();
    let mut all = true;
    for system in t.measured() {
        for phase in ["write", "read"] {
            if let Some(g) = t.growth_of(&system, phase) {
                all &= about_50k(g.size);
                texts.push(growth_text(&system, phase, g.size));
            }
        }
    }
    if texts.is_empty() {
        return Err("no system was measured".into());
    }
    Ok(Figure::Choice {
        text: texts.join("; "),
        in_claim: all,
        firm: true,
    })
}

fn lob_files_over_db(t: &Tables, large: bool) -> Result<Figure, String> {
    let t = lob(t)?;
    let sizes = t.sizes();
    let figure = if large {
        if !sizes.iter().any(|&s| s >= 1_000_000) {
            return Err("no size of 1 MB or more was measured".into());
        }
        paired_samples(t, "dir", "sqlite", &["read"], |s| s >= 1_000_000)
    } else {
        let edge = sizes
            .iter()
            .copied()
            .filter(|&s| s <= 256_000)
            .max()
            .ok_or("no size at or below 256 KB was measured")?;
        paired_samples(t, "dir", "sqlite", &["read"], |s| s == edge)
    };
    figure
        .map(Figure::Number)
        .ok_or_else(|| "sqlite and dir were not both measured".into())
}

// ---- http (003) ----

fn http(t: &Tables) -> Result<&HttpTables, String> {
    match t {
        Tables::Http(t) => Ok(t),
        _ => Err("not a suite http result".into()),
    }
}

fn http_files_over_db(t: &Tables) -> Result<Figure, String> {
    let b = http(t)?
        .blog_beside()
        .ok_or("no dir and sqlite systems measured")?;
    Ok(Figure::Number(b.ratio))
}

fn http_low_load(t: &Tables) -> Result<Figure, String> {
    let t = http(t)?;
    let (dir, db) = http_pair(t)?;
    dir.ratio_to(db, 0)
        .map(Figure::Number)
        .ok_or_else(|| "no level was measured".into())
}

fn http_pair(
    t: &HttpTables,
) -> Result<
    (
        &crate::result::http::HttpSystem,
        &crate::result::http::HttpSystem,
    ),
    String,
> {
    let dir = t.http.iter().find(|s| s.system == "dir");
    let db = t
        .http
        .iter()
        .find(|s| s.system == "sqlite-blog")
        .or_else(|| t.http.iter().find(|s| s.system.starts_with("sqlite")));
    dir.zip(db)
        .ok_or_else(|| "no dir and sqlite systems".into())
}

fn http_latency_growth(t: &Tables) -> Result<Figure, String> {
    let t = http(t)?;
    let (dir, db) = http_pair(t)?;
    let last =
        t.levels().checked_sub(1).filter(|&l| l > 0).ok_or(
            "one concurrency level only: the growth needs two (a larger --budget runs more)",
        )?;
    let growth = |s: &crate::result::http::HttpSystem| -> Vec<f64> {
        let (lo, hi) = (s.rounds.first(), s.rounds.get(last));
        lo.zip(hi)
            .map(|(lo, hi)| {
                lo.iter()
                    .zip(hi)
                    .map(|(a, b)| b.mean_ns / a.mean_ns)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (g_db, g_dir) = (growth(db), growth(dir));
    if g_db.is_empty() || g_db.len() != g_dir.len() {
        return Err("the result has no rounds per level".into());
    }
    Ok(Figure::Number(paired_ratio(&g_db, &g_dir)))
}

// ---- sweep (004) ----

/// `a`'s time over `b`'s for `param` on the insert (or insert-and-copy)
/// workload, among the cases having every `fixed` value: per round the
/// median over the cases having each value, paired by round.
fn sweep_ratio(
    t: &Tables,
    copy: bool,
    fixed: &[(&str, &str)],
    param: &str,
    a: &str,
    b: &str,
) -> Result<Figure, String> {
    let Tables::Sweep(SweepTables { sweep }) = t else {
        return Err("not a sweep result".into());
    };
    let varied = |name: &str, value: &str| {
        sweep
            .plan
            .params
            .iter()
            .any(|p| p.name == name && p.values.iter().any(|v| v == value))
    };
    if !varied(param, a) || !varied(param, b) {
        return Err(format!(
            "the sweep at this budget did not vary {param} (a larger --budget does)"
        ));
    }
    let workload_ok = |w: &Workload| match w {
        Workload::InsertCopy { .. } => copy,
        Workload::Insert { .. } => !copy,
        _ => false,
    };
    let has = |case: &[(String, String)], name: &str, value: &str| {
        case.iter().any(|(n, v)| n == name && v == value)
    };
    let mut rounds: Vec<u64> = sweep.records.iter().map(|r| r.round).collect();
    rounds.sort_unstable();
    rounds.dedup();
    let per_round = |value: &str, round: u64| -> Option<f64> {
        let times: Vec<f64> = sweep
            .records
            .iter()
            .filter(|r| r.round == round && workload_ok(&r.workload))
            .filter(|r| has(&r.case, param, value))
            .filter(|r| fixed.iter().all(|(n, v)| has(&r.case, n, v)))
            .map(|r| r.timing.ns as f64)
            .collect();
        (!times.is_empty()).then(|| summarize(&times).median)
    };
    let (num, den): (Vec<f64>, Vec<f64>) = rounds
        .iter()
        .filter_map(|&r| per_round(a, r).zip(per_round(b, r)))
        .unzip();
    if num.is_empty() {
        return Err(format!(
            "no {} run measured {param}",
            if copy { "insert-copy" } else { "insert" }
        ));
    }
    Ok(Figure::Number(paired_ratio(&num, &den)))
}

// ---- aging (the study document 002 quotes) ----

fn aging_fragments(t: &Tables) -> Result<Figure, String> {
    let Tables::Aging(t) = t else {
        return Err("not a suite aging result".into());
    };
    // The largest blobs: where the study saw fragmentation decide.
    let series = t
        .series
        .iter()
        .filter(|s| s.layout == "sqlite" && s.points.len() > 1)
        .max_by_key(|s| s.sizes.max)
        .ok_or("no sqlite series was aged")?;
    let fresh = &series.points[0];
    let aged = series
        .points
        .iter()
        .rev()
        .find(|p| !p.vacuumed)
        .filter(|p| p.age > fresh.age)
        .ok_or("the sqlite series has no aged point")?;
    Ok(Figure::Choice {
        text: format!(
            "{:.1} -> {:.1} fragments per blob (age {:.0} -> {:.1}, {})",
            fresh.fragments.mean,
            aged.fragments.mean,
            fresh.age,
            aged.age,
            series.sizes.label()
        ),
        in_claim: aged.fragments.mean > fresh.fragments.mean,
        firm: fresh.fragments.unavailable.is_none() && aged.fragments.unavailable.is_none(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::estimate::Method;

    #[test]
    fn a_best_size_at_an_edge_the_claim_reaches_past_decides_nothing() {
        let sizes = [100_000, 1_000_000];
        // PostgreSQL "best 1M-10M": 1 MB is the largest tried; 10 MB never was.
        assert!(!best_size_decides(1_000_000, &sizes, 1_000_000, 10_000_000));
        // The same best decides a claim that ends at the edge...
        assert!(best_size_decides(1_000_000, &sizes, 100_000, 1_000_000));
        // ...and a best inside the sizes decides either way.
        let wide = [10_000, 100_000, 1_000_000, 10_000_000];
        assert!(best_size_decides(100_000, &wide, 1_000_000, 10_000_000));
        assert!(best_size_decides(1_000_000, &wide, 1_000_000, 10_000_000));
        // The smallest tried, under a claim reaching below it, decides nothing.
        assert!(!best_size_decides(100_000, &sizes, 10_000, 100_000));
    }

    fn e(low: f64, value: f64, high: f64) -> Figure {
        e_over(low, value, high, Method::PairedLogOrderStatistic)
    }

    fn e_over(low: f64, value: f64, high: f64, method: Method) -> Figure {
        Figure::Number(Estimate {
            value,
            low,
            high,
            n: 6,
            method,
            coverage: Some(0.96875),
        })
    }

    #[test]
    fn verdicts_follow_the_whole_interval_and_what_a_rerun_could_move() {
        let at_least = Rule::AtLeast(1.35);
        // 1.50/1.10 = 1.36: past the claim's figure even if a rerun moves it 10%.
        assert_eq!(at_least.judge(&e(1.5, 1.6, 1.7)), ClaimVerdict::Holds);
        // Wholly past it, but a rerun could land below: not firm.
        assert_eq!(
            at_least.judge(&e(1.4, 1.5, 1.6)),
            ClaimVerdict::Inconclusive
        );
        assert_eq!(
            at_least.judge(&e(1.2, 1.5, 1.6)),
            ClaimVerdict::Inconclusive
        );
        assert_eq!(at_least.judge(&e(1.0, 1.1, 1.2)), ClaimVerdict::DoesNotHold);
        assert_eq!(
            at_least.judge(&e(1.0, 1.1, 1.3)),
            ClaimVerdict::Inconclusive
        );
        // Between independent runs the interval carries a rerun's movement.
        let between_runs = |l, v, h| e_over(l, v, h, Method::BetweenRuns);
        assert_eq!(
            at_least.judge(&between_runs(1.4, 1.5, 1.6)),
            ClaimVerdict::Holds
        );
        assert_eq!(
            at_least.judge(&between_runs(1.0, 1.1, 1.3)),
            ClaimVerdict::DoesNotHold
        );
        // A figure without an interval (disk space) by its value.
        let space = Figure::Number(Estimate::point(1.36, 1));
        assert_eq!(at_least.judge(&space), ClaimVerdict::Holds);
        let below = Rule::Below(1.0);
        assert_eq!(below.judge(&e(0.7, 0.8, 0.9)), ClaimVerdict::Holds);
        assert_eq!(below.judge(&e(0.8, 0.9, 0.95)), ClaimVerdict::Inconclusive);
        assert_eq!(below.judge(&e(0.9, 1.0, 1.1)), ClaimVerdict::Inconclusive);
        assert_eq!(below.judge(&e(1.15, 1.2, 1.3)), ClaimVerdict::DoesNotHold);
        assert_eq!(below.judge(&e(1.0, 1.1, 1.2)), ClaimVerdict::Inconclusive);
        // A range holds on the plain interval inside it (the range is the
        // claim's own allowance), and fails on the widened one outside it.
        let range = Rule::Between(5.0, 15.0);
        assert_eq!(range.judge(&e(5.0, 8.0, 15.0)), ClaimVerdict::Holds);
        assert_eq!(range.judge(&e(4.0, 8.0, 14.0)), ClaimVerdict::Inconclusive);
        assert_eq!(range.judge(&e(1.0, 2.0, 3.0)), ClaimVerdict::DoesNotHold);
        assert_eq!(range.judge(&e(4.0, 4.2, 4.6)), ClaimVerdict::Inconclusive);
        assert_eq!(range.judge(&e(17.0, 20.0, 30.0)), ClaimVerdict::DoesNotHold);
        assert_eq!(
            range.judge(&e(16.0, 20.0, 30.0)),
            ClaimVerdict::Inconclusive
        );
        let choice = |in_claim, firm| Figure::Choice {
            text: String::new(),
            in_claim,
            firm,
        };
        assert_eq!(Rule::Choice.judge(&choice(true, true)), ClaimVerdict::Holds);
        assert_eq!(
            Rule::Choice.judge(&choice(false, true)),
            ClaimVerdict::DoesNotHold
        );
        assert_eq!(
            Rule::Choice.judge(&choice(true, false)),
            ClaimVerdict::Inconclusive
        );
    }

    /// The documents' claims as read from them (short quotes), written
    /// here apart from the ledger: each must be in the ledger, by its words.
    const READ_FROM_THE_DOCUMENTS: &[(&str, &str)] = &[
        ("000", "smaller than 100KB, reads are faster"),
        (
            "000",
            "larger than 100KB, reads from a separate file are faster",
        ),
        ("000", "page size of 8192 or 16384"),
        ("001", "35% faster"),
        ("001", "still out-performs direct reads"),
        ("001", "twice as fast"),
        ("001", "journal_mode=OFF"),
        ("001", "20% less disk space"),
        ("001", "between 5 and 15 times slower than reads"),
        ("001", "order of magnitude faster than writing"),
        ("001", "10 times or more slower"),
        ("001", "--multitrans option makes SQLite much slower"),
        ("002", "MySQL has by far the best results"),
        ("002", "MySQL followed by PostgreSQL"),
        ("002", "MySQL being the clear champion"),
        ("002", "about 100K to 1M"),
        ("002", "between 1M and 10M"),
        ("002", "write time starts to increase significantly"),
        ("002", "about 50-100K"),
        ("002", "beyond 50k"),
        ("002", "less than 256KB"),
        ("002", "over about one MB"),
        ("002", "fragmentation"),
        ("003", "~2.3 times higher"),
        ("003", "small enough to not care about"),
        ("003", "response time grows slower"),
        ("004", "NOMUTEX is consistently faster than FULLMUTEX"),
        ("004", "large page size"),
        ("004", "TRUNCATE journal mode beats WAL"),
        ("004", "WAL edged out TRUNCATE"),
        ("004", "NORMAL synchronous mode is much faster"),
        ("004", "Locking mode had no noticeable impact"),
        ("004", "no performance difference between this"),
        ("004", "cache size didn't affect performance"),
    ];

    #[test]
    fn the_ledger_covers_every_claim_read_from_the_documents() {
        let missing: Vec<String> = READ_FROM_THE_DOCUMENTS
            .iter()
            .filter(|(doc, quote)| {
                !CLAIMS
                    .iter()
                    .any(|c| c.document == *doc && c.words.contains(quote))
            })
            .map(|(doc, quote)| format!("{doc}: \"{quote}\""))
            .collect();
        assert!(
            missing.is_empty(),
            "claims missing from the ledger: {missing:?}"
        );
        let mut ids: Vec<&str> = CLAIMS.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CLAIMS.len(), "claim ids are unique");
        for c in CLAIMS {
            assert!(
                c.id.starts_with(c.document),
                "{} is of {}",
                c.id,
                c.document
            );
            assert!(!title(c.document).is_empty());
        }
    }

    #[test]
    fn a_missing_result_is_not_run_with_the_reason() {
        let row = evaluate(&CLAIMS[0], None, "give --pg URL", "tiny");
        assert_eq!(row.verdict, ClaimVerdict::NotRun);
        assert_eq!(row.measured_text, "not run: give --pg URL");
        assert_eq!(row.rerun, "blobbench suite internal-external");
    }
}
