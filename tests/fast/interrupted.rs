//! Work that is interrupted or unlucky part-way: a concurrent insert run
//! killed outright and the `init` that follows it, writers without a
//! rollback journal beside each other and one that was killed, Ctrl-C,
//! SIGTERM and SIGHUP of suites that work in a temporary folder and of
//! runs that resize their dataset, and a disk that fills during an insert
//! run. Whatever happens, nothing is left that a later command mistakes for
//! a whole dataset or trips over, and nothing blobbench did not make goes.
//!
//! Every interruption is made at a named step (`common::Held`), never by
//! timing.

use crate::common::small;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{self, Held, bin, ok, usage_error};
use rusqlite::Connection;

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `blobbench ARGS` in `dir`, its output piped (for `Held`).
pub(crate) fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = bin();
    c.current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

/// The blob files (names of digits only, `/`-separated in a tree).
pub(crate) fn blob_files(folder: &Path) -> Vec<String> {
    common::files_under(folder)
        .into_iter()
        .filter(|f| f.split('/').all(|p| p.bytes().all(|b| b.is_ascii_digit())))
        .collect()
}

// Item 8: re-init owns everything a killed run over its dataset made.

/// A folder dataset in each layout: (target, the folder its files are in,
/// the name blobbench gives key 2002 there).
pub(crate) fn folder_datasets() -> [(&'static str, &'static str, &'static str); 3] {
    [
        ("dir:g.dir", "g.dir", "002002"),
        ("tree:g.tree", "g.tree", "00/20/02"),
        ("sqlite-ext:e.db", "e.db.files", "002002"),
    ]
}

// Item 9: one record per writer without a rollback journal, judged by
// whether its process still runs.

/// Records of writers without a rollback journal in `db`.
pub(crate) fn unsafe_records(db: &Path) -> i64 {
    let c = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    c.query_row(
        "SELECT count(*) FROM blobbench_meta WHERE name LIKE 'unsafe-writer:%'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
}

/// A concurrent writer without a rollback journal killed between batches
/// is still an interrupted one: the database is refused with the fix.
#[test]
fn a_killed_concurrent_writer_without_a_journal_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "o.db", "--count", "2000", "--size", "4k"]);
    let target = "sqlite:o.db?journal_mode=off";
    Held::start(
        command(
            d,
            &small(&[
                "run",
                target,
                "--threads",
                "2",
                "--mix",
                "update=100",
                "-t",
                "300s",
            ]),
        ),
        "concurrent-batch@20",
    )
    .end_with(libc::SIGKILL);
    assert_eq!(unsafe_records(&d.join("o.db")), 2, "each worker's record");
    usage_error(d, &["run", "o.db"], "may be damaged");
    usage_error(
        d,
        &[
            "run",
            target,
            "--threads",
            "2",
            "--mix",
            "update=100",
            "--count",
            "10",
        ],
        "`blobbench init o.db --count 2000 --size 4k`",
    );
}

// Item 10 (a): a signal removes a suite's temporary folder.

// Item 10 (b): a signal stops a resizing run with its dataset whole.

/// A concurrent run of `target` with `threads` workers that insert and
/// delete (it resizes its dataset), ended by `end` (`-t 300s`,
/// `--count N`), then `extra`.
pub(crate) fn resizing_run<'a>(
    target: &'a str,
    threads: &'a str,
    end: [&'a str; 2],
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = small(&[
        "run",
        target,
        "--threads",
        threads,
        "--mix",
        "insert=50,delete=50",
    ]);
    args.extend(end);
    args.extend(extra);
    args
}

// Item 10 (c): a disk that fills during an insert run.

/// Removes the dataset a target string names under `d`.
pub(crate) fn remove_dataset(d: &Path, target: &str) {
    let path: PathBuf = d.join(target.split(':').next_back().unwrap());
    if path.is_dir() {
        std::fs::remove_dir_all(&path).unwrap();
    } else {
        std::fs::remove_file(&path).unwrap();
    }
}

/// `serve --writable` PUTs of keys past the dataset's last are named in
/// the server's journal too: after the server stops, the `init` that makes
/// the dataset again removes them, and the next insert run (whose keys
/// they were) succeeds.
#[test]
fn reinit_removes_the_keys_a_server_added() {
    use std::io::{Read, Write};
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let init = ["init", "dir:g.dir", "--count", "100", "--size", "1k"];
    ok(d, &init);
    let (mut server, addr) = crate::common::start_serve(
        d,
        "dir:g.dir",
        &["--writable", "--token", "t0k3n-long-enough-42"],
    );
    for key in [101, 150] {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(crate::common::PATIENCE)).unwrap();
        write!(
            s,
            "PUT /blobs/{key} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t0k3n-long-enough-42\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
        )
        .unwrap();
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        assert!(reply.starts_with("HTTP/1.1 201"), "{reply}");
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
    crate::common::wait_bounded(&mut server);
    assert!(d.join("g.dir/000150").exists());
    ok(d, &init);
    assert_eq!(blob_files(&d.join("g.dir")).len(), 100);
    ok(
        d,
        &small(&[
            "run",
            "dir:g.dir",
            "--threads",
            "2",
            "--mix",
            "insert=100",
            "--count",
            "100",
        ]),
    );
    ok(d, &small(&["run", "dir:g.dir", "--verify"]));
}
