//! End-to-end tests of two seed studies set beside their documents:
//! SQLite's "Internal Versus External BLOBs" (its cache of 2000 pages at
//! 1024 bytes and 31 at 65536, every crossing of 1.00 per page size) and
//! the 2008 comparative LOB benchmark (its "different orders made no
//! difference", measured here with `--order`). Only the local stores run
//! (sqlite, dir); servers::seed_studies runs the LOB order test on
//! PostgreSQL and MariaDB too.

use crate::common;

use crate::common::{json, ok, usage_error};

/// The study's cache by default: the pages each page size read with are
/// printed, kept per cell as SQLite reported them back, and in the report;
/// every page size's crossings are listed beside the study's.
#[test]
fn internal_external_uses_the_study_cache_and_lists_every_crossing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "suite",
            "internal-external",
            "--sizes",
            "10k,50k,200k",
            "--page-sizes",
            "1024,65536",
            "--total",
            "1M",
            "--rounds",
            "2",
            "--dir",
            "data",
            "--json",
            "ie.json",
            "--report",
            "ie.html",
        ],
    );
    assert!(
        out.contains("page cache 2048000 bytes per database (the study's 2000 pages x 1024 bytes, 31 x 65536); cache_size in pages per page size: 1024: 2000, 65536: 31"),
        "{out}"
    );
    assert!(
        out.contains("where the ratio crosses 1.00, per page size"),
        "{out}"
    );
    // Every page size gets its line, with the study's row beside it.
    for page in ["1024", "65536"] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{page}: ")) && l.contains("[study: "))
            .unwrap_or_else(|| panic!("no crossing line for {page}: {out}"));
        let described = [
            "external files start to win above about",
            "the database wins at every blob size",
            "external files win at every blob size",
            "does not cross cleanly",
        ];
        assert!(described.iter().any(|d| line.contains(d)), "{line}");
    }
    // The study's 1024 row at 10k, 50k, 200k: 1.535, 0.608, 0.330: one fall,
    // 0.535 / 0.927 of the way from ln 10k to ln 50k.
    assert!(
        out.contains("[study: external files start to win above about 25k]"),
        "{out}"
    );
    let doc = json(&d.join("ie.json"));
    let t = &doc["tables"];
    assert_eq!(t["cache_bytes"], 2_048_000);
    for c in t["internal_external"].as_array().unwrap() {
        let expected = if c["page_size"] == 1024 { 2000 } else { 31 };
        assert_eq!(c["cache_pages"], expected, "{c}");
    }
    // The runs read with what the cells say (SQLite's own read-back).
    let runs = doc["runs"].as_array().unwrap();
    assert!(
        runs.iter()
            .any(|r| r["store"]["settings"]["cache_size"] == 31)
    );
    // Each page size's crossings are typed, each consistent with its cells.
    for pc in t["crossover"].as_array().unwrap() {
        let page = pc["page_size"].as_u64().unwrap();
        let ratios: Vec<(u64, f64)> = t["internal_external"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["page_size"] == page)
            .map(|c| {
                (
                    c["blob_size"].as_u64().unwrap(),
                    c["external_over_internal"].as_f64().unwrap(),
                )
            })
            .collect();
        let sign_changes = ratios
            .windows(2)
            .filter(|w| (w[0].1 >= 1.0) != (w[1].1 >= 1.0))
            .count();
        let listed = pc
            .get("crossings")
            .and_then(|c| c.as_array())
            .map_or(0, Vec::len);
        assert_eq!(listed, sign_changes, "{pc} vs {ratios:?}");
        if sign_changes > 1 {
            assert_eq!(pc["crossover"], "mixed", "{pc}");
        }
    }
    let html = std::fs::read_to_string(d.join("ie.html")).unwrap();
    assert!(
        html.contains("cache_size in pages per page size: 1024: 2000, 65536: 31"),
        "no cache line in the report"
    );
    assert!(
        html.contains("page size 65536: ") && html.contains("(the study: "),
        "no crossing lines in the report"
    );
}

