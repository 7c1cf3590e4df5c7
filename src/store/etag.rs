//! ETags from what a store can read cheaply: a fingerprint of numbers, and
//! the stamp (size, modification time, inode) of a file.

/// FNV-1a over `parts`: a short, stable fingerprint for ETags.
pub(crate) fn fingerprint(parts: &[u64]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("\"{h:016x}\"")
}

/// (size, modification time in ns, inode) of a file, or zeros when absent.
pub(crate) fn file_stamp(path: &std::path::Path) -> [u64; 3] {
    match std::fs::metadata(path) {
        Ok(m) => stamp_of(&m),
        Err(_) => [0; 3],
    }
}

/// (size, modification time in ns, inode) from a file's metadata.
pub(crate) fn stamp_of(m: &std::fs::Metadata) -> [u64; 3] {
    use std::os::unix::fs::MetadataExt;
    [
        m.len(),
        (m.mtime() as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(m.mtime_nsec() as u64),
        m.ino(),
    ]
}
