//! `blobbench serve`: an HTTP blob server over any target.
//!
//! Reads run on tokio's blocking pool; each blocking thread keeps its own
//! read-only store (for SQLite, its own connection: a pool of readers with
//! no global lock; for files, plain reads). Blobs up to one chunk are read
//! in one call; larger ones are streamed chunk by chunk (SQLite's
//! incremental blob API, pread on files), never loaded whole.

mod body;
mod listen;
mod range;
mod read;
mod routes;
mod session;
mod write;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::error::{Error, Result};
use crate::store::{self, Access};
use crate::target::Target;
use listen::{raise_fd_limit, run, shared_listener};
use session::ServerRef;

pub use listen::shutdown_signal;
pub use range::{RangeRequest, parse_range};
pub use routes::MAX_HEADER_BYTES;
pub use write::constant_time_eq;

/// Pieces a large blob is streamed in.
pub const CHUNK: usize = 256 * 1024;

#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub target: Target,
    pub listen: SocketAddr,
    pub max_connections: usize,
    /// A client must send its request headers within this time.
    pub header_timeout: Duration,
    /// ... and a PUT's body within this time.
    pub body_timeout: Duration,
    pub log: bool,
    /// PUT and DELETE allowed (bearer token, size limit); None: read-only.
    pub writable: Option<Writable>,
}

#[derive(Clone)]
pub struct Writable {
    pub token: String,
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
    config: ServeConfig,
    server: ServerRef,
}

/// `blobbench serve`: checks the target, binds, serves until a signal.
///
/// One single-threaded runtime per core, each with its own listener on the
/// same port (as nginx's workers): a connection lives on one thread, with
/// that thread's SQLite connection, and no request hops between threads.
pub fn serve(config: ServeConfig) -> Result<()> {
    raise_fd_limit();
    // Open once up front so a bad target fails before anything listens.
    let mut probe = store::open(&config.target, Access::ReadOnly)?;
    let catalog = probe.catalog()?;
    drop(probe);
    let access = if config.writable.is_some() {
        Access::ReadWrite
    } else {
        Access::ReadOnly
    };
    let server = ServerRef::new(config.target.clone(), access);
    let permits = Arc::new(Semaphore::new(config.max_connections));
    let state = Arc::new(State { config, server });
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut addr = state.config.listen;
    let mut workers = Vec::new();
    for i in 0..threads {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<std::io::Result<SocketAddr>>();
        let (worker_state, permits, mut stop) = (state.clone(), permits.clone(), stop_rx.clone());
        let bind_to = addr;
        workers.push(std::thread::spawn(move || -> Result<()> {
            let state = worker_state;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    Error::io(
                        "cannot start the runtime for",
                        state.config.target.path(),
                        e,
                    )
                })?;
            runtime.block_on(async move {
                let listener = match shared_listener(bind_to) {
                    Ok(l) => {
                        let _ = ready_tx.send(Ok(l.local_addr().unwrap_or(bind_to)));
                        l
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return Ok(());
                    }
                };
                run(state, permits, listener, async move {
                    let _ = stop.wait_for(|v| *v).await;
                })
                .await
            })
        }));
        match ready_rx.recv() {
            // The first listener settles the port (--listen ...:0 picks one).
            Ok(Ok(bound)) if i == 0 => addr = bound,
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                let _ = stop_tx.send(true);
                return Err(Error::usage(format!(
                    "--listen {}: cannot listen there ({e}); pick another address or port",
                    state.config.listen
                )));
            }
            Err(_) => return Err(Error::usage("a server thread failed to start")),
        }
    }
    eprintln!(
        "serving {} ({} blobs, keys {}..={}) {} on http://{addr}/blobs/{{key}} ({threads} threads); Ctrl-C stops",
        state.config.target,
        catalog.count,
        catalog.first_key,
        catalog.last_key,
        if state.config.writable.is_some() {
            "read-write (PUT and DELETE with the bearer token)"
        } else {
            "read-only"
        }
    );
    let signals = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Error::io(
                "cannot start the runtime for",
                state.config.target.path(),
                e,
            )
        })?;
    signals.block_on(shutdown_signal());
    let _ = stop_tx.send(true);
    for w in workers {
        w.join()
            .map_err(|_| Error::usage("a server thread panicked"))??;
    }
    Ok(())
}
