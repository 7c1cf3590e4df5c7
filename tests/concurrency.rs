//! Concurrent runs (`run --threads --mix --keys`), end to end: every mix and
//! key distribution on every local target with every read checked; SQLite
//! under several writers counts busy locks instead of failing; files
//! replaced by rename are never read torn, and in-place writes are caught
//! when they are.

use crate::common;

use std::path::Path;

use crate::common::{json, ok, run, usage_error};

/// Per kind: (name, done, busy, missing, torn, stale).
fn kinds(doc: &serde_json::Value) -> Vec<(String, u64, u64, u64, u64, u64)> {
    doc["tables"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let o = &k["outcomes"];
            let n = |v: &serde_json::Value| v.as_u64().unwrap();
            (
                k["kind"].as_str().unwrap_or("commit").to_string(),
                n(&k["ops"]),
                n(&o["busy"]),
                n(&o["missing"]),
                n(&o["torn"]),
                n(&o["stale"]),
            )
        })
        .collect()
}

/// A dataset of `count` blobs of `size` at `target` in `d`.
fn init(d: &Path, target: &str, count: &str, size: &str) {
    ok(d, &["init", target, "--count", count, "--size", size]);
}

#[test]
fn every_mix_and_distribution_runs_on_every_local_target_with_reads_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let targets = [
        "sqlite:wal.db?journal_mode=wal",
        "sqlite:rollback.db",
        "sqlite:blog.db?layout=blog",
        "sqlite-ext:ext.db",
        "dir:files.dir",
        "tree:files.tree",
    ];
    let mixed = "read=40,update=20,insert=10,delete=10,rmw=10,scan=10";
    for (i, target) in targets.iter().enumerate() {
        init(d, target, "60", "3k");
        for (j, keys) in ["uniform", "zipf", "latest", "hotspot:0.2"]
            .iter()
            .enumerate()
        {
            let mix = if j % 2 == 0 { mixed } else { "read=100" };
            let out = format!("c{i}{j}.json");
            let text = ok(
                d,
                &[
                    "run",
                    target,
                    "--threads",
                    "3",
                    "--mix",
                    mix,
                    "--keys",
                    keys,
                    "--count",
                    "400",
                    "--batch",
                    if j == 1 { "4" } else { "1" },
                    "--json",
                    &out,
                ],
            );
            assert!(text.contains("reads checked:"), "{target} {keys}: {text}");
            let doc = json(&d.join(&out));
            let t = &doc["tables"];
            assert!(t["verified"].as_u64().unwrap() > 50, "{target} {keys}: {t}");
            for (kind, done, busy, _, torn, stale) in kinds(&doc) {
                assert_eq!((torn, stale), (0, 0), "{target} {keys} {kind}");
                assert!(done + busy > 0, "{target} {keys}: {kind} never ran");
            }
        }
        // The dataset is whole afterwards: a kvtest-style run reads and
        // checks every key it now holds.
        let after = ok(d, &["run", target, "--verify", "--repeat", "1"]);
        assert!(after.contains("µs per read"), "{target}: {after}");
    }
}

#[test]
fn sqlite_under_several_writers_counts_busy_locks_and_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "sqlite:w.db", "50", "2k");
    let text = ok(
        d,
        &[
            "run",
            "w.db",
            "--threads",
            "4",
            "--mix",
            "update=100",
            "--batch",
            "10",
            "--busy-timeout",
            "0s",
            "-t",
            "1s",
            "--json",
            "w.json",
        ],
    );
    let doc = json(&d.join("w.json"));
    let busy: u64 = kinds(&doc).iter().map(|k| k.2).sum();
    let done: u64 = kinds(&doc)
        .iter()
        .filter(|k| k.0 == "update")
        .map(|k| k.1)
        .sum();
    assert!(
        busy > 0,
        "4 writers with no busy timeout never met a lock: {text}"
    );
    assert!(done > 0, "{text}");
    // Each writer takes the lock at BEGIN IMMEDIATE: the table says so.
    assert!(
        text.contains("busy = another connection held the lock"),
        "{text}"
    );
    ok(d, &["run", "w.db", "--verify", "--repeat", "1"]);
}

#[test]
fn rename_writes_are_never_read_torn_and_in_place_writes_are_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "dir:f.dir", "4", "2m");
    let args = |style: &'static str, out: &'static str| {
        vec![
            "run",
            "dir:f.dir",
            "--threads",
            "4",
            "--mix",
            "read=50,update=50",
            "-t",
            "2s",
            "--write-style",
            style,
            "--json",
            out,
        ]
    };
    ok(d, &args("rename", "r.json"));
    let doc = json(&d.join("r.json"));
    assert!(kinds(&doc).iter().all(|k| k.4 == 0), "{}", doc["tables"]);
    assert!(doc["tables"]["verified"].as_u64().unwrap() > 10);
    // In place, a reader meets half-written blobs: the check finds them,
    // and the run fails saying so (exit 1), the result written first.
    let out = run(d, &args("in-place", "p.json"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("torn or stale"), "{stderr}");
    let torn: u64 = kinds(&json(&d.join("p.json"))).iter().map(|k| k.4).sum();
    assert!(torn > 0);
}

