//! Part of the s3 tests in the fast tier (tiny datasets, usage errors);
//! the rest, and the helpers both use, are in `servers::s3`.

use crate::common::small;
use crate::common::{bin, closed_port, output, s3_env, usage_error};
use crate::servers::s3::*;
use std::time::Instant;

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
        // Endpoints the S3 client would have panicked on (exit 70): a port
        // out of range, an unclosed IPv6 address, a host that is no host.
        ("s3://ok-bucket/x?endpoint=http://h:99999", "http://h:99999"),
        ("s3://ok-bucket/x?endpoint=http://h:65536", "http://h:65536"),
        ("s3://ok-bucket/x?endpoint=http://[::1", "http://[::1"),
        ("s3://ok-bucket/x?endpoint=http://%zz", "http://%zz"),
        ("s3://ok-bucket/x?endpoint=http:// x", "http:// x"),
        ("s3://ok-bucket/x?endpoint=http://h:abc", "http://h:abc"),
        ("s3://ok-bucket/x?endpoint=http://h:0", "port 0"),
        ("s3://ok-bucket/x?endpoint=http://", "names no host"),
        (
            "s3://ok-bucket/x?endpoint=http://h/p#f",
            "query or fragment",
        ),
        ("s3://ok-bucket/x?topology=http://h:70000", "topology="),
        ("s3://ok-bucket/x?region=us east", "region=us east"),
        (
            "s3://ok-bucket/x?region=r\u{e9}gion",
            "is not a region name",
        ),
    ] {
        usage_error(dir, &["run", target], needle);
    }
}

/// Settings the S3 client reads from the environment reach it as a
/// target's do, so they are checked as strictly: an endpoint that is not a
/// URL, a region or key id no header can carry is a one-line usage error
/// naming where it came from, never a panic inside the client.
#[test]
fn s3_settings_from_the_environment_are_checked_as_the_targets_are() {
    let tmp = tempfile::tempdir().unwrap();
    let closed = closed_port();
    let target = format!("s3://blobbench/x?endpoint=http://{}", closed.addr());
    for (name, value, needle) in [
        ("AWS_ENDPOINT_URL", "http://h:99999", "AWS_ENDPOINT_URL"),
        ("AWS_ENDPOINT", "http://[::1", "AWS_ENDPOINT"),
        ("AWS_REGION", "us east 1", "region \"us east 1\""),
        ("AWS_ACCESS_KEY_ID", "key with space", "access key id"),
        ("AWS_SESSION_TOKEN", "tok\u{e9}n", "session token"),
    ] {
        // The endpoint variables matter only without endpoint= (the
        // target's wins); the others with it.
        let target = if name.contains("ENDPOINT") {
            "s3://blobbench/x"
        } else {
            target.as_str()
        };
        let out = output(
            s3_env(bin().current_dir(tmp.path()).args(["run", target]))
                .env(name, value)
                .env(
                    "AWS_ACCESS_KEY_ID",
                    if name == "AWS_ACCESS_KEY_ID" {
                        value
                    } else {
                        "k"
                    },
                )
                .env("AWS_SECRET_ACCESS_KEY", "s"),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}={value}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}={value}: {err}");
        assert!(err.contains(needle), "{name}={value}: {err} lacks {needle}");
    }
}

#[test]
fn an_s3_server_that_does_not_answer_is_a_one_line_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let closed = closed_port();
    refused_s3(
        tmp.path(),
        &small(&[
            "run",
            &format!("s3://blobbench/x?endpoint=http://{}", closed.addr()),
        ]),
        &format!("is the S3 server running at http://{}?", closed.addr()),
    );
}

/// One rule for every command that measures a server beside other
/// systems: a server given with --s3, --pg or --mysql that cannot be
/// reached before anything was measured is refused at once (exit 2, one
/// line, with the hint), never skipped nor found out after the local
/// systems ran; no result is written.
#[test]
fn every_command_refuses_an_unreachable_server_before_it_measures() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let closed = closed_port();
    let s3 = format!("s3://blobbench/x?endpoint=http://{}", closed.addr());
    let hint = format!("is the S3 server running at http://{}?", closed.addr());
    let pg = format!("postgres://postgres@{}/none", closed.addr());
    let mysql = format!("mysql://root@{}/none", closed.addr());
    let small = ["--count", "20", "--size", "1k"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["quick", "--s3", &s3, "--count", "20", "--size", "1k"],
            &hint,
        ),
        (vec!["advise", "--s3", &s3, "--sizes", "1k"], &hint),
        (vec!["suite", "lob", "--s3", &s3, "--sizes", "1K"], &hint),
        (
            vec!["suite", "lob", "--pg", &pg, "--sizes", "1K"],
            "cannot connect",
        ),
        (
            vec!["suite", "lob", "--mysql", &mysql, "--sizes", "1K"],
            "cannot connect",
        ),
        (
            [vec!["suite", "concurrency", "--s3", &s3], small.to_vec()].concat(),
            &hint,
        ),
        (
            [vec!["suite", "concurrency", "--pg", &pg], small.to_vec()].concat(),
            "cannot connect",
        ),
        (
            [
                vec!["suite", "concurrency", "--mysql", &mysql],
                small.to_vec(),
            ]
            .concat(),
            "cannot connect",
        ),
        (
            vec![
                "suite",
                "replicate",
                "--s3",
                &s3,
                "--litestream",
                "/bin/true",
            ],
            &hint,
        ),
    ];
    for (args, needle) in cases {
        let mut args = args;
        args.extend(["--json", "r.json"]);
        let started = Instant::now();
        refused_s3(d, &args, needle);
        assert!(
            started.elapsed() < SLACK,
            "{args:?}: {:?}",
            started.elapsed()
        );
        assert!(!d.join("r.json").exists(), "{args:?} wrote a result");
    }
}
