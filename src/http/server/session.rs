//! Per-thread store sessions: each worker thread opens its own session on
//! the served target once and keeps it, so requests never share a
//! connection or wait on a pool.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::store::{self, Access, Session, SessionOptions, Store};
use crate::target::Target;

thread_local! {
    /// This thread's session on the served target, opened on first use and
    /// kept (its prepared statements with it) for the server's lifetime.
    static SESSION: RefCell<Option<Slot>> = const { RefCell::new(None) };
}

/// A thread's session and the read snapshot it may hold.
struct Slot {
    /// The server the session was opened for.
    server_id: u64,
    /// Kept for the thread's lifetime.
    session: Box<dyn Session>,
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
    /// How long a worker thread's requests may share one read snapshot;
    /// zero: a snapshot per request.
    staleness: Duration,
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
        staleness: Duration,
        lock_wait: Duration,
    ) -> Self {
        ServerRef {
            id: SERVER_IDS.fetch_add(1, Ordering::Relaxed),
            target,
            access,
            staleness,
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

    /// How long requests may share a snapshot (zero: they never do).
    pub(super) fn staleness(&self) -> Duration {
        self.staleness
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
        f(slot.session.as_mut())
    })
}

/// Runs the read `f` inside this thread's read snapshot, begun when there
/// is none or the one held is older than the server's staleness or than
/// its last write. So a commit is seen by every request that arrives more
/// than `staleness` after it (a write through this server, at once), while
/// the store's read lock is taken once per snapshot instead of per request.
/// A failed read ends the snapshot, so the next request starts afresh.
pub(super) fn with_snapshot<T>(
    server: &ServerRef,
    f: impl FnOnce(&mut dyn Session) -> Result<T>,
) -> Result<T> {
    if server.staleness.is_zero() {
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
            .is_some_and(|s| s.writes == writes && s.began.elapsed() < server.staleness);
        if !fresh {
            end_snapshot(slot);
            let began = Instant::now();
            if slot.session.begin_snapshot()? {
                slot.snapshot = Some(Snapshot { began, writes });
                SNAPSHOT_BEGUN.with(|n| n.notify_one());
            }
        }
        let result = f(slot.session.as_mut());
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
/// Returns when the snapshot still held will be that old, if one is.
pub(super) fn expire_snapshot(server: &ServerRef) -> Option<Instant> {
    SESSION.with(|cell| {
        // A request on this thread holds the cell: check again shortly.
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return Some(Instant::now() + server.staleness);
        };
        let slot = slot.as_mut().filter(|s| s.server_id == server.id)?;
        let began = slot.snapshot.as_ref()?.began;
        if began.elapsed() >= server.staleness {
            end_snapshot(slot);
            return None;
        }
        Some(began + server.staleness)
    })
}

/// Ends the snapshot if one is held. A failure to end a read transaction
/// loses nothing; the next begin reports whatever is wrong with the store.
fn end_snapshot(slot: &mut Slot) {
    if slot.snapshot.take().is_some() {
        let _ = slot.session.end_snapshot();
    }
}

/// This thread's slot for `server`, its session opened on first use.
fn open_slot<'s>(slot: &'s mut Option<Slot>, server: &ServerRef) -> Result<&'s mut Slot> {
    if slot.as_ref().is_none_or(|s| s.server_id != server.id) {
        // The store lives as long as the thread: leaked on purpose so the
        // session (which borrows it) can be kept between requests. One
        // per worker thread and server.
        let store: &'static mut dyn Store = Box::leak(store::open(&server.target, server.access)?);
        let session = store.session(write_options())?;
        *slot = Some(Slot {
            server_id: server.id,
            session,
            snapshot: None,
        });
    }
    Ok(slot.as_mut().expect("just set"))
}
