//! How runs read and keep a dataset's ledger of acknowledged versions
//! (`dataset::Ledger`) through any store: a checker reads what each blob
//! must hold; a writer marks the ledger at its start and records its
//! writes at its end, and whatever it cannot vouch for becomes unknown.

use super::contract::Store;
use crate::dataset::{Ledger, LedgerState, Manifest};
use crate::error::Result;

/// What a check may expect of the dataset's blobs: the ledger, or why
/// only whole versions can be checked.
pub type Expectation = std::result::Result<Ledger, String>;

/// The ledger of the dataset `manifest` describes in `store`.
pub fn expectation(store: &mut dyn Store, manifest: &Manifest) -> Result<Expectation> {
    Ok(
        read(store, manifest)?.and_then(|ledger| match ledger.state {
            LedgerState::Known => Ok(ledger),
            LedgerState::Writing { by } => Err(writing_now(&by)),
            LedgerState::Unknown { why } => Err(why),
        }),
    )
}

/// The dataset's ledger as stored, its state settled (the mark of a
/// writer that is gone is unknown); why there is none to read when the
/// dataset keeps none or it is damaged.
fn read(store: &mut dyn Store, manifest: &Manifest) -> Result<Expectation> {
    let Some(id) = &manifest.id else {
        return Ok(Err(
            "the dataset was made before blobbench kept a ledger of acknowledged writes".into(),
        ));
    };
    let mut ledger = match store.read_ledger()? {
        None => Ledger::new(id),
        Some(text) => match Ledger::parse(&text) {
            None => return Ok(Err("its ledger of acknowledged writes is damaged".into())),
            // An earlier dataset's, left where this one was made.
            Some(l) if &l.dataset != id => Ledger::new(id),
            Some(l) => l,
        },
    };
    ledger.state = ledger.settled_state();
    Ok(Ok(ledger))
}

/// A running writer's mark (`by`, a process stamp), in words.
fn writing_now(by: &str) -> String {
    format!(
        "a run (process {}) is writing the dataset now",
        by.split('-').next().unwrap_or(by)
    )
}

/// A writing run's hold on the ledger, from [`begin_writes`] to
/// [`LedgerClaim::end`].
#[must_use = "a run records its writes with end"]
pub struct LedgerClaim {
    /// The ledger as the run found it, or why it is not known.
    found: Expectation,
    /// Whether the mark was written: another connection may hold the
    /// store's write lock for the whole run (SQLite), which the run's own
    /// writes meet as busy and count; the run then goes on unmarked.
    marked: bool,
}

/// Marks the ledger of `manifest`'s dataset as written by this process.
/// A ledger already unknown, or marked by another run now writing, becomes
/// (or stays) unknown: two runs at once cannot say which write was last.
pub fn begin_writes(store: &mut dyn Store, manifest: &Manifest) -> Result<LedgerClaim> {
    let why = match read(store, manifest)? {
        Err(why) => why,
        Ok(ledger) => match &ledger.state {
            LedgerState::Known => {
                let marked = match store.write_ledger(&ledger.writing().to_text()) {
                    Ok(()) => true,
                    Err(e) if e.is_busy() => false,
                    Err(e) => return Err(e),
                };
                return Ok(LedgerClaim {
                    found: Ok(ledger),
                    marked,
                });
            }
            LedgerState::Writing { by } => {
                format!("two runs wrote the dataset at once ({})", writing_now(by))
            }
            LedgerState::Unknown { why } => why.clone(),
        },
    };
    // Unknown from now on (nothing is written where none is kept).
    give_up(store, manifest, &why)?;
    Ok(LedgerClaim {
        found: Err(why),
        marked: false,
    })
}

impl LedgerClaim {
    /// The ledger as the run found it, or why it is not known.
    pub fn found(&self) -> &Expectation {
        &self.found
    }

    /// Records the run's writes (`record` changes the ledger found at the
    /// start) once its data is committed, when the ledger still carries
    /// this run's mark (or, unmarked, is as the run found it); another
    /// run's mark, or any other change, makes it unknown.
    pub fn end(self, store: &mut dyn Store, record: impl FnOnce(&mut Ledger)) -> Result<()> {
        let Ok(mut ledger) = self.found else {
            return Ok(());
        };
        let now = store.read_ledger()?.as_deref().and_then(Ledger::parse);
        let untouched = match &now {
            Some(l) if self.marked => l.marked_by_me(),
            Some(l) => l.state == LedgerState::Known && l == &ledger,
            // No record yet: as found, when the run found none either.
            None => !self.marked && ledger.is_empty(),
        };
        if untouched {
            record(&mut ledger);
            ledger.state = LedgerState::Known;
        } else {
            ledger.state = match now.map(|l| l.state) {
                Some(unknown @ LedgerState::Unknown { .. }) => unknown,
                _ => LedgerState::Unknown {
                    why: "another run wrote the dataset while one was writing it".into(),
                },
            };
        }
        store.write_ledger(&ledger.to_text())
    }
}

