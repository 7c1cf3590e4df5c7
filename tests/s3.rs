//! The S3 target end to end: the binary against a real S3 server
//! (SeaweedFS, single node and cluster, started by `scripts/test.sh`,
//! which exports BLOBBENCH_S3_URL and BLOBBENCH_S3_CLUSTER_URL with the
//! AWS_* credentials). Bad S3 targets need no server.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Output, Stdio};

use crate::common::{bin, closed_port, json, ok, ok_s3, output, s3_env, usage_error};

/// The URL `scripts/test.sh` exports in `var`, in a prefix of its own:
/// `prefix` (one per test) and this process's id, so no two tests, nor two
/// test runs on one server, share objects.
fn s3_target(var: &str, prefix: &str) -> String {
    let url = std::env::var(var).unwrap_or_else(|_| panic!("{var}: run scripts/test.sh"));
    let (base, query) = url.split_once('?').unwrap_or((&url, ""));
    format!(
        "{}/{prefix}-{}?{query}",
        base.trim_end_matches('/'),
        std::process::id()
    )
}

fn single(prefix: &str) -> String {
    s3_target("BLOBBENCH_S3_URL", prefix)
}

/// The binary with `args` in `dir`, with the S3 credentials (see
/// [`s3_env`]); what it printed once it ended.
fn run_s3(dir: &Path, args: &[&str]) -> Output {
    output(s3_env(bin().current_dir(dir).args(args)))
}

/// Asserts a clean usage error (exit 2, one line on stderr naming
/// `needle`) from a command that reaches for an S3 server, with the S3
/// credentials (see [`s3_env`]).
fn refused_s3(dir: &Path, args: &[&str], needle: &str) {
    let out = run_s3(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err} lacks {needle}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn malformed_s3_targets_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (target, needle) in [
        ("s3://Bad_Bucket/x", "Bad_Bucket"),
        ("s3://ok-bucket/x?endpoint=ftp://h", "endpoint=\"ftp://h\""),
        (
            "s3://ok-bucket/x?endpoint=http://key:secret@h",
            "without credentials",
        ),
        ("s3://ok-bucket/x?part_size=1MiB", "part_size=1MiB"),
        ("s3://ok-bucket/x?colour=red", "unknown setting \"colour\""),
        ("s3://ok-bucket/a//b", "prefix"),
    ] {
        usage_error(dir, &["run", target], needle);
    }
}

