//! Installed like any CLI (issue 33): an installed binary works outside the
//! checkout, completions complete in a real bash, the manual page and
//! `--version` say what they should, every help has examples that parse,
//! and the top-level help names every target kind and every suite.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{bin, output, succeeded};

/// Copies the built binary into `root/bin`, as `cargo install --path .
/// --root ROOT --locked` would put it. That is the same thing: cargo
/// install builds the same package with the release profile and copies its
/// one binary into ROOT/bin; nothing else is installed (no data files, no
/// paths baked in), which this test proves by running it from elsewhere.
/// A real `cargo install --offline` would rebuild the crate from scratch
/// in a new target folder: minutes in CI for the same file.
pub(crate) fn install_into(root: &Path) -> PathBuf {
    let bin_dir = root.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let installed = bin_dir.join("blobbench");
    std::fs::copy(env!("CARGO_BIN_EXE_blobbench"), &installed).unwrap();
    installed
}

/// The subcommands `blobbench --help` lists (clap's `help` left out).
pub(crate) fn subcommands_in_help(args: &[&str]) -> Vec<String> {
    let help = succeeded(args, output(bin().args(args)));
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A name starts its line; a wrapped description is indented further.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every subcommand's path: `quick`, `suite lob`, ...
pub(crate) fn every_subcommand() -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for name in subcommands_in_help(&["--help"]) {
        let nested = subcommands_in_help(&[&name, "--help"]);
        all.push(vec![name.clone()]);
        for sub in nested {
            all.push(vec![name.clone(), sub]);
        }
    }
    all
}

#[test]
fn bash_completes_a_subcommand_and_a_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("blobbench.bash");
    let out = succeeded(
        &["completions", "bash"],
        output(bin().args(["completions", "bash"])),
    );
    std::fs::write(&script, out).unwrap();
    // Loaded as bash-completion loads it; the function `complete -p`
    // registered is called as bash calls it (command, word, previous word).
    let driver = r#"
set -u
source "$1"
fn=$(complete -p blobbench | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
[ -n "$fn" ] || { echo "no completion function registered"; exit 1; }
complete_line() {
    COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
    read -ra COMP_WORDS <<< "$COMP_LINE"
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMPREPLY=()
    "$fn" blobbench "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\n' "${COMPREPLY[@]}"
}
echo "== qu"; complete_line "blobbench qu"
echo "== thr"; complete_line "blobbench run --thr"
"#;
    let out = output(
        Command::new("bash")
            .args(["--norc", "--noprofile", "-c", driver, "driver"])
            .arg(&script)
            .current_dir(tmp.path()),
    );
    let text = succeeded(&["bash", "-c"], out);
    let section = |name: &str| -> Vec<String> {
        text.split("== ")
            .find(|s| s.starts_with(name))
            .map(|s| s.lines().skip(1).map(str::to_string).collect())
            .unwrap_or_default()
    };
    assert_eq!(section("qu"), vec!["quick"], "{text}");
    assert_eq!(section("thr"), vec!["--threads"], "{text}");
}

#[test]
fn the_manual_page_is_roff_naming_every_subcommand() {
    let page = succeeded(&["man"], output(bin().arg("man")));
    let first_macro = page
        .lines()
        .find(|l| l.starts_with(".TH") || l.starts_with(".SH"))
        .unwrap_or_default();
    assert!(first_macro.starts_with(".TH blobbench 1"), "{first_macro}");
    for path in every_subcommand() {
        let heading = format!(".SH \"BLOBBENCH {}\"", path.join(" ").to_uppercase());
        assert!(page.contains(&heading), "no {heading} in the manual page");
    }
    assert!(page.contains("Examples:"), "the manual lacks the examples");
}

#[test]
fn the_version_says_the_bundled_sqlite_and_the_commit() {
    let out = succeeded(&["--version"], output(bin().arg("--version")));
    let sqlite = format!("SQLite {} bundled", rusqlite::version());
    assert!(out.contains(&sqlite), "{out}");
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let commit = head.unwrap_or_else(|| "unknown".into());
    assert!(
        out.contains(&format!("commit {commit})")),
        "{out} lacks {commit}"
    );
}

#[test]
fn the_help_names_every_target_kind_and_every_suite() {
    let help = succeeded(&["--help"], output(bin().arg("--help")));
    for kind in [
        "x.db",
        "sqlite:",
        "sqlite-ext:",
        "dir:",
        "tree:",
        "postgres://",
        "mysql://",
        "s3://",
        "memory:",
    ] {
        assert!(help.contains(kind), "--help lacks the target {kind}");
    }
    let listed = help
        .lines()
        .skip_while(|l| !l.starts_with("Suites"))
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let suites = subcommands_in_help(&["suite", "--help"]);
    assert!(suites.len() >= 7, "{suites:?}");
    for suite in suites {
        assert!(
            listed.split(", ").any(|s| s.trim() == suite),
            "--help's suites ({listed}) lack {suite}"
        );
    }
}

/// The `blobbench ...` commands in a help's "Examples:" section, cut at
/// shell operators (`|`, `&&`, `>`) and at a trailing `(comment)`.
pub(crate) fn examples_in(help: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if let Some(rest) = line.strip_prefix("Example") {
            inside = true;
            // "Example: blobbench init ..." holds its one command on the line.
            if let Some((_, command)) = rest.split_once(": blobbench ") {
                commands.push(format!("blobbench {}", command.trim()));
            }
            continue;
        }
        if !line.starts_with("  ") {
            inside = false;
        }
        if !inside {
            continue;
        }
        for part in line.split("&&") {
            let part = part.split(" | ").next().unwrap_or_default();
            let part = part.split(" > ").next().unwrap_or_default();
            // A comment follows the command after two or more spaces.
            let part = part
                .trim_start()
                .split("  ")
                .next()
                .unwrap_or_default()
                .trim();
            let part = part.split_once("$ ").map_or(part, |(_, c)| c);
            if part.starts_with("blobbench ") {
                commands.push(part.to_string());
            }
        }
    }
    commands
}

/// The cheap examples are run as written, in a folder of their own: the
/// kvtest sequence on a small dataset is covered elsewhere; these need
/// nothing before them.
#[test]
fn the_cheap_examples_run_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["completions", "bash"][..],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["completions", "elvish"],
        &["completions", "powershell"],
        &["man"],
    ] {
        let out = succeeded(args, output(bin().args(args).current_dir(tmp.path())));
        assert!(out.contains("blobbench"), "{args:?}: {out}");
    }
}
