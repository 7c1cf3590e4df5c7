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
    /// How many of the target's files were warmed or evicted (files already
    /// gone are not counted, except by drop_caches, which covers them all).
    pub files: usize,
    /// Warm: the bytes of the files warmed, every page of them cached
    /// (read, or found there already). Cold: the files' apparent size in
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

/// Files of this size or more are looked at page by page (mincore) and
/// only their pages not in the cache are read: a database read whole before
/// each of quick's cases cost more than the reads it times.
const CHECK_PAGES_FROM: u64 = 1 << 20;

/// Brings every page of every file into the page cache: small files are
/// read whole, large ones where mincore finds pages missing.
pub fn warm(files: &[PathBuf]) -> Result<CacheAction> {
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    let mut count = 0;
    for path in files {
        let Some(mut f) = open_if_present(path)? else {
            continue;
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        match missing_ranges(&f, len) {
            Some(ranges) if len >= CHECK_PAGES_FROM => {
                read_ranges(&f, path, &ranges, &mut buf)?;
                bytes += len;
            }
            _ => bytes += read_whole(&mut f, path, &mut buf)?,
        }
        count += 1;
    }
    Ok(CacheAction {
        state: "warm".into(),
        method: "brought every page of the files the run reads (a database whole, a folder's blob files of the run's keys) into the page cache right before timing: files under 1 MiB read whole, larger ones read where mincore found pages not cached".into(),
        files: count,
        bytes,
    })
}

/// Reads `f` to its end; returns the bytes read.
fn read_whole(f: &mut File, path: &std::path::Path, buf: &mut [u8]) -> Result<u64> {
    let mut bytes = 0;
    loop {
        let n = f.read(buf).map_err(|e| Error::io("cannot read", path, e))?;
        if n == 0 {
            return Ok(bytes);
        }
        bytes += n as u64;
    }
}

/// The byte ranges of `f` (`len` long) whose pages are not in the page
/// cache, or None when the kernel cannot say (then the file is read whole).
fn missing_ranges(f: &File, len: u64) -> Option<Vec<(u64, u64)>> {
    if len < CHECK_PAGES_FROM {
        return None;
    }
    // SAFETY: a read-only shared mapping only looked at by mincore, never
    // read through; unmapped when `map` drops.
    let map = unsafe { memmap2::Mmap::map(f) }.ok()?;
    // SAFETY: sysconf has no failure modes for _SC_PAGESIZE.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let mut resident = vec![0u8; len.div_ceil(page) as usize];
    // SAFETY: the mapping is `len` bytes long and `resident` holds one byte
    // per page of it, as mincore requires.
    let rc = unsafe {
        libc::mincore(
            map.as_ptr() as *mut libc::c_void,
            len as usize,
            resident.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return None;
    }
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for (i, r) in resident.iter().enumerate() {
        if r & 1 == 1 {
            continue;
        }
        let start = i as u64 * page;
        let end = (start + page).min(len);
        match ranges.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => ranges.push((start, end)),
        }
    }
    Some(ranges)
}

/// Reads the byte ranges `ranges` of `f`.
fn read_ranges(
    f: &File,
    path: &std::path::Path,
    ranges: &[(u64, u64)],
    buf: &mut [u8],
) -> Result<()> {
    use std::os::unix::fs::FileExt;
    for &(mut at, end) in ranges {
        while at < end {
            let want = ((end - at) as usize).min(buf.len());
            let n = f
                .read_at(&mut buf[..want], at)
                .map_err(|e| Error::io("cannot read", path, e))?;
            if n == 0 {
                break;
            }
            at += n as u64;
        }
    }
    Ok(())
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
    fn warming_a_large_file_brings_back_every_page_evicted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        let len = 3 * CHECK_PAGES_FROM + 123;
        std::fs::write(&path, vec![7u8; len as usize]).unwrap();
        let f = File::open(&path).unwrap();
        f.sync_all().unwrap();
        // Evict, then warm: mincore must find every page cached after.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        let before: u64 = missing_ranges(&f, len)
            .unwrap()
            .iter()
            .map(|(a, b)| b - a)
            .sum();
        assert!(before > 0, "nothing was evicted: the test proves nothing");
        let a = warm(std::slice::from_ref(&path)).unwrap();
        assert_eq!((a.files, a.bytes), (1, len));
        assert_eq!(missing_ranges(&f, len).unwrap(), Vec::new());
    }

    #[test]
    fn missing_ranges_merge_neighbouring_pages_and_end_at_the_file_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        let len = CHECK_PAGES_FROM + 100;
        std::fs::write(&path, vec![1u8; len as usize]).unwrap();
        let f = File::open(&path).unwrap();
        f.sync_all().unwrap();
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        let ranges = missing_ranges(&f, len).unwrap();
        assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0), "{ranges:?}");
        assert!(ranges.iter().all(|&(a, b)| a < b && b <= len), "{ranges:?}");
        assert_eq!(missing_ranges(&f, 10), None, "small files are read whole");
    }

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
