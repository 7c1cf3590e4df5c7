//! The blog seed (003, "Serving Binary Files from SQLite") set beside
//! `suite http`: the blog's sizes by default (200..4000 KiB), siege's
//! sequential walk of the URL file (or random with `--order random`), and
//! the mean response time siege reports and the blog plotted, beside the
//! tails, in the table, the result and the report.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use common::{json, ok};

/// A tiny keep-alive HTTP server that answers every GET with 5 bytes and
/// records the paths asked for, in the order they arrived.
fn recording_server() -> (String, Arc<Mutex<Vec<String>>>) {
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
fn suite_with_recorder(
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

#[test]
fn sequential_by_default_walks_the_url_file_in_order_as_siege() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (out, doc, urls, paths) = suite_with_recorder(d, None);
    assert!(paths.len() > 20, "{paths:?}");
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
fn random_order_asks_for_urls_out_of_file_order() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (out, doc, urls, paths) = suite_with_recorder(d, Some("random"));
    assert!(paths.len() > 20, "{paths:?}");
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
fn the_mean_response_time_is_in_the_table_the_result_and_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (out, doc, _, _) = suite_with_recorder(d, None);
    let header = out.lines().nth(1).unwrap();
    for column in [
        "sqlite mean",
        "sqlite p50",
        "sqlite p99",
        "dir mean",
        "rec mean",
    ] {
        assert!(header.contains(column), "{column}: {out}");
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
    assert_eq!(common::count(&mean, "class=\"series\""), 3, "{mean}");
    assert!(mean.contains("data-name=\"dir\""), "{mean}");
    assert!(mean.contains("mean response time"), "{mean}");
    assert!(
        html.contains("12 blobs of 20000 +/- 5000 bytes; sequential order"),
        "{html}"
    );
}

#[test]
fn the_blogs_sizes_are_the_default_in_binary_units() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Whitespace folded: clap wraps the help at the terminal's width.
    let help = ok(d, &["suite", "http", "--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("2000 blobs of 200..4000 KiB"), "{help}");
    assert!(help.contains("head -c NK"), "{help}");
    assert!(
        help.contains("[default: 2100KiB]") && help.contains("[default: 1900KiB]"),
        "{help}"
    );
    assert!(help.contains("[default: sequential]"), "{help}");
    let out = ok(
        d,
        &[
            "suite", "http", "--count", "4", "-c", "1", "-t", "200ms", "--json", "b.json",
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
            "--json",
            "k.json",
        ],
    );
    assert!(out.contains("4 blobs of 20000 bytes"), "{out}");
}
