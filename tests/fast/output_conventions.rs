//! Output conventions (issue 33): `--json -` puts the result on standard
//! output and the human table on standard error, so `| jq .` works;
//! NO_COLOR and `--quiet` keep escape sequences and progress lines away, and
//! `--quiet` keeps only errors and the one-line summary.

use std::path::Path;
use std::process::Output;

use crate::common::{bin, ok, output, succeeded};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Standard output parsed as one JSON document: what `jq .` would read.
fn stdout_json(args: &[&str], out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: standard output is not one JSON document ({e}):\n{}",
            text(&out.stdout)
        )
    })
}

fn small_database(dir: &Path) {
    ok(dir, &["init", "x.db", "--count", "300", "--size", "2k"]);
}

#[test]
fn run_json_dash_writes_the_result_to_stdout_and_the_table_to_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    small_database(tmp.path());
    let args = ["run", "x.db", "--random", "--json", "-"];
    let out = output(bin().args(args).current_dir(tmp.path()));
    let doc = stdout_json(&args, &out);
    assert_eq!(doc["command"], "run");
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(1));
    // The human table went to stderr, and no file named "-" was made.
    let err = text(&out.stderr);
    assert!(err.contains("x.db"), "no table on stderr: {err}");
    assert!(!tmp.path().join("-").exists(), "a file named - was written");
}

#[test]
fn quick_json_dash_writes_the_result_to_stdout_and_still_draws_its_report() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "quick", "--count", "1k", "--rounds", "2", "--dir", "data", "--json", "-",
    ];
    std::fs::create_dir(tmp.path().join("data")).unwrap();
    let out = output(bin().args(args).current_dir(tmp.path()));
    let doc = stdout_json(&args, &out);
    assert_eq!(doc["command"], "quick");
    let err = text(&out.stderr);
    assert!(err.contains("result written to standard output"), "{err}");
    let report = std::fs::read_to_string(tmp.path().join("report.html")).unwrap();
    assert!(
        report.contains("standard output"),
        "the report names its source"
    );
    assert!(!tmp.path().join("-").exists());
}

#[test]
fn a_suite_json_dash_writes_the_result_to_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "suite",
        "internal-external",
        "--sizes",
        "10k",
        "--page-sizes",
        "4096",
        "--total",
        "1M",
        "--rounds",
        "2",
        "--json",
        "-",
    ];
    let out = output(bin().args(args).current_dir(tmp.path()));
    let doc = stdout_json(&args, &out);
    assert_eq!(doc["command"], "suite internal-external");
    assert!(text(&out.stderr).contains("result written to standard output"));
    assert!(!tmp.path().join("-").exists());
}

/// An escape sequence (colour, cursor movement) anywhere in the output.
fn has_escape(bytes: &[u8]) -> bool {
    bytes.contains(&0x1b)
}

#[test]
fn no_color_and_quiet_print_no_escape_sequences_or_progress() {
    let tmp = tempfile::tempdir().unwrap();
    small_database(tmp.path());
    let args = ["run", "x.db", "--random", "--json", "r.json"];
    let plain = output(
        bin()
            .args(args)
            .env("NO_COLOR", "1")
            .current_dir(tmp.path()),
    );
    let table = succeeded(&args, plain.clone());
    assert!(!has_escape(&plain.stdout) && !has_escape(&plain.stderr));
    assert!(table.contains("x.db"), "{table}");

    let mut quiet_args = vec!["--quiet"];
    quiet_args.extend(["run", "x.db", "--random", "--json", "q.json"]);
    let out = output(bin().args(&quiet_args).current_dir(tmp.path()));
    let stdout = succeeded(&quiet_args, out.clone());
    assert!(!has_escape(&out.stdout) && !has_escape(&out.stderr));
    // Only the summary: one line, naming the command and its result.
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.starts_with("run finished in ") && stdout.contains("result in q.json"),
        "{stdout}"
    );
    assert_eq!(text(&out.stderr), "", "--quiet printed on stderr");
    assert!(tmp.path().join("q.json").is_file());

    // After the subcommand too (a global flag), and errors still show.
    let out = output(
        bin()
            .args(["run", "missing.db", "--quiet"])
            .current_dir(tmp.path()),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("missing.db"), "{err}");
}

#[test]
fn quiet_with_json_dash_keeps_stdout_for_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    small_database(tmp.path());
    let args = ["-q", "run", "x.db", "--random", "--json", "-"];
    let out = output(bin().args(args).current_dir(tmp.path()));
    let doc = stdout_json(&args, &out);
    assert_eq!(doc["command"], "run");
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("result on standard output"), "{err}");
}

/// Issue 51, class 6: a reader that goes away (`blobbench man | head -1`)
/// ends the command as it ends a C program, quietly by SIGPIPE, instead
/// of "Broken pipe" and exit 1.
#[test]
fn a_closed_standard_output_ends_the_command_quietly_by_sigpipe() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().unwrap();
    for args in [&["man"][..], &["completions", "bash"]] {
        let out = crate::common::with_reader_gone(tmp.path(), args);
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGPIPE),
            "{args:?}: {:?}",
            out.status
        );
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
