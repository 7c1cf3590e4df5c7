//! End-to-end tests of the suites at a small scale: every row or cell is
//! measured, the JSON holds the figures, and bad parameters fail before
//! anything runs.

use crate::common;

use crate::common::{json, ok, ok_with_env, usage_error};

#[test]
fn fasterthanfs_measures_every_chart_and_judges_each_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // The suite's temporary folder goes under d/tmp, to check it is removed.
    std::fs::create_dir(d.join("tmp")).unwrap();
    let out = ok_with_env(
        d,
        &[("TMPDIR", &d.join("tmp"))],
        &[
            "suite",
            "fasterthanfs",
            "--count",
            "600",
            "--size",
            "4k",
            "--variance",
            "1k",
            "--rounds",
            "2",
            "--json",
            "f.json",
            "--report",
            "f.html",
        ],
    );
    for row in [
        "chart 1: read, SQL statement",
        "chart 2: read, blob API",
        "chart 3: read, blob API + mmap",
        "txn per read",
        "chart 4: update WAL+NORMAL",
        "checkpoint included",
        "chart 5: journal OFF, sync OFF",
        "fair: WAL+FULL 1 txn vs fopen wb + fsync",
        "durable: WAL+FULL txn per write",
        "disk space",
    ] {
        assert!(out.contains(row), "missing {row}:\n{out}");
    }
    // The transactions its database runs used, named before the table
    // (the page's multitrans chart reads one per op, the rest share one).
    let scope = out
        .lines()
        .find(|l| l.starts_with("transactions of the database runs"))
        .unwrap_or_else(|| panic!("no transaction line:\n{out}"));
    assert!(
        scope.contains("reads: one transaction (")
            && scope.contains("reads: one transaction per op (")
            && scope.contains("writes: "),
        "{scope}"
    );
    let doc = json(&d.join("f.json"));
    assert_eq!(doc["command"], "suite fasterthanfs");
    let rows = doc["tables"]["fasterthanfs"].as_array().unwrap();
    assert_eq!(rows.len(), 17);
    for r in rows {
        let verdict = r["verdict"].as_str().unwrap();
        assert!(
            [
                "confirmed",
                "db ahead, by less",
                "not confirmed",
                "inconclusive",
                "-"
            ]
            .contains(&verdict),
            "{r}"
        );
        let ratio = r["dir_over_db"]["median"]
            .as_f64()
            .or_else(|| r["dir_over_db"].as_f64())
            .unwrap();
        assert!(ratio.is_finite() && ratio > 0.0, "{r}");
        // Timed rows keep the paired ratio with its bounds, n and method.
        if let Some(e) = r["dir_over_db"].get("estimate") {
            assert_eq!(e["n"], 2, "{r}");
            assert_eq!(e["method"], "paired-log-order-statistic", "{r}");
            assert!(e["low"].as_f64().unwrap() <= e["value"].as_f64().unwrap());
            assert!(e["value"].as_f64().unwrap() <= e["high"].as_f64().unwrap());
            assert_eq!(e["value"], r["dir_over_db"]["median"], "{r}");
        }
    }
    assert!(
        rows.iter()
            .filter(|r| r["dir_over_db"].get("estimate").is_some())
            .count()
            >= 15
    );
    // Every ratio printed with its interval; the spread column is gone.
    assert!(
        regex_like_ratio(&out),
        "no ratio printed as 1.52x [1.30-1.68]:\n{out}"
    );
    assert!(!out.contains("spread"), "{out}");
    assert!(
        out.contains("inconclusive (an interval straddles the claim)"),
        "{out}"
    );
    // 8 read cases + 5 database and 12 file write cases, 2 rounds each.
    assert_eq!(doc["runs"].as_array().unwrap().len(), 50);
    // Every round of a case under the same settings (warm-up not recorded);
    // reads meet the rollback-journal database the suite made, and the
    // rows that leave the checkpoint out never checkpoint inside a commit.
    let settings = assert_same_settings_every_round(&doc, 2);
    for read in ["read sql", "read blob-api multitrans", "read blob-api mmap"] {
        assert_eq!(settings[read]["journal_mode"], "delete", "{read}");
    }
    for excluded in ["update wal normal", "update wal normal multitrans"] {
        assert_eq!(settings[excluded]["wal_autocheckpoint"], 0, "{excluded}");
    }
    assert_eq!(settings["update wal full"]["wal_autocheckpoint"], 1000);
    let updates = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["name"]
                .as_str()
                .unwrap()
                .starts_with("update wal normal (")
        })
        .unwrap();
    assert_eq!(updates["repetitions"][0]["ops"], 60, "count / 10 updates");
    // The report draws every ratio row as two bars (dir, tree) with the claims marked.
    let html = std::fs::read_to_string(d.join("f.html")).unwrap();
    let bars = common::figure(&html, "1-fasterthanfs-ratios");
    let ratio_rows = rows.iter().filter(|r| r["dir_over_db"].is_object()).count();
    assert!(ratio_rows >= 15, "{ratio_rows}");
    assert_eq!(common::count(&bars, "class=\"bar\""), 2 * ratio_rows);
    let claims = rows
        .iter()
        .filter(|r| r["dir_over_db"].is_object() && r["claim"]["kind"] == "at-least")
        .count();
    assert_eq!(common::count(&bars, "class=\"marker\""), claims);
    assert_eq!(common::count(&bars, "class=\"reference\""), 1);
    assert!(bars.contains("file time / database time (log scale)"));
    assert!(bars.contains(">chart 2: read, blob API<"), "{bars}");
    assert!(bars.contains(">1x</text>"), "{bars}");
    let latency = common::figure(&html, "1-fasterthanfs-latency-read");
    assert_eq!(
        common::count(&latency, "class=\"series\""),
        common::run_names(&doc, "read").len()
    );
    assert!(
        latency.contains(">percentile<") && latency.contains(">99%<"),
        "{latency}"
    );
    assert!(
        html.contains("blobbench suite fasterthanfs --count 600"),
        "the rerun command"
    );
    // Its temporary folder is gone.
    assert_eq!(std::fs::read_dir(d.join("tmp")).unwrap().count(), 0);
}

