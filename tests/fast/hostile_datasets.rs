//! Datasets an unlucky user leaves behind: an init, export or update that
//! was interrupted (kill -9, a failure half-way, a full disk), a database
//! another process holds open in WAL mode, a folder that cannot be written.
//! Each must be either used whole or refused with one clear line (exit
//! status 2) naming the fix; a read run must not write its target.
//!
//! A command is interrupted while held at a named step (`common::Held`),
//! so it is cut at the same point of its work whatever the machine's load,
//! and what the interruption left behind is checked before it is used.

use crate::common::small;
use std::path::Path;
use std::process::Output;
use std::time::SystemTime;

use crate::common::tmpfs::Tmpfs;
use crate::common::{kill_at, ok, run, signal_at, usage_error};
use rusqlite::Connection;

fn file_count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// (length, modification time, bytes) of a file, to prove it untouched.
fn snapshot(path: &Path) -> (u64, SystemTime, Vec<u8>) {
    let m = std::fs::metadata(path).unwrap();
    (m.len(), m.modified().unwrap(), std::fs::read(path).unwrap())
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

// Class 7: a partial dataset is never used as a whole one.

#[test]
fn interrupted_folder_init_is_refused_until_made_again() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let folder = d.join("blobs");
    kill_at(
        d,
        &["init", "dir:blobs", "--count", "2k", "--size", "1k"],
        "dataset-blob@100",
    );
    assert!(file_count(&folder) >= 100, "the first 100 blobs are there");
    for args in [
        &small(&["run", "dir:blobs"])[..],
        &small(&["run", "dir:blobs", "--update"]),
        &["export", "dir:blobs", "sqlite:copy.db"],
        &["serve", "dir:blobs", "--listen", "127.0.0.1:0"],
    ] {
        usage_error(d, args, "is incomplete");
    }
    // The fix the message names: the same init, which replaces its own folder.
    let out = run(d, &small(&["run", "dir:blobs"]));
    assert!(
        stderr(&out).contains("run `blobbench init dir:blobs --count 2k --size 1k` again"),
        "{}",
        stderr(&out)
    );
    ok(d, &["init", "dir:blobs", "--count", "300", "--size", "1k"]);
    ok(d, &small(&["run", "dir:blobs", "--verify"]));
}

#[test]
fn ctrl_c_during_export_leaves_nothing_run_accepts() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "src.db", "--count", "300", "--size", "4k"]);
    let out = d.join("out");
    // Ctrl-C a third of the way: 100 of the 300 blobs copied.
    signal_at(
        d,
        &["export", "src.db", "out"],
        "copy-blob@100",
        libc::SIGINT,
    );
    assert!(file_count(&out) >= 100, "the first 100 blobs are there");
    usage_error(
        d,
        &["run", "dir:out"],
        "run `blobbench export src.db out` again",
    );
    ok(d, &["export", "src.db", "out"]);
    ok(d, &small(&["run", "dir:out", "--verify", "--count", "100"]));
}

#[test]
fn failed_export_leaves_nothing_run_accepts() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    {
        let c = Connection::open(d.join("mixed.db")).unwrap();
        c.execute_batch("CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB)")
            .unwrap();
        for k in 1..=100i64 {
            // Key 50 holds a number: no file can be made of it.
            if k == 50 {
                c.execute("INSERT INTO kv VALUES(?1, 7)", [k]).unwrap();
            } else {
                c.execute("INSERT INTO kv VALUES(?1, zeroblob(100))", [k])
                    .unwrap();
            }
        }
    }
    let out = run(d, &["export", "mixed.db", "out"]);
    assert!(!out.status.success());
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(file_count(&d.join("out")) >= 49, "the export stopped early");
    usage_error(
        d,
        &["run", "dir:out"],
        "run `blobbench export mixed.db out` again",
    );
}

