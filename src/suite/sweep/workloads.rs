//! Sweep workloads: the seed article's row inserts (on a table with a
//! composite index) and blob inserts, reads and updates, each run on a fresh
//! database opened with one case's settings.
//!
//! Rows and blobs are generated before the timer starts; the timer covers
//! the statements and commits (and, for the copy workload, the ATTACH and
//! DETACH). Opening the database and creating the schema are not timed.

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rusqlite::{Connection, OpenFlags, params};

use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::units::parse_number;
use crate::workload::timer::OpTimer;

pub use crate::result::sweep::{Timing, Workload};

use super::params::{APPLY_ORDER, Case, OPEN_MODE, TRANSACTION};

/// The workload grammar, for error messages and help.
pub const WORKLOAD_HELP: &str = "insert:ROWS[:ROUNDS], insert-copy:ROWS[:COPIES], \
blob-insert:COUNT[:SIZE], blob-read:COUNT[:SIZE], blob-update:COUNT[:SIZE]";

// The grammar of `--workload` belongs to the sweep that runs it, not to
// the result contract that records a workload.
impl Workload {
    /// Parses `--workload KIND:COUNT[:N]`, checking counts and sizes.
    pub fn parse(text: &str) -> Result<Workload> {
        let bad = |why: &str| {
            Error::usage(format!(
                "--workload {text}: {why}; use one of {WORKLOAD_HELP}, e.g. insert:50k:2"
            ))
        };
        let mut parts = text.split(':');
        let kind = parts.next().unwrap_or_default().to_ascii_lowercase();
        // Rows are generated in memory before timing (about 50 bytes each),
        // and rounds and copies multiply the run time: bounded so that a
        // typo is refused here, not found as an out-of-memory abort.
        let num = |s: Option<&str>, default: Option<u64>, max: u64| -> Result<u64> {
            match s {
                Some(s) => {
                    let n = parse_number(s).map_err(|_| bad(&format!("{s} is not a number")))?;
                    if n == 0 {
                        return Err(bad("counts must be positive"));
                    }
                    if n > max {
                        return Err(bad(&format!("{s} is out of range: use 1 to {max}")));
                    }
                    Ok(n)
                }
                None => default.ok_or_else(|| bad("a count is needed")),
            }
        };
        // Blob workloads store each blob in one SQLite value.
        let blob_max = crate::store::max_blob_bytes();
        const ROWS: u64 = 100_000_000;
        const REPEATS: u64 = 10_000;
        let first = parts.next();
        let second = parts.next();
        if parts.next().is_some() {
            return Err(bad("too many parts"));
        }
        let w = match kind.as_str() {
            "insert" => Workload::Insert {
                rows: num(first, None, ROWS)?,
                rounds: num(second, Some(1), REPEATS)?,
            },
            "insert-copy" => Workload::InsertCopy {
                rows: num(first, None, ROWS)?,
                copies: num(second, Some(10), REPEATS)?,
            },
            "blob-insert" => Workload::BlobInsert {
                count: num(first, None, ROWS)?,
                size: num(second, Some(10_000), blob_max)?,
            },
            "blob-read" => Workload::BlobRead {
                count: num(first, None, ROWS)?,
                size: num(second, Some(10_000), blob_max)?,
            },
            "blob-update" => Workload::BlobUpdate {
                count: num(first, None, ROWS)?,
                size: num(second, Some(10_000), blob_max)?,
            },
            _ => return Err(bad("unknown workload")),
        };
        if let Workload::BlobInsert { count, size }
        | Workload::BlobRead { count, size }
        | Workload::BlobUpdate { count, size } = w
            && (size > 1 << 30 || count.saturating_mul(size) > 4 << 30)
        {
            return Err(bad("more than 4 GB of blobs (or a blob over 1 GB)"));
        }
        Ok(w)
    }
}

/// Row data for the seed's table, generated before timing: a time series of
/// prices per symbol, the shape of the article's use case.
pub struct Rows {
    rows: Vec<(String, i64, f64, i64)>,
}

impl Rows {
    /// `n` rows from `seed`: the same rows for every case.
    pub fn generate(n: u64, seed: u64) -> Rows {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let rows = (0..n)
            .map(|i| {
                let symbol = format!("SYM{:04}", rng.random_range(0..2000u32));
                (
                    symbol,
                    1_600_000_000 + i as i64,
                    rng.random_range(1.0..1000.0),
                    rng.random_range(1..1_000_000i64),
                )
            })
            .collect();
        Rows { rows }
    }
}

