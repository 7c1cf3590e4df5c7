//! `blobbench reproduce`: every claim of the five documents, end to end at
//! the smallest budget (SQLite and files only, no servers), its report in
//! a browser, and two ledgers compared.

use std::path::Path;

use crate::common::{self, ok, usage_error};

/// The claims of the five documents, as the ledger names them: every one
/// must be printed with a verdict or "not run".
pub(crate) const CLAIM_IDS: &[&str] = &[
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

pub(crate) const VERDICTS: &[&str] = &["holds", "does not hold", "inconclusive", "not run"];

/// One smoke-test run of the whole ledger, shared by the tests below.
pub(crate) fn reproduced(d: &Path, json_name: &str) -> String {
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