/// Every round of one case ran under the same settings, as read back from
/// the store when it opened (counters that rewrites move, such as
/// page_count and freelist_count, aside). Returns the settings by case.
pub(crate) fn assert_same_settings_every_round(
    doc: &serde_json::Value,
    rounds: usize,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    let mut by_case: std::collections::BTreeMap<String, Vec<serde_json::Value>> =
        Default::default();
    for run in doc["runs"].as_array().unwrap() {
        let name = run["name"].as_str().unwrap();
        let case = name.split(" (round ").next().unwrap().to_string();
        let mut settings = run["store"]["settings"].clone();
        if let Some(m) = settings.as_object_mut() {
            m.remove("page_count");
            m.remove("freelist_count");
        }
        by_case.entry(case).or_default().push(settings);
    }
    assert!(!by_case.is_empty());
    by_case
        .into_iter()
        .map(|(case, all)| {
            assert_eq!(all.len(), rounds, "{case}: one run per measured round");
            for (i, s) in all.iter().enumerate() {
                assert_eq!(s, &all[0], "{case}: round {} differs from round 1", i + 1);
            }
            (case, all[0].clone())
        })
        .collect()
}

/// quick: every case meets the same database in every round (reads a
/// rollback journal, not the WAL the update cases leave), and its
/// "checkpoint excluded" update runs with wal_autocheckpoint=0.
#[test]
fn quick_runs_every_round_under_the_same_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "quick",
            "--count",
            "300",
            "--size",
            "4k",
            "--variance",
            "1k",
            "--rounds",
            "3",
            "--dir",
            "data",
            "--json",
            "q.json",
            "--report",
            "none",
        ],
    );
    let doc = json(&d.join("q.json"));
    let settings = assert_same_settings_every_round(&doc, 3);
    for read in ["read sql", "read blob-api", "read blob-api mmap"] {
        assert_eq!(settings[read]["journal_mode"], "delete", "{read}");
    }
    assert_eq!(settings["update wal normal"]["journal_mode"], "wal");
    assert_eq!(settings["update wal normal"]["wal_autocheckpoint"], 0);
    // The durable case keeps SQLite's automatic checkpoints (its row counts them).
    assert_eq!(
        settings["update wal full per-write txn"]["wal_autocheckpoint"],
        1000
    );
    let excluded = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["plan"]["exclude_checkpoint"] == true)
        .count();
    assert_eq!(excluded, 3, "the WAL+NORMAL update, every round");
    // The database is left as it was made: a rollback journal, no WAL beside it.
    assert!(!d.join("data/quick.db-wal").exists());
}

#[test]
fn internal_external_fills_the_matrix_and_derives_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "suite",
            "internal-external",
            "--sizes",
            "10k,100k",
            "--page-sizes",
            "1024,4096,16384",
            "--total",
            "2M",
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
    assert!(out.contains("this machine"), "{out}");
    assert!(out.contains("the study (2011"), "{out}");
    assert!(out.contains("best page size for blob reads:"), "{out}");
    assert!(regex_like_ratio(&out), "{out}");
    let doc = json(&d.join("ie.json"));
    let cells = doc["tables"]["internal_external"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    for c in cells {
        assert_eq!(c["internal_ns_per_read"].as_array().unwrap().len(), 2);
        let r = c["external_over_internal"].as_f64().unwrap();
        assert!(r.is_finite() && r > 0.0, "{c}");
        assert_eq!(c["ratio"]["value"].as_f64().unwrap(), r, "{c}");
        assert_eq!(c["ratio"]["method"], "paired-log-order-statistic", "{c}");
        // count = total / size
        let expected = 2_000_000 / c["blob_size"].as_u64().unwrap();
        assert_eq!(c["count"].as_u64().unwrap(), expected);
    }
    // The seed's figure sits beside each cell it has.
    let cell_4096_10k = cells
        .iter()
        .find(|c| c["page_size"] == 4096 && c["blob_size"] == 10_000)
        .unwrap();
    assert_eq!(cell_4096_10k["seed"].as_f64().unwrap(), 2.261);
    // Without --keep, each blob size's datasets are removed once measured.
    assert_eq!(std::fs::read_dir(d.join("data")).unwrap().count(), 0);
    // 6 cells x (internal + external) x 2 rounds.
    assert_eq!(doc["runs"].as_array().unwrap().len(), 24);
    // The report's matrix: one colored cell per measurement, the study's figure beside it.
    let html = std::fs::read_to_string(d.join("ie.html")).unwrap();
    let m = common::figure(&html, "1-internal-external-matrix");
    assert_eq!(common::count(&m, "class=\"cell\""), 6);
    assert!(m.contains("study 2.26"), "{m}");
    for label in [
        ">1024<",
        ">4096<",
        ">16384<",
        ">10k<",
        ">100k<",
        ">page size<",
        ">blob size<",
    ] {
        assert!(m.contains(label), "{label} missing: {m}");
    }
    let r = cell_4096_10k["external_over_internal"].as_f64().unwrap();
    assert!(m.contains(&format!(">{r:.2}<")), "{r:.2} not drawn: {m}");
}