/// The tables every run creates. The article shows its "test table schema
/// and composite index" as an image that is not in its text, so this
/// time-series table (a price per symbol and time, the article's use case)
/// is blobbench's assumption, printed with every sweep and kept in its result.
pub const SCHEMA: &str =
    "CREATE TABLE test(symbol TEXT NOT NULL, ts INTEGER NOT NULL, price REAL, volume INTEGER);
CREATE INDEX test_symbol_ts ON test(symbol, ts);
CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB);";

/// Opens a fresh database at `path` with the case's settings and schema.
fn open_fresh(path: &Path, case: &Case) -> Result<(Connection, Vec<(String, String)>)> {
    // The one this sweep made for the case before goes; a user's file
    // of that name is refused, never opened and written into.
    crate::store::claim_new(path)?;
    let mode = setting(case, OPEN_MODE).unwrap_or("nomutex");
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI;
    flags |= if mode == "fullmutex" {
        OpenFlags::SQLITE_OPEN_FULL_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let err = |e| Error::sqlite(path, e);
    let conn = Connection::open_with_flags(path, flags).map_err(err)?;
    let ordered = APPLY_ORDER
        .iter()
        .filter_map(|n| case.iter().find(|(m, _)| m == n))
        .chain(case.iter().filter(|(n, _)| {
            !APPLY_ORDER.contains(&n.as_str()) && n != OPEN_MODE && n != TRANSACTION
        }));
    let mut read_back = Vec::new();
    for (name, value) in ordered {
        // Names and values were checked against known settings and plain words.
        conn.query_row(&format!("PRAGMA {name}={value}"), [], |_| Ok(()))
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(()),
                e => Err(e),
            })
            .map_err(err)?;
    }
    conn.execute_batch(SCHEMA).map_err(err)?;
    for (name, _) in case
        .iter()
        .filter(|(n, _)| n != OPEN_MODE && n != TRANSACTION)
    {
        let v: Option<String> = conn
            .query_row(&format!("PRAGMA {name}"), [], |r| {
                r.get_ref(0).map(|v| match v {
                    rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    other => format!("{other:?}"),
                })
            })
            .ok();
        read_back.push((name.clone(), v.unwrap_or_default()));
    }
    Ok((conn, read_back))
}

fn setting<'a>(case: &'a Case, name: &str) -> Option<&'a str> {
    case.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// What a workload needs generated before its timer starts.
pub enum Prepared {
    /// Rows for the row workloads.
    Rows(Rows),
    /// Every blob's content, back to back.
    Blobs {
        /// Count, size and seed of the blobs.
        spec: DatasetSpec,
        /// `count` x `size` bytes.
        data: Vec<u8>,
    },
}

/// Generates what `w` needs, from `seed`, before any run is timed.
pub fn prepare(w: &Workload, seed: u64) -> Prepared {
    match *w {
        Workload::Insert { rows, .. } | Workload::InsertCopy { rows, .. } => {
            Prepared::Rows(Rows::generate(rows, seed))
        }
        Workload::BlobInsert { count, size }
        | Workload::BlobRead { count, size }
        | Workload::BlobUpdate { count, size } => {
            let spec = DatasetSpec::fixed(count, size, seed);
            let mut data = Vec::with_capacity((count * size) as usize);
            let mut buf = Vec::new();
            for k in 1..=count {
                spec.fill(k, 1, &mut buf);
                data.extend_from_slice(&buf);
            }
            Prepared::Blobs { spec, data }
        }
    }
}

fn blobs(prepared: &Prepared) -> Option<(u64, usize, &[u8])> {
    match prepared {
        Prepared::Blobs { spec, data } => Some((spec.count, spec.size as usize, data)),
        Prepared::Rows(_) => None,
    }
}

/// Runs one workload on a fresh database `db` (and `copy_db` for copies).
/// The whole workload and each COMMIT are timed by the executor's clock;
/// the database's setup (settings, schema, blobs to read or update, removing
/// an old copy) happens before the timer starts.
pub fn run(
    w: &Workload,
    prepared: &Prepared,
    case: &Case,
    db: &Path,
    copy_db: &Path,
) -> Result<Timing> {
    let (conn, settings_read_back) = open_fresh(db, case)?;
    let mut run = Run {
        conn,
        db,
        begin: format!("BEGIN {}", setting(case, TRANSACTION).unwrap_or("deferred")),
        commits: OpTimer::with_capacity(commits(w)),
    };
    let keys = run.set_up(w, prepared, copy_db)?;
    let mut whole = OpTimer::with_capacity(1);
    let sink = whole.time(|| run.timed(w, prepared, &keys, copy_db))?;
    std::hint::black_box(sink);
    let ns = whole.nanos().first().copied().unwrap_or(0);
    let commit_ns = run.commits.nanos().iter().sum();
    drop(run);
    Ok(Timing {
        ns,
        commit_ns,
        ops: w.ops(),
        settings_read_back,
    })
}

