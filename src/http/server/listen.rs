//! Listening: the worker threads with their shared-port sockets, the accept
//! loop with its connection limit and graceful stop, and the signals that
//! end it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::sync::{Semaphore, watch};

use super::routes::handle;
use super::{ServeConfig, State};
use crate::error::{Error, Result};

/// A server thread, ended by `true` on the stop channel.
pub(super) type Worker = JoinHandle<Result<()>>;

/// Starts `threads` workers on `state.config.listen`, one after another:
/// the first settles the port the others share (for `:0`), and a bind
/// failure stops the start-up with a usage error. Returns the address
/// bound and the workers.
pub(super) fn start_workers(
    state: &Arc<State>,
    permits: &Arc<Semaphore>,
    threads: usize,
    stop_tx: &watch::Sender<bool>,
    stop_rx: &watch::Receiver<bool>,
) -> Result<(SocketAddr, Vec<Worker>)> {
    let mut addr = state.config.listen;
    let mut workers = Vec::new();
    for i in 0..threads {
        let (ready_tx, ready_rx) = std_mpsc::channel::<std::io::Result<SocketAddr>>();
        let (worker_state, permits, stop) = (state.clone(), permits.clone(), stop_rx.clone());
        let bind_to = addr;
        workers.push(std::thread::spawn(move || {
            worker(worker_state, permits, stop, bind_to, ready_tx)
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
    Ok((addr, workers))
}

/// One worker thread: its own single-threaded runtime and listener, serving
/// until `stop` turns true. Tells `ready` where it listens (or why it
/// cannot) before serving.
fn worker(
    state: Arc<State>,
    permits: Arc<Semaphore>,
    mut stop: watch::Receiver<bool>,
    bind_to: SocketAddr,
    ready: std_mpsc::Sender<std::io::Result<SocketAddr>>,
) -> Result<()> {
    let runtime = runtime(&state.config)?;
    runtime.block_on(async move {
        let listener = match shared_listener(bind_to) {
            Ok(l) => {
                let _ = ready.send(Ok(l.local_addr().unwrap_or(bind_to)));
                l
            }
            Err(e) => {
                let _ = ready.send(Err(e));
                return Ok(());
            }
        };
        run(state, permits, listener, async move {
            let _ = stop.wait_for(|v| *v).await;
        })
        .await
    })
}

/// A single-threaded runtime: each thread keeps its connections, so they
/// never need moving between threads.
pub(super) fn runtime(config: &ServeConfig) -> Result<Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the runtime for", config.target.path(), e))
}

/// Accepts on `listener` until `shutdown` resolves, then lets open requests
/// finish (up to 10 s). `permits` bounds connections across all listeners.
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
                Err(_) => continue, // e.g. EMFILE: keep serving the others
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let svc = hyper::service::service_fn(move |req| handle(state.clone(), peer, req));
        let conn = http.serve_connection(TokioIo::new(stream), svc);
        let watched = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = watched.await;
            drop(permit);
        });
    }
    let _ = tokio::time::timeout(Duration::from_secs(10), graceful.shutdown()).await;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM: either stops the server gracefully, so
/// Ctrl-C and a service manager's stop both let open requests finish.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("signal handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
}

/// A listener on `addr` that other threads may share (SO_REUSEPORT): the
/// kernel spreads connections across them.
fn shared_listener(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    socket.listen(4096)
}
