//! Read-only maps of SQLite database files, for sending blobs straight
//! from their pages (see pages.rs).
//!
//! Each file is opened once per process and its descriptor never closed:
//! closing any descriptor of a file drops every POSIX lock the process
//! holds on it, SQLite's own connections' included (its shared locks, and
//! locking_mode=exclusive), which would let writers in under readers.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

use crate::store::map_guard::GuardedMap;

use crate::error::{Error, Result};

/// One entry per database file mapped in this process.
struct Mapped {
    /// As the store was opened with it.
    path: PathBuf,
    /// Kept open for the process's lifetime (see the module's comment).
    file: File,
    /// The newest map, as long as the file was when it was made.
    map: Arc<GuardedMap>,
}

/// Every database file mapped so far.
static MAPPED: Mutex<Vec<Mapped>> = Mutex::new(Vec::new());

/// The first bytes of the database file at `path`, read through this
/// process's lasting descriptor of it, so reading them never drops a lock.
pub(crate) fn read_start(path: &Path, buf: &mut [u8]) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let mut mapped = MAPPED.lock().unwrap_or_else(|p| p.into_inner());
    let at = entry(&mut mapped, path)?;
    mapped[at]
        .file
        .read_exact_at(buf, 0)
        .map_err(|e| Error::io("cannot read", path, e))
}

/// Runs `f` on this process's lasting descriptor of the database file at
/// `path` (see the module's comment), e.g. to ask which locks other
/// processes hold on it without ever closing a descriptor of it.
pub(crate) fn with_lasting_file<T>(path: &Path, f: impl FnOnce(&File) -> T) -> Result<T> {
    let mut mapped = MAPPED.lock().unwrap_or_else(|p| p.into_inner());
    let at = entry(&mut mapped, path)?;
    Ok(f(&mapped[at].file))
}

/// The index of `path`'s entry, made (file opened and mapped) if new.
fn entry(mapped: &mut Vec<Mapped>, path: &Path) -> Result<usize> {
    if let Some(i) = mapped.iter().position(|m| m.path == path) {
        return Ok(i);
    }
    let file = File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
    let map = map_file(&file, path)?;
    mapped.push(Mapped {
        path: path.to_path_buf(),
        file,
        map,
    });
    Ok(mapped.len() - 1)
}

/// A map of the whole of the database file at `path`, remade when the
/// file's length has changed since the last one, or a read of it faulted
/// (a read transaction's lock keeps SQLite's writers from shrinking or
/// changing it while the caller uses the map; a process that ignores the
/// lock is caught by the map's guard, see map_guard.rs).
pub(crate) fn map_of(path: &Path) -> Result<Arc<GuardedMap>> {
    let mut mapped = MAPPED.lock().unwrap_or_else(|p| p.into_inner());
    let at = entry(&mut mapped, path)?;
    let entry = &mut mapped[at];
    let len = entry
        .file
        .metadata()
        .map_err(|e| Error::io("cannot stat", path, e))?
        .len();
    if len as usize != entry.map.len() || !entry.map.intact() {
        entry.map = map_file(&entry.file, path)?;
    }
    Ok(entry.map.clone())
}

/// Maps `file` read-only, whole, guarded.
fn map_file(file: &File, path: &Path) -> Result<Arc<GuardedMap>> {
    // SAFETY: the map is only read, and only for pages a read transaction
    // has locked against writers; a process that truncates the file in
    // spite of SQLite's locks makes reads fault (SIGBUS), which the guard
    // turns into an error. The descriptor is kept for the process's life.
    let map = unsafe { Mmap::map(file) }.map_err(|e| Error::io("cannot map", path, e))?;
    Ok(Arc::new(GuardedMap::new(map, file.as_raw_fd(), path)?))
}

/// A read-only map of the whole database file at `path`, made through a
/// descriptor this process already holds on it (SQLite's own: the caller's
/// connection has the file open), found in /proc/self/fd. Nothing is
/// opened or closed: no lock is dropped, and nothing keeps the file open
/// once the map is gone (a volume holding it can be unmounted after, which
/// [`map_of`]'s lasting descriptor would prevent). The whole file is
/// mapped in at once (read from the disk where it is not cached).
/// Guarded (see map_guard.rs): the caller checks it after its reads.
pub(crate) fn map_through_open_descriptor(path: &Path) -> Result<GuardedMap> {
    let Some(fd) = crate::measure::fragments::open_descriptor_of(path) else {
        return Err(Error::io(
            "cannot map",
            path,
            std::io::Error::other("no descriptor of it is open in this process"),
        ));
    };
    // SAFETY: as for `map_file`: only read, under the caller's read
    // transaction. The descriptor is the caller's connection's, open for
    // as long as the caller holds it; the map outlives no lock.
    // Populated at once: the caller walks every page, and one call that
    // maps them all costs far less than a fault per page.
    let map = unsafe { memmap2::MmapOptions::new().populate().map(fd) }
        .map_err(|e| Error::io("cannot map", path, e))?;
    GuardedMap::new(map, fd, path)
}
