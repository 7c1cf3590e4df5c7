//! End-to-end tests of the binary: each command, kvtest compatibility, and
//! bad input (one line, exit 2, nothing written to a target only read).

use crate::common;
use crate::common::small;

use std::path::{Path, PathBuf};

use crate::common::{json, ok, usage_error};

fn mtime_and_bytes(path: &Path) -> (std::time::SystemTime, Vec<u8>) {
    (
        std::fs::metadata(path).unwrap().modified().unwrap(),
        std::fs::read(path).unwrap(),
    )
}

fn dataset(dir: &Path) -> PathBuf {
    ok(
        dir,
        &[
            "init",
            "t.db",
            "--count",
            "300",
            "--size",
            "3k",
            "--variance",
            "1k",
            "--seed",
            "5",
        ],
    );
    dir.join("t.db")
}

#[test]
fn init_export_run_and_verify_every_target() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "init",
            "t.db",
            "--count",
            "300",
            "--size",
            "3k",
            "--variance",
            "1k",
            "--pagesize",
            "8KiB",
        ],
    );
    assert!(out.contains("300 blobs"), "{out}");
    ok(d, &["export", "t.db", "t.dir"]);
    ok(d, &["export", "t.db", "t.tree", "--tree"]);
    assert!(d.join("t.dir/000001").is_file() && d.join("t.dir/000300").is_file());
    assert!(d.join("t.tree/00/00/01").is_file() && d.join("t.tree/00/03/00").is_file());
    assert_eq!(
        std::fs::read(d.join("t.dir/000123")).unwrap(),
        std::fs::read(d.join("t.tree/00/01/23")).unwrap()
    );
    ok(
        d,
        &["init", "sqlite-ext:e.db", "--count", "50", "--size", "2k"],
    );
    for target in ["t.db", "t.dir", "t.tree", "sqlite-ext:e.db"] {
        for extra in [
            &[][..],
            &["--random"],
            &["--blob-api", "--desc"],
            &["--blob-api", "--mmap", "100M", "--random"],
            &["--multitrans", "--blob-api"],
            &["--multitrans"],
        ] {
            let mut args = small(&[
                "run", target, "--verify", "--repeat", "2", "--json", "r.json",
            ]);
            args.extend_from_slice(extra);
            let out = ok(d, &args);
            assert!(out.contains("Microseconds per BLOB read"), "{out}");
            let doc = json(&d.join("r.json"));
            let run = &doc["runs"][0];
            assert_eq!(run["repetitions"].as_array().unwrap().len(), 2);
            let expect = if target.contains("e.db") { 50 } else { 300 };
            assert_eq!(run["repetitions"][0]["ops"], expect, "{target} {extra:?}");
            assert_eq!(run["repetitions"][0]["verified"], expect);
            assert!(
                run["latency"]["p99_ns"].as_u64().unwrap()
                    >= run["latency"]["p50_ns"].as_u64().unwrap()
            );
        }
    }
    // The page size asked at init is in force and recorded.
    let doc = json(&d.join("r.json"));
    assert_eq!(doc["schema"], "blobbench-result");
    ok(d, &small(&["run", "t.db", "--json", "r.json"]));
    let doc = json(&d.join("r.json"));
    assert_eq!(doc["runs"][0]["store"]["settings"]["page_size"], 8192);
    let env = &doc["environment"];
    assert!(env["sqlite_version"].as_str().unwrap().starts_with("3."));
    assert!(!env["sqlite_compile_options"].as_array().unwrap().is_empty());
    assert!(!env["kernel"].as_str().unwrap().is_empty());
    assert!(env["filesystem"]["fs_type"].as_str().is_some());
}

