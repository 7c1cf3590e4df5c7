//! Files and paths a hostile or unlucky user gives blobbench: destinations
//! that cannot be written (checked before any work), paths that are not
//! UTF-8 (a usage error or plain success, never a panic), a user's files
//! beside or inside what blobbench writes (never replaced, followed or
//! deleted), and damaged inputs (exit 2 with the fix). Root ignores file
//! modes, so unwritable places are made with a path under a regular file
//! (`notes.txt/x.json`) or a missing folder.

use crate::common;
use crate::common::small;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::Output;

use crate::common::{bin, ok, usage_error};

fn dataset_and_result(d: &Path) {
    ok(
        d,
        &[
            "init", "t.db", "--count", "50", "--size", "1k", "--json", "r.json",
        ],
    );
}

#[test]
fn every_destination_is_checked_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("notes.txt"), "a user's notes").unwrap();
    dataset_and_result(d);
    let before = common::everything_under(d);
    // The checks come before any connection; were one tried, it is refused.
    let closed = common::closed_port();
    let url = format!("http://{}/x", closed.addr());
    // /proc takes no new files, even from root: a folder that exists and
    // cannot be written, found out before the work and not after it.
    for p in [
        "notes.txt/x.json",
        "nowhere/x.json",
        "notes.txt/deeper/x.json",
        "/proc/x.json",
    ] {
        let cases: Vec<Vec<&str>> = vec![
            vec![
                "init", "new.db", "--count", "10", "--size", "100", "--json", p,
            ],
            small(&["run", "t.db", "--json", p]),
            vec!["compare", "r.json", "r.json", "--json", p],
            vec!["load", &url, "-n", "1", "--json", p],
            vec!["quick", "--json", p, "--dir", "work"],
            vec!["quick", "--report", p, "--dir", "work"],
            vec!["suite", "fasterthanfs", "--json", p, "--dir", "work"],
            vec!["suite", "internal-external", "--json", p, "--dir", "work"],
            vec!["suite", "lob", "--json", p, "--dir", "work"],
            vec!["suite", "http", "--json", p, "--dir", "work"],
            vec!["sweep", "--json", p, "--dir", "work"],
            vec!["advise", "--sizes", "10k", "--json", p, "--dir", "work"],
            vec!["report", "r.json", "-o", p],
            vec!["report", "r.json", "--markdown", p],
        ];
        // A folder to write into is created when missing, so only a file
        // in the way makes it unwritable.
        let folders: Vec<Vec<&str>> = vec![
            vec!["report", "r.json", "--csv", p],
            vec!["report", "r.json", "--png", p],
            vec!["export", "t.db", p],
            vec!["quick", "--dir", p],
            vec!["advise", "--sizes", "10k", "--dir", p],
        ];
        let blocked = p.starts_with("notes.txt") || p.starts_with("/proc");
        for args in cases
            .into_iter()
            .chain(folders.into_iter().filter(|_| blocked))
        {
            usage_error(d, &args, p.split('/').next().unwrap());
            assert_eq!(
                common::everything_under(d),
                before,
                "{args:?} left something behind"
            );
        }
    }
    // The report and the result cannot be one file.
    usage_error(
        d,
        &["quick", "--json", "same.json", "--report", "same.json"],
        "same file",
    );
}

fn run_os(dir: &Path, args: &[&OsStr]) -> Output {
    common::output(bin().current_dir(dir).args(args))
}

/// Exit 0, or exit 2 with one line naming the problem; never a panic.
fn clean(args: &[&OsStr], out: &Output) -> i32 {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{args:?}: {err}"
    );
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 2, "{args:?}: status {code}: {err}");
    if code == 2 {
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    code
}

