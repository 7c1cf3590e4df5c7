//! Mixed runs on the memory store, some through a session that
//! misbehaves on purpose: the read checker must call what it serves stale,
//! and nothing else.

use std::time::Duration;

use super::settle::heads;
use super::{MixedRunPlan, WrapSession, execute, execute_wrapped};
use crate::dataset::DatasetSpec;
use crate::error::{Error, FailureClass, Result};
use crate::progress::Silent;
use crate::result::mixed_run::{KeyDistribution, OpKind};
use crate::result::mixed_run::{MixedRunTables, Outcomes};
use crate::store::{self, Access, Serving, Session, SessionCore, SessionOptions, Snapshots};
use crate::target::Target;
use crate::workload::mix::Mix;

/// A memory dataset `name` of `count` blobs of 1000 bytes, as init makes
/// it (every blob at version 0), then rewritten at `version` unless that
/// is 0.
fn dataset(name: &str, count: u64, version: u64) -> (Target, DatasetSpec) {
    let target = Target::parse(&format!("memory:{name}")).unwrap();
    let spec = DatasetSpec::fixed(count, 1000, 5);
    store::create_dataset(&target, &spec, &Silent).unwrap();
    if version != 0 {
        let mut s = store::open(&target, Access::ReadWrite).unwrap();
        let mut session = s.session(SessionOptions::default()).unwrap();
        let mut buf = Vec::new();
        for key in spec.first_key..=spec.last_key() {
            spec.fill(key, version, &mut buf);
            session.update(key, &buf).unwrap();
        }
    }
    (target, spec)
}

/// `count` operations of `mix` on `threads` threads, in transactions of
/// `batch`, every read checked.
fn plan(target: &Target, threads: usize, mix: &str, batch: u32, count: u64) -> MixedRunPlan {
    MixedRunPlan {
        target_text: target.to_string(),
        target: target.clone(),
        threads,
        writers: 0,
        mix: Mix::parse(mix).unwrap(),
        keys: KeyDistribution::Uniform,
        batch,
        duration: None,
        count: Some(count),
        rate: None,
        busy_timeout: Duration::ZERO,
        session: SessionOptions::default(),
        verify: true,
        seed: 11,
        workload: None,
        max_errors: None,
    }
}

/// Every kind's outcomes added up, the commits' too.
fn outcomes(t: &MixedRunTables) -> Outcomes {
    let mut all = Outcomes::default();
    for k in &t.kinds {
        all.add(&k.outcomes);
    }
    all
}

/// Operations of `kind` done (None: commits).
fn done(t: &MixedRunTables, kind: Option<OpKind>) -> u64 {
    t.kinds
        .iter()
        .filter(|k| k.kind == kind)
        .map(|k| k.ops)
        .sum()
}

/// How a [`Faulty`] session misbehaves.
#[derive(Clone)]
enum Fault {
    /// Every read hands over the blob as init made it (version 0), older
    /// than what the store holds: a cache or replica left behind.
    ServesInitVersion(DatasetSpec),
    /// Every commit fails busy, and the rollback says it undid the batch
    /// while the store keeps its writes: rolled-back versions stay visible.
    KeepsRolledBackWrites,
    /// Every `n`th read or update of a session fails with `class`; an
    /// update is applied first (as when the answer is lost after the
    /// server applied it), so its version may be read later.
    FailsEvery { n: u64, class: FailureClass },
    /// Every update is acknowledged and never written: a lost write.
    AcknowledgesWithoutWriting,
    /// Every read takes this long.
    Slow(Duration),
}

/// The memory store's session, with a fault.
struct Faulty<'s> {
    inner: Box<dyn Session + 's>,
    fault: Fault,
    buf: Vec<u8>,
    /// Reads and updates so far.
    calls: u64,
}

