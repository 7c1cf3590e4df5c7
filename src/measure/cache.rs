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
        method: "read every file of the target right before timing".into(),
        files: count,
        bytes,
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no failure modes.
    unsafe { libc::geteuid() == 0 }
}

/// Evicts the target's pages: drop_caches when root (page cache, dentries
/// and inodes, so opens are cold too), else posix_fadvise(DONTNEED) per file.
pub fn evict(files: &[PathBuf]) -> Result<CacheAction> {
    // SAFETY: sync() has no failure modes; dirty pages cannot be dropped.
    unsafe { libc::sync() };
    let bytes = crate::measure::space::apparent_bytes(files);
    if is_root() && std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok() {
        return Ok(CacheAction {
            state: "cold".into(),
            method: "sync + echo 3 > /proc/sys/vm/drop_caches (page cache, dentries, inodes)"
                .into(),
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
        method: "posix_fadvise(DONTNEED) on every file (page cache only; not root, so dentries stay cached)".into(),
        files: count,
        bytes,
    })
}
