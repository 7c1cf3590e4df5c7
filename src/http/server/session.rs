//! Per-thread store sessions: each thread that serves requests opens its
//! own session on the served target once and keeps it, so requests never
//! share a connection. The session owns its store and is closed with the
//! thread: a thread of the blocking pool that tokio retires when idle takes
//! its SQLite connection, page cache and descriptors with it. Each worker's
//! blocking pool is small (listen.rs), so however many clients ask at once,
//! the sessions open are at most its threads.

use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::store::{self, Access, Session, SessionOptions, Store};
use crate::target::Target;

thread_local! {
    /// This thread's session on the served target, opened on first use and
    /// kept (its prepared statements with it) until the thread ends or
    /// serves another server; closed then (thread-local destructors run
    /// when a thread ends, tokio's retired blocking threads included).
    static SESSION: RefCell<Option<Slot>> = const { RefCell::new(None) };
}

/// A session that owns the store it was opened on, so dropping it closes
/// both (a store's session borrows the store: `Store::session`).
struct OwnedSession {
    /// Borrows `*store`; dropped by hand, before the store.
    session: ManuallyDrop<Box<dyn Session + 'static>>,
    /// Made by `Box::leak`, freed in `drop` after the session: a raw
    /// pointer, so moving this struct asserts nothing about the store's
    /// uniqueness while the session borrows it.
    store: NonNull<dyn Store>,
}

impl OwnedSession {
    /// Opens `target` and a session on it with `options`.
    fn open(target: &Target, access: Access, options: SessionOptions) -> Result<OwnedSession> {
        let store = NonNull::from(Box::leak(store::open(target, access)?));
        // SAFETY: `store` is a live heap allocation that nothing else
        // reaches; the session made from it is dropped (in `drop`) before
        // the allocation is freed, and it is never handed out with a
        // lifetime longer than a borrow of `self`.
        let session = match unsafe { &mut *store.as_ptr() }.session(options) {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: made by Box::leak above; no session borrows it.
                drop(unsafe { Box::from_raw(store.as_ptr()) });
                return Err(e);
            }
        };
        // SAFETY: only the trait object's lifetime bound changes; see above
        // for why the borrow it stands for outlives every use.
        let session = unsafe {
            std::mem::transmute::<Box<dyn Session + '_>, Box<dyn Session + 'static>>(session)
        };
        Ok(OwnedSession {
            session: ManuallyDrop::new(session),
            store,
        })
    }

    /// The session, for as long as `self` is borrowed.
    fn session(&mut self) -> &mut dyn Session {
        self.session.as_mut()
    }
}

