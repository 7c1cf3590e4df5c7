//! Part of the interrupted tests in the measured tier (real runs with durations, ignored by a plain `cargo test`);
//! the rest, and the helpers both use, are in `fast::interrupted`.

use crate::common::small;
use crate::common::tmpfs::Tmpfs;
use crate::common::{self, Held, bin, dead_pid, json, ok, run, usage_error};
use crate::fast::interrupted::*;

/// An insert run killed outright (kill -9) with thousands of keys added
/// past the manifest's count: the `init` that makes the dataset again
/// removes every file the run may have made (its keys, their temporary
/// files, its journal) and nothing else; the next insert run succeeds and
/// the dataset is whole.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn reinit_after_a_killed_insert_run_removes_everything_the_run_made() {
    for (target, folder, key_2002) in folder_datasets() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let init = ["init", target, "--count", "2000", "--size", "1k"];
        ok(d, &init);
        let folder = d.join(folder);
        // Not blobbench's: a note, and a blob-named file no run made.
        std::fs::write(folder.join("notes.txt"), "mine").unwrap();
        let foreign_blob = match target {
            t if t.starts_with("tree:") => "99/99/99",
            _ => "999999",
        };
        std::fs::create_dir_all(folder.join(foreign_blob).parent().unwrap()).unwrap();
        std::fs::write(folder.join(foreign_blob), "also mine").unwrap();
        let insert_run = [
            "run",
            target,
            "--threads",
            "2",
            "--mix",
            "insert=100",
            "-t",
            "300s",
        ];
        // Held once 600 batches are done (one worker held, the other going
        // on), then killed.
        Held::start(command(d, &insert_run), "concurrent-batch@600").end_with(libc::SIGKILL);
        let added = blob_files(&folder).len();
        assert!(
            added > 2500,
            "{target}: the run added keys: {added} blob files"
        );
        // What a write killed mid-way leaves: a temporary file of a key
        // the run was adding.
        let temp = format!("{key_2002}.tmp-{}-7", dead_pid());
        std::fs::write(folder.join(&temp), "half").unwrap();
        ok(d, &init);
        let blobs = blob_files(&folder);
        assert_eq!(
            blobs.len(),
            2001,
            "{target}: 2000 blobs and the foreign one"
        );
        assert!(blobs.contains(&foreign_blob.to_string()), "{target}");
        let left = common::files_under(&folder);
        assert!(
            left.contains(&"notes.txt".to_string()),
            "{target}: {left:?}"
        );
        assert!(
            !left
                .iter()
                .any(|f| f.contains(".tmp") || f.contains("blobbench-run-")),
            "{target}: {left:?}"
        );
        let out = crate::common::output(bin().current_dir(d).args([
            "run",
            target,
            "--threads",
            "2",
            "--mix",
            "insert=100",
            "--count",
            "300",
        ]));
        assert!(out.status.success(), "{target}: {}", stderr(&out));
        ok(d, &small(&["run", target, "--verify"]));
        assert_eq!(std::fs::read(folder.join("notes.txt")).unwrap(), b"mine");
        assert_eq!(
            std::fs::read(folder.join(foreign_blob)).unwrap(),
            b"also mine"
        );
    }
}

