//! The ledger of acknowledged versions: for every blob some run rewrote,
//! the version (or the few versions) its last acknowledged write left, so
//! a later check finds a lost write or an older copy put back, not only a
//! blob that is no version at all.
//!
//! A blob's bytes name their version (see the crate's dataset module), and
//! any version is whole content; which version a blob must hold is known
//! only to the runs that wrote it. Each writing run records it here when it
//! ends. A blob no run rewrote holds version 0, as `init` wrote it.
//!
//! The ledger is kept beside the manifest, in a record of the store's own
//! (a file, a row, an object), and names the dataset it belongs to (the
//! manifest's `id`): a ledger left by an earlier dataset of the same name
//! is never applied to a new one. While a run writes, the ledger says so
//! (`Writing`, with the process); a run that ends finds its own mark and
//! records its writes. Anything else, two runs writing at once or a run
//! killed before it recorded its writes, leaves the ledger `Unknown`: from
//! then on only whole versions can be checked, and the output says so.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::process::ProcessStamp;

/// Marks a ledger record so nothing else is mistaken for one.
const FORMAT: &str = "blobbench-ledger";

/// The versions one blob may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    /// Any whole version: the run that wrote it could not tell which of
    /// its writes landed last.
    Any,
    /// One of these (the last acknowledged write's, and writes of unknown
    /// outcome that may have landed after it), never empty.
    OneOf(Vec<u64>),
}

impl Allowed {
    /// Whether a blob at `version` is one the ledger allows.
    pub fn admits(&self, version: u64) -> bool {
        match self {
            Allowed::Any => true,
            Allowed::OneOf(versions) => versions.contains(&version),
        }
    }

    /// What is wrong with blob `key` found at `version`, which this does
    /// not admit: an acknowledged write is not there.
    pub fn lost(&self, key: u64, version: u64) -> String {
        format!(
            "key {key}: holds version {version}, but its last acknowledged write left {} (a write was lost, or an older copy was put back)",
            self.describe()
        )
    }

    /// The versions allowed, in words: "version 12" or "one of 12, 14".
    pub fn describe(&self) -> String {
        match self {
            Allowed::Any => "any version".into(),
            Allowed::OneOf(v) if v.len() == 1 => format!("version {}", v[0]),
            Allowed::OneOf(v) => {
                let list: Vec<String> = v.iter().map(u64::to_string).collect();
                format!("one of versions {}", list.join(", "))
            }
        }
    }
}

/// Whether the ledger can be trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LedgerState {
    /// Every acknowledged write is recorded.
    Known,
    /// A run writes now and records its writes when it ends: the process
    /// ([`ProcessStamp::to_text`]).
    Writing {
        /// The writing process.
        by: String,
    },
    /// Writes were made that are not recorded; why, in words.
    Unknown {
        /// What happened.
        why: String,
    },
}

/// The acknowledged versions of one dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ledger {
    /// The manifest `id` of the dataset it belongs to.
    pub dataset: String,
    /// Whether it can be trusted.
    pub state: LedgerState,
    /// Blobs rewritten since the dataset was made; every other holds
    /// version 0.
    entries: BTreeMap<u64, Allowed>,
}

/// The ledger as stored: entries packed (see `pack`) and base64, so that
/// a million entries take a few megabytes of text any store can hold.
#[derive(Serialize, Deserialize)]
struct Stored {
    format: String,
    dataset: String,
    state: LedgerState,
    entries: String,
}

impl Ledger {
    /// The ledger of a dataset no run has rewritten.
    pub fn new(dataset: &str) -> Ledger {
        Ledger {
            dataset: dataset.to_string(),
            state: LedgerState::Known,
            entries: BTreeMap::new(),
        }
    }

    /// What blob `key` may hold, while the ledger is known.
    pub fn allowed(&self, key: u64) -> Option<Allowed> {
        (self.state == LedgerState::Known).then(|| {
            self.entries
                .get(&key)
                .cloned()
                .unwrap_or(Allowed::OneOf(vec![0]))
        })
    }

    /// Records what blob `key` may hold now.
    pub fn set(&mut self, key: u64, allowed: Allowed) {
        match allowed {
            Allowed::OneOf(v) if v == [0] => self.entries.remove(&key),
            Allowed::OneOf(v) if v.is_empty() => self.entries.insert(key, Allowed::Any),
            a => self.entries.insert(key, a),
        };
    }

    /// Forgets every key past `last` (a run's inserts it took back).
    pub fn truncate_after(&mut self, last: u64) {
        self.entries.split_off(&(last.saturating_add(1)));
    }

    /// How many blobs were rewritten since the dataset was made.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no blob was rewritten.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Marks the ledger as being written by this process.
    pub fn writing(&self) -> Ledger {
        Ledger {
            state: LedgerState::Writing {
                by: ProcessStamp::current().to_text(),
            },
            ..self.clone()
        }
    }

    /// Whether this process's run marked it (and nobody since).
    pub fn marked_by_me(&self) -> bool {
        matches!(&self.state, LedgerState::Writing { by }
            if ProcessStamp::parse(by) == Some(ProcessStamp::current()))
    }

