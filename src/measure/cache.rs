//! Page-cache control. Warm runs read the target's files right before timing
//! (this VM reclaims page cache idle for about a minute, so a cache warmed
//! earlier may be gone); cold runs evict the target's pages first.

use std::fs::File;
use std::io::Read;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// What was done to the page cache before a timed run, recorded in the
/// result so a reader knows whether the numbers are warm or cold.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CacheAction {
    /// "warm" or "cold".
    pub state: String,
    /// How it was achieved, in words a reader can check.
    pub method: String,
    /// How many of the target's files were read or evicted (files already
    /// gone are not counted, except by drop_caches, which covers them all).
    pub files: usize,
    /// Warm: bytes read to fill the cache. Cold: the files' apparent size in
    /// bytes, what a read would have to fetch from disk.
    pub bytes: u64,
}

/// Opens `path`, or None if it is gone: a WAL or journal listed earlier may
/// have been removed by the last close.
fn open_if_present(path: &std::path::Path) -> Result<Option<File>> {
    match File::open(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("cannot open", path, e)),
    }
}

/// Reads every file once so its pages are cached.
pub fn warm(files: &[PathBuf]) -> Result<CacheAction> {
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    let mut count = 0;
    for path in files {
        let Some(mut f) = open_if_present(path)? else {
            continue;
        };
        loop {
            let n = f
                .read(&mut buf)
                .map_err(|e| Error::io("cannot read", path, e))?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
        }
        count += 1;
    }
    Ok(CacheAction {
        state: "warm".into(),
        method: "read every file of the target the run reads (a database whole, a folder's blob files of the run's keys) right before timing".into(),
        files: count,
        bytes,
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no failure modes.
    unsafe { libc::geteuid() == 0 }
}

/// How the method text of a whole-machine eviction begins, for commands
/// that say so.
pub const WHOLE_MACHINE: &str = "dropped the page cache of the whole machine (as root)";

/// How much [`evict`] empties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eviction {
    /// As root, the whole machine's caches (drop_caches: every program's
    /// cached files, dentries and inodes, so opens are cold too); else the
    /// target's files as [`Eviction::TargetFiles`].
    Machine,
    /// Only the target's files, from the page cache (posix_fadvise
    /// DONTNEED), even as root: other programs keep their cache.
    TargetFiles,
}

/// Evicts the target's pages as `scope` says; the action's method says
/// which was done, and why when it is less than asked.
pub fn evict(files: &[PathBuf], scope: Eviction) -> Result<CacheAction> {
    // SAFETY: sync() has no failure modes; dirty pages cannot be dropped.
    unsafe { libc::sync() };
    let bytes = crate::measure::space::apparent_bytes(files);
    let root = is_root();
    if scope == Eviction::Machine && root && std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
    {
        return Ok(CacheAction {
            state: "cold".into(),
            method: format!(
                "{WHOLE_MACHINE}: sync + echo 3 > /proc/sys/vm/drop_caches (page cache, dentries, inodes)"
            ),
            files: files.len(),
            bytes,
        });
    }
    let mut count = 0;
    for path in files {
        if !path.is_file() {
            continue;
        }
        let Some(f) = open_if_present(path)? else {
            continue;
        };
        // SAFETY: valid fd for the lifetime of `f`; offset 0, len 0 = whole file.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        count += 1;
    }
    Ok(CacheAction {
        state: "cold".into(),
        method: per_file_method(scope, root),
        files: count,
        bytes,
    })
}

/// The method text of a per-file eviction: what stays cached and why this
/// method was used.
fn per_file_method(scope: Eviction, root: bool) -> String {
    let why = match (scope, root) {
        (Eviction::TargetFiles, _) => "as --cold=file asks",
        (Eviction::Machine, false) => "not root, so the machine's caches cannot be dropped",
        (Eviction::Machine, true) => "/proc/sys/vm/drop_caches is not writable here",
    };
    format!(
        "posix_fadvise(DONTNEED) on every file of the target ({why}; page cache only, dentries and inodes stay cached)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_file_eviction_says_why_and_keeps_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let gone = dir.path().join("gone");
        let a = evict(&[path.clone(), gone], Eviction::TargetFiles).unwrap();
        assert_eq!((a.state.as_str(), a.files, a.bytes), ("cold", 1, 8192));
        assert!(
            a.method.starts_with("posix_fadvise(DONTNEED)"),
            "{}",
            a.method
        );
        assert!(a.method.contains("as --cold=file asks"), "{}", a.method);
        assert!(per_file_method(Eviction::Machine, false).contains("not root"));
    }
}
