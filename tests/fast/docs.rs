//! Every `blobbench ...` command the documentation shows (README.md and
//! docs/*.md, in code blocks and in running text) is parsed by the real
//! command line, so an option renamed in `cli/` cannot leave the docs wrong
//! in silence. Parsing is what is checked, not running: most documented
//! commands take minutes or a server; the cheap ones run in
//! `fast::install` and the suites' own tests. A small harness rather than
//! trycmd: trycmd compares whole outputs of commands it runs, and these
//! commands' outputs are measurements that differ on every run.

use std::path::{Path, PathBuf};

/// The documentation a user reads: the README and every page under docs/.
fn documentation() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// What the shell would hand blobbench in place of a variable or a
/// command substitution the docs use.
const EXPANSIONS: &[(&str, &str)] = &[
    (
        "$BLOBBENCH_S3_URL",
        "s3://blobbench/bench?endpoint=http://127.0.0.1:8333&region=us-east-1",
    ),
    ("$ENDPOINT", "http://127.0.0.1:8333"),
    ("\"$TOKEN\"", "0123456789abcdef0123456789abcdef"),
    (
        "$(openssl rand -hex 16)",
        "0123456789abcdef0123456789abcdef",
    ),
    (
        "$(scripts/install-litestream.sh)",
        "/root/.local/bin/litestream",
    ),
];

/// The command part of a shell line: from `blobbench` (after a prompt such
/// as `host1$ `, `sudo ` or `&& `) to the first comment, pipe, redirection
/// or next command.
fn command_in(line: &str) -> Option<String> {
    let line = line.replace("cargo run --release -- ", "blobbench ");
    let start = line.find("blobbench ")?;
    // "blobbench" inside a word or a path (a file name, a URL) is no command.
    let before = &line[..start];
    if !(before.is_empty()
        || before.ends_with("$ ")
        || before.ends_with("sudo ")
        || before.ends_with("&& ")
        || before.trim().is_empty())
    {
        return None;
    }
    let mut command = line[start..].to_string();
    for cut in [" # ", "  #", " | ", " && ", " >> ", " > ", "; "] {
        if let Some(at) = command.find(cut) {
            command.truncate(at);
        }
    }
    Some(command.trim().to_string())
}

/// Every documented command of `text`: lines of shell code blocks
/// (```sh, or no language), and spans in backticks in the running text.
/// Blocks of output (```text) hold no commands.
fn commands_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced: Option<bool> = None;
    for line in text.lines() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            fenced = match fenced {
                Some(_) => None,
                None => Some(matches!(
                    info.trim(),
                    "" | "sh" | "bash" | "shell" | "console"
                )),
            };
            continue;
        }
        if let Some(shell) = fenced {
            if shell {
                out.extend(command_in(line.trim_start()));
            }
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            // Odd pieces lie between backticks.
            if i % 2 == 1 && span.starts_with("blobbench ") {
                out.extend(command_in(span));
            }
        }
    }
    out
}

/// Shell words: single and double quotes group, and are removed.
fn words(command: &str) -> Vec<String> {
    let mut command = command.to_string();
    for (from, to) in EXPANSIONS {
        command = command.replace(from, to);
    }
    let (mut out, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in command.chars() {
        match (c, quote) {
            ('\'' | '"', None) => {
                quote = Some(c);
                started = true;
            }
            (c, Some(q)) if c == q => quote = None,
            (' ', None) => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            _ => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

#[test]
fn every_documented_command_parses() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for page in documentation() {
        let text = std::fs::read_to_string(&page).unwrap();
        for command in commands_in(&text) {
            let argv = words(&command).into_iter().map(Into::into).collect();
            let argv = blobbench::cli::normalize_kvtest_args(argv);
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            let wrong_here = match blobbench::command::about::command().try_get_matches_from(argv) {
                Ok(_) => None,
                // --help and --version end the parse by printing, as they should.
                Err(e) if matches!(e.kind(), DisplayHelp | DisplayVersion) => None,
                Err(e) => Some(e),
            };
            if let Some(e) = wrong_here {
                let first = e.to_string().lines().next().unwrap_or_default().to_string();
                wrong.push(format!(
                    "{}: `{command}`: {first}",
                    page.file_name().unwrap().to_string_lossy()
                ));
            }
            checked += 1;
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {checked} documented commands do not parse:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(checked > 50, "only {checked} documented commands found");
}

#[test]
fn commands_are_cut_where_the_shell_would_cut_them() {
    assert_eq!(
        command_in("blobbench run x.db --json - | jq .tables").as_deref(),
        Some("blobbench run x.db --json -")
    );
    assert_eq!(
        command_in("mkdir -p m && blobbench man > m/blobbench.1").as_deref(),
        Some("blobbench man")
    );
    assert_eq!(
        command_in("host1$ blobbench load --urls u.txt   # closed loop").as_deref(),
        Some("blobbench load --urls u.txt")
    );
    assert_eq!(
        command_in("sudo blobbench suite aging").as_deref(),
        Some("blobbench suite aging")
    );
    assert_eq!(
        command_in("cargo run --release -- quick").as_deref(),
        Some("blobbench quick")
    );
    assert_eq!(command_in("rm -rf /tmp/blobbench-quick-1"), None);
    assert_eq!(
        words(r#"blobbench serve d --token "$(openssl rand -hex 16)" 'a b'"#),
        [
            "blobbench",
            "serve",
            "d",
            "--token",
            "0123456789abcdef0123456789abcdef",
            "a b"
        ]
    );
    let text = "see `blobbench quick --count 2k` and\n```sh\nblobbench stat x.db   # kvtest stat\n```\n```text\nblobbench sweep: 2 cases\n```\n";
    assert_eq!(
        commands_in(text),
        ["blobbench quick --count 2k", "blobbench stat x.db"]
    );
}

/// Every file or folder of the repository the docs and ARCHITECTURE.md
/// name in backticks (`src/report/chart/`, `bench/calibrate.sh`) exists:
/// a module moved or renamed cannot leave the map pointing at nothing.
/// Placeholders (`src/suite/NAME.rs`) and patterns are not paths.
#[test]
fn every_path_the_docs_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = documentation();
    pages.push(root.join("ARCHITECTURE.md"));
    let tops = ["src/", "tests/", "bench/", "scripts/", "docs/", ".ci/"];
    let (mut checked, mut missing) = (0, Vec::new());
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for (i, span) in text.split('`').enumerate() {
            let path = span.trim_end_matches(['.', '/']);
            let placeholder = path
                .chars()
                .any(|c| c.is_ascii_uppercase() || "*{}<> ".contains(c));
            if i % 2 == 0 || placeholder || !tops.iter().any(|t| span.starts_with(t)) {
                continue;
            }
            checked += 1;
            if !root.join(path).exists() {
                missing.push(format!(
                    "{}: {span}",
                    page.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named but not there:\n{}",
        missing.join("\n")
    );
    assert!(checked > 20, "only {checked} paths found");
}
