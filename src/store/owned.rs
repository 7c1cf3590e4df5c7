//! What this invocation made on the local disk, the only things its
//! cleanup may remove.
//!
//! Why: a command that refuses to replace a user's `quick.db` or
//! `fasterthanfs.tree` in its `--dir` fails, and a failing command removes
//! its half-made datasets by name. By name alone it removed the user's
//! entry it had just refused to touch. So a dataset is recorded here when
//! this process makes it (or takes over one an earlier blobbench run made,
//! after checking its manifest), and [`remove_dataset`](super::remove_dataset)
//! removes only what is recorded: whatever path a cleanup is handed,
//! nothing blobbench did not make in this invocation goes.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// How this invocation made an entry, which says how much of it its
/// cleanup removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    /// A dataset a store made, or took over from an earlier blobbench run
    /// after reading its manifest: such a folder may hold a user's file
    /// beside blobbench's, and only blobbench's go.
    Dataset,
    /// An entry claimed while nothing was there (see
    /// [`claim_new`](super::claim_new)): all of it is this invocation's.
    Whole,
}

/// Every local path this process made, as an absolute path.
static MADE: Mutex<BTreeMap<PathBuf, Made>> = Mutex::new(BTreeMap::new());

/// Testing aid: with this variable set to a file, the binary appends to
/// it every path it records, one per line, so that a test learns every
/// name a command makes in its folder (tests/measured/ownership.rs) and
/// meets each with a user's entry. Only the binary reads it
/// ([`log_from_env`], called by `main` through
/// `command::enable_testing_aids`).
const LOG_VAR: &str = "BLOBBENCH_TEST_MADE_LOG";

static LOG: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Reads [`LOG_VAR`]; `main` has this called once, before any work.
pub fn log_from_env() {
    LOG.get_or_init(|| std::env::var_os(LOG_VAR).map(PathBuf::from));
}

/// Appends `path` to the testing aid's log, if one was asked for.
fn log(path: &Path) {
    let Some(Some(file)) = LOG.get() else { return };
    let line = format!("{}\n", path.display());
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(line.as_bytes()));
}

/// The form a path is recorded and looked up in: absolute, so that
/// `work/quick.db` and `/abs/work/quick.db` are one entry (the working
/// folder never changes while a command runs).
fn key(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Records that this process made the entry at `path` (a database, a
/// folder or a file), and how: its cleanup may remove it.
pub fn record(path: &Path, how: Made) {
    let path = key(path);
    log(&path);
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    made.insert(path, how);
}

/// How this process made the entry at `path`, or None when it did not.
pub fn made_here(path: &Path) -> Option<Made> {
    let made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    made.get(&key(path)).copied()
}

/// Forgets `path` once it is removed: a user's entry made there later is
/// not ours.
pub fn forget(path: &Path) {
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    made.remove(&key(path));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::DatasetSpec;
    use crate::progress::Silent;
    use crate::target::Target;

    /// Whatever a cleanup is handed, only what this process made goes: a
    /// user's file or folder with a dataset's name, and a dataset an
    /// earlier run made, stay; from a folder made here, blobbench's files
    /// go and a user's file put into it stays, with the folder.
    #[test]
    fn cleanup_removes_only_what_this_process_made() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("quick.db"), "mine").unwrap();
        std::fs::create_dir_all(d.join("quick.tree/photos")).unwrap();
        std::fs::write(d.join("quick.tree/photos/1.jpg"), "jpg").unwrap();
        let spec = DatasetSpec::fixed(3, 100, 1);
        let earlier = d.join("earlier.db");
        crate::store::create_dataset(
            &Target::sqlite(earlier.clone(), Default::default()),
            &spec,
            &Silent,
        )
        .unwrap();
        forget(&earlier); // as if another invocation had made it
        let here = d.join("here.dir");
        crate::store::create_dataset(&Target::dir(here.clone()), &spec, &Silent).unwrap();
        std::fs::write(here.join("notes.txt"), "a user's note").unwrap();
        for name in ["quick.db", "quick.tree", "earlier.db", "here.dir"] {
            super::super::remove_dataset(&d.join(name));
        }
        assert_eq!(std::fs::read_to_string(d.join("quick.db")).unwrap(), "mine");
        assert_eq!(
            std::fs::read_to_string(d.join("quick.tree/photos/1.jpg")).unwrap(),
            "jpg"
        );
        assert!(earlier.is_file());
        let left: Vec<_> = std::fs::read_dir(&here)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["notes.txt"]);
    }

    #[test]
    fn a_path_is_ours_from_its_record_to_its_removal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("owned-test.db");
        assert_eq!(made_here(&path), None);
        record(&path, Made::Whole);
        assert_eq!(made_here(&path), Some(Made::Whole));
        forget(&path);
        assert_eq!(made_here(&path), None);
    }
}