#[test]
fn updates_in_every_write_style_are_verified() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset(d);
    ok(d, &["export", "t.db", "t.dir"]);
    for style in ["truncate", "in-place", "rename"] {
        for fsync in [false, true] {
            let mut args = small(&[
                "run",
                "t.dir",
                "--update",
                "--random",
                "--count",
                "40",
                "--verify",
                "--repeat",
                "1",
                "--write-style",
                style,
                "--json",
                "w.json",
            ]);
            if fsync {
                args.push("--fsync");
            }
            ok(d, &args);
            let doc = json(&d.join("w.json"));
            let method = doc["runs"][0]["write_method"].as_str().unwrap().to_string();
            assert!(
                method.contains(if style == "rename" {
                    "rename"
                } else if style == "truncate" {
                    "truncate"
                } else {
                    "in place"
                }),
                "{method}"
            );
            assert_eq!(method.contains("fsync"), fsync, "{method}");
        }
    }
    // The dataset is intact after all those rewrites.
    ok(d, &small(&["run", "t.dir", "--verify", "--repeat", "1"]));
    for (mode, extra) in [
        ("wal", vec!["--nosync"]),
        ("delete", vec!["--blob-api"]),
        ("wal", vec!["--multitrans", "--nocheckpoint"]),
    ] {
        let mut args = small(&[
            "run",
            "t.db",
            "--update",
            "--random",
            "--count",
            "60",
            "--verify",
            "--repeat",
            "2",
            "--jmode",
            mode,
            "--integrity-check",
            "--json",
            "w.json",
        ]);
        args.extend(extra.iter().copied());
        let out = ok(d, &args);
        assert!(out.contains("integrity-check: ok"), "{out}");
        let doc = json(&d.join("w.json"));
        let s = &doc["runs"][0]["store"]["settings"];
        assert_eq!(s["journal_mode"], mode);
        let method = doc["runs"][0]["write_method"].as_str().unwrap();
        assert!(method.contains(&format!("journal_mode={mode}")), "{method}");
    }
    ok(d, &small(&["run", "t.db", "--verify", "--repeat", "1"]));
}

/// `--nocheckpoint` as kvtest: wal_autocheckpoint=0 is in force (read back
/// from the database), so the timed COMMIT holds no checkpoint; the
/// checkpoint after it is timed apart. 2000 updates of 10 KB fill the WAL
/// far past SQLite's default 1000 pages, where a checkpoint would copy it
/// into the database inside the COMMIT. Seen by holding the run right
/// after its first COMMIT: with the setting the database file is as it
/// was (every change still in the WAL); without it the COMMIT has already
/// written the file.
#[test]
fn nocheckpoint_keeps_the_checkpoint_out_of_the_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = d.join("c.db");
    ok(
        d,
        &[
            "init", "c.db", "--jmode", "wal", "--count", "2000", "--size", "10k", "--seed", "3",
        ],
    );
    let before = mtime_and_bytes(&db);
    let mut command = common::bin();
    command
        .current_dir(d)
        .args([
            "run",
            "sqlite:c.db?synchronous=normal",
            "--update",
            "--random",
            "--jmode",
            "wal",
            "--nocheckpoint",
            "--repeat",
            "3",
            "--json",
            "c.json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let held = common::Held::start(command, "repetition-after-commit@1");
    assert!(
        mtime_and_bytes(&db) == before,
        "the COMMIT wrote the database file: it checkpointed"
    );
    let wal = std::fs::metadata(d.join("c.db-wal")).unwrap().len();
    // Twice past the 1000 pages (4 MB) where SQLite would checkpoint.
    assert!(wal > 8_000_000, "the WAL holds the updates: {wal} bytes");
    let run = held.release_output();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}{out}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The checkpoint apart from the COMMIT did copy the WAL in.
    assert!(mtime_and_bytes(&db) != before, "nothing was checkpointed");
    assert!(
        out.contains("commit ") && out.contains("checkpoint ") && out.contains("excluded"),
        "{out}"
    );
    assert!(out.contains("wal_autocheckpoint=0"), "{out}");
    let doc = json(&d.join("c.json"));
    let run = &doc["runs"][0];
    assert_eq!(run["store"]["settings"]["wal_autocheckpoint"], 0);
    assert_eq!(run["store"]["settings"]["journal_mode"], "wal");
    for rep in run["repetitions"].as_array().unwrap() {
        let (ops, commit, checkpoint) = (
            rep["ops_ns"].as_u64().unwrap(),
            rep["commit_ns"].as_u64().unwrap(),
            rep["checkpoint_ns"].as_u64().unwrap(),
        );
        assert!(checkpoint > 0, "{rep}");
        assert_eq!(rep["elapsed_ns"].as_u64().unwrap(), ops + commit, "{rep}");
    }
    // Without it SQLite's own setting stays (1000 pages), and the same
    // COMMIT checkpoints: the file has changed when it returns.
    let before = mtime_and_bytes(&db);
    let mut command = common::bin();
    command
        .current_dir(d)
        .args([
            "run", "c.db", "--update", "--repeat", "1", "--json", "d.json",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let held = common::Held::start(command, "repetition-after-commit@1");
    assert!(
        mtime_and_bytes(&db) != before,
        "the COMMIT left the database file as it was"
    );
    assert!(held.release().success());
    let doc = json(&d.join("d.json"));
    assert_eq!(
        doc["runs"][0]["store"]["settings"]["wal_autocheckpoint"],
        1000
    );
}

#[test]
fn updates_reach_the_disk_and_change_content() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset(d);
    ok(d, &["export", "t.db", "t.dir"]);
    let before = std::fs::read(d.join("t.dir/000010")).unwrap();
    ok(
        d,
        &small(&["run", "t.dir", "--update", "--count", "20", "--repeat", "1"]),
    );
    let after = std::fs::read(d.join("t.dir/000010")).unwrap();
    assert_eq!(before.len(), after.len());
    assert_ne!(before, after);
}

#[test]
fn reads_never_write_to_the_target() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = dataset(d);
    ok(d, &["export", "t.db", "t.dir"]);
    let before = mtime_and_bytes(&db);
    let file_before = mtime_and_bytes(&d.join("t.dir/000007"));
    // Past the kernel's timestamp granularity (a tick, at most 10 ms): a
    // write from here on would show in the modification time.
    std::thread::sleep(std::time::Duration::from_millis(20));
    ok(
        d,
        &small(&["run", "t.db", "--random", "--blob-api", "--repeat", "1"]),
    );
    // Cold through the target's own files: --cold as root would empty the
    // whole machine's cache under the tests running beside this one.
    ok(
        d,
        &small(&["run", "t.dir", "--random", "--repeat", "1", "--cold=file"]),
    );
    assert_eq!(mtime_and_bytes(&db), before);
    assert_eq!(mtime_and_bytes(&d.join("t.dir/000007")), file_before);
    assert!(!d.join("t.db-wal").exists() && !d.join("t.db-journal").exists());
    // A read run that would change the journal mode is refused, not done.
    usage_error(d, &["run", "t.db", "--jmode", "wal"], "only reads");
    assert_eq!(mtime_and_bytes(&db), before);
}