impl Drop for OwnedSession {
    fn drop(&mut self) {
        // SAFETY: the session first (it borrows the store), once, here;
        // then the store, made by Box::leak in `open`, its only borrower
        // gone.
        unsafe {
            ManuallyDrop::drop(&mut self.session);
            drop(Box::from_raw(self.store.as_ptr()));
        }
        // A session's page cache and buffers came from the allocator's
        // per-thread arenas, which keep freed memory; sessions close when a
        // burst's threads end, so that memory goes back to the system then.
        #[cfg(target_env = "gnu")]
        // SAFETY: malloc_trim only returns free memory to the system.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// A thread's session and the read snapshot it may hold.
struct Slot {
    /// The server the session was opened for.
    server_id: u64,
    /// Kept for the thread's lifetime.
    session: OwnedSession,
    /// The snapshot requests on this thread share, while fresh.
    snapshot: Option<Snapshot>,
}

/// A read snapshot shared by the requests of one worker thread.
struct Snapshot {
    /// Taken before the snapshot began, so its age is never understated.
    began: Instant,
    /// The server's write count then: a write of its own ends it at once.
    writes: u64,
}

impl Snapshot {
    /// Whether requests may still share it, as `sharing` allows.
    fn is_fresh(&self, sharing: Sharing) -> bool {
        match sharing {
            Sharing::PerRequest => false,
            Sharing::For(staleness) => self.began.elapsed() < staleness,
            Sharing::Lasting => true,
        }
    }
}

/// How long the requests of one worker thread may share a read snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sharing {
    /// Never: each request begins and ends its own (`--staleness 0`), so a
    /// waiting writer holds it off too.
    PerRequest,
    /// While younger than this and no write through the server has
    /// committed since: a commit by another process is seen by every
    /// request arriving later than this after it.
    For(Duration),
    /// For the server's life: it keeps every other writer out and writes
    /// nothing itself, so nothing can commit while it runs and no snapshot
    /// goes stale; beginning one per request would only repeat the same
    /// checks (a failed read still ends it).
    Lasting,
}

impl Sharing {
    /// `staleness` as `--staleness` gives it (zero: per request), or
    /// `Lasting` when nothing can commit while the server runs.
    pub(super) fn new(staleness: Duration, commits_possible: bool) -> Self {
        if !commits_possible {
            Sharing::Lasting
        } else if staleness.is_zero() {
            Sharing::PerRequest
        } else {
            Sharing::For(staleness)
        }
    }
}

/// Tells the servers of one process apart (tests start several).
static SERVER_IDS: AtomicU64 = AtomicU64::new(1);

/// What a worker thread needs to find (or open) its session.
#[derive(Clone)]
pub(super) struct ServerRef {
    /// Tells a session opened for this server from one for an earlier server.
    id: u64,
    /// The store to open.
    target: Target,
    /// Read-write only for a writable server.
    access: Access,
    /// How long a worker thread's requests may share one read snapshot.
    sharing: Sharing,
    /// Writes this server has made: a snapshot older than the last one is
    /// not used again, so a client reads its own writes at once.
    writes: Arc<AtomicU64>,
    /// The writer thread's job queue, started by the first write.
    writer: Arc<OnceLock<mpsc::Sender<WriteJob>>>,
    /// How long a write waits for readers' locks: longer than a stalled
    /// reader may hold one (the send timeout).
    lock_wait: Duration,
    /// Writes queued or running on the writer thread: streams let go of
    /// their snapshots for them (see stream.rs).
    writing: Arc<AtomicU64>,
}

/// A write for the writer thread: given its session, or why there is none.
type WriteJob = Box<dyn FnOnce(std::result::Result<&mut dyn Session, &str>) + Send>;

impl ServerRef {
    /// A server not seen before, so no thread reuses a session opened for
    /// another one.
    pub(super) fn new(
        target: Target,
        access: Access,
        sharing: Sharing,
        lock_wait: Duration,
    ) -> Self {
        ServerRef {
            id: SERVER_IDS.fetch_add(1, Ordering::Relaxed),
            target,
            access,
            sharing,
            writes: Arc::new(AtomicU64::new(0)),
            writer: Arc::new(OnceLock::new()),
            lock_wait,
            writing: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Runs the write `f` on the server's writer thread: one thread with
    /// its own session, so writes are serialized, never wait in the
    /// blocking pool behind streams, and wait for readers' locks longer
    /// than any stalled reader may hold one. Durable when it returns (see
    /// `with_session`); every later request reads it.
    pub(super) async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut dyn Session) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let server = self.clone();
        let job: WriteJob = Box::new(move |session| {
            let done = match session {
                Ok(s) => f(s).map_err(|e| e.to_string()),
                Err(why) => Err(why.to_string()),
            };
            // Counted even on failure: a write may have committed before
            // a later step failed, and a needless new snapshot costs little.
            server.wrote();
            server.writing.fetch_sub(1, Ordering::SeqCst);
            crate::pause::at("serve-put-committed");
            let _ = tx.send(done);
        });
        let writer = self
            .writer
            .get_or_init(|| spawn_writer(self.target.clone(), self.lock_wait));
        self.writing.fetch_add(1, Ordering::SeqCst);
        if writer.send(job).is_err() {
            self.writing.fetch_sub(1, Ordering::SeqCst);
            return Err("the server's writer has stopped".to_string());
        }
        rx.await
            .map_err(|_| "the server's writer has stopped".to_string())?
    }