#[test]
fn paths_that_are_not_utf8_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset_and_result(d);
    let bad = |suffix: &str| {
        let mut b = b"bad\xffname".to_vec();
        b.extend_from_slice(suffix.as_bytes());
        OsString::from_vec(b)
    };
    let (db, json, dir) = (bad(".db"), bad(".json"), bad(".dir"));
    let s = |t: &'static str| OsStr::new(t);
    // Refused before any connection; were one tried, it is refused too.
    let closed = common::closed_port();
    let url = OsString::from(format!("http://{}/x", closed.addr()));
    // A target or URL is text: a usage error naming it.
    let refused: Vec<Vec<&OsStr>> = vec![
        vec![s("run"), &db],
        vec![s("init"), &db],
        vec![s("serve"), &db],
        vec![s("export"), &db, s("out")],
        vec![s("export"), s("t.db"), &dir],
        vec![s("load"), &db],
        vec![s("load"), &url, s("--verify"), &db],
        vec![s("quick"), s("--dir"), &dir],
        vec![s("suite"), s("fasterthanfs"), s("--dir"), &dir],
        vec![s("suite"), s("internal-external"), s("--dir"), &dir],
        vec![s("suite"), s("lob"), s("--dir"), &dir],
        vec![s("suite"), s("http"), s("--dir"), &dir],
        vec![s("sweep"), s("--dir"), &dir],
        vec![s("advise"), s("--sizes"), s("10k"), s("--dir"), &dir],
        vec![s("report"), s("r.json"), s("--csv"), &dir],
    ];
    for args in refused {
        let out = run_os(d, &args);
        assert_eq!(clean(&args, &out), 2, "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not valid UTF-8"), "{args:?}: {err}");
        assert!(err.contains("bad\u{FFFD}name"), "{args:?}: {err}");
    }
    // Files named for reading that do not exist, and other text options:
    // plain usage errors.
    let extra = {
        let mut e = OsString::from("x=");
        e.push(&json);
        e
    };
    for args in [
        vec![s("suite"), s("http"), s("--extra"), &extra],
        vec![s("suite"), s("lob"), s("--pg"), &db],
        vec![s("sweep"), s("--param"), &db],
        vec![s("report"), &json],
        vec![s("compare"), &json, &json],
        vec![s("load"), s("--urls"), &json],
        vec![
            s("advise"),
            s("--sample-dir"),
            &dir,
            s("--json"),
            s("a.json"),
        ],
    ] {
        assert_eq!(clean(&args, &run_os(d, &args)), 2, "{args:?}");
    }
    // A temporary folder (TMPDIR) that is not UTF-8.
    std::fs::create_dir(d.join(&dir)).unwrap();
    let args = [s("quick"), s("--report"), s("none")];
    let out = common::output(bin().current_dir(d).env("TMPDIR", d.join(&dir)).args(args));
    assert_eq!(clean(&args, &out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("TMPDIR"));
    // A result or report may carry any name the filesystem takes.
    let args = [s("run"), s("t.db"), s("--json"), &json];
    assert_eq!(clean(&args, &run_os(d, &args)), 0);
    assert!(d.join(&json).is_file());
    let html = bad(".html");
    let args = [s("report"), &json, s("-o"), &html];
    assert_eq!(clean(&args, &run_os(d, &args)), 0);
    assert!(d.join(&html).is_file());
}

#[test]
fn writes_never_clobber_follow_or_delete_a_users_files() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset_and_result(d);
    // A user's files where a naive writer puts its temporary file.
    std::fs::write(d.join("r.json.tmp"), "mine").unwrap();
    std::fs::write(d.join("victim.txt"), "precious").unwrap();
    std::os::unix::fs::symlink("victim.txt", d.join("report.html.tmp")).unwrap();
    ok(d, &small(&["run", "t.db", "--json", "r.json"]));
    ok(d, &["report", "r.json", "-o", "report.html"]);
    ok(d, &["report", "r.json", "-o", "report.html"]);
    assert_eq!(
        std::fs::read_to_string(d.join("r.json.tmp")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("victim.txt")).unwrap(),
        "precious"
    );
    assert!(d.join("report.html.tmp").is_symlink());
    // The earlier result was kept beside the new one, and no temporary
    // file of ours is left.
    let names = common::everything_under(d);
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("r.2") && n.ends_with(".json")),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with('.') && n.ends_with(".tmp")),
        "{names:?}"
    );
    // A result named through a symbolic link: the link is replaced, the
    // file it points to is not written through it.
    std::fs::create_dir(d.join("elsewhere")).unwrap();
    std::fs::copy(d.join("r.json"), d.join("elsewhere/real.json")).unwrap();
    let real = std::fs::read(d.join("elsewhere/real.json")).unwrap();
    std::os::unix::fs::symlink("elsewhere/real.json", d.join("link.json")).unwrap();
    ok(d, &small(&["run", "t.db", "--json", "link.json"]));
    assert_eq!(std::fs::read(d.join("elsewhere/real.json")).unwrap(), real);
    assert!(!d.join("link.json").is_symlink());
}

#[test]
fn re_exporting_removes_only_the_blobs_blobbench_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset_and_result(d);
    ok(d, &["export", "t.db", "out"]);
    ok(d, &["export", "t.db", "tree:tr"]);
    let users = [
        "out/notes.txt",
        "out/notes.tmp",
        "out/12",
        "out/000001.bak",
        "out/000999",
        "tr/00/mine.txt",
        "tr/00/00/mine.tmp",
        "tr/notes",
    ];
    for u in users {
        std::fs::write(d.join(u), u).unwrap();
    }
    ok(d, &["export", "t.db", "out"]);
    ok(d, &["export", "t.db", "tree:tr"]);
    for u in users {
        assert_eq!(std::fs::read_to_string(d.join(u)).unwrap(), u, "{u}");
    }
    let out = ok(d, &small(&["run", "dir:out", "--verify", "--repeat", "1"]));
    assert!(out.contains("50"), "{out}");
    ok(d, &small(&["run", "tree:tr", "--verify", "--repeat", "1"]));
}

