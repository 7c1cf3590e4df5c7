//! Space inside an SQLite database: giving its free pages back or
//! rewriting it in order (`Space::reclaim`), and where each blob's pages
//! lie in the file (`Space::disk_layout`), for the aging suite, which
//! counts a blob's fragments as the runs its pages make on the disk.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::layout::SqliteLayout;
use super::pages::{KeyColumn, overflow_pages};
use super::settings::auto_vacuum_of;
use crate::error::{Error, Result};
use crate::store::contract::{BlobPlacement, DiskLayout, Reclaim, first_key_from_one, whole_file};

/// One integer a PRAGMA or query returns.
fn int(conn: &Connection, path: &Path, sql: &str) -> Result<i64> {
    conn.query_row(sql, [], |r| r.get(0))
        .map_err(|e| Error::sqlite(path, e))
}

/// The database file's length in bytes (0 when it cannot be read).
fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Whether the connection writes ahead to a WAL.
fn is_wal(conn: &Connection, path: &Path) -> Result<bool> {
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .map_err(|e| Error::sqlite(path, e))?;
    Ok(mode.eq_ignore_ascii_case("wal"))
}

/// Copies the WAL into the database file and empties it, so the file
/// holds every committed page (and a VACUUM's or incremental_vacuum's
/// shrinking reaches it); an error when another connection's read keeps
/// part of the WAL from being copied.
fn checkpoint_truncate(conn: &Connection, path: &Path) -> Result<()> {
    let (busy, log, done): (i64, i64, i64) = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(|e| Error::sqlite(path, e))?;
    if busy != 0 || log != done {
        return Err(Error::usage(format!(
            "{}: another connection's transaction kept the WAL from being copied into the database ({done} of {log} pages); end it and try again",
            path.display()
        )));
    }
    Ok(())
}

/// `Space::reclaim` for the database at `path`.
///
/// Incremental: `PRAGMA incremental_vacuum` on a database made with
/// auto_vacuum=incremental (every free page given back, the file
/// truncated); None on any other, which has nothing of the kind to do
/// (auto_vacuum=none keeps free pages for reuse; full gives them back at
/// every commit already). Full: `VACUUM`, the whole database rewritten in
/// order. In WAL mode the WAL is checkpointed after, so the file shrinks.
/// A VACUUM the volume has no room for is an error saying so; SQLite rolls
/// it back and the database stays as it was.
pub(crate) fn reclaim_database(
    conn: &Connection,
    path: &Path,
    how: Reclaim,
) -> Result<Option<String>> {
    let before = file_len(path);
    let done = match how {
        Reclaim::Incremental => {
            if auto_vacuum_of(conn, path)? != "incremental" {
                return Ok(None);
            }
            let free = int(conn, path, "PRAGMA freelist_count")?;
            // Each step frees one page: stepped to the end, not run once.
            let mut stmt = conn
                .prepare("PRAGMA incremental_vacuum")
                .map_err(|e| Error::sqlite(path, e))?;
            let mut rows = stmt.query([]).map_err(|e| Error::sqlite(path, e))?;
            while rows.next().map_err(|e| Error::sqlite(path, e))?.is_some() {}
            drop(rows);
            drop(stmt);
            let left = int(conn, path, "PRAGMA freelist_count")?;
            format!("incremental_vacuum: freed {} pages", free - left)
        }
        Reclaim::Full => {
            if let Err(e) = conn.execute_batch("VACUUM") {
                if !conn.is_autocommit() {
                    let _ = conn.execute_batch("ROLLBACK");
                }
                return Err(vacuum_error(path, e));
            }
            "VACUUM".to_string()
        }
        Reclaim::FullJournalInMemory => {
            let mode: String = conn
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .map_err(|e| Error::sqlite(path, e))?;
            conn.execute_batch("PRAGMA journal_mode=memory")
                .map_err(|e| Error::sqlite(path, e))?;
            let vacuumed = conn.execute_batch("VACUUM");
            if vacuumed.is_err() && !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            conn.execute_batch(&format!("PRAGMA journal_mode={mode}"))
                .map_err(|e| Error::sqlite(path, e))?;
            vacuumed.map_err(|e| vacuum_error(path, e))?;
            format!(
                "VACUUM with its journal in memory (journal_mode=memory while it ran, then {mode} again: the volume had no room for a rollback journal as large as the database; not crash-safe while it ran)"
            )
        }
    };
    if is_wal(conn, path)? {
        checkpoint_truncate(conn, path)?;
    }
    Ok(Some(format!(
        "{done}: file {before} -> {} bytes",
        file_len(path)
    )))
}