impl Faulty<'_> {
    /// The failure this call ends in, if it is one of the `n`th.
    fn due_failure(&mut self) -> Result<()> {
        self.calls += 1;
        match self.fault {
            Fault::FailsEvery { n, class } if self.calls.is_multiple_of(n) => Err(Error::failed(
                std::path::Path::new("faulty"),
                class,
                format!("failure {} (on purpose)", self.calls),
            )),
            _ => Ok(()),
        }
    }
}

impl SessionCore for Faulty<'_> {
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        match &self.fault {
            Fault::ServesInitVersion(spec) => {
                self.inner.read(key, &mut |_| {})?;
                spec.fill(key, 0, &mut self.buf);
                sink(&self.buf);
                Ok(())
            }
            Fault::KeepsRolledBackWrites => self.inner.read(key, sink),
            Fault::FailsEvery { .. } => {
                self.due_failure()?;
                self.inner.read(key, sink)
            }
            Fault::AcknowledgesWithoutWriting => self.inner.read(key, sink),
            Fault::Slow(takes) => {
                std::thread::sleep(*takes);
                self.inner.read(key, sink)
            }
        }
    }
    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        if let Fault::AcknowledgesWithoutWriting = self.fault {
            return Ok(());
        }
        self.inner.update(key, data)?;
        self.due_failure()
    }
    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()> {
        self.inner.insert(key, data)
    }
    fn delete(&mut self, key: u64) -> Result<()> {
        self.inner.delete(key)
    }
    fn begin(&mut self) -> Result<()> {
        self.inner.begin()
    }
    fn commit(&mut self) -> Result<()> {
        match self.fault {
            Fault::KeepsRolledBackWrites => Err(Error::Server {
                target: "faulty".into(),
                message: "deadlock found (on purpose)".into(),
            }),
            _ => self.inner.commit(),
        }
    }
    fn rollback(&mut self) -> Result<bool> {
        match self.fault {
            Fault::FailsEvery { .. } | Fault::AcknowledgesWithoutWriting | Fault::Slow(_) => {
                self.inner.rollback()
            }
            _ => Ok(matches!(self.fault, Fault::KeepsRolledBackWrites)),
        }
    }
}

impl Serving for Faulty<'_> {}

impl Snapshots for Faulty<'_> {}

impl WrapSession for Fault {
    fn wrap<'s>(&self, inner: Box<dyn Session + 's>) -> Box<dyn Session + 's> {
        Box::new(Faulty {
            inner,
            fault: self.clone(),
            buf: Vec::new(),
            calls: 0,
        })
    }
}

/// A run of `plan` whose workers' sessions have `fault`.
fn faulty_run(plan: &MixedRunPlan, fault: Fault) -> MixedRunTables {
    execute_wrapped(plan, &Silent, Some(&fault)).unwrap()
}

#[test]
fn a_store_serving_versions_older_than_the_datasets_reads_stale() {
    let (target, spec) = dataset("history-older", 8, 7);
    let p = plan(&target, 2, "read=100", 1, 100);
    // Every key holds version 7; the faulty session serves version 0, an
    // intact blob the run did not write, but older than the dataset's.
    let t = faulty_run(&p, Fault::ServesInitVersion(spec));
    let o = outcomes(&t);
    assert_eq!((done(&t, Some(OpKind::Read)), o.torn), (100, 0));
    assert_eq!((o.stale, t.verified, t.unjudged), (100, 0, 0));
    // The same run straight on the store: every read legal.
    let t = execute(&p, &Silent).unwrap();
    assert_eq!((outcomes(&t).stale, t.verified), (0, 100));
}