/// Re-export (or re-init) over a folder where one of the names the new
/// dataset writes holds something blobbench did not make: a symbolic link
/// (to a file or to a folder outside), a folder where a blob file goes, a
/// user's file at a key the earlier dataset did not write. Each is refused
/// up front, exit 2, naming it, with nothing in the folder changed (the
/// earlier export whole, nothing followed outside); the fix the message
/// gives, run as given, makes the next export succeed.
#[test]
fn re_exporting_over_a_name_blobbench_did_not_make_is_refused_before_anything_changes() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset_and_result(d);
    std::fs::create_dir(d.join("outside")).unwrap();
    std::fs::write(d.join("outside/victim"), "a user's file").unwrap();
    type Plant = fn(&Path);
    let cases: [(&str, &str, &str, Plant); 6] = [
        ("out", "out/000003", "a symbolic link", |d| {
            std::fs::remove_file(d.join("out/000003")).unwrap();
            symlink(d.join("outside/victim"), d.join("out/000003")).unwrap();
        }),
        ("out", "out/000004", "a folder", |d| {
            std::fs::remove_file(d.join("out/000004")).unwrap();
            std::fs::create_dir(d.join("out/000004")).unwrap();
            std::fs::write(d.join("out/000004/mine"), "mine").unwrap();
        }),
        ("tree:tr", "tr/00/00/03", "a symbolic link", |d| {
            std::fs::remove_file(d.join("tr/00/00/03")).unwrap();
            symlink(d.join("outside/victim"), d.join("tr/00/00/03")).unwrap();
        }),
        ("tree:tr", "tr/00/00", "a symbolic link", |d| {
            std::fs::rename(d.join("tr/00/00"), d.join("outside/moved")).unwrap();
            symlink(d.join("outside/moved"), d.join("tr/00/00")).unwrap();
        }),
        ("tree:tr", "tr/00", "a file", |d| {
            std::fs::remove_dir_all(d.join("tr/00")).unwrap();
            std::fs::write(d.join("tr/00"), "mine").unwrap();
        }),
        // The new export writes 60 keys over an earlier one of 50: key 55
        // is a user's file, which clearing the earlier export leaves.
        ("out", "out/000055", "did not write", |d| {
            std::fs::write(d.join("out/000055"), "mine").unwrap();
        }),
    ];
    ok(d, &["init", "more.db", "--count", "60", "--size", "1k"]);
    for (dest, planted, found, plant) in cases {
        let _ = std::fs::remove_dir_all(d.join(dest.trim_start_matches("tree:")));
        ok(d, &["export", "t.db", dest]);
        plant(d);
        let folder = d.join(dest.trim_start_matches("tree:"));
        let before = contents(&folder);
        let outside = contents(&d.join("outside"));
        let source = if planted.ends_with("55") {
            "more.db"
        } else {
            "t.db"
        };
        let out = common::run(d, &["export", source, dest]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{planted}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{planted}: {err}");
        assert!(
            err.contains(&format!("{planted} is {found}")) || err.contains(found),
            "{planted}: {err}"
        );
        assert!(err.contains(planted), "{planted}: {err}");
        assert_eq!(contents(&folder), before, "{planted}: the folder changed");
        assert_eq!(
            contents(&d.join("outside")),
            outside,
            "{planted}: followed outside"
        );
        // The fix, exactly as the message writes it.
        let fix = err
            .split_once("(rm -r '")
            .and_then(|(_, rest)| rest.split_once("')"))
            .map(|(path, _)| path.to_string())
            .unwrap_or_else(|| panic!("{planted}: no rm -r in {err}"));
        let rm = std::process::Command::new("rm")
            .args(["-r", &fix])
            .current_dir(d)
            .status()
            .unwrap();
        assert!(rm.success(), "{fix}");
        ok(d, &["export", source, dest]);
        assert_eq!(
            std::fs::read_to_string(d.join("outside/victim")).unwrap(),
            "a user's file"
        );
        let target = if dest.starts_with("tree:") {
            dest.to_string()
        } else {
            format!("dir:{dest}")
        };
        ok(d, &small(&["run", &target, "--verify", "--repeat", "1"]));
    }
}

