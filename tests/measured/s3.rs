//! Part of the s3 tests in the measured tier (real runs with durations, ignored by a plain `cargo test`);
//! the rest, and the helpers both use, are in `servers::s3`.

use crate::common::closed_port;
use crate::common::small;
use crate::servers::s3::*;
use std::time::{Duration, Instant};

/// The class of item 12: whatever the endpoint= a user writes, the S3
/// client is built only from one it can use, so the binary never panics
/// inside it (exit 70): it refuses the target (exit 2, one line) or finds
/// nothing listening there (exit 2, one line). Endpoints are drawn from the
/// pieces that broke parsers (ports past 65535, brackets, percent signs,
/// spaces, credentials, queries) and from arbitrary text; every host that
/// parses is a loopback one, on a port where nothing listens.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn any_endpoint_is_refused_or_unreachable_never_a_panic() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let tmp = tempfile::tempdir().unwrap();
    let closed = closed_port();
    let port = closed.addr().rsplit_once(':').unwrap().1.to_string();
    let scheme = prop_oneof![
        Just("http://"),
        Just("https://"),
        Just("HTTP://"),
        Just("ftp://"),
        Just("http:/"),
        Just("")
    ];
    let host = prop_oneof![
        Just("127.0.0.1"),
        Just("[::1]"),
        Just("[::1"),
        Just("::1"),
        Just(""),
        Just("h st"),
        Just("%zz"),
        Just("u:p@127.0.0.1"),
        Just("999.0.0.1"),
        Just("127.0.0.1%"),
        Just("[fe80::1%25lo]"),
    ];
    let ports = prop_oneof![
        Just(String::new()),
        Just(":".to_string()),
        Just(":0".to_string()),
        Just(format!(":{port}")),
        Just(":65536".to_string()),
        Just(":99999".to_string()),
        Just(":-1".to_string()),
        Just(":abc".to_string()),
        Just(format!(":{port}{port}")),
    ];
    let tail = prop_oneof![
        Just(""),
        Just("/"),
        Just("/p"),
        Just("/a b"),
        Just("?q=1"),
        Just("#f"),
        Just("/%"),
        Just("//x"),
        Just("/\u{e9}")
    ];
    let shaped = (scheme, host, ports, tail).prop_map(|(s, h, p, t)| {
        // An address that parses names the port where nothing listens.
        let p = if p.is_empty() && matches!(h, "127.0.0.1" | "[::1]") {
            format!(":{}", closed.addr().rsplit_once(':').unwrap().1)
        } else {
            p
        };
        format!("{s}{h}{p}{t}")
    });
    let endpoint = prop_oneof![4 => shaped, 1 => "\\PC{0,24}"];
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&endpoint, |endpoint| {
            let target =
                format!("s3://blobbench/x?endpoint={endpoint}&timeout=2s&connect_timeout=1s");
            let out = run_s3(tmp.path(), &small(&["run", &target]));
            let err = String::from_utf8_lossy(&out.stderr);
            prop_assert!(!err.contains("internal error"), "{}: {}", target, err);
            prop_assert_eq!(out.status.code(), Some(2), "{}: {}", target, err);
            prop_assert_eq!(err.trim_end().lines().count(), 1, "{}: {}", target, err);
            Ok(())
        })
        .unwrap();
}

/// A port that listens and never accepts: the kernel completes the
/// connection into the listen queue and no answer ever comes. Before
/// anything is measured that is a server out of reach, as a refused
/// connection is: exit 2 once the target's timeout= has passed, with the
/// question that leads to the fix.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn an_s3_server_that_never_accepts_is_refused_with_the_hint_after_its_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let socket = never_accepting();
    let addr = socket.local_addr().unwrap().as_socket().unwrap();
    let started = Instant::now();
    refused_s3(
        tmp.path(),
        &small(&[
            "run",
            &format!("s3://blobbench/x?endpoint=http://{addr}&timeout=1s"),
        ]),
        &format!("is the S3 server running at http://{addr}?"),
    );
    let bound = Duration::from_secs(1) + SLACK;
    assert!(started.elapsed() < bound, "took {:?}", started.elapsed());
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn an_endpoint_that_accepts_and_never_answers_is_a_timeout_after_the_stated_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let silent = Silent::start();
    let target = format!(
        "s3://blobbench/x?endpoint=http://{}&timeout=1s",
        silent.addr
    );
    let started = Instant::now();
    let out = run_s3(
        tmp.path(),
        &small(&[
            "run",
            &target,
            "--threads",
            "2",
            "--mix",
            "read=100",
            "-t",
            "3s",
        ]),
    );
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    // Out of reach before anything was measured: the user's to fix.
    assert_eq!(out.status.code(), Some(2), "{err}");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(last.contains("timeout after 1 s"), "{err}");
    assert!(
        last.contains(&format!(
            "is the S3 server running at http://{}?",
            silent.addr
        )),
        "{err}"
    );
    assert!(!err.contains("error sending request"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let bound = Duration::from_secs(3 + 1) + SLACK;
    assert!(took < bound, "took {took:?}, more than {bound:?}");
}
