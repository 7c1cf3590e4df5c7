//! Seed 004, "Evaluating SQLite Performance by Testing All Parameters":
//! `sweep --experiment N` repeats the article's eight experiments (run
//! here with tiny workloads) and sets the article's conclusion beside this
//! machine's; every sweep prints and records the table schema it assumes.

use crate::common::{json, ok, run, usage_error};
use blobbench::suite::sweep::experiments;

/// The machine's median time per value of `param` in a sweep result.
fn median_of(doc: &serde_json::Value, param: &str, value: &str) -> f64 {
    let mut t: Vec<f64> = doc["tables"]["sweep"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["case"]
                .as_array()
                .unwrap()
                .iter()
                .any(|kv| kv[0] == param && kv[1] == value)
        })
        .map(|r| r["timing"]["ns"].as_f64().unwrap())
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

#[test]
fn experiment_8_runs_small_and_sets_the_article_beside_this_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "sweep",
            "--experiment",
            "8",
            "--workload",
            "insert-copy:300:2",
            "--rounds",
            "3",
            "--dir",
            "data",
            "--json",
            "e8.json",
            "--report",
            "e8.html",
        ],
    );
    // What ran, and what was assumed.
    assert!(
        out.contains("experiment 8 of the article: \"Insert, copy 500,000 rows 10x: Full vs. Normal Sync (SSD)\""),
        "{out}"
    );
    assert!(
        out.contains(
            "workload: Insert, copy 300 twice (--workload; the article's: Insert, copy 500,000 10x)"
        ),
        "{out}"
    );
    assert!(
        out.contains("assumption: the article does not print its table schema"),
        "{out}"
    );
    assert!(
        out.contains("  CREATE TABLE test(symbol TEXT NOT NULL"),
        "{out}"
    );
    assert!(
        out.contains("assumption: the article ran each case once"),
        "{out}"
    );
    // The article's words and figures, labelled as the article's.
    assert!(
        out.contains("the article's conclusion: \"To really compare the two synchronous modes"),
        "{out}"
    );
    assert!(
        out.contains("NORMAL synchronous mode is much faster.\""),
        "{out}"
    );
    assert!(
        out.contains("fastest 27.530 s [NOMUTEX, 1000, 8192, NORMAL, IMMEDIATE, NORMAL, WAL]"),
        "{out}"
    );
    assert!(out.contains("(1.29x the fastest)"), "{out}");
    // This machine's answer, from its own ranking.
    assert!(
        out.contains("this machine (Insert, copy 300 twice, 2 cases, median of 3 round(s)):"),
        "{out}"
    );
    let doc = json(&d.join("e8.json"));
    let sweep = &doc["tables"]["sweep"];
    assert_eq!(sweep["records"].as_array().unwrap().len(), 6);
    assert_eq!(sweep["experiment"]["number"], 8);
    assert_eq!(sweep["experiment"]["article_workload"]["rows"], 500_000);
    assert!(
        sweep["schema"]
            .as_str()
            .unwrap()
            .contains("CREATE INDEX test_symbol_ts ON test(symbol, ts)")
    );
    let (full, normal) = (
        median_of(&doc, "synchronous", "full"),
        median_of(&doc, "synchronous", "normal"),
    );
    let (fast, slow) = if full < normal {
        ("FULL", "NORMAL")
    } else {
        ("NORMAL", "FULL")
    };
    // The experiment's own check (the effects table has a synchronous line too).
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("synchronous: ") && l.contains(" fastest"))
        .unwrap_or_else(|| panic!("no synchronous line: {out}"));
    assert!(
        line.contains(&format!("synchronous: {fast} fastest"))
            && line.contains(&format!("{slow} takes ")),
        "{line} (full {full} ns, normal {normal} ns)"
    );
    // Only the article's two cases ran.
    for r in sweep["records"].as_array().unwrap() {
        let case = r["case"].as_array().unwrap();
        assert!(
            case.iter()
                .any(|kv| kv[0] == "journal_mode" && kv[1] == "wal")
        );
        assert!(
            case.iter()
                .any(|kv| kv[0] == "locking_mode" && kv[1] == "normal")
        );
    }
    let html = std::fs::read_to_string(d.join("e8.html")).unwrap();
    assert!(
        html.contains("the article&#39;s conclusion") || html.contains("the article's conclusion")
    );
}

