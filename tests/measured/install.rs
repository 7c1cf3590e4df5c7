//! Part of the install tests in the measured tier (real runs with durations, ignored by a plain `cargo test`);
//! the rest, and the helpers both use, are in `fast::install`.

use crate::common::{self, bin, output, succeeded};
use crate::fast::install::*;
use std::process::Command;

/// The installed binary, found on PATH as a shell finds it, run from a
/// folder outside the repository.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn an_installed_binary_runs_quick_outside_the_checkout() {
    let root = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let installed = install_into(root.path());
    assert!(
        !elsewhere.path().starts_with(env!("CARGO_MANIFEST_DIR")),
        "the temporary folder must lie outside the checkout"
    );
    let path = format!("{}:/usr/bin:/bin", installed.parent().unwrap().display());
    let args = ["quick", "--count", "2k", "--rounds", "3"];
    let mut command = Command::new("blobbench");
    command
        .args(args)
        .current_dir(elsewhere.path())
        .env_clear()
        .env("PATH", &path)
        .env("HOME", elsewhere.path())
        .env("TMPDIR", elsewhere.path())
        .stdin(std::process::Stdio::null());
    let stdout = succeeded(&args, output(&mut command));
    assert!(stdout.contains("result written to quick.json"), "{stdout}");
    // Its table of ratios: a read by SQL against files, with its interval.
    assert!(
        stdout.contains("x ["),
        "no ratio with an interval: {stdout}"
    );
    let doc = crate::common::json(&elsewhere.path().join("quick.json"));
    assert_eq!(doc["command"], "quick");
    assert!(elsewhere.path().join("report.html").is_file());
}

/// Every subcommand's --help has examples, and every example parses as
/// written: the exact words given to blobbench's own parser (kvtest's
/// single-dash spellings normalised as main does).
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn every_help_has_examples_that_parse() {
    let mut checked = 0;
    for path in every_subcommand() {
        if path == ["suite"] {
            continue; // a group: its suites carry the examples
        }
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        // Wide enough that clap wraps no example line (it reads COLUMNS when
        // no terminal is attached); a terminal shows them as the width allows.
        let help = succeeded(&args, output(bin().args(&args).env("COLUMNS", "10000")));
        let examples = examples_in(&help);
        assert!(
            !examples.is_empty(),
            "blobbench {} --help has no examples",
            path.join(" ")
        );
        for example in examples {
            // The shell expands the variable scripts/start-s3.sh exports
            // before blobbench sees it: an s3:// URL.
            let example = example.replace(
                "\"$BLOBBENCH_S3_URL\"",
                "'s3://blobbench/bench?endpoint=http://127.0.0.1:8333&region=us-east-1'",
            );
            let argv = common::shell_words(&example)
                .into_iter()
                .map(Into::into)
                .collect();
            let argv = blobbench::cli::normalize_kvtest_args(argv);
            if let Err(e) = blobbench::command::about::command().try_get_matches_from(argv) {
                panic!("example `{example}` does not parse:\n{e}");
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} examples found");
}
