//! End-to-end tests of `report`, `compare` and `advise` on real results.

use crate::common;
use crate::common::small;
use std::path::{Path, PathBuf};

use crate::common::{count, figure, json, ok, run, usage_error};

/// A small real `run` result and a small real `lob` result in `d`.
pub(crate) fn results(d: &Path) -> (PathBuf, PathBuf) {
    ok(d, &["init", "x.db", "--count", "300", "--size", "2k"]);
    ok(
        d,
        &small(&[
            "run", "x.db", "--random", "--repeat", "3", "--json", "run.json",
        ]),
    );
    ok(
        d,
        &[
            "suite",
            "lob",
            "--sizes",
            "1K,5K",
            "--per-size",
            "2",
            "--dir",
            "lob-data",
            "--json",
            "lob.json",
        ],
    );
    (d.join("run.json"), d.join("lob.json"))
}

#[test]
fn report_writes_html_markdown_csv_and_png_from_several_results() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    results(d);
    let out = ok(
        d,
        &[
            "report",
            "run.json",
            "lob.json",
            "-o",
            "r.html",
            "--markdown",
            "r.md",
            "--csv",
            "tables",
            "--png",
            "charts",
        ],
    );
    assert!(out.contains("2 result(s), 4 chart(s)"), "{out}");
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    // Self-contained: no scripts, no external resources.
    for external in ["<script", "src=\"http", "href=\"http", "url(", "@import"] {
        assert!(!html.contains(external), "{external} in the report");
    }
    assert!(html.contains("<nav>"), "two results get a navigation bar");
    let latency = figure(&html, "1-run-latency-read");
    assert_eq!(count(&latency, "class=\"series\""), 1);
    assert!(latency.contains(">time per read<"), "{latency}");
    assert!(html.contains("blobbench run x.db --random --repeat 3 --json run.json"));
    figure(&html, "2-lob-read-1gb");
    // Markdown: the same tables, marked as ours.
    let md = std::fs::read_to_string(d.join("r.md")).unwrap();
    assert!(md.starts_with("<!-- blobbench report -->"));
    assert!(
        md.contains("## suite lob") && md.contains("| system | size |"),
        "{md}"
    );
    // CSV: one file per table with its header.
    let csv = std::fs::read_to_string(d.join("tables/2-lob-lob.csv")).unwrap();
    assert!(csv.starts_with("system,size,write median"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 4, "2 systems x 2 sizes: {csv}");
    assert!(d.join("tables/1-run-runs.csv").exists());
    // PNG: every chart, real images.
    let pngs: Vec<_> = std::fs::read_dir(d.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".png"))
        .collect();
    assert_eq!(pngs.len(), 4, "{pngs:?}");
    for p in &pngs {
        let bytes = std::fs::read(d.join("charts").join(p)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{p}");
        let img = resvg::tiny_skia::Pixmap::decode_png(&bytes).unwrap();
        assert!(img.width() >= 1000, "{p}: drawn at twice the SVG size");
        let dark = img
            .pixels()
            .iter()
            .filter(|px| px.red() < 100 && px.green() < 100)
            .count();
        assert!(
            dark > 500,
            "{p}: text and lines are drawn ({dark} dark pixels)"
        );
    }
    // Running again replaces its own files.
    ok(
        d,
        &[
            "report",
            "lob.json",
            "-o",
            "r.html",
            "--markdown",
            "r.md",
            "--png",
            "charts",
        ],
    );
}

#[test]
fn report_refuses_what_is_not_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    results(d);
    std::fs::write(d.join("notes.html"), "<p>mine</p>").unwrap();
    usage_error(
        d,
        &["report", "run.json", "-o", "notes.html"],
        "refusing to overwrite",
    );
    assert_eq!(
        std::fs::read_to_string(d.join("notes.html")).unwrap(),
        "<p>mine</p>"
    );
    std::fs::write(d.join("notes.md"), "# mine").unwrap();
    usage_error(
        d,
        &["report", "run.json", "--markdown", "notes.md"],
        "notes.md",
    );
    std::fs::create_dir(d.join("photos")).unwrap();
    std::fs::write(d.join("photos/a.jpg"), "jpeg").unwrap();
    usage_error(d, &["report", "run.json", "--png", "photos"], "photos");
    usage_error(d, &["report", "notes.html"], "not JSON");
    std::fs::write(d.join("other.json"), "{\"a\": 1}").unwrap();
    usage_error(d, &["report", "other.json"], "not a blobbench result");
    usage_error(d, &["report", "run.json", "-o", "run.json"], "run.json");
    usage_error(d, &["report", "missing.json"], "missing.json");
    assert!(!d.join("report.html").exists(), "nothing written on error");
}

