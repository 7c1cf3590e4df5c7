//! Part of the suites tests in the servers tier (needs the servers scripts/test.sh starts);
//! the rest, and the helpers both use, are in `fast::suites`.

use crate::common;
use crate::common::json;
use crate::fast::suites::*;

#[test]
#[ignore = "needs SeaweedFS: run scripts/test.sh"]
fn quick_keeps_the_local_sides_when_the_object_store_dies() {
    let mut s3 = OwnS3::start();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let url = s3.url.clone();
    // 15 cases a round (7 reads, 8 updates): the warm-up round and round 1
    // run whole, the server dies before round 2's first case.
    let (out, elapsed) = with_s3_killed_at(
        &mut s3,
        d,
        &[
            "quick", "--s3", &url, "--count", "200", "--rounds", "2", "--json", "q.json",
            "--report", "q.html",
        ],
        "round-case@31",
    );
    let doc = json(&d.join("q.json"));
    let t = &doc["tables"];
    assert_one_system_failed(&out, 4, &t["failed"][0]);
    assert!(elapsed < common::PATIENCE, "{elapsed:?}");
    let rows = t["quick"].as_array().unwrap();
    assert_eq!(rows.len(), 7, "every row of the local sides: {t}");
    for r in rows {
        for side in ["db_ns_per_op", "dir_ns_per_op", "tree_ns_per_op"] {
            assert!(r[side].as_f64().unwrap() > 0.0, "{r}");
        }
        assert!(r.get("s3_ns_per_op").is_none(), "{r}");
    }
    let f = &t["failed"][0];
    assert_eq!(f["system"], "s3", "{f}");
    assert!(
        f["during"].as_str().unwrap().starts_with("round 2/2, "),
        "{f}"
    );
    // No run of the failed side is left half-paired in the result.
    let runs = doc["runs"].as_array().unwrap();
    assert!(
        runs.iter()
            .all(|r| !r["name"].as_str().unwrap().contains("s3")),
        "{runs:?}"
    );
    let html = std::fs::read_to_string(d.join("q.html")).unwrap();
    assert!(html.contains("FAILED s3 ("), "the report lacks the failure");
}

#[test]
#[ignore = "needs SeaweedFS: run scripts/test.sh"]
fn advise_decides_without_the_object_store_when_it_dies() {
    let mut s3 = OwnS3::start();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let url = s3.url.clone();
    // Rounds at each size: the warm-up, round 1, round 2; the server dies
    // before round 2 at the first size.
    let (out, elapsed) = with_s3_killed_at(
        &mut s3,
        d,
        &[
            "advise",
            "--s3",
            &url,
            "--sizes",
            "10k,50k",
            "--points",
            "2",
            "--rounds",
            "2",
            "--total",
            "200k",
            "--page-sizes",
            "4096",
            "--json",
            "a.json",
            "--report",
            "a.html",
        ],
        "advise-round@3",
    );
    let doc = json(&d.join("a.json"));
    let a = &doc["tables"]["advise"];
    assert_one_system_failed(&out, 4, &a["failed"][0]);
    assert!(elapsed < common::PATIENCE, "{elapsed:?}");
    let points = a["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{a}");
    for p in points {
        let kinds: Vec<&str> = p["layouts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["db", "db+files", "files"], "{p}");
        for l in p["layouts"].as_array().unwrap() {
            assert_eq!(l["read_ns"].as_array().unwrap().len(), 2, "{l}");
        }
    }
    assert!(a["decision"]["page_size"].as_u64().is_some(), "{a}");
    assert_eq!(a["failed"][0]["system"], "s3", "{a}");
    let html = std::fs::read_to_string(d.join("a.html")).unwrap();
    assert!(html.contains("FAILED s3 ("), "the report lacks the failure");
}
