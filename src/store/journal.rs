//! The journal of the keys a process adds to a dataset folder (`dir:`,
//! `tree:`, and the files beside an `sqlite-ext:` database) past the last
//! key its manifest records: before any writer of the process (a
//! mixed run's workers, `serve --writable`'s PUTs) writes such a key,
//! the key is within the range the process's journal names, written
//! durably beside the manifest. A process killed before the manifest
//! records its keys (kill -9, a crash), or one that never records them (a
//! server), leaves its journal, so a later `init` over the folder knows
//! every file it may have made, keys past the manifest's count and their
//! temporary files included, and removes exactly those: a later insert
//! run never meets a leftover under a key it is about to make. A run that
//! ends cleanly removes its journal once the manifest records the dataset
//! it left ([`end_added_keys`]).
//!
//! Databases, servers and object-store prefixes need none: `init` replaces
//! a whole database or table, and removes every blob-named object under a
//! prefix that holds blobbench's manifest.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::atomic_file::write_atomically;
use crate::error::{Error, Result};
use crate::process::ProcessStamp;

/// Journals are named `blobbench-run-PID-START.json` in the folder.
const PREFIX: &str = "blobbench-run-";
const SUFFIX: &str = ".json";
/// Marks a journal, so a foreign file of a similar name is never read as one.
const FORMAT: &str = "blobbench-run-journal";

/// Keys claimed at once, at least: a short run writes its journal once,
/// before it starts; a long one extends it a few times (each extension
/// claims as many keys again as the run has added, so their number grows
/// with the logarithm of the keys added).
const LEAST_CLAIM: u64 = 4096;

/// What a journal file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Record {
    /// Always [`FORMAT`].
    format: String,
    /// The first key the run may add (the dataset's last key + 1).
    first_key: u64,
    /// The last key the run may have written so far.
    last_key: u64,
    /// The run's command line, for whoever finds the file.
    command: String,
}

/// A process's journal of one folder (see the module's documentation).
struct RunJournal {
    folder: PathBuf,
    name: String,
    record: Record,
}

impl RunJournal {
    /// Starts the journal of a run that adds keys from `first_key` on to
    /// the dataset folder `folder`, claiming the first keys at once.
    fn begin(folder: &Path, first_key: u64) -> Result<RunJournal> {
        let mut journal = RunJournal {
            folder: folder.to_path_buf(),
            name: format!("{PREFIX}{}{SUFFIX}", ProcessStamp::current().to_text()),
            record: Record {
                format: FORMAT.into(),
                first_key,
                last_key: first_key,
                command: crate::dataset::current_command(),
            },
        };
        journal.extend_to(first_key.saturating_add(LEAST_CLAIM - 1))?;
        Ok(journal)
    }

    /// The last key the journal names: a key up to it may be written now.
    fn claimed(&self) -> u64 {
        self.record.last_key
    }

    /// Makes sure `key` is named before the run writes it: extends the
    /// range (durably) when the key lies outside it.
    fn claim(&mut self, key: u64) -> Result<()> {
        if (self.record.first_key..=self.record.last_key).contains(&key) {
            return Ok(());
        }
        let first_key = self.record.first_key.min(key);
        let added = key.saturating_sub(first_key) + 1;
        let last_key = self
            .record
            .last_key
            .max(key.saturating_add(added.max(LEAST_CLAIM)));
        self.write(first_key, last_key)
    }

    fn extend_to(&mut self, last_key: u64) -> Result<()> {
        self.write(self.record.first_key, last_key)
    }

    fn write(&mut self, first_key: u64, last_key: u64) -> Result<()> {
        let record = Record {
            first_key,
            last_key,
            ..self.record.clone()
        };
        let text = serde_json::to_string_pretty(&record).expect("a journal serialises");
        write_atomically(&self.folder, &self.name, &text)?;
        self.record = record;
        Ok(())
    }

    /// The run has put the dataset right and its manifest says so: the
    /// journal goes.
    fn end(self) -> Result<()> {
        let path = self.folder.join(&self.name);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("cannot remove", &path, e))
            }
            _ => Ok(()),
        }
    }
}

/// This process's journals, one per folder it adds keys to.
static OPEN: Mutex<Vec<RunJournal>> = Mutex::new(Vec::new());

/// Names `key` in this process's journal of `folder` before a writer adds
/// it, when it lies past `dataset_last` (the last key the folder's
/// manifest records); returns the last key the journal now names (keys up
/// to it need no further write), `dataset_last` for a key within the
/// dataset.
pub(crate) fn name_added_key(folder: &Path, dataset_last: u64, key: u64) -> Result<u64> {
    if key <= dataset_last {
        return Ok(dataset_last);
    }
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    let at = match open.iter().position(|j| j.folder == folder) {
        Some(at) => at,
        None => {
            open.push(RunJournal::begin(folder, dataset_last + 1)?);
            open.len() - 1
        }
    };
    open[at].claim(key)?;
    Ok(open[at].claimed())
}