/// A failed VACUUM as the caller records it: for want of room, in words
/// that say so (the suite notes it and goes on).
fn vacuum_error(path: &Path, e: rusqlite::Error) -> Error {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
        return Error::usage(format!(
            "VACUUM of {}: the volume had no room for VACUUM's copy of the database (it needs free space up to the database's size beside it, and as much again for the temporary copy in SQLITE_TMPDIR or /var/tmp); SQLite rolled it back and the database is as it was (SQLite: {e})",
            path.display()
        ));
    }
    Error::sqlite(path, e)
}

/// Every row of `layout`'s table as (key, rowid), in key order.
fn rows(conn: &Connection, path: &Path, layout: SqliteLayout) -> Result<Vec<(u64, i64)>> {
    let err = |e| Error::sqlite(path, e);
    let (sql, key_column) = match layout {
        SqliteLayout::Kv => ("SELECT k, k FROM kv ORDER BY k", false),
        SqliteLayout::Blog => ("SELECT id, rowid FROM files", true),
    };
    let mut stmt = conn.prepare(sql).map_err(err)?;
    let mut q = stmt.query([]).map_err(err)?;
    let mut out = Vec::new();
    while let Some(row) = q.next().map_err(err)? {
        let key = if key_column {
            super::layout::key_of_id(path, row.get_ref(0).map_err(err)?)?
        } else {
            let k: i64 = row.get(0).map_err(err)?;
            first_key_from_one(path, k)?
        };
        out.push((key, row.get(1).map_err(err)?));
    }
    out.sort_unstable();
    Ok(out)
}

/// `Space::disk_layout` for blobs inside the database at `path`: each
/// blob's overflow pages in chain order, each as its whole page's bytes,
/// found by walking the b-tree and the chains on one map of the file
/// (a WAL is checkpointed into the file first). All inside one read
/// transaction, so no writer changes the file under the walk.
pub(crate) fn database_layout(
    conn: &Connection,
    path: &Path,
    layout: SqliteLayout,
) -> Result<DiskLayout> {
    let wal = is_wal(conn, path)?;
    if wal {
        checkpoint_truncate(conn, path)?;
    }
    conn.execute_batch("BEGIN")
        .map_err(|e| Error::sqlite(path, e))?;
    let walked = walk_database(conn, path, layout, wal);
    let ended = conn
        .execute_batch("COMMIT")
        .map_err(|e| Error::sqlite(path, e));
    let layout = walked?;
    ended?;
    Ok(layout)
}

