//! A tmpfs mounted for one test (root only): a small disk to fill, a
//! folder that can be made read-only even for root, or a fast scratch
//! folder independent of the machine's disk.

use std::path::PathBuf;
use std::process::Command;

/// A tmpfs mounted for one test, unmounted when dropped.
pub struct Tmpfs {
    /// The mount point.
    pub path: PathBuf,
    _parent: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (e.g. "2m"), or None (with the reason
    /// printed) where this user cannot mount.
    pub fn mount(size: &str) -> Option<Tmpfs> {
        if unsafe { libc::geteuid() } != 0 {
            println!("skipped: mounting a tmpfs needs root");
            return None;
        }
        let parent = tempfile::tempdir().unwrap();
        let path = parent.path().join("mnt");
        std::fs::create_dir(&path).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .status();
        if !status.as_ref().is_ok_and(|s| s.success()) {
            println!("skipped: cannot mount a tmpfs here ({status:?})");
            return None;
        }
        Some(Tmpfs {
            path,
            _parent: parent,
        })
    }

    /// Makes the mount read-only: what root cannot write either.
    pub fn read_only(&self) {
        let s = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.path)
            .status()
            .unwrap();
        assert!(s.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazy: a process that still has a file open there cannot keep
        // the mount (and the temporary folder under it) alive.
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}
