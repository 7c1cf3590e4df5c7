//! Regression tests for hostile inputs (issue 13, classes 1-3): keys a
//! dataset did not expect, sizes a store or disk cannot honour, and numbers
//! a command cannot honour. Each is refused with exit status 2 and one line
//! naming the value, never a panic or a backtrace, and nothing is written.

use crate::common;
use crate::common::small;

use std::path::Path;

use crate::common::{ok, run};

/// Asserts a clean refusal: exit 2, one line on stderr naming `needle`, no
/// panic or backtrace (even with RUST_BACKTRACE set), and nothing new or
/// changed under `dir`.
pub(crate) fn refused(dir: &Path, args: &[&str], needle: &str) {
    let before = common::everything_under(dir);
    let out = common::output(
        common::bin()
            .current_dir(dir)
            .env("RUST_BACKTRACE", "1")
            .args(args),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err} lacks {needle}");
    for bad in [
        "panicked",
        "RUST_BACKTRACE",
        "stack backtrace",
        "internal error",
    ] {
        assert!(!err.contains(bad), "{args:?}: {err}");
    }
    assert_eq!(
        common::everything_under(dir),
        before,
        "{args:?} wrote something"
    );
}

/// A kv table as kvtest (or anyone) might make it, with these keys.
pub(crate) fn kv(path: &Path, keys: &[i64]) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute("CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB)", [])
        .unwrap();
    for &k in keys {
        conn.execute("INSERT INTO kv VALUES (?1, x'0102')", [k])
            .unwrap();
    }
}

/// Class 1: keys below 1 are refused by name; keys far apart are never
/// expanded into the span between them (that allocated 80 GB, or
/// overflowed); keys missing in between are said, not hit one by one.
#[test]
fn unexpected_keys_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (name, keys, needle) in [
        ("negative.db", &[-5, 1][..], "-5"),
        ("zero.db", &[0, 1, 2][..], "key 0"),
        ("far.db", &[1, 10_000_000_000][..], "10000000000"),
        ("farthest.db", &[1, i64::MAX][..], "9223372036854775807"),
        // A few keys missing: the first one the run asks for is named.
        ("gap.db", &[1, 3][..], "key 2"),
        ("wide.db", &[1, 2, 3_000_000][..], "1..=3000000"),
    ] {
        kv(&d.join(name), keys);
        refused(d, &["run", name], needle);
        refused(d, &["run", name, "--random"], needle);
        refused(d, &["run", name, "--update", "--repeat", "1"], needle);
    }
    // Keys that are not whole numbers, in a table without INTEGER PRIMARY KEY.
    let conn = rusqlite::Connection::open(d.join("text.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE kv(k, v BLOB); INSERT INTO kv VALUES (1, x'00'), ('abc', x'01'), (2.5, x'02');",
    )
    .unwrap();
    drop(conn);
    refused(d, &["run", "text.db"], "'abc'");
    // A read of a refused dataset never creates the export it was asked for.
    refused(d, &["export", "negative.db", "out.dir"], "-5");
    refused(d, &["export", "zero.db", "tree:out.tree"], "key 0");
    // A server table with a huge span is the same catalog: checked in
    // conformance; here sqlite-ext's database of names, made by hand.
    let conn = rusqlite::Connection::open(d.join("ext.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE blobs(k INTEGER PRIMARY KEY, name TEXT); INSERT INTO blobs VALUES (-1, 'x');",
    )
    .unwrap();
    drop(conn);
    refused(d, &["run", "sqlite-ext:ext.db"], "-1");
}

/// Class 1 for folders: only names blobbench gives a key count as keys:
/// `1`, `0000001`, names past 2^64 and other files are someone else's.
#[test]
fn folders_count_only_blobbench_names_as_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let flat = d.join("flat");
    std::fs::create_dir(&flat).unwrap();
    for name in [
        "000001",
        "000002",
        "1",
        "0000001",
        "99999999999999999999999",
        "18446744073709551616",
        "notes.txt",
        "00000x",
    ] {
        std::fs::write(flat.join(name), b"abc").unwrap();
    }
    let out = ok(d, &small(&["run", "dir:flat", "--repeat", "1"]));
    assert!(out.contains("2 reads per repetition"), "{out}");

    let tree = d.join("tree");
    for name in ["00/00/01", "00/00/02", "00/00/001", "0/0/3", "00/00/xx"] {
        let p = tree.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"abc").unwrap();
    }
    let out = ok(d, &small(&["run", "tree:tree", "--repeat", "1"]));
    assert!(out.contains("2 reads per repetition"), "{out}");

    // Key 0 is a blobbench name but not a blobbench key.
    std::fs::write(flat.join("000000"), b"abc").unwrap();
    refused(d, &["run", "dir:flat"], "key 0");
    // Files far apart: refused without visiting the span between them.
    std::fs::remove_file(flat.join("000000")).unwrap();
    std::fs::write(flat.join("10000000000000"), b"abc").unwrap();
    refused(d, &["run", "dir:flat"], "10000000000000");
    refused(d, &["export", "dir:flat", "copy.db"], "10000000000000");
}