#[test]
fn a_store_that_keeps_rolled_back_writes_reads_stale() {
    let (target, _) = dataset("history-rolled-back", 4, 0);
    // One worker (its choices fixed by the seed): 200 batches of two,
    // every commit busy and rolled back, the store keeping the writes.
    let p = plan(&target, 1, "read=50,update=50", 2, 400);
    let t = faulty_run(&p, Fault::KeepsRolledBackWrites);
    let o = outcomes(&t);
    assert_eq!((done(&t, None), o.busy), (0, 200), "every commit busy");
    assert_eq!(done(&t, Some(OpKind::Update)), 0, "every update undone");
    let reads = done(&t, Some(OpKind::Read));
    assert_eq!(o.stale + t.verified + t.unjudged, reads);
    // Four keys and about 200 updates: once a key's first write is rolled
    // back, every later read of it (outside the batch that wrote it)
    // finds a version that never happened.
    assert!(o.stale > reads / 2, "{} stale of {reads}", o.stale);
}

#[test]
fn a_sound_store_reads_nothing_stale_run_after_run() {
    let (target, _) = dataset("history-sound", 30, 0);
    let mix = "read=40,update=20,insert=10,delete=10,rmw=10,scan=10";
    // The second and third runs learn the versions the run before left
    // (random ones), not init's.
    for (threads, batch) in [(4, 1), (4, 3), (1, 1)] {
        let t = execute(&plan(&target, threads, mix, batch, 1500), &Silent).unwrap();
        let o = outcomes(&t);
        assert_eq!(
            (o.stale, o.torn),
            (0, 0),
            "{threads} threads, batch {batch}"
        );
        assert!(t.verified > 500, "{threads} threads: {}", t.verified);
    }
    // Read only: every read judged, and legal.
    let t = execute(&plan(&target, 2, "read=100", 1, 300), &Silent).unwrap();
    assert_eq!((outcomes(&t).stale, t.verified), (0, 300));
}

#[test]
fn failed_operations_are_counted_by_class_and_the_run_goes_on_on_a_new_connection() {
    let (target, _) = dataset("fails-timeout", 40, 0);
    let p = plan(&target, 2, "read=50,update=50", 1, 400);
    // A timeout may have broken the connection: each one is followed by a
    // new session (whose own count starts again), so every session fails
    // its 10th call.
    let fault = Fault::FailsEvery {
        n: 10,
        class: FailureClass::Timeout,
    };
    let t = faulty_run(&p, fault);
    let failures = t.failures();
    let failed = failures.total();
    let ops: u64 = t.kinds.iter().map(|k| k.ops).sum();
    assert_eq!(ops + failed, 400, "every operation done or failed");
    assert!((39..=40).contains(&failed), "{failed} failed");
    assert_eq!(failures.classes.len(), 1);
    assert_eq!(failures.classes[0].class, FailureClass::Timeout);
    assert!(failures.classes[0].example.contains("(on purpose)"));
    assert_eq!(
        t.reconnects.len() as u64,
        failed,
        "a new connection after each"
    );
    // Failed updates were applied: their versions may be read, never stale.
    let o = outcomes(&t);
    assert_eq!((o.stale, o.torn), (0, 0));
    let activity = t.activity.as_ref().unwrap();
    assert_eq!(activity.failed.iter().sum::<u64>(), failed);
    assert_eq!(activity.completed.iter().sum::<u64>(), ops);
    let read = t
        .kinds
        .iter()
        .find(|k| k.kind == Some(OpKind::Read))
        .unwrap();
    let (with, without) = (read.latency_with_failures.as_ref().unwrap(), &read.latency);
    assert_eq!(with.count, without.count + read.failures.total());
    let line = t.failures_line().unwrap();
    assert!(
        line.starts_with(&format!(
            "{failed} of 400 operations failed: {failed} timeout"
        )),
        "{line}"
    );
    assert!(t.stopped_early.is_none());
}

