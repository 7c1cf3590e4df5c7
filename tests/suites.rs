//! End-to-end tests of the suites at a small scale: every row or cell is
//! measured, the JSON holds the figures, and bad parameters fail before
//! anything runs.

mod common;

use common::{json, ok, ok_with_env, usage_error};

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
    let doc = json(&d.join("f.json"));
    assert_eq!(doc["command"], "suite fasterthanfs");
    let rows = doc["tables"]["fasterthanfs"].as_array().unwrap();
    assert_eq!(rows.len(), 17);
    for r in rows {
        let verdict = r["verdict"].as_str().unwrap();
        assert!(
            ["confirmed", "db ahead, by less", "not confirmed", "-"].contains(&verdict),
            "{r}"
        );
        let ratio = r["dir_over_db"]["median"]
            .as_f64()
            .or_else(|| r["dir_over_db"].as_f64())
            .unwrap();
        assert!(ratio.is_finite() && ratio > 0.0, "{r}");
    }
    // 8 read cases + 5 database and 12 file write cases, 2 rounds each.
    assert_eq!(doc["runs"].as_array().unwrap().len(), 50);
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
    // Its temporary folder is gone.
    assert_eq!(std::fs::read_dir(d.join("tmp")).unwrap().count(), 0);
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
        ],
    );
    assert!(out.contains("this machine"), "{out}");
    assert!(out.contains("the study (2011"), "{out}");
    assert!(out.contains("best page size for blob reads:"), "{out}");
    let doc = json(&d.join("ie.json"));
    let cells = doc["tables"]["internal_external"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    for c in cells {
        assert_eq!(c["internal_ns_per_read"].as_array().unwrap().len(), 2);
        let r = c["external_over_internal"].as_f64().unwrap();
        assert!(r.is_finite() && r > 0.0, "{c}");
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