/// Class 2: a dataset the store or the disk cannot hold is refused before
/// anything is created, with the limit in the message.
#[test]
fn sizes_that_cannot_be_honoured_are_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Past 2^64 bytes in all, and past any disk: checked, never written.
    refused(
        d,
        &[
            "init",
            "a.db",
            "--count",
            "4611686018427387904",
            "--size",
            "100",
        ],
        "4611686018427387904",
    );
    refused(
        d,
        &["init", "b.db", "--count", "1000T", "--size", "1000"],
        "free",
    );
    refused(
        d,
        &["init", "dir:c", "--count", "1000T", "--size", "1000"],
        "need",
    );
    refused(
        d,
        &[
            "init",
            "sqlite-ext:e.db",
            "--count",
            "1000T",
            "--size",
            "1000",
        ],
        "need",
    );
    // A file per blob takes whole blocks and an inode: small blobs count so.
    refused(
        d,
        &["init", "dir:many", "--count", "100G", "--size", "1"],
        "files",
    );
    refused(
        d,
        &["init", "tree:many", "--count", "100G", "--size", "1"],
        "files",
    );
    // SQLite's per-value limit (SQLITE_LIMIT_LENGTH), asked of the library.
    refused(
        d,
        &["init", "f.db", "--count", "1", "--size", "1G"],
        "999999993",
    );
    refused(
        d,
        &[
            "init",
            "g.db",
            "--count",
            "2",
            "--size",
            "900M",
            "--variance",
            "200M",
        ],
        "1100000000",
    );
    // Past any store's limit: a range error naming the option.
    refused(d, &["init", "h.db", "--size", "3G"], "--size");
    refused(
        d,
        &["init", "i.db", "--count", "0xFFFFFFFFFFFFFFFF"],
        "--count",
    );
    // Suites check all their copies before the first.
    std::fs::create_dir(d.join("work")).unwrap();
    refused(
        d,
        &[
            "quick", "--dir", "work", "--count", "1000T", "--json", "q.json", "--report", "none",
        ],
        "free",
    );
    refused(
        d,
        &["suite", "fasterthanfs", "--dir", "work", "--count", "1000T"],
        "free",
    );
    refused(
        d,
        &[
            "suite",
            "lob",
            "--dir",
            "work",
            "--per-size",
            "100",
            "--sizes",
            "1G",
        ],
        "--per-size",
    );
}

