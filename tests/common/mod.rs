//! Helpers shared by the end-to-end tests: run the binary, expect success or
//! a clean usage error, read a JSON result.
#![allow(dead_code)] // each test file uses its own subset

pub mod tmpfs;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_blobbench"))
}

/// Starts `blobbench serve TARGET --listen 127.0.0.1:0 EXTRA...` in `dir`
/// and returns it with the address it bound, read from the first stderr
/// line (the banner names it).
pub fn start_serve(dir: &Path, target: &str, extra: &[&str]) -> (Child, String) {
    let (child, _, addr) = start_serve_banner(dir, target, extra);
    (child, addr)
}

/// As [`start_serve`], also returning the banner line itself.
pub fn start_serve_banner(dir: &Path, target: &str, extra: &[&str]) -> (Child, String, String) {
    let mut child = bin()
        .current_dir(dir)
        .args(["serve", target, "--listen", "127.0.0.1:0"])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    // The address it listens on follows " on http://" (a target's own
    // URL, an S3 endpoint, may come first).
    let addr = line
        .split(" on http://")
        .nth(1)
        .or_else(|| line.split("http://").nth(1))
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (child, line, addr)
}

pub fn run(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("binary runs")
}

pub fn ok(dir: &Path, args: &[&str]) -> String {
    ok_with_env(dir, &[], args)
}

/// Like `ok`, with extra environment variables for the binary.
pub fn ok_with_env(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> String {
    let out = bin()
        .current_dir(dir)
        .envs(env.iter().copied())
        .args(args)
        .output()
        .expect("binary runs");
    assert!(
        out.status.success(),
        "{args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts a clean usage error: exit 2, one line on stderr naming `needle`.
pub fn usage_error(dir: &Path, args: &[&str], needle: &str) {
    let out = run(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: status {:?}, stderr {err}",
        out.status
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {err}"
    );
    assert!(err.contains(needle), "{args:?}: {err} lacks {needle}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `<figure>` with this id in a report (its SVG and caption).
pub fn figure(html: &str, id: &str) -> String {
    let start = html
        .find(&format!("<figure id=\"{id}\""))
        .unwrap_or_else(|| panic!("report has no figure {id}"));
    let end = start + html[start..].find("</figure>").expect("figure closes");
    html[start..end].to_string()
}

pub fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// Distinct run names (rounds folded) of one operation in a result.
pub fn run_names(doc: &serde_json::Value, operation: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in doc["runs"].as_array().unwrap() {
        if r["plan"]["operation"] != operation {
            continue;
        }
        let name = r["name"].as_str().unwrap();
        let name = name.split(" (round ").next().unwrap().to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}