#[test]
fn an_s3_server_that_does_not_answer_is_a_one_line_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let closed = closed_port();
    refused_s3(
        tmp.path(),
        &[
            "run",
            &format!("s3://blobbench/x?endpoint=http://{}", closed.addr()),
        ],
        "is the S3 server running",
    );
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn init_run_verify_and_concurrent_mixes_on_a_bucket() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target = single("e2e-run");
    ok_s3(dir, &["init", &target, "--count", "40", "--size", "20k"]);
    let result = dir.join("r.json");
    let out = ok_s3(
        dir,
        &[
            "run",
            &target,
            "--verify",
            "--json",
            result.to_str().unwrap(),
        ],
    );
    assert!(out.contains("per read"), "{out}");
    let doc = json(&result);
    let store = &doc["runs"][0]["store"];
    assert_eq!(store["kind"], "s3");
    let server = store["version"].as_str().unwrap_or_default();
    assert!(
        server.starts_with("SeaweedFS"),
        "server as it names itself: {store}"
    );
    assert_eq!(
        store["settings"]["credentials"],
        "environment (AWS_ACCESS_KEY_ID)"
    );
    let text = doc.to_string();
    let secret = std::env::var("AWS_SECRET_ACCESS_KEY").unwrap();
    assert!(!text.contains(&secret), "the secret key is never recorded");
    // Readers and writers at once: every read a whole, legal version.
    let out = ok_s3(
        dir,
        &[
            "run",
            &target,
            "--threads",
            "4",
            "--mix",
            "read=70,update=20,insert=5,delete=5",
            "-t",
            "1s",
        ],
    );
    assert!(out.contains("reads checked"), "{out}");
    // What the mix deleted and inserted was put back: the dataset is whole.
    ok_s3(dir, &["run", &target, "--verify"]);
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn blobs_over_the_part_size_go_up_in_parts_and_read_back_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target = format!("{}&part_size=5MiB", single("e2e-multipart"));
    let out = ok_s3(dir, &["init", &target, "--count", "3", "--size", "12MiB"]);
    assert!(out.contains("3 blobs"), "{out}");
    ok_s3(dir, &["run", &target, "--verify"]);
    let result = dir.join("r.json");
    ok_s3(
        dir,
        &[
            "run",
            &target,
            "--count",
            "3",
            "--json",
            result.to_str().unwrap(),
        ],
    );
    let settings = &json(&result)["runs"][0]["store"]["settings"];
    assert_eq!(settings["part_size"], 5 << 20);
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn a_prefix_holding_objects_blobbench_did_not_make_is_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A dataset one folder down is, to its parent, objects it did not make.
    let outer = single("e2e-foreign");
    let (base, query) = outer.split_once('?').unwrap();
    let inner = format!("{base}/inner?{query}");
    ok_s3(dir, &["init", &inner, "--count", "3", "--size", "1k"]);
    refused_s3(
        dir,
        &["init", &outer, "--count", "3"],
        "blobbench did not make",
    );
    ok_s3(dir, &["run", &inner, "--verify"]);
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn a_missing_bucket_and_a_wrong_key_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target =
        single("e2e-no-bucket").replacen("s3://blobbench/", "s3://no-such-bucket-here/", 1);
    refused_s3(dir, &["run", &target], "does not exist");
    let out = output(
        s3_env(
            bin()
                .current_dir(dir)
                .args(["run", &single("e2e-wrong-key")]),
        )
        .env("AWS_SECRET_ACCESS_KEY", "wrong"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("AWS_SECRET_ACCESS_KEY"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn suite_lob_measures_the_object_store_beside_sqlite_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let result = dir.join("lob.json");
    let out = ok_s3(
        dir,
        &[
            "suite",
            "lob",
            "--s3",
            &single("e2e-lob"),
            "--sizes",
            "10K,1M",
            "--per-size",
            "2",
            "--json",
            result.to_str().unwrap(),
        ],
    );
    assert!(out.contains("s3"), "{out}");
    let doc = json(&result);
    let samples: Vec<_> = doc["tables"]["lob"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["system"] == "s3")
        .collect();
    assert_eq!(samples.len(), 2, "one sample per size");
    assert!(
        samples
            .iter()
            .all(|s| s["read_ns"].as_array().unwrap().len() == 2)
    );
    let stores = doc["tables"]["stores"].to_string();
    assert!(stores.contains("SeaweedFS"), "{stores}");
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn serve_answers_from_a_bucket() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target = single("e2e-serve");
    ok_s3(dir, &["init", &target, "--count", "5", "--size", "300k"]);
    let (server, addr) = serve_s3(dir, &target);
    let out = run_s3(
        dir,
        &[
            "load",
            &format!("http://{addr}/blobs/1"),
            &format!("http://{addr}/blobs/5"),
            "-n",
            "20",
            "--verify",
            &target,
        ],
    );
    drop(server);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("checked byte for byte"), "{text}");
}

#[test]
#[ignore = "needs the S3 cluster: run scripts/test.sh"]
fn a_run_on_the_cluster_records_its_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let topology = std::env::var("BLOBBENCH_S3_CLUSTER_TOPOLOGY").expect("run scripts/test.sh");
    let target = format!(
        "{}&topology={topology}",
        s3_target("BLOBBENCH_S3_CLUSTER_URL", "e2e-cluster")
    );
    ok_s3(dir, &["init", &target, "--count", "20", "--size", "50k"]);
    let result = dir.join("r.json");
    ok_s3(
        dir,
        &[
            "run",
            &target,
            "--verify",
            "--json",
            result.to_str().unwrap(),
        ],
    );
    let shape = &json(&result)["runs"][0]["store"]["settings"]["topology"];
    assert_eq!(shape["storage_nodes"], 3, "{shape}");
    assert_eq!(shape["replication"][0], "002", "{shape}");
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn suite_concurrency_runs_the_bucket_beside_the_local_layouts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let result = dir.join("c.json");
    let out = ok_s3(
        dir,
        &[
            "suite",
            "concurrency",
            "--s3",
            &single("e2e-concurrency"),
            "--threads",
            "1,2",
            "--mixes",
            "read=90,update=10",
            "-t",
            "400ms",
            "--rounds",
            "2",
            "--count",
            "30",
            "--size",
            "10k",
            "--json",
            result.to_str().unwrap(),
        ],
    );
    assert!(out.contains("s3 ops/s"), "{out}");
    assert!(json(&result).to_string().contains("SeaweedFS"));
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn export_copies_a_database_into_a_bucket_and_back_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(dir, &["init", "a.db", "--count", "12", "--size", "30k"]);
    let bucket = single("e2e-export");
    ok_s3(dir, &["export", "a.db", &bucket]);
    ok_s3(dir, &["run", &bucket, "--verify"]);
    ok_s3(dir, &["export", &bucket, "dir:back"]);
    let out = ok(dir, &["run", "dir:back", "--verify"]);
    assert!(out.contains("per read"), "{out}");
    assert_eq!(
        std::fs::read_dir(dir.join("back")).unwrap().count(),
        13,
        "12 blobs and a manifest"
    );
}

/// A `blobbench serve` child, killed and reaped when dropped (also when
/// the test fails midway).
struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `blobbench serve TARGET --listen 127.0.0.1:0` with the S3
/// credentials (as common::start_serve, which passes the environment on
/// as it is) and returns it with the address its banner names.
fn serve_s3(dir: &Path, target: &str) -> (Serving, String) {
    let mut child =
        s3_env(
            bin()
                .current_dir(dir)
                .args(["serve", target, "--listen", "127.0.0.1:0"]),
        )
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let serving = Serving(child);
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    // The rest is read as it comes, so the server never blocks on a full
    // pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    // The address follows " on http://" (the bucket's endpoint comes first).
    let addr = line
        .split(" on http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (serving, addr)
}