/// Marks the ledger of `manifest`'s dataset unknown for `why`: a writer
/// that cannot record what it writes (a server taking clients' PUTs).
pub fn give_up(store: &mut dyn Store, manifest: &Manifest, why: &str) -> Result<()> {
    let Some(id) = &manifest.id else {
        return Ok(());
    };
    let mut unknown = Ledger::new(id);
    unknown.state = LedgerState::Unknown { why: why.into() };
    store.write_ledger(&unknown.to_text())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Allowed, DatasetSpec};
    use crate::progress::Silent;
    use crate::store::{self, Access};
    use crate::target::Target;

    /// A memory dataset made as init makes it, and its manifest.
    fn made(name: &str) -> (Target, Manifest) {
        let target = Target::parse(&format!("memory:{name}")).unwrap();
        store::create_dataset(&target, &DatasetSpec::fixed(4, 100, 1), &Silent).unwrap();
        let manifest = store::open(&target, Access::ReadOnly)
            .unwrap()
            .catalog()
            .unwrap()
            .manifest
            .unwrap();
        (target, manifest)
    }

    fn open(target: &Target) -> Box<dyn Store> {
        store::open(target, Access::ReadWrite).unwrap()
    }

    #[test]
    fn a_run_that_ends_records_its_writes_and_one_that_overlaps_another_does_not() {
        let (target, m) = made("ledger-claims");
        let fresh = expectation(open(&target).as_mut(), &m).unwrap().unwrap();
        assert_eq!(fresh.allowed(2), Some(Allowed::OneOf(vec![0])));
        let claim = begin_writes(open(&target).as_mut(), &m).unwrap();
        let while_writing = expectation(open(&target).as_mut(), &m).unwrap();
        assert!(
            while_writing
                .unwrap_err()
                .contains("is writing the dataset now")
        );
        claim
            .end(open(&target).as_mut(), |l| {
                l.set(2, Allowed::OneOf(vec![9]))
            })
            .unwrap();
        let after = expectation(open(&target).as_mut(), &m).unwrap().unwrap();
        assert_eq!(after.allowed(2), Some(Allowed::OneOf(vec![9])));
        // Two claims at once: the second finds the first's mark.
        let first = begin_writes(open(&target).as_mut(), &m).unwrap();
        let second = begin_writes(open(&target).as_mut(), &m).unwrap();
        assert!(second.found().is_err());
        second.end(open(&target).as_mut(), |_| {}).unwrap();
        first
            .end(open(&target).as_mut(), |l| {
                l.set(3, Allowed::OneOf(vec![5]))
            })
            .unwrap();
        let why = expectation(open(&target).as_mut(), &m)
            .unwrap()
            .unwrap_err();
        assert!(why.contains("two runs wrote the dataset at once"), "{why}");
        // And it stays unknown for the next run.
        let next = begin_writes(open(&target).as_mut(), &m).unwrap();
        assert!(next.found().is_err());
    }

    #[test]
    fn a_ledger_of_another_dataset_or_none_at_all_is_not_applied() {
        let (target, m) = made("ledger-others");
        let mut other = Ledger::new("someone-else");
        other.set(1, Allowed::OneOf(vec![77]));
        open(&target).write_ledger(&other.to_text()).unwrap();
        let found = expectation(open(&target).as_mut(), &m).unwrap().unwrap();
        assert_eq!(found.allowed(1), Some(Allowed::OneOf(vec![0])));
        open(&target).write_ledger("garbage").unwrap();
        let why = expectation(open(&target).as_mut(), &m)
            .unwrap()
            .unwrap_err();
        assert!(why.contains("damaged"), "{why}");
        let old = Manifest { id: None, ..m };
        let why = expectation(open(&target).as_mut(), &old)
            .unwrap()
            .unwrap_err();
        assert!(why.contains("made before"), "{why}");
    }
}
