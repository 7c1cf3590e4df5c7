//! `blobbench reproduce`: every claim of the five documents, end to end at
//! the smallest budget (SQLite and files only, no servers), its report in
//! a browser, and two ledgers compared.

use std::path::Path;

use crate::common::{self, json, ok, usage_error};

/// The claims of the five documents, as the ledger names them: every one
/// must be printed with a verdict or "not run".
const CLAIM_IDS: &[&str] = &[
    "000-small-in-db",
    "000-large-in-files",
    "000-page-8192-16384",
    "001-read-35",
    "001-read-sql",
    "001-read-mmap-2x",
    "001-write-35",
    "001-write-unsafe",
    "001-space-20",
    "001-write-read-sqlite",
    "001-write-read-files",
    "001-fsync-10x",
    "001-multitrans",
    "002-write-mysql-first",
    "002-read-mysql-first",
    "002-mysql-champion",
    "002-mysql-best-size",
    "002-pg-best-size",
    "002-pg-write-50k",
    "002-pg-read-50-100k",
    "002-size-beyond-50k",
    "002-db-below-256k",
    "002-files-above-1m",
    "002-fragments-with-age",
    "003-files-2.3x",
    "003-low-load-small",
    "003-latency-grows-slower",
    "004-nomutex",
    "004-large-page",
    "004-truncate-inserts",
    "004-wal-copy",
    "004-normal-vs-full",
    "004-locking-no-impact",
    "004-transaction-no-difference",
    "004-cache-no-effect",
];

const VERDICTS: &[&str] = &["holds", "does not hold", "inconclusive", "not run"];

/// One smoke-test run of the whole ledger, shared by the tests below.
fn reproduced(d: &Path, json_name: &str) -> String {
    ok(
        d,
        &[
            "reproduce",
            "--budget",
            "30s",
            "--dir",
            "data",
            "--json",
            json_name,
            "--markdown",
            &format!("{json_name}.md"),
        ],
    )
}

#[test]
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
        out.contains("holds when the whole interval"),
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

#[test]
fn a_budget_that_is_no_duration_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    usage_error(tmp.path(), &["reproduce", "--budget", "soon"], "--budget");
    usage_error(tmp.path(), &["reproduce", "--budget", "0s"], "--budget");
}

/// Two machines' ledgers: compare lists the claims whose verdict differs
/// first; report draws one table of claims x machines.
#[test]
fn two_ledgers_compare_and_draw_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/reproduce.json");
    let mut other: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    // The second machine's ledger differs in one verdict, the last claim's.
    let ledger = other["tables"]["ledger"].as_array_mut().unwrap();
    let last = ledger.last_mut().unwrap();
    let flipped = if last["verdict"] == "holds" {
        "does-not-hold"
    } else {
        "holds"
    };
    last["verdict"] = flipped.into();
    let id = last["id"].as_str().unwrap().to_string();
    other["environment"]["hostname"] = "second-machine".into();
    std::fs::write(d.join("b.json"), serde_json::to_vec_pretty(&other).unwrap()).unwrap();
    std::fs::copy(&fixture, d.join("a.json")).unwrap();
    let out = ok(d, &["compare", "a.json", "b.json"]);
    let first = out
        .lines()
        .skip_while(|l| !l.starts_with("claim"))
        .nth(2)
        .unwrap_or_default();
    assert!(
        first.starts_with(&id) && first.ends_with("differs"),
        "{out}"
    );
    assert!(out.contains("1 of"), "{out}");
    ok(d, &["report", "a.json", "b.json", "-o", "m.html"]);
    let html = std::fs::read_to_string(d.join("m.html")).unwrap();
    assert!(
        html.contains("machines side by side"),
        "a machines x claims table"
    );
    assert!(html.contains("second-machine"));
    assert!(
        common::count(&html, &format!(">{id}</td>")) >= 5,
        "the claim in both ledgers (twice each) and in the machines table"
    );
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
