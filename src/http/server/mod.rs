//! `blobbench serve`: an HTTP blob server over any target.
//!
//! Reads run on tokio's blocking pool; each blocking thread keeps its own
//! read-only store (for SQLite, its own connection: a pool of readers with
//! no global lock; for files, plain reads). Blobs up to one chunk are read
//! in one call; larger ones are streamed chunk by chunk (SQLite's
//! incremental blob API, pread on files), never loaded whole.

use std::cell::RefCell;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc};

use super::keys::parse_key;
use crate::error::{Error, Result};
use crate::store::{self, Access, SessionOptions, Store};
use crate::target::Target;

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

/// Equal without an early exit on the first differing byte, so the time
/// taken says nothing about how much of a guessed token was right.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Serializes writes from all worker threads (one writer at a time, as
/// SQLite allows anyway; for files it keeps create-or-replace atomic).
static WRITE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

type ResponseBody = BoxBody<Bytes, std::io::Error>;

fn full(data: impl Into<Bytes>) -> ResponseBody {
    Full::new(data.into())
        .map_err(|never| match never {})
        .boxed()
}

fn empty() -> ResponseBody {
    Empty::new().map_err(|never| match never {}).boxed()
}

thread_local! {
    /// This thread's session on the served target, opened on first use and
    /// kept (its prepared statements with it) for the server's lifetime.
    static SESSION: RefCell<Option<(u64, Box<dyn crate::store::Session>)>> = const { RefCell::new(None) };
}

/// Tells the servers of one process apart (tests start several).
static SERVER_IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Runs `f` with a session of this thread's store for `target`: read-only
/// unless the server is writable; writes are durable when they return
/// (temp + fsync + rename + fsync of the folder for files; SQLite's own
/// commit with synchronous as the database has it, FULL by default).
fn with_session<T>(
    server: &ServerRef,
    f: impl FnOnce(&mut dyn crate::store::Session) -> Result<T>,
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
                write_style: crate::store::WriteStyle::TempRename,
                fsync: true,
                ..Default::default()
            })?;
            *slot = Some((server.id, session));
        }
        let (_, session) = slot.as_mut().expect("just set");
        f(session.as_mut())
    })
}

/// What a worker thread needs to find (or open) its session.
#[derive(Clone)]
struct ServerRef {
    id: u64,
    target: Target,
    access: Access,
}

/// A response body fed by a blocking reader through a bounded channel.
struct ChannelBody {
    rx: mpsc::Receiver<std::io::Result<Bytes>>,
    len: u64,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, std::io::Error>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(b))) => Poll::Ready(Some(Ok(Frame::data(b)))),
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len)
    }
}

/// A single byte range of a blob of `size` bytes, from a `Range` header.
#[derive(Debug, PartialEq, Eq)]
pub enum RangeRequest {
    /// No usable Range header (absent, malformed or multiple ranges): the whole blob.
    Whole,
    /// Bytes start..=end.
    Part {
        start: u64,
        end: u64,
    },
    Unsatisfiable,
}

pub fn parse_range(header: Option<&str>, size: u64) -> RangeRequest {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
        return RangeRequest::Whole;
    };
    if spec.contains(',') {
        return RangeRequest::Whole;
    }
    let Some((a, b)) = spec.trim().split_once('-') else {
        return RangeRequest::Whole;
    };
    let num = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    match (a.is_empty(), b.is_empty()) {
        // bytes=-N: the last N bytes.
        (true, false) => match num(b) {
            Some(0) => RangeRequest::Unsatisfiable,
            Some(n) if size == 0 => {
                let _ = n;
                RangeRequest::Unsatisfiable
            }
            Some(n) => RangeRequest::Part {
                start: size.saturating_sub(n),
                end: size - 1,
            },
            None => RangeRequest::Whole,
        },
        // bytes=A-: from A to the end.
        (false, true) => match num(a) {
            Some(s) if s >= size => RangeRequest::Unsatisfiable,
            Some(s) => RangeRequest::Part {
                start: s,
                end: size - 1,
            },
            None => RangeRequest::Whole,
        },
        (false, false) => match (num(a), num(b)) {
            (Some(s), Some(e)) if s > e => RangeRequest::Whole,
            (Some(s), Some(_)) if s >= size => RangeRequest::Unsatisfiable,
            (Some(s), Some(e)) => RangeRequest::Part {
                start: s,
                end: e.min(size - 1),
            },
            _ => RangeRequest::Whole,
        },
        (true, true) => RangeRequest::Whole,
    }
}

