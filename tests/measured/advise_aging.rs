//! `advise --aging FILE --age N`, end to end: a hand-made `suite aging`
//! result in which SQLite reads and writes slow down a hundredfold by
//! storage age 4 while files stay flat moves every blob out of the
//! database; the adjustment is in the JSON, the terminal and the report;
//! a missing half of the flag pair, a result of another command and an
//! aging result without series are one-line usage errors.

use std::path::Path;

use crate::common::{json, ok};
use serde_json::{Value, json};

pub(crate) fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/results/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A point at `age` reading `read` MB/s in each of 3 rounds, its pass
/// writing 10^6 bytes at `write` MB/s.
pub(crate) fn point(age: f64, read: f64, write: f64) -> Value {
    json!({
        "target_age": age, "age": age, "blobs": 100, "stored_bytes": 1_000_000,
        "read_mb_s": [read, read * 1.02, read * 0.98], "blobs_read": 300,
        "writes": {"blobs": 10, "bytes": 1_000_000, "ns": (1e9 / write) as u64, "sync_ns": 0},
        "fragments": {"blobs": 100, "mean": 1.0, "p50": 1, "p90": 1, "max": 1, "fragmented_share": 0.0},
        "space": {"store_bytes": 1_000_000, "volume_used_bytes": 2_000_000, "volume_free_bytes": 2_000_000}
    })
}

/// A series of `layout` on ext4 with 16 KiB blobs, 50% full, measured at
/// ages 0, 2 and 4; its rates divided by `slowdown` at age 4 (half of it
/// at age 2).
pub(crate) fn series(layout: &str, slowdown: f64) -> Value {
    json!({
        "fs": "ext4", "layout": layout, "sizes": {"min": 16384, "max": 16384},
        "fill_target": 0.5, "fill_reached": 0.5, "settings": "",
        "points": [
            point(0.0, 400.0, 100.0),
            point(2.0, 400.0 * 2.0 / (1.0 + slowdown), 100.0 * 2.0 / (1.0 + slowdown)),
            point(4.0, 400.0 / slowdown, 100.0 / slowdown),
        ]
    })
}

/// Writes a `suite aging` result with `series` to `path`, with the
/// environment of a real result.
pub(crate) fn aging_result(path: &Path, series: Vec<Value>) {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("quick.json")).unwrap()).unwrap();
    doc["command"] = "suite aging".into();
    doc["argv"] = json!(["blobbench", "suite", "aging"]);
    doc["runs"] = json!([]);
    doc["tables"] = json!({
        "volumes": [{"fs": "ext4", "exact": true, "size_bytes": 67108864, "fs_bytes": 60000000, "how": "test"}],
        "ages": [2.0, 4.0], "series": series, "writes": "", "cold": "", "read_rounds": 3
    });
    std::fs::write(path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

pub(crate) const ADVISE: [&str; 13] = [
    "advise",
    "--sizes",
    "4k,16k",
    "--points",
    "2",
    "--total",
    "1M",
    "--rounds",
    "2",
    "--page-sizes",
    "4096",
    "--durability",
    "none",
];

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn sqlite_slowing_with_age_moves_every_blob_to_files_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    aging_result(
        &d.join("aging.json"),
        vec![
            series("sqlite", 100.0),
            series("sqlite-ext", 1.0),
            series("dir", 1.0),
        ],
    );
    let mut args = ADVISE.to_vec();
    args.extend([
        "--aging",
        "aging.json",
        "--age",
        "3",
        "--json",
        "a.json",
        "--report",
        "a.html",
    ]);
    let out = ok(d, &args);
    let a = &json(&d.join("a.json"))["tables"]["advise"];
    let g = &a["aging"];
    assert_eq!(g["file"], "aging.json");
    assert_eq!(g["age"], 3.0);
    let layouts = g["layouts"].as_array().unwrap();
    let kinds: Vec<&str> = layouts
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["db", "db+files", "files"]);
    for l in layouts {
        assert_eq!(l["fs"], "ext4");
        assert_eq!(l["fill"], 0.5);
        let sizes = l["sizes"].as_array().unwrap();
        assert_eq!(sizes.len(), 2, "{l}");
        for s in sizes {
            // Age 3: between the rates of ages 2 and 4, not extrapolated.
            assert_eq!(s["ages"], json!([2.0, 4.0]), "{s}");
            assert_eq!(s["extrapolated"], false);
            let f: Vec<f64> = s["read_factor"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            assert_eq!(f.len(), 1, "one factor, applied to every round: {s}");
            // sqlite: 400 MB/s fresh; 400*2/101 at age 2, 4 at age 4; at 3
            // halfway between: a factor of about 67.
            let want = if l["kind"] == "db" {
                400.0 / ((800.0 / 101.0 + 4.0) / 2.0)
            } else {
                1.0
            };
            assert!(f.iter().all(|x| (x - want).abs() < 1e-6), "{f:?} vs {want}");
        }
    }
    // This result's rounds were not read side by side: each layout is
    // judged on its own, unpaired; files did not move, within noise.
    let notes: Vec<&str> = g["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("blobs inside the database")
                && n.contains("unpaired")
                && n.contains("applied, read x")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("plain files") && n.contains("within noise: not applied")),
        "{notes:?}"
    );
    // Aged, the database is about 67 times slower: every blob goes to
    // files (named in the database, or plain files when those are faster
    // beyond the noise still).
    let aged = a["decision"]["placement"].as_str().unwrap();
    assert!(
        ["all as files", "plain files, no database"].contains(&aged),
        "{aged}"
    );
    let fresh = g["unaged"]["placement"].as_str().unwrap();
    assert!(out.contains("at storage age 3 (from aging.json"), "{out}");
    assert!(out.contains("storage age 3:"), "{out}");
    assert!(out.contains("db: sqlite series on ext4, 50% full"), "{out}");
    let verdict = if fresh == aged {
        "aging did not change the recommendation"
    } else {
        "aging changed the recommendation: for a fresh store it would be to store"
    };
    assert!(out.contains(verdict), "{fresh}: {out}");
    let html = std::fs::read_to_string(d.join("a.html")).unwrap();
    assert!(
        html.contains("At storage age 3"),
        "the report's aging table"
    );
    assert!(html.contains(verdict), "the report's summary");
    // Without --aging, nothing about aging is written.
    let out = ok(
        d,
        &[
            "advise",
            "--sizes",
            "4k",
            "--points",
            "1",
            "--total",
            "1M",
            "--rounds",
            "1",
            "--page-sizes",
            "4096",
            "--json",
            "b.json",
        ],
    );
    assert!(json(&d.join("b.json"))["tables"]["advise"]["aging"].is_null());
    assert!(!out.contains("storage age"), "{out}");
}
