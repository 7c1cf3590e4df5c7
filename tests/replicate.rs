//! `blobbench suite replicate`: a missing Litestream is a one-line exit-2
//! error naming the fix; against a real S3 server (scripts/test.sh starts
//! SeaweedFS and sets BLOBBENCH_S3_URL and the AWS_* variables) with a real
//! Litestream (BLOBBENCH_LITESTREAM, else scripts/install-litestream.sh),
//! the suite measures both arms and its restore holds every blob.

use std::path::PathBuf;

use crate::common::{ClosedPort, bin, closed_port, json, ok, ok_s3, output, usage_error};

/// An S3 URL whose endpoint refuses connections while `port` lives.
fn unreachable_s3(port: &ClosedPort) -> String {
    format!(
        "s3://blobbench/replicate?endpoint=http://{}&region=us-east-1",
        port.addr()
    )
}

#[test]
fn a_litestream_that_is_not_there_is_a_one_line_error_naming_the_installer() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-litestream");
    let port = closed_port();
    let s3 = unreachable_s3(&port);
    usage_error(
        dir.path(),
        &[
            "suite",
            "replicate",
            "--s3",
            &s3,
            "--litestream",
            missing.to_str().unwrap(),
        ],
        "scripts/install-litestream.sh",
    );
    // None given, none in the environment, none on PATH.
    let out = output(
        bin()
            .current_dir(dir.path())
            .env_remove("BLOBBENCH_LITESTREAM")
            .env("PATH", dir.path())
            .args(["suite", "replicate", "--s3", &s3]),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("litestream not found"), "{err}");
    assert!(err.contains("scripts/install-litestream.sh"), "{err}");
    // No work folder was made: the check comes first.
    assert!(!dir.path().join("replicate.json").exists());
}

#[test]
fn the_bucket_and_the_mix_are_checked_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let port = closed_port();
    let s3 = unreachable_s3(&port);
    // Every refusal comes before the suite makes its work folder, where it
    // writes the dataset before it ever starts `litestream replicate`.
    let work = dir.path().join("work");
    let refused = |extra: &[&str], needle: &str| {
        let mut args = vec!["suite", "replicate", "--dir", work.to_str().unwrap()];
        args.extend_from_slice(extra);
        usage_error(dir.path(), &args, needle);
        assert!(!work.exists(), "{extra:?}: the work folder was made");
        assert!(!dir.path().join("replicate.json").exists(), "{extra:?}");
    };
    refused(&["--s3", "/tmp/not-a-bucket.db"], "not an S3 URL");
    // Only writes cost replication: a read-only mix is refused, naming the
    // fix. /bin/true stands for a binary that runs.
    refused(
        &[
            "--s3",
            &s3,
            "--litestream",
            "/bin/true",
            "--mix",
            "read=100",
        ],
        "--mix update=100",
    );
    refused(
        &[
            "--s3",
            &s3,
            "--litestream",
            "/bin/true",
            "-t",
            "1s",
            "--rounds",
            "10",
        ],
        "at least 200ms",
    );
    // An endpoint that refuses connections is refused by blobbench's own
    // check, before any work (above): not after the two minutes Litestream
    // would spend retrying it. (How long the refusal takes is only bounded
    // against a hang, by common::PATIENCE in usage_error.)
    refused(
        &["--s3", &s3, "--litestream", "/bin/true"],
        &format!("cannot reach the S3 endpoint http://{}", port.addr()),
    );
}

/// The Litestream binary: BLOBBENCH_LITESTREAM, else the installer's.
fn litestream() -> PathBuf {
    if let Some(p) = std::env::var_os("BLOBBENCH_LITESTREAM").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/install-litestream.sh");
    let out = output(crate::common::default_signals(
        &mut std::process::Command::new(script),
    ));
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn both_arms_are_measured_and_the_restore_holds_every_blob() {
    let url = std::env::var("BLOBBENCH_S3_URL").expect("BLOBBENCH_S3_URL: run scripts/test.sh");
    let litestream = litestream();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let out = ok_s3(
        dir.path(),
        &[
            "suite",
            "replicate",
            "--s3",
            &url,
            "--litestream",
            litestream.to_str().unwrap(),
            "--count",
            "40",
            "--size",
            "20k",
            "-t",
            "1s",
            "--rounds",
            "2",
            "--warmup",
            "0",
            "--sync-interval",
            "200ms",
            "--dir",
            work.to_str().unwrap(),
            "--keep",
            "--json",
            "r.json",
        ],
    );
    assert!(out.contains("with / alone (paired)"), "{out}");
    assert!(out.contains("PASSED"), "{out}");
    let doc = json(&dir.path().join("r.json"));
    let t = &doc["tables"];
    let rounds = t["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{t}");
    for r in rounds {
        for arm in ["alone", "with"] {
            assert!(r[arm]["writes"].as_u64().unwrap() > 0, "{r}");
            assert!(r[arm]["p99_ns"].as_u64().unwrap() > 0, "{r}");
        }
        // Litestream worked while the clock ran, and said what it uploaded.
        assert!(r["litestream"]["uploaded_bytes"].as_u64().is_some(), "{r}");
    }
    assert_eq!(rounds[0]["first"], "alone");
    assert_eq!(rounds[1]["first"], "with-litestream");
    assert!(t["litestream"]["version"].as_str().unwrap().contains('.'));
    assert!(
        !t["litestream"]["config"]
            .as_str()
            .unwrap()
            .contains(&std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or("-".into())),
        "the secret must not be recorded"
    );
    let restore = &t["restore"];
    assert!(restore["writes"].as_u64().unwrap() > 0, "{restore}");
    assert_eq!(restore["blobs"], 40, "{restore}");
    assert_eq!(restore["matching"], 40, "{restore}");
    assert_eq!(restore["integrity"], "ok", "{restore}");
    // The restored database passes blobbench's own --verify too.
    let restored = work.join("restored.db");
    let verify = ok_s3(dir.path(), &["run", restored.to_str().unwrap(), "--verify"]);
    assert!(!verify.contains("FAIL"), "{verify}");
    // The result renders and compares like any other.
    ok(dir.path(), &["report", "r.json", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.contains("with litestream"), "report lacks the arms");
    let cmp = ok(dir.path(), &["compare", "r.json", "r.json"]);
    assert!(cmp.contains("with litestream writes/s"), "{cmp}");
}
