//! Options that contradict each other, or that one kind of run would
//! ignore, are refused (exit 2, one line naming both); defaults that
//! depend on another option follow what the user gave; folders a command
//! works in are made when missing; short reads under a truncating writer
//! are torn reads, not failures (issue 29, items 11, 15 and 17).

use crate::common::small;
use crate::common::{self, json, ok, usage_error};

/// Each contradictory pair, in every command that has one, is refused
/// before anything runs: exit 2, one line that names both options, and
/// nothing written.
#[test]
fn contradictory_options_are_refused_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let cases: &[(&[&str], [&str; 2])] = &[
        // run: one end for a concurrent run.
        (
            &small(&["run", "t.db", "-t", "1s", "--count", "100"]),
            ["--duration", "--count"],
        ),
        // run: the single-thread run's repetitions, statistics and check.
        (
            &small(&["run", "t.db", "--threads", "2", "--repeat", "5"]),
            ["--repeat", "--threads"],
        ),
        (
            &small(&["run", "t.db", "--mix", "read=100", "--warmup", "2"]),
            ["--warmup", "--mix"],
        ),
        (
            &small(&["run", "t.db", "-t", "1s", "--stats"]),
            ["--stats", "--duration"],
        ),
        (
            &small(&["run", "t.db", "--rate", "10", "--integrity-check"]),
            ["--integrity-check", "--rate"],
        ),
        (
            &small(&["run", "t.db", "--verify", "--no-verify"]),
            ["--verify", "--no-verify"],
        ),
        (
            &small(&["run", "t.db", "--workload", "ycsb-a", "--mix", "read=100"]),
            ["--workload", "--mix"],
        ),
        // run: options only a concurrent run reads, given to a single-thread run.
        (
            &small(&["run", "t.db", "--busy-timeout", "1s"]),
            ["--busy-timeout", "--threads"],
        ),
        (
            &small(&["run", "t.db", "--no-verify"]),
            ["--no-verify", "--threads"],
        ),
        // run: key orders.
        (
            &small(&["run", "t.db", "--random", "--start", "5"]),
            ["--random", "--start"],
        ),
        (
            &small(&["run", "t.db", "--asc", "--order-seed", "3"]),
            ["--order-seed", "--asc"],
        ),
        (
            &small(&["run", "t.db", "--order-seed", "3"]),
            ["--order-seed", "--random"],
        ),
        // run: how writes are made, for a run that only reads.
        (&small(&["run", "t.db", "--fsync"]), ["--fsync", "--update"]),
        (
            &small(&["run", "t.dir", "--write-style", "rename"]),
            ["--write-style", "--update"],
        ),
        (
            &small(&["run", "t.dir", "--threads", "2", "--fsync"]),
            ["--fsync", "--mix"],
        ),
        // run: kvtest-style options in a concurrent run.
        (
            &small(&["run", "t.db", "--threads", "2", "--update"]),
            ["--update", "--mix"],
        ),
        (
            &small(&["run", "t.db", "--threads", "2", "--cold"]),
            ["--cold", "--threads"],
        ),
        // load: a duration or a request count.
        (
            &["load", "http://127.0.0.1:9/", "-t", "1s", "-n", "10"],
            ["--duration", "--requests"],
        ),
        // serve: options of writes without --writable.
        (
            &["serve", "t.db", "--max-blob-size", "1M"],
            ["--max-blob-size", "--writable"],
        ),
        (
            &["serve", "t.db", "--body-timeout", "5s"],
            ["--body-timeout", "--writable"],
        ),
        // init: a distribution's shape for another distribution.
        (
            &["init", "t.db", "--dist", "fixed", "--variance", "5"],
            ["--variance", "--dist"],
        ),
        (&["init", "t.db", "--sigma", "2"], ["--sigma", "--dist"]),
        // suite aging: a folder, or loop volumes.
        (
            &[
                "suite",
                "aging",
                "--dir",
                "a",
                "--capacity",
                "1GiB",
                "--fs",
                "ext4",
            ],
            ["--fs", "--dir"],
        ),
        (
            &[
                "suite",
                "aging",
                "--dir",
                "a",
                "--capacity",
                "1GiB",
                "--work",
                "w",
            ],
            ["--work", "--dir"],
        ),
        (
            &[
                "suite",
                "aging",
                "--dir",
                "a",
                "--capacity",
                "1GiB",
                "--volume-size",
                "1GiB",
            ],
            ["--volume-size", "--dir"],
        ),
        // suite lob: a restart's bound without restarts.
        (
            &["suite", "lob", "--restart-timeout", "5s"],
            ["--restart-timeout", "--cold"],
        ),
        // sweep: the first disk's result without the experiment.
        (
            &["sweep", "--against", "first.json"],
            ["--against", "--experiment"],
        ),
        // compare, advise: pairs refused before.
        (
            &["compare", "a.json", "b.json", "--allow-drift"],
            ["--allow-drift", "--fail-on-slower"],
        ),
        (
            &["advise", "--sample-dir", "s", "--sizes", "1k"],
            ["--sample-dir", "--sizes"],
        ),
        (
            &["advise", "--sizes", "1k", "--age", "6"],
            ["--age", "--aging"],
        ),
    ];
    for (args, [first, second]) in cases {
        let out = common::run(d, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(first) && err.contains(second),
            "{args:?}: {err} should name {first} and {second}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            common::everything_under(d).is_empty(),
            "{args:?} wrote {:?}",
            common::everything_under(d)
        );
    }
}

