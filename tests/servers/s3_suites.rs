//! `quick --s3` and `advise --s3` end to end against a real S3 server:
//! `scripts/test.sh` starts SeaweedFS and sets BLOBBENCH_S3_URL (and the
//! AWS_* credentials); run alone, the tests that need it are ignored. The
//! objects left afterwards are listed with the `object_store` client
//! directly, not through blobbench.

use crate::common;

use crate::common::{json, ok_s3};

/// The S3 URL `scripts/test.sh` exports, with `prefix` (unique to this
/// process) after the bucket; and that prefix.
pub(crate) fn s3_url(prefix: &str) -> (String, String) {
    let url = std::env::var("BLOBBENCH_S3_URL").expect("BLOBBENCH_S3_URL: run scripts/test.sh");
    let (base, query) = url.split_once('?').unwrap_or((&url, ""));
    let prefix = format!("{prefix}-{}", std::process::id());
    (
        format!("{}/{prefix}?{query}", base.trim_end_matches('/')),
        prefix,
    )
}

/// Every object under `prefix` in the bucket of BLOBBENCH_S3_URL.
pub(crate) fn objects_under(prefix: &str) -> Vec<String> {
    use futures_util::TryStreamExt;
    use object_store::ObjectStore;
    let url = std::env::var("BLOBBENCH_S3_URL").unwrap();
    let rest = url.strip_prefix("s3://").unwrap();
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let bucket = path.split('/').next().unwrap();
    let endpoint = query
        .split('&')
        .find_map(|p| p.strip_prefix("endpoint="))
        .expect("the URL names its endpoint");
    let _ = rustls::crypto::ring::default_provider().install_default();
    // The credentials scripts/test.sh exports, and no other AWS_* variable
    // (from_env would take a user's AWS_SESSION_TOKEN or AWS_ENDPOINT too).
    let var =
        |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name}: run scripts/test.sh"));
    let s3 = object_store::aws::AmazonS3Builder::new()
        .with_access_key_id(var("AWS_ACCESS_KEY_ID"))
        .with_secret_access_key(var("AWS_SECRET_ACCESS_KEY"))
        .with_region(var("AWS_REGION"))
        .with_bucket_name(bucket)
        .with_endpoint(endpoint)
        .with_client_options(object_store::ClientOptions::new().with_allow_http(true))
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(async {
            s3.list(Some(&object_store::path::Path::from(prefix)))
                .map_ok(|m| m.location.to_string())
                .try_collect::<Vec<_>>()
                .await
        })
        .unwrap()
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn quick_measures_an_object_store_column_and_removes_its_objects() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (url, prefix) = s3_url("quick-test");
    // A dataset of someone else's beside quick's: it must stay untouched,
    // and it shows the listing below sees what is there.
    let (base, query) = url.split_once('?').unwrap();
    ok_s3(
        d,
        &[
            "init",
            &format!("{base}/theirs?{query}"),
            "--count",
            "3",
            "--size",
            "1k",
        ],
    );
    let theirs = objects_under(&prefix);
    assert_eq!(theirs.len(), 4, "3 blobs and a manifest: {theirs:?}");
    let out = ok_s3(
        d,
        &[
            "quick",
            "--count",
            "60",
            "--size",
            "2k",
            "--variance",
            "0",
            "--rounds",
            "2",
            "--dir",
            "data",
            "--json",
            "q.json",
            "--s3",
            &url,
        ],
    );
    let header = out
        .lines()
        .find(|l| l.contains("db µs/op"))
        .expect("the table's header");
    assert!(
        header.contains("s3 µs/op") && header.contains("s3/db"),
        "{out}"
    );
    assert!(out.contains("s3: s3://blobbench/"), "{out}");
    let doc = json(&d.join("q.json"));
    let store = &doc["tables"]["object_store"]["store"];
    assert_eq!(store["kind"], "s3", "{store}");
    let server = store["version"].as_str().expect("the server named itself");
    assert!(
        !server.is_empty() && server == store["settings"]["server"],
        "{store}"
    );
    assert!(
        store["path"]
            .as_str()
            .unwrap()
            .contains(&format!("{prefix}/blobbench-quick-")),
        "{store}"
    );
    // 60 blobs of 2000 bytes, as objects.
    assert_eq!(doc["tables"]["object_store"]["space_bytes"], 120_000);
    let rows = doc["tables"]["quick"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    for r in rows {
        let ratio = r["s3_over_db"].as_f64().expect("an s3 ratio on every row");
        assert!(ratio.is_finite() && ratio > 0.0, "{r}");
        assert!(
            r["estimates"]["s3_over_db"]["low"].as_f64().is_some(),
            "{r}"
        );
    }
    // 12 local cases and 3 of the object store (a read, two updates) x 2 rounds.
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 30);
    assert_eq!(
        runs.iter().filter(|r| r["store"]["kind"] == "s3").count(),
        6
    );
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    let bars = common::figure(&html, "1-quick-ratios");
    assert_eq!(common::count(&bars, "class=\"bar\""), 21, "{bars}");
    assert!(bars.contains("object store"), "{bars}");
    let left = objects_under(&prefix);
    assert_eq!(left, theirs, "quick left objects behind or took others'");
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn quick_runs_copy_the_object_store_dataset_anew_each_run() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (url, prefix) = s3_url("quick-runs-test");
    let out = ok_s3(
        d,
        &[
            "quick", "--count", "40", "--size", "2k", "--rounds", "2", "--runs", "2", "--dir",
            "data", "--json", "q.json", "--report", "none", "--s3", &url,
        ],
    );
    assert!(out.contains("interval between the 2 runs"), "{out}");
    let doc = json(&d.join("q.json"));
    assert_eq!(doc["tables"]["between_runs"], 2);
    for r in doc["tables"]["quick"].as_array().unwrap() {
        let e = &r["estimates"]["s3_over_db"];
        assert_eq!(e["method"], "between-runs", "{r}");
        assert_eq!(e["n"], 2, "{r}");
    }
    // Each run copied the blobs to the store anew, after removing its
    // copy: the object-store dataset's manifest differs run to run.
    let s3_runs: Vec<(&str, &str)> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["store"]["kind"] == "s3")
        .map(|r| {
            let name = r["name"].as_str().unwrap();
            (name, r["catalog"]["manifest"]["id"].as_str().unwrap())
        })
        .collect();
    let id_of = |run: &str| {
        let ids: Vec<&str> = s3_runs
            .iter()
            .filter(|(n, _)| n.contains(run))
            .map(|(_, id)| *id)
            .collect();
        assert!(
            !ids.is_empty() && ids.iter().all(|i| *i == ids[0]),
            "{s3_runs:?}"
        );
        ids[0]
    };
    assert_ne!(id_of("(run 1)"), id_of("(run 2)"), "{s3_runs:?}");
    assert!(
        objects_under(&prefix).is_empty(),
        "quick left objects behind"
    );
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn advise_measures_the_object_store_as_a_layout_and_removes_its_objects() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (url, prefix) = s3_url("advise-test");
    let out = ok_s3(
        d,
        &[
            "advise",
            "--sizes",
            "2k,20k",
            "--points",
            "2",
            "--total",
            "40k",
            "--rounds",
            "2",
            "--page-sizes",
            "4096",
            "--json",
            "a.json",
            "--report",
            "a.html",
            "--s3",
            &url,
        ],
    );
    assert!(out.contains("object store: s3://blobbench/"), "{out}");
    let header = out
        .lines()
        .find(|l| l.contains("read db+files"))
        .expect("the points table");
    assert!(
        header.contains("read s3") && header.contains("write s3") && header.contains("s3 / db"),
        "{out}"
    );
    let doc = json(&d.join("a.json"));
    let a = &doc["tables"]["advise"];
    assert_eq!(a["object_store"]["kind"], "s3", "{a}");
    assert!(a["object_store"]["version"].as_str().is_some(), "{a}");
    assert!(
        a["input"]["object_store"]
            .as_str()
            .unwrap()
            .contains(&prefix)
    );
    for p in a["points"].as_array().unwrap() {
        let s3 = p["layouts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["kind"] == "s3")
            .unwrap_or_else(|| panic!("no s3 layout at {}", p["size"]));
        for k in ["read_ns", "write_ns"] {
            let v = s3[k].as_array().unwrap();
            assert_eq!(v.len(), 2, "{s3}");
            assert!(v.iter().all(|x| x.as_f64().unwrap() > 0.0), "{s3}");
        }
        assert!(s3["space_bytes"].as_u64().unwrap() > 0, "{s3}");
    }
    // The object store is compared with the recommendation, or is it.
    let placement = a["decision"]["placement"].as_str().unwrap();
    let compared = a["decision"]["speedup_vs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v[0] == "all in the object store");
    assert!(
        compared || placement == "all in the object store",
        "{placement}: {}",
        a["decision"]
    );
    let html = std::fs::read_to_string(d.join("a.html")).unwrap();
    assert!(html.contains("object store"), "the report shows the layout");
    let left = objects_under(&prefix);
    assert!(left.is_empty(), "advise left objects behind: {left:?}");
}