#[test]
fn max_errors_stops_the_run_early_and_says_why() {
    let (target, _) = dataset("fails-budget", 40, 0);
    let mut p = plan(&target, 1, "read=100", 1, 10_000);
    p.max_errors = Some(crate::result::budget::ErrorBudget::Count(5));
    // A server error leaves the connection usable: no new one is opened.
    let fault = Fault::FailsEvery {
        n: 3,
        class: FailureClass::ServerStatus { code: 500 },
    };
    let t = faulty_run(&p, fault);
    let failed = t.failures().total();
    assert_eq!(failed, 5, "one worker stops at its fifth failure");
    assert_eq!(done(&t, Some(OpKind::Read)), 10);
    assert!(t.reconnects.is_empty());
    let why = t.stopped_early.as_deref().unwrap();
    assert!(
        why.starts_with("--max-errors 5: 5 of 15 operations had failed"),
        "{why}"
    );
    assert!(t.failures_line().unwrap().contains("5 server error 500"));
}

#[test]
fn a_blobs_head_names_its_version() {
    use crate::dataset::SizeDistribution;
    let spec = DatasetSpec {
        distribution: SizeDistribution::Uniform { variance: 500 },
        ..DatasetSpec::fixed(50, 1000, 9)
    };
    let heads = heads(&spec);
    let mut buf = Vec::new();
    for (key, version) in [(1, 0), (7, 1), (50, u64::MAX / 2 - 1)] {
        spec.fill(key, version, &mut buf);
        assert_eq!(heads.verify(key, &buf[..8], None).unwrap(), version);
    }
}

#[test]
fn a_write_acknowledged_and_not_kept_is_found_after_the_run() {
    let (target, _) = dataset("ledger-lost-in-run", 50, 0);
    let p = plan(&target, 2, "update=100", 1, 20);
    let t = faulty_run(&p, Fault::AcknowledgesWithoutWriting);
    assert_eq!(done(&t, Some(OpKind::Update)), 20);
    assert!(t.lost > 0, "every key written still holds version 0");
    assert!(
        t.lost_first.as_deref().unwrap().contains("holds version 0"),
        "{:?}",
        t.lost_first
    );
    // The ledger keeps the acknowledged versions: a later check finds the
    // same blobs lost.
    let later = execute(&plan(&target, 1, "read=100", 1, 1), &Silent).unwrap();
    assert_eq!(later.lost, t.lost, "{:?}", later.lost_first);
}

#[test]
fn an_older_copy_put_back_after_a_run_is_found_by_the_next() {
    let (target, spec) = dataset("ledger-old-copy", 10, 0);
    let t = execute(&plan(&target, 2, "update=100", 1, 200), &Silent).unwrap();
    assert_eq!(t.lost, 0, "{:?}", t.lost_first);
    let check = plan(&target, 2, "read=100", 1, 20);
    assert_eq!(execute(&check, &Silent).unwrap().lost, 0);
    // Key 3 as init made it, put back under blobbench's feet.
    {
        let mut s = store::open(&target, Access::ReadWrite).unwrap();
        let mut session = s.session(SessionOptions::default()).unwrap();
        let mut old = Vec::new();
        spec.fill(3, 0, &mut old);
        session.update(3, &old).unwrap();
    }
    let t = execute(&check, &Silent).unwrap();
    assert_eq!(t.lost, 1);
    assert!(t.lost_first.unwrap().starts_with("key 3: holds version 0"));
}

#[test]
fn a_run_that_overruns_its_time_says_so() {
    let (target, _) = dataset("overrun", 4, 0);
    let mut p = plan(&target, 1, "read=100", 1, 1);
    (p.count, p.duration) = (None, Some(Duration::from_millis(100)));
    // The one read begun before -t ends 500 ms later.
    let t = faulty_run(&p, Fault::Slow(Duration::from_millis(500)));
    let said = t.notes.iter().find(|n| n.contains("overran -t 100ms"));
    assert!(
        said.is_some_and(|n| n.contains("rates divide by the whole")),
        "{:?}",
        t.notes
    );
    // On time: nothing said.
    let t = execute(&p, &Silent).unwrap();
    assert!(
        !t.notes.iter().any(|n| n.contains("overran")),
        "{:?}",
        t.notes
    );
}
