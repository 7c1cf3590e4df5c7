//! `blobbench stat`: kvtest's `stat` command. It prints the same fields, in
//! the same words and widths, so the two tools' outputs diff cleanly:
//! entries, average/minimum/maximum value size of table `kv`, page size,
//! page count, freelist count and `PRAGMA integrity_check(10)`.
//!
//! Without `--vacuum` the database is opened read-only, so SQLite itself
//! refuses any write (a hot journal is reported, never rolled back).

use std::path::Path;

use rusqlite::Connection;

use crate::cli::StatArgs;
use crate::error::{Error, Result};
use crate::store::{Access, check_is_database, open_connection};
use crate::target::Target;

/// What kvtest's `stat` reports about a database, in its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbStat {
    /// `count(*)` of table kv.
    pub entries: i64,
    /// `avg(length(v))` truncated to an integer, as kvtest's `sqlite3_column_int`.
    pub average: i64,
    /// `min(length(v))` (0 when the table is empty).
    pub minimum: i64,
    /// `max(length(v))` (0 when the table is empty).
    pub maximum: i64,
    /// `PRAGMA page_size`, bytes.
    pub page_size: i64,
    /// `PRAGMA page_count`: pages in the file.
    pub page_count: i64,
    /// `PRAGMA freelist_count`: unused pages inside the file.
    pub freelist_count: i64,
    /// `PRAGMA integrity_check(10)`: "ok", or up to 10 problems.
    pub integrity: Vec<String>,
}

/// Runs `blobbench stat DB [--vacuum]`.
pub fn run(args: &StatArgs) -> Result<()> {
    let path = database_path(&args.db)?;
    check_is_database(&path, "blobbench init")?;
    let access = if args.vacuum {
        Access::ReadWrite
    } else {
        Access::ReadOnly
    };
    say(&format!(
        "stat {} ({}; SQLite {}{})\n",
        path.display(),
        access.label(),
        rusqlite::version(),
        if args.vacuum {
            "; VACUUM first, which rewrites the file"
        } else {
            ""
        }
    ));
    // Whether stat reads this database at all is asked read-only, before
    // --vacuum rewrites anything: a database it would then refuse is never
    // changed.
    let mut conn = open_connection(&path, Access::ReadOnly)?;
    require_kv(&conn, &path)?;
    if args.vacuum {
        drop(conn);
        conn = open_connection(&path, access)?;
        // The VACUUM of a large database takes a while: show that it started.
        say("Vacuuming....");
        conn.execute_batch("VACUUM")
            .map_err(|e| Error::sqlite(&path, e))?;
        say("       done\n");
    }
    let stat = read_stat(&conn, &path)?;
    say(&render(&stat));
    Ok(())
}

/// Writes and flushes to stdout; a closed pipe (`| head`) ends the output
/// quietly instead of panicking, as kvtest's printf would.
fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// The database file a stat argument names: a bare path or `sqlite:PATH`;
/// any other kind of target is a usage error (kvtest's stat reads databases).
fn database_path(text: &str) -> Result<std::path::PathBuf> {
    match Target::parse(text)? {
        Target::Sqlite { path, .. } => Ok(path),
        other => Err(Error::usage(format!(
            "stat reads an SQLite database with table kv, not {} target \"{text}\": name the .db file (blobbench stat test1.db)",
            other.kind_name()
        ))),
    }
}

/// Refuses a database without table `kv`: stat reads kvtest's table.
fn require_kv(conn: &Connection, path: &Path) -> Result<()> {
    let has_kv: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = 'kv'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| Error::sqlite(path, e))?;
    if !has_kv {
        return Err(Error::usage(format!(
            "{} has no table kv: it is not a kvtest or blobbench dataset (make one with blobbench init {0})",
            path.display()
        )));
    }
    Ok(())
}

/// Reads kvtest's fields from an open connection; writes nothing.
pub fn read_stat(conn: &Connection, path: &Path) -> Result<DbStat> {
    let sql = |e| Error::sqlite(path, e);
    require_kv(conn, path)?;
    // count(*) always returns one row; on an empty table the others are NULL,
    // which kvtest's sqlite3_column_int prints as 0.
    let (entries, minimum, maximum, average) = conn
        .query_row(
            "SELECT count(*), coalesce(min(length(v)), 0), coalesce(max(length(v)), 0), \
             coalesce(CAST(avg(length(v)) AS INTEGER), 0) FROM kv",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .map_err(sql)?;
    let pragma = |name: &str| -> Result<i64> {
        conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
            .map_err(sql)
    };
    let integrity = {
        let mut stmt = conn.prepare("PRAGMA integrity_check(10)").map_err(sql)?;
        stmt.query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
            .map_err(sql)?
    };
    Ok(DbStat {
        entries,
        average,
        minimum,
        maximum,
        page_size: pragma("page_size")?,
        page_count: pragma("page_count")?,
        freelist_count: pragma("freelist_count")?,
        integrity,
    })
}

/// kvtest's lines: a 20-column label and the number right-aligned in 8.
pub fn render(s: &DbStat) -> String {
    let mut out = String::new();
    for (label, value) in [
        ("Number of entries:", s.entries),
        ("Average value size:", s.average),
        ("Minimum value size:", s.minimum),
        ("Maximum value size:", s.maximum),
        ("Page-size:", s.page_size),
        ("Page-count:", s.page_count),
        ("Freelist-count:", s.freelist_count),
    ] {
        out.push_str(&format!("{label:<19} {value:>8}\n"));
    }
    for line in &s.integrity {
        out.push_str(&format!("Integrity-check:    {line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db_with(values: &[usize]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB)")
            .unwrap();
        for (i, n) in values.iter().enumerate() {
            conn.execute(
                "INSERT INTO kv VALUES (?1, zeroblob(?2))",
                (i as i64 + 1, *n as i64),
            )
            .unwrap();
        }
        conn
    }

    #[test]
    fn fields_match_kvtest_sql() {
        // avg 6.5 truncates to 6 as kvtest's sqlite3_column_int does.
        let s = read_stat(&db_with(&[5, 8]), Path::new("m")).unwrap();
        assert_eq!((s.entries, s.average, s.minimum, s.maximum), (2, 6, 5, 8));
        assert_eq!(s.integrity, vec!["ok".to_string()]);
        assert!(s.page_count >= 2);
        assert_eq!(s.freelist_count, 0);
    }

    #[test]
    fn empty_table_prints_zeros() {
        let s = read_stat(&db_with(&[]), Path::new("m")).unwrap();
        assert_eq!((s.entries, s.average, s.minimum, s.maximum), (0, 0, 0, 0));
    }

    #[test]
    fn no_kv_table_is_a_usage_error() {
        let conn = Connection::open_in_memory().unwrap();
        let e = read_stat(&conn, Path::new("x.db")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("no table kv"), "{e}");
    }

    #[test]
    fn lines_have_kvtests_widths() {
        let s = DbStat {
            entries: 100000,
            average: 10000,
            minimum: 8000,
            maximum: 12000,
            page_size: 4096,
            page_count: 250122,
            freelist_count: 0,
            integrity: vec!["ok".into()],
        };
        let text = render(&s);
        // printf("Number of entries:  %8d\n") and friends, verbatim.
        assert!(text.starts_with("Number of entries:    100000\n"), "{text}");
        assert!(text.contains("\nPage-size:              4096\n"), "{text}");
        assert!(text.contains("\nFreelist-count:            0\n"), "{text}");
        assert!(text.ends_with("Integrity-check:    ok\n"), "{text}");
    }
}
