//! A blob's file as the server sends it: the open descriptor, with what it
//! said when opened. A file written into in place (not replaced by rename)
//! while it is sent would reach the client as a whole reply of mixed bytes;
//! so before a file body's last bytes leave, the descriptor is asked again
//! (`check`), and a change cuts the connection: the client sees a short
//! body, never a whole 200 of two versions. What this cannot see is said
//! in `blobbench serve --help`.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::store::FileIdentity;

/// An open blob file and its identity when opened.
pub(super) struct WatchedFile {
    /// Open for reading.
    pub(super) file: File,
    /// Size and change times when opened.
    identity: FileIdentity,
    /// Set when a check found it changed: a kept descriptor (open_files.rs)
    /// is then dropped at its next look-up instead of cutting every later
    /// reply of it until its revalidation.
    changed: AtomicBool,
}

impl WatchedFile {
    /// `file`, whose descriptor reported `identity` when opened.
    pub(super) fn new(file: File, identity: FileIdentity) -> Self {
        WatchedFile {
            file,
            identity,
            changed: AtomicBool::new(false),
        }
    }

    /// An error when the file is no longer as it was when opened (one
    /// fstat): the caller cuts the connection.
    pub(super) fn check(&self) -> io::Result<()> {
        crate::pause::at("serve-file-check");
        if !self
            .identity
            .written_between(&FileIdentity::now(&self.file)?)
        {
            return Ok(());
        }
        self.changed.store(true, Ordering::Relaxed);
        Err(io::Error::other(
            "the blob's file was written into while being sent",
        ))
    }

    /// Whether a check found it changed.
    pub(super) fn changed(&self) -> bool {
        self.changed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn watched(path: &std::path::Path) -> WatchedFile {
        let file = File::open(path).unwrap();
        let identity = FileIdentity::now(&file).unwrap();
        WatchedFile::new(file, identity)
    }

    #[test]
    fn a_file_left_alone_passes_and_one_written_into_fails() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1");
        std::fs::write(&path, b"abcdef").unwrap();
        let w = watched(&path);
        w.check().unwrap();
        assert!(!w.changed());
        // Same size, other bytes, within the same second: the change time
        // still moves (ns resolution), whatever the modification time says.
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        f.write_all(b"ABC").unwrap();
        assert!(w.check().is_err());
        assert!(w.changed());
    }

    #[test]
    fn times_put_back_by_a_writer_are_still_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1");
        std::fs::write(&path, b"abcdef").unwrap();
        let before = std::fs::metadata(&path).unwrap();
        let w = watched(&path);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, b"ABCDEF").unwrap();
        // The modification time put back as it was: only the change time
        // tells.
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_modified(before.modified().unwrap()).unwrap();
        assert!(w.check().is_err());
    }

    #[test]
    fn a_file_renamed_over_or_removed_keeps_its_bytes_and_passes() {
        // The server's own PUT (and any careful writer) replaces a file by
        // rename: a send from the old descriptor is one whole version.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1");
        std::fs::write(&path, b"abcdef").unwrap();
        let w = watched(&path);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let new = dir.path().join("1.new");
        std::fs::write(&new, b"ABCDEF").unwrap();
        std::fs::rename(&new, &path).unwrap();
        w.check().unwrap();
        let w = watched(&path);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::remove_file(&path).unwrap();
        w.check().unwrap();
        assert!(!w.changed());
    }
}