/// A cold run records how it evicted and what: every file of the target
/// and their bytes. Per file (`--cold=file`), as `--cold` as root would
/// empty the whole machine's cache under the tests running beside this
/// one (the next test checks that case by what it says).
#[test]
fn cold_runs_say_how_they_evicted() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset(d);
    ok(d, &["export", "t.db", "t.dir"]);
    for (target, files) in [
        ("t.db", vec![d.join("t.db")]),
        (
            "t.dir",
            std::fs::read_dir(d.join("t.dir"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect(),
        ),
    ] {
        ok(
            d,
            &small(&[
                "run",
                target,
                "--cold=file",
                "--repeat",
                "1",
                "--json",
                "c.json",
            ]),
        );
        let doc = json(&d.join("c.json"));
        let cache = &doc["runs"][0]["repetitions"][0]["cache"];
        assert_eq!(cache["state"], "cold");
        let method = cache["method"].as_str().unwrap();
        assert!(method.contains("posix_fadvise"), "{method}");
        let bytes: u64 = files
            .iter()
            .map(|f| std::fs::metadata(f).unwrap().len())
            .sum();
        assert_eq!(cache["files"], files.len(), "{target}: {cache}");
        assert_eq!(cache["bytes"], bytes, "{target}: {cache}");
    }
}

#[test]
fn cold_as_root_says_it_emptied_the_whole_machine_and_file_evicts_only_the_target() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset(d);
    let out = ok(
        d,
        &small(&["run", "t.db", "--cold", "--repeat", "1", "--json", "c.json"]),
    );
    let doc = json(&d.join("c.json"));
    let method = doc["runs"][0]["repetitions"][0]["cache"]["method"]
        .as_str()
        .unwrap()
        .to_string();
    if method.contains("drop_caches") {
        assert!(
            method.starts_with("dropped the page cache of the whole machine (as root)"),
            "{method}"
        );
        assert!(
            out.contains("--cold=file evicts only the target's files"),
            "{out}"
        );
    } else {
        assert!(method.contains("posix_fadvise"), "{method}");
    }
    let out = ok(
        d,
        &small(&[
            "run",
            "t.db",
            "--cold=file",
            "--repeat",
            "1",
            "--json",
            "f.json",
        ]),
    );
    let doc = json(&d.join("f.json"));
    assert_eq!(doc["runs"][0]["plan"]["cache"], "cold-files");
    let cache = &doc["runs"][0]["repetitions"][0]["cache"];
    assert_eq!(cache["state"], "cold");
    let method = cache["method"].as_str().unwrap();
    assert!(
        method.starts_with(
            "posix_fadvise(DONTNEED) on every file of the target (as --cold=file asks"
        ),
        "{method}"
    );
    assert!(out.contains("cold cache (posix_fadvise"), "{out}");
    assert!(!out.contains("whole machine"), "{out}");
}