    /// The state as a reader must take it: a mark of a process no longer
    /// running is the trace of a run killed before it recorded its writes.
    pub fn settled_state(&self) -> LedgerState {
        match &self.state {
            LedgerState::Writing { by } => match ProcessStamp::parse(by) {
                Some(stamp) if stamp.is_running() => self.state.clone(),
                _ => LedgerState::Unknown {
                    why: format!(
                        "a run (process {}) ended without recording its writes",
                        by.split('-').next().unwrap_or(by)
                    ),
                },
            },
            s => s.clone(),
        }
    }

    /// The ledger as text, for the store's record.
    pub fn to_text(&self) -> String {
        let stored = Stored {
            format: FORMAT.into(),
            dataset: self.dataset.clone(),
            state: self.state.clone(),
            entries: base64::engine::general_purpose::STANDARD.encode(pack(&self.entries)),
        };
        serde_json::to_string(&stored).expect("ledger serialises")
    }

    /// The ledger in `text`, or None when it is not one blobbench wrote
    /// (or is damaged: then nothing is trusted).
    pub fn parse(text: &str) -> Option<Ledger> {
        let stored: Stored = serde_json::from_str(text).ok()?;
        if stored.format != FORMAT {
            return None;
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(stored.entries)
            .ok()?;
        Some(Ledger {
            dataset: stored.dataset,
            state: stored.state,
            entries: unpack(&bytes)?,
        })
    }
}

/// Entries in key order, each: the key's distance from the one before,
/// how many versions (0 for any), then each version's difference from the
/// version before (zigzag). A run's versions are consecutive numbers from
/// a random start, so most differences take a byte or two.
fn pack(entries: &BTreeMap<u64, Allowed>) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 5);
    let (mut key_before, mut version_before) = (0u64, 0u64);
    for (&key, allowed) in entries {
        put(&mut out, key - key_before);
        key_before = key;
        let versions: &[u64] = match allowed {
            Allowed::Any => &[],
            Allowed::OneOf(v) => v,
        };
        put(&mut out, versions.len() as u64);
        for &v in versions {
            let step = v.wrapping_sub(version_before) as i64;
            put(&mut out, ((step << 1) ^ (step >> 63)) as u64);
            version_before = v;
        }
    }
    out
}

/// The entries `pack` wrote, or None for bytes it did not write.
fn unpack(bytes: &[u8]) -> Option<BTreeMap<u64, Allowed>> {
    let mut entries = BTreeMap::new();
    let mut at = 0usize;
    let (mut key, mut version) = (0u64, 0u64);
    while at < bytes.len() {
        key = key.checked_add(take(bytes, &mut at)?)?;
        let n = take(bytes, &mut at)?;
        if n > 64 {
            return None;
        }
        let mut versions = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let z = take(bytes, &mut at)?;
            let step = ((z >> 1) as i64) ^ -((z & 1) as i64);
            version = version.wrapping_add(step as u64);
            versions.push(version);
        }
        let allowed = if versions.is_empty() {
            Allowed::Any
        } else {
            Allowed::OneOf(versions)
        };
        entries.insert(key, allowed);
    }
    Some(entries)
}

/// Appends `v` as a LEB128 varint.
fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a LEB128 varint at `at`, moving past it.
fn take(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_survives_its_text_and_rejects_anything_else() {
        let mut l = Ledger::new("abc");
        l.set(3, Allowed::OneOf(vec![1 << 61]));
        l.set(4, Allowed::OneOf(vec![(1 << 61) + 7, 5]));
        l.set(9, Allowed::Any);
        l.set(u64::MAX >> 1, Allowed::OneOf(vec![u64::MAX >> 2]));
        l.set(10, Allowed::OneOf(vec![0]));
        let back = Ledger::parse(&l.writing().to_text()).unwrap();
        assert_eq!(back.entries, l.entries);
        assert!(back.marked_by_me());
        assert_eq!(back.len(), 4, "version 0 is what an absent key holds");
        assert_eq!(back.allowed(4), None, "not trusted while being written");
        assert_eq!(l.allowed(10), Some(Allowed::OneOf(vec![0])));
        assert!(l.allowed(4).unwrap().admits(5));
        assert!(!l.allowed(3).unwrap().admits(0));
        assert!(l.allowed(9).unwrap().admits(12345));
        assert_eq!(Ledger::parse("{}"), None);
        assert_eq!(Ledger::parse("not json"), None);
        let mut damaged: serde_json::Value = serde_json::from_str(&l.to_text()).unwrap();
        damaged["entries"] = serde_json::Value::String("gA==".into());
        assert_eq!(Ledger::parse(&damaged.to_string()), None, "a cut varint");
    }

    #[test]
    fn a_mark_left_by_a_process_that_is_gone_means_unknown() {
        let mut l = Ledger::new("x");
        l.state = LedgerState::Writing {
            by: "999999999-1".into(),
        };
        assert!(
            matches!(l.settled_state(), LedgerState::Unknown { why } if why.contains("999999999"))
        );
        assert_eq!(l.writing().settled_state(), l.writing().state);
    }

    #[test]
    fn truncation_forgets_keys_past_the_end() {
        let mut l = Ledger::new("x");
        for k in 1..=10 {
            l.set(k, Allowed::OneOf(vec![k + 100]));
        }
        l.truncate_after(6);
        assert_eq!(l.len(), 6);
        assert_eq!(l.allowed(7), Some(Allowed::OneOf(vec![0])));
    }
}