/// Whether `out` holds a ratio with its interval: `1.52x [1.30-1.68]`.
pub(crate) fn regex_like_ratio(out: &str) -> bool {
    out.split("x [").skip(1).any(|rest| {
        let Some(end) = rest.find(']') else {
            return false;
        };
        let bounds: Vec<&str> = rest[..end].split('-').collect();
        bounds.len() == 2 && bounds.iter().all(|b| b.parse::<f64>().is_ok())
    })
}

#[test]
fn quick_prints_every_ratio_with_its_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "quick", "--count", "300", "--size", "4k", "--rounds", "3", "--dir", "data", "--json",
            "q.json",
        ],
    );
    assert!(regex_like_ratio(&out), "{out}");
    assert!(!out.contains("spread"), "{out}");
    // 3 rounds: too few for 95%; [min-max] and its true coverage, said
    // beside every interval and once under the table, never "95%".
    assert!(out.contains("3 rounds: [min-max] covers 75%"), "{out}");
    assert!(out.contains("], 75%"), "{out}");
    // Each of the 7 rows: two ratios with intervals.
    let ratios = out
        .lines()
        .filter(|l| l.matches("x [").count() == 2)
        .count();
    assert_eq!(ratios, 7, "{out}");
    let doc = json(&d.join("q.json"));
    for r in doc["tables"]["quick"].as_array().unwrap() {
        let e = &r["estimates"];
        assert_eq!(e["dir_over_db"]["value"], r["dir_over_db"], "{r}");
        assert_eq!(
            e["dir_over_db"]["method"], "paired-log-order-statistic",
            "{r}"
        );
        assert_eq!(e["db_ns_per_op"]["method"], "order-statistic", "{r}");
        assert_eq!(e["db_ns_per_op"]["coverage"], 0.75, "{r}");
        assert_eq!(e["db_ns_per_op"]["n"], 3, "{r}");
        assert!(r.get("spread_pct").is_none(), "{r}");
    }
    // Markdown and CSV print the same `x [lo-hi]` form.
    ok(
        d,
        &[
            "report",
            "q.json",
            "-o",
            "r.html",
            "--markdown",
            "q.md",
            "--csv",
            "csv",
        ],
    );
    let md = std::fs::read_to_string(d.join("q.md")).unwrap();
    assert!(regex_like_ratio(&md), "{md}");
    let csv = std::fs::read_to_string(d.join("csv/1-quick-quick.csv")).unwrap();
    assert!(regex_like_ratio(&csv), "{csv}");
}

/// quick by default stops each group of cases at a precision target: each
/// case records its rounds and why they ended, and the record agrees with
/// the rule (met: within the target; ceiling: at it), whatever the
/// machine's noise made of it.
#[test]
fn quick_rounds_stop_at_the_precision_target_and_say_why() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "quick",
            "--count",
            "300",
            "--size",
            "4k",
            "--precision",
            "20%",
            "--max-rounds",
            "9",
            "--dir",
            "data",
            "--json",
            "q.json",
            "--report",
            "none",
        ],
    );
    assert!(out.contains("each group until +/-20%"), "{out}");
    assert!(out.contains("rounds, target +/-20% (6-9 rounds"), "{out}");
    let doc = json(&d.join("q.json"));
    let stopping = &doc["tables"]["stopping"];
    assert_eq!(stopping["rule"]["rule"], "precision", "{stopping}");
    assert_eq!(stopping["rule"]["half_width"], 0.2, "{stopping}");
    let cases = stopping["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 12, "{stopping}");
    let mut by_group: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for c in cases {
        let rounds = c["rounds"].as_u64().unwrap();
        assert!((6..=9).contains(&rounds), "{c}");
        let width = c["half_width"].as_f64().unwrap();
        match c["stopped"].as_str().unwrap() {
            "precision" => assert!(width <= 0.2, "{c}"),
            "ceiling" => assert!(rounds == 9 && width > 0.2, "{c}"),
            "time-budget" => assert!(width > 0.2, "{c}"),
            other => panic!("stopped: {other} in {c}"),
        }
        // A case's runs are its rounds.
        let name = c["case"].as_str().unwrap();
        let runs = doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                r["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{name} (round "))
            })
            .count();
        assert_eq!(runs as u64, rounds, "{c}");
        by_group
            .entry(c["group"].as_str().unwrap().to_string())
            .or_default()
            .push(rounds);
    }
    let groups: Vec<&String> = by_group.keys().collect();
    assert_eq!(groups, ["durable writes", "reads", "updates"], "{stopping}");
    for (group, rounds) in &by_group {
        assert!(
            rounds.iter().all(|n| *n == rounds[0]),
            "{group}: {rounds:?}"
        );
    }
    // Intervals of rounds that stopped on width are the wider kind, which
    // keeps 95% after stopping.
    for r in doc["tables"]["quick"].as_array().unwrap() {
        let e = &r["estimates"]["dir_over_db"];
        assert_eq!(e["method"], "paired-log-sequential-order-statistic", "{r}");
        assert_eq!(e["coverage"], 0.95, "{r}");
    }
}