    /// Counts a write that has committed: every later request reads it.
    pub(super) fn wrote(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
    }

    /// Tells this server from the others of the process.
    pub(super) fn id(&self) -> u64 {
        self.id
    }

    /// Writes this server has committed so far.
    pub(super) fn writes(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    /// How long requests may share a snapshot.
    pub(super) fn sharing(&self) -> Sharing {
        self.sharing
    }

    /// Whether a write through this server is queued or running: it needs
    /// the readers' locks gone (in a rollback journal) to commit.
    pub(super) fn write_waiting(&self) -> bool {
        self.writing.load(Ordering::SeqCst) > 0
    }
}

/// The writer thread: opens its session, then runs jobs until the server
/// (every sender) is gone.
fn spawn_writer(target: Target, lock_wait: Duration) -> mpsc::Sender<WriteJob> {
    let (tx, rx) = mpsc::channel::<WriteJob>();
    std::thread::spawn(move || {
        let mut store = match store::open(&target, Access::ReadWrite) {
            Ok(s) => s,
            Err(e) => return refuse_all(&rx, &e.to_string()),
        };
        let session = store.session(write_options()).and_then(|mut s| {
            s.wait_for_locks(lock_wait)?;
            Ok(s)
        });
        let mut session = match session {
            Ok(s) => s,
            Err(e) => return refuse_all(&rx, &e.to_string()),
        };
        for job in rx {
            job(Ok(session.as_mut()));
        }
    });
    tx
}

/// Answers every job with why the writer has no session.
fn refuse_all(rx: &mpsc::Receiver<WriteJob>, why: &str) {
    for job in rx {
        job(Err(why));
    }
}

/// How the server's sessions write: one transaction per write, files
/// replaced by temp + fsync + rename + fsync of the folder.
fn write_options() -> SessionOptions {
    SessionOptions {
        // Autocommit: every read sees the latest committed data.
        per_op_transaction: true,
        write_style: store::WriteStyle::TempRename,
        fsync: true,
        ..Default::default()
    }
}

/// Runs `f` with a session of this thread's store for `target`: read-only
/// unless the server is writable; writes are durable when they return
/// (temp + fsync + rename + fsync of the folder for files; SQLite's own
/// commit with synchronous as the database has it, FULL by default).
pub(super) fn with_session<T>(
    server: &ServerRef,
    f: impl FnOnce(&mut dyn Session) -> Result<T>,
) -> Result<T> {
    SESSION.with(|cell| {
        let mut slot = cell.borrow_mut();
        let slot = open_slot(&mut slot, server)?;
        f(slot.session.session())
    })
}

/// Runs the read `f` inside this thread's read snapshot, begun when there
/// is none or the one held is stale (see `Sharing`) or older than the
/// server's last write. So a commit is seen by every request that arrives
/// more than the staleness after it (a write through this server, at
/// once), while the store's read lock is taken once per snapshot instead
/// of per request. A failed read ends the snapshot, so the next request
/// starts afresh.
pub(super) fn with_snapshot<T>(
    server: &ServerRef,
    f: impl FnOnce(&mut dyn Session) -> Result<T>,
) -> Result<T> {
    if server.sharing == Sharing::PerRequest {
        // A snapshot of its own, so a waiting writer holds it off too.
        return with_session(server, |s| {
            s.begin_snapshot()?;
            let result = f(s);
            let ended = s.end_snapshot();
            let result = result?;
            ended.map(|()| result)
        });
    }
    SESSION.with(|cell| {
        let mut slot = cell.borrow_mut();
        let slot = open_slot(&mut slot, server)?;
        let writes = server.writes.load(Ordering::SeqCst);
        let fresh = slot
            .snapshot
            .as_ref()
            .is_some_and(|s| s.writes == writes && s.is_fresh(server.sharing));
        if !fresh {
            end_snapshot(slot);
            let began = Instant::now();
            if slot.session.session().begin_snapshot()? {
                slot.snapshot = Some(Snapshot { began, writes });
                SNAPSHOT_BEGUN.with(|n| n.notify_one());
            }
        }
        let result = f(slot.session.session());
        if result.is_err() {
            end_snapshot(slot);
        }
        result
    })
}

thread_local! {
    /// Signalled when this thread begins a snapshot, so the task that ends
    /// idle snapshots sleeps (no timer ticks) while none is held.
    static SNAPSHOT_BEGUN: Arc<tokio::sync::Notify> = Arc::new(tokio::sync::Notify::new());
}

/// Resolves once this thread has begun a snapshot since the last call.
pub(super) async fn snapshot_begun() {
    let begun = SNAPSHOT_BEGUN.with(Arc::clone);
    begun.notified().await;
}

/// Ends this thread's snapshot once it is older than the staleness, so an
/// idle worker holds no lock (and blocks no writer) for longer than that.
/// Returns when the snapshot still held will be that old, if one is (never
/// for a server whose snapshots last).
pub(super) fn expire_snapshot(server: &ServerRef) -> Option<Instant> {
    let Sharing::For(staleness) = server.sharing else {
        return None;
    };
    SESSION.with(|cell| {
        // A request on this thread holds the cell: check again shortly.
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return Some(Instant::now() + staleness);
        };
        let slot = slot.as_mut().filter(|s| s.server_id == server.id)?;
        let began = slot.snapshot.as_ref()?.began;
        if began.elapsed() >= staleness {
            end_snapshot(slot);
            return None;
        }
        Some(began + staleness)
    })
}

/// Ends the snapshot if one is held. A failure to end a read transaction
/// loses nothing; the next begin reports whatever is wrong with the store.
fn end_snapshot(slot: &mut Slot) {
    if slot.snapshot.take().is_some() {
        let _ = slot.session.session().end_snapshot();
    }
}

/// This thread's slot for `server`, its session opened on first use (a
/// session this thread kept for an earlier server is closed first).
fn open_slot<'s>(slot: &'s mut Option<Slot>, server: &ServerRef) -> Result<&'s mut Slot> {
    if slot.as_ref().is_none_or(|s| s.server_id != server.id) {
        *slot = None;
        let session = OwnedSession::open(&server.target, server.access, write_options())?;
        *slot = Some(Slot {
            server_id: server.id,
            session,
            snapshot: None,
        });
    }
    Ok(slot.as_mut().expect("just set"))
}