fn status(code: StatusCode, text: &str) -> Response<ResponseBody> {
    let mut r = Response::new(full(format!("{text}\n")));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

struct State {
    config: ServeConfig,
    server: ServerRef,
}

async fn get_blob(state: &State, req: &Request<Incoming>, key: u64) -> Response<ResponseBody> {
    let head = req.method() == Method::HEAD;
    let range_header = req
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    // Size, validator and (for a small blob) the bytes, in one step on this
    // worker thread: a page-cache hit costs microseconds, less than a hop
    // to the blocking pool. Large blobs are streamed from the blocking pool.
    let server = state.server.clone();
    let found = with_session(&server, |s| {
        let max = if head { 0 } else { CHUNK as u64 };
        let Some((size, small)) = s.fetch_small(key, max)? else {
            return Ok(None);
        };
        let etag = s.etag(key, size)?;
        Ok(Some((size, etag, small.map(Bytes::from))))
    });
    let (size, etag, small) = match found {
        Ok(Some(x)) => x,
        Ok(None) => return status(StatusCode::NOT_FOUND, "no such blob"),
        Err(e) => return status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    if let Some(tag) = &etag
        && let Some(inm) = req
            .headers()
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
        && inm
            .split(',')
            .map(str::trim)
            .any(|t| t == "*" || t == tag || t.strip_prefix("W/") == Some(tag))
    {
        let mut r = Response::new(empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r.headers_mut()
            .insert(header::ETAG, HeaderValue::from_str(tag).expect("ascii"));
        return r;
    }
    let (code, start, len) = match parse_range(range_header.as_deref(), size) {
        RangeRequest::Whole => (StatusCode::OK, 0, size),
        RangeRequest::Part { start, end } => (StatusCode::PARTIAL_CONTENT, start, end - start + 1),
        RangeRequest::Unsatisfiable => {
            let mut r = status(StatusCode::RANGE_NOT_SATISFIABLE, "range not satisfiable");
            r.headers_mut().insert(
                header::CONTENT_RANGE,
                HeaderValue::from_str(&format!("bytes */{size}")).expect("ascii"),
            );
            return r;
        }
    };
    let body = if head || len == 0 {
        empty()
    } else if let Some(all) = small {
        if all.len() as u64 != size {
            return status(StatusCode::CONFLICT, "the blob changed while being read");
        }
        full(all.slice(start as usize..(start + len) as usize))
    } else {
        let (tx, rx) = mpsc::channel(4);
        let server = state.server.clone();
        tokio::task::spawn_blocking(move || {
            let streamed = with_session(&server, |s| {
                s.read_stream(key, start, len, CHUNK, &mut |piece| {
                    tx.blocking_send(Ok(Bytes::from(piece))).is_ok()
                })
            });
            let failure = match streamed {
                Ok(n) if n == len => return,
                Ok(_) if tx.is_closed() => return, // the client went away
                Ok(_) => std::io::Error::other("the blob shrank while being read"),
                Err(e) => std::io::Error::other(e.to_string()),
            };
            let _ = tx.blocking_send(Err(failure));
        });
        ChannelBody { rx, len }.boxed()
    };
    let mut r = Response::new(body);
    *r.status_mut() = code;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Some(tag) = &etag {
        h.insert(header::ETAG, HeaderValue::from_str(tag).expect("ascii"));
    }
    if code == StatusCode::PARTIAL_CONTENT {
        h.insert(
            header::CONTENT_RANGE,
            HeaderValue::from_str(&format!("bytes {}-{}/{size}", start, start + len - 1))
                .expect("ascii"),
        );
    }
    r
}

/// PUT (create or replace) and DELETE, for a writable server.
async fn write_blob(state: &State, req: Request<Incoming>, key: u64) -> Response<ResponseBody> {
    let Some(w) = state.config.writable.clone() else {
        return method_not_allowed(false);
    };
    let authorized = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| constant_time_eq(t.as_bytes(), w.token.as_bytes()));
    if !authorized {
        let mut r = status(
            StatusCode::UNAUTHORIZED,
            "a valid bearer token is needed to write",
        );
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return r;
    }
    let server = state.server.clone();
    if req.method() == Method::DELETE {
        let done = tokio::task::spawn_blocking(move || {
            let _guard = WRITE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
            with_session(&server, |s| {
                if s.size(key)?.is_none() {
                    return Ok(false);
                }
                s.delete(key)?;
                Ok(true)
            })
        })
        .await;
        return match done {
            Ok(Ok(true)) => status(StatusCode::NO_CONTENT, ""),
            Ok(Ok(false)) => status(StatusCode::NOT_FOUND, "no such blob"),
            Ok(Err(e)) => status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
            Err(e) => status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        };
    }
    // PUT: refuse an announced oversize body before reading any of it.
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > w.max_blob_size) {
        return too_large(w.max_blob_size);
    }
    let limited = http_body_util::Limited::new(req.into_body(), w.max_blob_size as usize);
    let data = match tokio::time::timeout(state.config.body_timeout, limited.collect()).await {
        Err(_) => {
            return status(
                StatusCode::REQUEST_TIMEOUT,
                "the body did not arrive in time",
            );
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return too_large(w.max_blob_size);
        }
        Ok(Err(e)) => {
            return status(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the body: {e}"),
            );
        }
        Ok(Ok(c)) => c.to_bytes(),
    };
    let done = tokio::task::spawn_blocking(move || {
        let _guard = WRITE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        with_session(&server, |s| {
            let created = if s.size(key)?.is_some() {
                s.update(key, &data)?;
                false
            } else {
                s.insert(key, &data)?;
                true
            };
            let size = s.size(key)?.unwrap_or(0);
            Ok((created, s.etag(key, size)?))
        })
    })
    .await;
    match done {
        Ok(Ok((created, etag))) => {
            let mut r = if created {
                let mut r = Response::new(empty());
                *r.status_mut() = StatusCode::CREATED;
                r.headers_mut().insert(
                    header::LOCATION,
                    HeaderValue::from_str(&format!("/blobs/{key}")).expect("ascii"),
                );
                r
            } else {
                status(StatusCode::NO_CONTENT, "")
            };
            if let Some(tag) = etag {
                r.headers_mut()
                    .insert(header::ETAG, HeaderValue::from_str(&tag).expect("ascii"));
            }
            r
        }
        Ok(Err(e)) => status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn too_large(max: u64) -> Response<ResponseBody> {
    status(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("blobs are limited to {max} bytes (--max-blob-size)"),
    )
}

/// Request headers larger than this in total are refused (431).
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

async fn route(state: &State, req: Request<Incoming>) -> Response<ResponseBody> {
    let header_bytes: usize = req
        .headers()
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len() + 4)
        .sum::<usize>()
        + req.uri().to_string().len();
    if header_bytes > MAX_HEADER_BYTES {
        return status(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "request headers over 16 KiB",
        );
    }
    let writable = state.config.writable.is_some();
    let path = req.uri().path().to_string();
    if path == "/healthz" {
        return match *req.method() {
            Method::GET | Method::HEAD => status(StatusCode::OK, "ok"),
            _ => method_not_allowed(false),
        };
    }
    let Some(segment) = path.as_str().strip_prefix("/blobs/") else {
        return status(
            StatusCode::NOT_FOUND,
            "not found: blobs are at /blobs/{key}",
        );
    };
    let key = match parse_key(segment) {
        Ok(k) => k,
        Err(e) => return status(StatusCode::BAD_REQUEST, &format!("bad key: {e}")),
    };
    match *req.method() {
        Method::GET | Method::HEAD => get_blob(state, &req, key).await,
        Method::PUT | Method::DELETE if writable => write_blob(state, req, key).await,
        _ => method_not_allowed(writable),
    }
}

fn method_not_allowed(writable: bool) -> Response<ResponseBody> {
    let mut r = status(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    r.headers_mut().insert(
        header::ALLOW,
        HeaderValue::from_static(if writable {
            "GET, HEAD, PUT, DELETE"
        } else {
            "GET, HEAD"
        }),
    );
    r
}

async fn handle(
    state: Arc<State>,
    peer: SocketAddr,
    req: Request<Incoming>,
) -> std::result::Result<Response<ResponseBody>, Infallible> {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let mut resp = route(&state, req).await;
    if method == Method::HEAD {
        // Same headers as GET, no body.
        *resp.body_mut() = empty();
    }
    if state.config.log {
        eprintln!(
            "{peer} \"{method} {path}\" {} {} {:.3}ms",
            resp.status().as_u16(),
            resp.headers()
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-"),
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(resp)
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
fn raise_fd_limit() {
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
    let server = ServerRef {
        id: SERVER_IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        target: config.target.clone(),
        access,
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        use RangeRequest::*;
        assert_eq!(parse_range(None, 100), Whole);
        assert_eq!(
            parse_range(Some("bytes=0-9"), 100),
            Part { start: 0, end: 9 }
        );
        assert_eq!(
            parse_range(Some("bytes=90-"), 100),
            Part { start: 90, end: 99 }
        );
        assert_eq!(
            parse_range(Some("bytes=-10"), 100),
            Part { start: 90, end: 99 }
        );
        assert_eq!(
            parse_range(Some("bytes=-500"), 100),
            Part { start: 0, end: 99 }
        );
        assert_eq!(
            parse_range(Some("bytes=50-500"), 100),
            Part { start: 50, end: 99 }
        );
        assert_eq!(parse_range(Some("bytes=100-"), 100), Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=100-200"), 100), Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=-0"), 100), Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=0-0"), 0), Unsatisfiable);
        // Malformed or multiple ranges: ignored, the whole blob is sent.
        for h in [
            "bytes=9-1",
            "bytes=a-b",
            "items=0-1",
            "bytes=0-1,5-6",
            "bytes=-",
            "bytes=1",
        ] {
            assert_eq!(parse_range(Some(h), 100), Whole, "{h}");
        }
    }
}
