//! Part of the concurrency tests in the measured tier (real runs with durations, ignored by a plain `cargo test`);
//! the rest, and the helpers both use, are in `fast::concurrency`.

use crate::common;
use crate::common::small;
use crate::common::{json, ok, usage_error};
use crate::fast::concurrency::*;

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
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
                &small(&[
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
                ]),
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
        let after = ok(d, &small(&["run", target, "--verify", "--repeat", "1"]));
        assert!(after.contains("µs per read"), "{target}: {after}");
    }
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
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
            &small(&[
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
            ]),
        );
        let doc = json(&d.join(&out));
        let names: Vec<String> = kinds(&doc).into_iter().map(|k| k.0).collect();
        assert_eq!(names, kinds_wanted, "{w}");
        assert_eq!(doc["tables"]["plan"]["workload"], w);
    }
    // Open loop at 500/s: operation i falls due at i/500 s from the start,
    // and no operation starts before it is due. How many start by a
    // deadline depends on the machine's load; what cannot vary is that
    // the schedule is never beaten and that the figures add up.
    let open_loop = |end: [&str; 2], out: &str| {
        ok(
            d,
            &small(&[
                "run",
                "y.db",
                "--threads",
                "2",
                "--rate",
                "500",
                end[0],
                end[1],
                "--json",
                out,
            ]),
        );
        let tables = json(&d.join(out))["tables"].clone();
        let s = tables["schedule"].clone();
        let started: u64 = kinds(&json(&d.join(out))).iter().map(|k| k.1 + k.2).sum();
        assert_eq!(s["target_per_s"], 500.0, "{s}");
        // Every operation started had its start lag recorded.
        assert_eq!(s["start_lag"]["count"], started, "{s}");
        // The run lasted at least until the last started operation fell
        // due, (started - 1) / 500 s: never faster than asked.
        let achieved = s["achieved_per_s"].as_f64().unwrap();
        if started >= 2 {
            let most = 500.0 * started as f64 / (started - 1) as f64;
            assert!(achieved <= most * (1.0 + 1e-6), "{achieved} > {most}: {s}");
        }
        (tables, s, started)
    };
    // A count: every operation falls due and starts, whatever the load.
    let (_, s, started) = open_loop(["--count", "500"], "count.json");
    assert_eq!(started, 500, "{s}");
    assert_eq!(s["not_started"], 0, "{s}");
    assert!(s["achieved_per_s"].as_f64().unwrap() > 0.0, "{s}");
    // A time: the operations due within the window (a second, or the run's
    // own length if shorter) either started or are counted as never
    // started; the product's figures follow from its own elapsed time.
    let (t, s, started) = open_loop(["-t", "1s"], "o.json");
    let elapsed = std::time::Duration::from_nanos(t["elapsed_ns"].as_u64().unwrap());
    let window = elapsed.min(std::time::Duration::from_secs(1));
    let due = (window.as_secs_f64() * 500.0).ceil() as u64;
    assert!(started <= due, "{started} started of {due} due: {s}");
    assert_eq!(s["not_started"], due - started, "{due} due: {s}");
    let achieved = s["achieved_per_s"].as_f64().unwrap();
    let expected = started as f64 / window.as_secs_f64();
    assert!((achieved - expected).abs() <= expected * 1e-9, "{s}");
}

/// `suite concurrency --precision`: each point (mix and threads) runs
/// rounds until every layout's rate is within the target or the ceiling,
/// the result records where each stopped, the header and foot say so.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn concurrency_points_stop_at_the_precision_target_and_say_why() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
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
            "1",
            "--mixes",
            "read=100",
            "-t",
            "600ms",
            "--rounds",
            "6",
            "--precision",
            "50%",
            "--max-rounds",
            "7",
            "--dir",
            "data",
            "--json",
            "c.json",
        ],
    );
    assert!(
        out.contains("rounds, each group until +/-50% per point, in rounds of 100ms"),
        "{out}"
    );
    assert!(
        out.contains("rounds, target +/-50% (6-7 rounds, 120 s): read=100 threads=1 "),
        "{out}"
    );
    let t = &json(&d.join("c.json"))["tables"];
    assert_eq!(t["round_ns"], 100_000_000, "{t}");
    let cases = t["stopping"]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4, "one per layout: {t}");
    for (c, p) in cases.iter().zip(t["points"].as_array().unwrap()) {
        let rounds = c["rounds"].as_u64().unwrap();
        assert!((6..=7).contains(&rounds), "{c}");
        assert!(
            ["precision", "ceiling"].contains(&c["stopped"].as_str().unwrap()),
            "{c}"
        );
        assert_eq!(p["rounds"].as_array().unwrap().len() as u64, rounds, "{p}");
        assert_eq!(p["stopped_on_width"], true, "{p}");
    }
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn the_concurrency_suite_draws_every_layout_against_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Four times the cores this process sees, so one thread count is above
    // them; the suite's own count of cores (in its result) judges the table.
    let many = std::thread::available_parallelism().map_or(1, |n| n.get()) * 4;
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
            "--dir",
            "data",
            "--json",
            "c.json",
            "--report",
            "c.html",
        ],
    );
    let t = &json(&d.join("c.json"))["tables"];
    let cores = t["cores"].as_u64().unwrap() as usize;
    for n in [1, 2, many] {
        let marked = out.contains(&format!("{n} (> cores)"));
        assert_eq!(marked, n > cores, "{n} threads on {cores} cores: {out}");
    }
    // The speedup line compares the most threads the cores can run at once
    // (2 here, when there are two cores or more) with one.
    assert_eq!(
        out.contains("2 threads over 1: sqlite-wal"),
        cores >= 2,
        "{cores} cores: {out}"
    );
    let points = t["points"].as_array().unwrap();
    assert_eq!(points.len(), 4 * 2 * 3, "{t}");
    let mut mixed_verified = 0;
    for p in points {
        let rounds = p["rounds"].as_array().unwrap();
        assert_eq!(rounds.len(), 2, "{p}");
        for r in rounds {
            // Each round lasts 150 ms, and its first operation is claimed
            // microseconds after its clock starts: only a worker kept off
            // the cores for the whole 150 ms right then would do none (a
            // loaded 2-core machine runs a ready thread within tens of ms).
            assert!(r["ops_per_s"].as_f64().unwrap() > 0.0, "{p}");
            assert_eq!(r["wrong"], 0, "{p}");
            // Read-only: every operation done is a read, and checked.
            if p["mix"] == "read=100" {
                assert!(r["verified"].as_u64().unwrap() > 0, "{p}");
            } else {
                mixed_verified += r["verified"].as_u64().unwrap();
            }
        }
    }
    assert!(
        mixed_verified > 0,
        "the mixed points' reads are checked too"
    );
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
#[ignore = "measured tier: run scripts/test.sh --measured"]
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
        "--dir",
        "work",
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
    // Each round runs a layout for a second (advise's own round) and its
    // first read and write start as the round begins and take milliseconds:
    // even a loaded 2-core machine completes some of each in every round.
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
            "--dir",
            "work",
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
