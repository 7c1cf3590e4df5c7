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
use serde::{Deserialize, Serialize};

use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::units::parse_number;

use super::params::{APPLY_ORDER, Case, OPEN_MODE, TRANSACTION};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Workload {
    /// Insert `rows` rows in one transaction, `rounds` times (the seed's
    /// "insert 50,000", "twice", "10x").
    Insert { rows: u64, rounds: u64 },
    /// Insert `rows` rows, then copy the table into another database
    /// `copies` times via ATTACH + CREATE TABLE AS.
    InsertCopy { rows: u64, copies: u64 },
    /// Insert `count` blobs of `size` bytes in one transaction.
    BlobInsert { count: u64, size: u64 },
    /// Read `count` blobs of `size` bytes in random order in one transaction.
    BlobRead { count: u64, size: u64 },
    /// Overwrite `count` blobs of `size` bytes in random order in one transaction.
    BlobUpdate { count: u64, size: u64 },
}

pub const WORKLOAD_HELP: &str = "insert:ROWS[:ROUNDS], insert-copy:ROWS[:COPIES], \
blob-insert:COUNT[:SIZE], blob-read:COUNT[:SIZE], blob-update:COUNT[:SIZE]";

impl Workload {
    pub fn parse(text: &str) -> Result<Workload> {
        let bad = |why: &str| {
            Error::usage(format!(
                "--workload {text}: {why}; use one of {WORKLOAD_HELP}, e.g. insert:50k:2"
            ))
        };
        let mut parts = text.split(':');
        let kind = parts.next().unwrap_or_default().to_ascii_lowercase();
        let num = |s: Option<&str>, default: Option<u64>| -> Result<u64> {
            match s {
                Some(s) => {
                    let n = parse_number(s).map_err(|_| bad(&format!("{s} is not a number")))?;
                    if n == 0 {
                        return Err(bad("counts must be positive"));
                    }
                    Ok(n)
                }
                None => default.ok_or_else(|| bad("a count is needed")),
            }
        };
        let first = parts.next();
        let second = parts.next();
        if parts.next().is_some() {
            return Err(bad("too many parts"));
        }
        let w = match kind.as_str() {
            "insert" => Workload::Insert {
                rows: num(first, None)?,
                rounds: num(second, Some(1))?,
            },
            "insert-copy" => Workload::InsertCopy {
                rows: num(first, None)?,
                copies: num(second, Some(10))?,
            },
            "blob-insert" => Workload::BlobInsert {
                count: num(first, None)?,
                size: num(second, Some(10_000))?,
            },
            "blob-read" => Workload::BlobRead {
                count: num(first, None)?,
                size: num(second, Some(10_000))?,
            },
            "blob-update" => Workload::BlobUpdate {
                count: num(first, None)?,
                size: num(second, Some(10_000))?,
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

    /// The seed's wording: "Insert 50,000 twice", "Insert, copy 50,000 10x".
    pub fn describe(&self) -> String {
        let times = |n: u64| match n {
            1 => String::new(),
            2 => " twice".into(),
            n => format!(" {n}x"),
        };
        match *self {
            Workload::Insert { rows, rounds } => {
                format!("Insert {}{}", thousands(rows), times(rounds))
            }
            Workload::InsertCopy { rows, copies } => {
                format!("Insert, copy {}{}", thousands(rows), times(copies))
            }
            Workload::BlobInsert { count, size } => {
                format!("Insert {} blobs of {size} bytes", thousands(count))
            }
            Workload::BlobRead { count, size } => {
                format!("Read {} blobs of {size} bytes", thousands(count))
            }
            Workload::BlobUpdate { count, size } => {
                format!("Update {} blobs of {size} bytes", thousands(count))
            }
        }
    }

    /// Operations timed per run (rows or blobs), for per-op figures.
    pub fn ops(&self) -> u64 {
        match *self {
            Workload::Insert { rows, rounds } => rows * rounds,
            Workload::InsertCopy { rows, copies } => rows * (1 + copies),
            Workload::BlobInsert { count, .. }
            | Workload::BlobRead { count, .. }
            | Workload::BlobUpdate { count, .. } => count,
        }
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One timed run's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timing {
    /// Whole workload: statements, commits (and attach/detach).
    pub ns: u64,
    /// Of which COMMITs.
    pub commit_ns: u64,
    pub ops: u64,
    /// The settings as SQLite reports them after applying the case.
    pub settings_read_back: Vec<(String, String)>,
}

/// Row data for the seed's table, generated before timing: a time series of
/// prices per symbol, the shape of the article's use case.
pub struct Rows {
    rows: Vec<(String, i64, f64, i64)>,
}

impl Rows {
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

const SCHEMA: &str =
    "CREATE TABLE test(symbol TEXT NOT NULL, ts INTEGER NOT NULL, price REAL, volume INTEGER);
CREATE INDEX test_symbol_ts ON test(symbol, ts);
CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB);";

/// Opens a fresh database at `path` with the case's settings and schema.
fn open_fresh(path: &Path, case: &Case) -> Result<(Connection, Vec<(String, String)>)> {
    super::super::common::remove_entry(path);
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
    Rows(Rows),
    Blobs { spec: DatasetSpec, data: Vec<u8> },
}

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
pub fn run(
    w: &Workload,
    prepared: &Prepared,
    case: &Case,
    db: &Path,
    copy_db: &Path,
) -> Result<Timing> {
    let (conn, settings_read_back) = open_fresh(db, case)?;
    let err = |e| Error::sqlite(db, e);
    let begin = format!("BEGIN {}", setting(case, TRANSACTION).unwrap_or("deferred"));
    let mut commit_ns = 0u64;
    let commit = |conn: &Connection, commit_ns: &mut u64| -> Result<()> {
        let t = std::time::Instant::now();
        conn.execute_batch("COMMIT").map_err(err)?;
        *commit_ns += t.elapsed().as_nanos() as u64;
        Ok(())
    };
    let insert_rows = |conn: &Connection, rows: &Rows, commit_ns: &mut u64| -> Result<()> {
        conn.execute_batch(&begin).map_err(err)?;
        {
            let mut stmt = conn
                .prepare_cached(
                    "INSERT INTO test(symbol, ts, price, volume) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(err)?;
            for (s, ts, p, v) in &rows.rows {
                stmt.execute(params![s, ts, p, v]).map_err(err)?;
            }
        }
        commit(conn, commit_ns)
    };
    let load_blobs = |conn: &Connection, count: u64, size: usize, data: &[u8]| -> Result<()> {
        let mut stmt = conn
            .prepare_cached("INSERT INTO kv(k, v) VALUES (?1, ?2)")
            .map_err(err)?;
        for k in 0..count as usize {
            stmt.execute(params![k as i64 + 1, &data[k * size..(k + 1) * size]])
                .map_err(err)?;
        }
        Ok(())
    };
    let random_keys = |count: u64| {
        crate::workload::key_sequence(crate::workload::KeyOrder::Random, 1, count, count, None, 7)
    };

    // Untimed setup for reads and updates: the blobs are there first.
    if let (Workload::BlobRead { .. } | Workload::BlobUpdate { .. }, Some((count, size, data))) =
        (w, blobs(prepared))
    {
        conn.execute_batch("BEGIN").map_err(err)?;
        load_blobs(&conn, count, size, data)?;
        conn.execute_batch("COMMIT").map_err(err)?;
    }
    let keys = match w {
        Workload::BlobRead { count, .. } | Workload::BlobUpdate { count, .. } => {
            random_keys(*count)
        }
        _ => Vec::new(),
    };
    let mut sink = 0usize;

    let started = std::time::Instant::now();
    match (w, prepared) {
        (Workload::Insert { rounds, .. }, Prepared::Rows(rows)) => {
            for _ in 0..*rounds {
                insert_rows(&conn, rows, &mut commit_ns)?;
            }
        }
        (Workload::InsertCopy { copies, .. }, Prepared::Rows(rows)) => {
            insert_rows(&conn, rows, &mut commit_ns)?;
            super::super::common::remove_entry(copy_db);
            let target = copy_db.to_string_lossy().replace('\'', "''");
            for _ in 0..*copies {
                conn.execute_batch(&format!("ATTACH DATABASE '{target}' AS copy"))
                    .map_err(err)?;
                conn.execute_batch(&begin).map_err(err)?;
                conn.execute_batch(
                    "DROP TABLE IF EXISTS copy.test; CREATE TABLE copy.test AS SELECT * FROM test;",
                )
                .map_err(err)?;
                commit(&conn, &mut commit_ns)?;
                conn.execute_batch("DETACH DATABASE copy").map_err(err)?;
            }
        }
        (Workload::BlobInsert { .. }, p) => {
            let (count, size, data) = blobs(p).expect("blobs prepared");
            conn.execute_batch(&begin).map_err(err)?;
            load_blobs(&conn, count, size, data)?;
            commit(&conn, &mut commit_ns)?;
        }
        (Workload::BlobRead { .. }, _) => {
            conn.execute_batch(&begin).map_err(err)?;
            {
                let mut stmt = conn
                    .prepare_cached("SELECT v FROM kv WHERE k=?1")
                    .map_err(err)?;
                for &k in &keys {
                    sink += stmt
                        .query_row([k as i64], |r| {
                            r.get_ref(0)
                                .map(|v| v.as_blob().map(<[u8]>::len).unwrap_or(0))
                        })
                        .map_err(err)?;
                }
            }
            commit(&conn, &mut commit_ns)?;
        }
        (Workload::BlobUpdate { .. }, p) => {
            let (_, size, data) = blobs(p).expect("blobs prepared");
            conn.execute_batch(&begin).map_err(err)?;
            {
                let mut stmt = conn
                    .prepare_cached("UPDATE kv SET v=?2 WHERE k=?1")
                    .map_err(err)?;
                // Each blob gets another key's content: same size, new bytes.
                let n = keys.len();
                for (i, &k) in keys.iter().enumerate() {
                    let src = (i + 1) % n;
                    stmt.execute(params![k as i64, &data[src * size..(src + 1) * size]])
                        .map_err(err)?;
                }
            }
            commit(&conn, &mut commit_ns)?;
        }
        _ => unreachable!("prepare() matches the workload"),
    }
    let ns = started.elapsed().as_nanos() as u64;
    std::hint::black_box(sink);
    drop(conn);
    Ok(Timing {
        ns,
        commit_ns,
        ops: w.ops(),
        settings_read_back,
    })
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