/// Two threads of one run, and a run of another process beside a held
/// one, all without a rollback journal: none is taken for an interrupted
/// writer, and none leaves its record behind.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn writers_without_a_journal_work_beside_each_other() {
    for (init_target, db) in [("o.db", "o.db"), ("sqlite-ext:e.db", "e.db")] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        ok(d, &["init", init_target, "--count", "2000", "--size", "4k"]);
        let kind = if init_target.starts_with("sqlite-ext") {
            "sqlite-ext"
        } else {
            "sqlite"
        };
        for mode in ["off", "memory"] {
            let target = format!("{kind}:{db}?journal_mode={mode}");
            // The run, and the same by count.
            for end in [["-t", "1s"], ["--count", "400"]] {
                let mut args = small(&["run", &target, "--threads", "2", "--mix", "update=100"]);
                args.extend(end);
                ok(d, &args);
            }
            assert_eq!(unsafe_records(&d.join(db)), 0, "{target}");
            // Another process's writer (its only worker), held between
            // two batches: it holds no lock, its record stays meanwhile.
            let held = Held::start(
                command(
                    d,
                    &small(&["run", &target, "--mix", "update=100", "--count", "200"]),
                ),
                "concurrent-batch@20",
            );
            assert_eq!(
                unsafe_records(&d.join(db)),
                1,
                "{target}: the held writer's"
            );
            ok(d, &small(&["run", &target, "--update", "--count", "50"]));
            ok(d, &small(&["run", init_target]));
            let out = held.release_output();
            assert!(out.status.success(), "{target}: {}", stderr(&out));
            assert_eq!(unsafe_records(&d.join(db)), 0, "{target}");
            ok(d, &small(&["run", init_target, "--verify"]));
        }
    }
}

/// `quick`, `advise` and `sweep` held part-way, in their temporary work
/// folder, and sent SIGINT, SIGTERM or SIGHUP: each stops, removes the
/// folder and exits 128 + the signal's number with one line saying so.
/// With --keep the folder stays.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_signal_removes_a_suites_temporary_folder() {
    let quick: &[&str] = &["quick", "--count", "300", "--size", "4k", "--rounds", "2"];
    let advise: &[&str] = &[
        "advise",
        "--sizes",
        "4k,16k",
        "--points",
        "2",
        "--total",
        "1M",
        "--rounds",
        "2",
        "--page-sizes",
        "4096",
        "--durability",
        "none",
    ];
    let sweep: &[&str] = &[
        "sweep",
        "--param",
        "page_size=4096,8192",
        "--workload",
        "insert:200:1",
        "--rounds",
        "2",
    ];
    let cases: [(&[&str], &str, i32, bool); 6] = [
        (quick, "round-case@3", libc::SIGINT, false),
        // At the end, while the datasets go: still an interruption.
        (quick, "work-remove@1", libc::SIGINT, false),
        (quick, "round-case@2", libc::SIGTERM, false),
        (quick, "round-case@2", libc::SIGINT, true),
        (advise, "advise-round@2", libc::SIGTERM, false),
        (sweep, "sweep-run@2", libc::SIGHUP, false),
    ];
    for (args, step, signal, keep) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let tmpdir = d.join("tmp");
        std::fs::create_dir(&tmpdir).unwrap();
        let mut c = command(d, args);
        c.env("TMPDIR", &tmpdir);
        if keep {
            c.arg("--keep");
        }
        let held = Held::start(c, step);
        let during = common::names_in(&tmpdir);
        assert_eq!(during.len(), 1, "{args:?}: its work folder {during:?}");
        held.signal(signal);
        let out = held.release_output();
        let err = stderr(&out);
        assert_eq!(
            out.status.code(),
            Some(128 + signal),
            "{args:?} {signal}: {err}"
        );
        assert!(err.contains("blobbench: error: interrupted ("), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        if keep {
            assert_eq!(common::names_in(&tmpdir), during, "--keep keeps the folder");
        } else {
            assert!(
                common::names_in(&tmpdir).is_empty(),
                "{args:?}: {:?}",
                common::names_in(&tmpdir)
            );
        }
    }
}

