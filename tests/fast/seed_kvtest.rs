//! End-to-end tests of what the kvtest seed (SQLite's "35% Faster Than The
//! Filesystem" page) asks beyond the suite itself:
//! kvtest's `stat` command, `suite fasterthanfs --cold` and the page's
//! reads-vs-writes figure, and several machines' results drawn side by side.

use crate::common;

use std::path::Path;

use crate::common::{median, ok, usage_error};

/// The number kvtest prints after `label` (`Number of entries:  %8d`).
fn field(out: &str, label: &str) -> i64 {
    out.lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label} in {out}"))
        .trim()
        .parse()
        .unwrap()
}

fn init(d: &Path) {
    ok(
        d,
        &[
            "init",
            "t.db",
            "--count",
            "200",
            "--size",
            "10k",
            "--variance",
            "2k",
        ],
    );
}

#[test]
fn stat_prints_kvtests_fields_without_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d);
    // Free pages inside the file, so that --vacuum has something to remove.
    let conn = rusqlite::Connection::open(d.join("t.db")).unwrap();
    conn.execute("DELETE FROM kv WHERE k > 100", []).unwrap();
    drop(conn);
    let before = std::fs::read(d.join("t.db")).unwrap();
    let modified = std::fs::metadata(d.join("t.db"))
        .unwrap()
        .modified()
        .unwrap();

    let out = ok(d, &["stat", "t.db"]);
    assert!(out.starts_with("stat t.db (read-only; SQLite 3."), "{out}");
    assert_eq!(field(&out, "Number of entries:"), 100);
    let (min, avg, max) = (
        field(&out, "Minimum value size:"),
        field(&out, "Average value size:"),
        field(&out, "Maximum value size:"),
    );
    assert!(
        8000 <= min && min <= avg && avg <= max && max <= 12000,
        "{out}"
    );
    assert_eq!(field(&out, "Page-size:"), 4096);
    let pages = field(&out, "Page-count:");
    assert_eq!(pages * 4096, before.len() as i64, "{out}");
    let free = field(&out, "Freelist-count:");
    assert!(
        free > 100,
        "deleted 100 blobs of 10k, yet {free} free pages: {out}"
    );
    assert!(out.ends_with("Integrity-check:    ok\n"), "{out}");
    // kvtest's column layout: label padded to 20, number right-aligned in 8.
    assert!(out.contains("\nNumber of entries:       100\n"), "{out}");
    // The read wrote nothing: same bytes, same modification time.
    assert_eq!(std::fs::read(d.join("t.db")).unwrap(), before);
    assert_eq!(
        std::fs::metadata(d.join("t.db"))
            .unwrap()
            .modified()
            .unwrap(),
        modified
    );

    // kvtest's single-dash spelling; VACUUM drops the free pages.
    let out = ok(d, &["stat", "t.db", "-vacuum"]);
    assert!(out.contains("Vacuuming....       done\n"), "{out}");
    assert_eq!(field(&out, "Freelist-count:"), 0);
    assert_eq!(field(&out, "Number of entries:"), 100);
    assert!(field(&out, "Page-count:") <= pages - free, "{out}");
    assert!(std::fs::metadata(d.join("t.db")).unwrap().len() < before.len() as u64);
}

#[test]
fn stat_refuses_what_is_not_a_kv_database() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    usage_error(d, &["stat", "missing.db"], "missing.db");
    std::fs::create_dir(d.join("blobs")).unwrap();
    usage_error(d, &["stat", "dir:blobs"], "name the .db file");
    rusqlite::Connection::open(d.join("other.db"))
        .unwrap()
        .execute_batch("CREATE TABLE t(x)")
        .unwrap();
    usage_error(d, &["stat", "other.db"], "no table kv");
}

/// `stat --vacuum` rewrites the database, so what stat would refuse is
/// refused before it: a database without table kv (free pages that VACUUM
/// would have dropped included) keeps every byte and its time.
#[test]
fn stat_vacuum_refuses_a_foreign_database_before_rewriting_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let foreign = d.join("foreign.db");
    let conn = rusqlite::Connection::open(&foreign).unwrap();
    conn.execute_batch(
        "CREATE TABLE notes(x BLOB); \
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) \
         INSERT INTO notes SELECT randomblob(2000) FROM n; \
         DELETE FROM notes WHERE rowid % 2 = 0;",
    )
    .unwrap();
    drop(conn);
    let before = std::fs::read(&foreign).unwrap();
    let modified = std::fs::metadata(&foreign).unwrap().modified().unwrap();
    for vacuum in ["--vacuum", "-vacuum"] {
        usage_error(d, &["stat", "foreign.db", vacuum], "no table kv");
    }
    assert!(
        std::fs::read(&foreign).unwrap() == before,
        "the database changed"
    );
    assert_eq!(
        std::fs::metadata(&foreign).unwrap().modified().unwrap(),
        modified
    );
}

