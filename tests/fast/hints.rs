//! Advice names options that exist (issue 29, item 14): every `--flag` a
//! message in the sources suggests is an option of the command that
//! prints it, as clap defines it. `suite aging` advised `--rounds 5`,
//! which it does not have (its rounds are --read-rounds).
//!
//! Each string literal of the library's code (tests and comments left out)
//! is read for `--flag`s. A file speaks for the command it belongs to
//! (`command/aging.rs`, `suite/aging/`, `report/terminal/aging.rs`,
//! `result/aging.rs`: `suite aging`); a flag must be one of that command's,
//! or one of a command the same literal names ("as `run --mix` takes it").
//! Files every command shares (measure, store, target, ...) may name any
//! command's flag; where they hold advice naming `--rounds` and `--dir`
//! ([`estimate::notes`], `NOISY_ADVICE`), every file using it must belong
//! to a command that has both.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::CommandFactory;

/// Flags of other programs that messages name on purpose: (the program
/// the literal names, the flag, why). An empty program: anywhere.
const OTHER_PROGRAMS: &[(&str, &str, &str)] = &[
    (
        "mariadbd",
        "--max-allowed-packet",
        "a server option, in a hint",
    ),
    ("MariaDB", "--plugin-load-add", "a server option, in a hint"),
    ("siege", "--time", "the blog's siege line"),
    (
        "",
        "--direct-io",
        "losetup's option: how a loop device was attached",
    ),
    (
        "",
        "--multitrans",
        "kvtest's option, quoted from SQLite's page as a case's name",
    ),
];

/// Every subcommand (as a user types it: "run", "suite aging") and its
/// flags, long and short, as clap defines them.
fn commands() -> BTreeMap<String, BTreeSet<String>> {
    fn walk(cmd: &clap::Command, prefix: &str, out: &mut BTreeMap<String, BTreeSet<String>>) {
        for sub in cmd.get_subcommands() {
            let name = format!("{prefix}{}", sub.get_name()).trim().to_string();
            let mut flags: BTreeSet<String> = ["--help".to_string()].into();
            for arg in sub.get_arguments() {
                if let Some(l) = arg.get_long() {
                    flags.insert(format!("--{l}"));
                }
                for l in arg.get_all_aliases().unwrap_or_default() {
                    flags.insert(format!("--{l}"));
                }
                if let Some(s) = arg.get_short() {
                    flags.insert(format!("-{s}"));
                }
            }
            out.insert(name.clone(), flags);
            walk(sub, &format!("{name} "), out);
        }
    }
    let mut out = BTreeMap::new();
    // Built, so global options (--quiet) are every subcommand's too.
    let mut cli = blobbench::cli::Cli::command();
    cli.build();
    walk(&cli, "", &mut out);
    out
}

/// The command a source file speaks for; None when every command shares it.
fn owner(file: &Path) -> Option<String> {
    let rel: Vec<&str> = file.iter().map(|c| c.to_str().unwrap()).collect();
    let stem = |s: &str| s.trim_end_matches(".rs").to_string();
    let name = match rel.as_slice() {
        ["command", f] | ["report", "terminal", f] | ["report", "view", f] | ["result", f] => {
            stem(f)
        }
        ["suite", f, ..] => stem(f),
        ["http", "load" | "load.rs", ..] => "load".into(),
        ["http", "server", ..] => "serve".into(),
        _ => return None,
    };
    let command = match name.as_str() {
        "concurrent" | "run" => "run",
        "fasterthanfs" => "suite fasterthanfs",
        "internal_external" => "suite internal-external",
        "lob" => "suite lob",
        "http" => "suite http",
        "concurrency" => "suite concurrency",
        "replicate" => "suite replicate",
        "aging" => "suite aging",
        "init" | "export" | "stat" | "quick" | "serve" | "load" | "merge" | "advise" | "report"
        | "compare" | "sweep" => name.as_str(),
        _ => return None,
    };
    Some(command.to_string())
}

/// The library's sources (tests left out), relative to src/.
fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|p| !p.ends_with("tests.rs"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let code = match text.find("#[cfg(test)]") {
                Some(at) => text[..at].to_string(),
                None => text,
            };
            (p.strip_prefix(&src).unwrap().to_path_buf(), code)
        })
        .collect()
}

