//! Disk space as `du` counts it: allocated blocks, not apparent sizes, so a
//! 10 000-byte file on a 4 KiB-block filesystem counts 12 288 bytes.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// Bytes allocated on disk for `paths` (blocks x 512, what `du` shows);
/// missing files count 0 because a journal may vanish between listing and
/// measuring.
pub fn allocated_bytes(paths: &[PathBuf]) -> Result<u64> {
    let mut total = 0;
    for p in paths {
        match std::fs::symlink_metadata(p) {
            Ok(md) => total += md.blocks() * 512,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("cannot stat", p, e)),
        }
    }
    Ok(total)
}

/// The sum of the regular files' lengths in bytes (what `ls -l` shows);
/// unreadable or missing paths count 0.
pub fn apparent_bytes(paths: &[PathBuf]) -> u64 {
    paths
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// What a filesystem can still take, for checks before writing.
#[derive(Debug, Clone, Copy)]
pub struct Room {
    /// Free bytes for an unprivileged user.
    pub free_bytes: u64,
    /// The block size: every file takes whole blocks.
    pub block_bytes: u64,
    /// Files (inodes) that can still be made; None where the filesystem
    /// has no fixed number (btrfs reports 0 of 0).
    pub free_files: Option<u64>,
}

/// The room on the filesystem holding `path` (or, for a path not made yet,
/// its nearest existing parent); None when the system cannot tell.
pub fn room(path: &std::path::Path) -> Option<Room> {
    use std::os::unix::ffi::OsStrExt;
    let existing = path
        .ancestors()
        .map(|p| {
            if p.as_os_str().is_empty() {
                std::path::Path::new(".")
            } else {
                p
            }
        })
        .find(|p| p.exists())?;
    let c = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path and st a properly sized out-parameter.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(Room {
        free_bytes: (st.f_bavail as u64).saturating_mul(st.f_frsize as u64),
        block_bytes: (st.f_frsize as u64).max(1),
        free_files: (st.f_files > 0).then_some(st.f_favail as u64),
    })
}

/// Free space for an unprivileged user on the filesystem holding `path`
/// (or, for a path not made yet, its nearest existing parent); None when
/// the system cannot tell.
pub fn free_bytes(path: &std::path::Path) -> Option<u64> {
    room(path).map(|r| r.free_bytes)
}
