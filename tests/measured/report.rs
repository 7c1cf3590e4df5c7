//! Part of the report tests in the measured tier (real runs with durations, ignored by a plain `cargo test`);
//! the rest, and the helpers both use, are in `fast::report`.

use crate::common::{self, ok};
use crate::fast::report::*;
use std::path::{Path, PathBuf};

/// Headless Chromium opens the report from a file and draws it: a
/// screenshot with content (not blank) and no errors in the console.
#[test]
#[ignore = "needs chromium: run scripts/test.sh"]
fn the_report_renders_in_a_browser() {
    let chromium = common::chromium();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    results(d);
    ok(
        d,
        &[
            "quick",
            "--count",
            "300",
            "--size",
            "4k",
            "--variance",
            "1k",
            "--rounds",
            "2",
            "--dir",
            "quick-data",
            "--json",
            "q.json",
            "--report",
            "none",
        ],
    );
    ok(
        d,
        &[
            "report",
            "q.json",
            "lob.json",
            "run.json",
            "-o",
            "report.html",
        ],
    );
    // A page with a console error, to show the check below can fail.
    std::fs::write(
        d.join("broken.html"),
        "<html><body><p>x</p><script>console.error('deliberate failure')</script></body></html>",
    )
    .unwrap();
    let shots = std::env::var_os("BLOBBENCH_SCREENSHOT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| d.to_path_buf());
    let browse =
        |page: &str, shot: &Path, width: u32| common::browse(&chromium, d, page, shot, width);
    let console = browse("broken.html", &d.join("broken.png"), 800);
    assert!(
        console.iter().any(|l| l.contains("deliberate failure")),
        "the console check sees errors: {console:?}"
    );
    for (width, name) in [(1280, "report-wide.png"), (390, "report-phone.png")] {
        let shot = shots.join(name);
        let console = browse("report.html", &shot, width);
        assert!(console.is_empty(), "console messages: {console:?}");
        let img = resvg::tiny_skia::Pixmap::decode_png(&std::fs::read(&shot).unwrap()).unwrap();
        assert_eq!(img.width(), width);
        let px = img.pixels();
        let white = px
            .iter()
            .filter(|p| p.red() > 245 && p.green() > 245 && p.blue() > 245)
            .count();
        let mut colors: Vec<u32> = px
            .iter()
            .map(|p| u32::from_be_bytes([0, p.red(), p.green(), p.blue()]))
            .collect();
        colors.sort_unstable();
        colors.dedup();
        assert!(white < px.len() * 95 / 100, "{name} is (nearly) blank");
        // The header, charts in the palette's colors and text antialiasing.
        assert!(colors.len() > 50, "{name}: only {} colors", colors.len());
        let header = px[..width as usize * 20]
            .iter()
            .filter(|p| p.red() == 0x14 && p.green() == 0x21 && p.blue() == 0x3d)
            .count();
        assert!(header > 1000, "{name}: the header bar is drawn");
    }
}

/// Every ratio bar of quick's chart draws its interval as a whisker, a
/// noisy figure carries the terminal's `~`, and the caption says how many
/// rounds and which interval; in headless Chromium the page fits a phone's
/// width (no horizontal scrolling) and is drawn at desktop width too, the
/// screenshots kept in BLOBBENCH_SCREENSHOT_DIR.
#[test]
#[ignore = "needs chromium: run scripts/test.sh"]
fn charts_draw_their_intervals_on_desktop_and_phone() {
    let chromium = common::chromium();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "quick", "--count", "300", "--size", "4k", "--rounds", "3", "--dir", "data", "--json",
            "q.json",
        ],
    );
    let doc = common::json(&d.join("q.json"));
    // The figures the chart draws, and which have an interval or are noisy,
    // read from the result itself.
    let mut with_interval = 0;
    let mut noisy = 0;
    for row in doc["tables"]["quick"].as_array().unwrap() {
        for side in ["dir_over_db", "tree_over_db"] {
            let e = &row["estimates"][side];
            if e["method"] == "none" {
                continue;
            }
            with_interval += 1;
            let (v, lo, hi) = (
                e["value"].as_f64().unwrap(),
                e["low"].as_f64().unwrap(),
                e["high"].as_f64().unwrap(),
            );
            if ((hi - v).max(v - lo) / v).abs() > 0.25 {
                noisy += 1;
            }
        }
    }
    assert!(
        with_interval >= 10,
        "3 rounds give intervals: {with_interval}"
    );
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    let bars = common::figure(&html, "1-quick-ratios");
    assert_eq!(
        common::count(&bars, "class=\"whisker\""),
        with_interval,
        "{bars}"
    );
    assert_eq!(common::count(&bars, "class=\"noisy\""), noisy, "{bars}");
    assert!(
        bars.contains("Median of 3 rounds; whiskers: 75% sign-test interval over this run"),
        "{bars}"
    );
    // The page measures itself once drawn: its width against the window's.
    let measured = html.replace(
        "</body>",
        "<script>document.body.setAttribute('data-widths', \
         document.documentElement.scrollWidth + ' ' + window.innerWidth)</script></body>",
    );
    std::fs::write(d.join("measured.html"), measured).unwrap();
    let shots = std::env::var_os("BLOBBENCH_SCREENSHOT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| d.to_path_buf());
    let chrome = |width: u32, mode: &str, page: &str| -> String {
        let mut command = common::headless_chromium(&chromium, d, page, width, mode);
        command.current_dir(d);
        let out = common::output(&mut command);
        assert!(
            out.status.success(),
            "chromium: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for (width, name) in [
        (1280, "intervals-desktop.png"),
        (390, "intervals-phone.png"),
    ] {
        let shot = shots.join(name);
        chrome(
            width,
            &format!("--screenshot={}", shot.display()),
            "report.html",
        );
        let img = resvg::tiny_skia::Pixmap::decode_png(&std::fs::read(&shot).unwrap()).unwrap();
        assert_eq!(img.width(), width);
        let dom = chrome(width, "--dump-dom", "measured.html");
        let widths = dom
            .split("data-widths=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or_else(|| panic!("the page did not measure itself at {width}"));
        let (scroll, inner) = widths.split_once(' ').unwrap();
        let (scroll, inner): (u32, u32) = (scroll.parse().unwrap(), inner.parse().unwrap());
        assert!(
            scroll <= inner,
            "at {width} px the page scrolls sideways: {scroll} > {inner}"
        );
    }
}
