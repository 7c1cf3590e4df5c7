//! Part of the reproduce tests in the measured tier (real runs with durations, ignored by a plain `cargo test`);
//! the rest, and the helpers both use, are in `fast::reproduce`.

use crate::common::{self, json, ok};
use crate::fast::reproduce::*;
use std::path::Path;

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_short_budget_prints_every_claim_with_a_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("data")).unwrap();
    let out = reproduced(d, "r.json");
    for id in CLAIM_IDS {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} not in the ledger:\n{out}"));
        assert!(
            VERDICTS.iter().any(|v| line.trim_end().ends_with(v)),
            "{id} has no verdict: {line}"
        );
    }
    // No server was given: the server claims are not run and say what to pass.
    let doc = json(&d.join("r.json"));
    let ledger = doc["tables"]["ledger"].as_array().unwrap();
    assert_eq!(ledger.len(), CLAIM_IDS.len(), "one row per claim");
    let claim = |id: &str| ledger.iter().find(|c| c["id"] == id).unwrap().clone();
    // The JSON writes verdicts as kebab-case words.
    assert_eq!(claim("002-mysql-champion")["verdict"], "not-run");
    assert!(
        claim("002-mysql-champion")["measured_text"]
            .as_str()
            .unwrap()
            .contains("--mysql URL"),
        "{}",
        claim("002-mysql-champion")
    );
    assert!(
        out.contains("--pg URL"),
        "servers not given are listed: {out}"
    );
    // The experiments that need no server ran, and their claims got a
    // figure with an interval and a verdict that follows it.
    let read = claim("001-read-35");
    assert_ne!(read["verdict"], "not-run", "{read}");
    let e = &read["measured"];
    let (low, high) = (e["low"].as_f64().unwrap(), e["high"].as_f64().unwrap());
    // Widened by the 10% a rerun can move a figure of one run's rounds.
    assert_eq!(e["interval_over"], "rounds of one run", "{read}");
    let (low, high) = (low / 1.1, high * 1.1);
    let expected = if low >= 1.35 {
        "holds"
    } else if high < 1.35 {
        "does-not-hold"
    } else {
        "inconclusive"
    };
    assert_eq!(read["verdict"], expected, "{read}");
    for e in doc["tables"]["experiments"].as_array().unwrap() {
        let name = e["experiment"].as_str().unwrap();
        if name != "suite aging" {
            assert_eq!(e["status"], "ran", "{e}");
            assert!(e["result"]["tables"].is_object(), "{name} keeps its result");
        }
    }
    assert!(
        out.contains("widened by what a rerun could move it"),
        "the rule is said"
    );
    // The Markdown for an issue holds the ledger.
    let md = std::fs::read_to_string(d.join("r.json.md")).unwrap();
    assert!(md.contains("| 001-read-35 |"), "{md}");
    // The report draws the ledger first and each experiment's section below.
    ok(d, &["report", "r.json", "-o", "r.html"]);
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    let ledger_at = html
        .find("001-read-35")
        .expect("the ledger is in the report");
    let charts_at = html
        .find("<svg")
        .expect("the experiments' charts are drawn");
    assert!(ledger_at < charts_at, "the ledger comes first");
    assert!(html.contains("r.json: suite internal-external"));
}

/// Headless Chromium draws the reproduce report, wide and as a phone
/// does, with no console errors.
#[test]
#[ignore = "needs chromium: run scripts/test.sh"]
fn the_reproduce_report_renders_in_a_browser() {
    let chromium = common::chromium();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/reproduce.json");
    ok(
        d,
        &["report", fixture.to_str().unwrap(), "-o", "reproduce.html"],
    );
    let shots = std::env::var_os("BLOBBENCH_SCREENSHOT_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| d.to_path_buf());
    for (width, name) in [(1280, "reproduce-wide.png"), (390, "reproduce-phone.png")] {
        let shot = shots.join(name);
        let console = common::browse(&chromium, d, "reproduce.html", &shot, width);
        assert!(console.is_empty(), "console messages: {console:?}");
        let img = resvg::tiny_skia::Pixmap::decode_png(&std::fs::read(&shot).unwrap()).unwrap();
        assert_eq!(img.width(), width);
        // Not blank: the page draws more than its background.
        let first = img.pixels()[0];
        let differing = img.pixels().iter().filter(|p| **p != first).count();
        assert!(
            differing > img.pixels().len() / 50,
            "{name} is nearly blank"
        );
    }
}
