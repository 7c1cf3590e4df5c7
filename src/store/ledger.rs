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
    let Some(id) = &manifest.id else {
        return Ok(Err(
            "the dataset was made before blobbench kept a ledger of acknowledged writes".into(),
        ));
    };
    let ledger = match store.read_ledger()? {
        None => Ledger::new(id),
        Some(text) => match Ledger::parse(&text) {
            None => return Ok(Err("its ledger of acknowledged writes is damaged".into())),
            // An earlier dataset's, left where this one was made.
            Some(l) if &l.dataset != id => Ledger::new(id),
            Some(l) => l,
        },
    };
    Ok(match ledger.settled_state() {
        LedgerState::Known => Ok(ledger),
        LedgerState::Writing { by } => Err(format!(
            "a run (process {}) is writing the dataset now",
            by.split('-').next().unwrap_or(&by)
        )),
        LedgerState::Unknown { why } => Err(why),
    })
}

/// A writing run's hold on the ledger, from [`begin_writes`] to
/// [`LedgerClaim::end`].
#[must_use = "a run records its writes with end"]
pub struct LedgerClaim {
    /// The ledger as the run found it, or why it is not known.
    found: Expectation,
}

/// Marks the ledger of `manifest`'s dataset as written by this process.
/// A ledger already unknown, or marked by another run now writing, becomes
/// (or stays) unknown: two runs at once cannot say which write was last.
pub fn begin_writes(store: &mut dyn Store, manifest: &Manifest) -> Result<LedgerClaim> {
    let found = expectation(store, manifest)?;
    let (Some(_), Err(why)) = (&manifest.id, &found) else {
        if let Ok(ledger) = &found {
            store.write_ledger(&ledger.writing().to_text())?;
        }
        return Ok(LedgerClaim { found });
    };
    let why = if why.contains("is writing the dataset now") {
        format!("two runs wrote the dataset at once ({why})")
    } else {
        why.clone()
    };
    give_up(store, manifest, &why)?;
    Ok(LedgerClaim { found: Err(why) })
}

impl LedgerClaim {
    /// The ledger as the run found it, or why it is not known.
    pub fn found(&self) -> &Expectation {
        &self.found
    }

    /// Records the run's writes (`record` changes the ledger found at the
    /// start) once its data is committed, when the ledger still carries
    /// this run's mark; another run's mark or none makes it unknown.
    pub fn end(self, store: &mut dyn Store, record: impl FnOnce(&mut Ledger)) -> Result<()> {
        let Ok(mut ledger) = self.found else {
            return Ok(());
        };
        let now = store.read_ledger()?.as_deref().and_then(Ledger::parse);
        if now.as_ref().is_some_and(Ledger::marked_by_me) {
            record(&mut ledger);
            ledger.state = LedgerState::Known;
        } else {
            ledger.state = LedgerState::Unknown {
                why: "another run wrote the dataset while one was writing it".into(),
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