#[test]
fn ycsb_workloads_and_the_open_loop() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "sqlite:y.db?journal_mode=wal", "200", "1k");
    for (w, kinds_wanted) in [
        ("ycsb-a", vec!["read", "update"]),
        ("ycsb-d", vec!["read", "insert"]),
        ("ycsb-e", vec!["insert", "scan"]),
        ("ycsb-f", vec!["read", "rmw"]),
    ] {
        let out = format!("{w}.json");
        ok(
            d,
            &[
                "run",
                "y.db",
                "--workload",
                w,
                "--threads",
                "2",
                "--count",
                "300",
                "--json",
                &out,
            ],
        );
        let doc = json(&d.join(&out));
        let names: Vec<String> = kinds(&doc).into_iter().map(|k| k.0).collect();
        assert_eq!(names, kinds_wanted, "{w}");
        assert_eq!(doc["tables"]["plan"]["workload"], w);
    }
    // Open loop: 500/s for a second, every operation from its intended start.
    ok(
        d,
        &[
            "run",
            "y.db",
            "--threads",
            "2",
            "--rate",
            "500",
            "-t",
            "1s",
            "--json",
            "o.json",
        ],
    );
    let s = &json(&d.join("o.json"))["tables"]["schedule"];
    let achieved = s["achieved_per_s"].as_f64().unwrap();
    assert!((400.0..600.0).contains(&achieved), "{s}");
    assert_eq!(s["not_started"], 0, "{s}");
}

#[test]
fn bad_concurrent_options_are_refused_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "sqlite:x.db", "10", "1k");
    for (args, needle) in [
        (
            &["run", "x.db", "--threads", "2", "--update"][..],
            "--mix update=100",
        ),
        (&["run", "x.db", "--mix", "write=5"], "unknown operation"),
        (&["run", "x.db", "--keys", "zipf:2"], "theta"),
        (&["run", "x.db", "--threads", "0"], "--threads"),
        (
            &["run", "x.db", "--rate", "10", "--batch", "2"],
            "--batch 1",
        ),
        (
            &["run", "x.db", "--threads", "2", "--random"],
            "--keys uniform",
        ),
    ] {
        usage_error(d, args, needle);
    }
}

#[test]
fn the_concurrency_suite_draws_every_layout_against_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let many = (cores * 4).to_string();
    let threads = format!("1,2,{many}");
    let out = ok(
        d,
        &[
            "suite",
            "concurrency",
            "--count",
            "200",
            "--size",
            "2k",
            "--threads",
            &threads,
            "--mixes",
            "read=100;read=50,update=50",
            "-t",
            "300ms",
            "--rounds",
            "2",
            "--json",
            "c.json",
            "--report",
            "c.html",
        ],
    );
    assert!(out.contains(&format!("{many} (> cores)")), "{out}");
    assert!(out.contains("2 threads over 1: sqlite-wal"), "{out}");
    let t = &json(&d.join("c.json"))["tables"];
    let points = t["points"].as_array().unwrap();
    assert_eq!(points.len(), 4 * 2 * 3, "{t}");
    for p in points {
        let rounds = p["rounds"].as_array().unwrap();
        assert_eq!(rounds.len(), 2, "{p}");
        for r in rounds {
            assert!(r["ops_per_s"].as_f64().unwrap() > 0.0, "{p}");
            assert!(r["verified"].as_u64().unwrap() > 0, "{p}");
            assert_eq!(r["wrong"], 0, "{p}");
        }
    }
    let layouts: Vec<&str> = t["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        layouts,
        ["sqlite-wal", "sqlite-rollback", "dir", "sqlite-ext"]
    );
    let html = std::fs::read_to_string(d.join("c.html")).unwrap();
    let chart = common::figure(&html, "1-concurrency-throughput");
    assert_eq!(common::count(&chart, "class=\"series\""), 8, "{chart}");
    usage_error(
        d,
        &["suite", "concurrency", "--mixes", "read=50,insert=50"],
        "inserts and deletes",
    );
    usage_error(
        d,
        &["suite", "concurrency", "--threads", "0"],
        "--threads 0",
    );
}

#[test]
fn advise_measures_the_layouts_at_the_applications_concurrency() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let args = [
        "advise",
        "--sizes",
        "10k..100k",
        "--points",
        "2",
        "--total",
        "2M",
        "--rounds",
        "2",
        "--page-sizes",
        "4096",
        "--threads",
        "3",
        "--writers",
        "1",
        "--json",
        "a.json",
    ];
    let out = ok(d, &args);
    assert!(
        out.contains("at your concurrency: 3 threads, 1 of them writing"),
        "{out}"
    );
    assert!(out.contains("3 threads (1 writing)"), "{out}");
    let a = &json(&d.join("a.json"))["tables"]["advise"];
    assert_eq!(a["input"]["threads"], 3);
    let layouts = a["concurrency"]["layouts"].as_array().unwrap();
    let kinds: Vec<&str> = layouts
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    for l in layouts {
        for field in ["reads_per_s", "writes_per_s", "read_factor", "write_factor"] {
            let v = l[field].as_array().unwrap();
            assert_eq!(v.len(), 2, "{field}: {l}");
            assert!(v.iter().all(|x| x.as_f64().unwrap() > 0.0), "{field}: {l}");
        }
    }
    // One thread: no concurrency step, as before.
    ok(
        d,
        &[
            "advise",
            "--sizes",
            "10k",
            "--points",
            "1",
            "--total",
            "1M",
            "--rounds",
            "1",
            "--page-sizes",
            "4096",
            "--json",
            "b.json",
        ],
    );
    assert!(json(&d.join("b.json"))["tables"]["advise"]["concurrency"].is_null());
    usage_error(
        d,
        &[
            "advise",
            "--sizes",
            "10k",
            "--threads",
            "2",
            "--writers",
            "3",
        ],
        "--writers 3 of --threads 2",
    );
}