/// A hand-written lob result: these write samples, and as many reads of
/// 10, 11, 12, ... ns (the same on both sides of a comparison).
pub(crate) fn lob_doc(write_ns: &[f64]) -> serde_json::Value {
    let read_ns: Vec<f64> = (0..write_ns.len()).map(|i| 10.0 + i as f64).collect();
    serde_json::json!({
        "schema": "blobbench-result", "schema_version": 1, "command": "suite lob",
        "argv": ["blobbench", "suite", "lob"], "environment": {"hostname": "laptop"},
        "runs": [],
        "tables": {"lob": [{"system": "sqlite", "size": 1000, "write_ns": write_ns, "read_ns": read_ns}]}
    })
}

#[test]
fn compare_matches_cases_and_judges_changes_against_the_noise() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    results(d);
    // The same command twice on this machine: every case matches.
    ok(
        d,
        &small(&[
            "run",
            "x.db",
            "--random",
            "--repeat",
            "3",
            "--json",
            "run2.json",
        ]),
    );
    let out = ok(d, &["compare", "run.json", "run2.json", "--json", "c.json"]);
    assert!(out.contains("read sqlite"), "{out}");
    assert!(out.contains("1 case(s) compared"), "{out}");
    // Three repetitions a side are too few for a verdict.
    assert!(out.contains("insufficient data (3 vs 3 samples)"), "{out}");
    let c = json(&d.join("c.json"));
    let change = &c["tables"]["compare"]["changes"][0];
    assert_eq!(change["before"]["n"], 3);
    assert_eq!(change["after"]["n"], 3);
    assert_eq!(change["verdict"], "insufficient-data");
    // A comparison is a result too, and draws as one bar per case.
    ok(d, &["report", "c.json", "-o", "c.html"]);
    let html = std::fs::read_to_string(d.join("c.html")).unwrap();
    assert_eq!(count(&figure(&html, "1-compare-speed"), "class=\"bar\""), 1);

    // Written by hand with known samples: a clear slowdown, across hosts.
    // Five samples a side: the fewest at which one case can be significant.
    let write = |name: &str, v: serde_json::Value| {
        std::fs::write(d.join(name), serde_json::to_string(&v).unwrap()).unwrap()
    };
    write("a.json", lob_doc(&[98.0, 99.0, 100.0, 101.0, 102.0]));
    let mut slower = lob_doc(&[148.0, 149.0, 150.0, 151.0, 152.0]);
    slower["environment"]["hostname"] = "server".into();
    write("b.json", slower);
    let out = ok(d, &["compare", "a.json", "b.json", "--json", "ab.json"]);
    assert!(out.contains("differs: host: laptop -> server"), "{out}");
    assert!(out.contains("1.50x slower"), "{out}");
    assert!(out.contains("within noise"), "the unchanged reads: {out}");
    assert!(
        out.contains("1.50x [1."),
        "the ratio with its interval: {out}"
    );
    let ab = json(&d.join("ab.json"));
    let write_case = &ab["tables"]["compare"]["changes"][0];
    assert_eq!(write_case["verdict"], "worse");
    assert_eq!(write_case["method"], "mann-whitney-exact");
    assert!(write_case["p_adjusted"].as_f64().unwrap() < 0.05);
    assert!(write_case["low"].as_f64().unwrap() > 1.05);
    assert_eq!(ab["tables"]["compare"]["method"]["correction"], "holm");
    let failed = run(d, &["compare", "a.json", "b.json", "--fail-on-slower"]);
    assert_eq!(failed.status.code(), Some(1));
    // Above the threshold it is noise by definition.
    let out = ok(
        d,
        &[
            "compare",
            "a.json",
            "b.json",
            "--threshold",
            "60",
            "--fail-on-slower",
        ],
    );
    assert!(out.contains("0 slower"), "{out}");
    // Three samples a side: insufficient data, never a verdict, so
    // --fail-on-slower passes however large the change looks.
    write("a3.json", lob_doc(&[100.0, 101.0, 102.0]));
    write("b3.json", lob_doc(&[150.0, 151.0, 152.0]));
    let out = ok(d, &["compare", "a3.json", "b3.json", "--fail-on-slower"]);
    assert!(out.contains("insufficient data (3 vs 3 samples)"), "{out}");
    assert!(out.contains("0 slower"), "{out}");
    // A different blob count per size: not comparable, naming the field.
    let mut more = lob_doc(&[98.0, 99.0, 100.0, 101.0, 102.0]);
    more["tables"]["per_size"] = 50.into();
    write("more.json", more);
    let out = ok(d, &["compare", "a.json", "more.json", "--json", "ac.json"]);
    assert!(out.contains("2 not comparable"), "{out}");
    let c = json(&d.join("ac.json"));
    let reason = c["tables"]["compare"]["changes"][0]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("blobs per size 0 -> 50"), "{reason}");
    // --case: only the named cases, tested as their own family, so Holm's
    // correction no longer doubles the write's p for the unchanged reads.
    let out = ok(
        d,
        &[
            "compare", "a.json", "b.json", "--case", "write", "--json", "w.json",
        ],
    );
    assert!(out.contains("1.50x slower"), "{out}");
    let w = json(&d.join("w.json"));
    let changes = w["tables"]["compare"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{w}");
    assert!(changes[0]["label"].as_str().unwrap().contains("write"));
    let p = |c: &serde_json::Value| (c["p"].as_f64().unwrap(), c["p_adjusted"].as_f64().unwrap());
    let (alone, alone_adjusted) = p(&changes[0]);
    assert_eq!(alone, alone_adjusted, "a family of one is not corrected");
    let (both, both_adjusted) = p(write_case);
    assert_eq!(both, alone);
    assert!(both_adjusted > both, "two cases: Holm corrects");
    usage_error(
        d,
        &["compare", "a.json", "b.json", "--case", "nosuch"],
        "--case nosuch: no case of both results has such a name; give part of one of: ",
    );
    usage_error(
        d,
        &["compare", "a.json", "run.json"],
        "no case with the same settings",
    );
    usage_error(
        d,
        &["compare", "a.json", "b.json", "--threshold=-3"],
        "--threshold",
    );
}