/// Ctrl-C or SIGTERM of a concurrent run that inserts and deletes, held
/// between batches: the workers stop, the dataset is put right, the
/// result so far is shown and written with the reason, the command exits
/// 130 or 143, and the next run needs no `init`.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_signal_stops_a_resizing_run_with_its_dataset_whole() {
    let cases = [
        ("dir:g.dir", libc::SIGINT),
        ("tree:g.tree", libc::SIGTERM),
        ("g.db", libc::SIGINT),
        ("sqlite-ext:e.db", libc::SIGTERM),
    ];
    for (target, signal) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        ok(d, &["init", target, "--count", "1000", "--size", "2k"]);
        let args = resizing_run(target, "2", ["-t", "300s"], &["--json", "r.json"]);
        let held = Held::start(command(d, &args), "concurrent-batch@200");
        held.signal(signal);
        let out = held.release_output();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(128 + signal), "{target}: {err}");
        assert!(err.contains("its dataset was put right"), "{target}: {err}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("stopped early: interrupted ("), "{stdout}");
        let doc = json(&d.join("r.json"));
        let why = doc["tables"]["stopped_early"].as_str().unwrap();
        assert!(why.starts_with("interrupted ("), "{why}");
        let last = doc["tables"]["after"]["last_key"].as_u64().unwrap();
        assert!(last > 1000, "{target}: inserts landed: last key {last}");
        // Whole: every key there and right, and the next resizing run works.
        ok(d, &small(&["run", target, "--verify"]));
        ok(d, &resizing_run(target, "2", ["--count", "200"], &[]));
        ok(d, &small(&["run", target, "--verify"]));
    }
}

/// A dataset that a running resizing run has marked incomplete is not
/// called interrupted: a second run, resizing or reading, is told another
/// blobbench is changing it now and to wait (exit 2, nothing changed), and
/// once the first has put it right both work.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_dataset_another_run_is_changing_now_is_waited_for_not_called_interrupted() {
    for target in ["dir:g.dir", "g.db"] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        ok(d, &["init", target, "--count", "200", "--size", "2k"]);
        // One worker: held between its batches, it holds no lock of the
        // database while the other runs look (a second worker would go on
        // writing, and a reader might find the database locked).
        let resizing = resizing_run(target, "1", ["-t", "300s"], &[]);
        let held = Held::start(command(d, &resizing), "concurrent-batch@20");
        let needle = format!(
            "being made or changed by another blobbench now (process {})",
            held.child.id()
        );
        usage_error(
            d,
            &resizing_run(target, "2", ["--count", "50"], &[]),
            &needle,
        );
        usage_error(d, &["run", target, "--verify"], &needle);
        held.signal(libc::SIGINT);
        let out = held.release_output();
        assert_eq!(out.status.code(), Some(130), "{target}: {}", stderr(&out));
        ok(d, &small(&["run", target, "--verify"]));
    }
}

/// An insert run on a small disk with no end but time: it stops when free
/// space falls to the reserve it keeps, says so (exit 2, the result so far
/// written), and leaves the dataset whole, so later runs work; a run on
/// a disk with less than the reserve free is refused before it starts.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_disk_filling_during_an_insert_run_stops_it_with_the_dataset_whole() {
    let Some(disk) = Tmpfs::mount("8m") else {
        return;
    };
    let d = &disk.path;
    for (target, result) in [("dir:g", "../dir.json"), ("g.db", "../db.json")] {
        ok(d, &["init", target, "--count", "200", "--size", "4k"]);
        let out = run(
            d,
            &small(&[
                "run",
                target,
                "--threads",
                "2",
                "--mix",
                "insert=90,read=10",
                "-t",
                "300s",
                "--json",
                result,
            ]),
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{target}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("the run stopped early, free space on the disk holding"),
            "{err}"
        );
        assert!(err.contains("its dataset was put right"), "{err}");
        let doc = json(&d.join(result));
        let last = doc["tables"]["after"]["last_key"].as_u64().unwrap();
        assert!(
            last > 400,
            "{target}: it inserted until the disk was nearly full: {last}"
        );
        ok(d, &small(&["run", target, "--verify"]));
        // No room left for the reserve: refused at the start, or stopped
        // at once, with the same words.
        usage_error(
            d,
            &[
                "run",
                target,
                "--threads",
                "2",
                "--mix",
                "insert=100",
                "-t",
                "10s",
            ],
            "to put its dataset right",
        );
        // A run that frees room first still works, and puts back what it took.
        ok(
            d,
            &small(&[
                "run",
                target,
                "--threads",
                "2",
                "--mix",
                "read=50,delete=50",
                "--count",
                "100",
            ]),
        );
        ok(d, &small(&["run", target, "--verify"]));
        remove_dataset(d, target);
    }
}
