//! End-to-end tests of two seed studies set beside their documents:
//! SQLite's "Internal Versus External BLOBs" (its cache of 2000 pages at
//! 1024 bytes and 31 at 65536, every crossing of 1.00 per page size) and
//! the 2008 comparative LOB benchmark (its "different orders made no
//! difference", measured here with `--order`). Only the local stores run
//! (sqlite, dir); the LOB order test also reaches PostgreSQL or MariaDB
//! when BLOBBENCH_PG_URL or BLOBBENCH_MYSQL_URL is set.

mod common;

use common::{json, ok, usage_error};

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
        html.contains("cache_size in pages: 1024: 2000, 65536: 31"),
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
