//! A check after a run finds a lost acknowledged write: a blob put back at
//! an older version, whole and valid, after a concurrent update run, fails
//! both `run --verify` and a checked concurrent run, naming the key, on
//! every store (the servers' in servers::acknowledged). Before it is put
//! back, both pass: the ledger holds what the run acknowledged, no more.

use std::path::Path;
use std::process::Command;

use blobbench::dataset::DatasetSpec;
use blobbench::store::{self, Access, SessionOptions};
use blobbench::target::Target;

use crate::common::{self, small};

/// Runs the binary in `dir`, with the S3 variables when `s3`.
fn command(dir: &Path, s3: bool) -> Command {
    let mut c = common::bin();
    c.current_dir(dir);
    if s3 {
        common::s3_env(&mut c);
    }
    c
}

/// Key 3 as `init` made it (version 0), written straight into the store.
fn put_back_an_older_copy(target_text: &str) {
    let target = Target::parse(target_text).unwrap();
    let mut s = store::open(&target, Access::ReadWrite).unwrap();
    let spec: DatasetSpec = s.catalog().unwrap().manifest.unwrap().spec.unwrap();
    let mut session = s.session(SessionOptions::default()).unwrap();
    let mut old = Vec::new();
    spec.fill(3, 0, &mut old);
    session.update(3, &old).unwrap();
}

/// The contract on `target` (made here, in `dir`), with the S3 variables
/// when `s3`.
pub(crate) fn a_lost_write_is_found(dir: &Path, target: &str, s3: bool) {
    let run = |args: &[&str]| {
        let args = small(args);
        common::output(command(dir, s3).args(&args))
    };
    let init = run(&["init", target, "--count", "12", "--size", "3000"]);
    common::succeeded(&["init"], init);
    let updates = [
        "run",
        target,
        "--threads",
        "2",
        "--mix",
        "update=100",
        "--count",
        "120",
    ];
    common::succeeded(&updates, run(&updates));
    let verify = ["run", target, "--verify"];
    let reads = [
        "run",
        target,
        "--threads",
        "2",
        "--mix",
        "read=100",
        "--count",
        "24",
    ];
    common::succeeded(&verify, run(&verify));
    common::succeeded(&reads, run(&reads));

    put_back_an_older_copy(target);
    for args in [&verify[..], &reads[..]] {
        let out = run(args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{target} {args:?}: {text}");
        // "left version N", or "left one of versions N, M" when two
        // acknowledged updates of key 3 overlapped.
        assert!(
            text.contains("key 3: holds version 0, but its last acknowledged write left ")
                && text.contains("(a write was lost, or an older copy was put back)"),
            "{target} {args:?}: {text}"
        );
    }
}

#[test]
fn every_local_store_finds_an_older_copy_put_back() {
    for (kind, name) in [
        ("sqlite", "a.db"),
        ("dir", "a.dir"),
        ("tree", "a.tree"),
        ("sqlite-ext", "a.db"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let target = format!("{kind}:{}", dir.path().join(name).display());
        a_lost_write_is_found(dir.path(), &target, false);
    }
}

#[test]
fn a_run_killed_while_it_wrote_leaves_the_versions_unknown_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let target = "sqlite:k.db";
    common::ok(
        dir.path(),
        &["init", target, "--count", "20", "--size", "100"],
    );
    // Killed after its first repetition's commit, before it recorded it.
    common::kill_at(
        dir.path(),
        &small(&["run", target, "--update"]),
        "repetition-after-commit",
    );
    let out = common::ok(dir.path(), &small(&["run", target, "--verify"]));
    assert!(
        out.contains("whole versions only") && out.contains("ended without recording its writes"),
        "{out}"
    );
}