#[test]
fn run_results_keep_the_whole_histogram_and_the_machines_load() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset(d);
    let out = ok(
        d,
        &small(&[
            "run", "t.db", "--random", "--repeat", "2", "--warmup", "1", "--verify", "--json",
            "h.json",
        ]),
    );
    let doc = blobbench::result::load(&d.join("h.json")).unwrap();
    let r = &doc.runs[0];
    let ops: u64 = r.repetitions.iter().map(|x| x.ops).sum();
    assert_eq!(ops, 600, "two measured repetitions of 300 reads");
    let h = r.histogram().unwrap().expect("the histogram is kept");
    assert_eq!(h.count(), ops);
    // Percentiles and counts recompute exactly; the mean is a float sum,
    // equal up to the order of additions.
    let mut again = h.summary();
    assert!(
        (again.mean_ns - r.latency.mean_ns).abs() <= 1e-9 * r.latency.mean_ns,
        "{again:?}"
    );
    again.mean_ns = r.latency.mean_ns;
    assert_eq!(again, r.latency, "percentiles recompute exactly");
    let env = &doc.environment;
    if Path::new("/proc/loadavg").exists() {
        assert!(env.load_average_start.is_some(), "{env:?}");
        assert!(env.load_average_end.is_some(), "{env:?}");
    }
    // The warning is printed and kept exactly when the record shows a busy machine.
    match blobbench::measure::environment::busy_warning(env) {
        Some(w) => {
            assert!(out.contains(&format!("warning: {w}")), "{out}");
            assert!(r.notes.contains(&w), "{:?}", r.notes);
        }
        None => assert!(!out.contains("busy machine"), "{out}"),
    }
}

#[test]
fn kvtest_style_arguments_work() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init",
            "k.db",
            "-count",
            "0x40",
            "-size",
            "1KiB",
            "-variance",
            "100",
        ],
    );
    let out = ok(
        d,
        &small(&[
            "run",
            "k.db",
            "-count",
            "64",
            "-random",
            "-blob-api",
            "-cache-size",
            "100",
        ]),
    );
    assert!(out.contains("64 reads"), "{out}");
}

