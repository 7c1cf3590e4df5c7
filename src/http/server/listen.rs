//! Listening: the worker threads with their shared-port sockets, the accept
//! loop with its connection limit and graceful stop, and the signals that
//! end it.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper_util::rt::TokioTimer;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::sync::{Semaphore, watch};

use super::by_reference;
use super::fast::{self, Conn};
use super::session::{Sharing, expire_snapshot, snapshot_begun};
use super::{ServeConfig, State};
use crate::error::{Error, Result};

/// A server thread, ended by `true` on the stop channel.
pub(super) type Worker = JoinHandle<Result<()>>;

/// Starts `threads` workers on `state.config.listen`. The address is bound
/// once, here, without SO_REUSEPORT, so a second server on a busy address
/// fails ("address in use") instead of silently splitting the requests
/// between two datasets; every worker accepts on its own duplicate of that
/// one listening socket. Returns the address bound and the workers.
pub(super) fn start_workers(
    state: &Arc<State>,
    permits: &Arc<Semaphore>,
    threads: usize,
    stop_rx: &watch::Receiver<bool>,
) -> Result<(SocketAddr, Vec<Worker>)> {
    let listen = state.config.listen;
    let cannot = |e: std::io::Error| {
        let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
            "address in use: another server listens there; stop it or pick another port"
        } else {
            "pick another address or port"
        };
        Error::usage(format!(
            "--listen {listen}: cannot listen there ({e}); {hint}"
        ))
    };
    let listener = bind(listen).map_err(cannot)?;
    let addr = listener.local_addr().map_err(cannot)?;
    let mut workers = Vec::new();
    for _ in 0..threads {
        let own = listener.try_clone().map_err(cannot)?;
        let (worker_state, permits, stop) = (state.clone(), permits.clone(), stop_rx.clone());
        workers.push(std::thread::spawn(move || {
            worker(worker_state, permits, stop, own)
        }));
    }
    Ok((addr, workers))
}

/// The server's one listening socket: SO_REUSEADDR (a restart may bind
/// while old connections linger in TIME_WAIT) but never SO_REUSEPORT, and
/// a backlog of 4096 for bursts of connections.
fn bind(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr)?;
    // SAFETY: listen() on a socket this process owns; calling it again on a
    // listening socket only changes its backlog.
    if unsafe { libc::listen(listener.as_raw_fd(), 4096) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// One worker thread: its own single-threaded runtime accepting on its
/// duplicate of the listening socket, serving until `stop` turns true.
fn worker(
    state: Arc<State>,
    permits: Arc<Semaphore>,
    mut stop: watch::Receiver<bool>,
    own: std::net::TcpListener,
) -> Result<()> {
    let runtime = runtime(&state.config)?;
    runtime.block_on(async move {
        let listener = TcpListener::from_std(own)
            .map_err(|e| Error::io("cannot listen with", state.config.target.path(), e))?;
        tokio::spawn(expire_snapshots(state.clone()));
        run(state, permits, listener, async move {
            let _ = stop.wait_for(|v| *v).await;
        })
        .await
    })
}

/// Ends this worker thread's read snapshot once it is older than the
/// staleness (the timer's 1 ms granularity added): so an idle server holds
/// the store's read lock no longer than that. Sleeps while no snapshot is
/// held, so a server of files, or an idle one, is not woken for nothing.
/// Snapshots per request need no expiry, and lasting ones never expire.
async fn expire_snapshots(state: Arc<State>) {
    if !matches!(state.server.sharing(), Sharing::For(_)) {
        return;
    }
    loop {
        match expire_snapshot(&state.server) {
            Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
            None => snapshot_begun().await,
        }
    }
}

/// Blocking threads per worker: each streams one large blob and holds one
/// store session (for SQLite, a connection with its page cache, and a
/// descriptor SQLite keeps for reuse once it closes), or reads a file body
/// for hyper. So this bounds the server's threads, sessions, descriptors
/// and stream buffers however many clients ask at once; further streams
/// wait, their heads unsent, for a thread. With the send timeout a stalled
/// client frees its thread within that time.
pub(super) const BLOCKING_THREADS: usize = 16;

/// A blocking thread idle this long ends, and its store session (see
/// session.rs) is closed with it: after a burst the server gives back the
/// connections, descriptors and page caches its streams took.
const BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(2);

/// A single-threaded runtime: each thread keeps its connections, so they
/// never need moving between threads.
pub(super) fn runtime(config: &ServeConfig) -> Result<Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        .build()
        .map_err(|e| Error::io("cannot start the runtime for", config.target.path(), e))
}

/// Accepts on `listener` until `shutdown` resolves, then lets open requests
/// finish (up to 10 s). `permits` bounds connections across all listeners.
/// Each connection starts on the fast path (fast.rs), which hands it to
/// hyper at its first request that is not a plain GET or HEAD.
async fn run(
    state: Arc<State>,
    permits: Arc<Semaphore>,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(state.config.header_timeout)
        .max_buf_size(64 * 1024);
    let (stop_tx, stop_rx) = watch::channel(false);
    let (alive_tx, mut alive_rx) = tokio::sync::mpsc::channel::<()>(1);
    tokio::pin!(shutdown);
    loop {
        // At most max_connections at once: wait for a slot before accepting.
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => p.expect("semaphore open"),
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(_) => {
                    // e.g. EMFILE: the error repeats until a descriptor is
                    // freed, so back off instead of spinning on accept.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let conn = Conn {
            state: state.clone(),
            peer,
            stop: stop_rx.clone(),
            http: http.clone(),
            watcher: graceful.watcher(),
            _alive: alive_tx.clone(),
        };
        // A connection that may send pages by reference keeps its socket
        // (a second descriptor: hyper closes its own) and the stop waiting
        // until the client has closed too (by_reference.rs).
        let lingering = if state.by_reference {
            linger_handle(&stream).map(|s| (s, alive_tx.clone()))
        } else {
            None
        };
        let send_timeout = state.config.send_timeout;
        tokio::spawn(async move {
            fast::serve(conn, stream).await;
            if let Some((socket, _alive)) = lingering {
                by_reference::linger(socket, send_timeout).await;
            }
            drop(permit);
        });
    }
    // Idle fast-path connections close now, busy ones after their reply;
    // hyper's finish theirs. Wait for both, 10 s at most.
    let _ = stop_tx.send(true);
    drop(alive_tx);
    let all_closed = async move {
        graceful.shutdown().await;
        let _ = alive_rx.recv().await;
    };
    let _ = tokio::time::timeout(Duration::from_secs(10), all_closed).await;
    Ok(())
}

/// A second descriptor of `stream`'s socket, to close it lingering after
/// the fast path or hyper has dropped theirs; None if none can be made (the
/// connection then closes at once, as any other).
fn linger_handle(stream: &TcpStream) -> Option<std::net::TcpStream> {
    use std::os::fd::AsFd;
    let fd = stream.as_fd().try_clone_to_owned().ok()?;
    Some(std::net::TcpStream::from(fd))
}

/// SIGINT and SIGTERM, caught from the moment this is made: made before
/// the banner, so a signal sent as soon as the banner is read stops the
/// server gracefully instead of killing it. Either stops the server
/// gracefully, so Ctrl-C and a service manager's stop both let open
/// requests finish.
pub struct ShutdownSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl ShutdownSignals {
    /// Starts catching the signals; call inside a runtime's context.
    pub fn catch() -> std::io::Result<ShutdownSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(ShutdownSignals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Resolves when either signal has come (also one that came before).
    pub async fn received(mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {},
            _ = self.terminate.recv() => {},
        }
    }
}