/// Time per blob (operations and commit, over the operations) of each
/// measured round of `case`, in round order.
fn per_round_ns(doc: &serde_json::Value, case: &str) -> Vec<f64> {
    doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"].as_str().unwrap().split(" (round ").next() == Some(case))
        .map(|r| {
            let rep = &r["repetitions"][0];
            let n = |k: &str| rep[k].as_u64().unwrap();
            (n("ops_ns") + n("commit_ns")) as f64 / n("ops").max(1) as f64
        })
        .collect()
}

#[test]
fn fasterthanfs_cold_rows_and_reads_against_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // As an unprivileged user (when the tests run as root): --cold then
    // evicts the suite's own files instead of dropping the whole machine's
    // page cache under every other test.
    let done = common::output(common::unprivileged(common::bin().current_dir(d), d).args([
        "suite",
        "fasterthanfs",
        "--count",
        "200",
        "--size",
        "4k",
        "--variance",
        "1k",
        "--rounds",
        "2",
        "--cold",
        "--dir",
        "data",
        "--json",
        "f.json",
        "--report",
        "f.html",
    ]));
    let out = String::from_utf8_lossy(&done.stdout).into_owned();
    assert!(
        done.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&done.stderr)
    );
    for row in [
        "cold: read, SQL statement",
        "cold: read, blob API",
        "cold: read, blob API + mmap",
    ] {
        assert!(out.contains(row), "{row} missing: {out}");
    }
    assert!(out.contains("cold cache: 'SQLite does not perform as well as direct I/O'"));
    assert!(
        out.contains("the page cache dropped before each timed pass"),
        "{out}"
    );
    assert!(
        out.contains("'between 5 and 15 times slower than reads'"),
        "{out}"
    );
    let doc = common::json(&d.join("f.json"));
    let t = &doc["tables"];
    assert_eq!(t["cold"], true);
    let method = t["cold_method"].as_str().unwrap();
    assert!(method.contains("posix_fadvise(DONTNEED)"), "{method}");
    // Every cold run was timed after an eviction; every other read run warm.
    for r in doc["runs"].as_array().unwrap() {
        let name = r["name"].as_str().unwrap();
        let state = r["repetitions"][0]["cache"]["state"].as_str().unwrap();
        if name.starts_with("read") {
            let want = if name.contains(" cold") {
                "cold"
            } else {
                "warm"
            };
            assert_eq!(state, want, "{name}");
        }
    }
    let rw = t["read_write"].as_array().unwrap();
    let storages: Vec<&str> = rw.iter().map(|r| r["storage"].as_str().unwrap()).collect();
    assert_eq!(storages, ["SQLite", "dir", "tree"]);
    for r in rw {
        let ratio = &r["write_over_read"];
        let f = |name: &str| ratio[name].as_f64().unwrap();
        let (lo, mid, hi) = (f("min"), f("median"), f("max"));
        let e = &ratio["estimate"];
        assert!(
            0.0 < e["low"].as_f64().unwrap()
                && e["low"].as_f64().unwrap() <= mid
                && mid <= e["high"].as_f64().unwrap(),
            "{r}"
        );
        // The ratio is the runs' own times, round by round: write time per
        // blob over read time per blob. Its median lies among the rounds'
        // ratios, their smallest and largest are the range, and each side's
        // time is the median of its rounds'.
        let writes = per_round_ns(&doc, r["write_case"].as_str().unwrap());
        let reads = per_round_ns(&doc, r["read_case"].as_str().unwrap());
        assert_eq!((writes.len(), reads.len()), (2, 2), "{r}");
        let ratios: Vec<f64> = writes.iter().zip(&reads).map(|(w, r)| w / r).collect();
        let close = |a: f64, b: f64| (a - b).abs() <= b.abs() * 1e-9;
        let smallest = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let largest = ratios.iter().copied().fold(0.0, f64::max);
        assert!(close(lo, smallest) && close(hi, largest), "{ratios:?}: {r}");
        assert!(lo * (1.0 - 1e-9) <= mid && mid <= hi * (1.0 + 1e-9), "{r}");
        assert!(close(f("numerator_ns"), median(&writes)), "{writes:?}: {r}");
        assert!(close(f("denominator_ns"), median(&reads)), "{reads:?}: {r}");
        assert!(
            ["confirmed", "not confirmed", "inconclusive"]
                .contains(&r["verdict"].as_str().unwrap())
        );
    }
    let html = std::fs::read_to_string(d.join("f.html")).unwrap();
    assert!(html.contains("cold: read, blob API"));
    assert!(html.contains("Reads vs writes"));
    // One result alone: no machines section.
    assert!(!html.contains("fasterthanfs-machines"));

    // A second machine: the same result under another host name.
    let mut other = doc.clone();
    other["environment"]["hostname"] = "second-box".into();
    std::fs::write(d.join("g.json"), other.to_string()).unwrap();
    let host = doc["environment"]["hostname"].as_str().unwrap().to_string();
    ok(d, &["report", "f.json", "g.json", "-o", "both.html"]);
    let html = std::fs::read_to_string(d.join("both.html")).unwrap();
    let fig = common::figure(&html, "fasterthanfs-machines-machines");
    assert!(fig.contains(&format!("{host} (")), "first machine missing");
    assert!(fig.contains("second-box ("), "second machine missing");
    for platform in ["Win10", "Windows", "Mac", "Android"] {
        assert!(
            fig.contains(&format!("the page (published): {platform}")),
            "{platform}"
        );
    }
    for series in [
        "chart 1: SQL",
        "chart 3: blob API + mmap",
        "chart 5: journal off",
    ] {
        assert!(fig.contains(series), "{series}");
    }
    // The machines' table holds each machine's measured chart 2 ratio.
    let chart2 = doc["tables"]["fasterthanfs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["case"] == "chart 2: read, blob API")
        .unwrap()["dir_over_db"]["median"]
        .as_f64()
        .unwrap();
    assert!(html.contains(&format!("{chart2:.2}x")), "{chart2}");
    assert!(html.contains("about 5x") && html.contains("about 1.35x"));
}