/// Ends this process's journal of `folder`: its manifest now records every
/// key the process added there (or they are gone).
pub(crate) fn end_added_keys(folder: &Path) -> Result<()> {
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    match open.iter().position(|j| j.folder == folder) {
        Some(at) => open.swap_remove(at).end(),
        None => Ok(()),
    }
}

/// Whether `name` is a journal's file name (`blobbench-run-PID-START.json`)
/// or one of its temporary files (the same, then `.tmp-PID-N`).
fn journal_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return false;
    };
    let Some((stem, after)) = rest.split_once(SUFFIX) else {
        return false;
    };
    let temporary = || {
        after
            .strip_prefix(".tmp-")
            .is_some_and(|t| ProcessStamp::parse(t).is_some())
    };
    ProcessStamp::parse(stem).is_some() && (after.is_empty() || temporary())
}

/// The key ranges every journal in `folder` names: the keys runs over the
/// dataset there may have added. A file that is not a whole journal (a
/// temporary one, a foreign one) names none.
pub(crate) fn journaled_keys(folder: &Path) -> Result<Vec<std::ops::RangeInclusive<u64>>> {
    let mut ranges = Vec::new();
    for entry in fs::read_dir(folder).map_err(|e| Error::io("cannot list", folder, e))? {
        let entry = entry.map_err(|e| Error::io("cannot list", folder, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !journal_name(&name) || name.contains(".tmp-") {
            continue;
        }
        let record = fs::read_to_string(entry.path())
            .ok()
            .and_then(|text| serde_json::from_str::<Record>(&text).ok())
            .filter(|r| r.format == FORMAT && r.first_key <= r.last_key);
        if let Some(r) = record {
            ranges.push(r.first_key..=r.last_key);
        }
    }
    Ok(ranges)
}

/// Removes the journals in `folder` and their temporary files, once what
/// they name is gone.
pub(crate) fn remove_journals(folder: &Path) -> Result<()> {
    for entry in fs::read_dir(folder).map_err(|e| Error::io("cannot list", folder, e))? {
        let entry = entry.map_err(|e| Error::io("cannot list", folder, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if journal_name(&name) && entry.file_type().is_ok_and(|t| t.is_file()) {
            let path = entry.path();
            fs::remove_file(&path).map_err(|e| Error::io("cannot remove", &path, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_names_every_key_before_it_is_written_and_goes_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = RunJournal::begin(dir.path(), 2001).unwrap();
        assert_eq!(
            journaled_keys(dir.path()).unwrap(),
            vec![2001..=2001 + 4095]
        );
        journal.claim(2001 + 4095).unwrap();
        assert_eq!(journal.claimed(), 2001 + 4095, "within the claim: no write");
        journal.claim(10_000).unwrap();
        assert!(journal.claimed() >= 10_000);
        assert_eq!(
            journaled_keys(dir.path()).unwrap(),
            vec![2001..=journal.claimed()]
        );
        // A foreign file of a similar name is neither read nor removed.
        for foreign in ["blobbench-run-notes.json", "blobbench-run-1-2.json.bak"] {
            fs::write(dir.path().join(foreign), "{}").unwrap();
        }
        fs::write(dir.path().join("blobbench-run-1-2.json.tmp-1-2"), "{").unwrap();
        assert_eq!(journaled_keys(dir.path()).unwrap().len(), 1);
        remove_journals(dir.path()).unwrap();
        assert!(journaled_keys(dir.path()).unwrap().is_empty());
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["blobbench-run-1-2.json.bak", "blobbench-run-notes.json"]
        );
        // A journal that ends is removed.
        let journal = RunJournal::begin(dir.path(), 7).unwrap();
        journal.end().unwrap();
        assert!(journaled_keys(dir.path()).unwrap().is_empty());
    }

    /// The process's journal of a folder is begun by the first key added
    /// past the dataset, names keys added anywhere past it (a server's PUT
    /// of any key), and ends when told.
    #[test]
    fn the_process_journal_names_every_added_key_until_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        assert_eq!(name_added_key(folder, 100, 50).unwrap(), 100);
        assert!(
            journaled_keys(folder).unwrap().is_empty(),
            "a key of the dataset"
        );
        let claimed = name_added_key(folder, 100, 101).unwrap();
        assert!(claimed >= 101);
        assert_eq!(journaled_keys(folder).unwrap(), vec![101..=claimed]);
        let far = name_added_key(folder, 100, 1_000_000).unwrap();
        assert!(far >= 1_000_000);
        assert_eq!(journaled_keys(folder).unwrap(), vec![101..=far]);
        end_added_keys(folder).unwrap();
        assert!(journaled_keys(folder).unwrap().is_empty());
        end_added_keys(folder).unwrap();
    }
}