/// suite internal-external --precision: each cell (its internal and
/// external reads) stops on its own once its ratio is that precise, the
/// result says where and why, and the cell's interval is the kind that
/// keeps 95% after stopping; an injected cost lands in the one case named.
#[test]
fn internal_external_cells_stop_at_the_precision_target_and_say_why() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "suite",
            "internal-external",
            "--sizes",
            "2k,20k",
            "--page-sizes",
            "4096",
            "--total",
            "400k",
            "--precision",
            "20%",
            "--max-rounds",
            "8",
            "--inject",
            "20000-page-4096:external=x2",
            "--dir",
            "data",
            "--json",
            "ie.json",
        ],
    );
    assert!(out.contains("each group until +/-20%"), "{out}");
    assert!(out.contains("rounds, target +/-20% (6-8 rounds"), "{out}");
    let doc = json(&d.join("ie.json"));
    let t = &doc["tables"];
    let cases = t["stopping"]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4, "{t}");
    for c in cases {
        let rounds = c["rounds"].as_u64().unwrap();
        assert!((6..=8).contains(&rounds), "{c}");
        let width = c["half_width"].as_f64().unwrap();
        match c["stopped"].as_str().unwrap() {
            "precision" => assert!(width <= 0.2, "{c}"),
            "ceiling" | "time-budget" => assert!(width > 0.2, "{c}"),
            other => panic!("stopped: {other} in {c}"),
        }
    }
    for cell in t["internal_external"].as_array().unwrap() {
        let rounds = cell["internal_ns_per_read"].as_array().unwrap().len();
        assert!((6..=8).contains(&rounds), "{cell}");
        assert_eq!(
            cell["ratio"]["method"], "paired-log-sequential-order-statistic",
            "{cell}"
        );
    }
    let injected: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["plan"]["session"]["inject"].is_null())
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(!injected.is_empty());
    assert!(
        injected
            .iter()
            .all(|n| n.starts_with("external 20000 page 4096 (round ")),
        "{injected:?}"
    );
}

/// quick --runs K: K independent runs on fresh datasets in one result,
/// each figure between the runs, and compare reading each run as one
/// result a side.
#[test]
fn quick_runs_give_intervals_between_runs_that_compare_reads_run_by_run() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "quick", "--count", "300", "--size", "4k", "--runs", "4", "--rounds", "2", "--dir",
            "data", "--json", "q.json", "--report", "none",
        ],
    );
    assert!(
        out.contains("4 runs of 2 rounds, each on a fresh dataset"),
        "{out}"
    );
    assert!(out.contains("interval between the 4 runs"), "{out}");
    let doc = json(&d.join("q.json"));
    assert_eq!(doc["tables"]["between_runs"], 4);
    let runs = doc["runs"].as_array().unwrap();
    // 12 cases x 2 rounds x 4 runs, each named by its run and round.
    assert_eq!(runs.len(), 96);
    for k in 1..=4 {
        let tag = format!("read sql (run {k}) (round 2)");
        assert!(runs.iter().any(|r| r["name"] == tag.as_str()), "{tag}");
    }
    // Each run met its own dataset: the database was made anew each run
    // (its manifest's id differs run to run).
    let mut ids: Vec<&str> = runs
        .iter()
        .filter(|r| r["name"].as_str().unwrap().starts_with("read sql (run "))
        .map(|r| r["catalog"]["manifest"]["id"].as_str().unwrap())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), 4, "{ids:?}");
    let reference = &doc["environment"]["reference"];
    assert_eq!(
        reference["run_ends"].as_array().unwrap().len(),
        4,
        "{reference}"
    );
    for r in doc["tables"]["quick"].as_array().unwrap() {
        let e = &r["estimates"]["dir_over_db"];
        assert_eq!(e["method"], "between-runs", "{r}");
        assert_eq!(e["n"], 4, "{r}");
        assert_eq!(e["coverage"], 0.875, "{r}");
    }
    // compare takes each run as one result: 4 samples a side, judged.
    let cmp = ok(d, &["compare", "q.json", "q.json", "--json", "c.json"]);
    assert!(cmp.contains("(4)"), "{cmp}");
    assert!(!cmp.contains("insufficient data (2 vs 2"), "{cmp}");
    // Each side's interval says where a rerun's figure lands: wider than
    // the runs themselves span, as a rerun's figure is as uncertain.
    let changes = json(&d.join("c.json"))["tables"]["compare"]["changes"].clone();
    let mut widened = 0;
    for c in changes.as_array().unwrap() {
        let side = &c["before"];
        let (min, max) = (side["min"].as_f64().unwrap(), side["max"].as_f64().unwrap());
        let interval = side["interval"].as_array().unwrap();
        let (low, high) = (interval[0].as_f64().unwrap(), interval[1].as_f64().unwrap());
        assert!(low <= min && high >= max, "{side}");
        widened += usize::from(low < min && high > max);
    }
    assert!(widened > 0, "{changes}");
}

#[test]
fn rounds_options_that_contradict_each_other_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    usage_error(
        d,
        &["quick", "--rounds", "5", "--precision", "3%"],
        "--precision",
    );
    usage_error(
        d,
        &["quick", "--min-rounds", "10", "--max-rounds", "8"],
        "--min-rounds 10 is above --max-rounds 8",
    );
    usage_error(d, &["quick", "--min-rounds", "3"], "--min-rounds");
    // --max-rounds below a default floor lowers the floor instead: only a
    // floor the user gave is refused (--s3's floor is 7).
    let out = common::run(
        d,
        &[
            "quick",
            "--s3",
            "s3://b/p?endpoint=http://127.0.0.1:1",
            "--max-rounds",
            "6",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("is above --max-rounds"), "{err}");
    usage_error(d, &["quick", "--precision", "0.03"], "from 0.5% to 50%");
    usage_error(
        d,
        &["suite", "fasterthanfs", "--rounds", "3", "--max-time", "1m"],
        "--max-time",
    );
}

#[test]
fn suite_parameters_are_checked_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    usage_error(
        d,
        &["suite", "internal-external", "--page-sizes", "1000"],
        "1000",
    );
    usage_error(d, &["suite", "internal-external", "--sizes", "10q"], "10q");
    usage_error(
        d,
        &["suite", "internal-external", "--sizes", ","],
        "--sizes",
    );
    usage_error(d, &["suite", "fasterthanfs", "--rounds", "0"], "--rounds");
    usage_error(
        d,
        &[
            "suite",
            "fasterthanfs",
            "--count",
            "100",
            "--updates",
            "500",
        ],
        "--updates 500",
    );
    usage_error(d, &["suite", "nosuch"], "nosuch");
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "nothing written");
}