/// An older result (no crossings stored, a first-fall threshold) is read
/// with every crossing recomputed from its cells: a row that falls and
/// rises again says so in the terminal and the report.
#[test]
fn a_row_that_rises_again_is_reported_as_not_crossing_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results/internal-external.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let template = doc["tables"]["internal_external"][0].clone();
    // The row: 2.89, 0.50, 1.19 at 10k, 100k, 1m (the old rule
    // said "files win above 62k" and stopped there).
    let cells: Vec<serde_json::Value> = [(10_000u64, 2.89), (100_000, 0.50), (1_000_000, 1.19)]
        .iter()
        .map(|&(size, r)| {
            let mut c = template.clone();
            c["blob_size"] = size.into();
            c["count"] = (1_000_000 / size).into();
            c["internal_ns_per_read"] = serde_json::json!([1000.0, 1000.0, 1000.0, 1000.0]);
            let e = 1000.0 * r;
            c["external_ns_per_read"] = serde_json::json!([e, e, e, e]);
            c["external_over_internal"] = r.into();
            c["seed"] = serde_json::Value::Null;
            c
        })
        .collect();
    doc["tables"]["internal_external"] = cells.into();
    doc["tables"]["crossover"] =
        serde_json::json!([{"page_size": 4096, "crossover": {"at": 62_000.0}}]);
    std::fs::write(d.join("old.json"), doc.to_string()).unwrap();
    let out = ok(d, &["report", "old.json", "-o", "old.html"]);
    let html = std::fs::read_to_string(d.join("old.html")).unwrap();
    assert!(
        html.contains("page size 4096: does not cross cleanly (2 crossings): the database wins at 10k, files above about 62k, the database again above about"),
        "{out}"
    );
}

/// Bad cache sizes are refused with the value and the fix.
#[test]
fn internal_external_refuses_a_zero_cache() {
    let tmp = tempfile::tempdir().unwrap();
    usage_error(
        tmp.path(),
        &["suite", "internal-external", "--cache-bytes", "0"],
        "--cache-bytes",
    );
}

/// The database on each server this file's lob runs use: the suite's
/// tables (lob_*) there are theirs alone, and at a URL other than the one
/// the start scripts exported the suite never restarts the server nor
/// changes its global settings.
const OWN_DATABASE: &str = "blobbench_lob_order";

/// `--pg URL` and `--mysql URL` for the servers of `urls`, each at a fresh
/// [`OWN_DATABASE`] made on that server.
fn server_args(urls: &[(&str, String)]) -> Vec<String> {
    let mut args = Vec::new();
    for (flag, url) in urls {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let server = &base[..base.rfind('/').expect("the URL names a database")];
        if *flag == "--pg" {
            let mut admin = postgres::Client::connect(url, postgres::NoTls).unwrap();
            // Separate statements: CREATE DATABASE cannot run in a transaction block.
            admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS {OWN_DATABASE}"))
                .unwrap();
            admin
                .batch_execute(&format!("CREATE DATABASE {OWN_DATABASE}"))
                .unwrap();
        } else {
            use mysql::prelude::Queryable;
            let mut admin = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
            admin
                .query_drop(format!("DROP DATABASE IF EXISTS {OWN_DATABASE}"))
                .unwrap();
            admin
                .query_drop(format!("CREATE DATABASE {OWN_DATABASE}"))
                .unwrap();
        }
        let sep = if query.is_empty() { "" } else { "?" };
        args.push(flag.to_string());
        args.push(format!("{server}/{OWN_DATABASE}{sep}{query}"));
    }
    args
}

/// `--order both`: every size written and read in both orders, the figures
/// from the sequential one, and random / sequential per system, size and
/// phase with its interval and one verdict, in the output, the result and
/// the report. The local stores here; the servers tier runs the same on
/// PostgreSQL and MariaDB (servers::seed_studies).
#[test]
fn lob_order_both_compares_random_with_sequential_and_gives_one_verdict() {
    lob_order_both_on(&[]);
}

