//! Limits the user sets (issue 51, class 4): a command that meets the
//! file-size limit (`ulimit -f`) or the open-files limit (`ulimit -n`)
//! ends with one line naming the limit and its fix, exit 2, never killed
//! by SIGXFSZ, and removes what it made (quick's temporary folder).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Output;

use crate::common::{self, small};

/// Runs the binary in `dir` with the soft and hard `resource` limit set
/// to `value` (and TMPDIR in `dir`, so a temporary folder left is seen).
fn limited(dir: &Path, resource: libc::__rlimit_resource_t, value: u64, args: &[&str]) -> Output {
    let mut command = common::bin();
    command.current_dir(dir).env("TMPDIR", dir).args(args);
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    common::output(&mut command)
}

/// Asserts the one-line refusal naming `limit`, and returns stderr.
fn refused_naming(args: &[&str], out: &Output, limit: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{args:?}: {err}");
    assert!(errors[0].contains(limit), "{args:?}: {err}");
}

#[test]
fn a_file_size_limit_is_named_and_everything_made_is_cleaned_up() {
    let cases: [&[&str]; 4] = [
        &["quick", "--count", "300", "--size", "10k"],
        &["init", "a.db", "--count", "300", "--size", "10k"],
        &["init", "dir:a.dir", "--count", "3", "--size", "300k"],
        &["init", "tree:a.tree", "--count", "3", "--size", "300k"],
    ];
    for args in cases {
        let tmp = tempfile::tempdir().unwrap();
        let out = limited(tmp.path(), libc::RLIMIT_FSIZE, 200 * 1024, args);
        refused_naming(args, &out, "file size limit (ulimit -f 200, in KiB)");
        let left: Vec<String> = common::names_in(tmp.path())
            .into_iter()
            .filter(|n| n.starts_with("blobbench-"))
            .collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}

#[test]
fn an_open_files_limit_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    common::ok(
        tmp.path(),
        &["init", "y.db", "--count", "30", "--size", "1k"],
    );
    let args = small(&[
        "run",
        "y.db",
        "--threads",
        "4",
        "--mix",
        "read=100",
        "--count",
        "100",
    ]);
    let out = limited(tmp.path(), libc::RLIMIT_NOFILE, 6, &args);
    refused_naming(&args, &out, "limit on open files (ulimit -n 6)");
}
