//! Per-thread store sessions: each worker thread opens its own session on
//! the served target once and keeps it, so requests never share a
//! connection or wait on a pool.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Result;
use crate::store::{self, Access, Session, SessionOptions, Store};
use crate::target::Target;

thread_local! {
    /// This thread's session on the served target, opened on first use and
    /// kept (its prepared statements with it) for the server's lifetime.
    static SESSION: RefCell<Option<(u64, Box<dyn Session>)>> = const { RefCell::new(None) };
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
}

impl ServerRef {
    /// A server not seen before, so no thread reuses a session opened for
    /// another one.
    pub(super) fn new(target: Target, access: Access) -> Self {
        ServerRef {
            id: SERVER_IDS.fetch_add(1, Ordering::Relaxed),
            target,
            access,
        }
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
        if slot.as_ref().is_none_or(|(id, _)| *id != server.id) {
            // The store lives as long as the thread: leaked on purpose so the
            // session (which borrows it) can be kept between requests. One
            // per worker thread and server.
            let store: &'static mut dyn Store =
                Box::leak(store::open(&server.target, server.access)?);
            let session = store.session(SessionOptions {
                // Autocommit: every read sees the latest committed data.
                per_op_transaction: true,
                write_style: store::WriteStyle::TempRename,
                fsync: true,
                ..Default::default()
            })?;
            *slot = Some((server.id, session));
        }
        let (_, session) = slot.as_mut().expect("just set");
        f(session.as_mut())
    })
}
