//! The one-way rule (ARCHITECTURE.md), checked on the source text: a
//! forbidden import fails this test, naming the file, the line and the rule.

use std::path::{Path, PathBuf};

/// A layer may not name these modules: (layer, forbidden paths, why).
const RULES: &[(&str, &[&str], &str)] = &[
    (
        "suite",
        &["crate::cli", "crate::command", "crate::report"],
        "suites plan and measure: typed options in, a typed result out",
    ),
    (
        "report",
        &[
            "crate::suite",
            "crate::store",
            "crate::workload::run",
            "crate::workload::execute",
            "crate::command",
            "crate::cli",
        ],
        "reports render results only, never live state",
    ),
    (
        "result",
        &[
            "crate::report",
            "crate::command",
            "crate::cli",
            "crate::suite",
        ],
        "the result contract depends on nothing that renders or runs it",
    ),
    (
        "measure",
        &[
            "crate::store",
            "crate::suite",
            "crate::command",
            "crate::report",
        ],
        "measurement primitives know no backend",
    ),
    (
        "workload",
        &[
            "crate::suite",
            "crate::command",
            "crate::cli",
            "crate::report",
        ],
        "the executor runs plans; it does not know who asked",
    ),
    (
        "store",
        &[
            "crate::suite",
            "crate::command",
            "crate::cli",
            "crate::report",
            "crate::workload",
        ],
        "backends sit at the bottom",
    ),
    (
        "http",
        &["crate::suite", "crate::command", "crate::cli"],
        "serve and load are library code under the command layer",
    ),
];

/// Only these may name a Target variant: everything else asks the store.
const TARGET_VARIANT_OWNERS: &[&str] = &["store", "target.rs", "command"];
const TARGET_VARIANTS: &[&str] = &[
    "Target::Sqlite",
    "Target::SqliteExt",
    "Target::Dir",
    "Target::Tree",
    "Target::Postgres",
    "Target::Mysql",
    "Target::Memory",
];

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

/// The layer of a file: its first folder under src/, or its own name.
fn layer(relative: &Path) -> String {
    let first = relative
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a line, without a `//` comment (doc comments may name any
/// module).
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// Every violation in one file's text: "file:line: text (rule)".
fn violations(relative: &Path, text: &str) -> Vec<String> {
    let layer = layer(relative);
    let name = relative.display();
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = code(line);
        for (rule_layer, forbidden, why) in RULES {
            if layer != *rule_layer {
                continue;
            }
            for f in *forbidden {
                let hit = code.match_indices(f).any(|(i, _)| {
                    // `crate::store` must not match `crate::stores`.
                    !code[i + f.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                });
                if hit {
                    found.push(format!(
                        "src/{name}:{}: {} ({layer} -> {f}: {why})",
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
        let owner = TARGET_VARIANT_OWNERS
            .iter()
            .any(|o| layer == o.trim_end_matches(".rs"));
        if !owner {
            for v in TARGET_VARIANTS {
                let hit = code.match_indices(v).any(|(i, _)| {
                    !code[i + v.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                });
                if hit {
                    found.push(format!(
                        "src/{name}:{}: {} (only store/, target.rs and command/ name Target variants; ask the store)",
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn imports_flow_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "found only {} files", files.len());
    let mut all = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read");
        let relative = path.strip_prefix(&src).expect("under src");
        all.extend(violations(relative, &text));
    }
    assert!(
        all.is_empty(),
        "{} import(s) against the one-way rule:\n{}",
        all.len(),
        all.join("\n")
    );
}

#[test]
fn the_check_catches_a_forbidden_import() {
    let bad = "use crate::command::progress::bar;\nfn f() { crate::report::view::x(); }\n";
    assert_eq!(violations(Path::new("suite/quick.rs"), bad).len(), 2);
    assert!(violations(Path::new("command/quick.rs"), bad).is_empty());
    let bad = "use crate::suite::sweep::Record;";
    assert_eq!(violations(Path::new("report/view/sweep.rs"), bad).len(), 1);
    let bad = "let ok = crate::store::open(t);";
    assert_eq!(
        violations(Path::new("measure/environment.rs"), bad).len(),
        1
    );
    let bad = "match t { Target::SqliteExt { .. } => 1, _ => 0 }";
    assert_eq!(violations(Path::new("workload/run.rs"), bad).len(), 1);
    assert!(violations(Path::new("store/mod.rs"), bad).is_empty());
    // Comments may name anything; `crate::stores` is not `crate::store`.
    let fine = "/// like crate::store does\nuse crate::stores::x; // crate::store";
    assert!(violations(Path::new("measure/x.rs"), fine).is_empty());
}
