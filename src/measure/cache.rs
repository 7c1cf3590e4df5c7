//! Page-cache control. Warm runs read the target's files right before timing
//! (this VM reclaims page cache idle for about a minute, so a cache warmed
//! earlier may be gone); cold runs evict the target's pages first.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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

/// Reads every file once so its pages are cached, on every core: untimed
/// setup whose cost is the wait before each timed run (quick warms its
/// 200 MB database and its folders' 20,000 files every case of every
/// round). A large file is read in chunks that any thread takes, so one
/// database is spread over the cores as a folder's files are. Every page
/// is read whole, as a timed read will: a page found cached but not read
/// would be marked accessed by the timed reads themselves (kernel work the
/// plain loop does not pay).
pub fn warm(files: &[PathBuf]) -> Result<CacheAction> {
    let work = WarmWork::new(files);
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, WARM_THREADS_MAX);
    let totals = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(|| work.run())).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Vec<_>>()
    });
    let mut bytes = 0;
    for t in totals {
        bytes += t?;
    }
    Ok(CacheAction {
        state: "warm".into(),
        method: "read every file of the target the run reads (a database whole, a folder's blob files of the run's keys) right before timing".into(),
        files: work.opened.load(Ordering::Relaxed),
        bytes,
    })
}

/// The most threads a warm-up reads with.
const WARM_THREADS_MAX: usize = 4;
/// A file larger than this is read in pieces of this size, each by
/// whichever thread takes it.
const WARM_CHUNK: u64 = 8 << 20;
/// Each thread's read buffer: small enough to stay in the core's cache.
const WARM_BUFFER: usize = 256 << 10;

/// The files of one warm-up, shared by its threads: files are claimed in
/// order; a large file's pieces past its first go on a queue any thread
/// takes from before it claims another file.
struct WarmWork<'a> {
    files: &'a [PathBuf],
    next_file: AtomicUsize,
    /// Files whose pieces are all queued or read (or that were gone).
    settled: AtomicUsize,
    opened: AtomicUsize,
    pieces: Mutex<Vec<Piece>>,
}

/// A part of a large file left for any thread to read.
struct Piece {
    file: Arc<File>,
    /// Its place in the warm-up's list (for the error's path).
    index: usize,
    offset: u64,
    len: u64,
}

impl<'a> WarmWork<'a> {
    fn new(files: &'a [PathBuf]) -> Self {
        WarmWork {
            files,
            next_file: AtomicUsize::new(0),
            settled: AtomicUsize::new(0),
            opened: AtomicUsize::new(0),
            pieces: Mutex::new(Vec::new()),
        }
    }

    /// One thread's share: the bytes it read.
    fn run(&self) -> Result<u64> {
        let mut buf = vec![0u8; WARM_BUFFER];
        let mut bytes = 0;
        loop {
            let piece = self.pieces.lock().unwrap_or_else(|p| p.into_inner()).pop();
            if let Some(p) = piece {
                bytes += read_piece(&p.file, &self.files[p.index], p.offset, p.len, &mut buf)?;
                continue;
            }
            let i = self.next_file.fetch_add(1, Ordering::Relaxed);
            if let Some(path) = self.files.get(i) {
                bytes += self.claim(i, path, &mut buf)?;
                self.settled.fetch_add(1, Ordering::Release);
            } else if self.settled.load(Ordering::Acquire) >= self.files.len() {
                return Ok(bytes);
            } else {
                // Another thread is opening a file whose pieces may come.
                std::thread::yield_now();
            }
        }
    }

    /// Opens `path` (gone: nothing), queues its pieces past the first and
    /// reads the first.
    fn claim(&self, index: usize, path: &std::path::Path, buf: &mut [u8]) -> Result<u64> {
        let Some(file) = open_if_present(path)? else {
            return Ok(0);
        };
        self.opened.fetch_add(1, Ordering::Relaxed);
        let len = file
            .metadata()
            .map_err(|e| Error::io("cannot stat", path, e))?
            .len();
        let file = Arc::new(file);
        let mut offset = WARM_CHUNK;
        let mut queue = self.pieces.lock().unwrap_or_else(|p| p.into_inner());
        while offset < len {
            // The last piece reads to the end, however far it has grown.
            let piece = if offset + WARM_CHUNK >= len {
                u64::MAX
            } else {
                WARM_CHUNK
            };
            queue.push(Piece {
                file: file.clone(),
                index,
                offset,
                len: piece,
            });
            offset += WARM_CHUNK;
        }
        drop(queue);
        // Read to its end: a file that grew since its size was read is
        // still read whole.
        let first = if len > WARM_CHUNK {
            WARM_CHUNK
        } else {
            u64::MAX
        };
        read_piece(&file, path, 0, first, buf)
    }
}

/// Reads `len` bytes of `file` from `offset` (less at its end).
fn read_piece(
    file: &File,
    path: &std::path::Path,
    offset: u64,
    len: u64,
    buf: &mut [u8],
) -> Result<u64> {
    use std::os::unix::fs::FileExt;
    let mut done = 0u64;
    while done < len {
        let want = buf
            .len()
            .min(usize::try_from(len - done).unwrap_or(usize::MAX));
        let n = file
            .read_at(&mut buf[..want], offset + done)
            .map_err(|e| Error::io("cannot read", path, e))?;
        if n == 0 {
            break;
        }
        done += n as u64;
    }
    Ok(done)
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

    #[test]
    fn warming_reads_every_byte_of_large_and_small_files_once() {
        let dir = tempfile::tempdir().unwrap();
        let chunk = WARM_CHUNK as usize;
        let mut files = Vec::new();
        let mut want = 0;
        for (i, len) in [2 * chunk + 12_345, chunk, 1, 0, 4096]
            .into_iter()
            .enumerate()
        {
            let p = dir.path().join(format!("big{i}"));
            std::fs::write(&p, vec![1u8; len]).unwrap();
            files.push(p);
            want += len as u64;
        }
        for i in 0..200 {
            let p = dir.path().join(format!("{i:06}"));
            std::fs::write(&p, vec![2u8; 1000 + i]).unwrap();
            files.push(p);
            want += 1000 + i as u64;
        }
        files.push(dir.path().join("gone-wal"));
        let a = warm(&files).unwrap();
        assert_eq!((a.state.as_str(), a.files, a.bytes), ("warm", 205, want));
    }
}