/// Files of known sizes in nested folders.
pub(crate) fn sample_folder(root: &Path) {
    for (i, size) in std::iter::repeat_n(2000usize, 40)
        .chain(std::iter::repeat_n(50_000, 20))
        .chain(std::iter::repeat_n(400_000, 10))
        .enumerate()
    {
        let dir = root.join(format!("album{}", i % 3));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{i}.jpg")), vec![(i % 251) as u8; size]).unwrap();
    }
}

pub(crate) fn snapshot(root: &Path) -> Vec<(PathBuf, std::time::SystemTime, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.push((e.path(), m.modified().unwrap(), m.len()));
        }
    }
    out.sort();
    out
}

#[test]
fn advise_samples_a_folder_without_touching_it_and_recommends() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    sample_folder(&d.join("photos"));
    let before = snapshot(&d.join("photos"));
    let out = ok(
        d,
        &[
            "advise",
            "--sample-dir",
            "photos",
            "--total",
            "2M",
            "--rounds",
            "2",
            "--page-sizes",
            "4096,16384",
            "--durability",
            "none",
            "--dir",
            "work",
            "--json",
            "a.json",
            "--report",
            "a.html",
        ],
    );
    assert_eq!(
        snapshot(&d.join("photos")),
        before,
        "the sample folder is untouched"
    );
    assert!(out.contains("70 blobs from photos"), "{out}");
    // The reads' transaction, by default a server's: one per read.
    assert!(out.contains("90% reads (a transaction per read)"), "{out}");
    assert!(out.contains("page_size="), "{out}");
    assert!(out.contains("journal_mode="), "{out}");
    // Plain files are weighed: as an alternative, or as the recommendation
    // with what they give up said beside it.
    assert!(
        out.contains("vs plain files, no database:")
            || (out.contains("store the blobs as plain files")
                && out.contains("plain files, no database vs")),
        "{out}"
    );
    let doc = json(&d.join("a.json"));
    let db_reads: Vec<_> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"].as_str().unwrap().starts_with("read db "))
        .collect();
    assert!(!db_reads.is_empty());
    for r in db_reads {
        assert_eq!(r["plan"]["session"]["per_op_transaction"], true, "{r}");
    }
    let a = &doc["tables"]["advise"];
    assert_eq!(a["input"]["reads_per_transaction"], 1);
    let sample = &a["input"]["sample"];
    assert_eq!(sample["blobs"], 70);
    assert_eq!(
        sample["total_bytes"],
        40 * 2000 + 20 * 50_000 + 10 * 400_000
    );
    assert_eq!(sample["median"], 2000);
    assert_eq!(sample["p90"], 400_000);
    // Five quantile bands: cuts inside runs of equal sizes move to the runs'
    // ends, so the bands are the three sizes with their exact shares
    // (40, 20 and 10 of 70 blobs), each measured at its mean.
    let points: Vec<(u64, f64)> = a["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["size"].as_u64().unwrap(), p["share"].as_f64().unwrap()))
        .collect();
    assert_eq!(points.len(), 3, "{points:?}");
    assert_eq!(
        points.iter().map(|p| p.0).collect::<Vec<_>>(),
        [2000, 50_000, 400_000]
    );
    assert!((points[0].1 - 40.0 / 70.0).abs() < 1e-9 && (points[2].1 - 10.0 / 70.0).abs() < 1e-9);
    let bands: Vec<(u64, u64, f64)> = a["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let b = &p["band"];
            let u = |k: &str| b[k].as_u64().unwrap();
            (u("min"), u("max"), b["mean"].as_f64().unwrap())
        })
        .collect();
    assert_eq!(
        bands,
        [
            (2000, 2000, 2000.0),
            (50_000, 50_000, 50_000.0),
            (400_000, 400_000, 400_000.0)
        ]
    );
    assert!(
        out.contains("size bands, each measured at the mean"),
        "{out}"
    );
    assert!(!out.contains("(cap)"), "{out}");
    for p in a["points"].as_array().unwrap() {
        // 2 page sizes + files named in the db + plain files, each read and written every round.
        let layouts = p["layouts"].as_array().unwrap();
        assert_eq!(layouts.len(), 4);
        for l in layouts {
            assert_eq!(l["read_ns"].as_array().unwrap().len(), 2, "{l}");
            assert_eq!(l["write_ns"].as_array().unwrap().len(), 2, "{l}");
            assert!(l["space_bytes"].as_u64().unwrap() > 0);
        }
    }
    let decision = &a["decision"];
    let page = decision["page_size"].as_u64().unwrap();
    assert!([4096, 16384].contains(&page));
    let inside = decision["points_inside"].as_u64().unwrap();
    match decision["placement"].as_str().unwrap() {
        "split by size" => {
            let x = decision["threshold_bytes"].as_f64().unwrap();
            let (lo, hi) = (points[inside as usize - 1].0, points[inside as usize].0);
            assert!(x > lo as f64 && x < hi as f64, "{x} between {lo} and {hi}");
        }
        "all inside the database" => assert_eq!(inside, 3),
        "all as files" | "plain files, no database" => assert_eq!(inside, 0),
        other => panic!("{other}"),
    }
    for alt in decision["speedup_vs"].as_array().unwrap() {
        let s = alt[1]["median"].as_f64().unwrap();
        assert!(s.is_finite() && s > 0.0, "{alt}");
    }
    // durability none: synchronous OFF in both journal modes.
    assert_eq!(a["journal"]["best_synchronous"], "off");
    // 3 sizes x 4 layouts x 2 rounds x (read + write) + 2 journal modes x 2 rounds.
    assert_eq!(doc["runs"].as_array().unwrap().len(), 52);
    let html = std::fs::read_to_string(d.join("a.html")).unwrap();
    let f = figure(&html, "1-advise-layouts");
    assert_eq!(count(&f, "class=\"series\""), 3);
    assert_eq!(count(&f, "<circle"), 9, "3 layouts x 3 sizes");
    assert!(html.contains("Size bands, each measured at the mean"));
    let pages = figure(&html, "1-advise-page-sizes");
    assert_eq!(count(&pages, "class=\"bar\""), 2);
}