/// The string literals of `code` (comments skipped), each with its line.
fn literals(code: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = code.chars().collect();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    while i < chars.len() {
        match chars[i] {
            '\n' => line += 1,
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\'' if chars.get(i + 2) == Some(&'\'') => i += 2,
            '\'' if chars.get(i + 1) == Some(&'\\') => {
                while i + 1 < chars.len() && chars[i + 1] != '\'' {
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                let (start, mut text) = (line, String::new());
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    text.push(chars[i]);
                    i += 1;
                }
                out.push((start, text));
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The `--flag`s a text names.
fn flags(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < b.len() {
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-');
        if boundary && &b[i..i + 2] == b"--" && b[i + 2].is_ascii_lowercase() {
            let end = (i + 2..b.len())
                .find(|&j| !(b[j].is_ascii_lowercase() || b[j].is_ascii_digit() || b[j] == b'-'))
                .unwrap_or(b.len());
            out.push(text[i..end].trim_end_matches('-').to_string());
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// The commands a literal names as a user types them ("blobbench suite
/// aging", "`run --threads", "as run --mix"), longest first.
fn named_commands<'a>(
    text: &str,
    commands: &'a BTreeMap<String, BTreeSet<String>>,
) -> Vec<&'a str> {
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    commands
        .keys()
        .filter(|name| {
            let parts: Vec<&str> = name.split(' ').collect();
            words.windows(parts.len()).any(|w| w == parts.as_slice())
        })
        .map(String::as_str)
        .collect()
}

#[test]
fn every_suggested_option_exists_for_the_command_that_prints_it() {
    let commands = commands();
    let all: BTreeSet<&String> = commands.values().flatten().collect();
    let mut wrong = Vec::new();
    for (file, code) in sources() {
        if file.starts_with("cli") {
            continue;
        }
        let own = owner(&file);
        if let Some(o) = &own {
            assert!(
                commands.contains_key(o),
                "{}: no command {o}",
                file.display()
            );
        }
        for (line, text) in literals(&code) {
            if !text.contains(' ') {
                // A lone flag is an argument given to a child process
                // (`serve --listen`), not advice.
                continue;
            }
            let mut named = named_commands(&text, &commands);
            if text.contains("kvtest") {
                // kvtest's options are run's and init's.
                named.extend(["run", "init"]);
            }
            for flag in flags(&text) {
                if OTHER_PROGRAMS
                    .iter()
                    .any(|(program, f, _)| *f == flag && text.contains(program))
                {
                    continue;
                }
                let known = match &own {
                    Some(o) => {
                        commands[o].contains(&flag)
                            || named.iter().any(|n| commands[*n].contains(&flag))
                    }
                    None => all.contains(&flag),
                };
                if !known {
                    wrong.push(format!(
                        "src/{}:{line}: {flag} is no option of {}",
                        file.display(),
                        own.as_deref().unwrap_or("any command")
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "advice naming options that do not exist:\n{}",
        wrong.join("\n")
    );
}

/// The shared advice ([`estimate::notes`] and `NOISY_ADVICE`) names
/// `--rounds` and `--dir`: every command whose output uses it as it is
/// has both (aging names its own with `notes_naming`).
#[test]
fn shared_advice_is_printed_only_by_commands_with_its_options() {
    let commands = commands();
    let mut wrong = Vec::new();
    for (file, code) in sources() {
        let uses = code.contains("NOISY_ADVICE")
            || code.contains("estimate::notes(")
            || code.contains("estimate::notes;");
        let Some(own) = owner(&file) else { continue };
        if !uses || file.starts_with("measure") {
            continue;
        }
        for flag in ["--rounds", "--dir"] {
            if !commands[&own].contains(flag) {
                wrong.push(format!("src/{}: {own} has no {flag}", file.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The test reads what it should: a literal's flags, with their commands.
#[test]
fn the_reader_finds_flags_in_literals_only() {
    let code = "let a = \"use --rounds 5, not -- or ---x\"; // \"--comment\"\nlet b = 'x'; let c = \"as run --mix takes it\";";
    let lits = literals(code);
    assert_eq!(lits.len(), 2, "{lits:?}");
    assert_eq!(flags(&lits[0].1), ["--rounds"]);
    let commands = commands();
    assert!(named_commands(&lits[1].1, &commands).contains(&"run"));
    assert!(commands["suite aging"].contains("--read-rounds"));
    assert!(!commands["suite aging"].contains("--rounds"));
    assert_eq!(
        owner(Path::new("report/terminal/aging.rs")).as_deref(),
        Some("suite aging")
    );
    assert_eq!(
        owner(Path::new("suite/aging/series.rs")).as_deref(),
        Some("suite aging")
    );
    assert_eq!(owner(Path::new("measure/estimate.rs")), None);
}
