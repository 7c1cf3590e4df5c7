//! Listening: the sockets, the accept loop with its connection limit and
//! graceful stop, and the signals that end it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::State;
use super::routes::handle;
use crate::error::Result;

/// Accepts on `listener` until `shutdown` resolves, then lets open requests
/// finish (up to 10 s). `permits` bounds connections across all listeners.
pub(super) async fn run(
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

/// SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("signal handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
}

/// Raises the open-file limit to its hard maximum: every connection is a
/// descriptor, and the usual soft limit (1024) is below --max-connections.
pub(super) fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit with a valid, initialised struct.
    unsafe {
        let mut l: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
            l.rlim_cur = l.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
        }
    }
}

/// A listener on `addr` that other threads may share (SO_REUSEPORT): the
/// kernel spreads connections across them.
pub(super) fn shared_listener(addr: SocketAddr) -> std::io::Result<TcpListener> {
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