#[test]
fn advise_checks_its_input_before_measuring() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("empty")).unwrap();
    usage_error(d, &["advise"], "--sample-dir");
    usage_error(
        d,
        &["advise", "--sample-dir", "empty"],
        "no non-empty files",
    );
    usage_error(d, &["advise", "--sample-dir", "nowhere"], "nowhere");
    usage_error(d, &["advise", "--sizes", "2m..10k"], "2m..10k");
    usage_error(d, &["advise", "--sizes", "10k..2m zipf"], "zipf");
    usage_error(
        d,
        &["advise", "--sizes", "10k", "--reads", "101"],
        "--reads 101",
    );
    usage_error(
        d,
        &["advise", "--sizes", "10k", "--reads-per-transaction", "0"],
        "--reads-per-transaction 0: give a count of 1 or more",
    );
    usage_error(
        d,
        &["advise", "--sizes", "10k", "--durability", "sometimes"],
        "sometimes",
    );
    usage_error(
        d,
        &["advise", "--sizes", "10k", "--page-sizes", "1000"],
        "1000",
    );
    usage_error(
        d,
        &["advise", "--sizes", "10k", "--sample-dir", "empty"],
        "--sample-dir",
    );
    std::fs::write(d.join("empty/a"), "x").unwrap();
    usage_error(
        d,
        &["advise", "--sample-dir", "empty", "--dir", "empty/work"],
        "inside --sample-dir",
    );
    assert!(
        !d.join("empty/work").exists(),
        "nothing created in the sample folder"
    );
}