#[test]
fn sweep_ranks_cases_resumes_and_recommends_a_power_safe_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let args = [
        "sweep",
        "--param",
        "page_size=4096,8192",
        "--param",
        "synchronous=off,normal",
        "--param",
        "journal_mode=wal,memory",
        "--param",
        "temp_store=memory",
        "--workload",
        "insert:2k:2",
        "--workload",
        "blob-update:200:4k",
        "--rounds",
        "2",
        "--top",
        "2",
        "--dir",
        "data",
        "--json",
        "s.json",
        "--report",
        "s.html",
    ];
    // A budget spent before the first run: nothing measured, the sweep saved as incomplete.
    let mut first = args.to_vec();
    first.extend(["--time-budget", "1ns"]);
    let out = ok(d, &first);
    assert!(out.contains("incomplete"), "{out}");
    let doc = json(&d.join("s.json"));
    assert_eq!(doc["tables"]["sweep"]["complete"], false);
    assert_eq!(
        doc["tables"]["sweep"]["records"].as_array().unwrap().len(),
        0
    );

    // --resume runs all 8 cases x 2 workloads x 2 rounds.
    let mut again = args.to_vec();
    again.push("--resume");
    let out = ok(d, &again);
    let doc = json(&d.join("s.json"));
    let records = doc["tables"]["sweep"]["records"].as_array().unwrap();
    assert_eq!(records.len(), 32);
    assert_eq!(doc["tables"]["sweep"]["complete"], true);
    for r in records {
        assert!(r["timing"]["ns"].as_u64().unwrap() > 0);
        // temp_store=memory reads back as 2.
        let back = r["timing"]["settings_read_back"].as_array().unwrap();
        assert!(
            back.iter().any(|kv| kv[0] == "temp_store" && kv[1] == "2"),
            "{r}"
        );
    }
    assert!(out.contains("Insert 2,000 twice took"), "{out}");
    assert!(out.contains("Update 200 blobs of 4000 bytes took"), "{out}");
    assert!(out.contains("...[snip]..."), "{out}");
    assert!(out.contains("effect of each parameter"), "{out}");
    // The recommendation is never an unsafe setting.
    let rec = out
        .lines()
        .find(|l| l.starts_with("recommendation:"))
        .unwrap();
    assert!(
        rec.contains("synchronous=normal") && rec.contains("journal_mode=wal"),
        "{rec}"
    );
    // The report ranks all 8 cases per workload and draws each parameter's 2 values.
    let html = std::fs::read_to_string(d.join("s.html")).unwrap();
    for w in 1..=2 {
        let ranked = common::figure(&html, &format!("1-sweep-ranked-{w}"));
        assert_eq!(common::count(&ranked, "class=\"bar\""), 8, "{ranked}");
        assert!(ranked.contains(">1. ["), "{ranked}");
        let effect = common::figure(&html, &format!("1-sweep-effect-{w}"));
        assert_eq!(common::count(&effect, "class=\"bar\""), 6, "{effect}");
        assert!(effect.contains(">journal_mode=wal<"), "{effect}");
    }
    assert!(html.contains("recommendation: "), "summary line");
    // Resuming a finished sweep runs nothing more and still reports.
    let out = ok(d, &again);
    assert!(out.contains("recommendation:"), "{out}");
    assert_eq!(
        json(&d.join("s.json"))["tables"]["sweep"]["records"]
            .as_array()
            .unwrap()
            .len(),
        32
    );
}

#[test]
fn sweep_rounds_stop_at_the_precision_target_and_say_why() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let args = [
        "sweep",
        "--param",
        "journal_mode=delete,truncate",
        "--workload",
        "insert:300",
        "--precision",
        "40%",
        "--max-rounds",
        "9",
        "--dir",
        "data",
        "--json",
        "s.json",
    ];
    let out = ok(d, &args);
    let doc = json(&d.join("s.json"));
    let sweep = &doc["tables"]["sweep"];
    let stopping = &sweep["stopping"];
    assert_eq!(stopping["rule"]["rule"], "precision", "{stopping}");
    assert_eq!(stopping["rule"]["half_width"], 0.4, "{stopping}");
    let cases = stopping["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "one effect: journal_mode on the insert");
    let rounds = cases[0]["rounds"].as_u64().unwrap();
    assert!((6..=9).contains(&rounds), "{stopping}");
    let why = cases[0]["stopped"].as_str().unwrap();
    assert!(["precision", "ceiling"].contains(&why), "{stopping}");
    // Every round ran both cases, and no round beyond where it stopped.
    let records = sweep["records"].as_array().unwrap();
    assert_eq!(records.len() as u64, 2 * rounds, "{sweep}");
    assert_eq!(sweep["complete"], true);
    // The effect's interval is the sequential one, which keeps 95% after
    // stopping on its width.
    let effect = &sweep["effects"][0]["decision"]["others"][0][1];
    assert_eq!(
        effect["method"], "paired-log-sequential-order-statistic",
        "{effect}"
    );
    assert!(
        out.contains(&format!(
            "median of {rounds} rounds, each group until +/-40%"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "rounds, target +/-40% (6-9 rounds, 3600 s): the sweep {rounds} ("
        )),
        "{out}"
    );
    // Resuming the finished sweep runs nothing more.
    let mut again = args.to_vec();
    again.push("--resume");
    ok(d, &again);
    let records = json(&d.join("s.json"))["tables"]["sweep"]["records"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(records as u64, 2 * rounds);
}

#[test]
fn sweep_parameters_are_checked_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    usage_error(
        d,
        &["sweep", "--param", "no_such_pragma=1"],
        "no_such_pragma",
    );
    usage_error(d, &["sweep", "--param", "page_size=1000"], "1000");
    usage_error(d, &["sweep", "--param", "journal_mode=fast"], "fast");
    usage_error(d, &["sweep", "--param", "temp_store=1;drop"], "temp_store");
    usage_error(
        d,
        &[
            "sweep",
            "--param",
            "page_size=4096",
            "--param",
            "page_size=8192",
        ],
        "twice",
    );
    usage_error(d, &["sweep", "--workload", "scan:5"], "scan:5");
    usage_error(
        d,
        &["sweep", "--exclude", "synchronous=sometimes"],
        "sometimes",
    );
    usage_error(
        d,
        &[
            "sweep",
            "--param",
            "synchronous=off",
            "--exclude",
            "synchronous=off",
        ],
        "no case",
    );
    usage_error(d, &["sweep", "--time-budget", "soon"], "soon");
    std::fs::write(d.join("notes.json"), "my notes").unwrap();
    usage_error(d, &["sweep", "--json", "notes.json"], "notes.json");
    assert_eq!(
        std::fs::read_to_string(d.join("notes.json")).unwrap(),
        "my notes"
    );
    assert_eq!(
        std::fs::read_dir(d).unwrap().count(),
        1,
        "nothing else written"
    );
}