#[test]
fn experiment_4_reports_the_spread_and_where_the_articles_slowest_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "sweep",
            "--experiment",
            "4",
            "--workload",
            "insert:200:2",
            "--rounds",
            "2",
            "--dir",
            "data",
            "--json",
            "e4.json",
        ],
    );
    assert!(out.contains("blobbench sweep: 16 cases"), "{out}");
    assert!(
        out.contains("of the other 15 cases cannot be told apart from the fastest"),
        "{out}"
    );
    let slowest = out
        .lines()
        .find(|l| l.trim_start().starts_with("slowest: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        slowest.contains(
            "the article's slowest [NOMUTEX, 1000, 8192, NORMAL, IMMEDIATE, FULL, WAL] ranks"
        ) || slowest.contains("the article's slowest too"),
        "{slowest}"
    );
    assert!(out.contains("Of the 16 remaining permutations"), "{out}");
    assert_eq!(
        json(&d.join("e4.json"))["tables"]["sweep"]["records"]
            .as_array()
            .unwrap()
            .len(),
        32
    );
}

#[test]
fn experiment_7_sets_another_disk_beside_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let small = ["--workload", "insert-copy:200:2", "--rounds", "2"];
    let mut six = vec![
        "sweep",
        "--experiment",
        "6",
        "--dir",
        "first",
        "--json",
        "first.json",
    ];
    six.extend(small);
    ok(d, &six);
    let mut seven = vec![
        "sweep",
        "--experiment",
        "7",
        "--dir",
        "other",
        "--json",
        "other.json",
    ];
    seven.extend(small);
    // Without --against it says what the comparison needs.
    let out = ok(d, &seven);
    assert!(
        out.contains("against the first disk: not measured; give --against"),
        "{out}"
    );
    assert!(
        out.contains("Aside from running four times slower"),
        "{out}"
    );
    seven.extend(["--against", "first.json"]);
    let out = ok(d, &seven);
    let line = out
        .lines()
        .find(|l| l.contains("against the first disk (first.json): this disk takes "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("(median over 16 cases)") && line.contains("Spearman"),
        "{line}"
    );
    let sweep = &json(&d.join("other.json"))["tables"]["sweep"];
    assert_eq!(sweep["first_disk"]["records"].as_array().unwrap().len(), 32);
    // --against belongs to experiment 7, and to a run of the same plan.
    usage_error(
        d,
        &["sweep", "--experiment", "6", "--against", "first.json"],
        "--experiment 7",
    );
    usage_error(
        d,
        &[
            "sweep",
            "--experiment",
            "7",
            "--dir",
            "other",
            "--against",
            "first.json",
        ],
        "same --workload",
    );
}

#[test]
fn every_sweep_prints_and_records_its_assumed_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "sweep",
            "--param",
            "page_size=4096",
            "--workload",
            "insert:100",
            "--rounds",
            "1",
            "--dir",
            "data",
            "--json",
            "s.json",
        ],
    );
    assert!(out.contains("CREATE TABLE test("), "{out}");
    assert!(
        !out.contains("experiment"),
        "no experiment was asked: {out}"
    );
    let sweep = &json(&d.join("s.json"))["tables"]["sweep"];
    assert!(
        sweep["schema"]
            .as_str()
            .unwrap()
            .starts_with("CREATE TABLE test(")
    );
    assert!(sweep.get("experiment").is_none());
}

#[test]
fn help_lists_all_eight_experiments_one_line_each() {
    // clap wraps help at 100 columns without a terminal (bin() removes
    // COLUMNS): each experiment's line fits, unwrapped.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(tmp.path(), &["sweep", "--help"]);
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8_lossy(&out.stdout);
    for line in experiments::list() {
        assert!(
            help.lines().any(|l| l.trim() == line),
            "{line} not in:\n{help}"
        );
    }
    assert!(help.contains("needs --dir"), "{help}");
}

#[test]
fn bad_experiments_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    usage_error(d, &["sweep", "--experiment", "0"], "0");
    usage_error(d, &["sweep", "--experiment", "9"], "9");
    usage_error(d, &["sweep", "--experiment", "four"], "four");
    usage_error(d, &["sweep", "--experiment", "7"], "--dir");
    usage_error(
        d,
        &["sweep", "--experiment", "2", "--param", "page_size=4096"],
        "--param",
    );
    usage_error(
        d,
        &["sweep", "--experiment", "8", "--filter", "page_size=4096"],
        "no case",
    );
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "nothing written");
}
