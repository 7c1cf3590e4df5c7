//! `blobbench suite aging` end to end, at small scale: 64 MiB loop-mounted
//! ext4 volumes (root: CI runs as root), ages 0 and 1. Occupancy lands
//! within 2% of the target, fragments are counted for every blob, every
//! read is checked, and everything mounted is unmounted and removed: after
//! a run, after Ctrl-C, and (the test's own guard) when a test fails.
//! As root the suite drops the whole machine's page cache before each
//! read pass (drop_caches, as it does on real volumes): other tests run
//! slower for it, nothing more.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::{Held, bin, json, output};

pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no failure modes.
    unsafe { libc::geteuid() == 0 }
}

pub(crate) fn require_root() {
    assert!(
        is_root(),
        "these tests make loop-mounted volumes and need root: run scripts/test.sh as root (CI does)"
    );
}

/// Mount points of blobbench's aging volumes under `work`.
pub(crate) fn mounts_under(work: &Path) -> Vec<String> {
    let work = work.canonicalize().unwrap_or(work.to_path_buf());
    std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .filter(|m| m.starts_with(work.to_str().unwrap()))
        .collect()
}

/// What the suite left in `work`, other than the result files.
pub(crate) fn leftovers(work: &Path) -> Vec<String> {
    std::fs::read_dir(work)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("blobbench-aging"))
        .collect()
}

/// The test's work folder; on drop (a failed assertion too) anything
/// still mounted under it is unmounted, so a failing test leaves no mount.
pub(crate) struct Work {
    pub(crate) dir: tempfile::TempDir,
}

impl Work {
    pub(crate) fn new() -> Work {
        Work {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        for m in mounts_under(self.dir.path()) {
            let _ = std::process::Command::new("umount").arg(&m).status();
        }
    }
}

pub(crate) fn small(work: &Path, json_path: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "suite",
        "aging",
        "--fs",
        "ext4",
        "--volume-size",
        "64MiB",
        "--fill",
        "50%",
        "--sizes",
        "256KiB",
        "--read-rounds",
        "2",
        "--work",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(work.to_str().unwrap().into());
    args.push("--json".into());
    args.push(json_path.to_str().unwrap().into());
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_small_volume_ages_with_exact_occupancy_counted_fragments_and_checked_reads() {
    require_root();
    let work = Work::new();
    let out_json = work.path().join("aging.json");
    let args = small(
        work.path(),
        &out_json,
        &["--layouts", "sqlite,dir", "--ages", "1"],
    );
    let out = output(bin().current_dir(work.path()).args(&args));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(mounts_under(work.path()).is_empty(), "still mounted");
    assert!(
        leftovers(work.path()).is_empty(),
        "{:?}",
        leftovers(work.path())
    );
    let doc = json(&out_json);
    assert_eq!(doc["command"], "suite aging");
    let t = &doc["tables"];
    assert_eq!(t["volumes"][0]["fs"], "ext4");
    assert_eq!(t["volumes"][0]["exact"], true);
    let series = t["series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "{t}");
    // The two layouts ran side by side, their read rounds interleaved.
    assert_eq!(t["pairing"], "paired", "{t}");
    for s in series {
        let reached = s["fill_reached"].as_f64().unwrap();
        assert!((reached - 0.5).abs() <= 0.02, "occupancy {reached} in {s}");
        let points = s["points"].as_array().unwrap();
        let aged: Vec<&serde_json::Value> =
            points.iter().filter(|p| p["vacuumed"] != true).collect();
        assert_eq!(aged.len(), 2, "ages 0 and 1 in {s}");
        assert!(aged[1]["age"].as_f64().unwrap() >= 1.0, "{s}");
        for p in points {
            let blobs = p["blobs"].as_u64().unwrap();
            assert!(
                blobs >= 50,
                "64 MiB at 50% holds about 120 blobs of 256 KiB: {p}"
            );
            assert_eq!(p["blobs_read"].as_u64().unwrap(), blobs, "{p}");
            assert_eq!(p["read_mb_s"].as_array().unwrap().len(), 2, "{p}");
            let f = &p["fragments"];
            assert!(f["unavailable"].is_null(), "{f}");
            assert_eq!(f["blobs"].as_u64().unwrap(), blobs, "{f}");
            assert!(f["mean"].as_f64().unwrap() >= 1.0, "{f}");
            assert!(
                p["space"]["free_space"]["extents"].as_u64().unwrap() >= 1,
                "{p}"
            );
        }
    }
    let sqlite = series.iter().find(|s| s["layout"] == "sqlite").unwrap();
    let last = sqlite["points"].as_array().unwrap().last().unwrap();
    assert_eq!(
        last["vacuumed"], true,
        "a VACUUM point ends the sqlite series"
    );
    assert!(
        sqlite["points"][0]["fragments"]["page_runs_mean"]
            .as_f64()
            .is_some()
    );
    assert!(
        stdout.contains("sqlite") && stdout.contains("dir"),
        "{stdout}"
    );
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(" paired ("),
        "ratios labelled paired: {stdout}"
    );
}

/// Ctrl-C while a volume is mounted and being aged: the suite is held
/// just after it replaced its first blob (so a volume is certainly
/// mounted), gets SIGINT there, and once let go unwinds, unmounting and
/// removing everything, and exits 130.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn ctrl_c_unmounts_and_removes_every_volume() {
    require_root();
    let work = Work::new();
    let out_json = work.path().join("aging.json");
    let args = small(
        work.path(),
        &out_json,
        &["--layouts", "dir,sqlite", "--ages", "1"],
    );
    let mut command = bin();
    command
        .current_dir(work.path())
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let held = Held::start(command, "aging-replaced@1");
    assert_eq!(
        mounts_under(work.path()).len(),
        2,
        "both layouts' volumes are mounted: they age side by side"
    );
    held.signal(libc::SIGINT);
    let out = held.release_output();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(
        mounts_under(work.path()).is_empty(),
        "still mounted after Ctrl-C"
    );
    assert!(
        leftovers(work.path()).is_empty(),
        "{:?}",
        leftovers(work.path())
    );
    assert!(!out_json.exists(), "no result from an interrupted run");
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_folder_with_a_stated_capacity_ages_without_root_and_says_occupancy_is_approximate() {
    let work = Work::new();
    let folder: PathBuf = work.path().join("vol");
    std::fs::create_dir(&folder).unwrap();
    let out_json = work.path().join("aging.json");
    let out = output(bin().current_dir(work.path()).args([
        "suite",
        "aging",
        "--dir",
        folder.to_str().unwrap(),
        "--capacity",
        "32MiB",
        "--fill",
        "50%",
        "--sizes",
        "128KiB-256KiB",
        "--ages",
        "1",
        "--layouts",
        "sqlite-ext",
        "--read-rounds",
        "2",
        "--json",
        out_json.to_str().unwrap(),
    ]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc = json(&out_json);
    let t = &doc["tables"];
    assert_eq!(t["volumes"][0]["exact"], false, "{t}");
    let s = &t["series"][0];
    assert_eq!(s["layout"], "sqlite-ext");
    let reached = s["fill_reached"].as_f64().unwrap();
    assert!((reached - 0.5).abs() <= 0.05, "{reached}");
    assert_eq!(s["sizes"]["min"], 128 << 10);
    // Only the series' own folder went; the folder given stays, empty.
    assert!(folder.is_dir());
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
}