/// The walk of `database_layout`, inside its read transaction.
fn walk_database(
    conn: &Connection,
    path: &Path,
    layout: SqliteLayout,
    wal: bool,
) -> Result<DiskLayout> {
    let table = match layout {
        SqliteLayout::Kv => "kv",
        SqliteLayout::Blog => "files",
    };
    // Reading the rows takes the read lock before the file is mapped.
    let rows = rows(conn, path, layout)?;
    let root: i64 = conn
        .query_row(
            "SELECT rootpage FROM sqlite_schema WHERE type='table' AND name=?1",
            [table],
            |r| r.get(0),
        )
        .map_err(|e| Error::sqlite(path, e))?;
    let page_size = int(conn, path, "PRAGMA page_size")? as u64;
    let free = int(conn, path, "PRAGMA freelist_count")? as u64;
    let map = super::map::map_through_open_descriptor(path)?;
    let key_column = match layout {
        SqliteLayout::Kv => KeyColumn::Rowid,
        SqliteLayout::Blog => KeyColumn::Text,
    };
    let cannot = |key: u64, why: &str| {
        Error::io(
            "cannot follow the pages of",
            path,
            std::io::Error::other(format!("key {key}: {why}")),
        )
    };
    let mut blobs = Vec::with_capacity(rows.len());
    for (key, rowid) in rows {
        let pages = overflow_pages(&map[..], root as u64, (rowid, key_column), wal)
            .map_err(|why| cannot(key, why))?
            .ok_or_else(|| cannot(key, "its row is not in the b-tree"))?;
        blobs.push(BlobPlacement {
            key,
            file: path.to_path_buf(),
            ranges: pages
                .into_iter()
                .map(|p| (p - 1) * page_size..p * page_size)
                .collect(),
        });
    }
    // Every page walked was the file's, not zeros put in place of pages
    // another process cut off (see map_guard.rs).
    map.check()?;
    Ok(DiskLayout {
        blobs,
        freelist_bytes: free * page_size,
    })
}

/// `Space::disk_layout` for files named in a database (sqlite-ext): each
/// blob's own file, whole, and the database's free pages.
pub(crate) fn external_layout(conn: &Connection, db: &Path) -> Result<DiskLayout> {
    let err = |e| Error::sqlite(db, e);
    let base: PathBuf = db
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut stmt = conn
        .prepare("SELECT k, file FROM blobs ORDER BY k")
        .map_err(err)?;
    let mut q = stmt.query([]).map_err(err)?;
    let mut blobs = Vec::new();
    while let Some(row) = q.next().map_err(err)? {
        let k: i64 = row.get(0).map_err(err)?;
        let name: String = row.get(1).map_err(err)?;
        let file = base.join(name);
        let len = std::fs::metadata(&file)
            .map_err(|e| Error::io("cannot stat", &file, e))?
            .len();
        blobs.push(BlobPlacement {
            key: first_key_from_one(db, k)?,
            file,
            ranges: whole_file(len),
        });
    }
    let page_size = int(conn, db, "PRAGMA page_size")? as u64;
    let free = int(conn, db, "PRAGMA freelist_count")? as u64;
    Ok(DiskLayout {
        blobs,
        freelist_bytes: free * page_size,
    })
}

