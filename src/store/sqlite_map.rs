//! Read-only maps of SQLite database files, for sending blobs straight
//! from their pages (see sqlite_pages.rs).
//!
//! Each file is opened once per process and its descriptor never closed:
//! closing any descriptor of a file drops every POSIX lock the process
//! holds on it, SQLite's own connections' included (its shared locks, and
//! locking_mode=exclusive), which would let writers in under readers.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

use crate::error::{Error, Result};

/// One entry per database file mapped in this process.
struct Mapped {
    /// As the store was opened with it.
    path: PathBuf,
    /// Kept open for the process's lifetime (see the module's comment).
    file: File,
    /// The newest map, as long as the file was when it was made.
    map: Arc<Mmap>,
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
/// file has grown since the last one (a read transaction's lock keeps it
/// from shrinking or changing while the caller uses the map).
pub(crate) fn map_of(path: &Path) -> Result<Arc<Mmap>> {
    let mut mapped = MAPPED.lock().unwrap_or_else(|p| p.into_inner());
    let at = entry(&mut mapped, path)?;
    let entry = &mut mapped[at];
    let len = entry
        .file
        .metadata()
        .map_err(|e| Error::io("cannot stat", path, e))?
        .len();
    if len as usize != entry.map.len() {
        entry.map = map_file(&entry.file, path)?;
    }
    Ok(entry.map.clone())
}

/// Maps `file` read-only, whole.
fn map_file(file: &File, path: &Path) -> Result<Arc<Mmap>> {
    // SAFETY: the map is only read, and only for pages a read transaction
    // has locked against writers; a process that truncates the file in
    // spite of SQLite's locks would make reads fault (SIGBUS), as it would
    // for SQLite's own memory-mapped I/O.
    let map = unsafe { Mmap::map(file) }.map_err(|e| Error::io("cannot map", path, e))?;
    Ok(Arc::new(map))
}

/// A read-only map of the whole database file at `path`, made through a
/// descriptor this process already holds on it (SQLite's own: the caller's
/// connection has the file open), found in /proc/self/fd. Nothing is
/// opened or closed: no lock is dropped, and nothing keeps the file open
/// once the map is gone (a volume holding it can be unmounted after, which
/// [`map_of`]'s lasting descriptor would prevent). The whole file is
/// mapped in at once (read from the disk where it is not cached).
pub(crate) fn map_through_open_descriptor(path: &Path) -> Result<Mmap> {
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
    unsafe { memmap2::MmapOptions::new().populate().map(fd) }
        .map_err(|e| Error::io("cannot map", path, e))
}
