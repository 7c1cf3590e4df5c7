//! The tables an SQLite dataset can keep its blobs in, and the statements
//! each is read and written with: kvtest's `kv(k INTEGER PRIMARY KEY, v
//! BLOB)`, where a key is the rowid, and the blog's `files(id VARCHAR(255)
//! PRIMARY KEY, data BLOB NOT NULL)` ("Serving Binary Files from SQLite"),
//! where a blob is found by a text id through the primary key's index.

use std::path::Path;

use rusqlite::Connection;
use rusqlite::types::{Value, ValueRef};

use super::meta::has_table;
use crate::error::{Error, Result};
use crate::store::files::{FileLayout, canonical_key};
pub use crate::target::SqliteLayout;

/// Every statement the store and its sessions run, for one layout.
pub(crate) struct Statements {
    /// The table and its value column (for the blob API).
    pub table: &'static str,
    pub column: &'static str,
    pub create: &'static str,
    pub select: &'static str,
    /// The length always, the bytes only when at most ?2.
    pub small: &'static str,
    pub length: &'static str,
    pub update: &'static str,
    pub insert: &'static str,
    pub delete: &'static str,
    /// Every (key, value), in key order.
    pub scan: &'static str,
    /// The rowid of a key (the blob API and the page walk need one); None
    /// where the key is the rowid.
    pub rowid: Option<&'static str>,
    /// The table's root page.
    pub root: &'static str,
}

const KV: Statements = Statements {
    table: "kv",
    column: "v",
    create: "CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB)",
    select: "SELECT v FROM kv WHERE k=?1",
    small: "SELECT length(v), CASE WHEN length(v) <= ?2 THEN v END FROM kv WHERE k=?1",
    length: "SELECT length(v) FROM kv WHERE k=?1",
    update: "UPDATE kv SET v=?2 WHERE k=?1",
    insert: "INSERT INTO kv(k, v) VALUES(?1, ?2)",
    delete: "DELETE FROM kv WHERE k=?1",
    scan: "SELECT k, v FROM kv ORDER BY k",
    rowid: None,
    root: "SELECT rootpage FROM sqlite_schema WHERE type='table' AND name='kv'",
};

/// The blog's table, created and queried with the blog's own statements.
const BLOG: Statements = Statements {
    table: "files",
    column: "data",
    create: "CREATE TABLE files( id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL )",
    select: "SELECT data FROM files WHERE id = ?1",
    small: "SELECT length(data), CASE WHEN length(data) <= ?2 THEN data END FROM files WHERE id = ?1",
    length: "SELECT length(data) FROM files WHERE id = ?1",
    update: "UPDATE files SET data = ?2 WHERE id = ?1",
    insert: "INSERT INTO files(id, data) VALUES (?1, ?2)",
    delete: "DELETE FROM files WHERE id = ?1",
    // Ids of one width sort as their numbers; wider ids are larger keys.
    scan: "SELECT id, data FROM files ORDER BY length(id), id",
    rowid: Some("SELECT rowid FROM files WHERE id = ?1"),
    root: "SELECT rootpage FROM sqlite_schema WHERE type='table' AND name='files'",
};

impl SqliteLayout {
    /// The layout's statements.
    pub(crate) fn sql(self) -> &'static Statements {
        match self {
            SqliteLayout::Kv => &KV,
            SqliteLayout::Blog => &BLOG,
        }
    }

    /// The value `key` is stored under: the rowid, or the text id that is
    /// also the name `export` gives the blob's file (`000042`).
    pub(crate) fn key(self, key: u64) -> Value {
        match self {
            SqliteLayout::Kv => Value::Integer(key as i64),
            SqliteLayout::Blog => Value::Text(id_of(key)),
        }
    }

    /// The table and how a blob is found in it, for people.
    pub fn describe(self) -> &'static str {
        match self {
            SqliteLayout::Kv => {
                "table kv(k INTEGER PRIMARY KEY, v BLOB), each blob found by its rowid (kvtest's)"
            }
            SqliteLayout::Blog => {
                "table files(id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL), each blob found by its text id '000042' through the primary key's index (the blog's)"
            }
        }
    }
}

/// The text id of `key` in the blog layout: its file's name in a folder.
pub(crate) fn id_of(key: u64) -> String {
    let mut id = String::with_capacity(8);
    FileLayout::Flat.push_name(key, &mut id);
    id
}

