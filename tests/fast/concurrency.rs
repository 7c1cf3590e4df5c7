//! Concurrent runs (`run --threads --mix --keys`), end to end: every mix and
//! key distribution on every local target with every read checked; SQLite
//! under several writers counts busy locks instead of failing; files
//! replaced by rename are never read torn, and in-place writes are caught
//! when they are.

use crate::common::small;
use std::path::Path;

use crate::common::{json, ok, run, usage_error};

/// One kind's row: (name, done, busy, missing, torn, stale).
pub(crate) type Kind = (String, u64, u64, u64, u64, u64);

/// Per kind: (name, done, busy, missing, torn, stale).
pub(crate) fn kinds(doc: &serde_json::Value) -> Vec<Kind> {
    doc["tables"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let o = &k["outcomes"];
            let n = |v: &serde_json::Value| v.as_u64().unwrap();
            (
                k["kind"].as_str().unwrap_or("commit").to_string(),
                n(&k["ops"]),
                n(&o["busy"]),
                n(&o["missing"]),
                n(&o["torn"]),
                n(&o["stale"]),
            )
        })
        .collect()
}

/// A dataset of `count` blobs of `size` at `target` in `d`.
pub(crate) fn init(d: &Path, target: &str, count: &str, size: &str) {
    ok(d, &["init", target, "--count", count, "--size", size]);
}

/// The sum of one outcome over every kind (`pick` from [`kinds`]' tuples).
pub(crate) fn total(doc: &serde_json::Value, pick: fn(&Kind) -> u64) -> u64 {
    kinds(doc).iter().map(pick).sum()
}

/// Operations done of one kind.
pub(crate) fn done(doc: &serde_json::Value, kind: &str) -> u64 {
    kinds(doc).iter().filter(|k| k.0 == kind).map(|k| k.1).sum()
}

#[test]
fn sqlite_under_several_writers_counts_busy_locks_and_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "sqlite:w.db", "50", "2k");
    // 400 updates in transactions of 10: 40 transactions, each committed or
    // counted busy once (at BEGIN IMMEDIATE or at COMMIT) and rolled back.
    let args = |out: &'static str| {
        small(&[
            "run",
            "w.db",
            "--threads",
            "4",
            "--mix",
            "update=100",
            "--batch",
            "10",
            "--busy-timeout",
            "0s",
            "--count",
            "400",
            "--json",
            out,
        ])
    };
    // Another writer holds the lock for the whole run: every transaction
    // meets it, by construction, and the run goes on to its end counting
    // each one busy, none failed.
    let holder = rusqlite::Connection::open(d.join("w.db")).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let text = ok(d, &args("held.json"));
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);
    let doc = json(&d.join("held.json"));
    assert_eq!(total(&doc, |k| k.2), 40, "every transaction busy: {text}");
    assert_eq!(done(&doc, "update"), 0, "{text}");
    assert_eq!(done(&doc, "commit"), 0, "{text}");
    // Each writer takes the lock at BEGIN IMMEDIATE: the table says so.
    assert!(
        text.contains("busy = another connection held the lock"),
        "{text}"
    );
    ok(d, &small(&["run", "w.db", "--verify", "--repeat", "1"]));
    // The four writers alone: however their transactions collide, each is
    // committed whole (its 10 updates counted) or counted busy once.
    let text = ok(d, &args("w.json"));
    let doc = json(&d.join("w.json"));
    let (updates, commits) = (done(&doc, "update"), done(&doc, "commit"));
    assert_eq!(updates, 10 * commits, "{text}");
    assert_eq!(commits + total(&doc, |k| k.2), 40, "{text}");
    ok(d, &small(&["run", "w.db", "--verify", "--repeat", "1"]));
}