/// Every name under `dir` (links not followed) with its bytes, or the
/// link's destination.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = common::everything_under(dir)
        .into_iter()
        .map(|name| {
            let p = dir.join(&name);
            let bytes = if p.is_symlink() {
                std::fs::read_link(&p)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if p.is_file() {
                std::fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            (name, bytes)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn damaged_inputs_are_usage_errors_with_a_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    dataset_and_result(d);
    // A truncated database.
    ok(d, &["init", "cut.db", "--count", "100", "--size", "10k"]);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(d.join("cut.db"))
        .unwrap();
    f.set_len(5000).unwrap();
    usage_error(d, &["run", "cut.db"], "cut.db");
    // A binary file or a folder given as a result.
    std::fs::write(d.join("bin.json"), [0xffu8, 0xd8, 0, 1, 2, 0x80]).unwrap();
    usage_error(d, &["compare", "bin.json", "r.json"], "not JSON");
    usage_error(d, &["report", "bin.json"], "not JSON");
    std::fs::create_dir(d.join("folder.json")).unwrap();
    usage_error(d, &["report", "folder.json"], "is a folder");
    usage_error(d, &["compare", "r.json", "folder.json"], "is a folder");
    // A folder as the URL file of an extra server.
    usage_error(
        d,
        &["suite", "http", "--extra", "x=folder.json"],
        "is a folder",
    );
    // Not enough free space: refused before anything is written, and the
    // work folder holds nothing afterwards.
    let out = common::run(
        d,
        &[
            "quick", "--count", "100M", "--size", "1M", "--dir", "work", "--json", "q.json",
            "--report", "none",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !d.join("work").exists() || common::everything_under(&d.join("work")).is_empty(),
        "{:?}",
        common::everything_under(d)
    );
}

#[test]
fn an_unreadable_sample_dir_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::create_dir(d.join("sample")).unwrap();
    std::fs::write(d.join("sample/a.bin"), [1u8; 100]).unwrap();
    std::fs::set_permissions(d.join("sample"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let args = [
        "advise",
        "--sample-dir",
        "sample",
        "--json",
        "a.json",
        "--report",
        "none",
    ];
    // SAFETY: geteuid has no preconditions.
    let out = if unsafe { libc::geteuid() } == 0 {
        // Root reads any folder: run as nobody, if this system can.
        let found = std::process::Command::new("setpriv")
            .arg("--version")
            .output();
        if let Err(e) = found {
            println!("skipped: running as root and cannot run setpriv ({e})");
            return;
        }
        let mut setpriv = std::process::Command::new("setpriv");
        // The binary's environment and signals as bin() gives them.
        for (name, value) in bin().get_envs() {
            match value {
                Some(value) => setpriv.env(name, value),
                None => setpriv.env_remove(name),
            };
        }
        common::default_signals(&mut setpriv);
        common::output(
            setpriv
                .stdin(std::process::Stdio::null())
                .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(env!("CARGO_BIN_EXE_blobbench"))
                .args(args)
                .current_dir(d),
        )
    } else {
        common::run(d, &args)
    };
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("setpriv:") {
        println!("skipped: setpriv cannot drop privileges here: {err}");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("ermission denied"), "{err}");
    assert!(!err.contains("no non-empty files"), "{err}");
}

/// A small filesystem of its own (tmpfs), for full-disk cases; None (and a
/// printed reason) where this process cannot mount one.
struct SmallDisk {
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("disk");
        std::fs::create_dir(&path).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .output();
        match mounted {
            Ok(o) if o.status.success() => Some(SmallDisk { path, _dir: dir }),
            Ok(o) => {
                println!(
                    "skipped: cannot mount a tmpfs (needs root): {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("skipped: cannot run mount: {e}");
                None
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(&self.path)
            .status();
    }
}

#[test]
fn quick_on_a_small_disk_is_refused_up_front_and_leaves_nothing() {
    let Some(disk) = SmallDisk::mount("3m") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Its own temporary folder, and a --dir, both on the small disk.
    let out = common::output(
        common::bin()
            .current_dir(d)
            .env("TMPDIR", &disk.path)
            .args([
                "quick", "--count", "2000", "--size", "10k", "--report", "none",
            ]),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("free"), "{err}");
    assert!(
        common::everything_under(&disk.path).is_empty(),
        "{:?}",
        common::everything_under(&disk.path)
    );
    let work = disk.path.join("work");
    usage_error(
        d,
        &[
            "quick",
            "--count",
            "2000",
            "--size",
            "10k",
            "--report",
            "none",
            "--dir",
            work.to_str().unwrap(),
        ],
        "free",
    );
    // At most the empty --dir itself.
    assert!(
        common::everything_under(&disk.path)
            .iter()
            .all(|n| n == "work"),
        "{:?}",
        common::everything_under(&disk.path)
    );
    assert!(!d.join("quick.json").exists());
}
