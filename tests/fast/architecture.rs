//! The one-way rule (ARCHITECTURE.md), checked on the source text as an
//! allow-list: each layer names the layers it may use, and any path that
//! reaches another one fails, naming the file, the line and the rule.
//!
//! A path is read as the compiler would resolve it, from tokens (comments
//! and string literals removed): `use crate::a::b`, grouped imports
//! (`use crate::{a, b::{c}}`, over several lines), `super::` paths that
//! climb out of a layer (counted from the file's module and any inline
//! `mod` block it sits in), `self::` paths, and paths written inline in
//! code (`crate::command::x::y(...)`). main.rs names the library as
//! `blobbench::`. Only store/, target.rs and command/ may name a `Target`
//! variant (any `Target::Capitalised` path, a glob or a group of them).

use std::path::{Path, PathBuf};

/// What each layer may use besides itself: (layer, allowed, why).
/// `error`, `units`, `pause`, `interrupt`, `process` and `limits` are leaves every layer may use.
const ALLOWED: &[(&str, &[&str], &str)] = &[
    ("main", &["cli", "command"], "main parses and dispatches"),
    ("lib", &[], "lib.rs only declares the modules"),
    (
        "cli",
        &["result", "workload", "suite", "target"],
        "cli/ holds clap definitions and their value parsers: options arrive typed, so it names the types they parse into",
    ),
    (
        "command",
        &[
            "cli", "suite", "workload", "store", "result", "report", "http", "measure", "dataset",
            "target", "progress",
        ],
        "the command layer is the edge: it may use everything below it",
    ),
    (
        "suite",
        &[
            "workload", "store", "http", "result", "measure", "dataset", "target", "progress",
        ],
        "suites plan and measure: typed options in, a typed result out (suite http drives serve and load)",
    ),
    (
        "http",
        &[
            "store", "target", "measure", "result", "dataset", "progress",
        ],
        "serve and load are library code under the command layer",
    ),
    (
        "workload",
        &[
            "store", "measure", "result", "dataset", "target", "progress",
        ],
        "the executor runs plans; it does not know who asked",
    ),
    (
        "store",
        &["measure", "dataset", "target", "progress"],
        "backends sit at the bottom",
    ),
    (
        "report",
        &["result", "measure", "dataset"],
        "reports render results (and the dataset specs they hold) only, never live state",
    ),
    (
        "result",
        &["measure", "store", "target", "dataset"],
        "the result contract holds data types; it depends on nothing that renders or runs it",
    ),
    ("measure", &[], "measurement primitives know no backend"),
    ("dataset", &[], "datasets are data"),
    ("target", &[], "target strings parse to typed configs"),
    (
        "progress",
        &[],
        "progress is a trait the command layer draws",
    ),
    ("error", &[], "errors are leaves"),
    ("units", &[], "number parsers are leaves"),
    ("pause", &[], "the test pause points are a leaf"),
    (
        "interrupt",
        &[],
        "the signal flag is a leaf: installed and checked wherever work is cleaned up",
    ),
    (
        "process",
        &[],
        "a process stamp is a leaf: records and manifests name the process that wrote them",
    ),
    (
        "limits",
        &[],
        "the limits a user set on the process are a leaf: an error names the one a failure met",
    ),
];

/// Leaves any layer may use.
const EVERYONE_MAY_USE: &[&str] = &["error", "units", "pause", "interrupt", "process", "limits"];

/// Only these may name a Target variant: everything else asks the store.
const TARGET_VARIANT_OWNERS: &[&str] = &["store", "target", "command"];

