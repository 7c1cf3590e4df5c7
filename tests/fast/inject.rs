//! End-to-end tests of the calibration aid: a known extra cost injected
//! into timed store operations (`?inject=` on `run`'s target, `--inject
//! CASE=SPEC` on `quick` and `suite fasterthanfs`), recorded in the result,
//! refused where nothing is timed.

use crate::common::small;
use std::path::Path;

use crate::common::{self, json, ok, usage_error};

fn init(d: &Path, target: &str) {
    ok(
        d,
        &[
            "init",
            target,
            "--count",
            "20",
            "--size",
            "2k",
            "--variance",
            "0",
        ],
    );
}

/// `run` on an sqlite target with `?inject=+2ms`: every operation's time
/// holds the 2 ms (each repetition's operations sum to at least 2 ms
/// each, and so does the time per op), the plan records the injection,
/// the target recorded is the one measured (without it), and the terminal
/// says so.
#[test]
fn run_with_an_injected_extra_takes_at_least_the_extra_per_operation() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "t.db");
    for update in [false, true] {
        let mut args = small(&[
            "run",
            "sqlite:t.db?inject=+2ms",
            "--repeat",
            "2",
            "--json",
            "r.json",
        ]);
        if update {
            args.push("--update");
        }
        let out = ok(d, &args);
        assert!(
            out.contains("injected +2ms per operation into") && out.contains("a testing aid"),
            "{out}"
        );
        let doc = json(&d.join("r.json"));
        let run = &doc["runs"][0];
        assert_eq!(run["plan"]["session"]["inject"], "+2ms", "{run}");
        assert_eq!(run["target"], "sqlite:t.db");
        for rep in run["repetitions"].as_array().unwrap() {
            let ops = rep["ops"].as_u64().unwrap();
            assert_eq!(ops, 20);
            assert!(rep["ops_ns"].as_u64().unwrap() >= ops * 2_000_000, "{rep}");
        }
        let per_op = run["summary"]["time_per_op_ns"]["median"].as_f64().unwrap();
        assert!(per_op >= 2e6, "{per_op}");
    }
    // Without it, nothing is recorded and nothing said.
    let out = ok(
        d,
        &small(&["run", "t.db", "--repeat", "1", "--json", "plain.json"]),
    );
    assert!(!out.contains("injected"), "{out}");
    let doc = json(&d.join("plain.json"));
    assert!(doc["runs"][0]["plan"]["session"].get("inject").is_none());
}

/// The target form works on a folder too, with a factor.
#[test]
fn run_takes_inject_on_a_dir_target() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "dir:f");
    let out = ok(
        d,
        &small(&[
            "run",
            "dir:f?inject=x1.10",
            "--repeat",
            "1",
            "--json",
            "r.json",
        ]),
    );
    let doc = json(&d.join("r.json"));
    assert_eq!(doc["runs"][0]["plan"]["session"]["inject"], "x1.1");
    // What it delivered, recorded and said: the spins sum to at least a
    // tenth of the reads' own time.
    let i = &doc["runs"][0]["repetitions"][0]["injected"];
    let (own, extra) = (
        i["own_ns"].as_u64().unwrap(),
        i["extra_ns"].as_u64().unwrap(),
    );
    assert!(own > 0 && 10 * extra >= own, "{i}");
    assert!(out.contains("; delivered x1."), "{out}");
}

#[test]
fn bad_injections_and_commands_without_timed_operations_refuse_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "t.db");
    usage_error(
        d,
        &["run", "sqlite:t.db?inject=+20xs"],
        "inject \"+20xs\": unknown unit \"xs\"; use +20us or x1.10",
    );
    usage_error(d, &["run", "t.db?inject=x0.5"], "from 1 to 100");
    usage_error(
        d,
        &[
            "serve",
            "sqlite:t.db?inject=+20us",
            "--listen",
            "127.0.0.1:0",
        ],
        "serve refuses it",
    );
    usage_error(d, &["stat", "sqlite:t.db?inject=+20us"], "testing aid");
    usage_error(
        d,
        &["export", "sqlite:t.db?inject=+20us", "out"],
        "testing aid",
    );
    usage_error(
        d,
        &[
            "run",
            "sqlite:t.db?inject=+20us",
            "--threads",
            "2",
            "-t",
            "1s",
        ],
        "single-thread runs",
    );
}

#[test]
fn quick_refuses_an_unknown_case_naming_the_valid_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let quick = |case: &str| {
        vec![
            "quick".to_string(),
            "--inject".to_string(),
            case.to_string(),
            "--dir".to_string(),
            "data".to_string(),
        ]
    };
    let args = quick("read:nfs=x1.25");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    usage_error(
        d,
        &args,
        "quick has no case \"read:nfs\"; use one of: read:db, read-blob-api:db, read-mmap:db, read-multitrans:db, read:dir, read:tree, update:db, durable:db, update:dir, durable:dir, update:tree, durable:tree",
    );
    let args = quick("read:db");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    usage_error(d, &args, "CASE=SPEC");
    let args = quick("read:s3=+1us");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    usage_error(d, &args, "--s3");
    assert!(!d.join("data").exists(), "nothing was made");
    usage_error(
        d,
        &[
            "suite",
            "fasterthanfs",
            "--inject",
            "read-random:db=x1.25",
            "--dir",
            "data",
        ],
        "suite fasterthanfs has no case \"read-random:db\"; use one of: read:db, read-blob-api:db,",
    );
    std::fs::write(d.join("urls.txt"), "http://127.0.0.1:9/blobs/1\n").unwrap();
    usage_error(
        d,
        &[
            "suite",
            "http",
            "--inject",
            "nginx=x1.25",
            "--extra",
            "other=urls.txt",
            "--dir",
            "data",
        ],
        "suite http has no system \"nginx\"; use one of: sqlite-blog, sqlite-kv, dir, other",
    );
    usage_error(
        d,
        &["suite", "http", "--inject", "dir=x0.5", "--dir", "data"],
        "from 1 to 100",
    );
    assert!(!d.join("data").exists(), "nothing was made");
}

/// One quick case injected: only its runs record it, its time per op
/// holds the extra, and the terminal names it.
#[test]
fn quick_injects_exactly_one_case() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = common::ok(
        d,
        &[
            "quick",
            "--count",
            "200",
            "--size",
            "2k",
            "--variance",
            "0",
            "--rounds",
            "1",
            "--dir",
            "data",
            "--json",
            "q.json",
            "--report",
            "none",
            "--inject",
            "read:tree=+1ms",
        ],
    );
    assert!(
        out.contains("injected +1ms per operation into read tree"),
        "{out}"
    );
    let doc = json(&d.join("q.json"));
    let mut injected = 0;
    for run in doc["runs"].as_array().unwrap() {
        // The run's name gains " (round N)"; its plan's stays the case's.
        let name = run["plan"]["name"].as_str().unwrap();
        let inject = &run["plan"]["session"]["inject"];
        if name == "read tree" {
            assert_eq!(*inject, "+1ms");
            let per_op = run["summary"]["time_per_op_ns"]["median"].as_f64().unwrap();
            assert!(per_op >= 1e6, "{per_op}");
            injected += 1;
        } else {
            assert!(inject.is_null(), "{name}: {inject}");
        }
    }
    assert_eq!(injected, 1, "one measured round");
}
