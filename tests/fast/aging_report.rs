//! A `suite aging` result drawn and compared by the binary: a hand-made
//! result (ext4, sqlite and dir, 256K and 1M blobs, ages 0 and 1) renders
//! to HTML with its charts and its verdicts beside the paper's rule, and
//! compares with a slower copy of itself (every read flagged), with itself
//! (nothing changed) and with results of other volumes or fills (not
//! comparable, naming the field).

use std::path::Path;

use crate::common::{count, ok, usage_error};
use serde_json::{Value, json};

/// Read MB/s of each layout and size at age 0; age 1 reads 80% of it.
fn base_rate(layout: &str, size: u64) -> f64 {
    match (layout, size) {
        ("sqlite", 262_144) => 180.0,
        ("dir", 262_144) => 120.0,
        ("sqlite", _) => 150.0,
        _ => 300.0,
    }
}

/// A point at `age` with `rounds` read rounds around `rate`.
fn point(age: f64, rate: f64, rounds: usize, size: u64) -> Value {
    let wiggle = [1.0, 1.01, 0.99, 1.02, 0.98, 1.005, 0.995, 1.015];
    let reads: Vec<f64> = (0..rounds).map(|i| rate * wiggle[i % 8]).collect();
    let blobs = 100u64;
    json!({
        "target_age": age, "age": age + 0.013, "blobs": blobs, "stored_bytes": blobs * size,
        "read_mb_s": reads, "blobs_read": blobs * rounds as u64,
        "writes": {"blobs": blobs, "bytes": blobs * size, "ns": 900_000_000u64, "sync_ns": 40_000_000u64},
        "fragments": {"blobs": blobs, "mean": 1.0 + 2.5 * age, "p50": 1, "p90": 1 + 5 * age as u64,
            "max": 2 + 9 * age as u64, "fragmented_share": 0.04 + 0.5 * age},
        "space": {"store_bytes": blobs * size + 3 * 4096, "freelist_bytes": 0,
            "volume_used_bytes": 33_000_000u64, "volume_free_bytes": 30_000_000u64,
            "free_space": {"extents": 40 + 200 * age as u64, "mean_extent_bytes": 750_000u64 / (1 + 4 * age as u64),
                "share_in_1mib_or_more": 0.6, "tool": "e2freefrag"}}
    })
}

/// The whole result document; reads scaled by `scale`, `rounds` a point.
fn aging_doc(scale: f64, rounds: usize, volume_size: u64, fill: f64) -> Value {
    let mut series = Vec::new();
    for size in [262_144u64, 1_048_576] {
        for layout in ["sqlite", "dir"] {
            let rate = base_rate(layout, size) * scale;
            series.push(json!({
                "fs": "ext4", "layout": layout, "sizes": {"min": size, "max": size},
                "fill_target": fill, "fill_reached": fill - 0.004,
                "settings": if layout == "sqlite" { "page_size=4096, journal_mode=wal, synchronous=full, auto_vacuum=none" } else { "one file per blob" },
                "points": [point(0.0, rate, rounds, size), point(1.0, rate * 0.8, rounds, size)],
            }));
        }
    }
    json!({
        "schema": "blobbench-result", "schema_version": 1, "command": "suite aging",
        "argv": ["blobbench", "suite", "aging", "--fs", "ext4", "--volume-size", "64MiB", "--ages", "1"],
        "started_at": "2026-11-22T23:00:00Z", "finished_at": "2026-11-22T23:05:00Z",
        "environment": {"hostname": "vm", "cpu_model": "AMD EPYC", "logical_cpus": 2},
        "runs": [],
        "tables": {
            "volumes": [{"fs": "ext4", "exact": true, "size_bytes": volume_size, "fs_bytes": 63_000_000u64,
                "how": "mkfs.ext4 -q on a 64 MiB image, losetup --direct-io=on, mount -o noatime",
                "mkfs_version": "mke2fs 1.47.0", "mount_options": "rw,noatime"}],
            "ages": [1.0], "series": series, "writes": "each blob synced (fsync; sqlite synchronous=full)",
            "cold": "posix_fadvise DONTNEED and drop_caches before each round", "read_rounds": rounds,
            "skipped": [{"fs": "xfs", "layout": "*", "reason": "not asked"}]
        }
    })
}

fn write(dir: &Path, name: &str, doc: &Value) {
    std::fs::write(dir.join(name), serde_json::to_string_pretty(doc).unwrap()).unwrap();
}

const MIB64: u64 = 64 << 20;