/// One token of Rust source, with its line.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of `text` that matter for paths: identifiers, `::` and
/// punctuation; comments, string, byte, raw and char literals and
/// lifetimes dropped.
fn tokens(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let newlines = |s: &[char]| s.iter().filter(|&&c| c == '\n').count();
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let (mut depth, start) = (0, i);
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += newlines(&chars[start..i]);
        } else if let Some(end) = raw_string_end(&chars, i) {
            line += newlines(&chars[i..end]);
            i = end;
        } else if c == '"' || (c == 'b' && next == Some('"')) {
            let start = i;
            i += if c == 'b' { 2 } else { 1 };
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            line += newlines(&chars[start..i.min(chars.len())]);
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push((
                Token::Ident(word.trim_start_matches("r#").to_string()),
                line,
            ));
        } else if c == ':' && next == Some(':') {
            out.push((Token::PathSep, line));
            i += 2;
        } else {
            out.push((Token::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// Where a raw string (`r"..."`, `r#"..."#`, `br"..."`) starting at `i`
/// ends, if one starts there.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r')
        || (i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
    {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// A path the code names, with the line it starts on.
struct NamedPath {
    segments: Vec<String>,
    line: usize,
    /// The module the path is written in (for `super::` and `self::`).
    module: Vec<String>,
}

/// Every `use` leaf and every inline `crate::`/`super::`/`self::` path in
/// a file whose module is `module`, inline `mod` blocks followed.
fn named_paths(module: &[String], root_name: &str, toks: &[(Token, usize)]) -> Vec<NamedPath> {
    let mut paths = Vec::new();
    // (module path, brace depth at which its block closes)
    let mut modules: Vec<(Vec<String>, usize)> = vec![(module.to_vec(), usize::MAX)];
    let mut depth = 0usize;
    let mut i = 0;
    let ident = |i: usize| match toks.get(i) {
        Some((Token::Ident(w), _)) => Some(w.as_str()),
        _ => None,
    };
    while i < toks.len() {
        let current = modules.last().unwrap().0.clone();
        match &toks[i].0 {
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                if modules.last().unwrap().1 == depth {
                    modules.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Ident(w)
                if w == "mod" && toks.get(i + 2).map(|t| &t.0) == Some(&Token::Punct('{')) =>
            {
                let mut inner = current.clone();
                inner.push(ident(i + 1).unwrap_or("?").to_string());
                depth += 1;
                modules.push((inner, depth));
                i += 3;
            }
            Token::Ident(w) if w == "use" => {
                let line = toks[i].1;
                let mut leaves = Vec::new();
                i = use_tree(toks, i + 1, &[], &mut leaves);
                for segments in leaves {
                    paths.push(NamedPath {
                        segments,
                        line,
                        module: current.clone(),
                    });
                }
            }
            Token::Ident(w)
                if (w == "crate" || w == "super" || w == "self" || w == root_name)
                    && toks.get(i + 1).map(|t| &t.0) == Some(&Token::PathSep)
                    // `a::crate` is not a path root; `$crate` is a macro's.
                    && !matches!(toks.get(i.wrapping_sub(1)).map(|t| &t.0), Some(Token::PathSep) | Some(Token::Punct('$'))) =>
            {
                let line = toks[i].1;
                let mut segments = vec![w.clone()];
                let mut j = i + 1;
                while toks.get(j).map(|t| &t.0) == Some(&Token::PathSep) {
                    match toks.get(j + 1) {
                        Some((Token::Ident(s), _)) => segments.push(s.clone()),
                        Some((Token::Punct(c), _)) => segments.push(c.to_string()),
                        _ => {}
                    }
                    j += 2;
                }
                paths.push(NamedPath {
                    segments,
                    line,
                    module: current.clone(),
                });
                i = j;
            }
            _ => i += 1,
        }
    }
    paths
}

/// Parses a use tree from token `i` (after `use` or inside a group) into
/// its leaves, each prefixed with `prefix`; returns the index after it
/// (after the `;` for a whole `use`).
fn use_tree(
    toks: &[(Token, usize)],
    mut i: usize,
    prefix: &[String],
    leaves: &mut Vec<Vec<String>>,
) -> usize {
    let depth_at_start = prefix.len();
    let mut path = prefix.to_vec();
    while i < toks.len() {
        match &toks[i].0 {
            Token::Ident(w) if w == "as" => {
                i += 2; // the alias
            }
            Token::Ident(w) => {
                path.push(w.clone());
                i += 1;
            }
            Token::PathSep => i += 1,
            Token::Punct('*') => {
                path.push("*".into());
                i += 1;
            }
            Token::Punct('{') => {
                // A group: each member is a tree under `path`.
                path.push("{".into());
                leaves.push(path.clone());
                path.pop();
                i += 1;
                loop {
                    let inner = path.clone();
                    i = use_tree(toks, i, &inner, leaves);
                    match toks.get(i).map(|t| &t.0) {
                        Some(Token::Punct(',')) => i += 1,
                        _ => break,
                    }
                    if toks.get(i).map(|t| &t.0) == Some(&Token::Punct('}')) {
                        break;
                    }
                }
                i += 1; // the closing brace
                path.truncate(depth_at_start);
                path.push("{}".into()); // a group was the whole tree
            }
            Token::Punct(',') | Token::Punct('}') => {
                if path.len() > depth_at_start && path.last().map(String::as_str) != Some("{}") {
                    leaves.push(path.clone());
                }
                return i;
            }
            Token::Punct(';') => {
                if path.len() > depth_at_start && path.last().map(String::as_str) != Some("{}") {
                    leaves.push(path.clone());
                }
                return i + 1;
            }
            Token::Punct(_) => i += 1,
        }
    }
    i
}

/// The module path a path resolves to, when it starts at this crate's root
/// or climbs to it (`None`: an outside crate, or a name in scope).
fn resolve(path: &NamedPath, root_name: &str) -> Option<Vec<String>> {
    let mut segments = path.segments.iter().peekable();
    let mut base: Vec<String> = match segments.peek()?.as_str() {
        "crate" => Vec::new(),
        s if s == root_name => Vec::new(),
        "self" => path.module.clone(),
        "super" => path.module.clone(),
        _ => return None,
    };
    let first = segments.next()?.clone();
    if first == "super" {
        base.pop();
        while segments.peek().map(|s| s.as_str()) == Some("super") {
            segments.next();
            base.pop();
        }
    }
    base.extend(segments.cloned());
    Some(base)
}

/// A file's module path (`suite/aging/mod.rs` -> [suite, aging]).
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    parts
}

/// The layer of a file: its first folder under src/, or its own name.
fn layer(relative: &Path) -> String {
    let first = relative
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// Every violation in one file's text: "src/FILE:LINE: `PATH` (RULE)".
fn violations(relative: &Path, text: &str) -> Vec<String> {
    let layer = layer(relative);
    let (root_name, module) = if layer == "main" {
        ("blobbench", Vec::new())
    } else {
        ("crate", module_of(relative))
    };
    let (allowed, why) = ALLOWED
        .iter()
        .find(|(l, _, _)| *l == layer)
        .map(|(_, a, w)| (*a, *w))
        .unwrap_or((
            &[],
            "a layer not in the allow-list may use only error, units and pause",
        ));
    let owner = TARGET_VARIANT_OWNERS.contains(&layer.as_str());
    // One line per place and rule: `use crate::store::{a, b}` is one
    // reach into store/, not two.
    let mut found: Vec<(usize, String, String)> = Vec::new();
    let mut add = |line: usize, key: String, message: String| {
        if !found.iter().any(|(l, k, _)| *l == line && *k == key) {
            found.push((line, key, message));
        }
    };
    let toks = tokens(text);
    for path in named_paths(&module, root_name, &toks) {
        let written = path.segments.join("::");
        let place = format!("src/{}:{}", relative.display(), path.line);
        if let Some(resolved) = resolve(&path, root_name)
            && let Some(reached) = resolved.first()
        {
            let inside = *reached == layer;
            if !inside
                && reached != "{"
                && reached != "*"
                && !allowed.contains(&reached.as_str())
                && !EVERYONE_MAY_USE.contains(&reached.as_str())
            {
                add(
                    path.line,
                    reached.clone(),
                    format!(
                        "{place}: `{written}` ({layer} -> {reached}: {layer} may use only {}; {why})",
                        list(allowed)
                    ),
                );
            }
        }
        if !owner {
            let names_variant = path.segments.windows(2).any(|w| {
                w[0] == "Target"
                    && (w[1].starts_with(|c: char| c.is_uppercase()) || w[1] == "*" || w[1] == "{")
            });
            if names_variant {
                add(
                    path.line,
                    "Target".into(),
                    format!(
                        "{place}: `{written}` (only store/, target.rs and command/ name Target variants; ask the store)"
                    ),
                );
            }
        }
    }
    if !owner {
        for (line, message) in inline_variants(relative, &toks) {
            add(line, "Target".into(), message);
        }
    }
    found.into_iter().map(|(_, _, message)| message).collect()
}

/// `Target::Variant` written as a bare path (a `match` arm, a constructor)
/// outside the layers that own the variants.
fn inline_variants(relative: &Path, toks: &[(Token, usize)]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for w in toks.windows(3) {
        if let (Token::Ident(t), Token::PathSep, Token::Ident(v)) = (&w[0].0, &w[1].0, &w[2].0)
            && t == "Target"
            && v.starts_with(|c: char| c.is_uppercase())
        {
            let place = format!("src/{}:{}", relative.display(), w[0].1);
            found.push((
                    w[0].1,
                    format!(
                        "{place}: `Target::{v}` (only store/, target.rs and command/ name Target variants; ask the store)"
                    ),
                ));
        }
    }
    found
}

fn list(allowed: &[&str]) -> String {
    let mut all: Vec<&str> = allowed.to_vec();
    all.extend(EVERYONE_MAY_USE);
    all.join(", ")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every violation in the tree under `src`, one line per place.
fn check_tree(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut all = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read");
        let relative = path.strip_prefix(src).expect("under src");
        for v in violations(relative, &text) {
            if !all.contains(&v) {
                all.push(v);
            }
        }
    }
    all
}

#[test]
fn imports_flow_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let all = check_tree(&src);
    assert!(
        all.is_empty(),
        "{} import(s) against the one-way rule:\n{}",
        all.len(),
        all.join("\n")
    );
}

#[test]
fn every_layer_of_the_tree_is_in_the_allow_list() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let layer = name.trim_end_matches(".rs");
        assert!(
            ALLOWED.iter().any(|(l, _, _)| *l == layer),
            "src/{name} is a layer the allow-list does not name: add it to ALLOWED in tests/fast/architecture.rs"
        );
    }
}

/// (file, line to plant, the text the violation must name)
const PLANTED: &[(&str, &str, &str)] = &[
    // 1. A plain import.
    (
        "suite/quick.rs",
        "use crate::command::progress::Bar;",
        "(suite -> command:",
    ),
    // 2. A grouped import.
    (
        "suite/sweep/mod.rs",
        "use crate::{measure, report};",
        "(suite -> report:",
    ),
    // 3. A nested group, over several lines.
    (
        "report/view/mod.rs",
        "use crate::{\n    result::run::RunResult,\n    store::{Store, open},\n};",
        "(report -> store:",
    ),
    // 4. A path written inline in code.
    (
        "measure/cache.rs",
        "fn planted() { let _ = crate::store::open; }",
        "(measure -> store:",
    ),
    // 5. super:: climbing out of a layer from a nested file.
    (
        "workload/run.rs",
        "use super::super::suite::quick;",
        "(workload -> suite:",
    ),
    // 6. super:: from a layer's mod.rs.
    (
        "result/mod.rs",
        "pub use super::report::text;",
        "(result -> report:",
    ),
    // 7. super:: from an inline module.
    (
        "measure/mod.rs",
        "mod planted { use super::super::store::Store; }",
        "(measure -> store:",
    ),
    // 8. The S3 variant, in a match arm.
    (
        "report/compare.rs",
        "fn planted(t: &T) -> bool { matches!(t, Target::S3 { .. }) }",
        "`Target::S3`",
    ),
    // 9. A glob of the variants.
    (
        "workload/mod.rs",
        "use crate::target::Target::*;",
        "Target variants",
    ),
    // 10. main.rs reaching past the command layer.
    ("main.rs", "use blobbench::store::open;", "(main -> store:"),
];

#[test]
fn ten_planted_forbidden_imports_are_each_caught_with_file_line_and_rule() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&src, copy.path());
    let mut expected = Vec::new();
    for (file, planted, rule) in PLANTED {
        let path = copy.path().join(file);
        let mut text = std::fs::read_to_string(&path).unwrap();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let line = text.lines().count() + 1;
        text.push_str(planted);
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        expected.push((format!("src/{file}:{line}: "), *rule));
    }
    let found = check_tree(copy.path());
    for (place, rule) in &expected {
        assert!(
            found
                .iter()
                .any(|v| v.starts_with(place.as_str()) && v.contains(rule)),
            "the planted import at {place} was not caught with {rule:?}; found:\n{}",
            found.join("\n")
        );
    }
    assert_eq!(
        found.len(),
        PLANTED.len(),
        "one violation per plant:\n{}",
        found.join("\n")
    );
}

#[test]
fn comments_strings_and_allowed_paths_are_not_violations() {
    let fine = r##"
/// like crate::store does
use crate::measure::stats; // crate::command
const S: &str = "crate::report::x";
const R: &str = r#"use crate::cli;"#;
fn f<'a>(c: char) -> bool { c == '{' || c == '\'' }
pub(super) fn g() { super::common::h(); }
"##;
    assert_eq!(
        violations(Path::new("workload/run.rs"), fine),
        Vec::<String>::new()
    );
    // `crate::stores` is another module, not `crate::store`.
    let other = "use crate::stores::x;";
    assert_eq!(violations(Path::new("measure/x.rs"), other).len(), 1);
    assert!(violations(Path::new("measure/x.rs"), other)[0].contains("measure -> stores"));
    // The command layer may use anything, and name variants.
    let edge = "use crate::{report, suite::quick}; match t { Target::Sqlite { .. } => 1, _ => 0 }";
    assert!(violations(Path::new("command/quick.rs"), edge).is_empty());
}

/// Where a suite reads `Instant::now` itself, and why each is no
/// operation's time: (file under src/, how many reads, why). No suite times
/// an operation itself: an operation's latency goes through the one timing
/// path (`workload::timer::OpTimer`, as `workload::run` times run's
/// operations); a deadline, a budget or the wall time of a whole step is
/// not an operation.
const SUITE_CLOCKS: &[(&str, usize, &str)] = &[
    (
        "suite/rounds.rs",
        2,
        "a case's wall time, for the progress bar's estimate of the time left; when the measured rounds began, for --max-time",
    ),
    (
        "suite/lob.rs",
        2,
        "a server restart's --restart-timeout deadline; when a cluster's change was seen, from the suite's start",
    ),
    ("suite/sweep/mod.rs", 1, "the sweep's --time-budget"),
    (
        "suite/scaling.rs",
        1,
        "when a point's measured rounds began, for --max-time (the mixed run times every operation itself)",
    ),
    (
        "suite/http.rs",
        1,
        "when a level's measured rounds began, for --max-time (the load times every request itself)",
    ),
    (
        "suite/reproduce/mod.rs",
        1,
        "reproduce's --budget: the time left, shown with each experiment, and each experiment's wall time",
    ),
    (
        "suite/replicate/mod.rs",
        3,
        "when a round failed, from the suite's start; Litestream's start and first sync, a step of another process; when the measured rounds began, for --max-time",
    ),
    (
        "suite/replicate/litestream.rs",
        7,
        "bounds on waits for Litestream, and how long its sync and restore took: steps of another process, not store operations",
    ),
];

/// The lines of `text` that read `Instant::now` (comments and strings left out).
fn clock_reads(text: &str) -> Vec<usize> {
    tokens(text)
        .windows(3)
        .filter_map(|w| match (&w[0].0, &w[1].0, &w[2].0) {
            (Token::Ident(clock), Token::PathSep, Token::Ident(now))
                if clock == "Instant" && now == "now" =>
            {
                Some(w[0].1)
            }
            _ => None,
        })
        .collect()
}

/// Every file under `src/suite` whose reads of `Instant::now` are not the
/// ones SUITE_CLOCKS allows, one line each.
fn suite_clock_violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&src.join("suite"), &mut files);
    files.sort();
    let mut found = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(src).expect("under src");
        let name = relative.to_string_lossy().replace('\\', "/");
        let lines = clock_reads(&std::fs::read_to_string(path).expect("read"));
        let allowed = SUITE_CLOCKS
            .iter()
            .find(|(file, _, _)| *file == name)
            .map_or(0, |(_, count, _)| *count);
        if lines.len() != allowed {
            found.push(format!(
                "src/{name}:{lines:?}: {} read(s) of Instant::now where SUITE_CLOCKS allows {allowed} (no suite times an operation itself: time it with workload::timer::OpTimer; a deadline or a whole step's wall time goes into SUITE_CLOCKS with why)",
                lines.len()
            ));
        }
    }
    for (file, _, _) in SUITE_CLOCKS {
        assert!(
            src.join(file).exists(),
            "SUITE_CLOCKS names src/{file}, which is gone"
        );
    }
    found
}

#[test]
fn no_suite_times_an_operation_itself() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = suite_clock_violations(&src);
    assert!(found.is_empty(), "{}", found.join("\n"));
    // A clock planted in the aging suite's reads is caught, naming the file.
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&src, copy.path());
    let planted = copy.path().join("suite/aging/measure.rs");
    let mut text = std::fs::read_to_string(&planted).unwrap();
    text.push_str("fn planted() -> std::time::Instant { std::time::Instant::now() }\n");
    std::fs::write(&planted, text).unwrap();
    let found = suite_clock_violations(copy.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("src/suite/aging/measure.rs:["),
        "{found:?}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