#[test]
fn databases_without_a_manifest_are_read_by_scan() {
    // A kvtest-made database: table kv only, random content, no manifest.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let conn = rusqlite::Connection::open(d.join("kv.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB);
         WITH RECURSIVE c(x) AS (VALUES(1) UNION ALL SELECT x+1 FROM c WHERE x<200)
         INSERT INTO kv(k,v) SELECT x, randomblob(2000+(random()%(501))) FROM c;",
    )
    .unwrap();
    drop(conn);
    let out = ok(
        d,
        &small(&["run", "kv.db", "--random", "--blob-api", "--repeat", "1"]),
    );
    assert!(out.contains("200 reads"), "{out}");
    ok(
        d,
        &small(&["run", "kv.db", "--update", "--count", "20", "--repeat", "1"]),
    );
    ok(d, &["export", "kv.db", "kv.dir"]);
    ok(d, &small(&["run", "kv.dir", "--repeat", "1"]));
    usage_error(
        d,
        &["run", "kv.db", "--verify"],
        "--verify needs a dataset made by blobbench",
    );
    // kvtest's export of a foreign db can be replaced by blobbench's own later.
    ok(d, &["export", "kv.db", "kv.dir"]);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset(d);
    std::fs::write(d.join("notes.txt"), "hello, not a database at all").unwrap();
    std::fs::write(d.join("other.json"), "{\"mine\": true}").unwrap();
    std::fs::create_dir(d.join("photos")).unwrap();
    std::fs::write(d.join("photos/cat.jpg"), "meow").unwrap();
    usage_error(d, &["run", "missing.db"], "does not exist");
    usage_error(d, &["run", "dir:nowhere"], "does not exist");
    usage_error(d, &["run", "sqlite:notes.txt"], "not an SQLite database");
    usage_error(d, &["run", "t.db", "--jmode", "fast", "--update"], "fast");
    usage_error(d, &["run", "t.db", "--write-style", "sideways"], "sideways");
    // A typo keeps clap's tip, which is the fix.
    usage_error(
        d,
        &["quick", "--cout", "5"],
        "unexpected argument '--cout' found; a similar argument exists: '--count'",
    );
    usage_error(
        d,
        &["run", "t.db", "--count", "301"],
        "--count 301 is beyond the dataset",
    );
    usage_error(d, &["run", "t.db", "--max-id", "1000"], "--max-id 1000");
    usage_error(d, &["init", "x.db", "--size", "10q"], "10q");
    usage_error(
        d,
        &[
            "init",
            "x.db",
            "--count",
            "10",
            "--variance",
            "20k",
            "--size",
            "10k",
        ],
        "--variance",
    );
    usage_error(
        d,
        &["init", "no/such/folder/x.db", "--count", "10"],
        "does not exist",
    );
    usage_error(d, &["run", "sqlite:t.db?colour=blue"], "colour");
    usage_error(d, &["run", "t.db", "--frobnicate"], "--frobnicate");
    usage_error(
        d,
        &["run", "t.db", "--json", "other.json"],
        "refusing to overwrite",
    );
    // Never overwrite what is not ours.
    usage_error(
        d,
        &["init", "sqlite:notes.txt", "--count", "10"],
        "refusing to replace",
    );
    usage_error(d, &["export", "t.db", "photos"], "not made by blobbench");
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "hello, not a database at all"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("other.json")).unwrap(),
        "{\"mine\": true}"
    );
    assert_eq!(std::fs::read(d.join("photos/cat.jpg")).unwrap(), b"meow");
    // An unwritable folder (root ignores permissions, so use a read-only fs path).
    usage_error(
        d,
        &["init", "/proc/blobbench-test.db", "--count", "10"],
        "/proc",
    );
    usage_error(d, &["quick", "--dir", "/proc/nope"], "/proc/nope");
    assert!(!d.join("x.db").exists());
}

/// `?auto_vacuum=` is set when init makes the database (SQLite reads it
/// back), recorded in the result, and a database made otherwise is refused
/// with the fix, as a page size is; an unknown mode is a usage error.
#[test]
fn auto_vacuum_is_set_when_init_makes_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (scheme, db) in [("sqlite", "inc.db"), ("sqlite-ext", "ext.db")] {
        ok(
            d,
            &[
                "init",
                &format!("{scheme}:{db}?auto_vacuum=incremental"),
                "--count",
                "20",
                "--size",
                "10k",
            ],
        );
        let conn = rusqlite::Connection::open(d.join(db)).unwrap();
        let mode: i64 = conn
            .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, 2, "{scheme}: incremental is 2");
    }
    ok(
        d,
        &small(&[
            "run",
            "sqlite:inc.db?auto_vacuum=incremental",
            "--json",
            "r.json",
        ]),
    );
    let doc = json(&d.join("r.json"));
    assert_eq!(
        doc["runs"][0]["store"]["settings"]["auto_vacuum"], "incremental",
        "{doc}"
    );
    usage_error(
        d,
        &["run", "sqlite:inc.db?auto_vacuum=full"],
        "auto_vacuum=full asked but",
    );
    usage_error(
        d,
        &["init", "sqlite:x.db?auto_vacuum=sometimes", "--count", "5"],
        "sometimes",
    );
    assert!(!d.join("x.db").exists());
}

