//! Issue 51, class 1: a command's cleanup removes only what that
//! invocation made. A command that refused to replace a user's
//! `u/quick.db` used to delete it in its failure cleanup.
//!
//! The property, over every command that takes `--dir`, every name it
//! makes there and every kind of user entry: with a user's entry of that
//! name in the folder, the command goes on or refuses (never a panic), and
//! the entry is afterwards byte for byte what it was. The names are not
//! listed by hand: each command first runs in an empty folder with
//! `BLOBBENCH_TEST_MADE_LOG`, and the binary names every path it records
//! as its own (`store::owned`), so a name a command starts to make is met
//! by this test without anyone adding it.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::common;

/// Every command that takes `--dir`, at its smallest (without `--dir`);
/// `suite replicate`, which needs an S3 server, is met in
/// `servers::replicate`.
/// `reproduce` runs these suites again, each on its own names; it is
/// met once per kind with all its names taken at once (a run per name
/// would take ten seconds each).
const COMMANDS: &[&[&str]] = &[
    &[
        "quick", "--count", "100", "--rounds", "1", "--report", "none",
    ],
    &[
        "suite",
        "fasterthanfs",
        "--count",
        "100",
        "--rounds",
        "1",
        "--report",
        "none",
    ],
    &[
        "suite",
        "internal-external",
        "--sizes",
        "10k",
        "--page-sizes",
        "4096",
        "--total",
        "200k",
        "--rounds",
        "1",
        "--report",
        "none",
    ],
    &[
        "sweep",
        "--param",
        "page_size=4096",
        "--workload",
        "insert:200:2",
        "--workload",
        "insert-copy:100:1",
        "--rounds",
        "1",
    ],
    &[
        "suite",
        "lob",
        "--sizes",
        "1K",
        "--per-size",
        "4",
        "--report",
        "none",
    ],
    &[
        "suite", "http", "--count", "20", "--size", "10k", "-c", "1", "-t", "200ms", "--rounds",
        "1", "--report", "none",
    ],
    &[
        "suite",
        "concurrency",
        "--count",
        "50",
        "--size",
        "2k",
        "--threads",
        "1",
        "--mixes",
        "read=100",
        "-t",
        "200ms",
        "--rounds",
        "1",
        "--report",
        "none",
    ],
    &[
        "advise",
        "--sample-dir",
        "photos",
        "--total",
        "1M",
        "--rounds",
        "1",
        "--page-sizes",
        "4096",
        "--durability",
        "none",
        "--report",
        "none",
    ],
];

const REPRODUCE: &[&str] = &["reproduce", "--budget", "5s", "--report", "none"];

/// A user's entry, of each kind a dataset's name could meet.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// A file of the user's.
    File,
    /// A folder holding a user's photo.
    Folder,
    /// A SQLite database of the user's (its own table, no manifest).
    Database,
}

const ENTRIES: [Entry; 3] = [Entry::File, Entry::Folder, Entry::Database];

impl Entry {
    fn place(self, path: &Path) {
        match self {
            Entry::File => std::fs::write(path, "the user's own").unwrap(),
            Entry::Folder => {
                std::fs::create_dir_all(path.join("photos")).unwrap();
                std::fs::write(path.join("photos/1.jpg"), "a photo").unwrap();
            }
            Entry::Database => {
                let conn = rusqlite::Connection::open(path).unwrap();
                conn.execute_batch(
                    "CREATE TABLE notes(t TEXT); INSERT INTO notes VALUES ('mine');",
                )
                .unwrap();
            }
        }
    }
}

/// Every file under `path` (or `path` itself) with its bytes.
fn contents(path: &Path) -> Vec<(String, Vec<u8>)> {
    if path.symlink_metadata().is_err() {
        return vec![("(removed)".into(), Vec::new())];
    }
    if path.is_file() {
        return vec![(String::new(), std::fs::read(path).unwrap())];
    }
    common::files_under(path)
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(path.join(&name)).unwrap();
            (name, bytes)
        })
        .collect()
}

/// A folder with the advisor's sample beside the work folder `w`.
fn work_folder() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let photos = tmp.path().join("photos");
    std::fs::create_dir(&photos).unwrap();
    for i in 1..=3u8 {
        std::fs::write(photos.join(format!("{i}.jpg")), vec![i; 20_000]).unwrap();
    }
    std::fs::create_dir(tmp.path().join("w")).unwrap();
    tmp
}

/// What a command needs in its environment beyond [`common::bin`]'s
/// (`common::s3_env` for an S3 server's keys).
pub(crate) type Env = fn(&mut Command) -> &mut Command;

/// No more than [`common::bin`] gives.
fn plain(command: &mut Command) -> &mut Command {
    command
}

/// Runs `args --dir w` in `tmp`, logging what it makes to `log` when
/// given; fails the test on a panic or an unexpected status (0, 1 for a
/// failure counted in the result, 2 for a refusal).
fn run_in(tmp: &Path, args: &[&str], env: Env, log: Option<&Path>) -> std::process::Output {
    let mut command = common::bin();
    env(command.current_dir(tmp).args(args));
    command.args(["--dir", "w", "--json", "result.json", "-q"]);
    if let Some(log) = log {
        command.env("BLOBBENCH_TEST_MADE_LOG", log);
    }
    let out = common::output(&mut command);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0..=2)) && !err.contains("internal error"),
        "{args:?}: {:?} {err}",
        out.status
    );
    out
}

/// The names `args` makes in an empty work folder, as the binary lists
/// them.
fn names_made(args: &[&str], env: Env) -> BTreeSet<String> {
    let tmp = work_folder();
    let log = tmp.path().join("made.log");
    let out = run_in(tmp.path(), args, env, Some(&log));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let work = tmp.path().join("w");
    let names: BTreeSet<String> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| Path::new(l).strip_prefix(&work).ok().map(Path::to_path_buf))
        .filter(|rel| rel.components().count() == 1)
        .map(|rel| rel.to_string_lossy().into_owned())
        .collect();
    assert!(!names.is_empty(), "{args:?} made nothing in its folder");
    names
}

/// Runs `args` with a user's `entries` in the work folder and asserts
/// each is as it was.
fn meets(args: &[&str], env: Env, entries: &[(String, Entry)]) {
    let tmp = work_folder();
    let w = tmp.path().join("w");
    for (name, entry) in entries {
        entry.place(&w.join(name));
    }
    let before: Vec<_> = entries.iter().map(|(n, _)| contents(&w.join(n))).collect();
    run_in(tmp.path(), args, env, None);
    for ((name, entry), before) in entries.iter().zip(before) {
        assert_eq!(
            contents(&w.join(name)),
            before,
            "{args:?} changed or removed the user's {entry:?} {name}"
        );
    }
}

/// The property for one command: every name it makes, met with each
/// kind of user entry.
pub(crate) fn every_name_meets_a_users_entry(args: &[&str], env: Env) {
    for name in names_made(args, env) {
        for entry in ENTRIES {
            meets(args, env, &[(name.clone(), entry)]);
        }
    }
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn no_command_removes_or_changes_a_users_entry_of_a_name_it_makes() {
    for args in COMMANDS {
        every_name_meets_a_users_entry(args, plain);
    }
    let names = names_made(REPRODUCE, plain);
    for entry in ENTRIES {
        let all: Vec<_> = names.iter().map(|n| (n.clone(), entry)).collect();
        meets(REPRODUCE, plain, &all);
    }
}