/// COMMITs a workload makes, so their timer never allocates while timing.
fn commits(w: &Workload) -> usize {
    match *w {
        Workload::Insert { rounds, .. } => rounds as usize,
        Workload::InsertCopy { copies, .. } => 1 + copies as usize,
        _ => 1,
    }
}

/// One workload's database: the connection, the case's BEGIN and the
/// timer of its COMMITs.
struct Run<'a> {
    conn: Connection,
    db: &'a Path,
    begin: String,
    commits: OpTimer,
}

impl Run<'_> {
    fn err(&self, e: rusqlite::Error) -> Error {
        Error::sqlite(self.db, e)
    }

    fn batch(&self, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).map_err(|e| self.err(e))
    }

    /// COMMIT, timed on its own.
    fn commit(&mut self) -> Result<()> {
        let conn = &self.conn;
        let done = self.commits.time(|| conn.execute_batch("COMMIT"));
        done.map_err(|e| self.err(e))
    }

    /// Untimed: the blobs reads and updates need, no copy left from an
    /// earlier run; returns the keys reads and updates visit.
    fn set_up(&mut self, w: &Workload, prepared: &Prepared, copy_db: &Path) -> Result<Vec<u64>> {
        if let (
            Workload::BlobRead { .. } | Workload::BlobUpdate { .. },
            Some((count, size, data)),
        ) = (w, blobs(prepared))
        {
            self.batch("BEGIN")?;
            self.load_blobs(count, size, data)?;
            self.batch("COMMIT")?;
        }
        if let Workload::InsertCopy { .. } = w {
            crate::store::claim_new(copy_db)?;
        }
        Ok(match *w {
            Workload::BlobRead { count, .. } | Workload::BlobUpdate { count, .. } => {
                crate::workload::key_sequence(
                    crate::result::run::KeyOrder::Random,
                    1,
                    count,
                    count,
                    None,
                    7,
                )
            }
            _ => Vec::new(),
        })
    }

    /// The timed part of the workload; returns bytes read (kept alive so the
    /// reads are not optimised away).
    fn timed(
        &mut self,
        w: &Workload,
        prepared: &Prepared,
        keys: &[u64],
        copy_db: &Path,
    ) -> Result<usize> {
        match (w, prepared) {
            (Workload::Insert { rounds, .. }, Prepared::Rows(rows)) => {
                for _ in 0..*rounds {
                    self.insert_rows(rows)?;
                }
            }
            (Workload::InsertCopy { copies, .. }, Prepared::Rows(rows)) => {
                self.insert_rows(rows)?;
                self.copy(copy_db, *copies)?;
            }
            (Workload::BlobInsert { .. }, p) => {
                let (count, size, data) = blobs(p).expect("blobs prepared");
                self.batch(&self.begin)?;
                self.load_blobs(count, size, data)?;
                self.commit()?;
            }
            (Workload::BlobRead { .. }, _) => return self.read_blobs(keys),
            (Workload::BlobUpdate { .. }, p) => {
                let (_, size, data) = blobs(p).expect("blobs prepared");
                self.update_blobs(keys, size, data)?;
            }
            _ => unreachable!("prepare() matches the workload"),
        }
        Ok(0)
    }

    /// All rows in one transaction of the case's kind.
    fn insert_rows(&mut self, rows: &Rows) -> Result<()> {
        self.batch(&self.begin)?;
        {
            let mut stmt = self
                .conn
                .prepare_cached(
                    "INSERT INTO test(symbol, ts, price, volume) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(|e| self.err(e))?;
            for (s, ts, p, v) in &rows.rows {
                stmt.execute(params![s, ts, p, v])
                    .map_err(|e| self.err(e))?;
            }
        }
        self.commit()
    }

    /// The table copied into `copy_db` `copies` times, each in its own
    /// ATTACH, transaction and DETACH.
    fn copy(&mut self, copy_db: &Path, copies: u64) -> Result<()> {
        let target = copy_db.to_string_lossy().replace('\'', "''");
        for _ in 0..copies {
            self.batch(&format!("ATTACH DATABASE '{target}' AS copy"))?;
            self.batch(&self.begin)?;
            self.batch(
                "DROP TABLE IF EXISTS copy.test; CREATE TABLE copy.test AS SELECT * FROM test;",
            )?;
            self.commit()?;
            self.batch("DETACH DATABASE copy")?;
        }
        Ok(())
    }

    /// Blobs 1..=count, in the transaction already begun.
    fn load_blobs(&self, count: u64, size: usize, data: &[u8]) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached("INSERT INTO kv(k, v) VALUES (?1, ?2)")
            .map_err(|e| self.err(e))?;
        for k in 0..count as usize {
            stmt.execute(params![k as i64 + 1, &data[k * size..(k + 1) * size]])
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Every key read in one transaction; returns the bytes read.
    fn read_blobs(&mut self, keys: &[u64]) -> Result<usize> {
        let mut sink = 0usize;
        self.batch(&self.begin)?;
        {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT v FROM kv WHERE k=?1")
                .map_err(|e| self.err(e))?;
            for &k in keys {
                sink += stmt
                    .query_row([k as i64], |r| {
                        r.get_ref(0)
                            .map(|v| v.as_blob().map(<[u8]>::len).unwrap_or(0))
                    })
                    .map_err(|e| self.err(e))?;
            }
        }
        self.commit()?;
        Ok(sink)
    }

    /// Every key overwritten in one transaction with another key's content:
    /// same size, new bytes.
    fn update_blobs(&mut self, keys: &[u64], size: usize, data: &[u8]) -> Result<()> {
        self.batch(&self.begin)?;
        {
            let mut stmt = self
                .conn
                .prepare_cached("UPDATE kv SET v=?2 WHERE k=?1")
                .map_err(|e| self.err(e))?;
            let n = keys.len();
            for (i, &k) in keys.iter().enumerate() {
                let src = (i + 1) % n;
                stmt.execute(params![k as i64, &data[src * size..(src + 1) * size]])
                    .map_err(|e| self.err(e))?;
            }
        }
        self.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_parse_with_defaults() {
        assert_eq!(
            Workload::parse("insert:50k").unwrap(),
            Workload::Insert {
                rows: 50_000,
                rounds: 1
            }
        );
        assert_eq!(
            Workload::parse("insert:500k:2").unwrap().describe(),
            "Insert 500,000 twice"
        );
        assert_eq!(
            Workload::parse("insert-copy:50k").unwrap().describe(),
            "Insert, copy 50,000 10x"
        );
        assert_eq!(
            Workload::parse("blob-read:100:4KiB").unwrap(),
            Workload::BlobRead {
                count: 100,
                size: 4096
            }
        );
        for bad in [
            "insert",
            "insert:0",
            "insert:1:2:3",
            "scan:5",
            "blob-read:10q",
            "blob-insert:1M:1M",
        ] {
            assert!(Workload::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_workload_runs_and_applies_its_settings() {
        let tmp = tempfile::tempdir().unwrap();
        let case: Case = vec![
            ("page_size".into(), "8192".into()),
            ("journal_mode".into(), "wal".into()),
            ("synchronous".into(), "normal".into()),
            ("transaction".into(), "immediate".into()),
        ];
        for w in [
            "insert:300:2",
            "insert-copy:200:2",
            "blob-insert:20:5000",
            "blob-read:20:5000",
            "blob-update:20:5000",
        ] {
            let w = Workload::parse(w).unwrap();
            let p = prepare(&w, 1);
            let t = run(
                &w,
                &p,
                &case,
                &tmp.path().join("s.db"),
                &tmp.path().join("c.db"),
            )
            .unwrap();
            assert!(t.ns > 0 && t.commit_ns > 0 && t.commit_ns <= t.ns, "{w:?}");
            assert_eq!(t.ops, w.ops());
            assert!(
                t.settings_read_back
                    .contains(&("page_size".into(), "8192".into()))
            );
            assert!(
                t.settings_read_back
                    .contains(&("journal_mode".into(), "wal".into()))
            );
            assert!(
                t.settings_read_back
                    .contains(&("synchronous".into(), "1".into()))
            );
        }
        let conn = Connection::open(tmp.path().join("c.db")).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM test", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 200, "the copy holds the table");
        let conn = Connection::open(tmp.path().join("s.db")).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM kv", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 20);
    }
}