/// The `--order both` test on the local stores and the servers `urls`
/// names (`--pg`/`--mysql` and a URL each).
pub(crate) fn lob_order_both_on(urls: &[(&str, String)]) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let servers = server_args(urls);
    let mut args: Vec<&str> = vec![
        "suite",
        "lob",
        "--sizes",
        "1K,100K",
        "--per-size",
        "8",
        "--order",
        "both",
        "--json",
        "lob.json",
        "--report",
        "lob.html",
    ];
    args.extend(servers.iter().map(String::as_str));
    let out = ok(d, &args);
    assert!(
        out.contains("order: sequential (ids 1, 2, 3 .. written, then read back in that order); random order as well"),
        "{out}"
    );
    assert!(
        out.contains("order: random / sequential time per blob"),
        "{out}"
    );
    let verdicts: Vec<&str> = out.lines().filter(|l| l.starts_with("verdict: ")).collect();
    assert_eq!(verdicts.len(), 1, "{out}");
    assert!(
        verdicts[0] == "verdict: order made no difference (within noise), as the paper found"
            || verdicts[0] == "verdict: order made a difference here (see above), unlike the paper",
        "{out}"
    );
    for system in ["sqlite", "dir"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("  {system}: order made "))),
            "{system}: {out}"
        );
    }
    let doc = json(&d.join("lob.json"));
    let t = &doc["tables"];
    assert_eq!(t["orders"], serde_json::json!(["sequential", "random"]));
    let samples = t["lob"].as_array().unwrap();
    let local: Vec<&serde_json::Value> = samples
        .iter()
        .filter(|s| s["system"] == "sqlite" || s["system"] == "dir")
        .collect();
    assert_eq!(local.len(), 8, "2 systems x 2 sizes x 2 orders");
    let random = local.iter().filter(|s| s["order"] == "random").count();
    assert_eq!(random, 4, "sequential is the default and not written");
    // Figure 22 is drawn from the sequential samples only: one point each.
    let per_gb = t["read_1gb_seconds"].as_array().unwrap();
    assert_eq!(per_gb.iter().filter(|g| g["system"] == "sqlite").count(), 2);
    let effects = t["order_effect"].as_array().unwrap();
    let local_effects: Vec<&serde_json::Value> = effects
        .iter()
        .filter(|e| e["system"] == "sqlite" || e["system"] == "dir")
        .collect();
    assert_eq!(local_effects.len(), 8, "2 systems x 2 sizes x 2 phases");
    let median = |v: &serde_json::Value| {
        let x: Vec<f64> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_f64().unwrap())
            .collect();
        common::median(&x)
    };
    for e in &local_effects {
        let find = |order: &str| {
            local
                .iter()
                .find(|s| {
                    s["system"] == e["system"]
                        && s["size"] == e["size"]
                        && s["order"].as_str().unwrap_or("sequential") == order
                })
                .unwrap()
        };
        let key = format!("{}_ns", e["phase"].as_str().unwrap());
        let expected = median(&find("random")[&key]) / median(&find("sequential")[&key]);
        let (r, lo, hi) = (
            e["ratio"].as_f64().unwrap(),
            e["low"].as_f64().unwrap(),
            e["high"].as_f64().unwrap(),
        );
        assert!((r - expected).abs() < 1e-9 * expected.max(1.0), "{e}");
        assert!(lo <= r && r <= hi, "{e}");
        assert_eq!(e["n"], 8, "{e}");
        // A difference is called only beyond 10% with the whole interval.
        match e["call"].as_str().unwrap() {
            "random-slower" => assert!(lo > 1.1, "{e}"),
            "random-faster" => assert!(hi < 1.0 / 1.1, "{e}"),
            "within-noise" => {}
            other => panic!("unexpected call {other}: {e}"),
        }
    }
    let html = std::fs::read_to_string(d.join("lob.html")).unwrap();
    assert!(html.contains("Random / sequential order"), "no order table");
    assert!(
        html.contains("verdict: order made"),
        "no verdict in the report"
    );
    // The figures keep one series per system and one point per size.
    let f = common::figure(&html, "1-lob-read");
    let systems = t["stores"].as_array().unwrap().len();
    assert_eq!(common::count(&f, "<circle"), 2 * systems, "{f}");
    // compare keeps the orders apart: each case once, random ones named so.
    let cmp = ok(d, &["compare", "lob.json", "lob.json"]);
    assert_eq!(common::count(&cmp, "\ndir 1k read "), 1, "{cmp}");
    assert_eq!(
        common::count(&cmp, "\ndir (random order) 1k read "),
        1,
        "{cmp}"
    );
}

/// `--order random` alone: written and read in random order, said so, and
/// recorded per sample; nothing to compare.
#[test]
fn lob_order_random_alone_is_recorded_and_bad_orders_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "suite",
            "lob",
            "--sizes",
            "1K",
            "--per-size",
            "4",
            "--order",
            "random",
            "--json",
            "r.json",
        ],
    );
    assert!(
        out.contains(
            "order: random (written in a random permutation of the ids, read back in another)"
        ),
        "{out}"
    );
    assert!(!out.contains("verdict:"), "{out}");
    let doc = json(&d.join("r.json"));
    assert_eq!(doc["tables"]["orders"], serde_json::json!(["random"]));
    assert!(doc["tables"].get("order_effect").is_none());
    for s in doc["tables"]["lob"].as_array().unwrap() {
        assert_eq!(s["order"], "random", "{s}");
        assert_eq!(s["read_ns"].as_array().unwrap().len(), 4);
    }
    usage_error(d, &["suite", "lob", "--order", "zigzag"], "zigzag");
}
