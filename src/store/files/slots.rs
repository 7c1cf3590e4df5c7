//! The names a new dataset will write in a folder an earlier blobbench
//! dataset holds, checked before anything there is cleared: anything in
//! one of them that clearing would leave (a symbolic link, a folder, a
//! file of a key the earlier dataset did not write, a special file) is
//! refused up front, naming it, so the earlier dataset is never half
//! cleared for a write that must then fail, and a link is never followed
//! out of the folder.

use std::fs;
use std::ops::RangeInclusive;
use std::path::Path;

use super::{FileLayout, canonical_key, folder_manifest};
use crate::dataset::Manifest;
use crate::error::{Error, Result};

/// Refuses, before anything is changed, a folder where writing `manifest`'s
/// keys in `layout` would meet something clearing the earlier dataset
/// leaves. A folder that does not exist, or that blobbench did not make
/// (refused by the clearing itself unless empty), passes.
pub(crate) fn check_free(root: &Path, layout: FileLayout, manifest: &Manifest) -> Result<()> {
    let Some(earlier) = folder_manifest(root) else {
        return Ok(());
    };
    let slots = Slots {
        root,
        layout,
        new: manifest.first_key..=manifest.last_key,
        earlier: earlier.first_key..=earlier.last_key,
    };
    slots.check_folder(root, 0, 0)
}

/// What the new dataset writes and what clearing the earlier one removes.
struct Slots<'a> {
    root: &'a Path,
    layout: FileLayout,
    /// The keys the new dataset writes.
    new: RangeInclusive<u64>,
    /// The keys the earlier dataset wrote: their regular files are removed.
    earlier: RangeInclusive<u64>,
}

impl Slots<'_> {
    /// Checks the entries of `dir`, `depth` folders below the root, whose
    /// tree folders so far name `prefix` (key / 100^(3 - depth)).
    fn check_folder(&self, dir: &Path, depth: u32, prefix: u64) -> Result<()> {
        let list = |e| Error::io("cannot list", dir, e);
        for entry in fs::read_dir(dir).map_err(list)? {
            let entry = entry.map_err(list)?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let path = entry.path();
            // file_type does not follow a link: a link is seen as one.
            let kind = entry
                .file_type()
                .map_err(|e| Error::io("cannot stat", &path, e))?;
            if self.is_folder_slot(&name, depth, prefix) {
                if kind.is_dir() {
                    let n: u64 = name.parse().unwrap_or_default();
                    self.check_folder(&path, depth + 1, prefix * 100 + n)?;
                } else {
                    return Err(self.refusal(&path, what(&kind), "a folder of blob files"));
                }
            } else if let Some(key) = self.file_slot(&name, depth, prefix) {
                if kind.is_file() && self.earlier.contains(&key) {
                    continue;
                }
                let found = if kind.is_file() {
                    "a file the earlier dataset did not write (its keys end at {})"
                        .replace("{}", &self.earlier.end().to_string())
                } else {
                    what(&kind).to_string()
                };
                return Err(self.refusal(&path, &found, &format!("the file of key {key}")));
            }
        }
        Ok(())
    }

    /// Whether `name`, `depth` folders down, is a tree folder the new
    /// dataset writes into.
    fn is_folder_slot(&self, name: &str, depth: u32, prefix: u64) -> bool {
        if self.layout != FileLayout::Tree || depth > 1 {
            return false;
        }
        let Some(n) = canonical_number(name, if depth == 0 { None } else { Some(2) }) else {
            return false;
        };
        if depth == 1 && n > 99 {
            return false;
        }
        // The keys under this folder: [lo, hi].
        let scale = if depth == 0 { 10_000 } else { 100 };
        let lo = (prefix * 100 + n).saturating_mul(scale);
        let hi = lo.saturating_add(scale - 1);
        lo <= *self.new.end() && hi >= *self.new.start()
    }

    /// The key whose blob file the new dataset writes at `name`, `depth`
    /// folders down.
    fn file_slot(&self, name: &str, depth: u32, prefix: u64) -> Option<u64> {
        let key = match (self.layout, depth) {
            (FileLayout::Flat, 0) => canonical_key(FileLayout::Flat, name)?,
            (FileLayout::Tree, 2) => {
                let c = canonical_number(name, Some(2)).filter(|&c| c < 100)?;
                prefix.checked_mul(100)?.checked_add(c)?
            }
            _ => return None,
        };
        self.new.contains(&key).then_some(key)
    }

    /// The one-line refusal: what was found where a blob's file or folder
    /// goes, and a fix that works.
    fn refusal(&self, path: &Path, found: &str, slot: &str) -> Error {
        Error::usage(format!(
            "refusing to write into \"{}\": {} is {found}, where the new dataset writes {slot}, and blobbench did not make it (nothing was changed); move or remove it (rm -r '{}'), or write to a new folder",
            self.root.display(),
            path.display(),
            path.display()
        ))
    }
}

/// Digits as blobbench writes them: exactly `width` of them when given,
/// else at least two, without a superfluous leading zero.
fn canonical_number(name: &str, width: Option<usize>) -> Option<u64> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = name.parse().ok()?;
    let back = format!("{n:02}");
    let fits = match width {
        Some(w) => name.len() == w && back == name,
        None => back == name,
    };
    fits.then_some(n)
}

/// A file type in words.
fn what(kind: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_file() {
        "a file"
    } else if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a device file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_folders_and_files_are_named_as_blobbench_names_them() {
        assert_eq!(canonical_number("00", Some(2)), Some(0));
        assert_eq!(canonical_number("07", Some(2)), Some(7));
        assert_eq!(canonical_number("7", Some(2)), None);
        assert_eq!(canonical_number("007", None), None);
        assert_eq!(canonical_number("123", None), Some(123));
        assert_eq!(canonical_number("1x", None), None);
    }
}