/// Class 3: a number outside what the code can honour is a usage error
/// naming the option and the value, never truncated into another number.
#[test]
fn numbers_are_never_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    kv(&d.join("t.db"), &[1, 2, 3]);
    // Refused before any connection; were one tried, it is refused too.
    let closed = common::closed_port();
    let url = format!("http://{}/", closed.addr());
    let url = url.as_str();
    for (args, needle) in [
        (&["run", "t.db", "--repeat", "4294967296"][..], "4294967296"),
        (&["run", "t.db", "--repeat", "0"][..], "--repeat"),
        (&["run", "t.db", "--warmup", "4294967295"][..], "4294967295"),
        (
            &["run", "t.db", "--cache-size=-9223372036854775808"][..],
            "-9223372036854775808",
        ),
        (
            &["run", "t.db", "--cache-size", "4294967296"][..],
            "4294967296",
        ),
        (
            &["run", "sqlite:t.db?cache_size=-4294967296"][..],
            "-4294967296",
        ),
        (
            &["run", "sqlite:t.db?mmap_size=0xFFFFFFFFFFFFFFFF"][..],
            "mmap_size",
        ),
        (
            &["run", "t.db", "--mmap", "0xFFFFFFFFFFFFFFFF"][..],
            "--mmap",
        ),
        (
            &["run", "t.db", "--count", "18446744073709551615"][..],
            "--count",
        ),
        (
            &["run", "t.db", "--start", "9223372036854775808"][..],
            "--start",
        ),
        (&["run", "t.db", "--max-id", "0"][..], "--max-id"),
        (
            &["init", "u.db", "--pagesize", "4294971392"][..],
            "--pagesize",
        ),
        (
            &["init", "u.db", "--sigma", "NaN", "--dist", "lognormal"][..],
            "--sigma",
        ),
        (
            &["quick", "--rounds", "18446744073709551615"][..],
            "--rounds",
        ),
        (&["sweep", "--rounds", "4294967296"][..], "--rounds"),
        (&["sweep", "--workload", "insert:100G"][..], "100G"),
        (
            &["sweep", "--workload", "insert:10:4294967296"][..],
            "4294967296",
        ),
        (
            &["suite", "internal-external", "--total", "20000T"][..],
            "--total",
        ),
        (
            &["serve", "t.db", "--max-connections", "18446744073709551615"][..],
            "--max-connections",
        ),
        (
            &["serve", "t.db", "--header-timeout", "0s"][..],
            "--header-timeout",
        ),
        (
            &["serve", "t.db", "--body-timeout", "100000years"][..],
            "--body-timeout",
        ),
        (&["load", url, "-t", "0s"][..], "0s"),
        (&["load", url, "--rate", "1e-300"][..], "1e-300"),
        (&["load", url, "--rate", "NaN"][..], "NaN"),
        (&["load", url, "--timeout", "0ms"][..], "--timeout"),
        (&["load", url, "-n", "0"][..], "--requests"),
    ] {
        refused(d, args, needle);
    }
    // The values at the edges of the ranges are taken as given.
    let out = run(
        d,
        &["run", "t.db", "--repeat", "1", "--cache-size=-2147483647"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A reader that goes away (`blobbench run ... | head -1`) ends blobbench as
/// it ends any Unix filter: killed by SIGPIPE, silently, never an "internal
/// error" (Rust's println! panics on a closed standard output).
#[test]
fn a_closed_standard_output_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().unwrap();
    ok(
        tmp.path(),
        &["init", "p.db", "--count", "200", "--size", "1k"],
    );
    for args in [
        &["run", "p.db", "--count", "200", "--repeat", "1"][..],
        &["stat", "p.db"][..],
    ] {
        let out = common::with_reader_gone(tmp.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("internal error"), "{args:?}: {err}");
        // Killed by SIGPIPE (print_run's print!), or done quietly (stat
        // writes its fields and ignores the error, as kvtest does).
        assert!(
            out.status.signal() == Some(libc::SIGPIPE) || out.status.success(),
            "{args:?}: {:?} {err}",
            out.status
        );
    }
}

/// Issue 51, class 2: an option that names a server takes only that
/// server's URL. Any other text (a word, a file name, another server's
/// URL) was read as a target of another kind: `suite lob --pg notaurl`
/// measured a local SQLite file, printed it as "postgres bytea" and
/// exited 0, and `reproduce --mysql notaurl` judged the MariaDB claims
/// from SQLite files.
#[test]
fn an_option_that_names_a_server_takes_only_that_servers_url() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let every = ["--pg", "--mysql", "--s3"];
    let commands: [(&[&str], &[&str]); 6] = [
        (&["suite", "lob"], &every),
        (&["reproduce"], &every),
        (&["suite", "concurrency"], &every),
        (&["quick"], &["--s3"]),
        (&["advise"], &["--s3"]),
        (&["suite", "replicate"], &["--s3"]),
    ];
    for (command, options) in commands {
        for &option in options {
            let other = if option == "--mysql" {
                "postgres://me@127.0.0.1/db"
            } else {
                "mysql://me:secret@127.0.0.1/db"
            };
            for value in ["notaurl", "x.db", "sqlite:x.db", other] {
                let mut args = command.to_vec();
                args.extend([option, value]);
                refused(d, &args, &format!("{option} "));
                refused(d, &args, "URL; give ");
            }
        }
    }
    // The password of a URL given to the wrong option is not printed.
    let out = run(
        d,
        &["suite", "lob", "--pg", "mysql://me:secret@127.0.0.1/db"],
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("secret"));
}

