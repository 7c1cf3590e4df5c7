//! The blog seed (003, "Serving Binary Files from SQLite") set beside
//! `suite http`: the blog's sizes by default (200..4000 KiB), siege's
//! sequential walk of the URL file (or random with `--order random`), and
//! the mean response time siege reports and the blog plotted, beside the
//! tails, in the table, the result and the report; and the blog's own table,
//! `files(id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL)` looked up by
//! text id, served beside kvtest's `kv` (rowid), each named.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::common::{json, ok};

/// A tiny keep-alive HTTP server that answers every GET with 5 bytes and
/// records the paths asked for, in the order they arrived.
pub(crate) fn recording_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let log = log.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut first = String::new();
                    if reader.read_line(&mut first).unwrap_or(0) == 0 {
                        return;
                    }
                    // The rest of the head, up to the blank line.
                    let mut line = String::new();
                    while reader.read_line(&mut line).unwrap_or(0) > 2 {
                        line.clear();
                    }
                    if let Some(path) = first.split_whitespace().nth(1) {
                        log.lock().unwrap().push(path.to_string());
                    }
                    let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
                    if stream.write_all(reply).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, seen)
}

/// Runs a small `suite http` at `-c 1` with the recording server as an
/// extra system; returns the output, the result and the paths it got.
pub(crate) fn suite_with_recorder(
    d: &Path,
    order: Option<&str>,
) -> (String, serde_json::Value, Vec<String>, Vec<String>) {
    let (addr, seen) = recording_server();
    let urls: Vec<String> = (1..=7).map(|k| format!("/file/{k:05}.bin")).collect();
    let list: String = urls.iter().map(|p| format!("http://{addr}{p}\n")).collect();
    std::fs::write(d.join("urls.txt"), list).unwrap();
    let mut args = vec![
        "suite",
        "http",
        "--count",
        "12",
        "--size",
        "20k",
        "--variance",
        "5k",
        "-c",
        "1",
        "-t",
        "300ms",
        "--extra",
        "rec=urls.txt",
        "--dir",
        "data",
        "--json",
        "h.json",
        "--report",
        "h.html",
    ];
    if let Some(o) = order {
        args.extend(["--order", o]);
    }
    let out = ok(d, &args);
    let doc = json(&d.join("h.json"));
    let paths = seen.lock().unwrap().clone();
    (out, doc, urls, paths)
}