/// A reader of files a truncating writer rewrites (`--write-style
/// truncate`) may find one cut short, even between its fstat and its read:
/// that is a torn read, counted as in-place writes' are, never a failed
/// operation, and the run goes on to its end.
#[test]
fn short_reads_under_a_truncating_writer_are_torn_not_failures() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init",
            "dir:blobs",
            "--count",
            "20",
            "--size",
            "200k",
            "--variance",
            "100k",
        ],
    );
    for style in ["truncate", "in-place"] {
        let result = format!("{style}.json");
        let out = common::run(
            d,
            &small(&[
                "run",
                "dir:blobs",
                "--threads",
                "4",
                "--mix",
                "read=50,update=50",
                "--write-style",
                style,
                "--count",
                "2000",
                "--json",
                &result,
            ]),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        // Exit 1 only for torn reads (a verification failure), never for
        // a failed operation.
        assert!(matches!(out.status.code(), Some(0 | 1)), "{style}: {err}");
        assert!(!err.contains("operations failed"), "{style}: {err}");
        let doc = json(&d.join(&result));
        let kinds = doc["tables"]["kinds"].as_array().unwrap();
        let mut done = 0;
        for k in kinds {
            assert_eq!(
                k["failures"]["classes"].as_array().map_or(0, Vec::len),
                0,
                "{style}: {k}"
            );
            done += k["ops"].as_u64().unwrap();
        }
        assert_eq!(done, 2000, "{style}: every operation done");
        if out.status.code() == Some(1) {
            assert!(err.contains("torn"), "{style}: {err}");
        }
    }
}

/// suite aging refuses a --volume-size below a filesystem's minimum before
/// anything is made (it used to skip every series and exit 0 with an
/// empty result), naming the minimum.
#[test]
fn aging_refuses_a_volume_too_small_for_its_filesystem() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: loop volumes need root (a user is refused for that first)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    usage_error(
        d,
        &[
            "suite",
            "aging",
            "--fs",
            "xfs",
            "--volume-size",
            "16MiB",
            "--work",
            "w",
        ],
        "xfs needs a volume of at least 314.6 MB",
    );
    usage_error(
        d,
        &[
            "suite",
            "aging",
            "--fs",
            "ext4,xfs",
            "--volume-size",
            "100MiB",
        ],
        "--volume-size 300MiB",
    );
    assert!(
        common::everything_under(d).is_empty(),
        "{:?}",
        common::everything_under(d)
    );
}

/// A --work folder that does not exist is made (as mkdir -p), as every
/// suite's --dir is; the volumes made in it are gone afterwards.
#[test]
fn aging_makes_its_work_folder() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: loop volumes need root");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "suite",
            "aging",
            "--fs",
            "ext4",
            "--volume-size",
            "16MiB",
            "--fill",
            "50%",
            "--sizes",
            "256KiB",
            "--ages",
            "1",
            "--layouts",
            "dir",
            "--read-rounds",
            "1",
            "--no-vacuum",
            "--work",
            "new/work",
            "--json",
            "a.json",
        ],
    );
    assert!(d.join("new/work").is_dir());
    assert_eq!(std::fs::read_dir(d.join("new/work")).unwrap().count(), 0);
    let series = &json(&d.join("a.json"))["tables"]["series"];
    assert_eq!(series.as_array().unwrap().len(), 1, "{series}");
}

/// A --size of the user's own without --variance keeps the default's
/// shape (the blog's 200..4000 KiB is 2100 KiB +/- 19/21 of it; kvtest's
/// 10k +/- 2k a fifth) instead of a variance made for another size, which
/// refused `suite http --size 100k` and `quick --size 1000`.
#[test]
fn a_default_variance_follows_the_size_given() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "suite", "http", "--count", "4", "--size", "100k", "--layout", "kv", "-c", "1", "-t",
            "200ms", "--rounds", "1", "--warmup", "0", "--dir", "data", "--json", "h.json",
        ],
    );
    let spec = &json(&d.join("h.json"))["tables"]["dataset"];
    assert_eq!(spec["size"], 100_000, "{spec}");
    assert_eq!(
        spec["distribution"]["variance"],
        100_000 * 19 / 21,
        "{spec}"
    );
    // The help says so.
    let help = ok(d, &["suite", "http", "--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("19/21 of --size"), "{help}");
    let help = ok(d, &["quick", "--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("a fifth of --size"), "{help}");
}

/// A database or folder this user cannot write is a usage error (exit 2)
/// that says so and how to fix it, not SQLite's "attempt to write a
/// readonly database" with exit 1. Root writes anything, so the test
/// makes the filesystem read-only.
#[test]
fn a_database_that_cannot_be_written_says_why_and_the_fix() {
    let Some(fs) = common::tmpfs::Tmpfs::mount("8m") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&fs.path, &["init", "t.db", "--count", "10", "--size", "1k"]);
    ok(
        &fs.path,
        &["init", "dir:t.dir", "--count", "10", "--size", "1k"],
    );
    fs.read_only();
    let db = fs.path.join("t.db");
    let db = db.to_str().unwrap();
    for args in [
        &small(&["run", db, "--update", "--repeat", "1"])[..],
        &small(&[
            "run",
            db,
            "--threads",
            "2",
            "--mix",
            "update=100",
            "--count",
            "20",
        ])[..],
    ] {
        let out = common::run(d, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        let said = err.to_lowercase();
        assert!(
            said.contains("cannot write")
                && said.contains("read-only")
                && said.contains("choose another"),
            "{args:?}: {err}"
        );
    }
}