/// Opens this thread's session for `server` unless it has one: a stream
/// calls this before its reply's head is sent, so a store that cannot be
/// opened now (out of descriptors, say) is answered with an error status,
/// never a head followed by nothing.
pub(super) fn ensure_open(server: &ServerRef) -> Result<()> {
    SESSION.with(|cell| open_slot(&mut cell.borrow_mut(), server).map(|_| ()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_last_only_where_nothing_can_commit() {
        let two_ms = Duration::from_millis(2);
        assert_eq!(Sharing::new(two_ms, true), Sharing::For(two_ms));
        assert_eq!(Sharing::new(Duration::ZERO, true), Sharing::PerRequest);
        assert_eq!(Sharing::new(two_ms, false), Sharing::Lasting);
        assert_eq!(Sharing::new(Duration::ZERO, false), Sharing::Lasting);

        let old = Snapshot {
            began: Instant::now() - Duration::from_secs(3600),
            writes: 0,
        };
        assert!(
            old.is_fresh(Sharing::Lasting),
            "a lasting snapshot is never stale"
        );
        assert!(!old.is_fresh(Sharing::For(Duration::from_secs(60))));
        let new = Snapshot {
            began: Instant::now(),
            writes: 0,
        };
        assert!(new.is_fresh(Sharing::For(Duration::from_secs(60))));
        assert!(!new.is_fresh(Sharing::PerRequest), "never shared");
    }
}
