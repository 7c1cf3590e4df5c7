//! Part of the replicate tests in the fast tier (tiny datasets, usage errors);
//! the rest, and the helpers both use, are in `servers::replicate`.

use crate::common::{bin, closed_port, output, usage_error};
use crate::servers::replicate::*;

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
        &format!("is the S3 server running at http://{}?", port.addr()),
    );
}