/// The recording server got more requests than the URL file has lines.
/// The suite loads it for 360 ms (a warm-up and 5 rounds of 60 ms) at one
/// connection; a request to a server that answers 5 bytes at once takes
/// well under a millisecond, and even a loaded 2-core machine (two CPU
/// hogs beside the suite) wakes a waiting thread within a few ms, so the 8
/// requests asked for here are a small share of what arrives.
pub(crate) fn enough_requests(paths: &[String], urls: &[String]) {
    assert!(paths.len() > urls.len(), "{paths:?}");
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn sequential_by_default_walks_the_url_file_in_order_as_siege() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (out, doc, urls, paths) = suite_with_recorder(d, None);
    // More than one pass over the file, to see the walk wrap around (see
    // `enough_requests`).
    enough_requests(&paths, &urls);
    for (i, p) in paths.iter().enumerate() {
        assert_eq!(p, &urls[i % urls.len()], "request {i} of {paths:?}");
    }
    assert_eq!(doc["tables"]["order"], "sequential", "{}", doc["tables"]);
    assert!(
        out.lines().next().unwrap().contains("sequential order"),
        "{out}"
    );
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn random_order_asks_for_urls_out_of_file_order() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (out, doc, urls, paths) = suite_with_recorder(d, Some("random"));
    // At least 8 requests over 7 URLs: a random order follows the file's
    // by chance at most once in 7^8 runs.
    enough_requests(&paths, &urls);
    let in_order = paths
        .iter()
        .enumerate()
        .all(|(i, p)| p == &urls[i % urls.len()]);
    assert!(!in_order, "{paths:?}");
    assert_eq!(doc["tables"]["order"], "random");
    assert!(
        out.lines().next().unwrap().contains("random order"),
        "{out}"
    );
    common::usage_error(d, &["suite", "http", "--order", "zigzag"], "--order");
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn the_mean_response_time_is_in_the_table_the_result_and_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (out, doc, _, _) = suite_with_recorder(d, None);
    let header = out.lines().find(|l| l.starts_with("-c ")).unwrap();
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        columns,
        [
            "-c",
            "system",
            "req/s",
            "ratio",
            "to",
            "sqlite-blog",
            "mean",
            "p50",
            "p99"
        ],
        "{out}"
    );
    for system in ["sqlite-blog", "sqlite-kv", "dir", "rec"] {
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().any(|w| w == system)),
            "{system}: {out}"
        );
    }
    for s in doc["tables"]["http"].as_array().unwrap() {
        let latency = &s["levels"][0]["latency"];
        let mean = latency["mean_ns"].as_f64().unwrap();
        let (min, max) = (
            latency["min_ns"].as_f64().unwrap(),
            latency["max_ns"].as_f64().unwrap(),
        );
        assert!(min <= mean && mean <= max && mean > 0.0, "{s}");
    }
    let html = std::fs::read_to_string(d.join("h.html")).unwrap();
    let mean = common::figure(&html, "1-http-mean");
    assert_eq!(common::count(&mean, "class=\"series\""), 4, "{mean}");
    assert!(mean.contains("data-name=\"dir\""), "{mean}");
    assert!(mean.contains("mean response time"), "{mean}");
    assert!(
        html.contains("12 blobs of 20000 +/- 5000 bytes; sequential order"),
        "{html}"
    );
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn the_blogs_sizes_are_the_default_in_binary_units() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Whitespace folded: clap wraps the help at the terminal's width.
    let help = ok(d, &["suite", "http", "--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("2000 blobs of 200..4000 KiB"), "{help}");
    assert!(help.contains("head -c NK"), "{help}");
    assert!(
        help.contains("[default: 2100KiB]") && help.contains("1900KiB at the default 2100KiB"),
        "{help}"
    );
    assert!(help.contains("[default: sequential]"), "{help}");
    let out = ok(
        d,
        &[
            "suite", "http", "--count", "4", "-c", "1", "-t", "200ms", "--dir", "data", "--json",
            "b.json",
        ],
    );
    assert!(out.contains("4 blobs of 200..4000 KiB"), "{out}");
    let spec = &json(&d.join("b.json"))["tables"]["dataset"];
    assert_eq!(spec["size"], 2100 * 1024, "{spec}");
    assert_eq!(spec["distribution"]["variance"], 1900 * 1024, "{spec}");
    // --size/--variance still override, in the units given.
    let out = ok(
        d,
        &[
            "suite",
            "http",
            "--count",
            "4",
            "--size",
            "20k",
            "--variance",
            "0",
            "-c",
            "1",
            "-t",
            "200ms",
            "--dir",
            "data",
            "--json",
            "k.json",
        ],
    );
    assert!(out.contains("4 blobs of 20000 bytes"), "{out}");
}

/// The body of `GET path` from `addr` (one request, then close).
pub(crate) fn get(addr: &str, path: &str) -> Vec<u8> {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).unwrap();
    let at = reply.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    assert!(reply.starts_with(b"HTTP/1.1 200"), "{path}");
    reply.split_off(at + 4)
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn the_blogs_table_is_served_by_text_id_beside_kvtests_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Whitespace folded: clap wraps the help at the terminal's width.
    let help = ok(d, &["suite", "http", "--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("[default: both]"), "{help}");
    let base = [
        "suite",
        "http",
        "--count",
        "6",
        "--size",
        "20k",
        "--variance",
        "0",
        "-c",
        "1",
        "-t",
        "200ms",
    ];
    // Both (the default): the blog's table first (the ratios' base), then kv.
    let out = ok(
        d,
        &[&base[..], &["--dir", "data", "--json", "both.json"]].concat(),
    );
    let blog_line = "sqlite-blog: table files(id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL), each blob found by its text id";
    assert!(out.contains(blog_line), "{out}");
    assert!(
        out.contains(
            "sqlite-kv: table kv(k INTEGER PRIMARY KEY, v BLOB), each blob found by its rowid"
        ),
        "{out}"
    );
    assert!(out.contains("ratio to sqlite-blog"), "{out}");
    let doc = json(&d.join("both.json"));
    let systems: Vec<(&str, bool)> = doc["tables"]["http"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["system"].as_str().unwrap(), s["table"].is_string()))
        .collect();
    assert_eq!(
        systems,
        [("sqlite-blog", true), ("sqlite-kv", true), ("dir", false)]
    );
    for s in doc["tables"]["http"].as_array().unwrap() {
        let level = &s["levels"][0];
        // Every system answered (each 40 ms round starts a request as it
        // begins), and nothing failed.
        assert!(level["ok"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(level["errors"]["length"], 0, "{s}");
        assert_eq!(level["errors"]["status"], 0, "{s}");
    }

    // The blog's alone, kept: its database is the blog's schema, with the
    // exported file names as ids, and nothing else holds the blobs.
    let out = ok(
        d,
        &[
            &base[..],
            &[
                "--layout", "blog", "--dir", "work", "--keep", "--json", "b.json", "--rounds", "3",
                "--warmup", "0",
            ],
        ]
        .concat(),
    );
    assert!(
        out.contains(blog_line) && !out.contains("sqlite-kv"),
        "{out}"
    );
    let doc = json(&d.join("b.json"));
    assert_eq!(doc["tables"]["warmup_rounds"], 0);
    for s in doc["tables"]["http"].as_array().unwrap() {
        let rounds = s["rounds"][0].as_array().unwrap();
        assert_eq!(rounds.len(), 3, "{s}");
        // The level's figure merges its rounds: every request of each over
        // their time together, a mean of the rounds' rates weighted by
        // their lengths, so it lies between the slowest and the fastest.
        let rates: Vec<f64> = rounds
            .iter()
            .map(|r| r["requests_per_s"].as_f64().unwrap())
            .collect();
        let (slowest, fastest) = (
            rates.iter().copied().fold(f64::INFINITY, f64::min),
            rates.iter().copied().fold(0.0, f64::max),
        );
        let merged = s["levels"][0]["requests_per_s"].as_f64().unwrap();
        // (1e-9: the rounding of a division, not a tolerance of timing.)
        assert!(
            slowest * (1.0 - 1e-9) <= merged && merged <= fastest * (1.0 + 1e-9),
            "{merged} outside {rates:?}: {s}"
        );
    }
    assert!(
        out.contains("(3 rounds of 66.667 ms after 0 warm-up)"),
        "{out}"
    );
    common::usage_error(
        d,
        &["suite", "http", "-t", "20ms", "--rounds", "5"],
        "a round must last at least 10ms",
    );
    let db = d.join("work/http-blog.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let schema: String = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name='files'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        schema,
        "CREATE TABLE files( id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL )"
    );
    let kv: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name='kv'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kv, 0);
    let ids: Vec<String> = conn
        .prepare("SELECT id FROM files ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        ids,
        ["000001", "000002", "000003", "000004", "000005", "000006"]
    );
    drop(conn);

    // serve finds the table by itself, says which it reads, and sends the
    // bytes the folder holds for the same name.
    let (mut child, banner, addr) = common::start_serve_banner(d, "work/http-blog.db", &[]);
    assert!(
        banner.contains("in table files(id VARCHAR(255) PRIMARY KEY"),
        "{banner}"
    );
    for k in [1u64, 4, 6] {
        let file = std::fs::read(d.join(format!("work/http.dir/{k:06}"))).unwrap();
        assert_eq!(get(&addr, &format!("/blobs/{k}")), file, "key {k}");
    }
    let _ = child.kill();
    let _ = child.wait();
    // Asked for the other table, it says what the database holds.
    common::usage_error(
        d,
        &["run", "sqlite:work/http-blog.db?layout=kv"],
        "no kv(k, v) table",
    );
}
