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
