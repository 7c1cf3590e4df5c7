//! The result contract: documents written by earlier versions keep loading
//! into the typed result, lose nothing on the way, and still render.

use std::path::{Path, PathBuf};

use blobbench::result::{self, Tables};

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
        let expected = match doc.command.as_str() {
            "quick" => matches!(doc.tables, Tables::Quick(_)),
            "run" => matches!(doc.tables, Tables::Run(_)),
            "init" => matches!(doc.tables, Tables::Init(_)),
            "suite fasterthanfs" => matches!(doc.tables, Tables::FasterThanFs(_)),
            "suite internal-external" => matches!(doc.tables, Tables::InternalExternal(_)),
            "suite lob" => matches!(doc.tables, Tables::Lob(_)),
            "suite http" => matches!(doc.tables, Tables::Http(_)),
            "load" => matches!(doc.tables, Tables::Load(_)),
            "sweep" => matches!(doc.tables, Tables::Sweep(_)),
            "advise" => matches!(doc.tables, Tables::Advise(_)),
            "compare" => matches!(doc.tables, Tables::Compare(_)),
            "suite aging" => matches!(doc.tables, Tables::Aging(_)),
            other => panic!("{}: unexpected command {other}", path.display()),
        };
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

#[test]
fn results_from_version_0_1_render() {
    let docs: Vec<_> = fixtures()
        .iter()
        .map(|p| (result::load(p).expect("load"), p.display().to_string()))
        .collect();
    let sections = blobbench::report::view::sections(&docs);
    assert_eq!(sections.len(), docs.len());
    // `init` results carry no figures; every other kind draws something.
    for s in sections.iter().filter(|s| !s.source.ends_with("init.json")) {
        assert!(
            !s.figures.is_empty() || !s.tables.is_empty(),
            "{}: nothing drawn",
            s.source
        );
    }
}