#[test]
fn quick_prints_ratios_and_writes_json() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "quick",
            "--count",
            "400",
            "--size",
            "4k",
            "--variance",
            "1k",
            "--rounds",
            "2",
            "--dir",
            "data",
            "--json",
            "q.json",
        ],
    );
    for row in [
        "read, SQL statement",
        "read, SQL, a txn per read",
        "read, blob API",
        "read, blob API + mmap",
        "update, WAL+NORMAL",
        "durable each write",
        "disk space",
    ] {
        assert!(out.contains(row), "missing {row}: {out}");
    }
    // The transaction the reads run in, named with the answer each gives.
    assert!(
        out.contains("many reads per transaction") && out.contains("one transaction per read"),
        "{out}"
    );
    let doc = json(&d.join("q.json"));
    let rows = doc["tables"]["quick"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    for r in rows {
        let ratio = r["dir_over_db"].as_f64().unwrap();
        assert!(ratio.is_finite() && ratio > 0.0, "{r}");
    }
    assert!(doc["tables"]["space_bytes"]["dir"].as_u64().unwrap() > 0);
    // 12 cases (4 db reads, dir, tree, 2 db updates, 4 file updates) x 2 rounds, each with its environment-backed run record.
    assert_eq!(doc["runs"].as_array().unwrap().len(), 24);
    // quick writes report.html by default: ratio bars and latency by percentile.
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    let bars = common::figure(&html, "1-quick-ratios");
    assert_eq!(common::count(&bars, "class=\"bar\""), 14, "{bars}");
    for op in ["read", "update"] {
        let f = common::figure(&html, &format!("1-quick-latency-{op}"));
        assert_eq!(
            common::count(&f, "class=\"series\""),
            common::run_names(&doc, op).len(),
            "{f}"
        );
    }
    assert_eq!(common::run_names(&doc, "read").len(), 6);
    assert!(
        html.contains("<details class=\"environment\">") && html.contains("SQLite compile options")
    );
    // --dir was given without --keep: the datasets went, and the folder
    // this run made for them.
    assert!(!d.join("data").exists());
    // Running again makes them anew.
    ok(
        d,
        &[
            "quick",
            "--count",
            "100",
            "--size",
            "1k",
            "--variance",
            "0",
            "--rounds",
            "1",
            "--dir",
            "data",
            "--json",
            "q.json",
        ],
    );
}

/// export's destination uses the target grammar: `dir:out` and `tree:out`
/// make what they name (not a folder called "dir:out"), any target copies
/// into any other, and a copy never lands on its own source.
#[test]
fn export_destination_is_a_target() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset(d);
    let out = ok(d, &["export", "t.db", "dir:flat"]);
    assert!(out.contains("exported 300 blobs"), "{out}");
    assert!(d.join("flat/000001").is_file() && d.join("flat/000300").is_file());
    assert!(!d.join("dir:flat").exists());
    let out = ok(d, &["export", "t.db", "tree:deep"]);
    assert!(out.contains("(tree)"), "{out}");
    assert!(d.join("deep/00/00/01").is_file() && d.join("deep/00/03/00").is_file());
    assert!(!d.join("tree:deep").exists());
    // Copies keep the manifest: each verifies as the original does.
    for t in ["dir:flat", "tree:deep"] {
        ok(d, &small(&["run", t, "--verify", "--repeat", "1"]));
    }
    // Any source, any destination: a tree back into a database.
    ok(d, &["export", "tree:deep", "sqlite:again.db"]);
    ok(d, &small(&["run", "again.db", "--verify", "--repeat", "1"]));
    // --tree only shapes a bare destination.
    usage_error(d, &["export", "t.db", "dir:other", "--tree"], "--tree");
    // Never onto its own source, never over what blobbench did not make.
    usage_error(d, &["export", "dir:flat", "dir:flat"], "onto itself");
    std::fs::create_dir(d.join("photos")).unwrap();
    std::fs::write(d.join("photos/cat.jpg"), "meow").unwrap();
    usage_error(
        d,
        &["export", "t.db", "dir:photos"],
        "not made by blobbench",
    );
    assert_eq!(std::fs::read(d.join("photos/cat.jpg")).unwrap(), b"meow");
}