/// Results written before intervals still print in the terminal: their
/// figures alone (no interval to show, and none invented), no spread column.
#[test]
fn results_without_intervals_print_their_figures_alone() {
    use blobbench::report::terminal;
    use blobbench::result::{self, Tables};
    let load = |name: &str| {
        result::load(std::path::Path::new(&format!(
            "{}/tests/fixtures/results/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        )))
        .expect("load")
    };
    let doc = load("quick");
    let Tables::Quick(t) = &doc.tables else {
        panic!("quick tables")
    };
    let out = terminal::quick::render(&doc, t);
    let r = &t.quick[0];
    assert!(out.contains(&format!("{:.2}x", r.dir_over_db)), "{out}");
    assert!(!out.contains("x ["), "no interval invented: {out}");
    assert!(!out.contains("spread"), "{out}");
    let doc = load("fasterthanfs");
    let Tables::FasterThanFs(t) = &doc.tables else {
        panic!("fasterthanfs tables")
    };
    let out = terminal::fasterthanfs::render(&doc, t);
    assert!(!out.contains("x ["), "{out}");
    // The stored verdicts are printed as they were judged.
    for row in &t.fasterthanfs {
        assert!(out.contains(row.verdict().as_str()), "{out}");
    }
    // internal-external kept its rounds: the interval is recomputed from them.
    let doc = load("internal-external");
    let Tables::InternalExternal(t) = &doc.tables else {
        panic!("internal-external tables")
    };
    let out = terminal::internal_external::render(&doc, t, false);
    assert!(out.contains("x ["), "{out}");
    let doc = load("advise");
    let Tables::Advise(t) = &doc.tables else {
        panic!("advise tables")
    };
    let out = terminal::advise::outcome(&t.advise);
    assert!(out.contains("expected time per operation"), "{out}");
}

/// Every chart of every kind says what its marks are: a figure that draws
/// whiskers names them in its caption (an interval with its rounds, or the
/// percentiles they span), a figure with the noisy mark explains `~`, and a
/// figure of points or bars without whiskers says why it has none. Checked
/// on a report of every result fixture (reproduce's holds every suite's).
#[test]
fn every_chart_says_what_its_whiskers_and_marks_are() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut args = vec!["report".to_string()];
    args.extend(files.iter().map(|p| p.display().to_string()));
    args.extend(["-o".into(), "all.html".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(tmp.path(), &args);
    let html = std::fs::read_to_string(tmp.path().join("all.html")).unwrap();
    let figures: Vec<&str> = html.split("<figure id=\"").skip(1).collect();
    assert!(figures.len() >= 20, "{} figures", figures.len());
    let mut with_whiskers = 0;
    for f in &figures {
        let f = &f[..f.find("</figure>").expect("figure closes")];
        let id = &f[..f.find('"').unwrap()];
        let caption = &f[f.find("<figcaption>").expect("every figure has a caption")..];
        let lower = caption.to_lowercase();
        let marks = count(f, "<circle") + count(f, "class=\"bar\"");
        if f.contains("class=\"whisker\"") {
            with_whiskers += 1;
            assert!(lower.contains("whiskers"), "{id} draws whiskers: {caption}");
            assert!(
                lower.contains("interval") || lower.contains("percentile"),
                "{id}: what the whiskers span: {caption}"
            );
        } else if marks > 0 {
            assert!(
                ["no whiskers", "no interval", "no whisker", "published"]
                    .iter()
                    .any(|w| lower.contains(w)),
                "{id} draws {marks} points or bars without whiskers and does not say why: {caption}"
            );
        }
        if f.contains("class=\"noisy\"") {
            assert!(
                caption.contains("~ marks a noisy figure"),
                "{id}: {caption}"
            );
        }
        if lower.contains("median of ") {
            // "Median of 5 rounds" / "of 100 blobs of each size": a count.
            let after = &lower[lower.find("median of ").unwrap() + 10..];
            assert!(
                after.starts_with(|c: char| c.is_ascii_digit()),
                "{id}: {caption}"
            );
        }
    }
    assert!(with_whiskers >= 8, "{with_whiskers} figures with whiskers");
}

/// A measuring command writes its tables as Markdown and CSV itself
/// (hyperfine's --export-markdown), the same files `report` writes from
/// its result; a destination it may not write is refused before any work.
#[test]
fn measuring_commands_export_the_tables_report_would() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let quick = [
        "quick", "--count", "200", "--size", "2k", "--rounds", "1", "--report", "none",
    ];
    let args: Vec<&str> = quick
        .iter()
        .copied()
        .chain(["--markdown", "q.md", "--csv", "qt"])
        .collect();
    let out = ok(d, &args);
    assert!(
        out.contains("markdown -> q.md") && out.contains("-> qt"),
        "{out}"
    );
    ok(
        d,
        &[
            "report",
            "quick.json",
            "-o",
            "r.html",
            "--markdown",
            "r.md",
            "--csv",
            "rt",
        ],
    );
    let read = |p: &str| std::fs::read_to_string(d.join(p)).unwrap();
    assert_eq!(read("q.md"), read("r.md"));
    assert!(read("q.md").contains("| case |"), "{}", read("q.md"));
    let tables = common::names_in(&d.join("qt"));
    assert_eq!(tables, common::names_in(&d.join("rt")));
    assert!(
        tables.iter().any(|t| t.ends_with("-quick-quick.csv")),
        "{tables:?}"
    );
    for t in tables.iter().filter(|t| t.ends_with(".csv")) {
        assert_eq!(read(&format!("qt/{t}")), read(&format!("rt/{t}")), "{t}");
    }
    // Markdown to standard output, after the table.
    let args: Vec<&str> = quick.iter().copied().chain(["--markdown", "-"]).collect();
    assert!(ok(d, &args).contains("| case |"));
    // A folder of someone else's files is refused before anything is measured.
    std::fs::create_dir(d.join("mine")).unwrap();
    std::fs::write(d.join("mine/notes.txt"), "mine").unwrap();
    let args: Vec<&str> = quick.iter().copied().chain(["--csv", "mine"]).collect();
    usage_error(
        d,
        &args,
        "--csv mine: the folder holds files blobbench did not write",
    );
    let args = [
        "suite",
        "fasterthanfs",
        "--count",
        "200",
        "--size",
        "2k",
        "--rounds",
        "1",
        "--json",
        "f.json",
        "--csv",
        "ft",
    ];
    ok(d, &args);
    assert!(
        common::names_in(&d.join("ft"))
            .iter()
            .any(|t| t.ends_with(".csv")),
        "{:?}",
        common::names_in(&d.join("ft"))
    );
}