#[test]
fn lob_runs_the_local_systems_and_names_the_skipped_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "suite",
            "lob",
            "--sizes",
            "1K,50K",
            "--per-size",
            "3",
            "--dir",
            "data",
            "--json",
            "lob.json",
            "--report",
            "lob.html",
        ],
    );
    assert!(out.contains("time to read 1 GB"), "{out}");
    assert!(out.contains("best blob size for sqlite"), "{out}");
    assert!(
        out.contains("skipped postgres bytea: no --pg URL given"),
        "{out}"
    );
    assert!(
        out.contains("skipped mariadb archive: no --mysql URL given"),
        "{out}"
    );
    let doc = json(&d.join("lob.json"));
    let samples = doc["tables"]["lob"].as_array().unwrap();
    assert_eq!(samples.len(), 4, "sqlite and dir x 2 sizes");
    assert!(
        samples
            .iter()
            .all(|s| s["read_ns"].as_array().unwrap().len() == 3)
    );
    assert!(out.contains("skipped s3: no --s3 URL given"), "{out}");
    assert_eq!(doc["tables"]["skipped"].as_array().unwrap().len(), 7);
    // Log-log charts: one series per system, one point per size.
    let html = std::fs::read_to_string(d.join("lob.html")).unwrap();
    for fig in ["write", "read", "read-1gb"] {
        let f = common::figure(&html, &format!("1-lob-{fig}"));
        assert_eq!(common::count(&f, "class=\"series\""), 2, "{fig}: {f}");
        assert_eq!(common::count(&f, "<circle"), 4, "{fig}: {f}");
        assert!(
            f.contains(">blob size (bytes)<") && f.contains(">10k<"),
            "{f}"
        );
    }
    assert!(html.contains("skipped postgres bytea: no --pg URL given"));
    // A server that cannot be reached is the user's to fix: refused before
    // anything is measured (exit 2, one line), as quick, advise and suite
    // concurrency refuse it, never skipped after the local systems ran (a
    // port that refuses connections by construction).
    let closed = common::closed_port();
    let unreachable = format!("postgres://postgres@{}/none", closed.addr());
    usage_error(
        d,
        &[
            "suite",
            "lob",
            "--sizes",
            "1K",
            "--per-size",
            "2",
            "--pg",
            &unreachable,
            "--dir",
            "data",
            "--json",
            "lob2.json",
        ],
        "cannot connect",
    );
    assert!(!d.join("lob2.json").exists());
    usage_error(d, &["suite", "lob", "--sizes", "1K,2q"], "2q");
    usage_error(
        d,
        &["suite", "lob", "--pg", "postgres://x@h/db?mode=toast"],
        "mode",
    );
}

