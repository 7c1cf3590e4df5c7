//! Records the commit blobbench is built from, for `blobbench --version`:
//! `git rev-parse --short HEAD` in the checkout, "unknown" where there is
//! none (a crate unpacked from a tarball, git missing). It never fails the
//! build: a version string is not worth a broken install.

use std::path::Path;
use std::process::Command;

fn main() {
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BLOBBENCH_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // Rebuilt when HEAD moves: HEAD itself (a checkout of another branch)
    // and the file of the branch it names (a commit on it; packed-refs when
    // the branch is packed). In a worktree .git is a file naming the real
    // folder; `git rev-parse --git-path` finds each wherever it is.
    let branch = git(&["symbolic-ref", "-q", "HEAD"]).unwrap_or_else(|| "HEAD".into());
    for name in ["HEAD", &branch, "packed-refs"] {
        if let Some(path) = git(&["rev-parse", "--git-path", name])
            && Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

/// What git prints for `args`, trimmed; None when git is missing, fails
/// (no checkout) or prints nothing.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}
