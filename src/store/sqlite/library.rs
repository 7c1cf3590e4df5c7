//! The SQLite library this binary links: its version, its compile options
//! and the largest blob it stores.

use rusqlite::Connection;

/// The largest blob this SQLite library stores in `kv(k INTEGER PRIMARY
/// KEY, v BLOB)`: SQLite refuses a record longer than its
/// SQLITE_LIMIT_LENGTH (1,000,000,000 bytes unless built otherwise, so it is
/// asked of the library), and the record holds a few header bytes beside
/// the blob (its size, a NULL for the key, the blob's type and length).
pub fn max_blob_bytes() -> u64 {
    let limit = Connection::open_in_memory()
        .map(|conn| {
            // SAFETY: the handle is valid while conn lives; -1 only reads the limit.
            unsafe {
                rusqlite::ffi::sqlite3_limit(conn.handle(), rusqlite::ffi::SQLITE_LIMIT_LENGTH, -1)
            }
        })
        .unwrap_or(1_000_000_000)
        .max(0) as u64;
    let varint_len = |v: u64| (1..9).find(|&k| v < 1u64 << (7 * k)).unwrap_or(9);
    (limit.saturating_sub(12)..=limit)
        .rev()
        .find(|&n| n + 2 + varint_len(2 * n + 12) <= limit)
        .unwrap_or(0)
}

/// The version of the SQLite library linked into this binary (the bundled
/// amalgamation), as `blobbench --version` says it.
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}

/// SQLite's version and compile options, for the environment record.
pub fn read_sqlite_info() -> (String, Vec<String>) {
    let version = rusqlite::version().to_string();
    let options = Connection::open_in_memory()
        .and_then(|c| {
            let mut stmt = c.prepare("PRAGMA compile_options")?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect::<rusqlite::Result<Vec<String>>>()
        })
        .unwrap_or_default();
    (version, options)
}