#[test]
fn an_aging_result_renders_with_its_charts_and_the_paper_beside_it() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.json", &aging_doc(1.0, 5, MIB64, 0.5));
    ok(
        d.path(),
        &["report", "a.json", "-o", "out.html", "--markdown", "out.md"],
    );
    let html = std::fs::read_to_string(d.path().join("out.html")).unwrap();
    assert!(html.contains("suite aging: blobs in SQLite and in files as they age"));
    // Two charts per filesystem, fill and size: reads and fragments.
    assert_eq!(count(&html, "<svg"), 4, "charts drawn");
    assert!(html.contains("read MB/s vs storage age: ext4, 256KiB, 50% full"));
    assert!(html.contains("fragments per blob vs storage age: ext4, 1MiB"));
    // The verdicts and the paper's rule.
    assert!(
        html.contains("ext4, 256KiB, 50% full, age 0: sqlite faster than dir: 1.50x"),
        "{html}"
    );
    assert!(html.contains("objects smaller than 256K are best stored in a database"));
    // 256K is a size the paper measured: it said database, and so did this.
    assert!(html.contains("agrees"), "{html}");
    let md = std::fs::read_to_string(d.path().join("out.md")).unwrap();
    assert!(md.contains("| dir | 1.01 |"), "a row per point: {md}");
}

#[test]
fn a_slower_aging_result_is_flagged_and_the_same_one_is_not() {
    let d = tempfile::tempdir().unwrap();
    // Eight rounds a side: eight read cases can reach significance.
    write(d.path(), "a.json", &aging_doc(1.0, 8, MIB64, 0.5));
    write(d.path(), "b.json", &aging_doc(0.7, 8, MIB64, 0.5));
    let out = ok(d.path(), &["compare", "a.json", "b.json"]);
    let reads: Vec<&str> = out.lines().filter(|l| l.contains("read MB/s")).collect();
    assert_eq!(reads.len(), 8, "a read case per series and age: {out}");
    for line in &reads {
        assert!(line.contains("1.43x slower"), "{line}");
    }
    // Fragments are one value a side: shown, not tested.
    let frags = out
        .lines()
        .filter(|l| l.contains("fragments per blob"))
        .count();
    assert_eq!(frags, 8, "{out}");
    assert!(out.contains("one value a side: not tested"), "{out}");
    assert!(!out.contains("need more rounds"), "{out}");
    let same = ok(d.path(), &["compare", "a.json", "a.json"]);
    assert!(
        same.contains("16 case(s) compared: 0 faster, 0 slower, 8 within noise"),
        "{same}"
    );
}

#[test]
fn aging_results_of_other_volumes_or_fills_are_not_comparable() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.json", &aging_doc(1.0, 5, MIB64, 0.5));
    write(d.path(), "big.json", &aging_doc(1.0, 5, 1 << 30, 0.5));
    write(d.path(), "full.json", &aging_doc(1.0, 5, MIB64, 0.9));
    let out = ok(d.path(), &["compare", "a.json", "big.json"]);
    assert!(
        out.contains("not comparable: volume size: ext4 image of 67108864 bytes -> ext4 image of 1073741824 bytes"),
        "{out}"
    );
    assert!(
        out.contains("16 case(s) compared: 0 faster, 0 slower, 0 within noise, 0 insufficient data, 16 not comparable"),
        "{out}"
    );
    // Every case is keyed by its fill: none in common, a one-line error.
    usage_error(
        d.path(),
        &["compare", "a.json", "full.json"],
        "not comparable: fills 50% -> 90%",
    );
}

#[test]
fn the_terminal_report_reads_at_120_columns() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.json", &aging_doc(1.0, 5, MIB64, 0.5));
    let doc = blobbench::result::load(&d.path().join("a.json")).expect("loads");
    let blobbench::result::Tables::Aging(t) = &doc.tables else {
        panic!("aging tables")
    };
    let out = blobbench::report::terminal::aging::render(t);
    println!("{out}");
    // Every table row (and heading) fits; only the prose lines wrap.
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("sqlite") || l.starts_with("dir") || l.starts_with("layout"))
        .collect();
    assert_eq!(rows.len(), 4 * 2 + 2, "{out}");
    for line in rows {
        assert!(line.chars().count() <= 120, "wider than 120: {line}");
    }
    assert!(
        out.contains("skipped: every layout on xfs: not asked"),
        "{out}"
    );
}

#[test]
fn the_stored_aging_fixture_renders_its_vacuum_point() {
    let d = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/aging.json");
    let fixture = fixture.to_str().unwrap();
    ok(d.path(), &["report", fixture, "-o", "f.html"]);
    let html = std::fs::read_to_string(d.path().join("f.html")).unwrap();
    assert_eq!(count(&html, "<svg"), 4);
    // A row after VACUUM per size, and its dashed line in each chart.
    assert_eq!(
        count(&html, "<td class=\"t\">sqlite after VACUUM</td>"),
        2,
        "{html}"
    );
    assert!(count(&html, "sqlite after VACUUM") >= 2 + 4, "{html}");
    assert!(
        html.contains("sqlite after VACUUM 171 [168-174], 94% MB/s"),
        "{html}"
    );
}