#[cfg(test)]
// One range of a file is a list of one range here, not a mistake.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use crate::dataset::{SizeShape, spec_from_options};
    use crate::measure::fragments::contiguous_ranges;
    use crate::progress::Silent;
    use crate::store::{SessionOptions, Store, create_dataset};
    use crate::target::Target;

    /// A dataset of `count` blobs of `size` bytes at `target`.
    fn made(target: &str, count: u64, size: u64) -> Box<dyn Store> {
        let spec = spec_from_options(count, size, 0, SizeShape::Fixed, 1).unwrap();
        create_dataset(&Target::parse(target).unwrap(), &spec, &Silent)
            .unwrap()
            .0
    }

    /// Deletes `delete` and inserts `insert` (key, bytes) in one transaction.
    fn change(store: &mut dyn Store, delete: &[u64], insert: &[(u64, usize)]) {
        let mut s = store.session(SessionOptions::default()).unwrap();
        s.begin().unwrap();
        for &k in delete {
            s.delete(k).unwrap();
        }
        for &(k, n) in insert {
            let v: Vec<u8> = (0..n).map(|i| (i * 31 + k as usize) as u8).collect();
            s.insert(k, &v).unwrap();
        }
        s.commit().unwrap();
    }

    /// A blob written into fresh pages is one run of whole pages, which
    /// hold its bytes; one written after a delete takes the freed pages
    /// first and is in more than one run; the freelist is counted. For
    /// kvtest's table in rollback mode and the blog's in WAL mode.
    #[test]
    fn a_blob_in_fresh_pages_is_one_run_and_one_in_freed_pages_is_not() {
        let dir = tempfile::tempdir().unwrap();
        for target in ["k.db", "b.db?layout=blog&journal_mode=wal"] {
            let db = dir.path().join(target.split('?').next().unwrap());
            let mut store = made(
                &format!("sqlite:{}/{target}", dir.path().display()),
                2,
                40_000,
            );
            change(store.as_mut(), &[1], &[]);
            let before = store.disk_layout().unwrap().unwrap();
            assert_eq!(before.blobs.len(), 1, "{target}");
            assert!(
                before.freelist_bytes >= 9 * 4096,
                "{target}: key 1's pages are free: {}",
                before.freelist_bytes
            );
            change(store.as_mut(), &[], &[(3, 80_000)]);
            let layout = store.disk_layout().unwrap().unwrap();
            let keys: Vec<u64> = layout.blobs.iter().map(|b| b.key).collect();
            assert_eq!(keys, [2, 3], "{target}");
            let fresh = &layout.blobs[0].ranges;
            assert!(
                fresh
                    .iter()
                    .all(|r| r.start % 4096 == 0 && r.end - r.start == 4096),
                "{target}: whole pages: {fresh:?}"
            );
            assert!((9..=10).contains(&fresh.len()), "{target}: {fresh:?}");
            assert_eq!(contiguous_ranges(fresh), 1, "{target}: {fresh:?}");
            let reused = &layout.blobs[1].ranges;
            assert!(contiguous_ranges(reused) > 1, "{target}: {reused:?}");
            assert_eq!(layout.blobs[1].file, db);
            // The pages hold the blob: its last bytes are in them.
            let value: Vec<u8> = rusqlite::Connection::open(&db)
                .unwrap()
                .query_row(
                    &format!(
                        "SELECT {} WHERE {}",
                        if target.contains("blog") {
                            "data FROM files"
                        } else {
                            "v FROM kv"
                        },
                        if target.contains("blog") {
                            "id='000002'"
                        } else {
                            "k=2"
                        }
                    ),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            let file = std::fs::read(&db).unwrap();
            let pages: Vec<u8> = fresh
                .iter()
                .flat_map(|r| file[r.start as usize + 4..r.end as usize].to_vec())
                .collect();
            let tail = &value[value.len() - 1000..];
            assert!(pages.windows(1000).any(|w| w == tail), "{target}");
        }
    }

    /// The walk reads four bytes of every overflow page through one map:
    /// 2000 blobs of 1 MB (2 GB, cached as just written) take about a
    /// second (0.6 s here: the map populated at once). A timing check, run
    /// by hand on a quiet machine (`BLOBBENCH_BY_HAND=1 cargo test --release
    /// --lib thousands_of_large`): it writes 2 GB, and a time bound only
    /// holds without other load, so the test suite skips it.
    #[test]
    fn thousands_of_large_blobs_are_laid_out_in_about_a_second() {
        if std::env::var_os("BLOBBENCH_BY_HAND").is_none_or(|v| v != "1") {
            eprintln!("skipped: a timing check run by hand (BLOBBENCH_BY_HAND=1)");
            return;
        }
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut store = made(
            &format!("sqlite:{}/big.db", dir.path().display()),
            2000,
            1_000_000,
        );
        let start = std::time::Instant::now();
        let layout = store.disk_layout().unwrap().unwrap();
        let took = start.elapsed();
        eprintln!("disk_layout of 2000 blobs of 1 MB: {took:?}");
        assert_eq!(layout.blobs.len(), 2000);
        assert!(layout.blobs.iter().all(|b| b.ranges.len() >= 244));
        assert!(took.as_secs_f64() < 2.0, "{took:?}");
    }

    /// sqlite-ext: each blob's file whole, an empty one with no range, and
    /// its database's freelist; dir and tree: one range per file.
    #[test]
    fn blobs_in_files_are_one_range_per_file() {
        let dir = tempfile::tempdir().unwrap();
        for target in ["sqlite-ext:e.db", "dir:d", "tree:t"] {
            let (scheme, name) = target.split_once(':').unwrap();
            let mut store = made(
                &format!("{scheme}:{}/{name}", dir.path().display()),
                3,
                5000,
            );
            change(store.as_mut(), &[2], &[(4, 0), (5, 7000)]);
            let layout = store.disk_layout().unwrap().unwrap();
            let got: Vec<(u64, Vec<std::ops::Range<u64>>)> = layout
                .blobs
                .iter()
                .map(|b| (b.key, b.ranges.clone()))
                .collect();
            assert_eq!(
                got,
                [
                    (1, vec![0..5000]),
                    (3, vec![0..5000]),
                    (4, vec![]),
                    (5, vec![0..7000])
                ],
                "{target}"
            );
            for b in &layout.blobs {
                assert_eq!(
                    std::fs::metadata(&b.file).unwrap().len(),
                    b.ranges.first().map_or(0, |r| r.end),
                    "{target}: {}",
                    b.file.display()
                );
            }
            if scheme != "sqlite-ext" {
                assert_eq!(layout.freelist_bytes, 0);
                assert_eq!(store.reclaim(Reclaim::Full).unwrap(), None);
            }
        }
    }

    /// incremental_vacuum gives every free page back on a database made
    /// with auto_vacuum=incremental and does nothing on one without;
    /// VACUUM rewrites either, smaller. sqlite-ext does the same on its
    /// database of names.
    #[test]
    fn reclaim_gives_free_pages_back_as_the_database_allows() {
        let dir = tempfile::tempdir().unwrap();
        let free =
            |store: &mut Box<dyn Store>| store.disk_layout().unwrap().unwrap().freelist_bytes;
        let len = |p: &str| std::fs::metadata(dir.path().join(p)).unwrap().len();
        let at = |t: &str| format!("sqlite:{}/{t}", dir.path().display());
        let mut inc = made(&at("i.db?auto_vacuum=incremental"), 20, 20_000);
        change(inc.as_mut(), &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], &[]);
        let (freed, size) = (free(&mut inc), len("i.db"));
        assert!(freed >= 10 * 4 * 4096, "{freed}");
        let said = inc.reclaim(Reclaim::Incremental).unwrap().unwrap();
        assert!(
            said.starts_with(&format!("incremental_vacuum: freed {} pages", freed / 4096)),
            "{said}"
        );
        assert_eq!(free(&mut inc), 0);
        assert!(len("i.db") <= size - freed, "{said}");
        let mut none = made(&at("n.db"), 20, 20_000);
        change(none.as_mut(), &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], &[]);
        assert_eq!(none.reclaim(Reclaim::Incremental).unwrap(), None);
        let (freed, size) = (free(&mut none), len("n.db"));
        assert!(freed > 0);
        let said = none.reclaim(Reclaim::Full).unwrap().unwrap();
        assert_eq!(
            said,
            format!("VACUUM: file {size} -> {} bytes", len("n.db"))
        );
        assert_eq!(free(&mut none), 0);
        assert!(len("n.db") <= size - freed, "{said}");
        assert_eq!(none.catalog().unwrap().count, 10);
        let mut ext = made(
            &format!(
                "sqlite-ext:{}/e.db?auto_vacuum=incremental&journal_mode=wal",
                dir.path().display()
            ),
            3000,
            1,
        );
        let keys: Vec<u64> = (1..=2000).collect();
        change(ext.as_mut(), &keys, &[]);
        assert!(free(&mut ext) > 0);
        let said = ext.reclaim(Reclaim::Incremental).unwrap().unwrap();
        assert!(said.starts_with("incremental_vacuum: freed"), "{said}");
        assert_eq!(free(&mut ext), 0);
    }

    /// A small ext4 volume, loop-mounted; unmounted when dropped.
    struct Volume {
        mount: std::path::PathBuf,
        _dir: tempfile::TempDir,
    }

    impl Volume {
        /// Needs root; None (the test is skipped) otherwise.
        fn make(mib: u64) -> Option<Volume> {
            // SAFETY: geteuid only reads the process's user id.
            if unsafe { libc::geteuid() } != 0 {
                eprintln!("skipped: loop-mounting a volume needs root");
                return None;
            }
            let dir = tempfile::tempdir().unwrap();
            let image = dir.path().join("vol.img");
            std::fs::File::create(&image)
                .unwrap()
                .set_len(mib << 20)
                .unwrap();
            let mount = dir.path().join("mnt");
            std::fs::create_dir(&mount).unwrap();
            let run = |cmd: &str, args: &[&std::ffi::OsStr]| {
                let out = std::process::Command::new(cmd).args(args).output();
                let ok = out.as_ref().is_ok_and(|o| o.status.success());
                assert!(
                    ok,
                    "as root, {cmd} {args:?} must work to test a VACUUM without room: {out:?}"
                );
            };
            let arg = std::ffi::OsStr::new;
            run("mkfs.ext4", &[arg("-q"), arg("-F"), image.as_os_str()]);
            run(
                "mount",
                &[arg("-o"), arg("loop"), image.as_os_str(), mount.as_os_str()],
            );
            Some(Volume { mount, _dir: dir })
        }
    }

    impl Drop for Volume {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .arg(&self.mount)
                .status();
        }
    }

    /// Every blob's bytes, hashed, through a connection of its own.
    fn content(db: &Path) -> (i64, u64) {
        let conn = rusqlite::Connection::open(db).unwrap();
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        let mut stmt = conn.prepare("SELECT k, v FROM kv ORDER BY k").unwrap();
        let mut rows = stmt.query([]).unwrap();
        let (mut n, mut h) = (0, 0xcbf29ce484222325u64);
        while let Some(row) = rows.next().unwrap() {
            let v: Vec<u8> = row.get(1).unwrap();
            for b in v {
                h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
            }
            n += 1;
        }
        (n, h)
    }

    /// A VACUUM on a volume without room for its copy fails with an error
    /// that says so, and the database is left whole, with every blob.
    #[test]
    fn a_vacuum_without_room_says_so_and_leaves_the_database_whole() {
        let Some(volume) = Volume::make(32) else {
            return;
        };
        let db = volume.mount.join("v.db");
        let mut store = made(&format!("sqlite:{}", db.display()), 48, 256_000);
        change(store.as_mut(), &[1, 2, 3, 4], &[]);
        let before = content(&db);
        // Fill the volume to within 2 MiB: room for far less than the
        // database's ~12 MB that VACUUM's journal needs.
        let filler = volume.mount.join("filler");
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&filler).unwrap();
            let chunk = vec![7u8; 1 << 20];
            while f.write_all(&chunk).is_ok() {}
            let _ = f.sync_all();
            let len = f.metadata().unwrap().len();
            f.set_len(len.saturating_sub(2 << 20)).unwrap();
            f.sync_all().unwrap();
        }
        let e = store.reclaim(Reclaim::Full).unwrap_err().to_string();
        assert!(e.contains("no room for VACUUM's copy"), "{e}");
        assert!(e.contains("v.db"), "{e}");
        assert_eq!(content(&db), before, "after the failed VACUUM");
        assert_eq!(store.catalog().unwrap().count, 44);
        drop(store);
        assert!(
            !volume.mount.join("v.db-journal").exists(),
            "no hot journal left"
        );
        assert_eq!(content(&db), before, "opened again");
        // With room again, the same VACUUM succeeds.
        std::fs::remove_file(&filler).unwrap();
        let mut store = crate::store::open(
            &Target::parse(&format!("sqlite:{}", db.display())).unwrap(),
            crate::store::Access::ReadWrite,
        )
        .unwrap();
        assert!(
            store
                .reclaim(Reclaim::Full)
                .unwrap()
                .unwrap()
                .starts_with("VACUUM")
        );
        drop(store);
        assert_eq!(content(&db), before, "after the VACUUM");
    }
}