/// The layout of the database behind `conn`: the one `asked` for, which
/// must be there, else kv when it has that table, else the blog's.
pub(crate) fn detect(
    conn: &Connection,
    path: &Path,
    asked: Option<SqliteLayout>,
) -> Result<SqliteLayout> {
    let found = match asked {
        Some(layout) => has_table(conn, path, layout.sql().table)?.then_some(layout),
        None => [SqliteLayout::Kv, SqliteLayout::Blog]
            .into_iter()
            .find(|l| has_table(conn, path, l.sql().table).unwrap_or(false)),
    };
    let Some(layout) = found else {
        let which = match asked {
            Some(SqliteLayout::Blog) => "no files(id, data) table (layout=blog)",
            Some(SqliteLayout::Kv) => "no kv(k, v) table (layout=kv)",
            None => "neither a kv(k, v) table nor a files(id, data) one",
        };
        return Err(Error::usage(format!(
            "\"{}\" is an SQLite database but not a blob dataset: it has {which} (make one with blobbench init, or kvtest init)",
            path.display()
        )));
    };
    // The columns must be there too: the statements name them.
    let sql = layout.sql();
    let probe = format!(
        "SELECT {}, {} FROM {} LIMIT 0",
        if layout == SqliteLayout::Kv {
            "k"
        } else {
            "id"
        },
        sql.column,
        sql.table
    );
    if conn.prepare(&probe).is_err() {
        return Err(Error::usage(format!(
            "\"{}\" has a table {} but not with the columns of {}",
            path.display(),
            sql.table,
            layout.describe()
        )));
    }
    Ok(layout)
}

/// The key a scanned row's id stands for, refusing ids that are not
/// exactly the name blobbench gives a key (`000042`).
pub(crate) fn key_of_id(path: &Path, id: ValueRef<'_>) -> Result<u64> {
    let text = match id {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(x) => x.to_string(),
        ValueRef::Null => "NULL".into(),
        ValueRef::Blob(_) => "a blob".into(),
    };
    canonical_key(FileLayout::Flat, &text)
        .filter(|&k| k >= 1 && k <= i64::MAX as u64)
        .ok_or_else(|| {
            let shown: String = text.chars().take(40).collect();
            Error::usage(format!(
                "{} holds id '{shown}' in its files table: blobbench names each blob by its key from 1 up, as 6 or more digits ('000042', as export names its file); make the dataset with blobbench init 'sqlite:{}?layout=blog'",
                path.display(),
                path.display()
            ))
        })
}

/// The first and last key and the number of rows of a blog-layout table,
/// from its ids (the index alone is read, not the blobs).
pub(crate) fn blog_keys(conn: &Connection, path: &Path) -> Result<Option<(u64, u64, u64)>> {
    let err = |e| Error::sqlite(path, e);
    let mut stmt = conn.prepare("SELECT id FROM files").map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    let mut range: Option<(u64, u64, u64)> = None;
    while let Some(row) = rows.next().map_err(err)? {
        let key = key_of_id(path, row.get_ref(0).map_err(err)?)?;
        range = Some(match range {
            None => (key, key, 1),
            Some((lo, hi, n)) => (lo.min(key), hi.max(key), n + 1),
        });
    }
    Ok(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blog_ids_are_the_exported_file_names_and_nothing_else() {
        assert_eq!(id_of(42), "000042");
        assert_eq!(id_of(1_234_567), "1234567");
        let p = Path::new("x.db");
        let key = |s: &str| key_of_id(p, ValueRef::Text(s.as_bytes()));
        assert_eq!(key("000042").unwrap(), 42);
        assert_eq!(key("1234567").unwrap(), 1_234_567);
        for bad in ["42", "0000042", "00000.bin", "000000", "", "abcdef"] {
            let e = key(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("'{bad}'")), "{bad}: {e}");
        }
        assert!(key_of_id(p, ValueRef::Integer(42)).is_err());
    }

    #[test]
    fn a_database_is_read_in_the_layout_it_has() {
        let conn = Connection::open_in_memory().unwrap();
        let p = Path::new("x.db");
        let e = detect(&conn, p, None).unwrap_err().to_string();
        assert!(
            e.contains("neither a kv(k, v) table nor a files(id, data)"),
            "{e}"
        );
        conn.execute_batch(BLOG.create).unwrap();
        assert_eq!(detect(&conn, p, None).unwrap(), SqliteLayout::Blog);
        let e = detect(&conn, p, Some(SqliteLayout::Kv)).unwrap_err();
        assert!(e.to_string().contains("layout=kv"), "{e}");
        conn.execute_batch(KV.create).unwrap();
        assert_eq!(detect(&conn, p, None).unwrap(), SqliteLayout::Kv);
        let asked = detect(&conn, p, Some(SqliteLayout::Blog)).unwrap();
        assert_eq!(asked, SqliteLayout::Blog);
        let other = Connection::open_in_memory().unwrap();
        other
            .execute_batch("CREATE TABLE files(name, body)")
            .unwrap();
        let e = detect(&other, p, None).unwrap_err().to_string();
        assert!(e.contains("not with the columns"), "{e}");
    }
}
