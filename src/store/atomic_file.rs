//! Small files replaced whole and durably (a dataset folder's manifest, a
//! process's journal of added keys), and the folder fsync that makes a
//! name durable.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `text` as the file `name` in the folder `root` atomically and
/// durably: a temporary file, fsynced, renamed over the old one, then the
/// folder fsynced, so a crash leaves the old file or the new one, never a
/// torn one; the temporary file is `NAME.tmp-PID-N`.
pub(crate) fn write_atomically(root: &Path, name: &str, text: &str) -> Result<()> {
    let path = root.join(name);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = root.join(format!("{name}.tmp-{}-{nanos}", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io("cannot create", &tmp, e))?;
        f.write_all(text.as_bytes())
            .map_err(|e| Error::io("cannot write", &tmp, e))?;
        f.sync_all()
            .map_err(|e| Error::io("cannot fsync", &tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| Error::io("cannot rename over", &path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    sync_dir(root)
}

/// fsync of a folder: makes a created, renamed or removed name durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("cannot fsync folder", dir, e))
}