#[test]
fn interrupted_sqlite_init_is_explained_to_reads_and_recovered_by_init() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = d.join("t.db");
    let journal = d.join("t.db-journal");
    // 4 MB stored, past SQLite's page cache (2 MB): the load has spilled
    // pages into the file, so it is half-written with a hot journal beside.
    kill_at(
        d,
        &["init", "t.db", "--count", "5k", "--size", "1k"],
        "dataset-blob@4000",
    );
    assert!(journal.exists() && len(&journal) > 0, "no hot journal");
    assert!(len(&db) > 1_000_000, "no pages spilled: {} bytes", len(&db));
    let before = snapshot(&db);
    usage_error(d, &["run", "t.db"], "sqlite3 t.db 'pragma integrity_check'");
    usage_error(
        d,
        &["serve", "t.db", "--listen", "127.0.0.1:0"],
        "hot journal",
    );
    // A read run wrote nothing: the journal is still there, the file as it was.
    assert!(journal.exists());
    assert_eq!(snapshot(&db), before);
    // init may write: it rolls the journal back, sees its own dataset, and
    // makes it again.
    ok(d, &["init", "t.db", "--count", "200", "--size", "1k"]);
    ok(d, &small(&["run", "t.db", "--verify"]));
}

#[test]
fn interrupted_update_is_rolled_back_by_the_next_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "u.db", "--count", "500", "--size", "10k"]);
    let journal = d.join("u.db-journal");
    // The second repetition has rewritten all 5 MB, past the page cache
    // (2 MB), and not committed: the file holds some of the new pages, the
    // journal the old ones.
    kill_at(
        d,
        &small(&["run", "u.db", "--update", "--repeat", "3"]),
        "repetition-before-commit@2",
    );
    assert!(
        len(&journal) > 2_000_000,
        "no hot journal: {} bytes",
        len(&journal)
    );
    usage_error(d, &["run", "u.db"], "--update");
    // A run that writes recovers it and every blob reads back whole.
    ok(d, &small(&["run", "u.db", "--update", "--count", "10"]));
    ok(d, &small(&["run", "u.db", "--verify"]));
    let c = Connection::open(d.join("u.db")).unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

#[test]
fn interrupted_update_without_a_journal_is_flagged_as_possibly_damaged() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "o.db", "--count", "2000", "--size", "4k"]);
    // Finished: nothing to flag.
    ok(
        d,
        &small(&[
            "run",
            "sqlite:o.db?journal_mode=off",
            "--update",
            "--count",
            "20",
        ]),
    );
    ok(d, &small(&["run", "o.db", "--verify"]));
    // How many writers without a journal have recorded themselves and not
    // removed their record (read only once the writer is gone: a reader
    // beside it could make its writes wait).
    let marks = || {
        let c =
            Connection::open_with_flags(d.join("o.db"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        c.query_row(
            "SELECT count(*) FROM blobbench_meta WHERE name LIKE 'unsafe-writer:%'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
    };
    assert_eq!(marks(), 0, "a finished writer removed its record");
    for mode in ["off", "memory"] {
        let target = format!("sqlite:o.db?journal_mode={mode}");
        // Killed with a repetition's updates done and not committed.
        kill_at(
            d,
            &small(&["run", &target, "--update", "--repeat", "3"]),
            "repetition-before-commit@1",
        );
        assert_eq!(marks(), 1, "journal_mode={mode}: the writer's record");
        usage_error(d, &["run", "o.db"], "may be damaged");
        usage_error(
            d,
            &["run", &target, "--update"],
            "`blobbench init o.db --count 2000 --size 4k`",
        );
        ok(d, &["init", "o.db", "--count", "2000", "--size", "4k"]);
        ok(d, &small(&["run", "o.db", "--verify"]));
    }
}

// Class 9: a read run writes nothing, even to a WAL database in use.

#[test]
fn read_run_reads_a_live_wal_database_without_writing_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init", "w.db", "--jmode", "wal", "--count", "300", "--size", "2k",
        ],
    );
    // Another process's connection, holding frames in the WAL.
    let other = Connection::open(d.join("w.db")).unwrap();
    other
        .execute_batch(
            "PRAGMA wal_autocheckpoint=0; UPDATE kv SET v=randomblob(2000) WHERE k <= 100",
        )
        .unwrap();
    let wal = d.join("w.db-wal");
    assert!(len(&wal) > 0, "the WAL holds frames");
    let before = (snapshot(&d.join("w.db")), snapshot(&wal));
    ok(d, &small(&["run", "w.db"]));
    ok(d, &small(&["run", "w.db", "--blob-api", "--random"]));
    // SQLite's readers record their read marks in -shm; the database and
    // its WAL stay byte for byte and stamp for stamp as they were.
    assert_eq!((snapshot(&d.join("w.db")), snapshot(&wal)), before);
    drop(other);
}

