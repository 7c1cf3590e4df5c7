//! Part of the serve_snapshots tests in the measured tier (real runs with durations, ignored by a plain `cargo test`);
//! the rest, and the helpers both use, are in `fast::serve_snapshots`.

use crate::common::ok;
use crate::fast::http::{Server, blob_from_db};
use crate::fast::serve_snapshots::*;
use std::time::{Duration, Instant};

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_slow_reader_holds_writers_up_no_longer_than_the_hold_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "3", "--size", "40M"]);
    let db = d.join("s.db");
    let old = blob_from_db(&db, 1);
    let server = Server::start(d, "s.db", &["--writable", "--token", TOKEN]);
    // The fast path sends the blob from the mapped file; a query sends the
    // request through hyper, which gets copied pieces. Against each, a PUT
    // through the server and another process's write.
    let mut round = 0u8;
    for path in ["/blobs/1", "/blobs/1?via=hyper"] {
        for outside in [false, true] {
            round += 1;
            let reader = SlowReader::start(&server.addr, path);
            reader.wait_for_body(100_000);
            let started = Instant::now();
            let written = if outside {
                outside_write(&db, 2, round, Duration::from_secs(5)).map(|_| ())
            } else {
                match put(&server.addr, 2, &vec![round; 1000]) {
                    204 => Ok(()),
                    code => Err(format!("PUT answered {code}")),
                }
            };
            let waited = started.elapsed();
            written.unwrap_or_else(|e| panic!("{path}, outside {outside}: the write failed: {e}"));
            assert!(
                waited < HOLD + LOADED_MACHINE_SLACK,
                "{path}, outside {outside}: the writer waited {waited:?}"
            );
            // The stream let go and the write committed: the client's
            // connection is cut, its bytes all of the old version.
            let got = reader.finish();
            let body = body_of(&got);
            assert!(
                body.len() < old.len(),
                "{path}: a 40 MB blob at 200 kB/s cannot be whole ({} bytes)",
                body.len()
            );
            assert!(
                body == &old[..body.len()],
                "{path}, outside {outside}: the body mixed two versions"
            );
        }
    }
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn in_wal_mode_a_slow_reader_keeps_its_version_and_holds_no_writer_up() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init", "w.db", "--count", "2", "--size", "8M", "--jmode", "wal",
        ],
    );
    let db = d.join("w.db");
    let old = blob_from_db(&db, 1);
    let server = Server::start(d, "w.db", &["--writable", "--token", TOKEN]);
    let reader = SlowReader::start(&server.addr, "/blobs/1");
    reader.wait_for_body(100_000);
    // Past the hold time: WAL readers never hold writers up, so nothing
    // makes the stream let go.
    std::thread::sleep(HOLD + Duration::from_millis(200));
    let waited = outside_write(&db, 1, 7, Duration::from_secs(5)).unwrap();
    assert!(
        waited < LOADED_MACHINE_SLACK,
        "the writer waited {waited:?}"
    );
    assert_eq!(put(&server.addr, 2, b"new"), 204);
    let got = reader.finish();
    assert!(
        body_of(&got) == &old[..],
        "the stream must send its version whole ({} of {} bytes)",
        body_of(&got).len(),
        old.len()
    );
}
