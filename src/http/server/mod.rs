//! `blobbench serve`: an HTTP blob server over any target. This file holds
//! its configuration and the entry point that starts the worker threads;
//! each other concept has its own file.
//!
//! Each thread keeps its own store session (for SQLite, its own
//! connection: a pool of readers with no global lock; for files, plain
//! reads). Blobs up to one chunk are read in one call; larger ones are
//! streamed chunk by chunk (SQLite's incremental blob API, pread on files),
//! never loaded whole.

mod answer;
mod body;
mod by_reference;
mod fast;
mod hand_back;
mod listen;
mod open_files;
mod range;
mod read;
mod reply;
mod routes;
mod session;
mod stream;
mod watched;
mod wire;
mod write;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::error::{Error, Result};
use crate::store::{self, Access};
use crate::target::Target;
use listen::{runtime, start_workers};
use session::{ServerRef, Sharing};

pub use listen::ShutdownSignals;
pub use range::{RangeRequest, parse_range};
pub use routes::MAX_HEADER_BYTES;
pub use write::constant_time_eq;

/// Pieces a large blob is streamed in.
pub const CHUNK: usize = 256 * 1024;

/// How long a request waits for writers to get through (no snapshot
/// begins while one waits) before it is answered 503: SQLite's own
/// default busy timeout.
const READ_LOCK_WAIT: Duration = Duration::from_secs(5);

/// Everything `serve` needs, already checked by the command line.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The store served; opened once per worker thread.
    pub target: Target,
    /// Address to bind; port 0 picks a free one (the banner names it).
    pub listen: SocketAddr,
    /// Open connections at most, across all threads; more wait in the
    /// kernel's backlog instead of being refused.
    pub max_connections: usize,
    /// A client must send its request headers within this time.
    pub header_timeout: Duration,
    /// ... and a PUT's body within this time.
    pub body_timeout: Duration,
    /// A streamed blob's client must take its next piece within this time,
    /// or the stream ends and its read transaction (and lock) with it.
    pub send_timeout: Duration,
    /// A response keeps its read snapshot (a rollback journal's shared
    /// lock) at most this long while a writer waits for it; then it lets
    /// go, and goes on only if nothing was committed meanwhile.
    pub hold_timeout: Duration,
    /// How long a worker thread's requests may share one read snapshot of
    /// the store (one SQLite read transaction): a commit by another
    /// process is seen by every request arriving later than this after it.
    /// Zero: a snapshot per request. Moot when the server keeps every
    /// other writer out (see `Sharing::Lasting`).
    pub staleness: Duration,
    /// How long a blob file's descriptor, size and tag may be reused
    /// before the file's name is stat'ed again (dir and tree targets; see
    /// open_files.rs): a file replaced by another process is served stale
    /// for at most this long. Zero: every request opens the file.
    pub open_file_valid: Duration,
    /// One access-log line per request on stderr.
    pub log: bool,
    /// PUT and DELETE allowed (bearer token, size limit); None: read-only.
    pub writable: Option<Writable>,
}

/// What lets a client write: the token it must present and the largest
/// blob it may send.
#[derive(Clone)]
pub struct Writable {
    /// Bearer token PUT and DELETE must carry; compared in constant time.
    pub token: String,
    /// Larger PUT bodies are refused (413) before or while being read.
    pub max_blob_size: u64,
}

impl std::fmt::Debug for Writable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token.
        write!(f, "Writable {{ max_blob_size: {} }}", self.max_blob_size)
    }
}

/// What every request of one server shares.
struct State {
    /// As given to `serve`.
    config: ServeConfig,
    /// Where each thread finds its session.
    server: ServerRef,
    /// Every other writer is kept out of the store's file while the server
    /// runs, so mapped blobs go to the socket by reference.
    by_reference: bool,
}

/// `blobbench serve`: checks the target, binds, serves until a signal.
///
/// One single-threaded runtime per core, each with its own listener on the
/// same port (as nginx's workers): a connection lives on one thread, with
/// that thread's SQLite connection, and no request hops between threads.
pub fn serve(config: ServeConfig) -> Result<()> {
    super::raise_fd_limit();
    let access = if config.writable.is_some() {
        Access::ReadWrite
    } else {
        Access::ReadOnly
    };
    // Open once up front so a bad target fails before anything listens;
    // with the server's access, so a writable server recovers a database
    // an interrupted write left behind (a read-only one says how).
    let mut probe = store::open(&config.target, access)?;
    let catalog = probe.catalog()?;
    let layout = probe
        .layout()
        .map(|l| format!(" in {l}"))
        .unwrap_or_default();
    let removed = match access {
        Access::ReadWrite => probe.remove_interrupted_writes()?,
        Access::ReadOnly => 0,
    };
    if let (Access::ReadWrite, Some(m)) = (access, &catalog.manifest) {
        store::ledger::give_up(
            probe.as_mut(),
            m,
            "blobbench serve --writable took clients' writes, which it does not record",
        )?;
    }
    drop(probe);
    // A read-only server whose target keeps writers out (SQLite's
    // locking_mode=exclusive, rollback journal) holds that for its whole
    // life, not only while a thread's connection happens to be open, and
    // lets go only once every connection has closed: its blobs' pages can
    // then go to the socket by reference (by_reference.rs).
    let kept_out = match access {
        Access::ReadOnly => store::keep_writers_out(&config.target, READ_LOCK_WAIT)?,
        Access::ReadWrite => None,
    };
    // A write waits for readers' locks longer than a stream may hold one
    // (a stalled client for the send timeout, any while a writer waits for
    // the hold timeout), so a reader delays it, never fails it.
    let lock_wait =
        config.send_timeout.max(config.hold_timeout) + std::time::Duration::from_secs(5);
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    // With every other writer kept out and none of its own, nothing can
    // commit while this server runs: its snapshots never go stale.
    let sharing = Sharing::new(config.staleness, kept_out.is_none());
    let server = ServerRef::new(config.target.clone(), access, sharing, lock_wait);
    let permits = Arc::new(Semaphore::new(config.max_connections));
    let state = Arc::new(State {
        config,
        server,
        by_reference: kept_out.is_some(),
    });
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (addr, workers) = start_workers(&state, &permits, threads, &stop_rx)?;
    let signals = runtime(&state.config)?;
    let stop = {
        let _inside = signals.enter();
        ShutdownSignals::catch()
            .map_err(|e| Error::usage(format!("cannot catch SIGINT and SIGTERM: {e}")))?
    };
    eprintln!(
        "serving {} ({} blobs, keys {}..={}{layout}) {} on http://{addr}/blobs/{{key}} ({threads} threads); Ctrl-C stops",
        state.config.target,
        catalog.count,
        catalog.first_key,
        catalog.last_key,
        if state.config.writable.is_some() {
            "read-write (PUT and DELETE with the bearer token)"
        } else if state.by_reference {
            "read-only, other writers kept out until it stops (locking_mode=exclusive), large blobs sent uncopied"
        } else {
            "read-only"
        }
    );
    if removed > 0 {
        eprintln!("removed {removed} temporary file(s) that interrupted writes left behind");
    }
    signals.block_on(stop.received());
    let _ = stop_tx.send(true);
    for w in workers {
        w.join()
            .map_err(|_| Error::usage("a server thread panicked"))??;
    }
    if state.config.writable.is_some() {
        store::release(&state.config.target);
    }
    // Writers come in only now: every connection has closed (lingering,
    // see by_reference.rs), or the stop's bound has passed.
    drop(kept_out);
    Ok(())
}