#[test]
fn read_run_reads_a_wal_a_crash_left_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init", "c.db", "--jmode", "wal", "--count", "300", "--size", "4k",
        ],
    );
    let wal = d.join("c.db-wal");
    // Killed after a repetition committed and before any checkpoint: the
    // WAL holds committed frames the database file has not had.
    kill_at(
        d,
        &small(&[
            "run",
            "sqlite:c.db?wal_autocheckpoint=0",
            "--update",
            "--repeat",
            "3",
        ]),
        "repetition-after-commit@1",
    );
    assert!(len(&wal) > 1_000_000, "the WAL holds the updates");
    let before = (snapshot(&d.join("c.db")), snapshot(&wal));
    ok(d, &small(&["run", "c.db", "--verify"]));
    assert_eq!((snapshot(&d.join("c.db")), snapshot(&wal)), before);
}

// Full disks and folders that cannot be written: a small tmpfs (root only).

#[test]
fn full_disk_leaves_no_dataset_that_run_accepts() {
    let Some(fs) = Tmpfs::mount("2m") else {
        return;
    };
    let d = fs.path.as_path();
    // 1000 x 10k is refused before anything is written (the free-space
    // check); 208 x 10k passes it but fills the 2 MB disk with the files'
    // blocks, SQLite's pages and its journal on the way.
    for (target, count) in [
        ("sqlite:full.db", "1000"),
        ("dir:full", "1000"),
        ("tree:fulltree", "1000"),
        ("sqlite-ext:ext.db", "1000"),
        ("sqlite:full.db", "208"),
        ("dir:full", "208"),
        ("sqlite-ext:ext.db", "208"),
    ] {
        let out = run(d, &["init", target, "--count", count, "--size", "10k"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{target}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{target}: {err}");
        // Refused up front (too little free) or stopped by the full disk.
        assert!(
            err.contains("full") || err.contains("space") || err.contains("free"),
            "{target}: {err}"
        );
        let out = run(d, &small(&["run", target]));
        assert_eq!(out.status.code(), Some(2), "{target}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
        let _ = std::fs::remove_dir_all(d.join("full"));
        let _ = std::fs::remove_dir_all(d.join("fulltree"));
        let _ = std::fs::remove_dir_all(d.join("ext.db.files"));
        for f in ["full.db", "full.db-journal", "ext.db", "ext.db-journal"] {
            let _ = std::fs::remove_file(d.join(f));
        }
    }
    // quick's work folder: nothing left behind when the disk fills.
    let out = run(d, &["quick", "--dir", "q"]);
    assert!(!out.status.success());
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert_eq!(file_count(&d.join("q")), 0, "quick left files behind");
}

#[test]
fn interrupted_database_in_a_read_only_folder_says_how_to_recover() {
    // Room for the datasets and their journals: init checks free space
    // first.
    let Some(fs) = Tmpfs::mount("32m") else {
        return;
    };
    let d = fs.path.as_path();
    // A hot journal (rollback mode: killed with pages spilled past the
    // 2 MB page cache) and a WAL a crash left behind (killed after a
    // commit, before any checkpoint).
    kill_at(
        d,
        &["init", "h.db", "--count", "5k", "--size", "1k"],
        "dataset-blob@4000",
    );
    assert!(len(&d.join("h.db-journal")) > 0, "no hot journal");
    assert!(len(&d.join("h.db")) > 1_000_000, "no pages spilled");
    ok(
        d,
        &[
            "init", "w.db", "--jmode", "wal", "--count", "300", "--size", "4k",
        ],
    );
    kill_at(
        d,
        &small(&[
            "run",
            "sqlite:w.db?wal_autocheckpoint=0",
            "--update",
            "--repeat",
            "3",
        ]),
        "repetition-after-commit@1",
    );
    assert!(
        len(&d.join("w.db-wal")) > 1_000_000,
        "the WAL holds the updates"
    );
    // A WAL database closed cleanly: no -shm beside it to read through.
    ok(
        d,
        &[
            "init", "c.db", "--jmode", "wal", "--count", "30", "--size", "1k",
        ],
    );
    fs.read_only();
    usage_error(d, &["run", "h.db"], "sqlite3 h.db 'pragma integrity_check'");
    usage_error(d, &["run", "h.db", "--update"], "cannot write");
    usage_error(d, &["run", "c.db"], "journal_mode=delete");
    let out = run(d, &small(&["run", "w.db"]));
    let err = stderr(&out);
    // SQLite reads a WAL through an -shm it can map; where it cannot, the
    // error says why.
    if !out.status.success() {
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("WAL") && err.contains("writable"), "{err}");
    }
}