/// A second `quick` in the same folder keeps the first's result and report
/// beside the new ones, named by the time the first finished, and says so
/// on stderr; the first run, with nothing to replace, keeps nothing.
#[test]
fn a_second_quick_keeps_the_first_result_by_its_time() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let args = [
        "quick",
        "--count",
        "100",
        "--size",
        "1k",
        "--variance",
        "0",
        "--rounds",
        "1",
        "--dir",
        "data",
    ];
    let first = common::run(d, &args);
    assert!(first.status.success(), "{first:?}");
    assert!(!String::from_utf8_lossy(&first.stderr).contains("kept the earlier"));
    assert_eq!(common::names_in(d), ["quick.json", "report.html"]);
    let first_json = std::fs::read(d.join("quick.json")).unwrap();
    let first_html = std::fs::read(d.join("report.html")).unwrap();
    let finished = json(&d.join("quick.json"))["finished_at"]
        .as_str()
        .unwrap()
        .to_string();
    // The environment covers the whole command: captured at its start,
    // finished before the result was written.
    let env = blobbench::result::load(&d.join("quick.json"))
        .unwrap()
        .environment;
    if Path::new("/proc/loadavg").exists() {
        assert!(env.load_average_start.is_some() && env.load_average_end.is_some());
    }
    if Path::new("/proc/stat").exists() {
        assert!(env.cpu_steal_percent.is_some(), "{env:?}");
    }

    let second = common::run(d, &args);
    assert!(second.status.success(), "{second:?}");
    let err = String::from_utf8_lossy(&second.stderr);
    // "2026-11-22T10:41:05Z" -> quick.2026-11-22T10-41-05.json
    let stamp = finished.trim_end_matches('Z').replace(':', "-");
    let kept = format!("quick.{stamp}.json");
    assert!(
        err.contains(&format!("kept the earlier result as {kept}")),
        "{err}"
    );
    assert_eq!(std::fs::read(d.join(&kept)).unwrap(), first_json);
    let names = common::names_in(d);
    let kept_html = names
        .iter()
        .find(|n| n.starts_with("report.") && *n != "report.html")
        .unwrap_or_else(|| panic!("no earlier report kept: {names:?}"));
    assert!(
        err.contains(&format!("kept the earlier report as {kept_html}")),
        "{err}"
    );
    assert_eq!(std::fs::read(d.join(kept_html)).unwrap(), first_html);
    assert_eq!(names.len(), 4, "{names:?}");
    assert_ne!(std::fs::read(d.join("quick.json")).unwrap(), first_json);
}

/// A sweep rewrites its result after every run: those are its own saves,
/// so nothing is kept beside it.
#[test]
fn a_sweeps_own_saves_keep_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = common::run(
        d,
        &[
            "sweep",
            "--param",
            "page_size=4096,8192",
            "--workload",
            "insert:200:1",
            "--rounds",
            "2",
            "--dir",
            "data",
            "--json",
            "s.json",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("kept the earlier"));
    assert_eq!(common::names_in(d), ["data", "s.json"]);
    let records = json(&d.join("s.json"))["tables"]["sweep"]["records"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(records, 4);
}

/// The harness's small runs (tests/common/small.rs) cut only what a test
/// does not name.
#[test]
fn a_plain_run_gets_one_repetition_and_no_warm_up() {
    assert_eq!(
        crate::common::small(&["run", "t.db", "--verify"]),
        ["run", "t.db", "--verify", "--repeat", "1", "--warmup", "0"]
    );
}

#[test]
fn what_the_test_names_and_other_commands_are_kept() {
    assert_eq!(
        crate::common::small(&["run", "t.db", "--repeat", "3"]),
        ["run", "t.db", "--repeat", "3", "--warmup", "0"]
    );
    assert_eq!(
        crate::common::small(&["run", "t.db", "--threads", "2"]),
        ["run", "t.db", "--threads", "2"]
    );
    assert_eq!(crate::common::small(&["init", "t.db"]), ["init", "t.db"]);
}
