//! The result contract: documents written by earlier versions keep loading
//! into the typed result, lose nothing on the way, and still render; every
//! kind of result (`ResultKind::ALL`) has such a document.

use std::path::{Path, PathBuf};

use blobbench::report::{html, kinds, sections};
use blobbench::result::{self, ResultKind};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "fixtures missing from {}", dir.display());
    files
}

#[test]
fn results_from_version_0_1_load_into_their_typed_tables() {
    for path in fixtures() {
        let doc = result::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Some(kind) = doc.kind() else {
            panic!("{}: unexpected command {}", path.display(), doc.command)
        };
        let expected = doc.tables.kind() == Some(kind);
        assert!(expected, "{}: tables of the wrong kind", path.display());
    }
}

#[test]
fn typed_results_keep_every_field_of_the_json() {
    for path in fixtures() {
        let original: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        let doc = result::load(&path).expect("load");
        let again = serde_json::to_value(&doc).expect("serialize");
        assert_eq!(
            original,
            again,
            "{}: the typed result does not write back what it read",
            path.display()
        );
    }
}

/// Run with BLOBBENCH_BLESS_FIXTURES=1 to rewrite the fixtures after a
/// deliberate change of the format (field order, layout), as snapshot tools
/// "bless" their expectations.
#[test]
fn every_fixture_writes_back_byte_for_byte() {
    let mut differing = Vec::new();
    for path in fixtures() {
        let original = std::fs::read(&path).expect("read");
        let doc = result::load(&path).expect("load");
        let again = doc.json_bytes().expect("serialize");
        if again != original && std::env::var_os("BLOBBENCH_BLESS_FIXTURES").is_some() {
            // A deliberate change of the format: typed_results_keep_every_field_of_the_json
            // still holds the meaning fixed; this writes the new bytes.
            std::fs::write(&path, &again).expect("write the fixture back");
        } else if again != original {
            let (a, b) = (
                String::from_utf8_lossy(&original),
                String::from_utf8_lossy(&again),
            );
            let first = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            let shown = first.map(|n| (n + 1, a.lines().nth(n), b.lines().nth(n)));
            differing.push(format!("{}: first difference {shown:?}", path.display()));
        }
    }
    assert!(
        differing.is_empty(),
        "written back differently:\n{}",
        differing.join("\n")
    );
}

#[test]
fn results_from_version_0_1_render() {
    let docs: Vec<_> = fixtures()
        .iter()
        .map(|p| (result::load(p).expect("load"), p.display().to_string()))
        .collect();
    let sections = sections::sections(&docs);
    // A reproduce result adds a section per experiment it ran.
    let embedded: usize = docs
        .iter()
        .map(|(d, _)| match &d.tables {
            result::Tables::Reproduce(t) => {
                t.experiments.iter().filter(|e| e.result.is_some()).count()
            }
            _ => 0,
        })
        .sum();
    assert_eq!(sections.len(), docs.len() + embedded);
    // `init` results carry no figures; every other kind draws something.
    for s in sections.iter().filter(|s| !s.source.ends_with("init.json")) {
        assert!(
            !s.figures.is_empty() || !s.tables.is_empty(),
            "{}: nothing drawn",
            s.source
        );
    }
}

#[test]
fn every_kind_of_result_has_a_fixture() {
    let commands: Vec<String> = fixtures()
        .iter()
        .map(|p| result::load(p).expect("load").command)
        .collect();
    for kind in ResultKind::ALL {
        assert!(
            commands.iter().any(|c| c == kind.command()),
            "no fixture of `{}` in tests/fixtures/results: run it small with --json there",
            kind.command()
        );
    }
}

#[test]
fn every_fixture_renders_as_html_and_for_the_terminal() {
    for path in fixtures() {
        let doc = result::load(&path).expect("load");
        let kind = doc.kind().expect("a kind this version knows");
        let section = sections::section(&doc, &path.display().to_string(), 0);
        let page = html::render(std::slice::from_ref(&section));
        assert!(
            page.contains(&format!("<section class=\"result\" id=\"{}\">", section.id)),
            "{}: no section in the page",
            path.display()
        );
        // `init` prints its one line as it loads; its result holds nothing
        // more to show.
        if kind != ResultKind::Init {
            let text = (kinds::of(kind).terminal)(&doc);
            assert!(
                !text.trim().is_empty(),
                "{}: no terminal text",
                path.display()
            );
        }
    }
}