#[test]
fn rename_writes_are_never_read_torn_and_in_place_writes_are_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "dir:f.dir", "4", "2m");
    // A count, not a time, so a loaded machine changes nothing but how
    // long the run takes.
    let args = |style: &'static str, mix: &'static str, out: &'static str| {
        small(&[
            "run",
            "dir:f.dir",
            "--threads",
            "4",
            "--mix",
            mix,
            "--count",
            "200",
            "--write-style",
            style,
            "--json",
            out,
        ])
    };
    ok(d, &args("rename", "read=50,update=50", "r.json"));
    let doc = json(&d.join("r.json"));
    let t = &doc["tables"];
    assert_eq!(total(&doc, |k| k.4) + total(&doc, |k| k.5), 0, "{t}");
    let reads = done(&doc, "read");
    assert_eq!(reads + done(&doc, "update"), 200, "{t}");
    // Every read judged: a whole, legal version, or (a key rewritten too
    // often during the read to tell) left unjudged.
    let (verified, unjudged) = (
        t["verified"].as_u64().unwrap(),
        t["unjudged"].as_u64().unwrap(),
    );
    assert_eq!(verified + unjudged, reads, "{t}");
    assert!(verified > 0, "{t}");
    // In place, a reader may meet a half-written blob; whether it did is a
    // race, but the run's verdict follows what its check found: the result
    // is written either way, and the run fails (exit 1) saying so exactly
    // when a read was torn or stale.
    let out = run(d, &args("in-place", "read=50,update=50", "p.json"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let doc = json(&d.join("p.json"));
    let wrong = total(&doc, |k| k.4) + total(&doc, |k| k.5);
    let code = if wrong > 0 { 1 } else { 0 };
    assert_eq!(out.status.code(), Some(code), "{wrong} wrong: {stderr}");
    assert_eq!(stderr.contains("torn or stale"), wrong > 0, "{stderr}");
    // A writer stopped half-way through rewriting each blob in place
    // (here the test, holding still by construction): the second half of
    // every file replaced by another blob's bytes. Every read meets it,
    // the check finds each one torn, and the run fails saying so (exit 1),
    // the result written first.
    let files: Vec<std::path::PathBuf> = (1..=4).map(|k| d.join(format!("f.dir/{k:06}"))).collect();
    let contents: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    for (i, file) in files.iter().enumerate() {
        use std::os::unix::fs::FileExt;
        let other = &contents[(i + 1) % contents.len()];
        let half = contents[i].len().min(other.len()) / 2;
        std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .unwrap()
            .write_all_at(
                &other[half..contents[i].len().min(other.len())],
                half as u64,
            )
            .unwrap();
    }
    // A run that only reads takes no --write-style (it writes nothing).
    let mut read_only = args("in-place", "read=100", "t.json");
    read_only.retain(|a| !["--write-style", "in-place"].contains(a));
    let out = run(d, &read_only);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("torn or stale"), "{stderr}");
    let doc = json(&d.join("t.json"));
    assert_eq!(done(&doc, "read"), 200, "{}", doc["tables"]);
    assert_eq!(
        total(&doc, |k| k.4),
        200,
        "every read torn: {}",
        doc["tables"]
    );
    assert_eq!(doc["tables"]["verified"], 0);
}

#[test]
fn bad_concurrent_options_are_refused_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    init(d, "sqlite:x.db", "10", "1k");
    for (args, needle) in [
        (
            &small(&["run", "x.db", "--threads", "2", "--update"])[..],
            "--mix update=100",
        ),
        (
            &small(&["run", "x.db", "--mix", "write=5"]),
            "unknown operation",
        ),
        (&small(&["run", "x.db", "--keys", "zipf:2"]), "theta"),
        (&small(&["run", "x.db", "--threads", "0"]), "--threads"),
        (
            &small(&["run", "x.db", "--rate", "10", "--batch", "2"]),
            "--batch 1",
        ),
        (
            &small(&["run", "x.db", "--threads", "2", "--random"]),
            "--keys uniform",
        ),
    ] {
        usage_error(d, args, needle);
    }
}
