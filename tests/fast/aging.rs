//! Part of the aging tests in the fast tier (tiny datasets, usage errors);
//! the rest, and the helpers both use, are in `measured::aging`.

use crate::common::{default_signals, output, usage_error};
use crate::measured::aging::*;
use std::process::Stdio;

#[test]
fn bad_lists_are_one_line_errors_before_anything_is_mounted() {
    let work = Work::new();
    let w = work.path().to_str().unwrap().to_string();
    let base = |extra: &[&str]| {
        let mut a = vec!["suite", "aging", "--work", w.as_str()];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let cases: [(&[&str], &str); 5] = [
        (&["--fill", "100%"], "--fill 100%"),
        (&["--ages", "2,1"], "ascending"),
        (&["--layouts", "sqlite,zip"], "--layouts zip"),
        (&["--sizes", "1MiB-256KiB"], "--sizes 1MiB-256KiB"),
        (
            &["--sizes", "40MiB", "--volume-size", "64MiB"],
            "--volume-size",
        ),
    ];
    for (extra, needle) in cases {
        let args = base(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        usage_error(work.path(), &args, needle);
    }
    if is_root() {
        let args = base(&["--fs", "zfs"]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        usage_error(work.path(), &args, "zfs");
        // Not root: the error names --dir and --capacity.
        let mut setpriv = std::process::Command::new("setpriv");
        setpriv
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_blobbench"))
            .args(["suite", "aging", "--fs", "ext4"])
            .current_dir("/")
            .stdin(Stdio::null());
        let out = output(default_signals(&mut setpriv));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--dir") && err.contains("--capacity"), "{err}");
    }
    assert!(mounts_under(work.path()).is_empty());
}