/// Issue 51, class 6: failure output fit for people: the driver's words
/// without its type's name, an option put after `--` named as such, a
/// count too large for any run said so.
#[test]
fn failure_output_is_fit_for_people() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    kv(&d.join("t.db"), &[1, 2, 3]);
    let closed = common::closed_port();
    let mysql = format!("mysql://root@{}/x", closed.addr());
    common::usage_error(d, &["run", &mysql, "--verify"], "Connection refused");
    let err = String::from_utf8_lossy(&common::run(d, &["run", &mysql]).stderr).into_owned();
    assert!(!err.contains("DriverError"), "{err}");
    common::usage_error(
        d,
        &[
            "compare", "a.json", "b.json", "--", "c.json", "d.json", "-q",
        ],
        "-q follows `--`, where every word is a result file",
    );
    common::usage_error(
        d,
        &small(&[
            "run",
            "t.db",
            "--threads",
            "2",
            "--count",
            "9",
            "--max-errors",
            "99999999999999999999999",
        ]),
        "larger than any run's count of operations",
    );
}

/// Issue 51, class 6: bench/calibrate.sh checks every setting before its
/// first run (it used to find a bad OUT, SIZES or INJECT_CASE only after
/// an hour of runs), refusing with one line and exit 2, nothing made.
#[test]
fn the_calibration_script_refuses_bad_settings_before_it_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/calibrate.sh");
    for (name, value, needle) in [
        (
            "SUITE",
            "aging",
            "SUITE=aging: quick, fasterthanfs, internal-external, http or run",
        ),
        ("SIZES", "abc", "abc is not a factor above 1"),
        ("SIZES", "0.9", "0.9 is not a factor above 1"),
        (
            "OUT",
            "/nonexistent/c.json",
            "not a file that can be written",
        ),
        (
            "INJECT_CASE",
            "no:such",
            "quick has no such case; use one of: read:db",
        ),
    ] {
        let out = common::output(
            std::process::Command::new("bash")
                .arg(script)
                .env("BLOBBENCH", env!("CARGO_BIN_EXE_blobbench"))
                .env("TMPDIR", tmp.path())
                .env(name, value),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}={value}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}={value}: {err}");
        assert!(err.contains(needle), "{name}={value}: {err}");
        assert!(
            common::names_in(tmp.path()).is_empty(),
            "{name}={value} made something"
        );
    }
    // A suite's case list comes from its own refusal; a run has one case.
    for (suite, case, needle) in [
        (
            "internal-external",
            "9-page-4096:internal",
            "use one of: 10000-page-4096:internal",
        ),
        ("http", "nginx", "use one of: sqlite-kv, dir"),
        ("run", "read:db", "SUITE=run has one case, the run itself"),
    ] {
        let out = common::output(
            std::process::Command::new("bash")
                .arg(script)
                .env("BLOBBENCH", env!("CARGO_BIN_EXE_blobbench"))
                .env("TMPDIR", tmp.path())
                .env("SUITE", suite)
                .env("INJECT_CASE", case),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{suite}: {err}");
        assert!(err.contains(needle), "{suite}: {err}");
        assert!(
            common::names_in(tmp.path()).is_empty(),
            "{suite} made something"
        );
    }
}