/// --logging off is the paper's setup (no journal, no fsync), on is durable;
/// each system says what it ran with, in the output and in the result. The
/// table shows the mean beside the median; the growth size is in the result.
#[test]
fn lob_logging_modes_and_cold_reads_on_the_local_systems() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let args = |logging: &'static str, json: &'static str| {
        vec![
            "suite",
            "lob",
            "--sizes",
            "1K,20K,200K",
            "--per-size",
            "3",
            "--logging",
            logging,
            "--dir",
            "data",
            "--json",
            json,
        ]
    };
    let mut with_report = args("off", "off.json");
    with_report.extend(["--report", "off.html"]);
    let off = ok(d, &with_report);
    // Figure 22's caption names the statistic the code uses: the mean.
    let html = std::fs::read_to_string(d.join("off.html")).unwrap();
    assert!(html.contains("MEAN read time x blobs per GB"), "{html}");
    assert!(html.contains(">write mean<") && html.contains(">read mean<"));
    assert!(
        html.contains("--logging off (the paper&#39;s setup")
            || html.contains("--logging off (the paper's setup")
    );
    assert!(off.contains("logging off: the paper's setup"), "{off}");
    assert!(
        off.contains(
            "sqlite: journal_mode=off, synchronous=off: no rollback journal, nothing fsynced"
        ),
        "{off}"
    );
    assert!(
        off.contains("dir: each blob a new file: create, write, close; no fsync"),
        "{off}"
    );
    assert!(off.contains("median / mean / max"), "{off}");
    assert!(off.contains("from the MEAN read time"), "{off}");
    assert!(
        off.contains("over 1.5x the median at the smallest size, 1000 bytes"),
        "{off}"
    );
    let doc = json(&d.join("off.json"));
    let t = &doc["tables"];
    assert_eq!(t["logging"], "off");
    assert!(t.get("cold").is_none(), "not cold: no field");
    let durability = |t: &serde_json::Value, system: &str| {
        t["stores"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["system"] == system)
            .unwrap()["durability"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(durability(t, "sqlite").starts_with("journal_mode=off, synchronous=off"));
    let sqlite_settings = &t["stores"][0]["store"]["settings"];
    assert_eq!(
        sqlite_settings["synchronous"], "off",
        "read back from SQLite"
    );
    // The mean and the median of each system and size, and where time grows.
    assert_eq!(t["summary"].as_array().unwrap().len(), 2 * 3);
    let s0 = &t["summary"][0];
    let w: Vec<f64> = t["lob"][0]["write_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!((s0["write_mean_ns"].as_f64().unwrap() - w.iter().sum::<f64>() / 3.0).abs() < 1.0);
    let growth = t["growth"].as_array().unwrap();
    assert_eq!(growth.len(), 2 * 2, "2 systems x write and read");
    assert!(
        growth
            .iter()
            .all(|g| g["baseline_size"] == 1000 && g["factor"] == 1.5)
    );

    let on = ok(d, &args("on", "on.json"));
    assert!(on.contains("logging on: every commit durable"), "{on}");
    assert!(
        on.contains("sqlite: journal_mode=delete, synchronous=full: a rollback journal or WAL, fsynced at every commit"),
        "{on}"
    );
    assert!(
        on.contains("write, fsync, linked under its name, fsync of the folder"),
        "{on}"
    );
    let t = json(&d.join("on.json"))["tables"].clone();
    assert_eq!(t["logging"], "on");
    assert!(durability(&t, "dir").contains("fsync of the folder"));

    // Cold reads of local files: the files' pages are evicted before each
    // size's reads, and the reads still verify (a failed verification fails
    // the run). As an unprivileged user when the tests run as root, so the
    // eviction is of the suite's own files, not the whole machine's page
    // cache under every other test.
    let done = common::output(common::unprivileged(common::bin().current_dir(d), d).args([
        "suite",
        "lob",
        "--sizes",
        "1K,20K",
        "--per-size",
        "2",
        "--cold",
        "--dir",
        "cold",
        "--json",
        "cold.json",
    ]));
    let cold = String::from_utf8_lossy(&done.stdout);
    assert!(
        done.status.success(),
        "{cold}\n{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(cold.contains("cold reads (--cold)"), "{cold}");
    let t = json(&d.join("cold.json"))["tables"].clone();
    assert_eq!(t["cold"], true);
    for s in t["lob"].as_array().unwrap() {
        let how = s["cold"].as_str().unwrap();
        assert!(how.contains("posix_fadvise(DONTNEED)"), "{how}");
    }
    // A server blobbench's scripts did not start is never restarted.
    let closed = common::closed_port();
    usage_error(
        d,
        &[
            "suite",
            "lob",
            "--cold",
            "--pg",
            &format!("postgres://postgres@{}/none", closed.addr()),
        ],
        "cannot restart PostgreSQL: not started by scripts/start-postgres.sh",
    );
    usage_error(d, &["suite", "lob", "--logging", "maybe"], "maybe");
}

/// A system that fails while `suite lob` measures it (here: the disk of the
/// dir system goes read-only between two sizes, as ext4 remounts itself on
/// an error) is data: sqlite's figures and dir's first size are kept, dir's
/// cells say why, the result and the report are written, and the command
/// exits 1 with one line. Root only (a tmpfs remounted read-only is what
/// root cannot write either).
#[test]
fn lob_keeps_every_other_systems_figures_when_one_fails() {
    let Some(fs) = common::tmpfs::Tmpfs::mount("64m") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let work = fs.path.join("work");
    let mut command = common::bin();
    command
        .current_dir(d)
        .args([
            "suite",
            "lob",
            "--sizes",
            "1K,2K",
            "--per-size",
            "3",
            "--dir",
            work.to_str().unwrap(),
            "--json",
            "lob.json",
            "--report",
            "lob.html",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // Before each system's each size: sqlite 1K, 2K, then dir 1K, 2K.
    let started = std::time::Instant::now();
    let held = common::Held::start(command, "lob-size@4");
    fs.read_only();
    let out = held.release_output();
    let elapsed = started.elapsed();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(elapsed < common::PATIENCE, "{elapsed:?}");
    // One line, last: the failed system and why.
    let last = stderr.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("blobbench: error: 1 of 2 systems failed: dir (other: ")
            && last.contains("Read-only file system")
            && last.ends_with("; see the result"),
        "{stderr}"
    );
    // The tables show the other figures and dir's reason in its cells.
    assert!(stdout.contains("failed: other: "), "{stdout}");
    assert!(
        stdout.contains("FAILED dir at 2000 bytes (write): other: "),
        "{stdout}"
    );
    assert!(stdout.contains("best blob size for sqlite"), "{stdout}");
    let doc = json(&d.join("lob.json"));
    let t = &doc["tables"];
    let have = |system: &str, size: u64| {
        t["lob"].as_array().unwrap().iter().any(|s| {
            s["system"] == system
                && s["size"] == size
                && s["read_ns"].as_array().unwrap().len() == 3
                && s["write_ns"].as_array().unwrap().len() == 3
        })
    };
    assert!(have("sqlite", 1000) && have("sqlite", 2000), "{t}");
    assert!(have("dir", 1000) && !have("dir", 2000), "{t}");
    let failed = t["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{t}");
    let f = &failed[0];
    assert_eq!(
        (&f["system"], &f["size"], &f["phase"], &f["class"]),
        (
            &serde_json::json!("dir"),
            &serde_json::json!(2000),
            &serde_json::json!("write"),
            &serde_json::json!("other")
        ),
        "{f}"
    );
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{f}"
    );
    let html = std::fs::read_to_string(d.join("lob.html")).unwrap();
    assert!(
        html.contains("FAILED dir at 2000 bytes"),
        "the report lacks the failure"
    );
    // The result loads back: `report` renders it again, and it exits 0
    // (the failure was the run's, the report is fine).
    ok(d, &["report", "lob.json", "-o", "again.html"]);
}

/// A SeaweedFS of a test's own (`scripts/start-s3.sh` run stand-alone, in a
/// process group of its own), so the test can kill it mid-suite without
/// touching the server other tests share.
pub(crate) struct OwnS3 {
    pub(crate) child: std::process::Child,
    pub(crate) url: String,
    pub(crate) credentials: Vec<(String, String)>,
    pub(crate) data: Option<std::path::PathBuf>,
}

impl OwnS3 {
    /// Starts it and waits (at most `common::PATIENCE`) for its URL.
    pub(crate) fn start() -> OwnS3 {
        use std::io::BufRead as _;
        use std::os::unix::process::CommandExt as _;
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/start-s3.sh");
        let mut command = std::process::Command::new(script);
        common::default_signals(&mut command)
            .process_group(0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        // Its stderr: the credentials and the data folder, then quiet.
        let (etx, erx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = etx.send(line);
            }
        });
        let url = rx
            .recv_timeout(common::PATIENCE)
            .unwrap()
            .trim()
            .to_string();
        assert!(url.starts_with("s3://"), "start-s3.sh printed {url:?}");
        let mut s3 = OwnS3 {
            child,
            url,
            credentials: Vec::new(),
            data: None,
        };
        while let Ok(line) = erx.recv_timeout(std::time::Duration::from_secs(5)) {
            if let Some(at) = line.find("(data in ") {
                let rest = &line[at + "(data in ".len()..];
                s3.data = Some(rest.trim_end_matches(')').into());
            }
            if let Some(vars) = line.strip_prefix("export ") {
                for kv in vars.split_whitespace() {
                    if let Some((k, v)) = kv.split_once('=') {
                        s3.credentials.push((k.into(), v.into()));
                    }
                }
            }
            if !s3.credentials.is_empty() && s3.data.is_some() {
                break;
            }
        }
        assert!(
            !s3.credentials.is_empty(),
            "start-s3.sh named no credentials"
        );
        s3
    }

    /// The binary with this server's credentials and no other AWS_* variable.
    pub(crate) fn command(&self) -> std::process::Command {
        let mut command = common::bin();
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("AWS_") {
                command.env_remove(name);
            }
        }
        for (k, v) in &self.credentials {
            command.env(k, v);
        }
        command
    }

    /// Kills the server (every process of its group) at once.
    pub(crate) fn kill(&mut self) {
        // SAFETY: kill(2) on the process group this test started.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

impl Drop for OwnS3 {
    fn drop(&mut self) {
        self.kill();
        if let Some(d) = &self.data {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Runs `args` held at `step`, kills the test's own S3 server there, lets
/// it go; returns the output and how long it took.
pub(crate) fn with_s3_killed_at(
    s3: &mut OwnS3,
    dir: &std::path::Path,
    args: &[&str],
    step: &str,
) -> (std::process::Output, std::time::Duration) {
    let mut command = s3.command();
    command
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let started = std::time::Instant::now();
    let held = common::Held::start(command, step);
    s3.kill();
    let out = held.release_output();
    (out, started.elapsed())
}

/// The last line of a command that exited 1 because `system` failed as
/// `failure` (its record in the result) says: "1 of N systems failed: s3
/// (CLASS: ...); see the result", and the table marks its cells.
pub(crate) fn assert_one_system_failed(
    out: &std::process::Output,
    systems: usize,
    failure: &serde_json::Value,
) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let system = failure["system"].as_str().unwrap();
    // The class as the store classified it: a refused connection is
    // "connection" where the S3 client says so, else "other".
    let class = failure["class"].as_str().unwrap();
    assert!(["connection", "other"].contains(&class), "{failure}");
    let last = stderr.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with(&format!(
            "blobbench: error: 1 of {systems} systems failed: {system} ({class}: "
        )) && last.ends_with("; see the result"),
        "{stderr}"
    );
    assert!(stdout.contains(&format!("FAILED {system} (")), "{stdout}");
    assert!(stdout.contains(&format!("failed: {class}: ")), "{stdout}");
}

/// `--dir` names where the datasets go, not whether they stay: they are
/// removed afterwards unless `--keep`, as in a temporary folder; a folder
/// the run created goes with them, a user's folder and its files stay;
/// and a path whose parent does not exist (a typo) is refused, not made.
#[test]
fn dir_datasets_go_unless_kept_and_a_mistyped_dir_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let quick = |dir: &str, extra: &[&str]| {
        let mut args = vec![
            "quick", "--count", "200", "--size", "2k", "--rounds", "1", "--report", "none",
            "--json", "q.json", "--dir", dir,
        ];
        args.extend_from_slice(extra);
        ok(d, &args)
    };
    quick("made", &[]);
    assert!(!d.join("made").exists(), "the folder this run made stays");
    std::fs::create_dir(d.join("mine")).unwrap();
    std::fs::write(d.join("mine/notes.txt"), "mine").unwrap();
    quick("mine", &[]);
    assert_eq!(common::names_in(&d.join("mine")), ["notes.txt"]);
    quick("mine", &["--keep"]);
    assert_eq!(
        common::names_in(&d.join("mine")),
        ["notes.txt", "quick.db", "quick.dir", "quick.tree"]
    );
    usage_error(
        d,
        &["quick", "--count", "200", "--dir", "no/such/place"],
        "--dir no/such/place: its parent folder no/such does not exist",
    );
    assert!(!d.join("no").exists());
}
